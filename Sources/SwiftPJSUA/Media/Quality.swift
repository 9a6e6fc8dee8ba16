/// How much a codec impairs speech and how well it hides lost packets: the two E-model
/// inputs of ITU-T G.107 that depend on the codec (G.113 Appendix I gives them per codec).
public struct CodecImpairment: Sendable, Hashable {
    /// The equipment impairment factor `Ie`: the codec's own distortion, 0 for G.711.
    public var equipmentImpairment: Double
    /// The packet-loss robustness factor `Bpl`: larger is more robust (the codec's packet
    /// loss concealment hides more).
    public var packetLossRobustness: Double

    /// Creates a codec's impairment values.
    /// - Parameters:
    ///   - equipmentImpairment: `Ie`, 0 or more.
    ///   - packetLossRobustness: `Bpl`, more than 0.
    public init(equipmentImpairment: Double, packetLossRobustness: Double) {
        self.equipmentImpairment = equipmentImpairment
        self.packetLossRobustness = packetLossRobustness
    }

    /// G.711 (PCMU, PCMA) with packet loss concealment, as pjmedia decodes it: `Ie` 0,
    /// `Bpl` 25.1 (G.113 Appendix I).
    public static let g711 = CodecImpairment(equipmentImpairment: 0, packetLossRobustness: 25.1)
    /// G.729 Annex A: `Ie` 11, `Bpl` 19 (G.113 Appendix I).
    public static let g729 = CodecImpairment(equipmentImpairment: 11, packetLossRobustness: 19)
    /// The values used for codecs G.113 gives none for on the narrowband scale (opus, G.722,
    /// speex, iLBC, GSM, L16): G.711's. These codecs are at least as clean as G.711 with no
    /// loss and conceal loss at least as well, so the estimate is the narrowband E-model's
    /// view of their network; it neither rewards wideband audio nor charges a codec's own
    /// distortion. Pass your own ``CodecImpairment`` where you know better.
    public static let unrated = g711

    /// The values for a codec named as ``StreamStatistics/codec`` names it (`PCMU/8000`,
    /// `G729/8000`, `opus/48000`): ``g729`` for G.729, ``g711`` for PCMU and PCMA,
    /// ``unrated`` for any other.
    public static func forCodec(_ codec: String) -> CodecImpairment {
        let name = codec.split(separator: "/").first.map { $0.uppercased() } ?? ""
        switch name {
        case "G729": return .g729
        case "PCMU", "PCMA": return .g711
        default: return .unrated
        }
    }
}

/// A listening-quality estimate of one direction of a call: ITU-T G.107's E-model from the
/// network's delay and loss, as a transmission rating `R` and a mean opinion score.
///
/// `R = 93.2 − Id − Ie,eff`, where `Id = 0.024·d + 0.11·(d − 177.3)·H(d − 177.3)` for a one-way
/// delay `d` in milliseconds (`H` is 0 below 0 and 1 above; the simplification of G.107's delay
/// impairment by Cole and Rosenbluth, 2001), and `Ie,eff = Ie + (95 − Ie)·Ppl / (Ppl / BurstR + Bpl)`
/// for a loss of `Ppl` percent (G.107 §7.5). `MOS = 1 + 0.035·R + R·(R − 60)·(100 − R)·7·10⁻⁶`,
/// clamped to 1…4.5 (G.107 Annex B). With G.711 at 20 ms and no loss it is 4.40.
public struct QualityEstimate: Sendable, Hashable {
    /// The transmission rating `R`, 0…100 (93.2 is the best a narrowband call can get).
    public var rFactor: Double
    /// The mean opinion score, 1…4.5 (1 bad, 2 poor, 3 fair, 4 good).
    public var mos: Double
    /// The one-way mouth-to-ear delay the estimate used.
    public var oneWayDelay: Duration
    /// The packet loss the estimate used, 0…1.
    public var lossRate: Double

    /// The estimate on a 0–5 scale like the call rating Linphone shows (5 best), defined here
    /// as the MOS scaled from 1…4.5 to 0…5: `rating = 5 · (MOS − 1) / 3.5`, so 4.40 rates 4.86,
    /// 3.5 rates 3.57 and 3.0 rates 2.86.
    public var rating: Double { 5 * (mos - 1) / 3.5 }

