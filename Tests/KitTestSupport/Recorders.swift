import Foundation
import PJSUATestSupport
import SwiftPJSUA
import SwiftPJSUAKit
// The shipped doubles (FakeCallEngine, RecordingProvider, ManualClock, EngineRecord), for
// the tests that import this target.
@_exported import SwiftPJSUAKitTesting

/// A ``CallEngine`` that records every operation, then forwards it to a real engine
/// (`base`) or, without one, succeeds (a fake whose events the test feeds to the router).
public final class RecordingEngine: CallEngine {
    public let journal = RecordLog<EngineRecord>()
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
