import Foundation
import SwiftPJSUA
import Synchronization

/// Writes one line per engine event, with the time since the command started.
final class EventPrinter: Sendable {
    private let start = ContinuousClock.now
    private let lock = Mutex(())

    func line(_ text: String) {
        let elapsed = ContinuousClock.now - start
        let ms = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
        let stamp = String(format: "%7.3f", Double(ms) / 1000)
        lock.withLock { _ in
            out("\(stamp)  \(text)")
        }
    }

    func event(_ event: PJSUAEvent, names: [Call: String] = [:]) {
        func name(_ call: Call) -> String { names[call].map { "\($0) (\(call))" } ?? "\(call)" }
        switch event {
        case .registrationState(let account, let outcome, let code, let reason, _):
            line("registration \(account) \(describe(outcome)) (\(code) \(reason))")
        case .incomingCall(_, let call, let sipCallID, let from, let video, _):
            line("incoming \(name(call)) from \(from) call-id=\(sipCallID)\(video ? " video" : "")")
        case .callState(let call, let state, _, let status, let reason):
            line("state \(name(call)) \(state.description.uppercased())\(status > 0 ? " \(status) \(reason)" : "")")
        case .callMediaState(let call, let media):
            let streams = media.map { "\($0.type.rawValue) \($0.status.rawValue) \($0.direction.rawValue)" }
            line("media \(name(call)) \(streams.joined(separator: ", "))")
        case .dtmf(let call, let digit, let method, let duration):
            let ms = duration.map { " \($0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000)ms" } ?? ""
            line("dtmf \(name(call)) \(digit) \(method.rawValue)\(ms)")
        case .transferStatus(let call, let code, let reason, let isFinal):
            line("transfer \(name(call)) \(code) \(reason)\(isFinal ? " final" : "")")
        case .transferRequest(let call, let target, let code):
            line("transfer-request \(name(call)) to \(target) answered \(code)")
        }
    }
}

/// Writes a line to standard output at once (unbuffered, so lines from the event loop and
/// from other tasks keep their order when piped).
func out(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// Sends pjsip's log lines to standard error.
struct StandardErrorLog: PJSUALogHandler {
    func log(level: Int, message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}

/// The signal that ended the command, if any.
final class SignalFlag: Sendable {
    private let value = Atomic<Int32>(0)
    func set(_ signal: Int32) { value.store(signal, ordering: .relaxed) }
    var signal: Int32? { let v = value.load(ordering: .relaxed); return v == 0 ? nil : v }
}

/// Shuts the engine down cleanly on SIGINT or SIGTERM; the command's event loop then ends.
final class SignalShutdown {
    private let sources: [any DispatchSourceSignal]
    let flag = SignalFlag()

    init(engine: PJSUA) {
        var made: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [flag] in
                flag.set(number)
                Task { await engine.shutdown() }
            }
            source.resume()
            made.append(source)
        }
        sources = made
    }

    var received: Int32? { flag.signal }
}

func configuration(options: Options, port: UInt16) throws(UsageError) -> Configuration {
    let account = try AccountOptions(options)
    var config = Configuration(
        transports: [account.transportConfiguration(bind: options.string("bind") ?? "127.0.0.1", port: port)],
        userAgent: "swiftpjsua")
    if let level = try options.int("log-level", in: 0...6) {
        config.logLevel = level
        config.logHandler = level > 0 ? StandardErrorLog() : nil
    }
    if let maxCalls = try options.int("max-calls", in: 1...512) { config.maxCalls = maxCalls }
    return config
}

extension MediaStream {
    var isFlowingAudio: Bool { type == .audio && (status == .active || status == .remoteHold) }
}

func errorLine(_ error: Error) -> String {
    "error: \(error)"
}

/// A `--play` file must exist before anything is dialled or answered.
func requireReadable(_ file: String?) throws(UsageError) {
    guard let file else { return }
    guard FileManager.default.isReadableFile(atPath: file) else {
        throw UsageError(message: "--play: cannot read \(file)")
    }
}
