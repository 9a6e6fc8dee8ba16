/// Everything ``PJSUA/start(_:)`` needs. All properties have working defaults; construct
/// with the memberwise initializer and change what you need.
public struct Configuration: Sendable {
    /// SIP transports to create, in order. Each one can carry a local account.
    public var transports: [TransportConfiguration]
    /// The `User-Agent` header value.
    public var userAgent: String
    /// pjsip log verbosity, 0 (off) to 6 (everything, including SIP messages at 4+).
    public var logLevel: Int
    /// Where log lines go; `nil` discards them.
    public var logHandler: (any PJSUALogHandler)?
    /// The most calls the engine holds at once, 1 up to the pjproject build's limit
    /// (`PJSUA_MAX_CALLS`, 1024 in the provisioned build; ``PJSUA/compiledCallLimit``). INVITEs beyond it are answered 486.
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

    /// The transports of ``init(transports:userAgent:logLevel:logHandler:maxCalls:media:timers:)``'s
    /// default: UDP and TCP on every interface, both on port 5060. With a TCP transport next
    /// to the UDP one, pjsip sends a request of 1300 bytes or more (`PJSIP_UDP_SIZE_THRESHOLD`)
    /// over TCP instead of as a fragmented UDP datagram, as RFC 3261 §18.1.1 asks, unless the
    /// account is bound to the UDP transport (``AccountConfiguration/transport``).
    public static var defaultTransports: [TransportConfiguration] {
        [TransportConfiguration(type: .udp), TransportConfiguration(type: .tcp)]
    }

    /// Creates a configuration; every parameter has a working default (UDP and TCP on port
    /// 5060, 32 calls, logging off, the system's default sound device).
    public init(
        transports: [TransportConfiguration] = Configuration.defaultTransports,
        userAgent: String = "swift-pjsua",
        logLevel: Int = 0,
        logHandler: (any PJSUALogHandler)? = nil,
        maxCalls: Int = 32,
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

/// The kind of a SIP transport.
public enum TransportType: String, Sendable, Hashable, CaseIterable {
    /// UDP over IPv4.
    case udp
    /// TCP over IPv4.
    case tcp
    /// UDP over IPv6.
    case udp6
    /// TCP over IPv6.
    case tcp6
    /// TLS over TCP, IPv4 (RFC 3261 §26.2, `transport=tls`).
    case tls
    /// TLS over TCP, IPv6.
    case tls6

    /// Whether the transport is connection-oriented (TCP or TLS).
    public var isReliable: Bool { self != .udp && self != .udp6 }

    /// Whether the transport runs over IPv6.
    public var isIPv6: Bool { self == .udp6 || self == .tcp6 || self == .tls6 }

    /// The `transport` URI parameter value that routes requests over this kind.
    public var uriParameter: String {
        switch self {
        case .udp, .udp6: "udp"
        case .tcp, .tcp6: "tcp"
        case .tls, .tls6: "tls"
        }
    }
}

/// TLS settings of a TLS transport. ``PJSUA/start(_:)`` throws
/// ``PJSUAUsageError/invalidConfiguration(_:)`` when a file named here cannot be read.
public struct TLSConfiguration: Sendable, Hashable {
    /// PEM file of the certificate authorities trusted to sign peers' certificates; `nil`
    /// uses ``systemTrust``: the platform's bundle found by probing
    /// ``systemCAFileCandidates`` (Debian's, Fedora's, `/etc/ssl/cert.pem`…), the system
    /// trust store on iOS, and no authorities when none exists (see ``SystemTrust``).
    public var caFile: String?
    /// PEM certificate presented to peers (needed to accept incoming TLS connections).
    public var certificateFile: String?
    /// PEM private key of ``certificateFile``.
    public var privateKeyFile: String?
    /// Verify the server's certificate chain and name when connecting; on by default. A
    /// failed check fails the request with a TLS error instead of sending it.
    public var verifiesServer: Bool
    /// Ask connecting clients for a certificate and verify it.
    public var verifiesClient: Bool

    /// Creates TLS settings: the system's trusted authorities, server verification on.
    public init(
        caFile: String? = nil, certificateFile: String? = nil, privateKeyFile: String? = nil,
        verifiesServer: Bool = true, verifiesClient: Bool = false
    ) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
        self.verifiesServer = verifiesServer
        self.verifiesClient = verifiesClient
    }

    /// Debian's CA bundle path, the default before the trust default probed the platform.
    @available(*, deprecated, message: "the default now probes the platform: use systemTrust or systemCAFileCandidates")
    public static let systemCAFile = "/etc/ssl/certs/ca-certificates.crt"
}

/// One SIP transport to bind.
public struct TransportConfiguration: Sendable, Hashable {
    /// UDP or TCP, IPv4 or IPv6.
    public var type: TransportType
    /// The local address to bind, for example `127.0.0.1`; `nil` binds every interface.
    public var bindAddress: String?
    /// The local port; 0 picks any free port (read it back with ``PJSUA/transports()``).
    public var port: UInt16
    /// TLS settings; used by ``TransportType/tls`` and ``TransportType/tls6`` only.
    public var tls: TLSConfiguration
    /// The address to advertise in Contact and Via instead of the bound one, for a host
    /// behind 1:1 NAT (a cloud VM whose public address is not on any interface); `nil`
    /// advertises ``bindAddress``. Accounts on this transport advertise it for RTP too,
    /// unless ``MediaConfiguration/rtpPublicAddress`` says otherwise. An IPv4 or IPv6
    /// address or a host name. Wraps `pjsua_transport_config.public_addr`. Local accounts
    /// (``PJSUA/addLocalAccount(on:isDefault:mediaInactivityTimeout:transportLossPolicy:)``)
    /// put it in their Contact on every pjproject; on pjproject 2.12 the UDP Contact of an
    /// account with a registrar still names the interface's address (pjsua took the
    /// configured one only from 2.13), which ``NATSignaling/contactRewrite`` corrects from
    /// the registrar's first answer.
    public var publicAddress: String?
    /// An edit of this transport's `pjsua_transport_config`, run on the engine thread just
    /// before `pjsua_transport_create`; `nil` (the default) for none. The engine puts nothing
    /// back, but reads ``bindAddress`` (not the struct) for RTP. See <doc:EscapeHatch>.
    public var nativeAdjustment: NativeTransportAdjustment?

