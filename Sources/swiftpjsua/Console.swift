import CSignalGuard
import Foundation
import SwiftPJSUA
import Synchronization

/// Writes one line per engine event, with the time since the command started.
final class EventPrinter: Sendable {
    private let start = ContinuousClock.now
    private let lock = Mutex(())
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
            let status = change.lastStatus
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
            let ms = duration.map { " \($0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000)ms" } ?? ""
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
            line("reinvite-failed \(call) \(failure.purpose.rawValue) \(failure.statusCode) after \(failure.attempts) attempts")
        case .networkChange(let progress):
            var text = "network-change \(progress.step)"
            if let transport = progress.transport { text += " \(transport)" }
            if let account = progress.account { text += " \(account)" }
            if let call = progress.call { text += " \(name(call))" }
            if let code = progress.statusCode { text += " \(code)" }
            if let error = progress.error { text += " failed: \(error)" }
            line(text)
        }
    }
}

/// Writes a line to standard output at once (unbuffered, so lines from the event loop and
/// from other tasks keep their order when piped).
func out(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// Sends pjsip's log lines to standard error.
struct StandardErrorLog: PJSUALogHandler {
    func log(level: Int, message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}

/// Shuts the engine down cleanly on SIGINT or SIGTERM; the command's event loop then ends.
///
/// The signals are caught from before `main` (`CSignalGuard`), so one that arrives while the
/// process or the engine is still starting is not lost. The handler cannot shut down an
/// engine that has not started yet, so each command asks ``shutDownIfSignalled(_:)`` right
/// after `start` returns.
final class SignalShutdown: Sendable {
    static let shared = SignalShutdown()

    private let state = Mutex<(engine: PJSUA?, source: (any DispatchSourceRead)?)>((nil, nil))

    private init() {}

    /// Starts reading the signals caught so far and from now on.
    func install() {
        let fd = csg_signal_fd()
        guard fd >= 0 else { return }
        state.withLock { state in
            guard state.source == nil else { return }
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: .global())
            source.setEventHandler { [self] in
                // Drain the pipe; which signal came first is kept by the handler itself.
                var byte: UInt8 = 0
                while read(fd, &byte, 1) == 1 {}
                if let engine = self.state.withLock({ $0.engine }) { Task { await engine.shutdown() } }
            }
            source.resume()
            state.source = source
        }
    }

    /// The engine a signal shuts down.
    func attach(_ engine: PJSUA) {
        state.withLock { $0.engine = engine }
    }

    /// Call right after `start`: when a signal came before or during it, shuts the engine
    /// down and returns `true`.
    func shutDownIfSignalled(_ engine: PJSUA) async -> Bool {
        guard received != nil else { return false }
        await engine.shutdown()
        return true
    }

    /// The first signal caught, from process start on.
    var received: Int32? { csg_first_signal() == 0 ? nil : csg_first_signal() }
}

/// The engine's configuration for a command's options; SIP and RTP bind `--bind`, else
/// `defaultBind` (`nil`: every address).
func configuration(options: Options, port: UInt16, defaultBind: String? = nil) throws(UsageError) -> Configuration {
    let account = try AccountOptions(options)
    let transport = account.transportConfiguration(
        bind: options.string("bind") ?? defaultBind, port: port, publicAddress: account.nat.publicAddress)
    var config = Configuration(
        transports: [transport],
        userAgent: "swiftpjsua",
        // The tool plays and records files and runs on servers: no sound hardware.
        media: MediaConfiguration(soundDevice: .null))
    if let level = try options.int("log-level", in: 0...6) {
        config.logLevel = level
        config.logHandler = level > 0 ? StandardErrorLog() : nil
    }
    if let maxCalls = try options.int("max-calls", in: 1...PJSUA.compiledCallLimit) { config.maxCalls = maxCalls }
    if let codecs = options.string("codecs") {
        // "pjmedia" or "": pjmedia's own order (the engine's empty list).
        config.media.codecOrder = codecs == "pjmedia" ? [] : codecs.split(separator: ",").map(String.init)
    }
    if let text = options.string("rtp-ports") { config.media.rtpPorts = try rtpPorts(text) }
    config.dns.nameservers = try DNSOptions.nameservers(options)
    // SIP's T1 (RFC 3261 §17.1.1.1): a request nobody answers fails after 64 × T1.
    if let t1 = try options.int("t1", in: 1...60_000) { config.timers.t1 = .milliseconds(t1) }
    // Re-register, and re-INVITE confirmed calls, after each settled change of the network.
    if options.flags.contains("follow-network") { config.networkChangeHandling = .automatic(AutomaticNetworkChange()) }
    try MediaNATOptions.apply(options, to: &config)
    return config
}

/// `--rtp-ports A-B`: an inclusive range of at least two UDP ports, 1–65535.
func rtpPorts(_ text: String) throws(UsageError) -> ClosedRange<UInt16> {
    let bounds = text.split(separator: "-", omittingEmptySubsequences: false).map { UInt16($0) }
    guard bounds.count == 2, let low = bounds[0], let high = bounds[1], low > 0, low < high else {
        throw UsageError(message: "--rtp-ports must be A-B with 1 <= A < B <= 65535, got \(text)")
    }
    return low...high
}

extension MediaStream {
    var isFlowingAudio: Bool { type == .audio && (status == .active || status == .remoteHold) }
}

func errorLine(_ error: Error) -> String {
    "error: \(error)"
}

/// A `--play` file must exist before anything is dialled or answered.
func requireReadable(_ file: String?) throws(UsageError) {
    guard let file else { return }
    guard FileManager.default.isReadableFile(atPath: file) else {
        throw UsageError(message: "--play: cannot read \(file)")
    }
}

/// `kill -USR1 <pid>`: the tool handles a network change now (`handleNetworkChange`), for
/// machines where `--follow-network` cannot watch the network, or to force one. The steps
/// are printed as `network-change` lines. Keep the returned source alive while running.
func networkChangeOnSIGUSR1(_ engine: PJSUA) -> any DispatchSourceSignal {
    signal(SIGUSR1, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGUSR1)
    source.setEventHandler {
        Task {
            do { _ = try await engine.handleNetworkChange() } catch { out(errorLine(error)) }
        }
    }
    source.resume()
    return source
}
