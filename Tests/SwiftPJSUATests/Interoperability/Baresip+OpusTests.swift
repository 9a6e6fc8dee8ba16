import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// baresip 1.0 (Debian's `baresip-core`) as a real peer: one local account that answers
/// by itself, a 600 Hz sine (`ausine`) as its microphone, and `sndfile` dumping what it
/// decodes to a WAV file. Its codec modules load opus first, then G.722 and G.711, so it
/// offers (and prefers) opus as a user who installs opus would set it up.
private struct Baresip {
    static let executable = "/usr/bin/baresip"
    static let toneFrequency = 600.0
    let process: PeerProcess
    let port: UInt16
    let folder: TemporaryFolder

    var uri: String { "sip:bob@127.0.0.1:\(port)" }

    static func start(folder: TemporaryFolder, commands: [String] = []) async throws -> Baresip {
        #expect(
            FileManager.default.isExecutableFile(atPath: executable), "baresip is not installed (scripts/provision.sh)")
        let port = FreePort.udp()
        let rtp = UInt16.random(in: 20...29) * 1000
        let config = """
            poll_method epoll
            sip_listen 127.0.0.1:\(port)
            audio_source ausine,\(Int(toneFrequency))
            audio_player aubridge,nowhere
            audio_alert aubridge,nowhere
            rtp_ports \(rtp)-\(rtp + 999)
            module_path /usr/lib/baresip/modules
            module opus.so
            module g722.so
            module g711.so
            module ausine.so
            module aubridge.so
            module sndfile.so
            module account.so
            module menu.so
            snd_path \(folder.url.path)

            """
        try config.write(to: folder.file("config"), atomically: true, encoding: .utf8)
        try "<sip:bob@127.0.0.1:\(port)>;regint=0;answermode=auto\n"
            .write(to: folder.file("accounts"), atomically: true, encoding: .utf8)
        let process = try PeerProcess(
            "baresip", executable: executable,
            arguments: ["-f", folder.url.path] + commands.flatMap { ["-e", $0] }, folder: folder, lifetimeSeconds: 60)
        let peer = Baresip(process: process, port: port, folder: folder)
        try await peer.waitForOutput("baresip is ready.")
        return peer
    }

    func waitForOutput(_ text: String, timeout: Duration = .seconds(10)) async throws {
        try await process.waitForOutput(containing: text, timeout: timeout)
    }

    /// What baresip decoded from the call, as `sndfile` dumped it.
    func decodedAudio() throws -> WAVAudio {
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter {
            $0.hasSuffix("-dec.wav")
        }
        let file = try #require(files.first, "no decode dump in \(folder.url.path)")
        return try WAVAudio(contentsOf: folder.file(file))
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
        try await peer.waitForOutput("terminated")
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
            defer { peer.process.stop() }
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
            defer { peer.process.stop() }
            let event = try await h.log.first("baresip's INVITE") { $0.incomingCall != nil }
            let call = try #require(event.incomingCall)
            try await h.engine.answer(call)
            try await checkBaresipCall(call, h, peer, folder: h.folder)
        }
    }
}
