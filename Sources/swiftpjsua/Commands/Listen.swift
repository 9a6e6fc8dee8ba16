import Foundation
import SwiftPJSUA

/// `swiftpjsua listen`: answers every incoming call and prints one line per event.
struct Listen: Command {
    static let valuedOptions = EngineOptions.valued.union(AccountOptions.names).union(AccountOptions.callPolicyNames)
        .union(["port", "answer-code", "answer-after", "play", "record", "hangup-after", "max-calls", "stats-file"])
        .union(CallFeatures.optionNames).union(PresenceOptions.valued)
    static let flagOptions = EngineOptions.flags.union(["quiet", "echo", "follow-network", "messages"])
        .union(CallFeatures.flagNames).union(PresenceOptions.flags)
    static let interruptedStatus: Int32 = 0

    let answerCode: Int
    /// `--answer-after S`: ring (180) first, answer S seconds later.
    let answerAfter: Duration?
    let hangupAfter: Duration?
    let play: String?
    let record: String?
    let echo: Bool
    let features: CallFeatures
    let statsFile: String?
    let quiet: Bool
    /// `--messages`: take incoming MESSAGEs and print them.
    let messages: Bool
    /// `--buddy`, `--blf`, `--presence-status`, `--busy-in-calls`.
    let presence: PresenceOptions
    let engineOptions: EngineOptions

    init(_ options: Options) throws(UsageError) {
        guard let port = try options.int("port", in: 0...65535) else {
            throw UsageError(message: "listen needs --port")
        }
        answerCode = try options.int("answer-code", in: 100...699) ?? 200
        answerAfter = try options.seconds("answer-after")
        hangupAfter = try options.seconds("hangup-after")
        play = options.string("play")
        record = options.string("record")
        echo = options.flags.contains("echo")
        try HeldPlayback.requireReadable(play)
        features = try CallFeatures(options)
        statsFile = options.string("stats-file")
        quiet = options.flags.contains("quiet")
        messages = options.flags.contains("messages")
        presence = try PresenceOptions(options)
        engineOptions = try EngineOptions(options, port: UInt16(port))
    }

    func run() async throws -> Int32 {
        let printer = EventPrinter(quiet: quiet)
        let session = EngineSession()
        // --stats-file: a second subscriber that does nothing but time each event's delivery.
        let delivery = statsFile.map { _ in LatencyHistogram.measure(session.engine) }
        let status = Self.interruptedStatus
        return try await session.run(engineOptions, printer: printer, interruptedStatus: status) { account, _ in
            try await answerCalls(in: session, account: account, printer: printer, delivery: delivery)
        }
    }

    /// Answers calls until the engine shuts down, then writes `--stats-file`.
    /// - Returns: the exit status.
    private func answerCalls(
        in session: EngineSession, account: Account, printer: EventPrinter, delivery: Task<LatencyHistogram, Never>?
    ) async throws -> Int32 {
        let (engine, events, signals) = (session.engine, session.events, SignalShutdown.shared)
        let messageReader = messages ? MessagePrinter.start(engine, printer: printer) : nil
        defer { messageReader?.cancel() }
        let presenceReader = await presence.start(engine, account: account, printer: printer)
        defer { presenceReader?.cancel() }
        var confirmedCalls: Set<Call> = []
        // Printed once calls can be taken: the account exists (an INVITE that arrives between
        // the transport's bind and the account's creation is answered 480).
        if let transport = try await engine.transports().first {
            printer.line("listening on \(transport.type.rawValue) \(transport.host):\(transport.port)")
        }
        let echoTotals = Echo.Totals()
        var attached: Set<Call> = []
        var mediaCalls = 0
        var callCount = 0
        var playback = HeldPlayback(file: play)
        for await event in events {
            printer.event(event)
            if case .callMediaState(let mediaChange) = event {
                do { try await playback.update(mediaChange, engine: engine, printer: printer) } catch {
                    printer.line("playing into \(mediaChange.call) failed: \(error)")
                }
            }
            switch event {
            case .incomingCall(let incoming):
                let call = incoming.call
                callCount += 1
                // A replacement (INVITE with Replaces) is answered by the engine already.
                if incoming.replaces == nil, let answerAfter {
                    let headers = features.headers
                    do {
                        try await engine.answer(call, statusCode: 180)
                        printer.detail("ringing \(call)")
                    } catch {
                        printer.line("answer \(call) failed: \(error)")
                    }
                    Task {
                        try await Task.sleep(for: answerAfter)
                        do {
                            try await engine.answer(call, statusCode: answerCode, headers: headers)
                            printer.detail("answered \(call) with \(answerCode)")
                        } catch {
                            printer.line("answer \(call) failed: \(error)")
                        }
                    }
                } else if incoming.replaces == nil {
                    do {
                        try await engine.answer(call, statusCode: answerCode, headers: features.headers)
                        printer.detail("answered \(call) with \(answerCode)")
                    } catch {
                        printer.line("answer \(call) failed: \(error)")
                    }
                }
                if let hangupAfter, answerCode < 300 {
                    Task {
                        try await Task.sleep(for: hangupAfter)
                        try? await engine.hangup(call)
                    }
                }
            case .callState(let change) where change.state == .confirmed:
                let call = change.call
                features.start(on: call, engine: engine, printer: printer)
                confirmedCalls.insert(call)
                await presence.callsChanged(
                    confirmed: confirmedCalls.count, engine: engine, account: account, printer: printer)
            case .callMediaState(let mediaChange) where mediaChange.media.contains(where: \.isFlowingAudio):
                let call = mediaChange.call
                guard !attached.contains(call) else { break }
                attached.insert(call)
                mediaCalls += 1
                if engineOptions.reportsMediaPath { MediaNATOptions.report(call, engine: engine, printer: printer) }
                do {
                    if let record {
                        let file = Self.numbered(record, mediaCalls)
                        try await engine.record(file: file, from: call)
                        printer.line("recording \(call) to \(file)")
                    }
                    if echo {
                        try await Echo.start(on: call, engine: engine, totals: echoTotals)
                        printer.detail("echoing \(call)")
                    }
                } catch {
                    printer.line("media for \(call) failed: \(error)")
                }
            case .transferStatus(let progress):
                await features.finishTransfer(progress, engine: engine, printer: printer)
            case .callState(let change) where change.state == .disconnected:
                let call = change.call
                attached.remove(call)
                playback.ended(call)
                if confirmedCalls.remove(call) != nil {
                    await presence.callsChanged(
                        confirmed: confirmedCalls.count, engine: engine, account: account, printer: printer)
                }
            default:
                break
            }
        }
        printer.line("shut down after \(callCount) call(s)")
        if let statsFile, let delivery {
            var report = "calls=\(callCount)\n\(await delivery.value.line("delivery"))\n"
            if echo {
                // Every echo loop ends once shutdown has taken its frame ports off the bridge.
                await echoTotals.waitForLoops(upTo: .seconds(2))
                report += echoTotals.line() + "\n"
            }
            do {
                try report.write(toFile: statsFile, atomically: true, encoding: .utf8)
            } catch {
                printer.line("cannot write \(statsFile): \(error)")
            }
        }
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
