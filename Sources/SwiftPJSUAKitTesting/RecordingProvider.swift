import Foundation
import SwiftPJSUA
import SwiftPJSUAKit

/// One thing the router told the provider.
public enum ProviderRecord: Sendable, Hashable, CustomStringConvertible {
    /// `CallProvider/reportNewIncomingCall(_:update:)` succeeded.
    case newIncomingCall(UUID, CallUpdate)
    /// `CallProvider/reportCallUpdated(_:update:)`.
    case updated(UUID, CallUpdate)
    /// `CallProvider/reportOutgoingCallStartedConnecting(_:)`.
    case startedConnecting(UUID)
    /// `CallProvider/reportOutgoingCallConnected(_:)`.
    case connected(UUID)
    /// `CallProvider/reportCallEnded(_:reason:)`.
    case ended(UUID, CallEndReason)
    /// `CallProvider/fulfill(_:)` for an action.
    case fulfilled(UUID)
    /// `CallProvider/fail(_:error:)` for an action.
    case failed(UUID, CallActionError)
    /// `CallProvider/reportCallReconnecting(_:)`.
    case reconnecting(UUID)
    /// `CallProvider/reportCallReconnected(_:)`.
    case reconnected(UUID)
    /// `CallProvider/reportCallReconnectionFailed(_:)`.
    case reconnectionFailed(UUID)

    /// The case and its values, for test failure messages.
    public var description: String {
        switch self {
        case .newIncomingCall(let id, let update):
            "newIncomingCall(\(id), \(update.remoteURI), \(update.displayName ?? "-"))"
        case .updated(let id, let update): "updated(\(id), \(update.displayName ?? "-"))"
        case .startedConnecting(let id): "startedConnecting(\(id))"
        case .connected(let id): "connected(\(id))"
        case .ended(let id, let reason): "ended(\(id), \(reason))"
        case .fulfilled(let id): "fulfilled(\(id))"
        case .failed(let id, let error): "failed(\(id), \(error))"
        case .reconnecting(let id): "reconnecting(\(id))"
        case .reconnected(let id): "reconnected(\(id))"
        case .reconnectionFailed(let id): "reconnectionFailed(\(id))"
        }
    }
}

/// A `CallProvider` that records what it is told: the seam where CallKit sits on iOS.
///
/// ``reportNewIncomingCall(_:update:)`` can be held at a gate (to let other arrivals
/// overtake a report in progress) or made to throw (a call the system refuses).
public final class RecordingProvider: CallProvider {
    /// Everything the provider was told, in order.
    public let journal = RecordLog<ProviderRecord>()
    private let gate = Protected<(closed: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))
    private let refuse = Protected(false)
    /// Reports that have entered ``reportNewIncomingCall(_:update:)`` (also those held at the gate).
    public let arrivals = RecordLog<UUID>()
    /// When each record was made, on the wall clock, in order.
    private let stamps = Protected<[(record: ProviderRecord, at: Date)]>([])

    /// When the provider was first told `record` (wall clock), or `nil` if it was not.
    /// - Parameter record: the record.
    /// - Returns: the time, or `nil`.
    public func time(of record: ProviderRecord) -> Date? {
        stamps.withLock { stamps in stamps.first { $0.record == record }?.at }
    }

    private func note(_ record: ProviderRecord) {
        // The time first, so that a waiter woken by the record finds it.
        stamps.withLock { $0.append((record, Date())) }
        journal.append(record)
    }

    /// Creates a provider with an open gate that accepts every call.
    public init() {}

    /// Everything the provider was told so far, in order.
    public var records: [ProviderRecord] { journal.records }

    /// The calls reported as new, in order.
    public var reportedCalls: [UUID] {
        records.compactMap { if case .newIncomingCall(let id, _) = $0 { id } else { nil } }
    }

    /// Holds new-call reports until ``openGate()``.
    public func closeGate() { gate.withLock { $0.closed = true } }

    /// Releases held reports.
    public func openGate() {
        let waiting = gate.withLock { state in
            state.closed = false
            defer { state.waiting = [] }
            return state.waiting
        }
        waiting.forEach { $0.resume() }
    }

    /// Makes new-call reports throw ``Refused``, as CallKit does for a blocked caller.
    /// - Parameter refuse: `false` accepts them again.
    public func refuseNewCalls(_ refuse: Bool = true) { self.refuse.withLock { $0 = refuse } }

    /// The error a refused new-call report throws.
    public struct Refused: Error {}

    /// Records the report once the gate is open.
    /// - Throws: ``Refused`` after ``refuseNewCalls(_:)``.
    public func reportNewIncomingCall(_ call: UUID, update: CallUpdate) async throws {
        arrivals.append(call)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let held = gate.withLock { state -> Bool in
                if state.closed { state.waiting.append(continuation) }
                return state.closed
            }
            if !held { continuation.resume() }
        }
        if refuse.withLock({ $0 }) { throw Refused() }
        note(.newIncomingCall(call, update))
    }

    /// Records ``ProviderRecord/updated(_:_:)``.
    public func reportCallUpdated(_ call: UUID, update: CallUpdate) { note(.updated(call, update)) }
    /// Records ``ProviderRecord/startedConnecting(_:)``.
    public func reportOutgoingCallStartedConnecting(_ call: UUID) { note(.startedConnecting(call)) }
    /// Records ``ProviderRecord/connected(_:)``.
    public func reportOutgoingCallConnected(_ call: UUID) { note(.connected(call)) }
    /// Records ``ProviderRecord/ended(_:_:)``.
    public func reportCallEnded(_ call: UUID, reason: CallEndReason) { note(.ended(call, reason)) }
    /// Records ``ProviderRecord/fulfilled(_:)``.
    public func fulfill(_ action: UUID) { note(.fulfilled(action)) }
    /// Records ``ProviderRecord/failed(_:_:)``.
    public func fail(_ action: UUID, error: CallActionError) { note(.failed(action, error)) }
    /// Records ``ProviderRecord/reconnecting(_:)``.
    public func reportCallReconnecting(_ call: UUID) { note(.reconnecting(call)) }
    /// Records ``ProviderRecord/reconnected(_:)``.
    public func reportCallReconnected(_ call: UUID) { note(.reconnected(call)) }
    /// Records ``ProviderRecord/reconnectionFailed(_:)``.
    public func reportCallReconnectionFailed(_ call: UUID) { note(.reconnectionFailed(call)) }

    /// Waits until the provider has been told `record`.
    /// - Parameters:
    ///   - record: the record awaited.
    ///   - timeout: how long to wait (wall clock).
    /// - Returns: every record at that moment.
    /// - Throws: ``RecordLogTimeout`` after `timeout`.
    @discardableResult
    public func wait(for record: ProviderRecord, timeout: Duration = .seconds(10)) async throws -> [ProviderRecord] {
        try await journal.wait("\(record)", timeout: timeout) { $0.contains(record) }
    }

    /// Waits until some record matches.
    /// - Parameters:
    ///   - what: what is awaited, for the error's message.
    ///   - timeout: how long to wait (wall clock).
    ///   - match: the condition.
    /// - Returns: the first matching record.
    /// - Throws: ``RecordLogTimeout`` after `timeout`.
    @discardableResult
    public func wait(
        _ what: String, timeout: Duration = .seconds(10), where match: @escaping @Sendable (ProviderRecord) -> Bool
    ) async throws -> ProviderRecord {
        let records = try await journal.wait(what, timeout: timeout) { $0.contains(where: match) }
        return records.first(where: match) ?? records[records.count - 1]
    }
}
