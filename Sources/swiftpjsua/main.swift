import Foundation
import SwiftPJSUA

// First: SIGINT and SIGTERM (caught since before main) shut the engine down from here on.
SignalShutdown.shared.install()

let arguments = Array(CommandLine.arguments.dropFirst())
let common: Set<String> = Set(["log-level", "bind", "codecs", "rtp-ports", "t1"])
    .union(DNSOptions.names).union(NATOptions.names).union(MediaNATOptions.valued)
let withAccount = common.union(AccountOptions.names)

func fail(_ error: UsageError) -> Never {
    FileHandle.standardError.write(Data("swiftpjsua: \(error.message)\n\n\(usage)\n".utf8))
    exit(64)
}

guard let command = arguments.first else { fail(UsageError(message: "no command")) }
let rest = Array(arguments.dropFirst())
/// What a command that a signal ended exits with: `listen` and `register` are meant to run
/// until stopped (0); `call` and `demo` were interrupted (130).
let interruptedStatus: Int32 = ["listen", "register"].contains(command) ? 0 : 130
do {
    let status: Int32
    switch command {
    case "demo":
        status = try await Demo.run(Options(rest, valued: common, flags: MediaNATOptions.flags))
    case "listen":
        status = try await Listen.run(Options(
            rest, valued: withAccount.union(["port", "answer-code", "answer-after", "play", "record", "hangup-after", "max-calls", "stats-file"])
                .union(CallFeatures.optionNames),
            flags: MediaNATOptions.flags.union(["quiet", "echo", "follow-network"])))
    case "call":
        status = try await Dial.run(Options(
            rest, valued: withAccount.union(["port", "play", "record", "hangup-after"]).union(CallFeatures.optionNames),
            flags: MediaNATOptions.flags.union(["follow-network"])))
    case "register":
        status = try await Register.run(Options(
            rest, valued: withAccount.union(["port"]), flags: MediaNATOptions.flags.union(["once", "follow-network"])))
    case "version", "--version":
        let version = PJSUA.pjprojectVersion
        out("pjproject \(version.loaded) loaded")
        out("compiled against pjproject \(version.compiled)")
        out("IPv6: \(PJSUA.supportsIPv6 ? "yes" : "no (PJ_HAS_IPV6 is 0)")")
        out("RTP on \(PJSUA.usesMediaWorkerThread ? "pjmedia's media worker thread" : "pjsua's SIP worker thread")")
        out("call limit: \(PJSUA.compiledCallLimit)")
        status = version.loaded == version.compiled ? 0 : 1
    case "help", "--help", "-h":
        out(usage)
        status = 0
    default:
        fail(UsageError(message: "unknown command \(command)"))
    }
    // A signal may have cut the command short anywhere (an engine call made just after the
    // signal's shutdown throws, a registration in flight reports 503): it decides the status.
    exit(SignalShutdown.shared.received != nil && command != "version" ? interruptedStatus : status)
} catch let error as UsageError {
    fail(error)
} catch {
    if SignalShutdown.shared.received != nil { exit(interruptedStatus) }
    FileHandle.standardError.write(Data("swiftpjsua: \(error)\n".utf8))
    exit(1)
}
