import Foundation
import SwiftPJSUA

/// The steps of a call that nearly every engine test takes, each waiting for the event it
/// stands for.
extension EngineHarness {
    /// How far ``selfCall(user:from:statusCode:until:)`` waits.
    public enum SelfCallReadiness: Sendable {
        /// Until the incoming leg is answered (its answer may still be on the way).
        case answered
        /// Until both legs are CONFIRMED with audio flowing.
        case audio
    }

    /// Calls this engine's own address (`sip:user@127.0.0.1:port`) from `account` (the local
    /// account by default), answers the incoming leg, the one with this call's Call-ID, with
    /// `statusCode`, and waits as `readiness` says.
    public func selfCall(
        user: String = "self", from account: Account? = nil, statusCode: Int = 200,
        until readiness: SelfCallReadiness = .audio
    ) async throws -> (caller: Call, callee: Call) {
        let caller = try await engine.makeCall(to: uri(user), from: account ?? self.account)
        let sipCallID = try await engine.callInfo(caller).sipCallID
        let incoming = try await log.first("the incoming leg of \(sipCallID)") { event in
            if case .incomingCall(let incoming) = event { return incoming.sipCallID == sipCallID }
            return false
        }
        guard let callee = incoming.incomingCall else { throw TimedOut(what: "the incoming leg", seen: []) }
        try await engine.answer(callee, statusCode: statusCode)
        if readiness == .audio { try await log.waitForAudio(caller, callee) }
        return (caller, callee)
    }

    /// Plays the 1 kHz test tone (``TemporaryFolder/toneFile(_:frequency:duration:sampleRate:amplitude:)``,
    /// written into the run's folder once) into `call`, looping unless `loop` is false.
    @discardableResult
    public func playTone(into call: Call, loop: Bool = true) async throws -> Player {
        let tone = folder.file("tone.wav")
        if !FileManager.default.fileExists(atPath: tone.path) { try folder.toneFile() }
        return try await engine.play(file: tone.path, into: call, loop: loop)
    }

    /// Places a call to `uri` from `account` (the local account by default) and waits until
    /// it is CONFIRMED.
    public func confirmedCall(to uri: String, from account: Account? = nil) async throws -> Call {
        let call = try await engine.makeCall(to: uri, from: account ?? self.account)
        try await log.first("\(uri) confirmed") { $0.isState(.confirmed, of: call) }
        return call
    }

    /// Waits for the incoming call whose From user is `user`, answers it 200 and waits until
    /// it is CONFIRMED.
    public func answeredCall(fromUser user: String) async throws -> Call {
        let call = try await log.incomingCall(fromUser: user)
        try await engine.answer(call)
        try await log.first("the call from \(user) confirmed") { $0.isState(.confirmed, of: call) }
        return call
    }

    /// Hangs `call` up and waits until it, and each of `others` (a self-call's other leg),
    /// is DISCONNECTED.
    public func hangUp(_ call: Call, waitingFor others: Call...) async throws {
        try await engine.hangup(call)
        let legs = [call] + others
        try await log.wait("\(legs) DISCONNECTED") { events in
            legs.allSatisfy { leg in events.contains { $0.isState(.disconnected, of: leg) } }
        }
    }

    /// sipp playing `scenario` against this engine's transport (a UAC scenario: it calls the
    /// engine), writing into the run's folder; stopped when the run ends.
    public func sippCaller(
        _ scenario: String, calls: Int = 1, extra: [String] = [], timeout: Duration = .seconds(60)
    ) async throws -> Sipp {
        try await Sipp.start(
            scenario: scenario, remote: "127.0.0.1:\(transport.port)", calls: calls, extra: extra, folder: folder,
            timeout: timeout)
    }

    /// Adds `configuration` and waits until the account is registered.
    public func registeredAccount(_ configuration: AccountConfiguration) async throws -> Account {
        let account = try await engine.addAccount(configuration)
        try await log.first("\(configuration.identity) registered") { $0.isRegistration(of: account, active: true) }
        return account
    }
}

extension Kamailio {
    /// An account of the test user `user` (with its password unless `password` is given),
    /// registering at and routed through this Kamailio (or `registrar`).
    public func account(
        _ user: String, password: String? = nil, transport: Transport? = nil, registrar: String? = nil,
        expiry: Duration = .seconds(300), retry: Duration = .seconds(300)
    ) -> AccountConfiguration {
        AccountConfiguration(
            identity: aor(user), registrar: registrar ?? uri,
            credentials: [.password(password ?? Self.passwords[user] ?? "", username: user)],
            outboundProxies: [(registrar ?? uri) + ";lr"], transport: transport, registrationExpiry: expiry,
            retryInterval: retry)
    }
}
