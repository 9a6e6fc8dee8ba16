/// A call-quality problem a user would notice, raised and cleared by ``QualityMonitor``.
///
/// The names are the ones app teams know from Twilio's Voice SDK. Each is judged on what
/// this side receives (and, for ``highRoundTripTime``, the round trip; for
/// ``constantAudioInputLevel``, what it sends), sampled once per
/// ``PJSUA/callQuality(of:every:policy:)`` period.
public struct QualityWarning: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The warning's name, for example `high-rtt`.
    public var rawValue: String
    /// A warning by name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The RTCP round trip is above ``QualityPolicy/roundTripThreshold``.
    public static let highRoundTripTime = QualityWarning(rawValue: "high-rtt")
    /// The receive jitter is above ``QualityPolicy/jitterThreshold``.
    public static let highJitter = QualityWarning(rawValue: "high-jitter")
    /// More than ``QualityPolicy/lossThreshold`` of the packets expected in the last sampling
    /// period were lost.
    public static let highPacketLoss = QualityWarning(rawValue: "high-packet-loss")
    /// The receive MOS over the last ``QualityPolicy/scoreWindow`` is below
    /// ``QualityPolicy/mosThreshold``.
    public static let lowMOS = QualityWarning(rawValue: "low-mos")
    /// The level of what we send has not moved by more than
    /// ``QualityPolicy/constantLevelSpread`` for ``QualityPolicy/constantLevelWindow``: a muted
    /// or dead microphone, or a source of constant silence.
    public static let constantAudioInputLevel = QualityWarning(rawValue: "constant-audio-input-level")

    /// All five, in a fixed order.
    public static let all: [QualityWarning] = [
        .highRoundTripTime, .highJitter, .highPacketLoss, .lowMOS, .constantAudioInputLevel,
    ]

    /// The name.
    public var description: String { rawValue }
    /// Orders by name, so sets print alike every time.
    public static func < (lhs: QualityWarning, rhs: QualityWarning) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// When ``QualityMonitor`` raises and clears each ``QualityWarning``.
///
/// A warning is raised when its condition held in at least ``samplesToRaise`` of the last
/// ``sampleWindow`` samples, and cleared when it held in fewer than that many, but never sooner
/// than ``minimumDuration`` after it was raised; it is reported once when raised and once when
/// cleared, never again while it holds. The defaults follow the thresholds and the 3-of-5
/// rule app teams know from Twilio's Voice SDK.
public struct QualityPolicy: Sendable, Hashable {
    /// ``QualityWarning/highRoundTripTime`` above this round trip. Default 400 ms.
    public var roundTripThreshold: Duration
    /// ``QualityWarning/highJitter`` above this jitter. Default 30 ms.
    public var jitterThreshold: Duration
    /// ``QualityWarning/highPacketLoss`` above this fraction lost, 0…1. Default 0.01 (1 %).
    public var lossThreshold: Double
    /// ``QualityWarning/lowMOS`` below this MOS, 1…4.5. Default 3.5.
    public var mosThreshold: Double
    /// The stretch of the call the MOS for ``QualityWarning/lowMOS`` is computed over (its
    /// loss), so that one unlucky second does not decide it. Default 5 s.
    public var scoreWindow: Duration
    /// ``QualityWarning/constantAudioInputLevel`` when the sent level's highest and lowest
    /// value over ``constantLevelWindow`` differ by at most this, on the 0…255 scale of
    /// ``AudioLevel``. Default 0: digital silence or a frozen source.
    public var constantLevelSpread: Int
    /// How long the sent level must stay within ``constantLevelSpread``. Default 10 s.
    public var constantLevelWindow: Duration
    /// The samples a warning's condition is judged over. Default 5.
    public var sampleWindow: Int
    /// The samples of ``sampleWindow`` that must hold the condition to raise it. Default 3.
    public var samplesToRaise: Int
    /// The shortest time a raised warning stays raised. Default 5 s.
    public var minimumDuration: Duration
    /// The warnings to judge; others are never raised. Default all five.
    public var enabled: Set<QualityWarning>

