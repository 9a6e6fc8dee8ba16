import Foundation
import SwiftPJSUA

/// `swiftpjsua demo`: the engine calls itself over loopback and checks that audio flowed.
struct Demo: Command {
    static let valuedOptions = EngineOptions.valued
    static let flagOptions = EngineOptions.flags
    static let interruptedStatus: Int32 = 130
    static let toneFrequency = 1000.0

    let engineOptions: EngineOptions

    init(_ options: Options) throws(UsageError) {
        // The demo calls itself: over loopback unless told otherwise.
        engineOptions = try EngineOptions(options, port: 0, defaultBind: "127.0.0.1")
    }

    func run() async throws -> Int32 {
        let printer = EventPrinter()
        let engine = PJSUA()
        let signals = SignalShutdown.shared
        signals.attach(engine)
        let workDir = FileManager.default.temporaryDirectory
            .appendingPathComponent("swiftpjsua-demo-\(getpid())", isDirectory: true)
        try FileManager.default.createDirectory(at: workDir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: workDir) }
        let toneFile = workDir.appendingPathComponent("tone-1khz.wav")
        let recordingFile = workDir.appendingPathComponent("received.wav")
        let config = engineOptions.configuration
        try WAVAudio.tone(frequency: Self.toneFrequency, duration: .seconds(5), sampleRate: config.media.clockRate)
            .write(to: toneFile)

        let events = engine.timestampedEvents
        try await engine.start(config)
        if await signals.shutDownIfSignalled(engine) { return 130 }
        guard let transport = try await engine.transports().first else { return 1 }
        printer.line("engine started on udp \(transport.host):\(transport.port)")
        let account = try await engine.addLocalAccount()
        let target = "sip:demo@\(transport.host):\(transport.port)"
        let caller = try await engine.makeCall(to: target, from: account)
        printer.line("calling \(target)")

        var names: [Call: String] = [caller: "caller"]
        var callee: Call?
        var ready: Set<Call> = []
        var ended: Set<Call> = []
        var audioStarted = false
        var codec = "?"
        // Set by the task that hangs up, read once the event loop has ended.
        let statistics = Protected<(sent: StreamStatistics?, received: StreamStatistics?)>((nil, nil))
        let hungUpAt = Protected<ContinuousClock.Instant?>(nil)
        var disconnectedAt: [Call: ContinuousClock.Instant] = [:]
        var offered: [MediaType] = []
        // A bound on the whole demo: if something stalls, shut down and report failure.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(20))
            printer.line("timed out")
            await engine.shutdown()
        }
        for await stamped in events {
            let event = stamped.event
            printer.event(event, names: names)
            switch event {
            case .incomingCall(let incoming):
                let call = incoming.call
                callee = call
                names[call] = "callee"
                try await engine.answer(call, statusCode: 200)
            case .callMediaState(let mediaChange) where mediaChange.media.contains(where: \.isFlowingAudio):
                let call = mediaChange.call
                let media = mediaChange.media
                ready.insert(call)
                // The callee's streams are the m= lines the caller's INVITE offered.
                if call == callee { offered = media.map(\.type) }
            case .callState(let change) where change.state == .disconnected:
                let call = change.call
                ended.insert(call)
                disconnectedAt[call] = stamped.raisedAt
            default:
                break
            }
            if !audioStarted, let callee, ready.contains(caller), ready.contains(callee) {
                audioStarted = true
                codec = (try? await engine.callInfo(caller).audioCodec ?? "?") ?? "?"
                try await engine.play(file: toneFile.path, into: caller, loop: true)
                try await engine.record(file: recordingFile.path, from: callee)
                let tone = Int(Self.toneFrequency)
                printer.line("playing a \(tone) Hz tone into the caller leg, recording the callee leg")
                Task {
                    try await Task.sleep(for: .seconds(3))
                    let sent = try? await engine.streamStatistics(caller)
                    let received = try? await engine.streamStatistics(callee)
                    statistics.withLock { $0 = (sent, received) }
                    printer.line("hanging up")
                    hungUpAt.withLock { $0 = .now }
                    try? await engine.hangup(caller)
                }
            }
            if let callee, ended.contains(caller), ended.contains(callee) { break }
        }
        watchdog.cancel()
        await engine.shutdown()
        if signals.received != nil { return 130 }

        let (sent, received) = statistics.withLock { $0 }
        out("")
        out("codec: \(codec)")
        out("rtp packets sent (caller): \(sent?.packetsSent ?? 0)")
        out("rtp packets received (callee): \(received?.packetsReceived ?? 0)")
        out("media offered: \(offered.isEmpty ? "?" : offered.map { "\($0)" }.joined(separator: ", "))")
        if let hungUp = hungUpAt.withLock({ $0 }) {
            for (call, name) in names.sorted(by: { $0.value < $1.value }) {
                guard let at = disconnectedAt[call] else { continue }
                let after = (at - hungUp).components
                let ms = Double(after.attoseconds) / 1e15 + Double(after.seconds) * 1000
                out(String(format: "%@ disconnected: %.1f ms after the hang-up", name, ms))
            }
        }
        var detected = false
        if let audio = try? WAVAudio(contentsOf: recordingFile) {
            let analysis = ToneAnalysis(audio, frequency: Self.toneFrequency)
            detected = analysis.detected()
            out(
                String(
                    format: "recording: %.2f s, level %.1f dBFS, %.0f%% of energy at %.0f Hz, tone in %.2f s",
                    Double(audio.samples.count) / Double(audio.sampleRate), analysis.levelDBFS,
                    analysis.toneEnergyRatio * 100, Self.toneFrequency,
                    Double(analysis.toneBlocks) * 0.02))
        } else {
            out("recording: missing or unreadable")
        }
        let flowed = (received?.packetsReceived ?? 0) > 0
        out("tone detected: \(detected && flowed ? "yes" : "no")")
        return detected && flowed ? 0 : 1
    }
}
