/// RTP and RTCP counters of one audio stream (`pjsua_call_get_stream_stat`).
public struct StreamStatistics: Sendable, Hashable {
    /// RTP packets sent.
    public var packetsSent: UInt64
    /// RTP payload bytes sent.
    public var bytesSent: UInt64
    /// RTP packets received.
    public var packetsReceived: UInt64
    /// RTP payload bytes received.
    public var bytesReceived: UInt64
    /// Packets lost on the receive side, as counted from sequence numbers.
    public var packetsLost: UInt64
    /// Current receive jitter.
    public var jitter: Duration
    /// The last round-trip time measured by RTCP; zero before the first report.
    public var roundTripTime: Duration
    /// How long received audio waits in the jitter buffer on average (`pjmedia_jb_state.avg_delay`).
    public var jitterBufferDelay: Duration
}