    /// Creates an estimate from its figures, for tests and previews of app code; use
    /// ``init(oneWayDelay:lossRate:burstRatio:codec:)`` to compute one.
    public init(rFactor: Double, mos: Double, oneWayDelay: Duration, lossRate: Double) {
        self.rFactor = rFactor
        self.mos = mos
        self.oneWayDelay = oneWayDelay
        self.lossRate = lossRate
    }

    /// Computes the E-model estimate.
    /// - Parameters:
    ///   - oneWayDelay: mouth-to-ear delay: half the round trip, plus the jitter buffer's delay
    ///     and one packet time (``init(_:direction:codec:)`` adds them up).
    ///   - lossRate: the fraction of packets lost, 0…1 (clamped).
    ///   - burstRatio: G.107's `BurstR`: 1 for random loss, more when losses come in bursts
    ///     (clamped to at least 1).
    ///   - codec: the codec's `Ie` and `Bpl`.
    public init(
        oneWayDelay: Duration, lossRate: Double, burstRatio: Double = 1, codec: CodecImpairment = .g711
    ) {
        let d = max(0, Self.milliseconds(oneWayDelay))
        let delayImpairment = 0.024 * d + (d > 177.3 ? 0.11 * (d - 177.3) : 0)
        let loss = min(1, max(0, lossRate.isFinite ? lossRate : 0))
        let percent = loss * 100
        let burst = max(1, burstRatio.isFinite ? burstRatio : 1)
        let ie = codec.equipmentImpairment
        let bpl = max(codec.packetLossRobustness, .leastNonzeroMagnitude)
        let lossImpairment = ie + (95 - ie) * percent / (percent / burst + bpl)
        let r = min(100, max(0, 93.2 - delayImpairment - lossImpairment))
        let mos = r <= 0 ? 1 : min(4.5, max(1, 1 + 0.035 * r + r * (r - 60) * (100 - r) * 7e-6))
        self.init(rFactor: r, mos: mos, oneWayDelay: oneWayDelay, lossRate: loss)
    }

    /// Which direction of a stream an estimate is for.
    public enum Direction: Sendable, Hashable {
        /// What this side hears: ``StreamStatistics/receive``'s loss, this side's jitter buffer.
        case receive
        /// What the far end hears: ``StreamStatistics/farEnd``'s loss from its receiver
        /// reports, and this side's jitter-buffer delay standing in for the far end's, which
        /// no report carries.
        case farEnd
    }

    /// The estimate of one direction of a stream over its whole life so far.
    ///
    /// The one-way delay is half the mean RTCP round trip plus the jitter buffer's average
    /// delay plus one packet time. `BurstR` is 1 (random loss): pjmedia does not measure burst
    /// lengths, so bursty loss is scored a little better than G.107 would.
    /// - Parameters:
    ///   - statistics: a snapshot from ``PJSUA/streamStatistics(_:mediaIndex:)``.
    ///   - direction: which side's listening quality.
    ///   - codec: the codec's values; by default those ``CodecImpairment/forCodec(_:)`` gives
    ///     for ``StreamStatistics/codec``.
    public init(_ statistics: StreamStatistics, direction: Direction, codec: CodecImpairment? = nil) {
        let figures = direction == .receive ? statistics.receive : statistics.farEnd
        self.init(
            oneWayDelay: Self.oneWayDelay(statistics), lossRate: figures.lossRate,
            codec: codec ?? .forCodec(statistics.codec))
    }

    /// Half the mean round trip, plus the jitter buffer's average delay, plus one packet time.
    static func oneWayDelay(_ statistics: StreamStatistics) -> Duration {
        let roundTrip = statistics.roundTrip.samples > 0 ? statistics.roundTrip.mean : .zero
        return roundTrip / 2 + statistics.jitterBuffer.averageDelay + statistics.packetTime
    }

    static func milliseconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) * 1000 + Double(parts.attoseconds) / 1e15
    }
}
