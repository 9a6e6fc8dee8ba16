import Foundation
import PJSUATestSupport
import SwiftPJSUA
import SwiftPJSUAKit

/// One thing the router told the provider.
public enum ProviderRecord: Sendable, Hashable, CustomStringConvertible {
    case newIncomingCall(UUID, CallUpdate)
    case updated(UUID, CallUpdate)
    case startedConnecting(UUID)
    case connected(UUID)
    case ended(UUID, CallEndReason)
    case fulfilled(UUID)
    case failed(UUID, CallActionError)
    case reconnecting(UUID)
    case reconnected(UUID)
    case reconnectionFailed(UUID)

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

/// A ``CallProvider`` that records what it is told: the seam where CallKit sits on iOS.
///
/// ``reportNewIncomingCall(_:update:)`` can be held at a gate (to let other arrivals
/// overtake a report in progress) or made to throw (a call the system refuses).
public final class RecordingProvider: CallProvider {
    public let journal = Journal<ProviderRecord>()
    private let gate = Protected<(closed: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))
    private let refuse = Protected(false)
    /// Reports that have entered ``reportNewIncomingCall(_:update:)`` (also those held at the gate).
    public let arrivals = Journal<UUID>()
    /// When each record was made, on the wall clock (what sipp's message log stamps its
    /// messages with), in order.
    private let stamps = Protected<[(record: ProviderRecord, at: Date)]>([])

    /// When the provider was first told `record` (wall clock), or `nil` if it was not.
    public func time(of record: ProviderRecord) -> Date? {
        stamps.withLock { stamps in stamps.first { $0.record == record }?.at }
    }

    private func note(_ record: ProviderRecord) {
        // The time first, so that a waiter woken by the record finds it.
        stamps.withLock { $0.append((record, Date())) }
        journal.append(record)
    }

    public init() {}

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

    /// Makes new-call reports throw, as CallKit does for a blocked caller.
    public func refuseNewCalls(_ refuse: Bool = true) { self.refuse.withLock { $0 = refuse } }

    public struct Refused: Error {}

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

    public func reportCallUpdated(_ call: UUID, update: CallUpdate) { note(.updated(call, update)) }
    public func reportOutgoingCallStartedConnecting(_ call: UUID) { note(.startedConnecting(call)) }
    public func reportOutgoingCallConnected(_ call: UUID) { note(.connected(call)) }
    public func reportCallEnded(_ call: UUID, reason: CallEndReason) { note(.ended(call, reason)) }
    public func fulfill(_ action: UUID) { note(.fulfilled(action)) }
    public func fail(_ action: UUID, error: CallActionError) { note(.failed(action, error)) }
    public func reportCallReconnecting(_ call: UUID) { note(.reconnecting(call)) }
    public func reportCallReconnected(_ call: UUID) { note(.reconnected(call)) }
    public func reportCallReconnectionFailed(_ call: UUID) { note(.reconnectionFailed(call)) }

    /// Waits until the provider has been told `record`.
    @discardableResult
    public func wait(for record: ProviderRecord, timeout: Duration = .seconds(10)) async throws -> [ProviderRecord] {
        try await journal.wait("\(record)", timeout: timeout) { $0.contains(record) }
    }

    /// Waits until some record matches.
    @discardableResult
    public func wait(
        _ what: String, timeout: Duration = .seconds(10), where match: @escaping @Sendable (ProviderRecord) -> Bool
    ) async throws -> ProviderRecord {
        let records = try await journal.wait(what, timeout: timeout) { $0.contains(where: match) }
        return records.first(where: match) ?? records[records.count - 1]
    }
}

/// One engine operation the router asked for.
public enum EngineRecord: Sendable, Hashable, CustomStringConvertible {
    case makeCall(String)
    case answer(Call, Int)
    case hangup(Call, Int?)
    case activateAudio
    case deactivateAudio
    case reRegister(Account)
    /// A REGISTER with new push parameters: the account and the new `pn-prid`.
    case reRegisterWithPush(Account, String)
    case hold(Call, Bool)
    case mute(Call, Bool)
    case dtmf(Call, String)
    case conference(Call, Call, Bool)

    public var description: String {
        switch self {
        case .makeCall(let uri): "makeCall(\(uri))"
        case .answer(let call, let code): "answer(\(call), \(code))"
        case .hangup(let call, let code): "hangup(\(call), \(code.map(String.init) ?? "nil"))"
        case .activateAudio: "activateAudio"
        case .deactivateAudio: "deactivateAudio"
        case .reRegister(let account): "reRegister(\(account))"
        case .reRegisterWithPush(let account, let resourceID): "reRegister(\(account), pn-prid=\(resourceID))"
        case .hold(let call, let on): "hold(\(call), \(on))"
        case .mute(let call, let on): "mute(\(call), \(on))"
        case .dtmf(let call, let digits): "dtmf(\(call), \(digits))"
        case .conference(let a, let b, let on): "conference(\(a), \(b), \(on))"
        }
    }
}

