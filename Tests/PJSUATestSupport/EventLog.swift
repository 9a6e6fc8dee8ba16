import Foundation
import SwiftPJSUA
import Synchronization

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
    private struct Waiter {
        let predicate: @Sendable ([PJSUAEvent]) -> Bool
        let continuation: CheckedContinuation<[PJSUAEvent], any Error>
    }

    private struct State {
        var events: [PJSUAEvent] = []
        var finished = false
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Protected(State())

    /// Starts collecting from `stream` (subscribe before the actions whose events you want).
    public init(_ stream: AsyncStream<PJSUAEvent>) {
        Task { [self] in
            for await event in stream { append(event) }
            finish()
        }
    }

    /// Everything collected so far, in order.
    public var events: [PJSUAEvent] { state.withLock { $0.events } }

    /// Whether the stream has finished.
    public var isFinished: Bool { state.withLock { $0.finished } }

    private func append(_ event: PJSUAEvent) {
        let ready: [(CheckedContinuation<[PJSUAEvent], any Error>, [PJSUAEvent])] = state.withLock { state in
            state.events.append(event)
            var ready: [(CheckedContinuation<[PJSUAEvent], any Error>, [PJSUAEvent])] = []
            for (id, waiter) in state.waiters where waiter.predicate(state.events) {
                ready.append((waiter.continuation, state.events))
                state.waiters.removeValue(forKey: id)
            }
            return ready
        }
        for (continuation, events) in ready { continuation.resume(returning: events) }
    }

    private func finish() {
        let waiters = state.withLock { state in
            state.finished = true
            let waiters = state.waiters
            state.waiters = [:]
            return (waiters, state.events)
        }
        for waiter in waiters.0.values {
            waiter.continuation.resume(throwing: TimedOut(what: "(stream finished)", seen: waiters.1.map { "\($0)" }))
        }
    }

    /// Waits until `predicate` holds for the events collected so far.
    /// - Returns: the events at that moment.
    /// - Throws: ``TimedOut`` after `timeout`, or when the stream finishes first.
    @discardableResult
    public func wait(
        _ what: String, timeout: Duration = .seconds(10),
        until predicate: @escaping @Sendable ([PJSUAEvent]) -> Bool
    ) async throws -> [PJSUAEvent] {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        let timer = Task { [self] in
            try await Task.sleep(for: timeout)
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: TimedOut(what: what, seen: events.map { "\($0)" }))
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            let immediate: Result<[PJSUAEvent], any Error>? = state.withLock { state in
                if predicate(state.events) { return .success(state.events) }
                if state.finished {
                    return .failure(TimedOut(what: what + " (stream finished)", seen: state.events.map { "\($0)" }))
                }
                state.waiters[id] = Waiter(predicate: predicate, continuation: continuation)
                return nil
            }
            if let immediate { continuation.resume(with: immediate) }
        }
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
            if case .callState(let c, let state, _, _, _) = $0, c == call { return state }
            return nil
        }
    }
}

extension PJSUAEvent {
    /// Whether this is `call` reaching `state`.
    public func isState(_ state: CallState, of call: Call? = nil) -> Bool {
        if case .callState(let c, let s, _, _, _) = self, s == state, call == nil || c == call { return true }
        return false
    }

    /// Whether this is a registration event of `account` (any account when `nil`),
    /// optionally only one that leaves it registered (`true`) or not (`false`).
    public func isRegistration(of account: Account? = nil, active: Bool? = nil) -> Bool {
        if case .registrationState(let a, let outcome, _, _, _) = self,
           account == nil || a == account, active == nil || outcome.isRegistered == active {
            return true
        }
        return false
    }

    /// The outcome of a registration event of `account`.
    public func registrationOutcome(of account: Account) -> RegistrationOutcome? {
        if case .registrationState(account, let outcome, _, _, _) = self { return outcome }
        return nil
    }

    /// The call of an `incomingCall` event.
    public var incomingCall: Call? {
        if case .incomingCall(_, let call, _, _, _, _) = self { return call }
        return nil
    }

    /// Whether this is a media event of `call` with audio flowing.
    public func hasActiveAudio(_ call: Call? = nil) -> Bool {
        if case .callMediaState(let c, let media) = self, call == nil || c == call {
            return media.contains { $0.type == .audio && $0.status == .active }
        }
        return false
    }
}
