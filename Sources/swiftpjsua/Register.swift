import Foundation
import SwiftPJSUA

/// `swiftpjsua register`: registers an account and prints registration events until
/// stopped; with `--once`, registers, prints the outcome, unregisters and exits.
enum Register {
    static func run(_ options: Options) async throws -> Int32 {
        let account = try AccountOptions(options)
        guard account.registers else { throw UsageError(message: "register needs --registrar and --id") }
        guard options.positionals.isEmpty else { throw UsageError(message: "register takes no URI") }
        let port = try options.int("port", in: 0...65535) ?? 0
        let printer = EventPrinter()
        let engine = PJSUA()
        let signals = SignalShutdown.shared
        signals.attach(engine)
        let events = engine.events
        try await engine.start(configuration(options: options, port: UInt16(port)))
        let networkChangeSignal = networkChangeOnSIGUSR1(engine)
        defer { networkChangeSignal.cancel() }
        if await signals.shutDownIfSignalled(engine) { return 0 }
        let (handle, registered) = try await setUpAccount(
            engine: engine, options: account, events: events, printer: printer)
        if options.flags.contains("once") {
            if registered {
                let outcome = try await engine.removeAccount(handle)
                printer.line("unregister: \(outcome.map(describe) ?? "no answer")")
            }
            await engine.shutdown()
            out(registered ? "registration succeeded" : "registration failed")
            return registered ? 0 : 1
        }
        for await event in events { printer.event(event) }
        return signals.received == nil ? 1 : 0
    }
}

/// One line for a registration outcome.
func describe(_ outcome: RegistrationOutcome) -> String {
    switch outcome {
    case .registered(let expiration): "registered expires=\(expiration.components.seconds)s"
    case .unregistered: "unregistered"
    case .failed(let code, let reason): "failed \(code) \(reason)"
    }
}
