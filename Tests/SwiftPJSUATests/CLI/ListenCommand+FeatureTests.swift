import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

extension EngineTests {
    /// The engine calls `swiftpjsua listen --echo`, sends a tone and then clicks through a
    /// frame writer, and reads what comes back through a frame stream: the tone returns,
    /// and each click's round trip is measured from its write to its return.
    @Test("CLI: listen --echo sends a call's audio back: the tone returns; click round trips measured")
    func echoModeReturnsAudio() async throws {
        try await withTemporaryFolder { folder in
            let port = FreePort.udp()
            let echo = try await PeerProcess.swiftpjsua(
                "swiftpjsua-echo", ["listen", "--bind", "127.0.0.1", "--port", String(port), "--echo"], folder: folder)
            try await EngineHarness.run { h in
                try await h.engine.setCodecPriority("PCMU", 255)
                let call = try await h.engine.makeCall(to: "sip:echo@127.0.0.1:\(port)", from: h.account)
                try await h.log.first("audio active") { $0.hasActiveAudio(call) }
                let format = AudioFrameFormat(sampleRate: 8000, frameDuration: .milliseconds(10))
                let received = try await h.engine.audioFrames(from: call, format: format)
                let writer = try await h.engine.audioFrameWriter(into: call, format: format, buffer: .milliseconds(40))
                let clock = ContinuousClock()

                // 2 s of 1 kHz out; what returns over the last 1.5 s carries it.
                let tone = WAVAudio.tone(
                    frequency: 1000, duration: .seconds(2), sampleRate: 8000, amplitude: 0.2
                ).samples
                let listening = Task { await Self.collect(received, for: .seconds(2)) }
                try await writer.write(tone)
                let back = Self.analysis(of: Array(await listening.value.dropFirst(50)), frequency: 1000)
                #expect(back.toneBlocks >= back.blocks - 5 && back.blocks >= 70, "\(back)")

                // Clicks: 20 ms of 2 kHz, five times, each once the line is quiet again.
                func energy(_ frame: AudioFrame) -> Double {
                    frame.samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, frame.samples.count))
                }
                let click = WAVAudio.tone(
                    frequency: 2000, duration: .milliseconds(20), sampleRate: 8000, amplitude: 0.5
                ).samples
                var iterator = received.makeAsyncIterator()
                var trips: [Duration] = []
                for _ in 0..<5 {
                    // Read until 200 ms in a row are quiet: the reader is then up to date.
                    var quiet = 0
                    while quiet < 20, let frame = await iterator.next() {
                        quiet = energy(frame) < 10_000 ? quiet + 1 : 0
                    }
                    try await writer.write([Int16](repeating: 0, count: 800))
                    let sent = clock.now + (await writer.queuedDuration)
                    try await writer.write(click)
                    var returned: ContinuousClock.Instant?
                    while clock.now - sent < .seconds(2), let frame = await iterator.next() {
                        if energy(frame) > 1_000_000 { returned = clock.now; break }
                    }
                    trips.append(try #require(returned, "a click did not come back") - sent)
                }
                let sorted = trips.sorted()
                let milliseconds = sorted.map { $0.formatted(.units(allowed: [.milliseconds])) }
                print("echo round trip (write → return through listen --echo), 5 clicks: \(milliseconds)")
                #expect(sorted[2] < .milliseconds(400), "median round trip \(sorted[2])")
                let statistics = try await h.engine.streamStatistics(call)
                print("echo: our jitter buffer holds \(statistics.jitterBufferDelay) on average")
                try await h.engine.hangup(call)
            }
            #expect(echo.output.contains("echoing"), "\(echo.output)")
        }
    }
}

extension EngineTests {
    @Test("CLI: swiftpjsua listen --dtmf --transfer-to --hold-after acts on each answered call")
    func cliListenFeatures() async throws {
        try await withTemporaryFolder { folder in
            let port = FreePort.udp()
            let cli = try await PeerProcess.swiftpjsua(
                "swiftpjsua-listen",
                [
                    "listen", "--bind", "127.0.0.1", "--port", String(port), "--header", "X-Answered-By: cli",
                    "--dtmf", "9*",
                    "--transfer-to", "sip:elsewhere@127.0.0.1:5999", "--hold-after", "0.3",
                ], folder: folder)
            try await EngineHarness.run { h in
                try await h.engine.setTransferRequestHandler { _ in .reject(statusCode: 603) }
                let call = try await h.engine.makeCall(to: "sip:cli@127.0.0.1:\(port)", from: h.account)
                try await h.log.wait("2 digits, a REFER and a remote hold") { events in
                    digits(in: events, of: call).count >= 2
                        && events.contains { $0.isTransferRequest(of: call, answered: 603) }
                        && events.contains { $0.hasAudio(.remoteHold, call) }
                }
                #expect(String(h.log.digits(of: call).map(\.digit)) == "9*")
                try await h.hangUp(call)
            }
            let output = cli.output
            #expect(output.contains("sending dtmf 9*"), "\(output)")
            #expect(output.contains("transfer call") && output.contains("603"), "\(output)")
            #expect(output.contains("holding call"), "\(output)")
        }
    }
}

extension EngineTests {
    @Test("CLI: swiftpjsua listen prints a replacement and what it replaced, and does not try to answer it")
    func cliListenReplacement() async throws {
        try await withTemporaryFolder { folder in
            let port = FreePort.udp()
            let cli = try await PeerProcess.swiftpjsua(
                "swiftpjsua-listen", ["listen", "--bind", "127.0.0.1", "--port", String(port)], folder: folder)
            let peer = try RawSIPPeer()
            defer { peer.close() }
            let first = Self.replacesInvite(callID: "cli-replaced-\(UUID().uuidString)", fromTag: "alice-1", peer: peer)
            let answered = try await Self.sendReplacesInvite(first, from: peer, to: port)
            #expect(answered.statusCode == 200, "\(answered)\n\(cli.output)")
            let second = Self.replacesInvite(
                callID: "cli-replacement-\(UUID().uuidString)", fromTag: "bob-2", peer: peer,
                headers: ["Replaces: \(first.callID);to-tag=\(answered.toTag ?? "");from-tag=alice-1"])
            let replaced = try await Self.sendReplacesInvite(second, from: peer, to: port)
            #expect(replaced.statusCode == 200, "\(replaced)\n\(cli.output)")
            let bye = await peer.receivedRequest("BYE", callID: first.callID, timeout: .seconds(10))
            #expect(bye != nil, "\(cli.output)")
            if let bye { try peer.respond(200, "OK", to: bye) }
            try? await cli.waitForOutput(containing: "replaced call")
            let output = cli.output
            let lines = output.split(separator: "\n").map(String.init)
            let incoming = try #require(
                lines.first { $0.contains("incoming") && $0.contains(second.callID) }, "\(output)")
            #expect(incoming.contains(" replaces call "), "\(incoming)")
            #expect(lines.contains { $0.contains("replaced call") && $0.contains(" by call ") }, "\(output)")
            #expect(!lines.contains { $0.contains("answer call") && $0.contains("failed") }, "\(output)")
        }
    }
}
