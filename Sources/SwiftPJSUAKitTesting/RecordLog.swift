import Foundation
import SwiftPJSUA

/// An append-only list of records that a test can inspect and wait on: the journal of
/// ``FakeCallEngine`` and ``RecordingProvider``.
///
/// Waiters are woken by appends; nothing polls.
public final class RecordLog<Record: Sendable>: Sendable {
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

    /// Creates an empty log.
    public init() {}

    /// Everything recorded so far, in order.
    public var records: [Record] { state.withLock { $0.records } }

    /// Appends a record and wakes the waiters it satisfies.
    /// - Parameter record: the record.
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
    /// - Parameters:
    ///   - what: what is awaited, for the error's message.
    ///   - timeout: how long to wait, on the continuous (wall) clock.
    ///   - predicate: the condition over every record so far.
    /// - Returns: the records at the moment the condition held.
    /// - Throws: ``RecordLogTimeout`` after `timeout`; `CancellationError` when the task is cancelled.
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
            waiter?.continuation.resume(
                throwing: RecordLogTimeout(what: what, seen: records.map { "\($0)" }))
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let immediate: [Record]? = state.withLock { state in
                    if predicate(state.records) { return state.records }
                    state.waiters[id] = Waiter(predicate: predicate, continuation: continuation)
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }
}

/// A wait on a ``RecordLog`` that did not see its condition in time.
public struct RecordLogTimeout: Error, CustomStringConvertible {
    /// What was awaited.
    public var what: String
    /// The records seen, as text.
    public var seen: [String]

    /// Creates the error.
    /// - Parameters:
    ///   - what: what was awaited.
    ///   - seen: the records seen, as text.
    public init(what: String, seen: [String]) {
        self.what = what
        self.seen = seen
    }

    /// What was awaited and what was seen.
    public var description: String { "timed out waiting for \(what); seen: \(seen)" }
}
