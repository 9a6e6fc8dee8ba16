import Foundation

// STUN, ICE and TURN: how media finds a path through NATs. The C side is
// Interop/Native+MediaNAT.swift.

/// STUN servers (RFC 8489) the engine asks for its address as the internet sees it: its
/// server-reflexive address.
///
/// pjsua uses the answer three ways: as ICE's server-reflexive candidates
/// (``ICEConfiguration``); without ICE, as the RTP address a call advertises in its SDP
/// (`c=` and `m=`, in place of the local RTP address); and as the `Contact`/`Via` address
/// of a UDP SIP transport that has no ``TransportConfiguration/bindAddress`` (one that
/// names an address advertises that address). Behind an address-and-port-dependent
/// ("symmetric") NAT the answer is worthless to anyone but the STUN server: that needs
/// TURN (``TURNConfiguration``).
///
/// pjsua checks the servers at ``PJSUA/start(_:)`` in order with a binding request and
/// keeps the first that answers. Wraps `pjsua_config.stun_srv`, `stun_try_ipv6` and
/// `stun_ignore_failure`.
public struct STUNConfiguration: Sendable, Hashable {
    /// The servers, in order of preference: `host`, `host:port` (3478 when no port is
    /// given), `[IPv6]:port`, or a domain whose `_stun._udp` SRV records name the servers.
    /// At most 8 (``PJSUA/maxSTUNServers``); none (the default) means no STUN.
    public var servers: [String]
    /// Also ask for an IPv6 server-reflexive address (`stun_try_ipv6`); off by default.
    public var triesIPv6: Bool
    /// Start, and go on, when no server answers (`stun_ignore_failure`, on by default): the
    /// engine then advertises its local addresses. When `false`, ``PJSUA/start(_:)``
    /// throws ``PJSUAError`` if no server answers.
    public var ignoresFailure: Bool

    /// Creates STUN settings; with the defaults, no STUN at all.
    public init(servers: [String] = [], triesIPv6: Bool = false, ignoresFailure: Bool = true) {
        self.servers = servers
        self.triesIPv6 = triesIPv6
        self.ignoresFailure = ignoresFailure
    }
}

/// How ICE candidates are exchanged (RFC 8838, `pj_ice_sess_trickle`).
public enum ICETrickle: String, Sendable, Hashable, CaseIterable {
    /// Every candidate in the offer or answer, after gathering has finished (RFC 8445
    /// "vanilla" ICE); the default, and what every ICE peer understands.
    case disabled
    /// Half trickle: the offer carries every candidate, candidates of the answer may follow
    /// in SIP INFO requests (RFC 8840).
    case half
    /// Full trickle: both sides send candidates as they find them, in SIP INFO (RFC 8840).
    case full
}

