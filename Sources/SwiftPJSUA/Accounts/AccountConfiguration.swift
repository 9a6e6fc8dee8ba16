/// A SIP header as a name and a value, for example `X-Tenant: blue`.
public struct SIPHeader: Sendable, Hashable {
    /// The header name, without the colon.
    public var name: String
    /// The header value, as it appears after the colon.
    public var value: String

    /// Creates a header; neither part may contain CR or LF.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// Digest credentials for a realm (RFC 3261 §22, RFC 2617).
public struct Credential: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret: the password itself, or the precomputed HA1 `MD5(username:realm:password)`.
    ///
    /// Every rendering of it, `"\(secret)"`, `String(reflecting:)`, `dump` and `Mirror`,
    /// shows only its kind: `password(<redacted>)` or `ha1(<redacted>)`.
    public enum Secret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
        CustomReflectable
    {
        /// The password itself.
        case password(String)
        /// The precomputed HA1, as 32 lowercase hex digits.
        case ha1(String)

        /// The kind only: `password(<redacted>)` or `ha1(<redacted>)`.
        public var description: String {
            switch self {
            case .password: "password(<redacted>)"
            case .ha1: "ha1(<redacted>)"
            }
        }

        /// The same as ``description``.
        public var debugDescription: String { description }

        /// A mirror with no children, so `dump` and reflection show only ``description``.
        public var customMirror: Mirror { Mirror(self, children: [:]) }
    }

    /// The realm these credentials answer, or `*` for any realm.
    public var realm: String
    /// The username in the digest.
    public var username: String
    /// The password or HA1. Never logged or printed.
    public var secret: Secret

    /// Creates credentials for `realm` (`*` answers any realm).
    public init(realm: String = "*", username: String, secret: Secret) {
        self.realm = realm
        self.username = username
        self.secret = secret
    }

    /// Credentials with a plain password for any realm.
    public static func password(_ password: String, username: String, realm: String = "*") -> Credential {
        Credential(realm: realm, username: username, secret: .password(password))
    }

    /// Leaves the secret out.
    public var description: String { "Credential(realm: \(realm), username: \(username), secret: \(secret))" }

    /// The same as ``description``.
    public var debugDescription: String { description }
}

/// RFC 8599 push-notification parameters for the Contact URI, so that the registrar (or a
/// proxy it works with) can wake the app with a push before forwarding a request to it.
///
/// The parameters are appended to the Contact URI as `;pn-provider=…;pn-param=…;pn-prid=…`.
public struct PushConfiguration: Sendable, Hashable {
    /// Where the parameters go.
    public enum Scope: Sendable, Hashable {
        /// Only the Contact of REGISTER requests (the usual case: the registrar stores it
        /// with the binding).
        case registerOnly
        /// The Contact of every request and response the account sends (INVITE, SUBSCRIBE…).
        case allRequests
    }

    /// `pn-provider`: the push service, for example `apns` or `fcm`.
    public var provider: String
    /// `pn-param`: provider-specific parameter; for APNs `<Team ID>.<bundle ID>.voip`.
    public var parameter: String?
    /// `pn-prid`: the push resource ID, the device token the provider addresses.
    public var resourceID: String
    /// Where the parameters are added.
    public var scope: Scope

    /// Creates push parameters from their RFC 8599 parts.
    public init(provider: String, parameter: String? = nil, resourceID: String, scope: Scope = .registerOnly) {
        self.provider = provider
        self.parameter = parameter
        self.resourceID = resourceID
        self.scope = scope
    }

