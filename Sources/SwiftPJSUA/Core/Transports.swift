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

extension TransportConfiguration: Validatable {
    func validate() throws(PJSUAUsageError) {
        // pjlib asserts on an empty host and on one of 254 characters or more.
        try HostPort.validateAddress(publicAddress)
        try HostPort.validateAddress(bindAddress)
        if type == .tls || type == .tls6, let file = tls.firstUnreadableFile {
            throw .invalidConfiguration("TLS file is missing or unreadable: \(file)")
        }
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

    /// Creates a value with every field given, for tests and previews.
    /// - Parameters:
    ///   - transport: its handle.
    ///   - type: its protocol.
    ///   - host: the bound or published host.
    ///   - port: the port.
    public init(transport: Transport, type: TransportType, host: String, port: UInt16) {
        self.transport = transport
        self.type = type
        self.host = host
        self.port = port
    }
}
