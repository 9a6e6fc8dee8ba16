import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

// Issue 16, SRTP: encrypted media between the engine and a `swiftpjsua` process, and with
// baresip, with SDES and DTLS-SRTP keying; a capture of the RTP on `lo` shows whether the
// payload on the wire is the PCMU tone (few distinct byte values) or ciphertext.

/// A capture of the UDP traffic on `lo` to and from a port range, by tshark (as root), in
/// classic pcap format so that it can be read here without tshark.
private struct RTPCapture {
    let process: PeerProcess
    let file: URL

    /// Starts tshark and waits until it captures.
    static func start(ports: ClosedRange<UInt16>, folder: TemporaryFolder) async throws -> RTPCapture {
        let file = folder.file("rtp-\(ports.lowerBound).pcap")
        let process = try PeerProcess(
            "tshark-\(ports.lowerBound)", executable: "/usr/bin/tshark",
            arguments: [
                "-i", "lo", "-f", "udp portrange \(ports.lowerBound)-\(ports.upperBound)", "-F", "pcap", "-w",
                file.path,
            ],
            folder: folder, lifetimeSeconds: 120)
        do {
            try await process.waitForOutput(containing: "Capturing on", timeout: .seconds(15))
        } catch {
            process.stop()
            throw error
        }
        return RTPCapture(process: process, file: file)
    }

    /// Stops the capture (tshark writes out what it has on SIGTERM).
    func stop() { process.stop() }

    /// The RTP packets of payload type 0 (PCMU) in the capture: their payloads, without the
    /// 12-byte header (SRTP leaves the header in the clear).
    func pcmuPayloads() throws -> [[UInt8]] {
        let bytes = [UInt8](try Data(contentsOf: file))
        func u32(_ at: Int, littleEndian: Bool) -> Int {
            let b = bytes[at..<at + 4].map(Int.init)
            return littleEndian
                ? b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24 : b[3] | b[2] << 8 | b[1] << 16 | b[0] << 24
        }
        guard bytes.count >= 24 else { return [] }
        let little = bytes[0] == 0xD4 && bytes[1] == 0xC3
        let linkType = u32(20, littleEndian: little)
        var payloads: [[UInt8]] = []
        var offset = 24
        while offset + 16 <= bytes.count {
            let length = u32(offset + 8, littleEndian: little)
            let start = offset + 16
            offset = start + length
            guard offset <= bytes.count else { break }
            // Ethernet (1, what tshark writes for lo) or Linux cooked capture (113).
            var ip = start + (linkType == 113 ? 16 : 14)
            guard ip + 20 <= offset, bytes[ip] >> 4 == 4, bytes[ip + 9] == 17 else { continue }
            ip += Int(bytes[ip] & 0x0F) * 4
            let rtp = ip + 8
            guard rtp + 12 + 160 <= offset, bytes[rtp] >> 6 == 2, bytes[rtp + 1] & 0x7F == 0 else { continue }
            payloads.append(Array(bytes[(rtp + 12)..<(rtp + 12 + 160)]))
        }
        return payloads
    }
}

/// Distinct byte values in each payload's first 160 bytes, median over the packets. A PCMU
/// tone repeats a few codewords (a 1 kHz tone at 8 kHz: 8 samples a period, so about 8
/// values; 600 Hz: about 20); 160 random bytes have about 119 distinct values.
private func medianDistinctBytes(_ payloads: [[UInt8]]) -> Int {
    let counts = payloads.map { Set($0).count }.sorted()
    return counts.isEmpty ? 0 : counts[counts.count / 2]
}

private let pcmuOnly: MediaConfiguration = {
    var media = MediaConfiguration(soundDevice: .null)
    media.codecOrder = ["PCMU"]
    return media
}()

/// The end of the CLI's media line for a stream with SRTP keyed by `keying`.
private func srtpLine(_ keying: SRTPConfiguration.Keying) -> String { "/\(keying.rawValue)" }

