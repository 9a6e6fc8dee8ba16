import Foundation
import SwiftPJSUA

/// Thrown when an awaited condition did not hold before its deadline.
public struct TimedOut: Error, CustomStringConvertible {
    public let what: String
    public let seen: [String]
    public init(what: String, seen: [String]) {
        self.what = what
        self.seen = seen
    }
    public var description: String {
        "timed out waiting for \(what); events seen:\n  " + seen.joined(separator: "\n  ")
    }
}

/// Collects an engine's events as they arrive and lets a test wait, with a deadline, until
/// the collected events satisfy a condition. No sleeping: waiters are woken by the events.
public final class EventLog: Sendable {
    private let journal = Journal<PJSUAEvent>()

    /// Starts collecting from `stream` (subscribe before the actions whose events you want).
    public init(_ stream: AsyncStream<PJSUAEvent>) {
        Task { [journal] in
            for await event in stream { journal.append(event) }
            journal.finish()
        }
    }

    /// Everything collected so far, in order.
    public var events: [PJSUAEvent] { journal.records }

    /// Whether the stream has finished.
    public var isFinished: Bool { journal.isFinished }

    /// Waits until `predicate` holds for the events collected so far.
    /// - Returns: the events at that moment.
    /// - Throws: ``TimedOut`` after `timeout`, or when the stream finishes first.
    @discardableResult
    public func wait(
        _ what: String, timeout: Duration = .seconds(10),
        until predicate: @escaping @Sendable ([PJSUAEvent]) -> Bool
    ) async throws -> [PJSUAEvent] {
        try await journal.wait(what, timeout: timeout, until: predicate)
    }

    /// Waits for the first event matching `predicate` and returns it.
    @discardableResult
    public func first(
        _ what: String, timeout: Duration = .seconds(10),
        where predicate: @escaping @Sendable (PJSUAEvent) -> Bool
    ) async throws -> PJSUAEvent {
        let events = try await wait(what, timeout: timeout) { $0.contains(where: predicate) }
        guard let event = events.first(where: predicate) else { throw TimedOut(what: what, seen: []) }
        return event
    }

    /// The state events of one call, in order.
    public func states(of call: Call) -> [CallState] {
        events.compactMap {
            if case .callState(let change) = $0, change.call == call { return change.state }
            return nil
        }
    }
}

extension PJSUAEvent {
    /// Whether this is `call` reaching `state`.
    public func isState(_ state: CallState, of call: Call? = nil) -> Bool {
        if case .callState(let change) = self, change.state == state, call == nil || change.call == call { return true }
        return false
    }

    /// Whether this is a registration event of `account` (any account when `nil`),
    /// optionally only one that leaves it registered (`true`) or not (`false`).
    public func isRegistration(of account: Account? = nil, active: Bool? = nil) -> Bool {
        if case .registrationState(let registration) = self, account == nil || registration.account == account,
            active == nil || registration.isRegistered == active
        {
            return true
        }
        return false
    }

    /// The outcome of a registration event of `account`.
    public func registrationOutcome(of account: Account) -> RegistrationOutcome? {
        if case .registrationState(let registration) = self, registration.account == account {
            return registration.outcome
        }
        return nil
    }

    /// The call of an `incomingCall` event.
    public var incomingCall: Call? {
        if case .incomingCall(let incoming) = self { return incoming.call }
        return nil
    }

    /// Whether this is a media event of `call` with audio flowing.
    public func hasActiveAudio(_ call: Call? = nil) -> Bool {
        if case .callMediaState(let mediaChange) = self, call == nil || mediaChange.call == call {
            let media = mediaChange.media
            return media.contains { $0.type == .audio && $0.status == .active }
        }
        return false
    }
}
