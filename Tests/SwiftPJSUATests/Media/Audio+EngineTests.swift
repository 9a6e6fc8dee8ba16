import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Synchronization
import Testing

/// Collects pjsip's log lines.
final class CapturedLog: PJSUALogHandler {
    private let lines = Mutex<[String]>([])
    func log(level: Int, message: String) { lines.withLock { $0.append(message) } }
    var all: [String] { lines.withLock { $0 } }
}

extension EngineTests {
    @Test("Log lines reach the handler; two subscribers see the same events in the same order")
    func logHandlerAndSubscribers() async throws {
        let captured = CapturedLog()
        try await EngineHarness.run(logHandler: captured, logLevel: 5) { h in
            let second = EventLog(h.engine.events)
            let (caller, callee) = try await h.engine.answeredSelfCall(to: h.uri("self"), from: h.account, log: h.log)
            try await h.log.first("confirmed") { $0.isState(.confirmed, of: caller) }
            try await h.engine.hangup(caller)
            for log in [h.log, second] {
                try await log.wait("both ended") { events in
                    events.contains { $0.isState(.disconnected, of: caller) }
                        && events.contains { $0.isState(.disconnected, of: callee) }
                }
            }
            #expect(h.log.events == second.events)
            #expect(h.log.states(of: callee) == [.incoming, .connecting, .confirmed, .disconnected])
        }
        let lines = captured.all
        #expect(lines.contains { $0.contains("INVITE sip:self@127.0.0.1") })
        #expect(lines.allSatisfy { !$0.hasSuffix("\n") })
    }

    @Test("With the device attached by the app, no RTP flows until activateAudioDevice")
    func audioDeviceActivation() async throws {
        let engine = PJSUA()
        let log = EventLog(engine.events)
        try await engine.start(Configuration(
            transports: [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)],
            media: MediaConfiguration(soundDevice: .null, soundDeviceActivation: .byApp)))
        let account = try await engine.addLocalAccount()
        let port = try #require(try await engine.transports().first?.port)
        let (caller, callee) = try await engine.answeredSelfCall(
            to: "sip:self@127.0.0.1:\(port)", from: account, log: log)
        try await log.wait("audio on both legs") { events in
            events.contains { $0.hasActiveAudio(caller) } && events.contains { $0.hasActiveAudio(callee) }
        }
        // The bridge has no clock: half a second of nothing sent.
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await engine.streamStatistics(caller).packetsSent == 0)
        try await engine.activateAudioDevice()
        let deadline = ContinuousClock.now + .seconds(5)
        while try await engine.streamStatistics(callee).packetsReceived < 25, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try await engine.streamStatistics(callee).packetsReceived >= 25)
        await engine.deactivateAudioDevice()
        let frozen = try await engine.streamStatistics(caller).packetsSent
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await engine.streamStatistics(caller).packetsSent <= frozen + 1)
        await engine.shutdown()
        #expect(log.states(of: caller).last == .disconnected)
        #expect(log.states(of: callee).last == .disconnected)
    }
}

extension EngineTests {
    /// The engine calls a `swiftpjsua listen --play` process, so the callee plays and the engine
    /// (the caller) records. Before the media I/O moved onto pjsip's I/O queue, the caller read
    /// no RTP for the first 500 ms of every call (pjmedia's worker slept out its poll timeout),
    /// then took a 24-packet burst that its jitter buffer kept as latency and shed by dropping
    /// a frame every ~180 ms. PCMU is forced because speex, the default, cannot carry a pure
    /// tone across any gap in its decoder state: a dropped frame, or a decoder that starts after
    /// the tone did, leaves a level error that never decays.
    @Test("The callee's tone reaches the caller from the call's start, at a steady level")
    func calleeToneReachesCaller() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let tone = folder.file("tone.wav")
        // 0.2 of full scale: an RMS of 0.141, -17 dBFS.
        try WAVAudio.tone(frequency: 1000, duration: .seconds(10), amplitude: 0.2).write(to: tone)
        let recording = folder.file("received.wav")
        let port = FreePort.udp()
        let callee = try PeerProcess(
            "swiftpjsua-listen", executable: Repository.tool.path,
            arguments: ["listen", "--bind", "127.0.0.1", "--port", String(port), "--play", tone.path], folder: folder)
        defer { callee.stop() }
        try await callee.waitUntilListening()
        try await EngineHarness.run { h in
            try await h.engine.setCodecPriority("PCMU", 255)
            let call = try await h.engine.makeCall(to: "sip:bob@127.0.0.1:\(port)", from: h.account)
            try await h.log.first("audio active") { $0.hasActiveAudio(call) }
            try await h.engine.record(call, to: recording.path)
            #expect(try await h.engine.callInfo(call).audioCodec == "PCMU/8000")
            // Two seconds of RTP at 50 packets a second.
            try await h.poll("100 RTP packets") { try await $0.streamStatistics(call).packetsReceived >= 100 }
            try await h.engine.hangup(call)
            try await h.log.first("ended") { $0.isState(.disconnected, of: call) }
        }
        let audio = try WAVAudio(contentsOf: recording)
        let firstPart = WAVAudio(
            sampleRate: audio.sampleRate, samples: Array(audio.samples.prefix(audio.sampleRate * 3 / 10)))
        let start = ToneAnalysis(firstPart, frequency: 1000)
        let whole = ToneAnalysis(audio, frequency: 1000)
        #expect(start.detected(minimumDuration: .milliseconds(200)), "first 300 ms: \(start)")
        #expect(whole.blocks >= 90 && whole.toneBlocks >= whole.blocks - 5, "\(whole)")
        #expect(abs(whole.levelDBFS + 17) < 1.5, "\(whole)")
    }
}
