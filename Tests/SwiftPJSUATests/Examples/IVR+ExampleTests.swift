import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

extension EngineTests {
    /// Starts the IVR example with `arguments` (on a free port of 127.0.0.1) and calls it over
    /// PCMU: the IVR and the call, once its audio flows.
    static func callIVR(
        _ h: EngineHarness, _ name: String, _ arguments: [String], listening timeout: Duration = .seconds(10)
    ) async throws -> (ivr: PeerProcess, call: Call) {
        try await h.engine.setCodecPriority("PCMU", 255)
        let port = FreePort.udp()
        let ivr = try PeerProcess(
            name, executable: Repository.executable("swiftpjsua-ivr").path,
            arguments: ["--port", String(port)] + arguments, folder: h.folder)
        // "listening" comes once its account is added: an INVITE between the transport's
        // bind and that would find no account and get 480.
        try await ivr.waitForOutput(containing: "ivr listening on", timeout: timeout)
        let call = try await h.engine.makeCall(to: "sip:ivr@127.0.0.1:\(port)", from: h.account)
        try await h.log.first("audio active") { $0.hasActiveAudio(call) }
        return (ivr, call)
    }

    /// Presses 1 on `call` and, once the IVR says it echoes, expects a tone written into the
    /// call to come back.
    static func expectIVREcho(_ call: Call, of ivr: PeerProcess, _ h: EngineHarness) async throws {
        try await h.engine.sendDTMF(call, digits: "1")
        try await ivr.waitForOutput(containing: ": echo")
        let format = AudioFrameFormat(sampleRate: 8000)
        let returned = try await h.engine.audioFrames(from: call, format: format)
        let writer = try await h.engine.audioFrameWriter(into: call, format: format)
        let listening = Task { await Self.collect(returned, for: .seconds(2)) }
        let tone = WAVAudio.tone(frequency: 1000, duration: .seconds(2), sampleRate: 8000, amplitude: 0.2)
        try await writer.write(tone.samples)
        let echo = Self.analysis(of: Array(await listening.value.dropFirst(25)), frequency: 1000)
        #expect(echo.detected(minimumDuration: .seconds(1)), "echo: \(echo)")
        try await h.engine.stop(writer)
    }

    /// The engine calls the IVR example as a caller would: it hears the prompt, presses 1
    /// and hears its own tone come back, then presses 0 and is transferred (REFER) to a
    /// desk address on itself, which it answers; the IVR then hangs up the first leg.
    @Test("IVR example: the caller hears the prompt, DTMF 1 echoes, DTMF 0 transfers by REFER")
    func ivrExample() async throws {
        try await EngineHarness.run { h in
            let prompt = try h.folder.toneFile("prompt.wav", frequency: 700, duration: .seconds(2), amplitude: 0.2)
            let (ivr, call) = try await Self.callIVR(
                h, "swiftpjsua-ivr", ["--prompt", prompt.path, "--transfer-to", h.uri("desk")])
            let heard = try await h.engine.audioFrames(from: call, format: AudioFrameFormat(sampleRate: 8000))
            let promptHeard = Self.analysis(of: await Self.collect(heard, for: .milliseconds(1500)), frequency: 700)
            #expect(promptHeard.detected(minimumDuration: .milliseconds(800)), "prompt: \(promptHeard)")
            try await h.engine.stop(heard)

            try await Self.expectIVREcho(call, of: ivr, h)

            try await h.engine.sendDTMF(call, digits: "0")
            let refer = try await h.log.first("REFER from the IVR") {
                if case .transferRequest(let answer) = $0, answer.call == call, answer.statusCode == 202 {
                    answer.target.contains("desk")
                } else {
                    false
                }
            }
            #expect(refer.call == call)
            let incoming = try await h.log.incoming("the transferred call at the desk") { incoming in
                incoming.headers.contains { $0.name.lowercased() == "to" && $0.value.contains("desk") }
            }
            try await h.engine.answer(incoming.call)
            try await h.log.first("the IVR hangs up once the transfer is done") { $0.isState(.disconnected, of: call) }
            await h.engine.hangupAll()
            try? await ivr.waitForOutput(containing: "transfer done", timeout: .seconds(3))
            let output = ivr.output
            #expect(
                output.contains("digit 1") && output.contains("echo") && output.contains("transfer done"), "\(output)")
        }
    }
}