    /// Apple Push Notification service parameters (RFC 8599 §9): `pn-provider=apns`,
    /// `pn-param=<teamID>.<bundleID>.<pushType>` (the APNs topic, prefixed with the team ID),
    /// `pn-prid=<token>`.
    /// - Parameters:
    ///   - teamID: the developer team ID, for example `ABCDE12345`.
    ///   - bundleID: the app's bundle ID, for example `com.example.phone`.
    ///   - token: the device token as hexadecimal text (PushKit's for VoIP pushes).
    ///   - pushType: the suffix of the APNs topic: `voip` (the default) for PushKit VoIP
    ///     pushes; empty for a topic that is the bundle ID alone, with no suffix.
    ///   - scope: which Contacts carry the parameters: REGISTER's alone
    ///     (``Scope/registerOnly``, the default) or every request's.
    public static func apns(
        teamID: String, bundleID: String, token: String, pushType: String = "voip", scope: Scope = .registerOnly
    ) -> PushConfiguration {
        let topic = pushType.isEmpty ? bundleID : "\(bundleID).\(pushType)"
        return PushConfiguration(provider: "apns", parameter: "\(teamID).\(topic)", resourceID: token, scope: scope)
    }

    /// The URI parameters, each percent-encoded where RFC 3261's `paramchar` requires it,
    /// for example `;pn-provider=apns;pn-param=T.app.voip;pn-prid=00ff`.
    public var uriParameters: String {
        var text = ";pn-provider=\(Self.escape(provider))"
        if let parameter { text += ";pn-param=\(Self.escape(parameter))" }
        text += ";pn-prid=\(Self.escape(resourceID))"
        return text
    }

    /// Percent-encodes everything but RFC 3261's unreserved characters and param-unreserved
    /// characters that are safe in a URI parameter value.
    private static func escape(_ value: String) -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*'()[]/:&+$")
        var out = ""
        for byte in value.utf8 {
            let scalar = Character(Unicode.Scalar(byte))
            if byte < 0x80, allowed.contains(scalar) {
                out.append(scalar)
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                out += hex.count == 1 ? "%0\(hex)" : "%\(hex)"
            }
        }
        return out
    }
}