    /// Creates a policy; every parameter has the default stated on its property.
    public init(
        roundTripThreshold: Duration = .milliseconds(400), jitterThreshold: Duration = .milliseconds(30),
        lossThreshold: Double = 0.01, mosThreshold: Double = 3.5, scoreWindow: Duration = .seconds(5),
        constantLevelSpread: Int = 0, constantLevelWindow: Duration = .seconds(10), sampleWindow: Int = 5,
        samplesToRaise: Int = 3, minimumDuration: Duration = .seconds(5),
        enabled: Set<QualityWarning> = Set(QualityWarning.all)
    ) {
        self.roundTripThreshold = roundTripThreshold
        self.jitterThreshold = jitterThreshold
        self.lossThreshold = lossThreshold
        self.mosThreshold = mosThreshold
        self.scoreWindow = scoreWindow
        self.constantLevelSpread = constantLevelSpread
        self.constantLevelWindow = constantLevelWindow
        self.sampleWindow = sampleWindow
        self.samplesToRaise = samplesToRaise
        self.minimumDuration = minimumDuration
        self.enabled = enabled
    }

    /// Checks the policy's ranges.
    /// - Throws: ``PJSUAUsageError/invalidArgument(_:)`` naming the first field out of range.
    public func validate() throws(PJSUAUsageError) {
        func require(_ condition: Bool, _ message: String) throws(PJSUAUsageError) {
            if !condition { throw .invalidArgument("QualityPolicy: \(message)") }
        }
        try require(sampleWindow >= 1 && sampleWindow <= 1000, "sampleWindow must be 1...1000, got \(sampleWindow)")
        try require(
            (1...sampleWindow).contains(samplesToRaise),
            "samplesToRaise must be 1...sampleWindow (\(sampleWindow)), got \(samplesToRaise)")
        try require(lossThreshold.isFinite && (0...1).contains(lossThreshold), "lossThreshold must be 0...1")
        try require(mosThreshold.isFinite && (1...4.5).contains(mosThreshold), "mosThreshold must be 1...4.5")
        try require((0...255).contains(constantLevelSpread), "constantLevelSpread must be 0...255")
        try require(roundTripThreshold >= .zero && jitterThreshold >= .zero, "thresholds must not be negative")
        try require(
            scoreWindow >= .zero && constantLevelWindow >= .zero && minimumDuration >= .zero,
            "windows and minimumDuration must not be negative")
    }
}

/// One sample of a call's quality: the statistics, both directions' estimates and the
/// warnings, as ``PJSUA/callQuality(of:every:policy:)`` yields it.
public struct CallQualityReport: Sendable, Hashable {
    /// The stream's figures at this sample.
    public var statistics: StreamStatistics
    /// What this side hears, over the last ``QualityPolicy/scoreWindow`` of the call (the
    /// whole call before that much has passed).
    public var receive: QualityEstimate
    /// What the far end hears, from its receiver reports over the whole call; `nil` before its
    /// first report.
    public var farEnd: QualityEstimate?
    /// The packets lost of those expected since the previous sample, 0…1 (receive side).
    public var recentLossRate: Double
    /// The warnings raised now.
    public var activeWarnings: Set<QualityWarning>
    /// Warnings raised at this sample (in ``QualityWarning/all``'s order).
    public var raised: [QualityWarning]
    /// Warnings cleared at this sample.
    public var cleared: [QualityWarning]
    /// When the sample was taken, from the start of the stream (``StreamStatistics/elapsed``).
    public var elapsed: Duration

    /// Creates a report, for tests and previews of app code.
    public init(
        statistics: StreamStatistics, receive: QualityEstimate, farEnd: QualityEstimate? = nil,
        recentLossRate: Double = 0, activeWarnings: Set<QualityWarning> = [], raised: [QualityWarning] = [],
        cleared: [QualityWarning] = [], elapsed: Duration = .zero
    ) {
        self.statistics = statistics
        self.receive = receive
        self.farEnd = farEnd
        self.recentLossRate = recentLossRate
        self.activeWarnings = activeWarnings
        self.raised = raised
        self.cleared = cleared
        self.elapsed = elapsed
    }
}

/// Turns successive ``StreamStatistics`` of one stream into ``CallQualityReport``s: windowed
/// estimates and warnings raised and cleared under a ``QualityPolicy``.
///
/// A plain value with no clock of its own: time is each sample's ``StreamStatistics/elapsed``.
/// ``PJSUA/callQuality(of:every:policy:)`` runs one per call; an app that samples
/// ``PJSUA/streamStatistics(_:mediaIndex:)`` itself, or a test with made-up figures, can run
/// one directly.
public struct QualityMonitor: Sendable {
    /// The policy the warnings follow.
    public let policy: QualityPolicy
    private var history: [StreamStatistics] = []
    private var conditions: [QualityWarning: [Bool]] = [:]
    private var raisedAt: [QualityWarning: Duration] = [:]

