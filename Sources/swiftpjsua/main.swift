import Foundation

// First: SIGINT and SIGTERM (caught since before main) shut the engine down from here on,
// for as long as this source lives (until the tool exits).
let signalSource = SignalShutdown.shared.install()

/// The commands that run an engine, by name; `version` and `help` take no options.
let commands: [String: any Command.Type] = [
    "demo": Demo.self, "listen": Listen.self, "call": Dial.self, "register": Register.self,
    "message": SendMessage.self, "phone": Phone.self,
]

func fail(_ error: UsageError) -> Never {
    FileHandle.standardError.write(Data("swiftpjsua: \(error.message)\n\n\(usage)\n".utf8))
    exit(64)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first else { fail(UsageError(message: "no command")) }
let rest = Array(arguments.dropFirst())
/// What the tool exits with when a signal ended the command (``Command/interruptedStatus``).
let interruptedStatus: Int32 = commands[name]?.interruptedStatus ?? 130
do {
    let status: Int32
    switch name {
    case "version", "--version":
        status = Version.run()
    case "help", "--help", "-h":
        out(usage)
        status = 0
    default:
        guard let command = commands[name] else { fail(UsageError(message: "unknown command \(name)")) }
        status = try await command.parse(rest).run()
    }
    // A signal may have cut the command short anywhere (an engine call made just after the
    // signal's shutdown throws, a registration in flight reports 503): it decides the status.
    exit(SignalShutdown.shared.received != nil && name != "version" ? interruptedStatus : status)
} catch let error as UsageError {
    fail(error)
} catch {
    if SignalShutdown.shared.received != nil { exit(interruptedStatus) }
    FileHandle.standardError.write(Data("swiftpjsua: \(error)\n".utf8))
    exit(1)
}
