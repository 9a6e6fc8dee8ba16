import SwiftPJSUA
import Testing

@Suite("Call quality: the E-model and the warning monitor")
struct QualityTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let delay: Duration
        let loss: Double
        let mos: Double
        var testDescription: String { "\(delay), \(loss * 100) % loss → MOS \(mos)" }
    }

    /// ITU-T G.107 with G.711 and PLC (Ie 0, Bpl 25.1), random loss: the values the E-model
    /// gives by hand at these points.
    @Test(
        "G.711 with PLC: the E-model's MOS at 20 ms and 400 ms one-way delay",
        arguments: [
            Row(delay: .milliseconds(20), loss: 0, mos: 4.40),
            Row(delay: .milliseconds(20), loss: 0.01, mos: 4.32),
            Row(delay: .milliseconds(20), loss: 0.05, mos: 3.90),
            Row(delay: .milliseconds(20), loss: 0.10, mos: 3.39),
            Row(delay: .milliseconds(400), loss: 0, mos: 3.05),
        ])
    func eModel(row: Row) {
        let estimate = QualityEstimate(oneWayDelay: row.delay, lossRate: row.loss, codec: .g711)
        #expect(abs(estimate.mos - row.mos) <= 0.02, "\(estimate)")
        #expect(estimate.rating > 0 && estimate.rating <= 5)
    }

    @Test("The E-model's edges: R never leaves 0…100, MOS never leaves 1…4.5, bad input is clamped")
    func eModelEdges() {
        let awful = QualityEstimate(oneWayDelay: .seconds(3), lossRate: 1)
        #expect(awful.rFactor == 0 && awful.mos == 1 && awful.rating == 0)
        let nan = QualityEstimate(oneWayDelay: .milliseconds(20), lossRate: .nan)
        #expect(abs(nan.mos - 4.40) <= 0.02)
        let negative = QualityEstimate(oneWayDelay: .milliseconds(-5), lossRate: -1)
        #expect(negative.lossRate == 0 && negative.rFactor == 93.2)
        // Bursty loss hurts more than random loss of the same rate; G.729 more than G.711.
        let random = QualityEstimate(oneWayDelay: .milliseconds(20), lossRate: 0.05)
        let bursty = QualityEstimate(oneWayDelay: .milliseconds(20), lossRate: 0.05, burstRatio: 2)
        #expect(bursty.mos < random.mos)
        #expect(QualityEstimate(oneWayDelay: .milliseconds(20), lossRate: 0.05, codec: .g729).mos < random.mos)
        #expect(CodecImpairment.forCodec("pcma/8000") == .g711)
        #expect(CodecImpairment.forCodec("G729/8000") == .g729)
        #expect(CodecImpairment.forCodec("opus/48000") == .unrated)
    }

    /// A stream sampled once a second: 50 packets a second, `lost` of them lost in each.
    static func samples(lostPerSecond: [UInt64], level: Int = 80) -> [StreamStatistics] {
        var received: UInt64 = 0, lost: UInt64 = 0
        return lostPerSecond.enumerated().map { second, lostNow in
            received += 50 - lostNow
            lost += lostNow
            return StreamStatistics(
                receive: StreamDirectionStatistics(packets: received, lost: lost),
                audioLevel: AudioLevel(sent: level + (second % 2), received: 70), codec: "PCMU/8000",
                elapsed: .seconds(second + 1))
        }
    }

    @Test("Warnings: raised at the third of five lossy seconds, held at least 5 s, cleared once, never repeated")
    func warningHysteresis() throws {
        var monitor = try QualityMonitor()
        // 2 clean seconds, 10 seconds losing 5 of 50 (10 %), 12 clean seconds.
        let lossy = Self.samples(
            lostPerSecond: [0, 0] + Array(repeating: 5, count: 10) + Array(repeating: 0, count: 12))
        var raisedAt: [QualityWarning: [Int]] = [:], clearedAt: [QualityWarning: [Int]] = [:]
        for (second, sample) in lossy.enumerated() {
            let report = monitor.update(sample)
            for warning in report.raised { raisedAt[warning, default: []].append(second + 1) }
            for warning in report.cleared { clearedAt[warning, default: []].append(second + 1) }
        }
        // Loss starts in second 3: the third lossy sample is second 5.
        #expect(raisedAt[.highPacketLoss] == [5])
        // Clean from second 13: by second 15 three of the last five are clean.
        #expect(clearedAt[.highPacketLoss] == [15])
        // The 5 s MOS window is at 10 % loss from second 7 on (MOS 3.39 < 3.5); it clears
        // once fewer than three of five windows are below, a few seconds after the loss ends.
        let mosRaised = try #require(raisedAt[.lowMOS]?.first)
        let mosCleared = try #require(clearedAt[.lowMOS]?.first)
        #expect(raisedAt[.lowMOS]?.count == 1 && clearedAt[.lowMOS]?.count == 1)
        #expect((5...9).contains(mosRaised), "\(mosRaised)")
        #expect(mosCleared > 12 && mosCleared <= 22, "\(mosCleared)")
        #expect(raisedAt[.highRoundTripTime] == nil && raisedAt[.highJitter] == nil)
        #expect(raisedAt[.constantAudioInputLevel] == nil)
        #expect(monitor.activeWarnings.isEmpty)
    }

    @Test("Warnings: a raised warning stays raised for minimumDuration even when its cause stops at once")
    func minimumDuration() throws {
        var monitor = try QualityMonitor(
            policy: QualityPolicy(minimumDuration: .seconds(8), enabled: [.highPacketLoss]))
        // Loss in seconds 1–4 (the first sample has no interval before it, so seconds 2–4
        // hold): raised at 4. Three of five clean by second 7, but held until 4 + 8 = 12.
        let samples = Self.samples(lostPerSecond: [10, 10, 10, 10] + Array(repeating: 0, count: 12))
        var raised: [Int] = [], cleared: [Int] = []
        for (second, sample) in samples.enumerated() {
            let report = monitor.update(sample)
            if !report.raised.isEmpty { raised.append(second + 1) }
            if !report.cleared.isEmpty { cleared.append(second + 1) }
        }
        #expect(raised == [4])
        #expect(cleared == [12])
    }

    @Test("Warnings: a constant sent level for 10 s raises constant-audio-input-level; a moving one does not")
    func constantInputLevel() throws {
        var silent = try QualityMonitor()
        var moving = try QualityMonitor()
        var raised: [Int] = []
        for second in 1...16 {
            let quiet = StreamStatistics(
                receive: StreamDirectionStatistics(packets: UInt64(second * 50)),
                audioLevel: AudioLevel(sent: 0, received: 60), elapsed: .seconds(second))
            if silent.update(quiet).raised.contains(.constantAudioInputLevel) { raised.append(second) }
            let speech = StreamStatistics(
                receive: StreamDirectionStatistics(packets: UInt64(second * 50)),
                audioLevel: AudioLevel(sent: 40 + (second * 37) % 90, received: 60), elapsed: .seconds(second))
            #expect(moving.update(speech).activeWarnings.isEmpty)
        }
        // The window is full at second 11; the third sample over it is second 13.
        #expect(raised == [13])
    }

    @Test("Warnings: high RTT and high jitter from the figures; an out-of-range policy throws")
    func rttJitterAndPolicy() throws {
        var monitor = try QualityMonitor()
        var raised: Set<QualityWarning> = []
        for second in 1...5 {
            let sample = StreamStatistics(
                receive: StreamDirectionStatistics(
                    packets: UInt64(second * 50), jitter: DurationStatistics(samples: second, last: .milliseconds(45))),
                roundTrip: DurationStatistics(samples: second, mean: .milliseconds(480), last: .milliseconds(480)),
                elapsed: .seconds(second))
            raised.formUnion(monitor.update(sample).raised)
        }
        #expect(raised == [.highRoundTripTime, .highJitter])
        #expect(throws: PJSUAUsageError.self) { try QualityMonitor(policy: QualityPolicy(sampleWindow: 0)) }
        #expect(throws: PJSUAUsageError.self) {
            try QualityMonitor(policy: QualityPolicy(sampleWindow: 3, samplesToRaise: 4))
        }
        #expect(throws: PJSUAUsageError.self) { try QualityMonitor(policy: QualityPolicy(mosThreshold: .nan)) }
        #expect(throws: PJSUAUsageError.self) { try QualityMonitor(policy: QualityPolicy(lossThreshold: 2)) }
    }

    @Test("StreamStatistics' flat fields repeat the nested ones; far-end loss is lost over expected")
    func statisticsValues() {
        let stats = StreamStatistics(
            receive: StreamDirectionStatistics(packets: 95, bytes: 15_200, lost: 5),
            farEnd: StreamDirectionStatistics(packets: 200, bytes: 32_000, lost: 9, expected: 180, reports: 2),
            roundTrip: DurationStatistics(samples: 2, mean: .milliseconds(40), last: .milliseconds(42)),
            jitterBuffer: JitterBufferStatistics(averageDelay: .milliseconds(30)))
        #expect(stats.packetsReceived == 95 && stats.packetsLost == 5 && stats.packetsSent == 200)
        #expect(stats.roundTripTime == .milliseconds(42) && stats.jitterBufferDelay == .milliseconds(30))
        #expect(stats.receive.lossRate == 0.05)
        #expect(stats.farEnd.lossRate == 0.05)
        // 20 ms round trip each way, 30 ms buffer, 20 ms packets.
        let estimate = QualityEstimate(stats, direction: .receive)
        #expect(estimate.oneWayDelay == .milliseconds(70))
    }
}
