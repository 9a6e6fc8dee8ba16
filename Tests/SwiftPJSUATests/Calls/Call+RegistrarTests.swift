import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Calls between users registered at Kamailio.
extension EngineTests {
    @Test(
        "Through Kamailio: the engine registers alice, swiftpjsua registers bob, alice calls bob and her tone arrives")
    func callBetweenRegisteredUsers() async throws {
        try await withTemporaryFolder { folder in
            let kamailio = try await Kamailio.start(folder: folder)
            let tone = try folder.toneFile(duration: .seconds(10))
            let recording = folder.file("bob-heard.wav")
            let bob = try await Self.registeredListener("bob", at: kamailio, record: recording, folder: folder)
            try await EngineHarness.run { h in
                let alice = try await h.registeredAccount(kamailio.account("alice"))
                // G.711: speex's decoder never settles on a pure tone when pjmedia's stream soft
                // start drops the first packet (it does when RTP beats the first bridge tick), so a
                // tone check over speex between two processes is a coin toss.
                try await h.engine.setCodecPriority("PCMU", 255)
                let call = try await h.engine.makeCall(to: kamailio.aor("bob"), from: alice)
                try await h.log.first("audio") { $0.hasActiveAudio(call) }
                try await h.engine.play(file: tone.path, into: call, loop: true)
                try await h.poll("1.5 s of RTP to bob") { try await $0.streamStatistics(call).packetsSent >= 75 }
                try await h.hangUp(call)
                #expect(h.log.states(of: call).contains(.confirmed))
            }
            // bob closes the recording when the call ends.
            try await bob.waitForOutput(containing: "DISCONNECTED")
            let analysis = ToneAnalysis(try WAVAudio(contentsOf: recording), frequency: 1000)
            #expect(analysis.detected(minimumDuration: .milliseconds(800)), "\(analysis)")
            let invites = kamailio.receivedRequests.filter { $0.method == "INVITE" }
            #expect(invites.contains { $0.user == "alice" }, "\(kamailio.receivedRequests)")
            #expect(bob.output.contains("incoming call"), "\(bob.output)")
        }
    }
}