/// An account: a SIP identity, optionally registered with a registrar.
public struct AccountConfiguration: Sendable, Hashable {
    /// The identity (the From of our requests), a SIP URI or name-addr, for example
    /// `sip:alice@example.com` or `"Alice" <sip:alice@example.com>`.
    public var identity: String
    /// The registrar's URI, for example `sip:example.com`; `nil` for no registration.
    public var registrar: String?
    /// Credentials to answer digest challenges with.
    public var credentials: [Credential]
    /// Proxies every request of this account is routed through (`Route` set), in order;
    /// at most 8.
    public var outboundProxies: [String]
    /// The transport to use; `nil` lets pjsua pick by each destination URI. With a TCP or
    /// TLS transport, a registrar or proxy URI without a `transport` parameter gets one
    /// (`;transport=tcp` or `;transport=tls`), so that requests really go over it.
    public var transport: Transport?
    /// The registration lifetime asked for (`Expires`), 1 s up to `UInt32.max` seconds.
    public var registrationExpiry: Duration
    /// How long to wait before registering again after a failed registration: after a
    /// timeout, 5xx or 6xx (pjsua's automatic retry) and also after a rejected
    /// authentication (401, 403, 407), which pjsua alone does not retry. `.zero` disables
    /// retrying. Whole seconds: zero or 1 s up to `UInt32.max` milliseconds (about 49.7 days).
    public var retryInterval: Duration
    /// Random spread added to each retry, ± this much, so that many clients do not retry
    /// at the same moment; `.zero` (the default) retries exactly at ``retryInterval``.
    /// At most `UInt32.max` milliseconds.
    public var retryJitter: Duration
    /// Send REGISTER as soon as the account is added.
    public var registersOnAdd: Bool
    /// Extra parameters for the Contact URI, starting with `;`, for example `;ob`.
    public var contactParameters: String
    /// Extra headers for REGISTER requests; names must be RFC 3261 tokens, as for calls.
    public var registerHeaders: [SIPHeader]
    /// RFC 8599 push parameters for the Contact URI; `nil` for none.
    public var push: PushConfiguration?
    /// Make this the account for requests no other account matches.
    public var isDefault: Bool
    /// RFC 5626 §4.4.1 keep-alive on the TCP or TLS connection the account registered over:
    /// this often the engine sends a CRLF CRLF ping on it, and when nothing comes back (no
    /// pong, no message) within 10 s, or within this interval when it is shorter, it shuts
    /// the connection down and registers again on a new one — once the registrar has
    /// answered a ping with a pong (a registrar without RFC 5626 never does, and its
    /// silence proves nothing). `.zero` (the default) sends no pings; a dead connection is
    /// then noticed by the next request that gets no response. No effect over UDP. Otherwise
    /// 1 s to 1 day: ``PJSUA/addAccount(_:)`` throws
    /// ``PJSUAUsageError/invalidConfiguration(_:)`` for anything else.
    public var flowKeepAliveInterval: Duration = .zero
    /// Keep-alives, Contact and Via rewriting and RFC 5626 outbound for a NAT between the
    /// account and its registrar (``NATSignaling``); pjsua's defaults unless set.
    /// ``PJSUA/addAccount(_:)`` throws ``PJSUAUsageError/invalidConfiguration(_:)`` for
    /// values out of range.
    public var natSignaling: NATSignaling = NATSignaling()
    /// End a confirmed call whose audio receives no RTP for this long while it should (the
    /// stream active and receiving: not while the peer holds the call with `sendonly` or
    /// `inactive`, nor while we hold it, RFC 3264 §8.4). The engine then reports
    /// ``PJSUAEvent/mediaInactivity(_:)``, sends BYE and reports the call
    /// ``CallState/disconnected`` with the reason ``PJSUA/mediaTimeoutReason``. `nil` (the
    /// default) never does. Within ``PJSUA/mediaInactivityTimeoutRange`` (1 s to 1 h); a peer
    /// that suppresses silence without sending comfort noise needs a generous value.
    public var mediaInactivityTimeout: Duration?
    /// What to do with a confirmed call when the TCP or TLS connection under it closes or
    /// fails: re-INVITE over a new connection and end the call only when that fails (the
    /// default), or end it at once. Has no effect on calls over UDP.
    public var transportLossPolicy: TransportLossPolicy
    /// What a network change (``PJSUA/handleNetworkChange(_:)``) does to this account and its
    /// calls: by default its registration is renewed over a new connection and its confirmed
    /// calls are re-INVITEd with a new Contact and SDP (`pjsua_acc_config.ip_change_cfg`).
    public var networkChange: NetworkChangePolicy = NetworkChangePolicy()
    /// Encrypted media (SRTP) for the account's calls, both the ones it places and the ones
    /// it answers: ``SRTPConfiguration/disabled`` (plain RTP, the default), optional or
    /// mandatory, with the keying and suites to use. ``PJSUA/addAccount(_:)`` throws
    /// ``PJSUAUsageError/invalidConfiguration(_:)`` for a keying this pjproject lacks.
    public var srtp: SRTPConfiguration = .disabled
    /// An edit of the account's `pjsua_acc_config`, run on the engine thread after the
    /// engine filled it from these properties and just before `pjsua_acc_add` (or
    /// `pjsua_acc_modify`); `nil` (the default) for none. Afterwards the engine puts back
    /// `user_data` (the handle's identity) and `register_on_acc_add` (the engine sends the
    /// first REGISTER itself). Compares by identity (see ``NativeAdjustment``). See
    /// <doc:EscapeHatch> for what it voids.
    public var nativeAdjustment: NativeAccountAdjustment?
    /// ICE for this account's calls: the engine's ``MediaConfiguration/ice`` (the default),
    /// or settings of its own. Wraps `pjsua_acc_config.ice_cfg_use` and `ice_cfg`.
    public var ice: AccountOverride<ICEConfiguration> = .engine
    /// The TURN server for this account's calls: the engine's ``MediaConfiguration/turn``
    /// (the default), another one, or `.custom(nil)` for none. Wraps
    /// `pjsua_acc_config.turn_cfg_use` and `turn_cfg`.
    public var turn: AccountOverride<TURNConfiguration?> = .engine

