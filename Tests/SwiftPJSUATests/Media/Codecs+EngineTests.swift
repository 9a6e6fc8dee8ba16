import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// The payload types of an SDP's audio `m=` line, in order, and the rtpmap names of them.
private struct AudioOffer {
    var payloads: [String]
    var names: [String: String]

    init(_ lines: [String]) throws {
        let mLine = try #require(lines.first { $0.hasPrefix("m=audio") }, "no m=audio in \(lines)")
        payloads = mLine.split(separator: " ").dropFirst(3).map(String.init)
        names = [:]
        for line in lines where line.hasPrefix("a=rtpmap:") {
            let parts = line.dropFirst("a=rtpmap:".count).split(separator: " ", maxSplits: 1)
            if parts.count == 2 { names[String(parts[0])] = String(parts[1]).lowercased() }
        }
        names["0"] = names["0"] ?? "pcmu/8000"
        names["8"] = names["8"] ?? "pcma/8000"
        names["9"] = names["9"] ?? "g722/8000"
    }

    /// The codec names in offer order, for example `["opus/48000/2", "g722/8000", …]`.
    var codecNames: [String] { payloads.compactMap { names[$0] }.filter { !$0.hasPrefix("telephone-event") } }

    /// The local RTP port.
    static func port(_ lines: [String]) -> Int? {
        lines.first { $0.hasPrefix("m=audio") }.flatMap { Int($0.split(separator: " ")[1]) }
    }
}

extension EngineTests {
    @Test("Codec order: opus, G.722, PCMU, PCMA lead by default, and a self-call lands on opus")
    func defaultCodecOrderLandsOnOpus() async throws {
        try await EngineHarness.run { h in
            let codecs = try await h.engine.codecs()
            let leading = codecs.prefix(4).map { $0.id.split(separator: "/").first.map(String.init) ?? "" }
            #expect(leading == ["opus", "G722", "PCMU", "PCMA"], "\(codecs)")
            let (caller, callee) = try await h.selfCall()
            #expect(try await h.engine.callInfo(caller).audioCodec == "opus/48000")
            #expect(try await h.engine.callInfo(callee).audioCodec == "opus/48000")
            try await h.poll("RTP both ways") { engine in
                let callerPackets = try await engine.streamStatistics(caller).packetsReceived
                let calleePackets = try await engine.streamStatistics(callee).packetsReceived
                return callerPackets > 20 && calleePackets > 20
            }
            try await h.hangUp(caller, waitingFor: callee)
        }
    }

