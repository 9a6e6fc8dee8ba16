/// Everything ``PJSUA/start(_:)`` needs. All properties have working defaults; construct
/// with the memberwise initializer and change what you need.
public struct Configuration: Sendable {
    /// SIP transports to create, in order. Each one can carry a local account.
    public var transports: [TransportConfiguration]
    /// The `User-Agent` header value.
    public var userAgent: String
    /// pjsip log verbosity, 0 (off, the default) to 6 (everything, including SIP messages at 4+).
    public var logLevel: Int
    /// Where log lines go. `nil` (the default) sends them, when ``logLevel`` is above 0, to
    /// ``SystemLogHandler``: unified logging on Apple platforms, standard error elsewhere.
    public var logHandler: (any PJSUALogHandler)?
    /// The most calls the engine holds at once, 1 up to the pjproject build's limit
    /// (`PJSUA_MAX_CALLS`, ``PJSUA/compiledCallLimit``: 1024 in the provisioned builds, 4 in
    /// the pinned iOS xcframework); ``PJSUA/start(_:)`` throws
    /// ``PJSUAUsageError/invalidConfiguration(_:)`` outside that range. Defaults to
    /// ``defaultMaxCalls``. INVITEs beyond it are answered 486.
    public var maxCalls: Int
    /// Media settings.
    public var media: MediaConfiguration
    /// SIP transaction timers (RFC 3261 §17). They apply to the whole process while the
    /// engine runs.
    public var timers: SIPTimers
    /// Edits of the pjsua structs the engine builds, for pjsua settings it does not model;
    /// none by default. See <doc:EscapeHatch> for what they void.
    public var nativeAdjustments: NativeAdjustments = NativeAdjustments()
    /// Nameservers for pjsip's asynchronous resolver, SRV lookups and failover between
    /// SRV targets; none by default (the system's `getaddrinfo`). See ``DNSConfiguration``.
    public var dns: DNSConfiguration = DNSConfiguration()
    /// Whether the engine watches the host's network and handles each change itself
    /// (``NetworkChangeHandling/automatic(_:)``) or leaves it to the app's calls of
    /// ``PJSUA/handleNetworkChange(_:)`` (``NetworkChangeHandling/manual``, the default).
    /// With `.automatic`, ``PJSUA/start(_:)`` throws ``NetworkMonitorError`` when the monitor
    /// cannot start (a sandbox without netlink), and
    /// ``PJSUAUsageError/invalidConfiguration(_:)`` for a debounce outside 50 ms to 1 min.
    public var networkChangeHandling: NetworkChangeHandling = .manual
    /// STUN servers, for server-reflexive addresses (ICE candidates, or the RTP address
    /// without ICE); none by default. See ``STUNConfiguration``.
    public var stun: STUNConfiguration = STUNConfiguration()
    /// Limits on out-of-dialog requests: a per-source rate and a cap on calls ringing at once
    /// (``IncomingLimits``); by default 10 requests per second in bursts of 20 per source
    /// and 4 ringing calls. ``PJSUA/start(_:)`` throws ``PJSUAUsageError/invalidConfiguration(_:)``
    /// for values out of range. See <doc:ExposedToTheInternet>.
    public var limits: IncomingLimits = IncomingLimits()

    /// The transports of ``init(transports:userAgent:logLevel:logHandler:maxCalls:media:timers:)``'s
    /// default: UDP and TCP on every interface, both on port 5060. With a TCP transport next
    /// to the UDP one, pjsip sends a request of 1300 bytes or more (`PJSIP_UDP_SIZE_THRESHOLD`)
    /// over TCP instead of as a fragmented UDP datagram, as RFC 3261 §18.1.1 asks, unless the
    /// account is bound to the UDP transport (``AccountConfiguration/transport``).
    public static var defaultTransports: [TransportConfiguration] {
        [TransportConfiguration(type: .udp), TransportConfiguration(type: .tcp)]
    }

    /// The default of ``maxCalls``: 32 calls, or the build's limit when that is lower (4 on
    /// the pinned iOS xcframework), so a default configuration starts on every build.
    public static var defaultMaxCalls: Int { min(32, PJSUA.compiledCallLimit) }

