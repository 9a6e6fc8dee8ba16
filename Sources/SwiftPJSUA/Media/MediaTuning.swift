/// How a receive jitter buffer throws frames away to bring its delay back down after a
/// burst (`pjmedia_jb_discard_algo`).
///
/// Both discarding algorithms aim at the burst level the buffer measured (how many frames
/// arrive back to back; about one on a clean link), not at the prefetch: a prefetch above
/// that level is drained by them too. Use ``none`` for a delay that stays at the prefetch.
public enum JitterBufferDiscard: Sendable, Hashable, CaseIterable {
    /// Never: frames leave only when played, so the delay stays at what the prefetch and
    /// any burst put in (`PJMEDIA_JB_DISCARD_NONE`); ``JitterBufferConfiguration/fixed(prefetch:)``
    /// uses it.
    case none
    /// At most one frame every 200 ms while the buffer holds at least twice the burst
    /// level and one frame more (`PJMEDIA_JB_DISCARD_STATIC`), meant for clock drift.
    case fixedRate
    /// More often the further the buffer is above the burst level: the excess is spread
    /// over 2 s at a burst level of one frame, up to 10 s at 100 frames, and never more
    /// than one frame per 200 ms (`PJMEDIA_JB_DISCARD_PROGRESSIVE`, pjmedia's default).
    case progressive
}

/// Settings of every call's receive jitter buffer (the `jb_*` fields of
/// `pjsua_media_config`), set at ``PJSUA/start(_:)`` for the engine's whole run.
///
/// Durations are turned into frames of the call's codec by pjmedia, rounded down. A frame
/// is the codec's decoder frame (``JitterBufferStatistics/frameDuration``): 20 ms for Opus
/// at its default packet time, 10 ms for G.711 and G.722, whose 20 ms packets carry two
/// frames. So a prefetch of 40 ms is two Opus frames or four G.711 frames, and it is the
/// same 40 ms of audio either way. `nil` leaves a value to pjmedia's stream defaults,
/// listed with each property.
///
/// The default, ``adaptive``, leaves everything to pjmedia: no initial prefetch, a prefetch
/// that adapts between one frame and 80 % of the 500 ms capacity to the jitter measured, and
/// progressive discard. That keeps the delay at about the network's jitter, which suits
/// conversation; ``fixed(prefetch:)`` trades that for a delay that does not move, for a
/// link whose jitter is known, or for measurements.
///
/// The prefetch is how much audio the buffer collects before it plays, when a stream
/// starts and again after it ran dry. What keeps the delay there afterwards is the discard
/// setting: ``JitterBufferDiscard/progressive`` and ``JitterBufferDiscard/fixedRate`` drop
/// frames whenever the buffer holds more than the burst level it measured (about one
/// frame on a clean link), whatever the prefetch, so with them a prefetch of 160 ms drains
/// to about 80 ms within four seconds. Only ``JitterBufferDiscard/none`` holds the delay
/// at the prefetch, which is why ``fixed(prefetch:)`` sets it.
public struct JitterBufferConfiguration: Sendable, Hashable {
    /// The prefetch a new stream starts with, before it has measured any jitter
    /// (`jb_init`); `nil`: none (pjmedia's default, 0). Zero disables prefetching.
    public var initialPrefetch: Duration?
    /// The smallest prefetch the buffer adapts down to (`jb_min_pre`); `nil`: one frame.
    public var minimumPrefetch: Duration?
    /// The largest prefetch the buffer adapts up to (`jb_max_pre`); `nil`: 80 % of
    /// ``capacity``.
    public var maximumPrefetch: Duration?
    /// The most audio the buffer holds (`jb_max`); `nil`: 500 ms.
    public var capacity: Duration?
    /// How the buffer sheds delay (`jb_discard_algo`); ``JitterBufferDiscard/progressive``
    /// by default, as in pjmedia.
    public var discard: JitterBufferDiscard

    /// The most a prefetch or the capacity may be: 10 s, beyond which audio is no
    /// longer a conversation.
    public static let maximumDuration: Duration = .seconds(10)

