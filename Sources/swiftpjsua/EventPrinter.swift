import Foundation
import SwiftPJSUA

/// Writes one line per engine event, with the time since the command started.
final class EventPrinter: Sendable {
    private let start = ContinuousClock.now
    private let lock = Protected(())
    /// `--quiet`: no line per event or per answered call, so printing cannot dominate a load test.
    let quiet: Bool

    init(quiet: Bool = false) {
        self.quiet = quiet
    }

    func line(_ text: String) {
        let elapsed = ContinuousClock.now - start
        let ms = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
        let stamp = String(format: "%7.3f", Double(ms) / 1000)
        lock.withLock { _ in
            out("\(stamp)  \(text)")
        }
    }

    /// A line that `--quiet` leaves out.
    func detail(_ text: String) {
        if !quiet { line(text) }
    }

    func event(_ event: PJSUAEvent, names: [Call: String] = [:]) {
        guard !quiet else { return }
        func name(_ call: Call) -> String { names[call].map { "\($0) (\(call))" } ?? "\(call)" }
        switch event {
        case .registrationState(let registration):
            let account = registration.account
            let outcome = registration.outcome
            let code = registration.statusCode
            let reason = registration.reason
            if case .failed = outcome {
                line("registration \(account) \(describe(outcome))")
            } else {
                line("registration \(account) \(describe(outcome)) (\(code) \(reason))")
            }
        case .incomingCall(let incoming):
            let call = incoming.call
            let sipCallID = incoming.sipCallID
            let from = incoming.from
            let video = incoming.offeredVideo
            let replaces = incoming.replaces.map { " replaces \(name($0))" } ?? ""
            line("incoming \(name(call)) from \(from) call-id=\(sipCallID)\(video ? " video" : "")\(replaces)")
        case .callState(let change):
            let call = change.call
            let state = change.state
            let status = change.statusCode
            let reason = change.reason
            line("state \(name(call)) \(state.description.uppercased())\(status > 0 ? " \(status) \(reason)" : "")")
        case .callMediaState(let mediaChange):
            let call = mediaChange.call
            let media = mediaChange.media
            let streams = media.map {
                "\($0.type.rawValue) \($0.status.rawValue) \($0.direction.rawValue)\(srtpText($0))"
            }
            line("media \(name(call)) \(streams.joined(separator: ", "))")
        case .dtmf(let received):
            let call = received.call
            let digit = received.digit
            let method = received.method
            let duration = received.duration
            let ms =
                duration.map {
                    " \($0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000)ms"
                } ?? ""
            line("dtmf \(name(call)) \(digit) \(method.rawValue)\(ms)")
        case .transferStatus(let progress):
            let call = progress.call
            let code = progress.statusCode
            let reason = progress.reason
            let isFinal = progress.isFinal
            line("transfer \(name(call)) \(code) \(reason)\(isFinal ? " final" : "")")
        case .transferRequest(let answer):
            let call = answer.call
            let target = answer.target
            let code = answer.statusCode
            line("transfer-request \(name(call)) to \(target) answered \(code)")
        case .playbackFinished(let finished):
            line("playback-finished \(name(finished.call)) player \(finished.player.id)")
        case .mediaInactivity(let inactivity):
            let call = name(inactivity.call)
            line("media-timeout \(call) no RTP for \(inactivity.silence) (timeout \(inactivity.timeout))")
        case .callReplaced(let replacement):
            line("replaced \(name(replacement.call)) by \(name(replacement.replacement))")
        case .transportLoss(let loss):
            line("transport-lost \(name(loss.call)) \(loss.connection) \(loss.reason): \(loss.action.rawValue)")
        case .reinviteFailed(let failure):
            let call = name(failure.call)
            let purpose = failure.purpose.rawValue
            line("reinvite-failed \(call) \(purpose) \(failure.statusCode) after \(failure.attempts) attempts")
        case .networkChange(let progress):
            var text = "network-change \(progress.step)"
            if let transport = progress.transport { text += " \(transport)" }
            if let account = progress.account { text += " \(account)" }
            if let call = progress.call { text += " \(name(call))" }
            if let code = progress.statusCode { text += " \(code)" }
            if let error = progress.error { text += " failed: \(error)" }
            line(text)
        case .reconnection(let reconnection):
            switch reconnection.phase {
            case .reconnecting(let reason): line("reconnecting \(name(reconnection.call)) \(reason)")
            case .reconnected: line("reconnected \(name(reconnection.call))")
            case .failed(let code): line("reconnect-failed \(name(reconnection.call)) \(code)")
            }
        }
    }
}

/// One line for a registration outcome.
func describe(_ outcome: RegistrationOutcome) -> String {
    switch outcome {
    case .registered(let expiration): "registered expires=\(expiration.components.seconds)s"
    case .unregistered: "unregistered"
    case .failed(let code, let reason): "failed \(code) \(reason)"
    }
}

/// ` srtp SUITE/KEYING` for a stream with SRTP (for example ` srtp AES_CM_128_HMAC_SHA1_80/sdes`;
/// ` srtp handshaking/dtls` while a DTLS-SRTP handshake runs), empty for plain RTP.
func srtpText(_ stream: MediaStream) -> String {
    guard let srtp = stream.srtp else { return "" }
    return " srtp \(srtp.cryptoSuite ?? "handshaking")/\(srtp.keying?.rawValue ?? "unknown")"
}
