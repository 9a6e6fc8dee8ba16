import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Call-quality warnings on loopback self-calls: a long path through a delay relay raises
/// `high-rtt`; a writer of digital silence raises `constant-audio-input-level`.
extension EngineTests {
    /// Collects a call's quality reports as they come, for waits with a deadline.
    static func qualityReports(
        _ engine: PJSUA, _ call: Call, every interval: Duration = .seconds(1), policy: QualityPolicy = QualityPolicy()
    ) throws -> Journal<CallQualityReport> {
        let journal = Journal<CallQualityReport>()
        let reports = try engine.callQuality(of: call, every: interval, policy: policy)
        Task {
            for await report in reports { journal.append(report) }
            journal.finish()
        }
        return journal
    }

    @Test("A 240 ms each-way delay relay: RTCP reads a round trip of about 480 ms and high-rtt is raised on both legs")
    func highRoundTripThroughADelayRelay() async throws {
        let delay = Duration.milliseconds(240)
        // The relay binds the engine's whole RTP range on 127.0.0.2 before the engine
        // starts; a range with a port someone else holds is skipped for another one.
        try await withTemporaryFolder { folder in
            var started: (UDPDelayRelay, ClosedRange<UInt16>)?
            for _ in 0..<5 where started == nil {
                let start = UInt16.random(in: 5000...14950) * 2
                let ports = start...(start + 39)
                if let relay = try? await UDPDelayRelay.start(folder: folder, ports: ports, delay: delay) {
                    started = (relay, ports)
                }
            }
            let (relay, ports) = try #require(started, "no free 40-port range for the relay")
            defer { relay.stop() }
            var media = MediaConfiguration(soundDevice: .null, rtpAddress: "127.0.0.1")
            media.rtpPublicAddress = relay.address
            try await EngineHarness.run(media: media, rtpPorts: ports) { h in
                try await h.engine.setCodecPriority("PCMU", 255)
                let (caller, callee) = try await h.selfCall()
                let legs = [
                    ("caller", try Self.qualityReports(h.engine, caller)),
                    ("callee", try Self.qualityReports(h.engine, callee)),
                ]
                try await h.playTone(into: caller)
                try await h.playTone(into: callee)
                // pjmedia sends RTCP about every 5 s, so the first round trip is known after
                // 5–10 s; the default 3-of-5 rule at 1 s samples raises it 3 s later.
                for (leg, journal) in legs {
                    let reports = try await journal.wait("high-rtt raised on \(leg)", timeout: .seconds(20)) {
                        $0.contains { $0.raised.contains(.highRoundTripTime) }
                    }
                    let raisedAt = try #require(reports.last)
                    let roundTrip = raisedAt.statistics.roundTrip
                    let band = (delay * 2 - .milliseconds(100))...(delay * 2 + .milliseconds(100))
                    #expect(roundTrip.last >= .milliseconds(450), "\(leg): RTCP round trip \(roundTrip)")
                    #expect(
                        band.contains(roundTrip.last), "\(leg): RTCP round trip \(roundTrip), relay \(delay) each way")
                    #expect(band.contains(roundTrip.mean), "\(leg): RTCP round trip \(roundTrip)")
                    #expect(raisedAt.activeWarnings.contains(.highRoundTripTime))
                    // Its first samples, before any round trip was known, held nothing.
                    #expect(reports.first.map { !$0.activeWarnings.contains(.highRoundTripTime) } ?? false)
                    print("round trip through the relay on \(leg): \(roundTrip), raised at \(raisedAt.elapsed)")
                }
                try await h.hangUp(caller, waitingFor: callee)
            }
            // The relay carried RTP (even ports) and RTCP (odd ports), both ways.
            let flows = relay.flows
            #expect(Set(flows.map { "\($0.from)->\($0.to)" }).count >= 4, "\(relay.output)")
            #expect(flows.contains { $0.from % 2 == 1 } && flows.contains { $0.from % 2 == 0 }, "\(relay.output)")
            relay.stop()
        }
    }

    @Test(
        "Zeros written into a call raise constant-audio-input-level there; varying audio on the other leg does not"
    )
    func silentWriterRaisesConstantLevel() async throws {
        // The level must stay constant for 2 s (10 s by default), sampled every 500 ms, so
        // that the test takes about 3 s instead of 13 s.
        let policy = QualityPolicy(constantLevelWindow: .seconds(2))
        try await EngineHarness.run { h in
            try await h.engine.setCodecPriority("PCMU", 255)
            let (caller, callee) = try await h.selfCall()
            let format = AudioFrameFormat(sampleRate: 16000, frameDuration: .milliseconds(20))
            let silent = try await h.engine.audioFrameWriter(into: caller, format: format, buffer: .milliseconds(200))
            let speaking = try await h.engine.audioFrameWriter(into: callee, format: format, buffer: .milliseconds(200))
            let writers = Task {
                // Zeros into the caller; into the callee a 440 Hz tone whose loudness moves
                // every 100 ms, as speech does.
                let zeros = [Int16](repeating: 0, count: format.samplesPerFrame)
                var frame = 0
                while !Task.isCancelled {
                    let amplitude = [0.05, 0.4, 0.15, 0.3][frame / 5 % 4]
                    let samples = (0..<format.samplesPerFrame).map { index in
                        let t = Double(frame * format.samplesPerFrame + index) / Double(format.sampleRate)
                        return Int16(amplitude * 32767 * sin(2 * Double.pi * 440 * t))
                    }
                    async let a: Void = silent.write(zeros)
                    async let b: Void = speaking.write(samples)
                    _ = try await (a, b)
                    frame += 1
                }
            }
            defer { writers.cancel() }
            let silentReports = try Self.qualityReports(h.engine, caller, every: .milliseconds(500), policy: policy)
            let speakingReports = try Self.qualityReports(h.engine, callee, every: .milliseconds(500), policy: policy)
            let raised = try await silentReports.wait(
                "constant-audio-input-level on the silent leg", timeout: .seconds(8)
            ) {
                $0.contains { $0.raised.contains(.constantAudioInputLevel) }
            }
            let silentLevels = raised.compactMap { $0.statistics.audioLevel?.sent }
            #expect(
                silentLevels.count == raised.count && silentLevels.allSatisfy { $0 == 0 }, "sent levels \(silentLevels)"
            )
            // The speaking leg, over as many samples: its sent level moves, nothing raised.
            let heard = try await speakingReports.wait("as many samples on the speaking leg", timeout: .seconds(3)) {
                $0.count >= raised.count
            }
            let speakingLevels = heard.compactMap { $0.statistics.audioLevel?.sent }
            #expect(speakingLevels.count == heard.count, "levels missing: \(heard.map(\.statistics.audioLevel))")
            let spread = (speakingLevels.max() ?? 0) - (speakingLevels.min() ?? 0)
            #expect(
                spread > policy.constantLevelSpread && (speakingLevels.max() ?? 0) > 0, "sent levels \(speakingLevels)")
            #expect(
                !heard.contains { $0.activeWarnings.contains(.constantAudioInputLevel) },
                "sent levels \(speakingLevels)")
            print("sent levels: silent leg \(silentLevels), speaking leg \(speakingLevels)")
            writers.cancel()
            try await h.hangUp(caller, waitingFor: callee)
        }
    }
}