extension EngineTests {
    /// An IVR that cannot start says why and exits with a status, instead of trapping on an
    /// error thrown at top level; a prompt file it cannot read is refused before it answers
    /// anyone (it would otherwise answer every caller and hang up at once).
    @Test("IVR example: a missing prompt file and a transport that cannot bind exit with a message, not a crash")
    func ivrExampleRefusesBadSetup() async throws {
        try await withTemporaryFolder { folder in
            let prompt = try folder.toneFile("prompt.wav", frequency: 700, duration: .milliseconds(200), amplitude: 0.2)
            let cases: [(name: String, arguments: [String], status: Int32, says: String)] = [
                (
                    "ivr-no-prompt", ["--port", String(FreePort.udp()), "--prompt", folder.file("missing.wav").path],
                    64, "missing.wav"
                ),
                (
                    "ivr-bad-bind", ["--port", String(FreePort.udp()), "--bind", "999.1.1.1", "--prompt", prompt.path],
                    1, "pjsua_transport_create"
                ),
            ]
            for c in cases {
                let ivr = try PeerProcess(
                    c.name, executable: Repository.executable("swiftpjsua-ivr").path, arguments: c.arguments,
                    folder: folder, environment: ["SWIFT_BACKTRACE": "enable=no"])
                defer { ivr.stop() }
                let status = try await ivr.waitForExit(timeout: .seconds(10))
                #expect(status == c.status, "\(c.name): \(ivr.output)")
                #expect(ivr.output.contains(c.says), "\(c.name): \(ivr.output)")
                #expect(!ivr.output.contains("Fatal error"), "\(c.name): \(ivr.output)")
            }
        }
    }
}

extension EngineTests {
    /// Speech in 20 ms blocks: the level of each block and how much of its energy lies in the
    /// voice band (above 300 Hz, through a second-order high-pass; a G.711 call carries
    /// nothing above 4 kHz anyway).
    struct SpeechProfile: CustomStringConvertible {
        /// Per block: level in dBFS and the voice band's share of the energy (0–1).
        var blocks: [(level: Double, voiceShare: Double)] = []

        init(_ audio: WAVAudio) {
            let size = max(1, audio.sampleRate / 50)
            let w0 = 2 * Double.pi * 300 / Double(audio.sampleRate), alpha = sin(w0) / (2 * 0.7071)
            let a0 = 1 + alpha
            let b0 = (1 + cos(w0)) / 2 / a0, b1 = -(1 + cos(w0)) / a0, b2 = b0
            let a1 = -2 * cos(w0) / a0, a2 = (1 - alpha) / a0
            var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
            var start = 0
            while start + size <= audio.samples.count {
                var energy = 0.0, band = 0.0
                for sample in audio.samples[start..<start + size] {
                    let x = Double(sample) / 32768
                    let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
                    (x2, x1, y2, y1) = (x1, x, y1, y)
                    energy += x * x
                    band += y * y
                }
                let level = energy > 0 ? 10 * log10(energy / Double(size)) : -120
                blocks.append((level, energy > 0 ? min(1, band / energy) : 0))
                start += size
            }
        }

        /// A block of speech: louder than -45 dBFS, most of it in the voice band.
        func isVoiced(_ block: (level: Double, voiceShare: Double)) -> Bool {
            block.level > -45 && block.voiceShare > 0.5
        }
        var voiced: [Int] { blocks.indices.filter { isVoiced(blocks[$0]) } }
        /// From the first voiced block to the last one.
        var span: Duration {
            guard let first = voiced.first, let last = voiced.last else { return .zero }
            return .milliseconds((last - first + 1) * 20)
        }
        /// The spread of voiced blocks' levels, 10th to 90th percentile, in dB: speech rises
        /// and falls with its syllables; a steady tone or noise stays within a few dB.
        var levelSpread: Double {
            let levels = voiced.map { blocks[$0].level }.sorted()
            guard levels.count >= 10 else { return 0 }
            return levels[levels.count * 9 / 10] - levels[levels.count / 10]
        }

