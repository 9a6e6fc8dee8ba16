import Testing

@testable import SwiftPJSUA

/// Jitter-buffer and Opus settings as values: the documented defaults, the ranges start
/// accepts, and the milliseconds handed to pjsua, without starting it.
@Suite("Media tuning settings")
struct MediaTuningValueTests {
    @Test("Defaults: pjmedia's adaptive jitter buffer (every field -1) and no Opus override")
    func documentedDefaults() throws {
        let media = MediaConfiguration()
        #expect(media.jitterBuffer == .adaptive)
        #expect(media.jitterBuffer.discard == .progressive)
        #expect(media.opus == nil)
        for value in [
            media.jitterBuffer.initialPrefetch, media.jitterBuffer.minimumPrefetch,
            media.jitterBuffer.maximumPrefetch, media.jitterBuffer.capacity,
        ] {
            #expect(JitterBufferConfiguration.milliseconds(value) == -1)
        }
        let opus = OpusConfiguration()
        #expect(opus.bitrate == nil && opus.complexity == 5 && opus.packetTime == .milliseconds(20))
        #expect(!opus.discontinuousTransmission && opus.inBandFEC && opus.expectedPacketLoss == 5)
        try media.validate()
        try opus.validate()
    }

    @Test("A fixed prefetch sets initial, minimum and maximum alike, in whole milliseconds")
    func fixedPrefetch() throws {
        let fixed = JitterBufferConfiguration.fixed(prefetch: .milliseconds(120))
        #expect(fixed.initialPrefetch == .milliseconds(120))
        #expect(fixed.minimumPrefetch == .milliseconds(120) && fixed.maximumPrefetch == .milliseconds(120))
        #expect(JitterBufferConfiguration.milliseconds(fixed.initialPrefetch) == 120)
        #expect(JitterBufferConfiguration.milliseconds(.seconds(2)) == 2000)
        try fixed.validate()
    }

    @Test(
        "Jitter-buffer settings out of range throw invalidConfiguration naming the field",
        arguments: [
            (JitterBufferConfiguration(initialPrefetch: .milliseconds(-20)), "initialPrefetch"),
            (JitterBufferConfiguration(maximumPrefetch: .seconds(11), capacity: .seconds(10)), "maximumPrefetch"),
            (JitterBufferConfiguration(minimumPrefetch: .microseconds(20_500)), "whole milliseconds"),
            (JitterBufferConfiguration(capacity: .milliseconds(10)), "capacity"),
            (
                JitterBufferConfiguration(minimumPrefetch: .milliseconds(100), maximumPrefetch: .milliseconds(60)),
                "above"
            ),
            (
                JitterBufferConfiguration(
                    initialPrefetch: .milliseconds(40), minimumPrefetch: .milliseconds(60)), "below minimumPrefetch"
            ),
            (
                JitterBufferConfiguration(
                    initialPrefetch: .milliseconds(200), maximumPrefetch: .milliseconds(100)), "above maximumPrefetch"
            ),
            (JitterBufferConfiguration.fixed(prefetch: .milliseconds(600)), "capacity"),
            (
                JitterBufferConfiguration(maximumPrefetch: .milliseconds(300), capacity: .milliseconds(200)),
                "capacity"
            ),
        ])
    func jitterBufferOutOfRange(settings: JitterBufferConfiguration, field: String) {
        #expect {
            try settings.validate()
        } throws: { error in
            guard case PJSUAUsageError.invalidConfiguration(let text) = error else { return false }
            return text.contains(field)
        }
    }

    @Test("Jitter-buffer edges are accepted: no prefetch, a prefetch filling a 10 s capacity")
    func jitterBufferEdges() throws {
        try JitterBufferConfiguration(initialPrefetch: .zero, minimumPrefetch: .milliseconds(40)).validate()
        try JitterBufferConfiguration(
            maximumPrefetch: .seconds(10), capacity: .seconds(10), discard: .none
        ).validate()
        try JitterBufferConfiguration(capacity: .milliseconds(20), discard: .fixedRate).validate()
    }

    @Test(
        "Opus settings out of range throw invalidConfiguration naming the field",
        arguments: [
            (OpusConfiguration(bitrate: 5999), "bitrate"),
            (OpusConfiguration(bitrate: 510_001), "bitrate"),
            (OpusConfiguration(complexity: -1), "complexity"),
            (OpusConfiguration(complexity: 11), "complexity"),
            (OpusConfiguration(packetTime: .milliseconds(30)), "packetTime"),
            (OpusConfiguration(packetTime: .milliseconds(5)), "packetTime"),
            (OpusConfiguration(expectedPacketLoss: 100), "expectedPacketLoss"),
            (OpusConfiguration(expectedPacketLoss: -1), "expectedPacketLoss"),
        ])
    func opusOutOfRange(settings: OpusConfiguration, field: String) {
        #expect {
            try settings.validate()
        } throws: { error in
            guard case PJSUAUsageError.invalidConfiguration(let text) = error else { return false }
            return text.contains(field)
        }
        var media = MediaConfiguration()
        media.opus = settings
        #expect(throws: PJSUAUsageError.self) { try media.validate() }
    }

    @Test("Opus edges are accepted")
    func opusEdges() throws {
        try OpusConfiguration(bitrate: 6000, complexity: 0, packetTime: .milliseconds(10), expectedPacketLoss: 0)
            .validate()
        try OpusConfiguration(
            bitrate: 510_000, complexity: 10, packetTime: .milliseconds(60), discontinuousTransmission: true,
            inBandFEC: false, expectedPacketLoss: 99
        ).validate()
        #expect(OpusConfiguration(packetTime: .milliseconds(40)).packetMilliseconds == 40)
    }
}