/// Interactive Connectivity Establishment (RFC 8445) for the audio of calls: the offer and
/// the answer list candidates (`a=candidate`), both ends check pairs of them with STUN and
/// the media flows on the best pair that works.
///
/// The candidates are: host candidates, the addresses of the local interfaces (up to
/// ``hostCandidateLimit``); a server-reflexive candidate when ``STUNConfiguration`` names a
/// server; a relayed candidate, an address on a TURN server, when ``TURNConfiguration`` is
/// set. pjnath takes no host candidate on a loopback address: with ICE on and RTP bound to
/// 127.0.0.1 there is no candidate at all and every call fails with `PJ_EINVAL`
/// (`pjsua_call_make_call`, or 488 to an incoming one).
///
/// On the pjproject 2.12.1 that `scripts/provision.sh` builds from Debian's ring package
/// (Jami's patched pjnath), adding a candidate blocks pjsua's worker thread for good on a
/// host with any IPv6 address (its netlink query for deprecated addresses misses the end
/// of the dump); use ICE there only on IPv4-only hosts, or use pjproject 2.13 or later.
///
/// Set engine-wide in ``MediaConfiguration/ice``, per account with
/// ``AccountConfiguration/ice``. Wraps `pjsua_media_config.enable_ice`,
/// `ice_max_host_cands`, `ice_no_rtcp` and `ice_opt` (`pjsua_ice_config` per account).
public struct ICEConfiguration: Sendable, Hashable {
    /// Offer and accept ICE (`enable_ice`); off by default. A peer without ICE is still
    /// called as usual: its SDP carries no candidates and the default candidate (`c=`) is used.
    public var isEnabled: Bool
    /// The most host candidates to gather (`ice_max_host_cands`), 0 for none (only
    /// server-reflexive and relayed ones); `nil`, the default, for one per interface address.
    public var hostCandidateLimit: Int?
    /// Gather candidates and check connectivity for RTCP too (the default); `false` sets
    /// `ice_no_rtcp`, for one component per stream.
    public var usesRTCP: Bool
    /// How candidates are exchanged (`ice_opt.trickle`); ``ICETrickle/disabled`` by default.
    public var trickle: ICETrickle
    /// Aggressive nomination (`ice_opt.aggressive`): the controlling agent flags every check
    /// as a nomination instead of nominating one pair once checks have succeeded. Off by
    /// default, unlike pjnath's own default: RFC 8445 dropped aggressive nomination because
    /// the two agents can settle on different pairs, and pjmedia then discards the audio
    /// that arrives on the pair it did not select. Between two symmetric NATs with TURN over
    /// TCP or TLS that happened in about one call in four (each side nominated its own path
    /// through the other's relay, and both heard nothing); regular nomination settled on one
    /// pair every time, about half a second after the answer instead of a tenth.
    public var aggressiveNomination: Bool

    /// Creates ICE settings; with the defaults ICE is off.
    public init(
        isEnabled: Bool = false, hostCandidateLimit: Int? = nil, usesRTCP: Bool = true,
        trickle: ICETrickle = .disabled, aggressiveNomination: Bool = false
    ) {
        self.isEnabled = isEnabled
        self.hostCandidateLimit = hostCandidateLimit
        self.usesRTCP = usesRTCP
        self.trickle = trickle
        self.aggressiveNomination = aggressiveNomination
    }

    /// ICE on, with every other setting at its default.
    public static var enabled: ICEConfiguration { ICEConfiguration(isEnabled: true) }
}

/// The transport between the engine and its TURN server (`pj_turn_tp_type`). The relayed
/// media itself is UDP whichever is chosen (RFC 8656 §3.1).
public enum TURNTransport: String, Sendable, Hashable, CaseIterable {
    /// UDP (the default; port 3478).
    case udp
    /// TCP (port 3478), for networks that block UDP.
    case tcp
    /// TLS over TCP (port 5349).
    case tls
}

/// A TURN server (RFC 8656) that gives the engine a relayed address: ICE's relayed
/// candidate, the path that works when both ends are behind address-and-port-dependent
/// NATs. Used only with ICE on (``ICEConfiguration/isEnabled``): pjsua relays nothing
/// without ICE.
///
/// Set engine-wide in ``MediaConfiguration/turn``, per account with
/// ``AccountConfiguration/turn``. Wraps `pjsua_media_config.enable_turn`, `turn_server`,
/// `turn_conn_type`, `turn_auth_cred` and `turn_tls_setting` (`pjsua_turn_config` per
/// account).
public struct TURNConfiguration: Sendable, Hashable {
    /// The server: `host`, `host:port`, or a domain with `_turn._udp`/`_turn._tcp`/
    /// `_turns._tcp` SRV records (`turn_server`).
    public var server: String
    /// UDP, TCP or TLS to the server (`turn_conn_type`).
    public var transport: TURNTransport
    /// The long-term credential (RFC 8489 §9.2) the server asks for; `nil` for a server
    /// that asks none. The realm is the one the server names, `*` taking any; an
    /// ``Credential/Secret/ha1(_:)`` secret is the key `MD5(username:realm:password)` as 32
    /// hex digits, for the realm named (handed to pjnath as its 16 bytes,
    /// `PJ_STUN_PASSWD_HASHED`). ``PJSUA/start(_:)`` and ``PJSUA/addAccount(_:)`` throw
    /// ``PJSUAUsageError/invalidConfiguration(_:)`` for a key of another length or algorithm.
    public var credential: Credential?
    /// TLS files for ``TURNTransport/tls`` (`turn_tls_setting`): the trusted authorities
    /// and, for a server that asks for one, the client certificate and key. pjnath does not
    /// check the server's certificate against them: ``TLSConfiguration/verifiesServer`` and
    /// ``TLSConfiguration/verifiesClient`` have no effect here.
    public var tls: TLSConfiguration