extension EngineTests {
    /// The engine and a `swiftpjsua` far end, both with `engineSRTP`/`farSRTP`: the engine
    /// plays 1 kHz and hears the far end's 600 Hz; the far end records the 1 kHz. Captures
    /// the engine's RTP ports throughout and returns the PCMU payloads seen on the wire, with
    /// the call's SRTP as the engine's CallInfo and media event reported it.
    private func farEndCall(
        engineCalls: Bool, engineSRTP: SRTPConfiguration, farSRTP: String?, folder: TemporaryFolder
    ) async throws -> (payloads: [[UInt8]], info: SRTPSession?, event: SRTPSession?, farOutput: String) {
        let farTone = try folder.toneFile("far-600.wav", frequency: 600, sampleRate: 8000)
        let engineTone = try folder.toneFile("engine-1000.wav", sampleRate: 8000)
        let farRecording = folder.file("far-heard.wav")
        let rtpPorts = EngineHarness.randomRTPPorts()
        let capture = try await RTPCapture.start(ports: rtpPorts, folder: folder)
        defer { capture.stop() }
        let srtpArguments = farSRTP.map { ["--srtp", $0] } ?? []
        let common = [
            "--codecs", "PCMU", "--play", farTone.path, "--record", farRecording.path, "--rtp-ports", "30000-31999",
        ]
        var far: PeerProcess?
        defer { far?.stop() }
        let farPort = FreePort.udp()
        if engineCalls {
            far = try await PeerProcess.swiftpjsua(
                "swiftpjsua-far", ["listen", "--port", String(farPort)] + srtpArguments + common, folder: folder)
        }
        let result = try await EngineHarness.run(media: pcmuOnly, rtpPorts: rtpPorts, srtp: engineSRTP) { h in
            let call: Call
            if engineCalls {
                call = try await h.engine.makeCall(to: "sip:far@127.0.0.1:\(farPort)", from: h.account)
            } else {
                far = try await PeerProcess.swiftpjsua(
                    "swiftpjsua-far",
                    ["call", h.uri(), "--port", String(farPort), "--hangup-after", "4"] + srtpArguments
                        + common, folder: folder)
                let incoming = try await h.log.first("the far end's INVITE", timeout: .seconds(15)) {
                    $0.incomingCall != nil
                }
                call = try #require(incoming.incomingCall)
                try await h.engine.answer(call)
            }
            try await h.log.first("confirmed", timeout: .seconds(15)) { $0.isState(.confirmed, of: call) }
            let media = try await h.log.first("active audio", timeout: .seconds(15)) { $0.hasActiveAudio(call) }
            try await h.engine.play(file: engineTone.path, into: call, loop: true)
            let heard = try await h.recordTone(call, to: folder.file("engine-heard.wav"), packets: 100, frequency: 600)
            #expect(heard.detected(), "the far end's 600 Hz at the engine: \(heard)")
            let info = try await h.engine.callInfo(call).media.first?.srtp
            var event: SRTPSession?
            if case .callMediaState(let change) = media { event = change.media.first?.srtp }
            if engineCalls {
                try await h.engine.hangup(call)
            }
            try await h.log.first("ended", timeout: .seconds(15)) { $0.isState(.disconnected, of: call) }
            return (info, event)
        }
        let farEnd = try #require(far)
        try await farEnd.waitForOutput(containing: "DISCONNECTED", timeout: .seconds(10))
        if engineCalls { farEnd.stop() } else { try await farEnd.waitForExit() }
        capture.stop()
        let decoded = ToneAnalysis(try WAVAudio(contentsOf: farRecording), frequency: 1000)
        #expect(decoded.detected(), "the engine's 1 kHz at the far end: \(decoded)")
        return (try capture.pcmuPayloads(), result.0, result.1, farEnd.output)
    }

