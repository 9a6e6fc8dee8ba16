import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// RTP statistics of a call, sampled while it runs.
extension EngineTests {
    @Test("streamStatistics(of:) yields growing RTP counters and finishes when the call ends")
    func qualityStream() async throws {
        try await EngineHarness.run { h in
            let (caller, callee) = try await h.selfCall()
            let samples = Task {
                var collected: [StreamStatistics] = []
                for await sample in h.engine.streamStatistics(of: caller, every: .milliseconds(200)) {
                    collected.append(sample)
                }
                return collected
            }
            try await h.poll("25 packets") { try await $0.streamStatistics(callee).packetsReceived >= 25 }
            try await h.poll("1 s of packets") { try await $0.streamStatistics(caller).packetsSent >= 60 }
            let calleeView = try await h.engine.streamStatistics(callee)
            try await h.engine.hangup(caller)
            let clock = ContinuousClock()
            let hungUp = clock.now
            let collected = await samples.value
            #expect(clock.now - hungUp < .seconds(2))
            #expect(collected.count >= 3)
            #expect(zip(collected, collected.dropFirst()).allSatisfy { $0.packetsSent <= $1.packetsSent })
            let last = try #require(collected.last)
            #expect(last.packetsSent > 0 && last.bytesSent > 0)
            #expect(last.packetsReceived > 0 && last.bytesReceived > 0)
            #expect(calleeView.packetsLost == 0)
            #expect(calleeView.jitter < .milliseconds(100))
        }
    }
}
