import Foundation
import SwiftPJSUA

/// `swiftpjsua listen`: answers every incoming call and prints one line per event.
enum Listen {
    static func run(_ options: Options) async throws -> Int32 {
        guard let port = try options.int("port", in: 0...65535) else {
            throw UsageError(message: "listen needs --port")
        }
        let answerCode = try options.int("answer-code", in: 100...699) ?? 200
        let hangupAfter = try options.seconds("hangup-after")
        let play = options.string("play")
        let record = options.string("record")
        try requireReadable(play)
        let features = try CallFeatures(options)
        let printer = EventPrinter()
        let engine = PJSUA()
        let signals = SignalShutdown(engine: engine)
        let events = engine.events
        try await engine.start(configuration(options: options, port: UInt16(port)))
        if let transport = try await engine.transports().first {
            printer.line("listening on \(transport.type.rawValue) \(transport.host):\(transport.port)")
        }
        let (_, usable) = try await setUpAccount(
            engine: engine, options: AccountOptions(options), events: events, printer: printer)
        guard usable else {
            await engine.shutdown()
            out("registration failed")
            return 1
        }
        var attached: Set<Call> = []
        var callCount = 0
        for await event in events {
            printer.event(event)
            switch event {
            case .incomingCall(_, let call, _, _, _, _):
                callCount += 1
                do {
                    try await engine.answer(call, statusCode: answerCode, headers: features.headers)
                    printer.line("answered \(call) with \(answerCode)")
                } catch {
                    printer.line("answer \(call) failed: \(error)")
                }
                if let hangupAfter, answerCode < 300 {
                    Task {
                        try await Task.sleep(for: hangupAfter)
                        try? await engine.hangup(call)
                    }
                }
            case .callState(let call, .confirmed, _, _, _):
                features.start(on: call, engine: engine, printer: printer)
            case .callMediaState(let call, let media) where media.contains(where: \.isFlowingAudio):
                guard !attached.contains(call) else { break }
                attached.insert(call)
                do {
                    if let play { try await engine.play(file: play, into: call) }
                    if let record {
                        let file = numbered(record, attached.count)
                        try await engine.record(call, to: file)
                        printer.line("recording \(call) to \(file)")
                    }
                } catch {
                    printer.line("media for \(call) failed: \(error)")
                }
            default:
                break
            }
        }
        printer.line("shut down after \(callCount) call(s)")
        return signals.received == nil ? 1 : 0
    }

    /// `file` for the first call, `file-2.wav`, `file-3.wav`… for later ones.
    static func numbered(_ file: String, _ n: Int) -> String {
        guard n > 1 else { return file }
        let url = URL(fileURLWithPath: file)
        let ext = url.pathExtension
        let base = url.deletingPathExtension().path
        return ext.isEmpty ? "\(base)-\(n)" : "\(base)-\(n).\(ext)"
    }
}
