import Foundation
import SwiftPJSUA
import Synchronization

/// `swiftpjsua listen`: answers every incoming call and prints one line per event.
enum Listen {
    static func run(_ options: Options) async throws -> Int32 {
        guard let port = try options.int("port", in: 0...65535) else {
            throw UsageError(message: "listen needs --port")
        }
        let answerCode = try options.int("answer-code", in: 100...699) ?? 200
        // --answer-after S: ring (180) first, answer S seconds later.
        let answerAfter = try options.seconds("answer-after")
        let hangupAfter = try options.seconds("hangup-after")
        let play = options.string("play")
        let record = options.string("record")
        let echo = options.flags.contains("echo")
        try requireReadable(play)
        let features = try CallFeatures(options)
        let statsFile = options.string("stats-file")
        let printer = EventPrinter(quiet: options.flags.contains("quiet"))
        let engine = PJSUA()
        let signals = SignalShutdown.shared
        signals.attach(engine)
        let events = engine.events
        // --stats-file: a second subscriber that does nothing but time each event's delivery.
        let delivery = statsFile.map { _ in LatencyHistogram.measure(engine) }
        try await engine.start(configuration(options: options, port: UInt16(port)))
        let networkChangeSignal = networkChangeOnSIGUSR1(engine)
        defer { networkChangeSignal.cancel() }
        if await signals.shutDownIfSignalled(engine) { return 0 }
        let (_, usable) = try await setUpAccount(
            engine: engine, options: AccountOptions(options), events: events, printer: printer)
        guard usable else {
            await engine.shutdown()
            out("registration failed")
            return 1
        }
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
            case .callMediaState(let mediaChange) where mediaChange.media.contains(where: \.isFlowingAudio):
                let call = mediaChange.call
                guard !attached.contains(call) else { break }
                attached.insert(call)
                mediaCalls += 1
                if MediaNATOptions.isUsed(options) { MediaNATOptions.report(call, engine: engine, printer: printer) }
                do {
                    if let record {
                        let file = numbered(record, mediaCalls)
                        try await engine.record(call, to: file)
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

/// `listen --echo`: each frame a call receives goes straight back into it.
enum Echo {
    /// 16 kHz, 10 ms frames keep the loop's own delay to about two frames.
    static let format = AudioFrameFormat(sampleRate: 16000, frameDuration: .milliseconds(10))

    /// Frames echoed, dropped (the loop fell behind) and underflows (silence sent for want
    /// of a frame) over every call, for `--stats-file`.
    final class Totals: Sendable {
        private let counts = Mutex<(calls: Int, frames: Int, dropped: Int, underflows: Int, running: Int)>((0, 0, 0, 0, 0))

        func started() { counts.withLock { $0.running += 1 } }

        /// Returns once every loop has added its totals, or after `limit`.
        func waitForLoops(upTo limit: Duration) async {
            let deadline = ContinuousClock.now + limit
            while counts.withLock({ $0.running }) > 0, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(10))
            }
        }

        func add(frames: Int, dropped: Int, underflows: Int) {
            counts.withLock {
                $0.running -= 1
                $0.calls += 1
                $0.frames += frames
                $0.dropped += dropped
                $0.underflows += underflows
            }
        }

        func line() -> String {
            let c = counts.withLock { $0 }
            return "echo calls=\(c.calls) frames=\(c.frames) dropped=\(c.dropped) underflows=\(c.underflows)"
        }
    }

    static func start(on call: Call, engine: PJSUA, totals: Totals) async throws {
        let received = try await engine.audioFrames(of: call, format: format, buffer: .milliseconds(200))
        let writer = try await engine.audioFrameWriter(for: call, format: format, buffer: .milliseconds(60))
        totals.started()
        Task {
            // Ends with the call: the stream finishes, or a write throws once it is gone.
            var frames = 0
            for await frame in received {
                do { try await writer.write(frame.samples) } catch { break }
                frames += 1
            }
            totals.add(frames: frames, dropped: received.droppedFrames, underflows: writer.underflows)
        }
    }
}