    /// Creates TURN settings for `server` (UDP by default).
    public init(
        server: String, transport: TURNTransport = .udp, credential: Credential? = nil,
        tls: TLSConfiguration = TLSConfiguration()
    ) {
        self.server = server
        self.transport = transport
        self.credential = credential
        self.tls = tls
    }
}

/// A per-account setting that either follows the engine's configuration or replaces it for
/// the account's calls.
public enum AccountOverride<Value: Sendable & Hashable>: Sendable, Hashable {
    /// Use the engine's setting (`PJSUA_ICE_CONFIG_USE_DEFAULT`, `PJSUA_TURN_CONFIG_USE_DEFAULT`).
    case engine
    /// Use this value for the account (`PJSUA_ICE_CONFIG_USE_CUSTOM`, `PJSUA_TURN_CONFIG_USE_CUSTOM`).
    case custom(Value)
}

// MARK: - What was negotiated

/// The kind of an ICE candidate (RFC 8445 §5.1.1, `pj_ice_cand_type`).
public enum ICECandidateType: String, Sendable, Hashable, CaseIterable {
    /// An address of a local interface.
    case host
    /// The address a STUN server saw (the NAT's public side).
    case serverReflexive
    /// An address learned from a peer's connectivity check.
    case peerReflexive
    /// An address on a TURN server, which relays.
    case relayed
}

/// One end of a candidate pair: its kind and its transport address (`203.0.113.10:49152`,
/// `[2001:db8::1]:4000`).
public struct ICECandidate: Sendable, Hashable {
    /// Host, server-reflexive, peer-reflexive or relayed.
    public var type: ICECandidateType
    /// The address and port.
    public var address: String

    /// Creates a value with every field given, for tests and previews.
    /// - Parameters:
    ///   - type: host, server-reflexive, peer-reflexive or relayed.
    ///   - address: its address and port.
    public init(type: ICECandidateType, address: String) {
        self.type = type
        self.address = address
    }
}

/// Where an ICE session stands (`pj_ice_strans_state`).
public enum ICEState: String, Sendable, Hashable, CaseIterable {
    /// Not created yet.
    case idle
    /// Gathering candidates.
    case gathering
    /// Candidates gathered; no session with a peer yet.
    case ready
    /// A session with the peer's candidates exists; checks have not started.
    case sessionReady
    /// Connectivity checks are running.
    case checking
    /// Checks succeeded: media flows on the nominated pairs.
    case completed
    /// Checks failed: no pair works.
    case failed
}

/// The ICE side of a call's media stream.
public struct ICENegotiation: Sendable, Hashable {
    /// Whether ICE is in use for the stream: both offer and answer had candidates.
    public var isActive: Bool
    /// The session's state.
    public var state: ICEState
    /// Whether this end is the controlling agent (RFC 8445 §6.1.1: the offerer, normally).
    public var isControlling: Bool
    /// The selected pair of each component, RTP first and then RTCP, once checks have
    /// nominated one; empty before.
    public var selectedPairs: [ICECandidatePair]

