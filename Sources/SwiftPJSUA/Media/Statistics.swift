/// RTP and RTCP figures of one audio stream, both directions (`pjsua_call_get_stream_stat`).
///
/// ``receive`` is what this side received, measured here from RTP sequence numbers and
/// arrival times. ``farEnd`` is what the far end received from us, as its RTCP receiver
/// reports (RFC 3550 §6.4) told us: its counts change only when a report arrives, about
/// every 5 s (pjmedia's `PJMEDIA_RTCP_INTERVAL`), and stay zero before the first one.
///
/// The flat fields before ``receive`` are the first figures this type carried; they read
/// and write the nested ones and stay for existing callers.
public struct StreamStatistics: Sendable, Hashable {
    /// RTP packets sent (``farEnd``'s ``StreamDirectionStatistics/packets``).
    public var packetsSent: UInt64 {
        get { farEnd.packets }
        set { farEnd.packets = newValue }
    }
    /// RTP payload bytes sent (``farEnd``'s ``StreamDirectionStatistics/bytes``).
    public var bytesSent: UInt64 {
        get { farEnd.bytes }
        set { farEnd.bytes = newValue }
    }
    /// RTP packets received (``receive``'s ``StreamDirectionStatistics/packets``).
    public var packetsReceived: UInt64 {
        get { receive.packets }
        set { receive.packets = newValue }
    }
    /// RTP payload bytes received (``receive``'s ``StreamDirectionStatistics/bytes``).
    public var bytesReceived: UInt64 {
        get { receive.bytes }
        set { receive.bytes = newValue }
    }
    /// Packets lost on the receive side, as counted from sequence numbers (``receive``'s
    /// ``StreamDirectionStatistics/lost``).
    public var packetsLost: UInt64 {
        get { receive.lost }
        set { receive.lost = newValue }
    }
    /// Current receive jitter (``receive``'s last jitter).
    public var jitter: Duration {
        get { receive.jitter.last }
        set { receive.jitter.last = newValue }
    }
    /// The last round-trip time measured by RTCP; zero before the first report.
    public var roundTripTime: Duration {
        get { roundTrip.last }
        set { roundTrip.last = newValue }
    }
    /// How long received audio waits in the jitter buffer on average (`pjmedia_jb_state.avg_delay`).
    public var jitterBufferDelay: Duration {
        get { jitterBuffer.averageDelay }
        set { jitterBuffer.averageDelay = newValue }
    }

    /// What this side received (`pjmedia_rtcp_stat.rx`).
    public var receive: StreamDirectionStatistics
    /// What the far end received from us, from its RTCP receiver reports
    /// (`pjmedia_rtcp_stat.tx`): ``StreamDirectionStatistics/packets`` and
    /// ``StreamDirectionStatistics/bytes`` are what we sent, the loss and jitter are the far
    /// end's.
    public var farEnd: StreamDirectionStatistics
    /// Round-trip times from RTCP's LSR/DLSR fields (RFC 3550 §6.4.1); all zero before the
    /// first report that carries them.
    public var roundTrip: DurationStatistics
    /// The receive side's jitter buffer (`pjmedia_jb_state`).
    public var jitterBuffer: JitterBufferStatistics
    /// The audio levels at the call's conference port; `nil` when the call is not connected
    /// to the conference bridge.
    public var audioLevel: AudioLevel?
    /// The stream's codec, for example `PCMU/8000` (`pjmedia_stream_info.fmt`); empty when
    /// unknown.
    public var codec: String
    /// The audio carried by one RTP packet (`pjmedia_codec_param.info.frm_ptime` times the
    /// frames per packet); 20 ms when unknown.
    public var packetTime: Duration
    /// How long the stream has run (`pjmedia_rtcp_stat.start` to now).
    public var elapsed: Duration

