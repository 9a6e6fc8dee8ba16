/// How an account's SIP signalling copes with a NAT between it and its registrar: keeping
/// the NAT's binding open, learning its public address from the registrar's answer, and
/// RFC 5626 outbound.
///
/// The defaults are pjsua's: keep-alives every 15 s, Contact rewriting on, Via rewriting
/// on, the SDP address left alone, outbound on (TCP and TLS only). ``disabled`` turns all
/// of it off, for an account on a network without NAT (or for a test's control case).
///
/// ```swift
/// var account = AccountConfiguration(identity: "sip:alice@example.com", registrar: "sip:example.com")
/// // A carrier-grade NAT that forgets UDP mappings after 30 s:
/// account.natSignaling.keepAliveInterval = .seconds(20)
/// ```
public struct NATSignaling: Sendable, Hashable {
    /// How often, once registered over UDP, the account sends a keep-alive datagram (CR LF)
    /// to the registrar's address so that the NAT keeps the mapping the registrar reaches
    /// it through; `.zero` sends none. Whole seconds, 0 or 2 s to 1 day, shorter than the
    /// NAT's UDP mapping timeout (often 30 s; 2 minutes per RFC 4787 REQ-5). pjsua spreads
    /// each gap over the last fifth of the interval in whole seconds (15 s: 12 to 14 s;
    /// 2 s: 1 s), and would send them back to back at 1 s, which is refused. Over TCP and
    /// TLS see ``AccountConfiguration/flowKeepAliveInterval`` instead. Wraps
    /// `pjsua_acc_config.ka_interval`.
    public var keepAliveInterval: Duration
    /// Re-register with the public address and port the registrar saw (the `received` and
    /// `rport` parameters of the Via in its response) when they differ from the Contact;
    /// `nil` keeps the Contact as configured. Wraps `pjsua_acc_config.allow_contact_rewrite`
    /// and `contact_rewrite_method`.
    public var contactRewrite: ContactRewrite?
    /// Put the address the registrar saw in the Via sent-by of later requests over the same
    /// transport, so that responses come back through the NAT. Wraps
    /// `pjsua_acc_config.allow_via_rewrite`.
    public var rewritesVia: Bool
    /// Put the address the registrar saw in the SDP (`c=` and `m=` addresses) of calls,
    /// when neither STUN nor ICE gives the media a public address. Only right when the NAT
    /// keeps the RTP port (1:1 NAT, port forwarding): RTP's own public port is never
    /// learnt. A ``MediaConfiguration/rtpPublicAddress`` or transport
    /// ``TransportConfiguration/publicAddress`` takes precedence. Wraps
    /// `pjsua_acc_config.allow_sdp_nat_rewrite`.
    public var rewritesSDPAddress: Bool
    /// RFC 5626 outbound (`reg-id` and `+sip.instance` in the REGISTER's Contact, and the
    /// registration flow reused for incoming requests); `nil` for none. pjsua uses it over
    /// TCP and TLS only and ignores it over UDP. Wraps `pjsua_acc_config.use_rfc5626`,
    /// `rfc5626_instance_id` and `rfc5626_reg_id`.
    public var outbound: SIPOutbound?

    /// Creates the settings; the defaults are pjsua's own, except the Contact rewrite on
    /// failure responses (see ``ContactRewrite/onFailureResponses``).
    public init(
        keepAliveInterval: Duration = .seconds(15), contactRewrite: ContactRewrite? = ContactRewrite(),
        rewritesVia: Bool = true, rewritesSDPAddress: Bool = false, outbound: SIPOutbound? = SIPOutbound()
    ) {
        self.keepAliveInterval = keepAliveInterval
        self.contactRewrite = contactRewrite
        self.rewritesVia = rewritesVia
        self.rewritesSDPAddress = rewritesSDPAddress
        self.outbound = outbound
    }

    /// No keep-alives, no rewriting, no outbound: the account's addresses stay exactly as
    /// configured.
    public static let disabled = NATSignaling(
        keepAliveInterval: .zero, contactRewrite: nil, rewritesVia: false, rewritesSDPAddress: false, outbound: nil)

