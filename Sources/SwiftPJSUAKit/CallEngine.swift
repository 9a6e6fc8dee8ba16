import Foundation
import SwiftPJSUA

/// The engine operations the ``CallRouter`` uses: a seam over `PJSUA` so the router's
/// logic can also be driven by a test double.
///
/// ``PJSUAEngine`` is the implementation over the real engine.
public protocol CallEngine: Sendable {
    /// Places a call. See `PJSUA.makeCall(to:from:)`.
    func makeCall(to uri: String, from account: Account) async throws -> Call
    /// Sends a provisional or final response to an incoming call. See `PJSUA.answer(_:statusCode:)`.
    func answer(_ call: Call, statusCode: Int) async throws
    /// Ends a call; `statusCode` is the final response for an unanswered incoming call.
    /// See `PJSUA.hangup(_:statusCode:)`.
    func hangup(_ call: Call, statusCode: Int?) async throws
    /// Attaches the sound device. See `PJSUA.activateAudioDevice()`.
    func activateAudioDevice() async throws
    /// Detaches the sound device. See `PJSUA.deactivateAudioDevice()`.
    func deactivateAudioDevice() async throws
    /// Sends a fresh REGISTER for the account now.
    func reRegister(_ account: Account) async throws
    /// Puts the call on hold (`true`) or resumes it (`false`) with a re-INVITE.
    func setHold(_ call: Call, onHold: Bool) async throws
    /// Stops (`true`) or restarts (`false`) sending the microphone's audio into the call.
    func setMuted(_ call: Call, muted: Bool) async throws
    /// Sends DTMF digits as RFC 4733 telephone-events.
    func sendDTMF(_ call: Call, digits: String) async throws
    /// Connects (`true`) or disconnects (`false`) the audio of two calls in the conference bridge.
    func setConferenced(_ call: Call, with other: Call, joined: Bool) async throws
    /// Makes the engine reachable for the INVITE a call push announces: started, and the
    /// account for `accountHint` (every account it knows when `nil`) registered afresh, the
    /// registrar's 2xx received before this returns. See ``PJSUAEngine/ColdStart``.
    ///
    /// The default implementation does nothing and returns an empty dictionary (an engine
    /// that is always started and registered, or a test double).
    /// - Parameters:
    ///   - accountHint: the push's account hint, if any.
    ///   - boundAccount: the account the router has bound to that hint, if any.
    /// - Returns: the accounts now registered, by push hint, for the router to bind.
    /// - Throws: the engine's error when it cannot start or the registrar refuses.
    func prepareForPushedCall(accountHint: String?, boundAccount: Account?) async throws -> [String: Account]
    /// The account's identity (address-of-record), such as `sip:bob@example.com`, for
    /// mapping phone numbers to URIs in its domain; `nil` when unknown. The default
    /// implementation returns `nil`.
    func identity(of account: Account) async -> String?

    /// Whether calls can carry video, so that the call UI may be told a call has video
    /// (CallKit's `hasVideo`). The default implementation returns `PJSUA.carriesVideo`,
    /// `false` today: the engine answers audio only. Read synchronously, from any thread.
    var carriesVideo: Bool { get }

    /// The account's RFC 8599 push parameters as configured now (`AccountConfiguration.push`),
    /// or `nil` when it has none or is gone. The router puts a new push token in them. The
    /// default implementation returns `nil` (no account takes push tokens).
    func pushConfiguration(of account: Account) async -> PushConfiguration?

    /// Sends a fresh REGISTER for the account with new push parameters, so the registrar's
    /// binding carries them (a new device token). See `PJSUA.reRegister(_:updatingPush:)`.
    /// The default implementation throws ``CallActionError/unsupported``.
    /// - Throws: the engine's error (the account is gone or has no registrar).
    func reRegister(_ account: Account, updatingPush push: PushConfiguration) async throws

