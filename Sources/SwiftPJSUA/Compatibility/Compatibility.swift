// The names of the earlier iOS-only swift-pjsua this package descends from, kept compiling
// (deprecated, each naming its replacement) so that an app written against it migrates with
// only the pattern edits the event payloads need. <doc:Migrating> lists every change and why.
// Everything here maps onto the current API and adds no behaviour of its own.

/// The earlier swift-pjsua's name for a call handle.
@available(*, deprecated, renamed: "Call")
public typealias CallID = Call

/// The earlier swift-pjsua's name for an account handle.
@available(*, deprecated, renamed: "Account")
public typealias AccountID = Account

/// The earlier swift-pjsua's name for one media stream of a call.
@available(*, deprecated, renamed: "MediaStream")
public typealias CallMediaInfo = MediaStream

extension Configuration {
    /// The earlier swift-pjsua's configuration: one transport of `transport`'s kind on `port`
    /// of every interface, logging at `logLevel`, and the system's default sound device,
    /// attached only between ``PJSUA/activateAudioDevice()`` and
    /// ``PJSUA/deactivateAudioDevice()`` (``SoundDeviceActivation/byApp``, the CallKit
    /// `didActivate` / `didDeactivate` flow the earlier package's README showed).
    ///
    /// Log lines go to ``SystemLogHandler`` (no ``logHandler`` is set): unified logging on
    /// Apple platforms, standard error elsewhere; the earlier package printed them.
    /// `Configuration()` is this package's own configuration, not this one: give at least the
    /// port or the transport.
    /// - Parameters:
    ///   - port: the local SIP port, 0 for any free one, up to 65535. A larger value leaves
    ///     the configuration without a transport, and ``PJSUA/start(_:)`` then throws
    ///     ``PJSUAUsageError/invalidConfiguration(_:)``.
    ///   - transport: `.udp`, `.tcp` or `.tls` (IPv4).
    ///   - logLevel: pjsip's log verbosity, 0 to 6.
    ///   - userAgent: the `User-Agent` header value.
    @available(*, deprecated, message: "use init(transports:userAgent:logLevel:logHandler:maxCalls:media:timers:)")
    public init(
        port: UInt32, transport: TransportType = .udp, logLevel: UInt32 = 4, userAgent: String = "swift-pjsua"
    ) {
        self.init(
            transports: UInt16(exactly: port).map { [TransportConfiguration(type: transport, port: $0)] } ?? [],
            userAgent: userAgent,
            logLevel: Int(clamping: logLevel),
            media: MediaConfiguration(soundDevice: .systemDefault, soundDeviceActivation: .byApp))
    }

    /// The earlier swift-pjsua's configuration on its default port, 5060: the same as
    /// ``init(port:transport:logLevel:userAgent:)`` with `port: 5060`.
    /// - Parameters:
    ///   - transport: `.udp`, `.tcp` or `.tls` (IPv4).
    ///   - logLevel: pjsip's log verbosity, 0 to 6.
    ///   - userAgent: the `User-Agent` header value.
    @available(*, deprecated, message: "use init(transports:userAgent:logLevel:logHandler:maxCalls:media:timers:)")
    public init(transport: TransportType, logLevel: UInt32 = 4, userAgent: String = "swift-pjsua") {
        self.init(port: 5060, transport: transport, logLevel: logLevel, userAgent: userAgent)
    }
}

extension RegistrationChange {
    /// The earlier swift-pjsua's name for whether the account is registered after this event.
    @available(*, deprecated, renamed: "isRegistered")
    public var active: Bool { isRegistered }
}

extension PushConfiguration {
    /// The earlier swift-pjsua's name for the Contact URI parameters.
    @available(*, deprecated, renamed: "uriParameters")
    public var params: String { uriParameters }
}

extension PJSUAError {
    /// The earlier swift-pjsua's raw `pj_status_t`.
    @available(*, deprecated, message: "use code, a PJSUAError.Code whose rawValue is the pj_status_t")
    public var status: Int32 { code.rawValue }
}