    /// Creates a transport configuration (UDP on every interface, port 5060 by default).
    public init(
        type: TransportType = .udp, bindAddress: String? = nil, port: UInt16 = 5060,
        tls: TLSConfiguration = TLSConfiguration(), publicAddress: String? = nil
    ) {
        self.type = type
        self.bindAddress = bindAddress
        self.publicAddress = publicAddress
        self.port = port
        self.tls = tls
    }
}

/// Which sound device the conference bridge uses when audio is active.
public enum SoundDevice: Sendable, Hashable {
    /// No hardware: a null device clocks the bridge (`pjsua_set_null_snd_dev`), from start to
    /// shutdown (no idle auto-close). For servers, tests and machines without audio
    /// hardware; ``PJSUA/soundDeviceFrames(format:buffer:)`` shows what it would play.
    case null
    /// The system's default capture and playback devices (`pjsua_set_snd_dev`), the
    /// default. On a machine with no default device, attaching it (at ``PJSUA/start(_:)``,
    /// or at ``PJSUA/activateAudioDevice()`` with ``SoundDeviceActivation/byApp``) throws
    /// ``PJSUAError`` with code ``PJSUAError/Code/noDefaultSoundDevice`` and a message that
    /// names ``null``, rather than running calls with no audio.
    case systemDefault
}

/// When the sound device is attached to the conference bridge.
public enum SoundDeviceActivation: Sendable, Hashable {
    /// From `start` until `shutdown`.
    case automatic
    /// Only between ``PJSUA/activateAudioDevice()`` and ``PJSUA/deactivateAudioDevice()``;
    /// no device at all otherwise (`pjsua_set_no_snd_dev`). For apps whose audio session
    /// is owned by the system (CallKit's `didActivate`/`didDeactivate`): while no device
    /// is attached the bridge is not clocked and no audio flows.
    case byApp
}

/// Media settings of the engine.
public struct MediaConfiguration: Sendable, Hashable {
    /// The sound device.
    public var soundDevice: SoundDevice
    /// When the sound device is attached.
    public var soundDeviceActivation: SoundDeviceActivation
    /// The conference bridge's sampling rate in Hz (8000, 16000, 32000 or 48000).
    public var clockRate: Int
    /// Voice activity detection (silence suppression) on sent audio.
    public var voiceActivityDetection: Bool
    /// Local UDP ports for RTP and RTCP; each audio stream takes two consecutive ports.
    ///
    /// Each account starts looking for a free pair at a random even port of the range (not
    /// at its lower bound), so that two engines on one host, or another program holding the
    /// first ports, do not make calls fail with "Address already in use": pjsua tries 100
    /// pairs upwards from the start, wrapping within the range. On pjproject 2.13+ pjsua
    /// picks the start (`pjsua_transport_config.randomize_port`); on 2.12 the engine does.
    public var rtpPorts: ClosedRange<UInt16>
    /// The address RTP binds to and advertises in SDP (`c=`); `nil` uses the bind address
    /// of the account's SIP transport, or every interface when that has none.
    public var rtpAddress: String?
    /// The address to advertise in SDP for RTP instead of the bound one (1:1 NAT); `nil`
    /// uses the ``TransportConfiguration/publicAddress`` of the account's transport, else
    /// the RTP address itself. Wraps `pjsua_acc_config.rtp_cfg.public_addr`.
    public var rtpPublicAddress: String?
    /// Local ringback: the tones the engine plays to the sound device (conference slot 0)
    /// while an outgoing call is alerting without early media, looped; `nil` plays none.
    ///
    /// An outgoing call rings from the 180 Ringing of its early dialog (RFC 3960 §2: the
    /// UAC generates ringback itself when the callee sends no early media) until it is
    /// answered (``CallState/connecting`` or ``CallState/confirmed``), ends, or gets early
    /// media: an active audio stream, from a 183 Session Progress (or any 18x) with SDP,
    /// whose audio the sound device then plays instead. Should early media stop being
    /// active while the call is still early (the peer's UPDATE puts it on hold or inactive),
    /// the ringback comes back. Every ringing call shares one tone generator: it starts
    /// when the first call rings and is taken off the bridge when the last one stops (or at
    /// shutdown), so it holds one conference slot at most.
    ///
    /// The default is ``Tone/ringbackEurope`` (425 Hz, 1 s on, 4 s off): 400–450 Hz single
    /// tones are the ringback of most of the world's networks (ITU-T E.180 recommends
    /// that band), where 440 + 480 Hz (``Tone/ringbackNorthAmerica``) is North America's.
    /// Set `nil` when the app plays its own ringback (CallKit shows and plays its own call
    /// progress) or has no listener (a server). Checked at ``PJSUA/start(_:)``
    /// (``PJSUAUsageError/invalidConfiguration(_:)``: 1 to 32 valid tones). Played with
    /// `pjmedia_tonegen_create`, `pjmedia_tonegen_play`, `pjsua_conf_add_port` and
    /// `pjsua_conf_connect` to slot 0, removed with `pjsua_conf_remove_port`.
    public var localRingback: [Tone]?
    /// The audio codecs to offer first, most preferred first, as codec ids or their prefixes
    /// matched without regard to case (`opus`, `G722`, `PCMU/8000`; see ``PJSUA/codecs()``).
    ///
    /// Set at ``PJSUA/start(_:)`` with `pjsua_codec_set_priority`: the codecs listed get
    /// priorities 240, 239, … in this order (a prefix matching several codecs keeps
    /// pjmedia's order among them; listing a codec enables it), every other enabled codec
    /// keeps pjmedia's order below them (128 and down). An offer lists codecs in that
    /// order; an answer to a peer's offer follows the peer's order (pjmedia's default), so
    /// the codec of an incoming call is the first of the caller's that this list enables.
    /// ``PJSUA/setCodecPriority(_:_:)`` still changes single codecs afterwards (a priority
    /// of 241–255 puts a codec above this whole list).
    ///
    /// The default, ``defaultCodecOrder``, is opus, G.722, PCMU, PCMA; codecs of it that
    /// the pjproject build lacks are skipped. An empty list keeps pjmedia's own order
    /// (speex/16000, speex/8000, speex/32000, GSM, PCMU, PCMA, G.722, opus…). ``PJSUA/start(_:)``
    /// throws ``PJSUAUsageError/invalidConfiguration(_:)`` for an empty or repeated entry,
    /// one with a space or control character, more than 32 entries, or an entry of a list
    /// other than the default that matches no codec of the build.
    public var codecOrder: [String]
    /// ICE for calls' audio (``ICEConfiguration``); off by default. Accounts follow it
    /// unless ``AccountConfiguration/ice`` says otherwise.
    public var ice: ICEConfiguration = ICEConfiguration()
    /// The TURN server for ICE's relayed candidates (``TURNConfiguration``); `nil`, the
    /// default, for none. Accounts follow it unless ``AccountConfiguration/turn`` says otherwise.
    public var turn: TURNConfiguration?

