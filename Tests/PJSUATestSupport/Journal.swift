import Foundation
import SwiftPJSUA

/// An append-only list of records that a test can wait on, with a deadline, until it
/// satisfies a condition. Waiters are woken by appends; nothing polls or sleeps. Once
/// finished (its source ended), waits that cannot be satisfied any more fail at once.
public final class Journal<Record: Sendable>: Sendable {
    private struct Waiter {
        let predicate: @Sendable ([Record]) -> Bool
        let continuation: CheckedContinuation<[Record], any Error>
    }

    private struct State {
        var records: [Record] = []
        var finished = false
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Protected(State())

    public init() {}

    /// Everything recorded so far, in order.
    public var records: [Record] { state.withLock { $0.records } }

    /// Whether ``finish()`` was called.
    public var isFinished: Bool { state.withLock { $0.finished } }

    /// Appends a record and wakes the waiters it satisfies.
    public func append(_ record: Record) {
        let ready = state.withLock { state -> [(CheckedContinuation<[Record], any Error>, [Record])] in
            state.records.append(record)
            var ready: [(CheckedContinuation<[Record], any Error>, [Record])] = []
            for (id, waiter) in state.waiters where waiter.predicate(state.records) {
                ready.append((waiter.continuation, state.records))
                state.waiters.removeValue(forKey: id)
            }
            return ready
        }
        for (continuation, records) in ready { continuation.resume(returning: records) }
    }

    /// No more records will come: every pending wait fails with ``TimedOut``.
    public func finish() {
        let (waiters, records) = state.withLock { state in
            state.finished = true
            let waiters = state.waiters
            state.waiters = [:]
            return (waiters, state.records)
        }
        for waiter in waiters.values {
            waiter.continuation.resume(throwing: TimedOut(what: "(stream finished)", seen: records.map { "\($0)" }))
        }
    }

    /// Waits until `predicate` holds for the records so far.
    /// - Returns: the records at that moment.
    /// - Throws: ``TimedOut`` after `timeout`, or when the journal is finished first.
    @discardableResult
    public func wait(
        _ what: String, timeout: Duration = .seconds(10), until predicate: @escaping @Sendable ([Record]) -> Bool
    ) async throws -> [Record] {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        let timer = Task { [self] in
            try await Task.sleep(for: timeout)  // the deadline, cancelled once the wait ends
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: TimedOut(what: what, seen: records.map { "\($0)" }))
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            let immediate: Result<[Record], any Error>? = state.withLock { state in
                if predicate(state.records) { return .success(state.records) }
                if state.finished {
                    return .failure(TimedOut(what: what + " (stream finished)", seen: state.records.map { "\($0)" }))
                }
                state.waiters[id] = Waiter(predicate: predicate, continuation: continuation)
                return nil
            }
            if let immediate { continuation.resume(with: immediate) }
        }
    }
}