    /// Creates a value with every field given, for tests and previews.
    /// - Parameters:
    ///   - isActive: whether ICE runs on the stream.
    ///   - state: where negotiation stands.
    ///   - isControlling: whether this side is controlling.
    ///   - selectedPairs: the pairs chosen, one per component.
    public init(isActive: Bool, state: ICEState, isControlling: Bool, selectedPairs: [ICECandidatePair]) {
        self.isActive = isActive
        self.state = state
        self.isControlling = isControlling
        self.selectedPairs = selectedPairs
    }
}

/// A local and a remote candidate that ICE checked, and nominated, together.
public struct ICECandidatePair: Sendable, Hashable {
    /// This end's candidate.
    public var local: ICECandidate
    /// The peer's candidate.
    public var remote: ICECandidate

    /// Creates a value with every field given, for tests and previews.
    /// - Parameters:
    ///   - local: our candidate.
    ///   - remote: the peer's candidate.
    public init(local: ICECandidate, remote: ICECandidate) {
        self.local = local
        self.remote = remote
    }
}

/// A call's media transport for one stream: the addresses in use and, with ICE, what ICE
/// chose. Read with ``PJSUA/mediaTransport(of:mediaIndex:)``.
public struct MediaTransportInfo: Sendable, Hashable {
    /// The RTP address this end advertises (`pjmedia_sock_info.rtp_addr_name`): the local
    /// RTP address, the STUN-mapped one without ICE and with STUN, or ICE's default candidate.
    public var localAddress: String
    /// Where the last RTP came from (`src_rtp_name`); `nil` before any has arrived.
    public var rtpSource: String?
    /// The ICE state; `nil` when the stream's transport is not ICE.
    public var ice: ICENegotiation?

    /// Creates a value with every field given, for tests and previews.
    /// - Parameters:
    ///   - localAddress: the local RTP address.
    ///   - rtpSource: where RTP last came from.
    ///   - ice: the ICE state, when ICE is on.
    public init(localAddress: String, rtpSource: String?, ice: ICENegotiation?) {
        self.localAddress = localAddress
        self.rtpSource = rtpSource
        self.ice = ice
    }
}

// MARK: - Validation

extension STUNConfiguration: Validatable {
    func validate() throws(PJSUAUsageError) {
        guard servers.count <= Native.maxSTUNServers else {
            throw .invalidConfiguration("at most \(Native.maxSTUNServers) STUN servers, got \(servers.count)")
        }
        for server in servers where !HostPort.isValid(server) {
            throw .invalidConfiguration(
                "STUN server \"\(server)\" must be host[:port]: a host of 1 to 253 characters without spaces, "
                    + "a port 1-65535")
        }
    }
}

extension ICEConfiguration: Validatable {
    func validate() throws(PJSUAUsageError) {
        if let limit = hostCandidateLimit, limit < 0 {
            throw .invalidConfiguration("ICE hostCandidateLimit must be nil (every address) or 0 or more, got \(limit)")
        }
    }
}

extension TURNConfiguration: Validatable {
    func validate() throws(PJSUAUsageError) {
        guard HostPort.isValid(server) else {
            throw .invalidConfiguration(
                "TURN server \"\(server)\" must be host[:port]: a host of 1 to 253 characters without spaces, "
                    + "a port 1-65535")
        }
        if let credential {
            let texts = [credential.realm, credential.username]
            guard !texts.contains(where: { $0.isEmpty || $0.unicodeScalars.contains { $0.value < 0x20 } }) else {
                throw .invalidConfiguration("TURN credential realm and username must be non-empty text")
            }
            // The long-term key of RFC 8489 §9.2.2 is MD5 here: pjnath has no other.
            if case .ha1 = credential.secret, credential.algorithm != .md5 {
                throw .invalidConfiguration("a TURN credential's HA1 key must be MD5, not \(credential.algorithm)")
            }
            try credential.validate()
        }
        if transport == .tls, let file = tls.firstUnreadableFile {
            throw .invalidConfiguration("TURN TLS file is missing or unreadable: \(file)")
        }
    }
}