    @Test("SRTP: SDES between the engine (answering) and a swiftpjsua caller: tones both ways, ciphertext on the wire")
    func srtpSDESEngineToEngine() async throws {
        try await withTemporaryFolder { folder in
            // The engine answers an RTP/SAVP offer with a=crypto (refused 488 before SRTP existed).
            let call = try await farEndCall(
                engineCalls: false, engineSRTP: .mandatory(keying: [.sdes]), farSRTP: "mandatory,sdes", folder: folder)
            let session = try #require(call.info, "no SRTP session in CallInfo")
            #expect(session.keying == .sdes)
            #expect(SRTPConfiguration.availableCryptoSuites.contains(session.cryptoSuite ?? "none"), "\(session)")
            #expect(call.event == session, "the media event's SRTP: \(String(describing: call.event))")
            #expect(
                call.farOutput.contains("srtp \(session.cryptoSuite ?? "none")\(srtpLine(.sdes))"), "\(call.farOutput)")
            #expect(call.payloads.count >= 100, "\(call.payloads.count) PCMU packets captured")
            #expect(
                medianDistinctBytes(call.payloads) >= 90, "median distinct bytes \(medianDistinctBytes(call.payloads))")
        }
    }

    @Test(
        "SRTP: DTLS-SRTP from the engine to a swiftpjsua listener: tones both ways, ciphertext on the wire"
    )
    func srtpDTLSEngineToEngine() async throws {
        try await withTemporaryFolder { folder in
            let call = try await farEndCall(
                engineCalls: true, engineSRTP: .mandatory(keying: [.dtlsSRTP]), farSRTP: "mandatory,dtls",
                folder: folder)
            let session = try #require(call.info, "no SRTP session in CallInfo")
            #expect(session.keying == .dtlsSRTP)
            #expect(session.isActive, "\(session)")
            // The media event comes when the SDP is negotiated, usually before the handshake ends.
            #expect(call.event?.keying == .dtlsSRTP, "the media event's SRTP: \(String(describing: call.event))")
            #expect(call.farOutput.contains(srtpLine(.dtlsSRTP)), "\(call.farOutput)")
            #expect(call.payloads.count >= 100, "\(call.payloads.count) PCMU packets captured")
            #expect(
                medianDistinctBytes(call.payloads) >= 90, "median distinct bytes \(medianDistinctBytes(call.payloads))")
        }
    }

    @Test("SRTP: the same call without SRTP puts the PCMU tone on the wire in the clear (the capture's control)")
    func srtpPlainControlShowsPlaintext() async throws {
        try await withTemporaryFolder { folder in
            let call = try await farEndCall(engineCalls: true, engineSRTP: .disabled, farSRTP: nil, folder: folder)
            #expect(call.info == nil)
            #expect(call.payloads.count >= 100, "\(call.payloads.count) PCMU packets captured")
            #expect(
                medianDistinctBytes(call.payloads) <= 40, "median distinct bytes \(medianDistinctBytes(call.payloads))")
        }
    }

    @Test("SRTP: optional SRTP calling a plain peer falls back to RTP, audio flows both ways")
    func srtpOptionalFallsBackToRTP() async throws {
        try await withTemporaryFolder { folder in
            let call = try await farEndCall(
                engineCalls: true, engineSRTP: .optional(keying: [.sdes]), farSRTP: nil, folder: folder)
            #expect(call.info == nil, "optional SRTP against a plain peer: \(String(describing: call.info))")
            #expect(call.event == nil)
            #expect(!call.farOutput.contains(" srtp "), "\(call.farOutput)")
            #expect(
                medianDistinctBytes(call.payloads) <= 40, "median distinct bytes \(medianDistinctBytes(call.payloads))")
        }
    }

    @Test("SRTP: mandatory SRTP calling a plain peer ends once with 488; a plain offer to it is refused with 488")
    func srtpMandatoryAgainstPlainPeer() async throws {
        try await withTemporaryFolder { folder in
            let farPort = FreePort.udp()
            _ = try await PeerProcess.swiftpjsua(
                "swiftpjsua-plain", ["listen", "--port", String(farPort)], folder: folder)
            try await EngineHarness.run(srtp: .mandatory(keying: [.sdes])) { h in
                // Out: the plain peer refuses the RTP/SAVP offer.
                let outgoing = try await h.engine.placeCall(to: "sip:plain@127.0.0.1:\(farPort)", from: h.account)
                var states: [CallStateChange] = []
                for await event in outgoing.events {
                    guard case .callState(let change) = event else { continue }
                    states.append(change)
                    if change.state.isTerminal { break }
                }
                let end = try #require(states.last)
                #expect(end.state == .disconnected && end.statusCode == 488, "\(states)")
                #expect(states.filter { $0.state.isTerminal }.count == 1, "\(states)")
                // In: a plain RTP/AVP offer gets 488 from the engine, and no call surfaces.
                let caller = try PeerProcess(
                    "swiftpjsua-plain-caller", executable: Repository.tool.path,
                    arguments: ["call", h.uri(), "--port", String(FreePort.udp())], folder: folder)
                let status = try await caller.waitForExit(timeout: .seconds(20))
                #expect(status != 0)
                #expect(caller.output.contains("DISCONNECTED 488"), "\(caller.output)")
                let terminal = h.log.events.filter {
                    if case .callState(let change) = $0 {
                        return change.state.isTerminal && change.call == outgoing.call
                    }
                    return false
                }
                #expect(terminal.count == 1, "terminal events of the outgoing call: \(terminal)")
                #expect(!h.log.events.contains { $0.incomingCall != nil }, "\(h.log.events)")
            }
        }
    }

    @Test("SRTP: a keying this pjproject lacks, an unknown suite or an empty keying list is a usage error")
    func srtpConfigurationValidation() async throws {
        try await EngineHarness.run { h in
            var config = AccountConfiguration(identity: "sip:alice@127.0.0.1")
            config.registersOnAdd = false
            config.srtp = SRTPConfiguration(mode: .mandatory, keying: [])
            await #expect(throws: PJSUAUsageError.self) { try await h.engine.addAccount(config) }
            config.srtp = SRTPConfiguration(mode: .optional, cryptoSuites: ["ROT13_HMAC"])
            await #expect(throws: PJSUAUsageError.self) { try await h.engine.addAccount(config) }
            config.srtp = SRTPConfiguration(mode: .optional, keying: [.sdes, .sdes])
            await #expect(throws: PJSUAUsageError.self) { try await h.engine.addLocalAccount(srtp: config.srtp) }
            #expect(SRTPConfiguration.availableKeying.contains(.sdes))
            #expect(SRTPConfiguration.availableKeying.contains(.dtlsSRTP), "built without PJMEDIA_SRTP_HAS_DTLS")
            #expect(SRTPConfiguration.availableCryptoSuites.contains("AES_CM_128_HMAC_SHA1_80"))
        }
    }
}

