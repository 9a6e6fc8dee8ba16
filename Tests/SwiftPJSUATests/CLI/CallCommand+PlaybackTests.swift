import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

extension EngineTests {
    @Test("CLI: swiftpjsua call --play stops sending the file while it holds the call (sendonly), as the C app does")
    func cliPlayStopsWhileHolding() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let tone = folder.file("tone.wav")
        try WAVAudio.tone(frequency: 1000, duration: .seconds(3)).write(to: tone)
        try await EngineHarness.run { h in
            let cli = try PeerProcess(
                "swiftpjsua-call", executable: Repository.tool.path,
                arguments: [
                    "call", "--bind", "127.0.0.1", h.uri("cli"), "--play", tone.path, "--hold-after", "2",
                    "--hangup-after", "6",
                ], folder: folder)
            defer { cli.stop() }
            let event = try await h.log.first("incoming from the CLI") { $0.incomingCall != nil }
            let call = try #require(event.incomingCall)
            try await h.engine.answer(call)
            try await h.log.first("active audio") { $0.hasActiveAudio(call) }
            // Before the hold: the file's tone arrives.
            let before = try await h.recordTone(call, to: folder.file("before.wav"), packets: 40)
            #expect(before.detected(), "\(before)")
            // The CLI holds (a sendonly offer: the engine's leg is remoteHold): no tone from then on.
            try await h.log.first("held by the CLI", timeout: .seconds(5)) { $0.hasAudio(.remoteHold, call) }
            let recording = folder.file("held.wav")
            let recorder = try await h.engine.record(call, to: recording.path)
            try await Task.sleep(for: .seconds(1))  // the measured window, not a synchronisation
            try await h.engine.stop(recorder)
            let held = ToneAnalysis(try WAVAudio(contentsOf: recording), frequency: 1000)
            #expect(!held.detected(), "\(held)")
            try await h.log.first("the CLI's BYE", timeout: .seconds(8)) { $0.isState(.disconnected, of: call) }
            #expect(try await cli.waitForExit(timeout: .seconds(5)) == 0, "\(cli.output)")
            #expect(cli.output.contains("audio localHold"), "\(cli.output)")
        }
    }
}