    /// Creates a configuration; every parameter has a working default (UDP and TCP on port
    /// 5060, ``defaultMaxCalls`` calls, logging off, the system's default sound device).
    public init(
        transports: [TransportConfiguration] = Configuration.defaultTransports,
        userAgent: String = "swift-pjsua",
        logLevel: Int = 0,
        logHandler: (any PJSUALogHandler)? = nil,
        maxCalls: Int = Configuration.defaultMaxCalls,
        media: MediaConfiguration = MediaConfiguration(),
        timers: SIPTimers = SIPTimers()
    ) {
        self.transports = transports
        self.userAgent = userAgent
        self.logLevel = logLevel
        self.logHandler = logHandler
        self.maxCalls = maxCalls
        self.media = media
        self.timers = timers
    }
}

/// SIP transaction timers (RFC 3261 §17.1.1.1). A client transaction that gets no final
/// response fails with 408 after 64 × T1 (timers B and F: 32 s with the defaults).
/// Each timer must be 1 ms up to `UInt32.max / 64` ms (about 18.6 h), so that 64 × T1 fits
/// pjsip's 32-bit milliseconds; ``PJSUA/start(_:)`` throws
/// ``PJSUAUsageError/invalidConfiguration(_:)`` otherwise.
public struct SIPTimers: Sendable, Hashable {
    /// T1, the round-trip time estimate (RFC 3261 default 500 ms).
    public var t1: Duration
    /// T2, the longest retransmit interval for non-INVITE requests and INVITE responses
    /// (default 4 s).
    public var t2: Duration
    /// T4, how long the network may hold a message (default 5 s).
    public var t4: Duration

    /// Creates timers; the defaults are RFC 3261's.
    public init(t1: Duration = .milliseconds(500), t2: Duration = .seconds(4), t4: Duration = .seconds(5)) {
        self.t1 = t1
        self.t2 = t2
        self.t4 = t4
    }

    /// How long a client transaction waits for a final response before failing with 408
    /// (64 × T1).
    public var transactionTimeout: Duration { t1 * 64 }
}

extension Configuration: Validatable {
    /// The pass ``PJSUA/start(_:)`` makes before creating pjsua: the engine's own settings,
    /// then every value the configuration holds, in the order they are declared.
    func validate() throws(PJSUAUsageError) {
        let limit = Native.buildCallLimit
        guard (1...limit).contains(maxCalls) else {
            throw .invalidConfiguration("maxCalls must be 1...\(limit), got \(maxCalls)")
        }
        guard !transports.isEmpty else {
            throw .invalidConfiguration("at least one transport is needed")
        }
        guard !userAgent.containsLineBreakOrControl else {
            throw .invalidConfiguration("userAgent must not contain control characters")
        }
        guard (0...6).contains(logLevel) else {
            throw .invalidConfiguration("logLevel must be 0...6, got \(logLevel)")
        }
        for transport in transports { try transport.validate() }
        try media.validate()
        try timers.validate()
        try dns.validate()
        try networkChangeHandling.validate()
        try stun.validate()
        try limits.validate()
    }
}

extension SIPTimers: Validatable {
    func validate() throws(PJSUAUsageError) {
        // pjsip keeps the timers in 32-bit milliseconds, and timer B/F is 64 × T1; zero would
        // retransmit in a tight loop.
        let longestTimer = Duration.milliseconds(Int64(UInt32.max / 64))
        guard [t1, t2, t4].allSatisfy({ $0 >= .milliseconds(1) && $0 <= longestTimer }) else {
            throw .invalidConfiguration("SIP timers T1, T2 and T4 must be 1 ms...\(longestTimer)")
        }
    }
}

/// Receives pjsip's log lines.
///
/// Called on whichever thread pjsip logs from (the engine thread or one of pjsua's
/// worker threads); implementations must be quick and must not call back into the engine.
public protocol PJSUALogHandler: Sendable {
    /// One log line, without its trailing newline.
    /// - Parameters:
    ///   - level: pjsip's level, 1 (error) to 6 (trace).
    ///   - message: the text, with pjsip's time and sender prefix.
    func log(level: Int, message: String)
}