/// baresip 1.0 with its SRTP modules: `srtp` (SDES, `mediaenc=srtp-mand`: RTP/SAVP) and
/// `dtls_srtp` (`mediaenc=dtls_srtp`: UDP/TLS/RTP/SAVP); opus alone (`ausine` runs at 48 kHz
/// only, and a one-codec answer spares pjsua's codec-locking re-INVITE, which restarts
/// baresip's DTLS), a 600 Hz `ausine` as its microphone, and `sndfile` dumping what it decodes.
extension Baresip {
    static func start(mediaenc: String, folder: TemporaryFolder, commands: [String] = []) async throws -> Baresip {
        try await start(
            folder: folder,
            codecs: [
                "opus"
            ], modules: ["srtp", "dtls_srtp"], rtpPorts: UInt16.random(in: 30...39) * 1000,
            accountParameters: ";mediaenc=\(mediaenc)", commands: commands)
    }
}

extension EngineTests {
    private func baresipSRTPCall(keying: SRTPConfiguration.Keying, engineCalls: Bool) async throws {
        try await withTemporaryFolder { folder in
            let mediaenc = keying == .sdes ? "srtp-mand" : "dtls_srtp"
            let tone = try folder.toneFile("engine-1000.wav")
            try await EngineHarness.run(srtp: .mandatory(keying: [keying])) { h in
                let peer: Baresip
                let call: Call
                if engineCalls {
                    peer = try await Baresip.start(mediaenc: mediaenc, folder: folder)
                    call = try await h.engine.makeCall(to: peer.uri, from: h.account)
                } else {
                    peer = try await Baresip.start(mediaenc: mediaenc, folder: folder, commands: ["/dial \(h.uri())"])
                    let incoming = try await h.log.first("baresip's INVITE", timeout: .seconds(15)) {
                        $0.incomingCall != nil
                    }
                    call = try #require(incoming.incomingCall)
                    try await h.engine.answer(call)
                }
                try await h.log.first("confirmed", timeout: .seconds(15)) { $0.isState(.confirmed, of: call) }
                try await h.log.first("active audio", timeout: .seconds(15)) { $0.hasActiveAudio(call) }
                try await h.engine.play(file: tone.path, into: call, loop: true)
                let heard = try await h.recordTone(
                    call, to: folder.file("from-baresip.wav"), packets: 100, frequency: 600)
                #expect(heard.detected(), "baresip's 600 Hz at the engine: \(heard)")
                let session = try #require(try await h.engine.callInfo(call).media.first?.srtp, "no SRTP session")
                #expect(session.keying == keying && session.isActive, "\(session)")
                try await h.hangUp(call)
                try await peer.process.waitForOutput(containing: "terminated")
                peer.process.stop()
                let decoded = ToneAnalysis(try peer.decodedAudio(), frequency: 1000)
                #expect(decoded.detected(), "the engine's 1 kHz at baresip: \(decoded)")
            }
        }
    }