    /// The codec order a user expects: Opus (wideband, loss-resilient), G.722 (wideband),
    /// then G.711 µ-law and A-law (narrowband, understood by every SIP device).
    public static let defaultCodecOrder = ["opus", "G722", "PCMU", "PCMA"]

    /// Creates media settings (the system's default sound device, 16 kHz, no VAD, RTP ports
    /// 4000–9999, European local ringback, opus first by default). Servers, tests and
    /// machines without audio hardware pass `soundDevice: .null`.
    public init(
        soundDevice: SoundDevice = .systemDefault,
        soundDeviceActivation: SoundDeviceActivation = .automatic,
        clockRate: Int = 16000,
        voiceActivityDetection: Bool = false,
        rtpPorts: ClosedRange<UInt16> = 4000...9999,
        rtpAddress: String? = nil,
        localRingback: [Tone]? = Tone.ringbackEurope,
        codecOrder: [String] = MediaConfiguration.defaultCodecOrder
    ) {
        self.localRingback = localRingback
        self.codecOrder = codecOrder
        self.soundDevice = soundDevice
        self.soundDeviceActivation = soundDeviceActivation
        self.clockRate = clockRate
        self.voiceActivityDetection = voiceActivityDetection
        self.rtpPorts = rtpPorts
        self.rtpAddress = rtpAddress
    }
}

/// A bound SIP transport, read back after start.
public struct TransportInfo: Sendable, Hashable {
    /// The handle to use with ``PJSUA/addLocalAccount(on:isDefault:mediaInactivityTimeout:transportLossPolicy:)``.
    public var transport: Transport
    /// UDP, TCP or TLS, IPv4 or IPv6.
    public var type: TransportType
    /// The address the transport is bound to and advertises.
    public var host: String
    /// The bound port (the real one when 0 was configured).
    public var port: UInt16
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
