import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Jitter-buffer and Opus settings on real calls: a self-call over loopback, whose two legs
/// are real RTP streams through the engine's own media stack.
extension EngineTests {
    @Test(
        "A fixed jitter-buffer prefetch of N frames shows as N × 20 ms ± one frame of delay, at 1.5 s and at 4 s",
        arguments: [("opus", 2), ("opus", 8), ("PCMU", 2), ("PCMU", 8)])
    func fixedJitterBufferPrefetch(codec: String, frames: Int) async throws {
        let expected = Duration.milliseconds(20 * frames)
        var media = MediaConfiguration(soundDevice: .null, codecOrder: [codec])
        media.jitterBuffer = .fixed(prefetch: expected)
        #expect(media.jitterBuffer.discard == JitterBufferDiscard.none)
        // pjmedia's decoder frame: Opus's is its 20 ms packet, G.711's half of one.
        let frame: Duration = codec == "opus" ? .milliseconds(20) : .milliseconds(10)
        try await EngineHarness.run(media: media) { h in
            let (caller, callee) = try await h.selfCall()
            try await h.playTone(into: caller)
            // After 1.5 s and after 4 s of audio: the running average must not drift away.
            for packets: UInt64 in [75, 200] {
                try await h.poll("\(packets) RTP packets") {
                    try await $0.streamStatistics(callee).packetsReceived >= packets
                }
                let statistics = try await h.engine.streamStatistics(callee)
                let buffer = statistics.jitterBuffer
                print("jitter buffer, \(codec) fixed at \(frames) × 20 ms, \(packets) packets:", buffer)
                #expect(statistics.codec.lowercased().hasPrefix(codec.lowercased()), "\(statistics.codec)")
                #expect(buffer.frameDuration == frame, "\(buffer)")
                #expect(buffer.prefetch == expected, "\(buffer)")
                #expect(buffer.prefetchFrames == Int(expected / frame), "\(buffer)")
                #expect(buffer.discardedFrames == 0, "\(buffer)")
                let delay = buffer.averageDelay
                #expect(delay >= expected - .milliseconds(20) && delay <= expected + .milliseconds(20), "\(delay)")
            }
            try await h.hangUp(caller, waitingFor: callee)
        }
    }

    @Test("The same prefetch with progressive discard drains below it: the discard, not the prefetch, holds the delay")
    func fixedPrefetchWithDiscardDrains() async throws {
        let prefetch = Duration.milliseconds(160)
        var media = MediaConfiguration(soundDevice: .null, codecOrder: ["opus"])
        media.jitterBuffer = .fixed(prefetch: prefetch)
        media.jitterBuffer.discard = .progressive
        try await EngineHarness.run(media: media) { h in
            let (caller, callee) = try await h.selfCall()
            try await h.playTone(into: caller)
            try await h.poll("200 RTP packets") { try await $0.streamStatistics(callee).packetsReceived >= 200 }
            let statistics = try await h.engine.streamStatistics(callee)
            let buffer = statistics.jitterBuffer
            print("jitter buffer, opus prefetch 160 ms with progressive discard after 4 s:", buffer)
            // The prefetch stays where it was set; the buffer's content is discarded below it.
            // pjmedia reports progressively discarded frames as lost at playout (none were
            // lost on the wire).
            #expect(buffer.prefetch == prefetch, "\(buffer)")
            #expect(statistics.receive.lost == 0, "\(statistics.receive)")
            #expect(buffer.lostFrames > 0, "\(buffer)")
            #expect(buffer.averageDelay < prefetch - .milliseconds(20), "\(buffer)")
            try await h.hangUp(caller, waitingFor: callee)
        }
    }

    @Test("Opus at 12 kbit/s sends about a quarter of the bytes of Opus at 48 kbit/s")
    func opusBitrate() async throws {
        var sizes: [Int: Double] = [:]
        for bitrate in [12000, 48000] {
            var media = MediaConfiguration(soundDevice: .null, codecOrder: ["opus"])
            media.opus = OpusConfiguration(bitrate: bitrate)
            sizes[bitrate] = try await EngineHarness.run(media: media) { h in
                let (caller, callee) = try await h.selfCall()
                try await h.playTone(into: caller)
                #expect(try await h.engine.callInfo(caller).audioCodec?.lowercased().hasPrefix("opus") == true)
                try await h.poll("50 RTP packets") { try await $0.streamStatistics(callee).packetsReceived >= 50 }
                let statistics = try await h.engine.streamStatistics(caller)
                try await h.hangUp(caller, waitingFor: callee)
                return Double(statistics.bytesSent) / Double(max(1, statistics.packetsSent))
            }
        }
        let low = try #require(sizes[12000]), high = try #require(sizes[48000])
        print("opus payload per 20 ms packet: \(low) bytes at 12 kbit/s, \(high) bytes at 48 kbit/s")
        // 12 kbit/s is 30 bytes per 20 ms packet, 48 kbit/s 120 (VBR: within 40 %).
        #expect(low > 18 && low < 42, "\(low)")
        #expect(high > 72 && high < 168, "\(high)")
    }
}