    /// Creates jitter-buffer settings; every `nil` keeps pjmedia's default.
    public init(
        initialPrefetch: Duration? = nil, minimumPrefetch: Duration? = nil, maximumPrefetch: Duration? = nil,
        capacity: Duration? = nil, discard: JitterBufferDiscard = .progressive
    ) {
        self.initialPrefetch = initialPrefetch
        self.minimumPrefetch = minimumPrefetch
        self.maximumPrefetch = maximumPrefetch
        self.capacity = capacity
        self.discard = discard
    }

    /// pjmedia's own behaviour: an adaptive prefetch and progressive discard.
    public static let adaptive = JitterBufferConfiguration()

    /// A delay that does not adapt: initial, minimum and maximum prefetch all `prefetch`, and
    /// no discard (``JitterBufferDiscard/none``), as pjmedia's own `pjmedia_jbuf_set_fixed`
    /// does. Received audio then waits `prefetch` in the buffer, give or take one frame,
    /// which ``JitterBufferStatistics/averageDelay`` shows, and
    /// ``JitterBufferStatistics/prefetch`` reads `prefetch` back.
    ///
    /// Give a multiple of the codec's frame (20 ms serves every codec the engine offers by
    /// default: `.milliseconds(20 * n)` for n packets). Without discard the buffer cannot
    /// shed a delay it gained: if the far end's clock runs faster than this end's, the
    /// delay grows by the difference until the buffer's ``capacity`` (500 ms by default) is
    /// full, and then the oldest frames go. Set ``discard`` afterwards to keep the prefetch
    /// fixed but let the delay shrink back to the measured jitter.
    ///
    /// - Parameter prefetch: the delay, 0 to ``capacity``, whole milliseconds.
    /// - Returns: settings with a fixed prefetch and no discard.
    public static func fixed(prefetch: Duration) -> JitterBufferConfiguration {
        JitterBufferConfiguration(
            initialPrefetch: prefetch, minimumPrefetch: prefetch, maximumPrefetch: prefetch, discard: .none)
    }
}