/// A ``CallEngine`` that records every operation, then forwards it to a real engine
/// (`base`) or, without one, succeeds (a fake whose events the test feeds to the router).
public final class RecordingEngine: CallEngine {
    public let journal = Journal<EngineRecord>()
    private let base: (any CallEngine)?
    private let nextCall = Protected<Int32>(0)
    private let makeCallHook = Protected<(@Sendable (Call) async -> Void)?>(nil)
    private let video: Bool?
    /// Without a base: each account's push parameters, as the fake engine holds them
    /// (set by the test, replaced by ``reRegister(_:updatingPush:)``).
    private let pushConfigurations = Protected<[Account: PushConfiguration]>([:])
    private let makeCallFailure = Protected<(any Error & Sendable)?>(nil)

    /// Without a base: the account's push parameters, as if it had been added with them.
    public func setPushConfiguration(_ push: PushConfiguration?, of account: Account) {
        pushConfigurations.withLock { $0[account] = push }
    }

    /// Without a base: makes ``makeCall(to:from:)`` throw `error` (`nil`: succeed again).
    public func failMakeCall(with error: (any Error & Sendable)?) {
        makeCallFailure.withLock { $0 = error }
    }

    /// Runs `hook` inside the fake `makeCall`, before it returns the new call (to deliver
    /// events that beat `makeCall`'s return, as pjsua's worker threads can).
    public func onMakeCall(_ hook: @escaping @Sendable (Call) async -> Void) {
        makeCallHook.withLock { $0 = hook }
    }

    /// - Parameters:
    ///   - base: the engine to forward to, or `nil` for a fake.
    ///   - carriesVideo: what ``carriesVideo`` says, instead of the base's (or `false`).
    public init(_ base: (any CallEngine)? = nil, carriesVideo: Bool? = nil) {
        self.base = base
        video = carriesVideo
    }

    public var carriesVideo: Bool { video ?? base?.carriesVideo ?? false }

    public func pushConfiguration(of account: Account) async -> PushConfiguration? {
        if let base { return await base.pushConfiguration(of: account) }
        return pushConfigurations.withLock { $0[account] }
    }

    public func reRegister(_ account: Account, updatingPush push: PushConfiguration) async throws {
        journal.append(.reRegisterWithPush(account, push.resourceID))
        if let base { return try await base.reRegister(account, updatingPush: push) }
        pushConfigurations.withLock { $0[account] = push }
    }

    public var records: [EngineRecord] { journal.records }

    public func makeCall(to uri: String, from account: Account) async throws -> Call {
        journal.append(.makeCall(uri))
        if let base { return try await base.makeCall(to: uri, from: account) }
        if let failure = makeCallFailure.withLock({ $0 }) { throw failure }
        let slot = nextCall.withLock { value -> Int32 in
            value += 1
            return value
        }
        let call = Call(slot: 100 + slot, generation: UInt64(1_000_000 + slot))
        if let hook = makeCallHook.withLock({ $0 }) { await hook(call) }
        return call
    }

    public func answer(_ call: Call, statusCode: Int) async throws {
        journal.append(.answer(call, statusCode))
        try await base?.answer(call, statusCode: statusCode)
    }

    public func hangup(_ call: Call, statusCode: Int?) async throws {
        journal.append(.hangup(call, statusCode))
        try await base?.hangup(call, statusCode: statusCode)
    }

    public func activateAudioDevice() async throws {
        journal.append(.activateAudio)
        try await base?.activateAudioDevice()
    }

    public func deactivateAudioDevice() async throws {
        journal.append(.deactivateAudio)
        try await base?.deactivateAudioDevice()
    }

    public func reRegister(_ account: Account) async throws {
        journal.append(.reRegister(account))
        try await base?.reRegister(account)
    }

    public func setHold(_ call: Call, onHold: Bool) async throws {
        journal.append(.hold(call, onHold))
        try await base?.setHold(call, onHold: onHold)
    }

    public func setMuted(_ call: Call, muted: Bool) async throws {
        journal.append(.mute(call, muted))
        try await base?.setMuted(call, muted: muted)
    }

    public func sendDTMF(_ call: Call, digits: String) async throws {
        journal.append(.dtmf(call, digits))
        try await base?.sendDTMF(call, digits: digits)
    }

    public func setConferenced(_ call: Call, with other: Call, joined: Bool) async throws {
        journal.append(.conference(call, other, joined))
        try await base?.setConferenced(call, with: other, joined: joined)
    }
}
