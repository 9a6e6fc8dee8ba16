import Foundation
import SwiftPJSUA
import Testing

/// A DTMF event's parts.
public struct ReceivedDigit: Hashable, Sendable {
    public var call: Call
    public var digit: Character
    public var method: DTMFMethod
    public var duration: Duration?
}

extension PJSUAEvent {
    /// The parts of a DTMF event.
    public var receivedDigit: ReceivedDigit? {
        if case .dtmf(let received) = self {
            let call = received.call
            let digit = received.digit
            let method = received.method
            let duration = received.duration
            return ReceivedDigit(call: call, digit: digit, method: method, duration: duration)
        }
        return nil
    }

    /// The media streams of a media event of `call`.
    public func media(of call: Call) -> [MediaStream]? {
        if case .callMediaState(let mediaChange) = self, mediaChange.call == call { return mediaChange.media }
        return nil
    }

    /// Whether this is a media event of `call` whose audio stream has `status`.
    public func hasAudio(_ status: MediaStatus, _ call: Call) -> Bool {
        media(of: call)?.contains { $0.type == .audio && $0.status == status } ?? false
    }

    /// The parts of a transfer-status event.
    public var transferStatus: (call: Call, code: Int, reason: String, final: Bool)? {
        if case .transferStatus(let progress) = self {
            return (progress.call, progress.statusCode, progress.reason, progress.isFinal)
        }
        return nil
    }

    /// Whether this is a REFER that `call` received and answered `statusCode`.
    public func isTransferRequest(of call: Call, answered statusCode: Int) -> Bool {
        if case .transferRequest(let answer) = self { return answer.call == call && answer.statusCode == statusCode }
        return false
    }

    /// The last SIP status of a call's DISCONNECTED event.
    public var finalStatus: Int? {
        if case .callState(let change) = self, change.state == .disconnected { return change.statusCode }
        return nil
    }
}

/// The DTMF digits `call` received among `events`.
public func digits(in events: [PJSUAEvent], of call: Call) -> [ReceivedDigit] {
    events.compactMap(\.receivedDigit).filter { $0.call == call }
}

/// Whether `error` is the engine's invalid-call-state error for `call`.
public func isInvalidState(_ error: any Error, _ call: Call) -> Bool {
    if case .invalidCallState(let c, _) = error as? PJSUAUsageError { return c == call }
    return false
}

extension EventLog {
    /// Waits for an incoming call whose From URI's user is `user` and returns it.
    public func incomingCall(fromUser user: String) async throws -> Call {
        let event = try await first("incoming call from \(user)") {
            if case .incomingCall(let incoming) = $0 { return incoming.from.uri.hasPrefix("sip:\(user)@") }
            return false
        }
        return try #require(event.incomingCall)
    }

    /// Waits for `call`'s `n`th media event (from 1) and returns its audio stream.
    public func audio(ofMediaEvent n: Int, of call: Call) async throws -> MediaStream? {
        let events = try await wait("media event #\(n) of \(call)") { $0.compactMap { $0.media(of: call) }.count >= n }
        return events.compactMap { $0.media(of: call) }[n - 1].first { $0.type == .audio }
    }

    /// The DTMF digits `call` received so far.
    public func digits(of call: Call) -> [ReceivedDigit] { PJSUATestSupport.digits(in: events, of: call) }

    /// Waits for a self-call's two legs to be confirmed with audio flowing.
    public func waitForAudio(_ caller: Call, _ callee: Call) async throws {
        try await wait("both legs confirmed with audio") { events in
            events.contains { $0.isState(.confirmed, of: caller) }
                && events.contains { $0.isState(.confirmed, of: callee) }
                && events.contains { $0.hasActiveAudio(caller) } && events.contains { $0.hasActiveAudio(callee) }
        }
    }
}

extension EventLog {
    /// Waits for the first incoming call (one that `matching` accepts) and returns it.
    public func incoming(
        _ what: String = "an incoming call", timeout: Duration = .seconds(10),
        matching: @escaping @Sendable (IncomingCall) -> Bool = { _ in true }
    ) async throws -> IncomingCall {
        let event = try await first(what, timeout: timeout) {
            if case .incomingCall(let incoming) = $0 { return matching(incoming) }
            return false
        }
        guard case .incomingCall(let incoming) = event else { throw TimedOut(what: what, seen: ["\(event)"]) }
        return incoming
    }
}