extension JitterBufferConfiguration: Validatable {
    /// Whole milliseconds, as `pjsua_media_config` takes them, or -1 for pjmedia's default.
    static func milliseconds(_ duration: Duration?) -> Int32 {
        guard let duration else { return -1 }
        let (seconds, attoseconds) = duration.components
        return Int32(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    func validate() throws(PJSUAUsageError) {
        let fields: [(String, Duration?)] = [
            ("initialPrefetch", initialPrefetch), ("minimumPrefetch", minimumPrefetch),
            ("maximumPrefetch", maximumPrefetch), ("capacity", capacity),
        ]
        for (name, value) in fields {
            guard let value else { continue }
            guard value >= .zero, value <= Self.maximumDuration else {
                throw .invalidConfiguration("jitterBuffer.\(name) must be 0 to 10 s, got \(value)")
            }
            guard value == .milliseconds(Int64(Self.milliseconds(value))) else {
                throw .invalidConfiguration("jitterBuffer.\(name) must be whole milliseconds, got \(value)")
            }
        }
        if let capacity, capacity < .milliseconds(20) {
            throw .invalidConfiguration("jitterBuffer.capacity must hold at least one 20 ms frame, got \(capacity)")
        }
        if let minimumPrefetch, let maximumPrefetch, minimumPrefetch > maximumPrefetch {
            throw .invalidConfiguration(
                "jitterBuffer.minimumPrefetch \(minimumPrefetch) is above maximumPrefetch \(maximumPrefetch)")
        }
        if let initialPrefetch, initialPrefetch > .zero {
            if let minimumPrefetch, initialPrefetch < minimumPrefetch {
                throw .invalidConfiguration(
                    "jitterBuffer.initialPrefetch \(initialPrefetch) is below minimumPrefetch \(minimumPrefetch)")
            }
            if let maximumPrefetch, initialPrefetch > maximumPrefetch {
                throw .invalidConfiguration(
                    "jitterBuffer.initialPrefetch \(initialPrefetch) is above maximumPrefetch \(maximumPrefetch)")
            }
        }
        let largest = [initialPrefetch, minimumPrefetch, maximumPrefetch].compactMap { $0 }.max()
        if let largest, largest > (capacity ?? .milliseconds(500)) {
            throw .invalidConfiguration(
                "jitterBuffer prefetch \(largest) does not fit its capacity \(capacity ?? .milliseconds(500))")
        }
    }
}

/// Settings of the Opus encoder and of what the engine asks of the far end's encoder in
/// SDP (`pjmedia_codec_opus_set_default_param`), set at ``PJSUA/start(_:)`` for every call.
///
/// The defaults are pjmedia's own: bitrate chosen by the encoder (about 24–32 kbit/s for
/// wideband voice), complexity 5, 20 ms packets, no DTX, in-band FEC advertised and used,
/// and 5 % expected loss. In-band FEC (RFC 6716 §2.1.7, LBRR) only helps when both hold:
/// the receiver says `useinbandfec=1` in its SDP (``inBandFEC`` on the receiving side), and
/// the sender's encoder expects loss (``expectedPacketLoss`` above 0 on the sending side):
/// Opus adds the redundancy in proportion to the loss it is told to expect.
public struct OpusConfiguration: Sendable, Hashable {
    /// The encoder's target bitrate in bit/s, 6000–510000, also offered to the far end as
    /// `maxaveragebitrate`; `nil`: the encoder chooses (pjmedia's default).
    public var bitrate: Int?
    /// The encoder's complexity, 0 (cheapest) to 10 (best quality per bit); 5 by default.
    public var complexity: Int
    /// The audio in one packet: 10, 20, 40 or 60 ms; 20 ms by default, the frame every
    /// other codec uses.
    public var packetTime: Duration
    /// Discontinuous transmission: during silence the encoder sends a packet only every
    /// 400 ms (`usedtx=1`); off by default, as a silent line otherwise looks dead.
    public var discontinuousTransmission: Bool
    /// In-band forward error correction: this end offers `useinbandfec=1` (its decoder
    /// recovers a lost frame from the redundancy in the next packet) and its encoder adds
    /// that redundancy when the far end offers it; on by default.
    public var inBandFEC: Bool
    /// The packet loss the encoder plans for, 0–99 %; 5 % by default. 0 makes Opus send no
    /// FEC at all, whatever ``inBandFEC`` says.
    public var expectedPacketLoss: Int

    /// Creates Opus settings; the defaults are pjmedia's.
    public init(
        bitrate: Int? = nil, complexity: Int = 5, packetTime: Duration = .milliseconds(20),
        discontinuousTransmission: Bool = false, inBandFEC: Bool = true, expectedPacketLoss: Int = 5
    ) {
        self.bitrate = bitrate
        self.complexity = complexity
        self.packetTime = packetTime
        self.discontinuousTransmission = discontinuousTransmission
        self.inBandFEC = inBandFEC
        self.expectedPacketLoss = expectedPacketLoss
    }
}

extension OpusConfiguration: Validatable {
    /// The packet times the Opus codec of pjmedia encodes.
    static let packetTimes: [Duration] = [.milliseconds(10), .milliseconds(20), .milliseconds(40), .milliseconds(60)]

    func validate() throws(PJSUAUsageError) {
        if let bitrate, !(6000...510_000).contains(bitrate) {
            throw .invalidConfiguration("opus.bitrate must be 6000 to 510000 bit/s, got \(bitrate)")
        }
        guard (0...10).contains(complexity) else {
            throw .invalidConfiguration("opus.complexity must be 0 to 10, got \(complexity)")
        }
        guard Self.packetTimes.contains(packetTime) else {
            throw .invalidConfiguration("opus.packetTime must be 10, 20, 40 or 60 ms, got \(packetTime)")
        }
        guard (0...99).contains(expectedPacketLoss) else {
            throw .invalidConfiguration("opus.expectedPacketLoss must be 0 to 99 %, got \(expectedPacketLoss)")
        }
    }

    /// The packet time in whole milliseconds.
    var packetMilliseconds: Int { Int(JitterBufferConfiguration.milliseconds(packetTime)) }
}
