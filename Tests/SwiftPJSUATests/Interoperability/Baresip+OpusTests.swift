import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

extension Baresip {
    /// baresip with opus first, then G.722 and G.711, so that it offers (and prefers) opus as a
    /// user who installs opus would set it up.
    static func start(folder: TemporaryFolder, commands: [String] = []) async throws -> Baresip {
        #expect(
            FileManager.default.isExecutableFile(atPath: executable), "baresip is not installed (scripts/provision.sh)")
        return try await start(
            folder: folder, codecs: ["opus", "g722", "g711"], rtpPorts: UInt16.random(in: 20...29) * 1000,
            commands: commands)
    }
}

extension EngineTests {
    /// Both directions of one call to or from baresip: the engine sees opus, baresip says it
    /// encodes and decodes opus, baresip's sine reaches the engine and the engine's tone
    /// reaches baresip.
    private func checkBaresipCall(_ call: Call, _ h: EngineHarness, _ peer: Baresip, folder: TemporaryFolder)
        async throws
    {
        try await h.log.first("confirmed") { $0.isState(.confirmed, of: call) }
        try await h.log.first("active audio") { $0.hasActiveAudio(call) }
        #expect(try await h.engine.callInfo(call).audioCodec == "opus/48000")
        let tone = try folder.toneFile("engine-tone.wav")
        try await h.engine.play(file: tone.path, into: call, loop: true)
        let heard = try await h.recordTone(
            call, to: folder.file("from-baresip.wav"), packets: 75, frequency: Baresip.toneFrequency)
        #expect(heard.detected(), "\(heard)")
        try await h.hangUp(call)
        try await peer.process.waitForOutput(containing: "terminated")
        let output = peer.process.output
        #expect(output.contains("Set audio encoder: opus 48000Hz 2ch"), "\(output)")
        #expect(output.contains("Set audio decoder: opus 48000Hz 2ch"), "\(output)")
        let decoded = ToneAnalysis(try peer.decodedAudio(), frequency: 1000)
        #expect(decoded.detected(), "\(decoded)")
    }

    @Test("baresip interop: the engine calls baresip, the call lands on opus both sides and tones cross both ways")
    func callsBaresipOnOpus() async throws {
        try await withTemporaryFolder { folder in
            let peer = try await Baresip.start(folder: folder)
            try await EngineHarness.run { h in
                let call = try await h.engine.makeCall(to: peer.uri, from: h.account)
                try await checkBaresipCall(call, h, peer, folder: folder)
            }
        }
    }

    @Test("baresip interop: baresip calls the engine, the call lands on opus both sides and tones cross both ways")
    func calledByBaresipOnOpus() async throws {
        try await EngineHarness.run { h in
            let peer = try await Baresip.start(folder: h.folder, commands: ["/dial \(h.uri("engine"))"])
            let event = try await h.log.first("baresip's INVITE") { $0.incomingCall != nil }
            let call = try #require(event.incomingCall)
            try await h.engine.answer(call)
            try await checkBaresipCall(call, h, peer, folder: h.folder)
        }
    }
}