    /// A monitor with no samples yet.
    /// - Throws: ``PJSUAUsageError/invalidArgument(_:)`` when `policy` is out of range.
    public init(policy: QualityPolicy = QualityPolicy()) throws(PJSUAUsageError) {
        try policy.validate()
        self.policy = policy
    }

    /// The warnings raised now.
    public var activeWarnings: Set<QualityWarning> { Set(raisedAt.keys) }

    /// Takes the next sample and reports what it changed.
    /// - Parameter statistics: the stream's figures, later than the previous sample's.
    /// - Returns: the estimates and the warnings raised and cleared by this sample.
    public mutating func update(_ statistics: StreamStatistics) -> CallQualityReport {
        let previous = history.last
        history.append(statistics)
        let keep = max(policy.scoreWindow, policy.constantLevelWindow)
        while let first = history.first, history.count > 2, statistics.elapsed - first.elapsed > keep + .seconds(2) {
            history.removeFirst()
        }
        let recentLoss =
            previous.map { Self.lossRate(from: $0.receive, to: statistics.receive) } ?? statistics.receive.lossRate
        let windowStart = history.last { statistics.elapsed - $0.elapsed >= policy.scoreWindow }
        let windowLoss =
            windowStart.map { Self.lossRate(from: $0.receive, to: statistics.receive) }
            ?? statistics.receive.lossRate
        let codec = CodecImpairment.forCodec(statistics.codec)
        let receive = QualityEstimate(
            oneWayDelay: QualityEstimate.oneWayDelay(statistics), lossRate: windowLoss, codec: codec)
        let farEnd = statistics.farEnd.reports > 0 ? QualityEstimate(statistics, direction: .farEnd) : nil

        var holds: [QualityWarning: Bool] = [:]
        holds[.highRoundTripTime] =
            statistics.roundTrip.samples > 0 && statistics.roundTrip.last > policy.roundTripThreshold
        holds[.highJitter] = statistics.receive.jitter.last > policy.jitterThreshold
        holds[.highPacketLoss] = previous != nil && recentLoss > policy.lossThreshold
        holds[.lowMOS] = statistics.receive.expected > 0 && receive.mos < policy.mosThreshold
        holds[.constantAudioInputLevel] = constantInputLevel(at: statistics)

        var raised: [QualityWarning] = []
        var cleared: [QualityWarning] = []
        for warning in QualityWarning.all where policy.enabled.contains(warning) {
            var window = conditions[warning, default: []]
            window.append(holds[warning] ?? false)
            if window.count > policy.sampleWindow { window.removeFirst(window.count - policy.sampleWindow) }
            conditions[warning] = window
            let count = window.filter { $0 }.count
            if let since = raisedAt[warning] {
                if count < policy.samplesToRaise, statistics.elapsed - since >= policy.minimumDuration {
                    raisedAt[warning] = nil
                    cleared.append(warning)
                }
            } else if count >= policy.samplesToRaise {
                raisedAt[warning] = statistics.elapsed
                raised.append(warning)
            }
        }
        return CallQualityReport(
            statistics: statistics, receive: receive, farEnd: farEnd, recentLossRate: recentLoss,
            activeWarnings: activeWarnings, raised: raised, cleared: cleared, elapsed: statistics.elapsed)
    }

    /// Whether the sent level stayed within the spread over the whole level window (which
    /// the history must cover).
    private func constantInputLevel(at statistics: StreamStatistics) -> Bool {
        guard let oldest = history.first, statistics.elapsed - oldest.elapsed >= policy.constantLevelWindow else {
            return false
        }
        let levels = history.filter { statistics.elapsed - $0.elapsed <= policy.constantLevelWindow }
            .compactMap { $0.audioLevel?.sent }
        guard levels.count >= 2, let low = levels.min(), let high = levels.max() else { return false }
        return high - low <= policy.constantLevelSpread
    }

    /// The loss between two snapshots of one direction, 0…1.
    static func lossRate(from old: StreamDirectionStatistics, to new: StreamDirectionStatistics) -> Double {
        let expected = new.expected > old.expected ? new.expected - old.expected : 0
        let lost = new.lost > old.lost ? new.lost - old.lost : 0
        return expected == 0 ? 0 : min(1, Double(lost) / Double(expected))
    }
}
