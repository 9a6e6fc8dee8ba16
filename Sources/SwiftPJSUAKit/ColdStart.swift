import Foundation
import SwiftPJSUA

extension PJSUAEngine {
    /// How a call push brings up an engine that is not running (the app was launched by the
    /// push): the engine's configuration and the accounts to add, by push hint.
    ///
    /// The sequence and its timing are described in the CallKit integration article
    /// ("Cold start from a push").
    public struct ColdStart: Sendable {
        /// The configuration `PJSUA.start(_:)` is called with when the engine is not running.
        public var configuration: Configuration
        /// The accounts to add when a push names their hint (every one for a push without a
        /// hint), keyed by the hint the server puts in the push's `account`. An account with
        /// push parameters (`AccountConfiguration.push`) is added with the router's push token
        /// (``CallRouter/pushToken``) as its `pn-prid` when the router has one, so give them
        /// with any token (an empty one will do): its first REGISTER carries the current one.
        public var accounts: [String: AccountConfiguration]
        /// How long to wait for the registrar's answer to each REGISTER (10 s by default).
        public var registrationDeadline: Duration

        /// Creates a cold-start plan.
        /// - Parameters:
        ///   - configuration: the engine's configuration; start with
        ///     `MediaConfiguration(soundDeviceActivation: .byApp)` so the router attaches the
        ///     sound device only when CallKit activates the audio session.
        ///   - accounts: push hint → account configuration.
        ///   - registrationDeadline: the wait for each registration (more than zero, at most a year).
        public init(
            configuration: Configuration, accounts: [String: AccountConfiguration],
            registrationDeadline: Duration = .seconds(10)
        ) {
            self.configuration = configuration
            self.accounts = accounts
            self.registrationDeadline = registrationDeadline
        }
    }
}

/// Runs ``PJSUAEngine/prepareForPushedCall(accountHint:boundAccount:)`` one at a time and
/// remembers the accounts it added, by hint.
actor ColdStarter {
    private var added: [String: Account] = [:]
    private var tail: Task<Void, Never>?

    func prepare(
        engine: PJSUA, plan: PJSUAEngine.ColdStart?, accountHint: String?, boundAccount: Account?,
        pushToken: String?
    ) async throws -> [String: Account] {
        // One preparation at a time: this actor's awaits would otherwise interleave two
        // pushes, which would start the engine twice or add an account twice.
        let previous = tail
        let work = Task { () async throws -> [String: Account] in
            await previous?.value
            return try await self.prepareNow(
                engine: engine, plan: plan, accountHint: accountHint, boundAccount: boundAccount,
                pushToken: pushToken)
        }
        tail = Task { _ = try? await work.value }
        return try await work.value
    }

    private func prepareNow(
        engine: PJSUA, plan: PJSUAEngine.ColdStart?, accountHint: String?, boundAccount: Account?,
        pushToken: String?
    ) async throws -> [String: Account] {
        if let plan {
            do {
                try await engine.start(plan.configuration)
                added = [:]  // A new run of the engine: earlier handles are dead.
            } catch PJSUAUsageError.alreadyStarted {
                // Running already (a warm app): only register.
            }
        }
        let deadline = plan?.registrationDeadline ?? .seconds(10)
        var ready: [String: Account] = [:]
        let hints = accountHint.map { [$0] } ?? Array(plan?.accounts.keys.sorted() ?? [])
        if let boundAccount {
            try await Self.register(boundAccount, on: engine, deadline: deadline)
        }
        for hint in hints {
            if let boundAccount, hint == accountHint {
                ready[hint] = boundAccount
                continue
            }
            if let account = added[hint], (try? await engine.accountConfiguration(account)) != nil {
                try await Self.register(account, on: engine, deadline: deadline)
                ready[hint] = account
            } else if var configuration = plan?.accounts[hint] {
                // The router's token, so the first REGISTER carries it (no second one to fix it).
                if let pushToken { configuration.push?.resourceID = pushToken }
                do {
                    let account = try await engine.addAccount(configuration, awaitingRegistration: deadline).account
                    added[hint] = account
                    ready[hint] = account
                } catch let error as RegistrationFailedError {
                    // The account stays added (pjsua retries): the next push registers it
                    // again rather than adding a second one.
                    added[hint] = error.account
                    throw error
                }
            }
        }
        return ready
    }

    /// A fresh REGISTER, awaited; an account without a registrar is left alone.
    private static func register(_ account: Account, on engine: PJSUA, deadline: Duration) async throws {
        do {
            try await engine.register(account, deadline: deadline)
        } catch PJSUAUsageError.noRegistrar {
            // A local account: nothing to register.
        }
    }
}