    /// The range ``keepAliveInterval`` must be in when it is not `.zero`.
    public static let keepAliveIntervalRange: ClosedRange<Duration> = .seconds(2) ... .seconds(86_400)
}

/// When and how the Contact of a registration is replaced by the address the registrar saw.
public struct ContactRewrite: Sendable, Hashable {
    /// Which differences between the Contact and the address the registrar saw count.
    public enum Scope: Sendable, Hashable {
        /// Any difference, except when the Contact and the registrar's address are both
        /// public and the registrar saw a private one (pjsua's value 1, the default: a
        /// registrar behind a NAT of its own would otherwise make a reachable account
        /// advertise an unreachable address).
        case unlessPublicBecomesPrivate
        /// Any difference (pjsua's value 2).
        case always
    }

    /// How the old binding is replaced.
    public enum Method: Sendable, Hashable {
        /// One REGISTER removes the old Contact (`expires=0`) and adds the new one
        /// (`PJSUA_CONTACT_REWRITE_NO_UNREG`, the default).
        case replaceInOneRequest
        /// Unregister the old Contact and register the new one with a new Call-ID
        /// (`PJSUA_CONTACT_REWRITE_UNREGISTER`, pjsua's legacy behaviour).
        case unregisterThenRegister
    }

    /// Which differences count.
    public var scope: Scope
    /// How the binding is replaced.
    public var method: Method
    /// Also rewrite on a final failure response to REGISTER (a registrar that rejects the
    /// private Contact), not only on a 2xx (`PJSUA_CONTACT_REWRITE_ALWAYS_UPDATE`). Off by
    /// default, unlike pjsua: a digest challenge (401/407) is such a response, and pjsua then
    /// sends the authenticated REGISTER with the new Contact without removing the old one,
    /// so a registrar that challenges every REGISTER (Kamailio, Asterisk) ends up with both
    /// bindings, one of them dead (seen after a network change). With it off, the Contact is
    /// replaced by a REGISTER of its own after the 2xx, the old one with `expires=0`.
    public var onFailureResponses: Bool

    /// Creates the settings: pjsua's, except ``onFailureResponses`` off.
    public init(
        scope: Scope = .unlessPublicBecomesPrivate, method: Method = .replaceInOneRequest,
        onFailureResponses: Bool = false
    ) {
        self.scope = scope
        self.method = method
        self.onFailureResponses = onFailureResponses
    }
}

/// RFC 5626 outbound identifiers for an account's registration.
public struct SIPOutbound: Sendable, Hashable {
    /// The `+sip.instance` Contact parameter's value, a URN in angle brackets such as
    /// `<urn:uuid:00000000-0000-1000-8000-AABBCCDDEEFF>`; `nil` lets pjsua derive one from
    /// the host name. Must not contain control characters or `"`.
    public var instanceID: String?
    /// The `reg-id` Contact parameter, 1 or more; `nil` lets pjsua choose (1).
    public var registrationID: Int?

    /// Creates the identifiers; `nil` for pjsua's own.
    public init(instanceID: String? = nil, registrationID: Int? = nil) {
        self.instanceID = instanceID
        self.registrationID = registrationID
    }
}

extension NATSignaling: Validatable {
    func validate() throws(PJSUAUsageError) {
        if keepAliveInterval != .zero, !Self.keepAliveIntervalRange.contains(keepAliveInterval) {
            throw .invalidConfiguration("natSignaling.keepAliveInterval must be zero (off) or 2 s...1 day")
        }
        if let id = outbound?.instanceID, id.isEmpty || id.contains("\"") || id.containsLineBreakOrControl {
            throw .invalidConfiguration(
                "natSignaling.outbound.instanceID must be a non-empty URN without quotes or control characters")
        }
        if let id = outbound?.registrationID, id < 1 || id > 65_535 {
            throw .invalidConfiguration("natSignaling.outbound.registrationID must be 1...65535")
        }
    }
}
