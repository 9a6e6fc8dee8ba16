import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

extension EngineTests {
    /// The engine calls the IVR example as a caller would: it hears the prompt, presses 1
    /// and hears its own tone come back, then presses 0 and is transferred (REFER) to a
    /// desk address on itself, which it answers; the IVR then hangs up the first leg.
    @Test("IVR example: the caller hears the prompt, DTMF 1 echoes, DTMF 0 transfers by REFER")
    func ivrExample() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let prompt = folder.file("prompt.wav")
        try WAVAudio.tone(frequency: 700, duration: .seconds(2), amplitude: 0.2).write(to: prompt)
        try await EngineHarness.run { h in
            try await h.engine.setCodecPriority("PCMU", 255)
            let port = FreePort.udp()
            let desk = h.uri("desk")
            let ivr = try PeerProcess(
                "swiftpjsua-ivr", executable: Repository.executable("swiftpjsua-ivr").path,
                arguments: ["--port", String(port), "--prompt", prompt.path, "--transfer-to", desk], folder: folder)
            defer { ivr.stop() }
            let deadline = ContinuousClock.now + .seconds(10)
            while !FreePort.isUDPBound(port) {
                try #require(ContinuousClock.now < deadline && ivr.exitStatus == nil, "ivr did not bind: \(ivr.output)")
                try await Task.sleep(for: .milliseconds(20))
            }
            let call = try await h.engine.makeCall(to: "sip:ivr@127.0.0.1:\(port)", from: h.account)
            try await h.log.first("audio active") { $0.hasActiveAudio(call) }
            let format = AudioFrameFormat(sampleRate: 8000)
            let heard = try await h.engine.audioFrames(of: call, format: format)
            let promptHeard = Self.analysis(of: await Self.collect(heard, for: .milliseconds(1500)), frequency: 700)
            #expect(promptHeard.detected(minimumDuration: .milliseconds(800)), "prompt: \(promptHeard)")
            try await h.engine.stop(heard)

            try await h.engine.sendDTMF(call, digits: "1")
            try await Task.sleep(for: .milliseconds(500))
            let returned = try await h.engine.audioFrames(of: call, format: format)
            let writer = try await h.engine.audioFrameWriter(for: call, format: format)
            let listening = Task { await Self.collect(returned, for: .seconds(2)) }
            try await writer.write(WAVAudio.tone(frequency: 1000, duration: .seconds(2), sampleRate: 8000, amplitude: 0.2).samples)
            let echo = Self.analysis(of: Array(await listening.value.dropFirst(25)), frequency: 1000)
            #expect(echo.detected(minimumDuration: .seconds(1)), "echo: \(echo)")
            try await h.engine.stop(writer)

            try await h.engine.sendDTMF(call, digits: "0")
            let refer = try await h.log.first("REFER from the IVR") {
                if case .transferRequest(let answer) = $0, answer.call == call, answer.statusCode == 202 { answer.target.contains("desk") } else { false }
            }
            #expect(refer.call == call)
            let incoming = try await h.log.first("the transferred call at the desk") {
                if case .incomingCall(let incoming) = $0 {
                    incoming.headers.contains { $0.name.lowercased() == "to" && $0.value.contains("desk") }
                } else { false }
            }
            try await h.engine.answer(try #require(incoming.incomingCall))
            try await h.log.first("the IVR hangs up once the transfer is done") { $0.isState(.disconnected, of: call) }
            await h.engine.hangupAll()
            let deadlineOutput = ContinuousClock.now + .seconds(3)
            while !ivr.output.contains("transfer done"), ContinuousClock.now < deadlineOutput {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(ivr.output.contains("digit 1") && ivr.output.contains("echo") && ivr.output.contains("transfer done"), "\(ivr.output)")
        }
    }
}

extension EngineTests {
    /// An IVR that cannot start says why and exits with a status, instead of trapping on an
    /// error thrown at top level; a prompt file it cannot read is refused before it answers
    /// anyone (it would otherwise answer every caller and hang up at once).
    @Test("IVR example: a missing prompt file and a transport that cannot bind exit with a message, not a crash")
    func ivrExampleRefusesBadSetup() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let prompt = folder.file("prompt.wav")
        try WAVAudio.tone(frequency: 700, duration: .milliseconds(200), amplitude: 0.2).write(to: prompt)
        let cases: [(name: String, arguments: [String], status: Int32, says: String)] = [
            ("ivr-no-prompt", ["--port", String(FreePort.udp()), "--prompt", folder.file("missing.wav").path],
             64, "missing.wav"),
            ("ivr-bad-bind", ["--port", String(FreePort.udp()), "--bind", "999.1.1.1", "--prompt", prompt.path],
             1, "pjsua_transport_create"),
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
