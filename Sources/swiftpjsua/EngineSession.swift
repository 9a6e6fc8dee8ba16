import Foundation
import SwiftPJSUA

/// The engine `call`, `listen` or `register` runs, and the start-up the three share.
///
/// Creating one makes the engine, hands it to ``SignalShutdown`` (SIGINT and SIGTERM shut it
/// down from then on) and subscribes to its events, so that nothing the start raises is
/// missed; ``run(_:printer:interruptedStatus:requiringUsableAccount:_:)`` starts it.
struct EngineSession {
    let engine = PJSUA()
    /// The engine's events, subscribed before it starts.
    let events: AsyncStream<PJSUAEvent>

    init() {
        SignalShutdown.shared.attach(engine)
        events = engine.events
    }

    /// Starts the engine, handles `kill -USR1` as a network change from then on, adds the
    /// account the options ask for and runs `body`.
    /// - Parameters:
    ///   - options: the engine's configuration and the account to add.
    ///   - printer: prints the events that come while the account registers.
    ///   - interruptedStatus: returned, with the engine shut down, when a signal came before
    ///     or during the start.
    ///   - requiringUsableAccount: when the account does not register, shut the engine down,
    ///     print `registration failed` and return 1 instead of running `body`.
    ///   - body: the command with the engine running, given the account and whether it is
    ///     usable (registered, or an account that does not register).
    /// - Returns: what `body` returns, or one of the statuses above.
    func run(
        _ options: EngineOptions, printer: EventPrinter, interruptedStatus: Int32, requiringUsableAccount: Bool = true,
        _ body: (_ account: Account, _ usable: Bool) async throws -> Int32
    ) async throws -> Int32 {
        try await engine.start(options.configuration)
        let networkChangeSignal = networkChangeOnSIGUSR1(engine)
        defer { networkChangeSignal.cancel() }
        if await SignalShutdown.shared.shutDownIfSignalled(engine) { return interruptedStatus }
        let (account, usable) = try await addAccount(options.account, printer: printer)
        if requiringUsableAccount, !usable {
            await engine.shutdown()
            out("registration failed")
            return 1
        }
        return try await body(account, usable)
    }

    /// Adds the account the options ask for and, when it registers, waits for the first
    /// registration outcome, printing events as they come.
    /// - Returns: the account, and whether it is usable (registered, or one that does not register).
    private func addAccount(_ options: AccountOptions, printer: EventPrinter) async throws -> (Account, Bool) {
        let transport = try await engine.transports().first
        guard let configuration = options.accountConfiguration(transport: transport) else {
            return (
                try await engine.addLocalAccount(
                    mediaInactivityTimeout: options.mediaTimeout, transportLossPolicy: options.transportLoss,
                    srtp: options.srtp), true
            )
        }
        let account: Account
        do {
            account = try await engine.addAccount(configuration)
        } catch let error as PJSUAUsageError {
            throw UsageError(message: error.description)
        }
        // An account without a registrar is usable at once: it answers its calls' challenges.
        guard let registrar = configuration.registrar else { return (account, true) }
        printer.line("registering \(configuration.identity) with \(registrar)")
        for await event in events {
            printer.event(event)
            if case .registrationState(let registration) = event, registration.account == account {
                let outcome = registration.outcome
                return (account, outcome.isRegistered)
            }
        }
        return (account, false)
    }
}
