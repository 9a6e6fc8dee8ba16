import Foundation
import PJSUATestSupport

/// An append-only list of records that a test can wait on, with a deadline, until it
/// satisfies a condition. Waiters are woken by appends; nothing polls or sleeps.
public final class Journal<Record: Sendable>: Sendable {
    private struct Waiter {
        let predicate: @Sendable ([Record]) -> Bool
        let continuation: CheckedContinuation<[Record], any Error>
    }

    private struct State {
        var records: [Record] = []
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Protected(State())

    public init() {}

    /// Everything recorded so far, in order.
    public var records: [Record] { state.withLock { $0.records } }

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

    /// Waits until `predicate` holds for the records so far.
    /// - Throws: ``TimedOut`` after `timeout`.
    @discardableResult
    public func wait(
        _ what: String, timeout: Duration = .seconds(10), until predicate: @escaping @Sendable ([Record]) -> Bool
    ) async throws -> [Record] {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        let timer = Task { [self] in
            try await Task.sleep(for: timeout)
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: TimedOut(what: what, seen: records.map { "\($0)" }))
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            let ready: [Record]? = state.withLock { state in
                if predicate(state.records) { return state.records }
                state.waiters[id] = Waiter(predicate: predicate, continuation: continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