    @Test(
        "Codec order: an empty list keeps pjmedia's order; a custom order leads; bad orders throw invalidConfiguration")
    func codecOrderConfiguration() async throws {
        try await EngineHarness.run(media: MediaConfiguration(soundDevice: .null, codecOrder: [])) { h in
            let codecs = try await h.engine.codecs()
            let first = try #require(codecs.first)
            #expect(first.id.hasPrefix("speex/16000"), "\(codecs)")
        }
        try await EngineHarness.run(media: MediaConfiguration(soundDevice: .null, codecOrder: ["pcma", "GSM"])) { h in
            let ids = try await h.engine.codecs().map(\.id)
            #expect(Array(ids.prefix(2)) == ["PCMA/8000/1", "GSM/8000/1"], "\(ids)")
        }
        for order in [
            ["nosuchcodec"], ["PCMU", ""], ["PCMU", "pcmu"], ["PC MU"], Array(repeating: "PCMU", count: 33),
        ] {
            let engine = PJSUA()
            var configuration = Configuration(transports: loopbackUDP, media: MediaConfiguration(soundDevice: .null))
            configuration.media.codecOrder = order
            await #expect {
                try await engine.start(configuration)
            } throws: { error in
                guard case .invalidConfiguration(let text) = error as? PJSUAUsageError else { return false }
                return text.contains("codecOrder")
            }
            await engine.shutdown()
        }
    }

    @Test("Codec order: the INVITE offers opus first; a sipp UAS answering PCMU only still gets a PCMU call")
    func defaultOrderAgainstPCMUOnlyPeer() async throws {
        try await withSipp(scenario: "uas") { sipp in
            try await EngineHarness.run { h in
                let call = try await h.confirmedCall(to: sipp.uri)
                try await h.log.first("active audio") { $0.hasActiveAudio(call) }
                #expect(try await h.engine.callInfo(call).audioCodec == "PCMU/8000")
                try await h.hangUp(call)
            }
            _ = try await sipp.finish()
            let invite = try #require(sipp.received("INVITE"))
            let names = try AudioOffer(invite.lines).codecNames
            #expect(names.first == "opus/48000/2", "\(names)")
            #expect(
                Array(names.prefix(4).map { $0.split(separator: "/")[0] }) == ["opus", "g722", "pcmu", "pcma"],
                "\(names)")
        }
    }

    @Test(
        """
        CLI: swiftpjsua call --codecs PCMU,opus --rtp-ports A-B puts PCMU then opus first in the INVITE, on a port of \
        A-B
        """
    )
    func cliCodecsAndRTPPorts() async throws {
        try await withTemporaryFolder { folder in
            let sipp = try await Sipp.start(scenario: "uas", folder: folder)
            let low = UInt16.random(in: 15...19) * 1000
            let cli = try PeerProcess(
                "swiftpjsua-call", executable: Repository.tool.path,
                arguments: [
                    "call", "--bind", "127.0.0.1", sipp.uri, "--codecs", "PCMU,opus",
                    "--rtp-ports", "\(low)-\(low + 199)",
                    "--hangup-after",
                    "0.5",
                ], folder: folder)
            #expect(try await cli.waitForExit(timeout: .seconds(15)) == 0, "\(cli.output)")
            _ = try await sipp.finish()
            let invite = try #require(sipp.received("INVITE"))
            let names = try AudioOffer(invite.lines).codecNames
            #expect(Array(names.prefix(2)) == ["pcmu/8000", "opus/48000/2"], "\(names)")
            let port = try #require(AudioOffer.port(invite.lines))
            #expect((Int(low)...Int(low) + 199).contains(port), "\(port)")

            let bad = try PeerProcess(
                "swiftpjsua-bad", executable: Repository.tool.path,
                arguments: ["call", "--bind", "127.0.0.1", sipp.uri, "--rtp-ports", "5000"], folder: folder)
            #expect(try await bad.waitForExit(timeout: .seconds(10)) == 64, "\(bad.output)")
        }
    }

    @Test("RTP ports: with 4000–4199 held by another program, the first call on the default range still gets media")
    func rtpPortsHeldByAnotherProgram() async throws {
        let held = HeldPorts(4000...4199)
        defer { held.close() }
        try await EngineHarness.run(rtpPorts: MediaConfiguration().rtpPorts) { h in
            let (caller, callee) = try await h.selfCall()
            try await h.poll("RTP both ways") { engine in
                let callerPackets = try await engine.streamStatistics(caller).packetsReceived
                let calleePackets = try await engine.streamStatistics(callee).packetsReceived
                return callerPackets > 20 && calleePackets > 20
            }
            try await h.hangUp(caller, waitingFor: callee)
        }
    }

    @Test("RTP ports: two swiftpjsua processes on one host, with 4000–4199 held, both get media on their first call")
    func twoCLIProcessesBothGetMedia() async throws {
        let held = HeldPorts(4000...4199)
        defer { held.close() }
        try await withTemporaryFolder { folder in
            let tone = try folder.toneFile(duration: .seconds(5))
            let port = FreePort.udp()
            let listener = try await PeerProcess.swiftpjsua(
                "swiftpjsua-listen",
                [
                    "listen", "--bind", "127.0.0.1", "--port", String(port), "--play", tone.path,
                    "--record", folder.file("listener.wav").path,
                ], folder: folder)
            let caller = try PeerProcess(
                "swiftpjsua-call", executable: Repository.tool.path,
                arguments: [
                    "call", "--bind", "127.0.0.1", "sip:cli@127.0.0.1:\(port)", "--port", "0", "--play", tone.path,
                    "--record",
                    folder.file("caller.wav").path, "--hangup-after", "2",
                ], folder: folder)
            #expect(try await caller.waitForExit(timeout: .seconds(15)) == 0, "\(caller.output)")
            // The listener closes its recording when the call ends.
            try? await listener.waitForOutput(containing: "DISCONNECTED", timeout: .seconds(5))
            listener.stop()
            for name in ["caller.wav", "listener.wav"] {
                let analysis = ToneAnalysis(try WAVAudio(contentsOf: folder.file(name)), frequency: 1000)
                #expect(analysis.detected(), "\(name): \(analysis)")
            }
        }
    }
}