    /// Creates an account configuration; only the identity is required.
    public init(
        identity: String,
        registrar: String? = nil,
        credentials: [Credential] = [],
        outboundProxies: [String] = [],
        transport: Transport? = nil,
        registrationExpiry: Duration = .seconds(300),
        retryInterval: Duration = .seconds(300),
        retryJitter: Duration = .zero,
        registersOnAdd: Bool = true,
        contactParameters: String = "",
        registerHeaders: [SIPHeader] = [],
        push: PushConfiguration? = nil,
        isDefault: Bool = false,
        mediaInactivityTimeout: Duration? = nil,
        transportLossPolicy: TransportLossPolicy = .reinvite
    ) {
        self.identity = identity
        self.registrar = registrar
        self.credentials = credentials
        self.outboundProxies = outboundProxies
        self.transport = transport
        self.registrationExpiry = registrationExpiry
        self.retryInterval = retryInterval
        self.retryJitter = retryJitter
        self.registersOnAdd = registersOnAdd
        self.contactParameters = contactParameters
        self.registerHeaders = registerHeaders
        self.push = push
        self.isDefault = isDefault
        self.mediaInactivityTimeout = mediaInactivityTimeout
        self.transportLossPolicy = transportLossPolicy
    }
}

/// A snapshot of an account (`pjsua_acc_info`).
public struct AccountInfo: Sendable, Hashable {
    /// The account.
    public var account: Account
    /// The identity URI.
    public var identity: String
    /// Whether the account is the default one.
    public var isDefault: Bool
    /// Whether the account registers with a registrar.
    public var hasRegistration: Bool
    /// Whether a registration is in force now.
    public var isRegistered: Bool
    /// The last REGISTER status code (100–699), 0 before any.
    public var statusCode: Int
    /// The reason phrase of ``statusCode``.
    public var reason: String
    /// Time left on the registration; zero when not registered.
    public var expiresIn: Duration
    /// The account's presence online status (`pjsua_acc_info.online_status`).
    public var isOnline: Bool
}

/// How a REGISTER transaction ended.
public enum RegistrationOutcome: Sendable, Hashable {
    /// The registrar accepted the binding for `expiration` (2xx to a refreshing REGISTER).
    case registered(expiration: Duration)
    /// The binding was removed (2xx to an unregistering REGISTER).
    case unregistered
    /// The REGISTER failed: a final status of 300–699, or a code pjsip reports when no
    /// response came (408 on timeout, 502/503 on transport and TLS failures). The reason is
    /// the registrar's phrase, pjsip's text when no response came, or one of the engine's
    /// documented reasons (``staleNonceLimitReason``, ``unregistrationCutShortReason``).
    case failed(statusCode: Int, reason: String)

    /// Whether the account is registered after this outcome.
    public var isRegistered: Bool {
        if case .registered = self { return true }
        return false
    }
}

extension SIPAddress {
    /// `uri` with `;transport=<value>` added to the URI when it has no `transport`
    /// parameter and is a `sip:` URI (a `sips:` URI already means TLS). Works on a bare URI
    /// and on a name-addr (`"Name" <sip:…>`).
    static func addingTransport(_ value: String, to uri: String) -> String {
        let start = uri.range(of: "<").map(\.upperBound) ?? uri.startIndex
        let end = uri[start...].range(of: ">")?.lowerBound ?? uri.endIndex
        let inner = uri[start..<end]
        guard inner.lowercased().hasPrefix("sip:"), !inner.lowercased().contains(";transport=") else { return uri }
        // URI parameters come before any `?headers` part.
        let insertion = inner.firstIndex(of: "?") ?? end
        return String(uri[..<insertion]) + ";transport=\(value)" + String(uri[insertion...])
    }
}