    @Test("SRTP interop: the engine calls baresip with SDES, tones cross both ways")
    func srtpSDESCallsBaresip() async throws { try await baresipSRTPCall(keying: .sdes, engineCalls: true) }

    @Test("SRTP interop: baresip calls the engine with SDES, tones cross both ways")
    func srtpSDESCalledByBaresip() async throws { try await baresipSRTPCall(keying: .sdes, engineCalls: false) }

    @Test("SRTP interop: the engine calls baresip with DTLS-SRTP, tones cross both ways")
    func srtpDTLSCallsBaresip() async throws { try await baresipSRTPCall(keying: .dtlsSRTP, engineCalls: true) }

    @Test("SRTP interop: baresip calls the engine with DTLS-SRTP, tones cross both ways")
    func srtpDTLSCalledByBaresip() async throws { try await baresipSRTPCall(keying: .dtlsSRTP, engineCalls: false) }
}

extension EngineTests {
    @Test("SRTP: secure signalling required: a call over UDP throws insecureSession, an INVITE over UDP gets 406")
    func srtpSecureSignalingRequiresTLS() async throws {
        var srtp = SRTPConfiguration.mandatory(keying: [.sdes])
        srtp.secureSignaling = .tls
        try await EngineHarness.run(srtp: srtp) { h in
            let farPort = FreePort.udp()
            let listener = try await PeerProcess.swiftpjsua(
                "swiftpjsua-srtp", ["listen", "--port", String(farPort), "--srtp", "mandatory,sdes"], folder: h.folder)
            await #expect {
                _ = try await h.engine.placeCall(to: "sip:far@127.0.0.1:\(farPort)", from: h.account)
            } throws: { error in
                (error as? PJSUAError)?.code == .insecureSession
            }
            #expect(!listener.output.contains("incoming call"), "\(listener.output)")
            let caller = try PeerProcess(
                "swiftpjsua-srtp-caller", executable: Repository.tool.path,
                arguments: ["call", h.uri(), "--port", String(FreePort.udp()), "--srtp", "mandatory,sdes"],
                folder: h.folder)
            let status = try await caller.waitForExit(timeout: .seconds(20))
            #expect(status != 0)
            #expect(caller.output.contains("DISCONNECTED 406"), "\(caller.output)")
            #expect(!h.log.events.contains { $0.incomingCall != nil }, "\(h.log.events)")
        }
    }
}