    /// Like ``prepareForPushedCall(accountHint:boundAccount:)``, with the VoIP push token the
    /// router holds: an account the engine adds now with push parameters registers with
    /// this token as its `pn-prid`, so its first REGISTER already carries it. The default
    /// implementation ignores the token and calls
    /// ``prepareForPushedCall(accountHint:boundAccount:)``.
    /// - Parameters:
    ///   - accountHint: the push's account hint, if any.
    ///   - boundAccount: the account the router has bound to that hint, if any.
    ///   - pushToken: the push resource ID (the token as hexadecimal text), if the router has one.
    /// - Returns: the accounts now registered, by push hint, for the router to bind.
    /// - Throws: the engine's error when it cannot start or the registrar refuses.
    func prepareForPushedCall(
        accountHint: String?, boundAccount: Account?, pushToken: String?
    ) async throws -> [String: Account]
}

extension CallEngine {
    /// Does nothing: the engine is taken to be started and registered.
    public func prepareForPushedCall(accountHint: String?, boundAccount: Account?) async throws -> [String: Account] {
        [:]
    }

    /// `nil`: phone numbers map to `tel:` URIs.
    public func identity(of account: Account) async -> String? { nil }

    /// `PJSUA.carriesVideo`: `false` while the engine answers audio only.
    public var carriesVideo: Bool { PJSUA.carriesVideo }

    /// `nil`: no account takes push tokens.
    public func pushConfiguration(of account: Account) async -> PushConfiguration? { nil }

    /// Throws ``CallActionError/unsupported``: this engine cannot change push parameters.
    public func reRegister(_ account: Account, updatingPush push: PushConfiguration) async throws {
        throw CallActionError.unsupported
    }

    /// Calls ``prepareForPushedCall(accountHint:boundAccount:)``, without the token.
    public func prepareForPushedCall(
        accountHint: String?, boundAccount: Account?, pushToken: String?
    ) async throws -> [String: Account] {
        try await prepareForPushedCall(accountHint: accountHint, boundAccount: boundAccount)
    }
}

/// ``CallEngine`` over the real engine.
///
/// Start the engine with `MediaConfiguration(soundDeviceActivation: .byApp)`: the router
/// then attaches the sound device only while the system's audio session is active.
public struct PJSUAEngine: CallEngine {
    /// The engine.
    public let engine: PJSUA

    /// What a call push starts and registers (`nil`: only accounts the router has bound,
    /// re-registered).
    public let coldStart: ColdStart?
    private let starter = ColdStarter()

    /// Wraps an engine.
    /// - Parameters:
    ///   - engine: a started or not yet started engine.
    ///   - coldStart: how to start the engine and which accounts to add when a call push
    ///     finds it stopped (after a cold launch from the push); `nil` when the app starts it
    ///     itself. Either way a call push re-registers the push's account.
    public init(_ engine: PJSUA, coldStart: ColdStart? = nil) {
        self.engine = engine
        self.coldStart = coldStart
    }

    /// Starts the engine if ``coldStart`` says how and it is not running, then registers the
    /// hinted account afresh and waits for the registrar's 2xx: an account bound to the hint
    /// (`PJSUA.register(_:deadline:)`), else one this engine added for the hint earlier, else
    /// the ``ColdStart/accounts`` entry for it, added with `PJSUA.addAccount(_:awaitingRegistration:)`.
    /// A `nil` hint does this for every account of ``coldStart`` and the bound one. An
    /// account without a registrar (a local account) is left as it is. Calls are serialized:
    /// two pushes at once start the engine and add each account once.
    /// - Throws: `PJSUAError` or `PJSUAUsageError` from `PJSUA.start(_:)`;
    ///   `RegistrationFailedError` when the registrar refuses or does not answer within
    ///   ``ColdStart/registrationDeadline``.
    public func prepareForPushedCall(accountHint: String?, boundAccount: Account?) async throws -> [String: Account] {
        try await prepareForPushedCall(accountHint: accountHint, boundAccount: boundAccount, pushToken: nil)
    }