    /// Creates statistics, for tests and previews of app code; the engine makes these from
    /// `pjsua_stream_stat`.
    public init(
        receive: StreamDirectionStatistics = StreamDirectionStatistics(),
        farEnd: StreamDirectionStatistics = StreamDirectionStatistics(),
        roundTrip: DurationStatistics = DurationStatistics(),
        jitterBuffer: JitterBufferStatistics = JitterBufferStatistics(),
        audioLevel: AudioLevel? = nil,
        codec: String = "",
        packetTime: Duration = .milliseconds(20),
        elapsed: Duration = .zero
    ) {
        self.receive = receive
        self.farEnd = farEnd
        self.roundTrip = roundTrip
        self.jitterBuffer = jitterBuffer
        self.audioLevel = audioLevel
        self.codec = codec
        self.packetTime = packetTime
        self.elapsed = elapsed
    }
}

/// One direction of an RTP stream (`pjmedia_rtcp_stream_stat`).
public struct StreamDirectionStatistics: Sendable, Hashable {
    /// RTP packets: received, for ``StreamStatistics/receive``; sent, for
    /// ``StreamStatistics/farEnd``.
    public var packets: UInt64
    /// RTP payload bytes, as ``packets``.
    public var bytes: UInt64
    /// Packets lost: counted from sequence numbers on the receive side; the cumulative
    /// number lost of the far end's last receiver report (RFC 3550 §6.4.1) for the far end.
    public var lost: UInt64
    /// Packets discarded (too late for the jitter buffer, or invalid); receive side only.
    public var discarded: UInt64
    /// Packets that arrived out of order; receive side only.
    public var reordered: UInt64
    /// Duplicate packets; receive side only.
    public var duplicated: UInt64
    /// The packets this direction's loss applies to: received plus lost on the receive
    /// side; for the far end, the packets we had sent when its last report was made
    /// (estimated from the report's arrival time, as pjmedia keeps no expected count).
    public var expected: UInt64
    /// Whether pjmedia saw bursts of consecutive losses (`loss_type.burst`).
    public var burstLoss: Bool
    /// Whether pjmedia saw isolated losses (`loss_type.random`).
    public var randomLoss: Bool
    /// Interarrival jitter (RFC 3550 §6.4.1): measured here on the receive side, as the far
    /// end reported it for the far end.
    public var jitter: DurationStatistics
    /// Receiver reports that updated these figures (`update_cnt`); for the far end, the
    /// reports received.
    public var reports: Int

    /// The fraction of ``expected`` packets lost, 0…1; 0 before anything was expected.
    public var lossRate: Double {
        expected == 0 ? 0 : min(1, Double(lost) / Double(expected))
    }

    /// Creates one direction's figures, for tests and previews of app code.
    public init(
        packets: UInt64 = 0, bytes: UInt64 = 0, lost: UInt64 = 0, discarded: UInt64 = 0, reordered: UInt64 = 0,
        duplicated: UInt64 = 0, expected: UInt64? = nil, burstLoss: Bool = false, randomLoss: Bool = false,
        jitter: DurationStatistics = DurationStatistics(), reports: Int = 0
    ) {
        self.packets = packets
        self.bytes = bytes
        self.lost = lost
        self.discarded = discarded
        self.reordered = reordered
        self.duplicated = duplicated
        self.expected = expected ?? packets + lost
        self.burstLoss = burstLoss
        self.randomLoss = randomLoss
        self.jitter = jitter
        self.reports = reports
    }
}

/// Minimum, mean, maximum and last of a series of durations (`pj_math_stat`, kept by
/// pjmedia in microseconds).
public struct DurationStatistics: Sendable, Hashable {
    /// How many values the figures summarise; 0 leaves the others zero.
    public var samples: Int
    /// The smallest value.
    public var minimum: Duration
    /// The mean value.
    public var mean: Duration
    /// The largest value.
    public var maximum: Duration
    /// The most recent value.
    public var last: Duration

