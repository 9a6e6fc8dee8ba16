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
    /// Whether the account is behind NAT64 on an IPv6-only network (``NAT64Mode``):
    /// ``NAT64Mode/disabled`` (the default) or ``NAT64Mode/enabled``, which needs a UDP over
    /// IPv6 transport and, for calls, a STUN server reached over IPv6. Wraps
    /// `pjsua_acc_config.nat64_opt`.
    public var nat64: NAT64Mode = .disabled
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
    /// Reliable provisional responses (`100rel`, RFC 3262) for the account's calls:
    /// ``ReliableProvisionalPolicy/supported`` (the default, as pjsua does), ``ReliableProvisionalPolicy/off``
    /// or ``ReliableProvisionalPolicy/required``. Wraps `pjsua_acc_config.require_100rel`.
    public var reliableProvisionals: ReliableProvisionalPolicy = .supported
    /// Session timers (RFC 4028) for the account's calls: mode, interval (`Session-Expires`)
    /// and `Min-SE`; optional with 1800 s and 90 s by default. ``PJSUA/addAccount(_:)`` throws
    /// ``PJSUAUsageError/invalidConfiguration(_:)`` for a `Min-SE` under 90 s or an interval
    /// under the `Min-SE` (see ``SessionTimers``). Wraps `pjsua_acc_config.use_timer` and
    /// `timer_setting`.
    public var sessionTimers: SessionTimers = .default
    /// Who may subscribe to the account's presence (``WatcherPolicy``): nobody by default,
    /// so a presence SUBSCRIBE gets `403` and no NOTIFY; pjsua by itself accepts everyone.
    /// Each new subscription is reported on ``PJSUA/watcherRequests``. A local account
    /// (``PJSUA/addLocalAccount(on:isDefault:mediaInactivityTimeout:transportLossPolicy:)``)
    /// has the default.
    public var watchers: WatcherPolicy = .nobody
    /// Publish the status set with ``PJSUA/setPresence(_:for:)`` to the account's presence
    /// server with PUBLISH (RFC 3903), sent to its address-of-record through its outbound
    /// proxy, instead of leaving it to the account's own watchers. For a registrar with a
    /// presence service (Kamailio's `presence` module, say); `false` by default. Wraps
    /// `pjsua_acc_config.publish_enabled`.
    public var publishesPresence = false
    /// Subscribe to the account's own message-summary event package (RFC 3842) once it is
    /// registered, and report each NOTIFY on ``PJSUA/messageSummaries``. pjsua sends the
    /// SUBSCRIBE to the account's identity through its outbound proxy, refreshes it and
    /// unsubscribes when the account is removed; an account without a registrar never
    /// subscribes (pjsua ties the subscription to the registration). `false` by default.
    /// Wraps `pjsua_acc_config.mwi_enabled`.
    public var subscribesToMessageWaiting = false
    /// The subscription lifetime asked for in its `Expires`, 60 s to 1 day (default 3600 s,
    /// RFC 3842 §6's suggestion); ``PJSUA/addAccount(_:)`` throws
    /// ``PJSUAUsageError/invalidConfiguration(_:)`` outside that range. Wraps
    /// `pjsua_acc_config.mwi_expires`.
    public var messageWaitingExpiry: Duration = .seconds(3600)
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
    /// Who may start calls, subscriptions and messages with this account out of dialog
    /// (``WhoMayCall``): `nil` (the default) for ``WhoMayCall/serversOnly`` when the account
    /// has a ``registrar`` and ``WhoMayCall/anyone`` when it has none (see
    /// ``effectiveWhoMayCall``). Rejected requests are answered 403 or 404 by the engine and
    /// never reach the app. ``PJSUA/addAccount(_:)`` throws
    /// ``PJSUAUsageError/invalidConfiguration(_:)`` for ``WhoMayCall/onlyFromServers`` on an
    /// account with neither a registrar nor an outbound proxy.
    public var whoMayCall: WhoMayCall?

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

extension AccountConfiguration: Validatable {
    /// The pass ``PJSUA/addAccount(_:)`` and ``PJSUA/modifyAccount(_:_:)`` make before pjsua
    /// sees the account. The URI checks parse with pjsua's pool factory: only while the
    /// engine runs.
    func validate() throws(PJSUAUsageError) {
        guard Native.isValidSIPURI(SIPAddress(parsing: identity).uri) else { throw .invalidURI(identity) }
        for uri in [registrar].compactMap({ $0 }) + outboundProxies {
            guard Native.isValidSIPURI(SIPAddress(parsing: uri).uri) else { throw .invalidURI(uri) }
        }
        var texts = [contactParameters] + registerHeaders.flatMap { [$0.name, $0.value] }
        if let push { texts += [push.provider, push.parameter ?? "", push.resourceID] }
        guard !texts.contains(where: \.containsLineBreakOrControl) else {
            throw .invalidConfiguration("header, Contact and push parameter text must not contain control characters")
        }
        guard contactParameters.isEmpty || contactParameters.hasPrefix(";") else {
            throw .invalidConfiguration("contactParameters must start with ';', e.g. ';ob'")
        }
        guard credentials.count <= Native.maxCredentials else {
            throw .invalidConfiguration("at most \(Native.maxCredentials) credentials")
        }
        guard outboundProxies.count <= Native.maxProxies else {
            throw .invalidConfiguration("at most \(Native.maxProxies) outbound proxies")
        }
        try PJSUA.validateHeaders(registerHeaders)
        try PJSUA.validateMediaInactivityTimeout(mediaInactivityTimeout)
        if case .custom(let ice) = self.ice { try ice.validate() }
        if case .custom(let turn?) = self.turn { try turn.validate() }
        try srtp.validate()
        try reliableProvisionals.validate()
        try sessionTimers.validate()
        // pjsua holds the expiry in 32-bit seconds and the engine's retry timer in 32-bit
        // milliseconds: larger values would not fit.
        guard registrationExpiry >= .seconds(1), registrationExpiry <= .seconds(Int64(UInt32.max)) else {
            throw .invalidConfiguration("registrationExpiry must be 1 s...\(UInt32.max) s")
        }
        guard
            flowKeepAliveInterval == .zero
                || (flowKeepAliveInterval >= .seconds(1) && flowKeepAliveInterval <= .seconds(86_400))
        else {
            throw .invalidConfiguration("flowKeepAliveInterval must be zero (off) or 1 s...1 day")
        }
        try natSignaling.validate()
        guard messageWaitingExpiry >= .seconds(60), messageWaitingExpiry <= .seconds(86_400) else {
            throw .invalidConfiguration("messageWaitingExpiry must be 60 s...1 day")
        }
        if effectiveWhoMayCall.onlyFromServers, registrar == nil, outboundProxies.isEmpty {
            throw .invalidConfiguration("whoMayCall.onlyFromServers needs a registrar or an outbound proxy")
        }
        // pjsua takes the interval in whole seconds: a nonzero one under a second would be
        // zero there (no retry after timeouts and 5xx) while authentication retries ran at it.
        guard retryInterval == .zero || retryInterval >= .seconds(1) else {
            throw .invalidConfiguration("retryInterval must be zero or at least 1 s")
        }
        let longestRetry = Duration.milliseconds(Int64(UInt32.max))
        guard retryInterval >= .zero, retryJitter >= .zero, retryInterval <= longestRetry,
            retryJitter <= longestRetry
        else {
            throw .invalidConfiguration("retryInterval and retryJitter must be 0...\(longestRetry)")
        }
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
