import Foundation
import SwiftPJSUA

/// `swiftpjsua register`: registers an account and prints registration events until
/// stopped; with `--once`, registers, prints the outcome, unregisters and exits.
struct Register: Command {
    static let valuedOptions = EngineOptions.valued.union(AccountOptions.names).union(["port"])
    static let flagOptions = EngineOptions.flags.union(["once", "follow-network"])
    static let interruptedStatus: Int32 = 0

    let once: Bool
    let engineOptions: EngineOptions

    init(_ options: Options) throws(UsageError) {
        let account = try AccountOptions(options)
        guard account.registers else { throw UsageError(message: "register needs --registrar and --id") }
        guard options.positionals.isEmpty else { throw UsageError(message: "register takes no URI") }
        let port = try options.int("port", in: 0...65535) ?? 0
        once = options.flags.contains("once")
        engineOptions = try EngineOptions(options, port: UInt16(port), account: account)
    }

    func run() async throws -> Int32 {
        let printer = EventPrinter()
        let session = EngineSession()
        let (engine, signals) = (session.engine, SignalShutdown.shared)
        let status = Self.interruptedStatus
        return try await session.run(
            engineOptions, printer: printer, interruptedStatus: status, requiringUsableAccount: false
        ) { account, registered in
            if once {
                if registered {
                    let outcome = try await engine.removeAccount(account)
                    printer.line("unregister: \(outcome.map(describe) ?? "no answer")")
                }
                await engine.shutdown()
                out(registered ? "registration succeeded" : "registration failed")
                return registered ? 0 : 1
            }
            for await event in session.events { printer.event(event) }
            return signals.received == nil ? 1 : 0
        }
    }
}
