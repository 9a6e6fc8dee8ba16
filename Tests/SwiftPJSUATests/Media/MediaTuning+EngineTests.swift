import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Jitter-buffer and Opus settings on real calls: a self-call over loopback, whose two legs
/// are real RTP streams through the engine's own media stack.
extension EngineTests {
    @Test(
        "A fixed jitter-buffer prefetch of N frames shows as N × 20 ms ± one frame of delay",
        arguments: [2, 8])
    func fixedJitterBufferPrefetch(frames: Int) async throws {
        // Opus: one 20 ms frame per packet (pjmedia's G.711 and G.722 frames are 10 ms).
        var media = MediaConfiguration(soundDevice: .null, codecOrder: ["opus"])
        media.jitterBuffer = .fixed(prefetch: .milliseconds(20 * frames))
        try await EngineHarness.run(media: media) { h in
            let (caller, callee) = try await h.selfCall()
            try await h.playTone(into: caller)
            // 1.5 s of audio through the buffer, then its running average.
            try await h.poll("75 RTP packets") { try await $0.streamStatistics(callee).packetsReceived >= 200 }
            let statistics = try await h.engine.streamStatistics(callee)
            let expected = Duration.milliseconds(20 * frames)
            let delay = statistics.jitterBuffer.averageDelay
            print("jitter buffer, fixed prefetch of \(frames) frames: average delay \(delay),", statistics.jitterBuffer)
            #expect(delay >= expected - .milliseconds(20) && delay <= expected + .milliseconds(20), "\(delay)")
            #expect(statistics.jitterBuffer.prefetchFrames == frames, "\(statistics.jitterBuffer)")
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