    /// As ``prepareForPushedCall(accountHint:boundAccount:)``; an account it adds from
    /// ``ColdStart/accounts`` that has push parameters registers with `pushToken` as its
    /// `pn-prid` (the router's latest token), so the first REGISTER after a cold start
    /// carries the current token. An account with no push parameters is added as configured.
    /// - Throws: as ``prepareForPushedCall(accountHint:boundAccount:)``.
    public func prepareForPushedCall(
        accountHint: String?, boundAccount: Account?, pushToken: String?
    ) async throws -> [String: Account] {
        try await starter.prepare(
            engine: engine, plan: coldStart, accountHint: accountHint, boundAccount: boundAccount,
            pushToken: pushToken)
    }

    /// The account's `AccountConfiguration.push` (`PJSUA.accountConfiguration(_:)`), or `nil`
    /// when it has none or is gone.
    public func pushConfiguration(of account: Account) async -> PushConfiguration? {
        try? await engine.accountConfiguration(account).push
    }

    /// Calls `PJSUA.reRegister(_:updatingPush:)` with the new parameters: pjsua replaces
    /// the binding's Contact (`pjsua_acc_modify`), the registration event follows.
    public func reRegister(_ account: Account, updatingPush push: PushConfiguration) async throws {
        try await engine.reRegister(account, updatingPush: push)
    }

    /// The account's configured identity (`PJSUA.accountConfiguration(_:)`), or `nil` when
    /// the account is gone.
    public func identity(of account: Account) async -> String? {
        try? await engine.accountConfiguration(account).identity
    }

    /// Calls `PJSUA.makeCall(to:from:)`.
    public func makeCall(to uri: String, from account: Account) async throws -> Call {
        try await engine.makeCall(to: uri, from: account)
    }

    /// Calls `PJSUA.answer(_:statusCode:)`.
    public func answer(_ call: Call, statusCode: Int) async throws {
        try await engine.answer(call, statusCode: statusCode)
    }

    /// Calls `PJSUA.hangup(_:statusCode:)`.
    public func hangup(_ call: Call, statusCode: Int?) async throws {
        try await engine.hangup(call, statusCode: statusCode)
    }

    /// Calls `PJSUA.activateAudioDevice()`.
    public func activateAudioDevice() async throws {
        try await engine.activateAudioDevice()
    }

    /// Calls `PJSUA.deactivateAudioDevice()`.
    public func deactivateAudioDevice() async throws {
        await engine.deactivateAudioDevice()
    }

    /// Calls `PJSUA.reRegister(_:updatingPush:)`: a fresh REGISTER with the account's current
    /// push parameters.
    public func reRegister(_ account: Account) async throws {
        try await engine.reRegister(account)
    }

    /// Calls `PJSUA.setHold(_:)` (a re-INVITE offering `sendonly`) or `PJSUA.resume(_:)`
    /// (`sendrecv`); the media state event that shows it follows.
    public func setHold(_ call: Call, onHold: Bool) async throws {
        if onHold {
            try await engine.setHold(call)
        } else {
            try await engine.resume(call)
        }
    }

    /// Calls `PJSUA.setMuted(_:muted:)`: the far end hears silence while muted.
    public func setMuted(_ call: Call, muted: Bool) async throws {
        try await engine.setMuted(call, muted: muted)
    }

    /// Calls `PJSUA.sendDTMF(_:digits:method:duration:)` with RFC 4733 telephone-events.
    public func sendDTMF(_ call: Call, digits: String) async throws {
        try await engine.sendDTMF(call, digits: digits, method: .rfc4733)
    }

    /// Calls `PJSUA.joinConference(_:)` with both calls, or `PJSUA.leaveConference(_:)` for
    /// `call` (which leaves every link it has).
    public func setConferenced(_ call: Call, with other: Call, joined: Bool) async throws {
        if joined {
            try await engine.joinConference([call, other])
        } else {
            try await engine.leaveConference(call)
        }
    }
}