        var description: String {
            "\(blocks.count) blocks, \(voiced.count) voiced, span \(span), level spread \(Int(levelSpread)) dB"
        }
    }

    /// `espeak-ng`'s path from `PATH`, or a failed test that says how to get it.
    static func espeakNG() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let found = path.split(separator: ":").map { "\($0)/espeak-ng" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
        return try #require(
            found,
            """
            espeak-ng is not installed: the IVR example's --say needs it (scripts/provision.sh installs it; apt-get \
            install espeak-ng)
            """
        )
    }

    /// The IVR example made its prompt from text with espeak-ng (`--say`): the engine calls
    /// it and hears speech for as long as the same text takes espeak-ng to say, silence
    /// after, and DTMF 1 still starts the echo afterwards.
    @Test("IVR example --say: the caller hears the espeak-ng prompt as speech, then silence, and DTMF works after it")
    func ivrExampleSays() async throws {
        let espeak = try Self.espeakNG()
        try await withTemporaryFolder { folder in
            let text = "Welcome to the voice menu. Press one to hear yourself, or zero for the desk."
            // The same text spoken here: how long the prompt is.
            let reference = folder.file("reference.wav")
            let synthesis = try PeerProcess(
                "espeak-ng", executable: espeak, arguments: ["-w", reference.path, text], folder: folder)
            #expect(try await synthesis.waitForExit(timeout: .seconds(20)) == 0, "\(synthesis.output)")
            let expected = SpeechProfile(try WAVAudio(contentsOf: reference))
            try #require(expected.span > .seconds(2), "reference: \(expected)")
            try await EngineHarness.run { h in
                let (ivr, call) = try await Self.callIVR(
                    h, "swiftpjsua-ivr-say", ["--say", text], listening: .seconds(20))
                let heard = try await h.engine.audioFrames(
                    from: call, format: AudioFrameFormat(sampleRate: 8000), buffer: .seconds(10))
                let frames = await Self.collect(heard, for: expected.span + .seconds(2))
                try await h.engine.stop(heard)
                let received = SpeechProfile(WAVAudio(sampleRate: 8000, samples: frames.flatMap(\.samples)))
                // Speech, as long as the reference (PCMU and the bridge's resampling change the
                // detail, not the length), rising and falling like speech.
                #expect(
                    received.voiced.count >= expected.voiced.count / 2, "received \(received); reference \(expected)")
                let difference = received.span - expected.span
                #expect(
                    difference > .milliseconds(-500) && difference < .milliseconds(500),
                    "received \(received); reference \(expected)")
                #expect(received.levelSpread >= 12, "a prompt of speech, not a tone: \(received)")
                // It starts within a second of the call's audio, and silence follows it.
                let firstVoiced = try #require(received.voiced.first, "\(received)")
                #expect(firstVoiced <= 50, "the prompt began \(firstVoiced * 20) ms into the call")
                let lastVoiced = try #require(received.voiced.last)
                let tail = received.blocks[min(received.blocks.count, lastVoiced + 10)...]
                #expect(
                    tail.count >= 40 && tail.allSatisfy { $0.level < -55 },
                    "silence after the prompt: \(tail.count) blocks")
                try? await ivr.waitForOutput(containing: "prompt done", timeout: .seconds(3))
                #expect(ivr.output.contains("prompt done"), "\(ivr.output)")

                // DTMF after the prompt: 1 starts the echo, and a tone written comes back.
                try await Self.expectIVREcho(call, of: ivr, h)
                try await h.hangUp(call)
                #expect(ivr.output.contains("digit 1") && ivr.output.contains("echo"), "\(ivr.output)")
            }
        }
    }
}
