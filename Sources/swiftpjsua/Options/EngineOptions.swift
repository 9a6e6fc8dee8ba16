import SwiftPJSUA

/// The options every command takes ("options for every command" in the usage text), with
/// the account options when the command takes them, and the engine configuration they make.
struct EngineOptions {
    /// The options with a value that every command takes.
    static let valued: Set<String> = Set([
        "log-level", "bind", "codecs", "rtp-ports", "t1", "rate-limit", "max-ringing",
    ])
    .union(DNSOptions.names).union(NATOptions.names).union(MediaNATOptions.valued).union(MediaTuningOptions.valued)
    /// The flags every command takes.
    static let flags: Set<String> = MediaNATOptions.flags.union(NATOptions.flags).union(MediaTuningOptions.flags)

    /// The account options (defaults for a command that takes none): the transport, and the
    /// account `call`, `listen` and `register` add.
    let account: AccountOptions
    /// The engine's configuration.
    let configuration: Configuration
    /// Whether `--stun`, `--ice` or `--turn` was given: `call` and `listen` then print each
    /// call's media path (``MediaNATOptions/report(_:engine:printer:)``).
    let reportsMediaPath: Bool

    /// Reads the options; SIP and RTP bind `--bind`, else `defaultBind` (`nil`: every address),
    /// on `port`. `--max-calls` (`listen`) and `--follow-network` (`listen`, `call`,
    /// `register`) are read here too, as only the commands that declare them can be given them.
    /// - Parameter account: the account options when the command has read them already.
    /// - Throws: ``UsageError`` for a bad option.
    init(_ options: Options, port: UInt16, defaultBind: String? = nil, account: AccountOptions? = nil)
        throws(UsageError)
    {
        let account = if let account { account } else { try AccountOptions(options) }
        let transport = account.transportConfiguration(
            bind: options.string("bind") ?? defaultBind, port: port, publicAddress: account.nat.publicAddress)
        var config = Configuration(
            transports: [transport],
            userAgent: "swiftpjsua",
            // The tool plays and records files and runs on servers: no sound hardware.
            media: MediaConfiguration(soundDevice: .null))
        // Above 0, the engine's default handler takes the lines (standard error here).
        if let level = try options.int("log-level", in: 0...6) { config.logLevel = level }
        if let maxCalls = try options.int("max-calls", in: 1...PJSUA.compiledCallLimit) { config.maxCalls = maxCalls }
        if let codecs = options.string("codecs") {
            // "pjmedia" or "": pjmedia's own order (the engine's empty list).
            config.media.codecOrder = codecs == "pjmedia" ? [] : codecs.split(separator: ",").map(String.init)
        }
        if let text = options.string("rtp-ports") { config.media.rtpPorts = try Self.rtpPorts(text) }
        config.dns.nameservers = try DNSOptions.nameservers(options)
        // SIP's T1 (RFC 3261 §17.1.1.1): a request nobody answers fails after 64 × T1.
        if let t1 = try options.int("t1", in: 1...60_000) { config.timers.t1 = .milliseconds(t1) }
        // Re-register, and re-INVITE confirmed calls, after each settled change of the network.
        if options.flags.contains("follow-network") {
            config.networkChangeHandling = .automatic(AutomaticNetworkChange())
        }
        config.limits = try Self.limits(options)
        try MediaNATOptions.apply(options, to: &config)
        try MediaTuningOptions.apply(options, to: &config)
        // Behind NAT64 the STUN server is reachable only at the IPv6 address DNS64
        // synthesizes for it: pjsua then resolves it for IPv6 alone.
        if account.nat.nat64.isEnabled { config.stun.triesIPv6 = true }
        self.account = account
        configuration = config
        reportsMediaPath = MediaNATOptions.isUsed(options)
    }

    /// `--rate-limit off|N/B` (new requests per second and burst, per source address) and
    /// `--max-ringing off|N` (calls ringing at once): ``Configuration/limits``, the engine's
    /// defaults (10/20 and 4) when not given.
    static func limits(_ options: Options) throws(UsageError) -> IncomingLimits {
        var limits = IncomingLimits()
        if let text = options.string("rate-limit") {
            if text == "off" {
                limits.requestRate = nil
            } else {
                let parts = text.split(separator: "/", omittingEmptySubsequences: false).map { Int($0) }
                guard parts.count == 2, let rate = parts[0], let burst = parts[1], rate > 0, burst >= rate else {
                    throw UsageError(message: "--rate-limit must be off or N/B (requests per second, burst >= N)")
                }
                limits.requestRate = IncomingLimits.RequestRate(perSecond: rate, burst: burst)
            }
        }
        if let text = options.string("max-ringing") {
            if text == "off" {
                limits.maxRingingCalls = nil
            } else {
                guard let count = Int(text), count >= 1 else {
                    throw UsageError(message: "--max-ringing must be off or a number of calls >= 1")
                }
                limits.maxRingingCalls = count
            }
        }
        return limits
    }

    /// `--rtp-ports A-B`: an inclusive range of at least two UDP ports, 1–65535.
    static func rtpPorts(_ text: String) throws(UsageError) -> ClosedRange<UInt16> {
        let bounds = text.split(separator: "-", omittingEmptySubsequences: false).map { UInt16($0) }
        guard bounds.count == 2, let low = bounds[0], let high = bounds[1], low > 0, low < high else {
            throw UsageError(message: "--rtp-ports must be A-B with 1 <= A < B <= 65535, got \(text)")
        }
        return low...high
    }
}
