import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

extension EngineTests {
    @Test("CLI: swiftpjsua call --play stops sending the file while it holds the call (sendonly), as the C app does")
    func cliPlayStopsWhileHolding() async throws {
        try await withTemporaryFolder { folder in
            let tone = try folder.toneFile()
            try await EngineHarness.run { h in
                let cli = try PeerProcess(
                    "swiftpjsua-call", executable: Repository.tool.path,
                    arguments: [
                        "call", "--bind", "127.0.0.1", h.uri("cli"), "--play", tone.path, "--hold-after", "2",
                        "--hangup-after", "6",
                    ], folder: folder)
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
                let recorder = try await h.engine.record(file: recording.path, from: call)
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
}

extension EngineTests {
    @Test(
        """
        CLI: swiftpjsua call --header --dtmf --transfer-to --hold-after does each, and prints DTMF, hold and transfer \
        events
        """
    )
    func cliCallFeatures() async throws {
        try await EngineHarness.run { h in
            try await h.engine.setTransferRequestHandler { _ in .reject(statusCode: 603) }
            let cli = try PeerProcess(
                "swiftpjsua-call", executable: Repository.tool.path,
                arguments: [
                    "call", "--bind", "127.0.0.1", h.uri("cli"), "--header", "X-From-Cli: yes", "--dtmf", "42#",
                    "--transfer-to", "sip:elsewhere@127.0.0.1:5999", "--hold-after", "0.3", "--hangup-after", "2.5",
                ], folder: h.folder)
            let event = try await h.log.first("incoming from the CLI") { $0.incomingCall != nil }
            guard case .incomingCall(let incoming) = event else { return }
            let call = incoming.call
            let headers = incoming.headers
            #expect(headers.value(of: "X-From-Cli") == "yes")
            try await h.engine.answer(call)
            try await h.log.wait("3 digits, a REFER and a remote hold") { events in
                digits(in: events, of: call).count >= 3
                    && events.contains { $0.isTransferRequest(of: call, answered: 603) }
                    && events.contains { $0.hasAudio(.remoteHold, call) }
            }
            #expect(String(h.log.digits(of: call).map(\.digit)) == "42#")
            try await h.engine.sendDTMF(call, digits: "7", method: .sipInfo)
            try await h.log.first("the CLI's BYE", timeout: .seconds(5)) { $0.isState(.disconnected, of: call) }
            #expect(try await cli.waitForExit(timeout: .seconds(5)) == 0, "\(cli.output)")
            let output = cli.output
            #expect(output.contains("dtmf call") && output.contains(" 7 sipInfo"), "\(output)")
            #expect(output.contains("transfer call") && output.contains("603"), "\(output)")
            #expect(output.contains("audio localHold send"), "\(output)")
        }
    }
}

extension EngineTests {
    @Test("CLI: an invalid --dtmf is a usage error (exit 64) before any call is placed")
    func cliInvalidDTMFIsUsageError() async throws {
        try await withTemporaryFolder { folder in
            let cli = try PeerProcess(
                "swiftpjsua-bad-dtmf", executable: Repository.tool.path,
                arguments: ["call", "--bind", "127.0.0.1", "sip:nobody@127.0.0.1:9", "--dtmf", "12x"], folder: folder)
            #expect(try await cli.waitForExit(timeout: .seconds(10)) == 64, "\(cli.output)")
            #expect(!cli.output.contains("calling"), "\(cli.output)")
        }
    }
}