    /// Creates a summary, for tests and previews of app code.
    public init(
        samples: Int = 0, minimum: Duration = .zero, mean: Duration = .zero, maximum: Duration = .zero,
        last: Duration = .zero
    ) {
        self.samples = samples
        self.minimum = minimum
        self.mean = mean
        self.maximum = maximum
        self.last = last
    }
}

/// The state of a receive jitter buffer (`pjmedia_jb_state`).
public struct JitterBufferStatistics: Sendable, Hashable {
    /// How long received audio waits in the buffer, averaged over the stream's life
    /// (`avg_delay`): pjmedia samples the audio the buffer holds (in frames of
    /// ``frameDuration``) at the first playout after each arrival, so a steady buffer of
    /// four 10 ms frames reads 40 ms. A running mean from the stream's start, so a change
    /// shows slowly.
    public var averageDelay: Duration
    /// The shortest wait (`min_delay`).
    public var minimumDelay: Duration
    /// The longest wait (`max_delay`).
    public var maximumDelay: Duration
    /// The wait's standard deviation (`dev_delay`).
    public var delayDeviation: Duration
    /// The current prefetch, in frames of ``frameDuration`` (`prefetch`): two for a 40 ms
    /// prefetch of Opus, four for the same 40 ms of G.711.
    public var prefetchFrames: Int
    /// The frame the buffer counts in: the codec's decoder frame (`frm_ptime`), which is
    /// 20 ms for Opus (its packet time) but 10 ms for G.711 and G.722, whose 20 ms packets
    /// carry two frames each; zero when no codec is known yet.
    public var frameDuration: Duration
    /// Frames the buffer found missing when asked for them (`lost`): frames that never
    /// arrived, and also the frames ``JitterBufferDiscard/progressive`` discard dropped,
    /// whose gap pjmedia hands on as missing so the decoder conceals it.
    public var lostFrames: UInt64
    /// Frames it threw away as too late or duplicated, to make room when full, or to shrink
    /// the delay with ``JitterBufferDiscard/fixedRate`` discard (`discard`).
    public var discardedFrames: UInt64
    /// Times it was asked for a frame while empty (`empty`).
    public var emptyEvents: UInt64

    /// Creates jitter-buffer figures, for tests and previews of app code.
    public init(
        averageDelay: Duration = .zero, minimumDelay: Duration = .zero, maximumDelay: Duration = .zero,
        delayDeviation: Duration = .zero, prefetchFrames: Int = 0, lostFrames: UInt64 = 0,
        discardedFrames: UInt64 = 0, emptyEvents: UInt64 = 0, frameDuration: Duration = .zero
    ) {
        self.averageDelay = averageDelay
        self.minimumDelay = minimumDelay
        self.maximumDelay = maximumDelay
        self.delayDeviation = delayDeviation
        self.prefetchFrames = prefetchFrames
        self.lostFrames = lostFrames
        self.discardedFrames = discardedFrames
        self.emptyEvents = emptyEvents
        self.frameDuration = frameDuration
    }

    /// The current prefetch as a duration: ``prefetchFrames`` × ``frameDuration``, what a
    /// ``JitterBufferConfiguration`` prefetch of whole frames reads back whatever the codec.
    public var prefetch: Duration { frameDuration * prefetchFrames }
}

/// The signal levels at a call's conference port (`pjsua_conf_get_signal_level`).
///
/// Levels are pjmedia's 0…255 scale: the mean absolute sample value mapped through G.711
/// µ-law, so it grows about logarithmically with loudness; 0 is digital silence.
public struct AudioLevel: Sendable, Hashable {
    /// The level of the audio sent to the far end (the bridge's signal into the call's port;
    /// the microphone, player or tone mixed for it), 0…255.
    public var sent: Int
    /// The level of the audio received from the far end (the call's port into the bridge),
    /// 0…255.
    public var received: Int

    /// Creates levels, for tests and previews of app code.
    public init(sent: Int, received: Int) {
        self.sent = sent
        self.received = received
    }
}