extension EngineTests {
    @Test("Codecs: listed with priorities; the top priority is negotiated, a disabled one is not offered")
    func codecPriorities() async throws {
        try await withSipp(scenario: "uas") { sipp in
            try await EngineHarness.run { h in
                let codecs = try await h.engine.codecs()
                let ids = codecs.map(\.id)
                #expect(ids.contains("PCMU/8000/1") && ids.contains("PCMA/8000/1"), "\(codecs)")
                #expect(codecs.filter { $0.id.hasPrefix("PCM") }.allSatisfy { $0.isEnabled }, "\(codecs)")
                #expect(codecs.map(\.priority) == codecs.map(\.priority).sorted(by: >))
                try await h.engine.setCodecPriority("PCMA", 255)
                #expect(try await h.engine.codecs().first?.id == "PCMA/8000/1")
                let (caller, callee) = try await h.selfCall()
                #expect(try await h.engine.callInfo(caller).audioCodec == "PCMA/8000")
                try await h.hangUp(caller, waitingFor: callee)

                // Disable PCMA: sipp's INVITE carries no payload type 8 and the top is PCMU (0).
                try await h.engine.setCodecPriority("PCMA", 0)
                try await h.engine.setCodecPriority("PCMU", 254)
                #expect(try await h.engine.codecs().first { $0.id == "PCMA/8000/1" }?.isEnabled == false)
                await #expect(throws: PJSUAError.self) { try await h.engine.setCodecPriority("NOPE", 1) }
                let call = try await h.confirmedCall(to: sipp.uri)
                #expect(try await h.engine.callInfo(call).audioCodec == "PCMU/8000")
                try await h.hangUp(call)
            }
            _ = try await sipp.finish()
            let invite = try #require(sipp.received("INVITE"))
            let mLine = try #require(invite.lines.first { $0.hasPrefix("m=audio") })
            let payloads = mLine.split(separator: " ").dropFirst(3)
            #expect(payloads.first == "0", "\(mLine)")
            #expect(!payloads.contains("8"), "\(mLine)")
        }
    }

    @Test(
        "Each codec of the pjproject build negotiates when put first, and carries a tone",
        arguments: ["opus/48000", "PCMU/8000", "PCMA/8000", "G722/16000", "GSM/8000", "speex/16000", "speex/8000"])
    func everyBuiltCodecNegotiates(codec: String) async throws {
        try await withTemporaryFolder { folder in
            let tone = try folder.toneFile(duration: .seconds(5))
            let recording = folder.file("heard.wav")
            try await EngineHarness.run { h in
                let available = try await h.engine.codecs().map(\.id)
                let id = try #require(available.first { $0.hasPrefix(codec + "/") }, "\(codec) not in \(available)")
                try await h.engine.setCodecPriority(id, 255)
                let (caller, callee) = try await h.selfCall()
                #expect(try await h.engine.callInfo(caller).audioCodec == codec)
                #expect(try await h.engine.callInfo(callee).audioCodec == codec)
                // In one process both legs share the bridge clock: the caller's tone reaches the callee.
                try await h.engine.play(file: tone.path, into: caller, loop: true)
                try await h.engine.record(file: recording.path, from: callee)
                try await h.poll("1 s of RTP") { try await $0.streamStatistics(callee).packetsReceived >= 60 }
                try await h.hangUp(caller, waitingFor: callee)
            }
            let analysis = ToneAnalysis(try WAVAudio(contentsOf: recording), frequency: 1000)
            #expect(analysis.detected(minimumDuration: .milliseconds(400)), "\(codec): \(analysis)")
        }
    }
}
