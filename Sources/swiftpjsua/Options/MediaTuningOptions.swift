import SwiftPJSUA

/// `--jitter-buffer`, `--jb-discard` and the `--opus-…` options, for every command:
/// ``MediaConfiguration/jitterBuffer`` and ``MediaConfiguration/opus``.
enum MediaTuningOptions {
    static let valued: Set<String> = [
        "jitter-buffer", "jb-discard", "opus-bitrate", "opus-complexity", "opus-ptime", "opus-fec", "opus-loss",
    ]
    static let flags: Set<String> = ["opus-dtx"]

    /// Puts the options into the engine's configuration; the ranges are the engine's, which
    /// checks them again at start.
    static func apply(_ options: Options, to config: inout Configuration) throws(UsageError) {
        if let text = options.string("jitter-buffer") { config.media.jitterBuffer = try jitterBuffer(text) }
        if let text = options.string("jb-discard") {
            config.media.jitterBuffer.discard =
                switch text {
                case "none": .none
                case "fixed-rate": .fixedRate
                case "progressive": .progressive
                default: throw UsageError(message: "--jb-discard must be none, fixed-rate or progressive")
                }
        }
        let opusNames = valued.filter { $0.hasPrefix("opus-") }
        guard opusNames.contains(where: { options.string($0) != nil }) || options.flags.contains("opus-dtx") else {
            return
        }
        var opus = OpusConfiguration()
        if let text = options.string("opus-bitrate"), text != "auto" {
            guard let bitrate = Int(text), (6000...510_000).contains(bitrate) else {
                throw UsageError(message: "--opus-bitrate must be auto or 6000-510000 (bit/s)")
            }
            opus.bitrate = bitrate
        }
        if let complexity = try options.int("opus-complexity", in: 0...10) { opus.complexity = complexity }
        if let ptime = try options.int("opus-ptime", in: 10...60) {
            guard [10, 20, 40, 60].contains(ptime) else {
                throw UsageError(message: "--opus-ptime must be 10, 20, 40 or 60 (ms)")
            }
            opus.packetTime = .milliseconds(ptime)
        }
        if let fec = options.string("opus-fec") {
            guard fec == "on" || fec == "off" else { throw UsageError(message: "--opus-fec must be on or off") }
            opus.inBandFEC = fec == "on"
        }
        if let loss = try options.int("opus-loss", in: 0...99) { opus.expectedPacketLoss = loss }
        opus.discontinuousTransmission = options.flags.contains("opus-dtx")
        guard PJSUA.hasOpusCodec else {
            throw UsageError(message: "the --opus- options need Opus, which this pjproject build lacks")
        }
        config.media.opus = opus
    }

    /// `adaptive`, `fixed:MS` (a prefetch that does not adapt) or `MIN-MAX` (an adaptive
    /// prefetch between MIN and MAX ms), all in milliseconds.
    static func jitterBuffer(_ text: String) throws(UsageError) -> JitterBufferConfiguration {
        let bad = UsageError(message: "--jitter-buffer must be adaptive, fixed:MS or MIN-MAX (ms, 0-10000)")
        if text == "adaptive" { return .adaptive }
        if text.hasPrefix("fixed:") {
            guard let ms = Int(text.dropFirst("fixed:".count)), (0...10_000).contains(ms) else { throw bad }
            return .fixed(prefetch: .milliseconds(ms))
        }
        let bounds = text.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        guard bounds.count == 2, let low = bounds[0], let high = bounds[1], 0 <= low, low <= high, high <= 10_000
        else { throw bad }
        return JitterBufferConfiguration(minimumPrefetch: .milliseconds(low), maximumPrefetch: .milliseconds(high))
    }
}
