import Foundation

/// How the engine finds SIP servers by name (RFC 3263): its own nameservers, queried by
/// pjsip's asynchronous DNS resolver, and failover between the SRV targets of a domain.
///
/// With no nameservers (the default) pjsip resolves a host name with the system's
/// `getaddrinfo`: A and AAAA records only, no SRV, and the call blocks the thread that
/// sends the request — the engine's own — for as long as the system's resolver takes.
/// With nameservers, a registrar or proxy named by a domain without a port
/// (`sip:example.com`) is looked up by its SRV records (`_sip._udp.example.com`, or
/// `_sip._tcp.` / `_sips._tcp.` with `;transport=tcp` / `tls` or a `sips:` URI), then the
/// targets' A (and AAAA) records, ordered by priority and weight (RFC 2782); a domain
/// with no SRV records falls back to its A/AAAA records. Every query is asynchronous:
/// ``PJSUA/addAccount(_:)`` and ``PJSUA/placeCall(to:from:headers:)`` return at once, and a
/// lookup that fails or times out ends the request later with 502 (the name does not
/// exist) or 503, reported as a registration failure or a call's end. NAPTR records are
/// not consulted (pjsip does not implement them): the transport comes from the URI.
///
/// Failover: pjsip tries the next target only when sending fails (a refused TCP
/// connection). The engine adds what RFC 3263 §4.3 asks for a request that gets no
/// response at all: when a REGISTER times out (after 64 × T1, see ``SIPTimers``), the
/// target it went to is marked unresponsive for ``unresponsiveTargetHoldDown`` and the
/// account registers again at once; that REGISTER, and every other request resolved while
/// the mark lasts, tries the other targets first. So an account moves to the next SRV
/// target about 64 × T1 (32 s with RFC 3261's T1 of 500 ms) after its registrar stops
/// answering, at its next refresh, and comes back to the preferred target once the hold
/// down ends and a later refresh is sent there. The timed-out REGISTER is still reported:
/// a ``RegistrationChange`` with 408 comes first (and a ``PJSUA/register(_:deadline:)`` or
/// ``PJSUA/addAccount(_:awaitingRegistration:)`` waiting for it throws
/// ``RegistrationFailedError`` with 408), then the outcome at the next target.
///
/// Set on ``Configuration/dns`` before ``PJSUA/start(_:)``:
/// <!-- snippet-setup:
/// let engine = PJSUA()
/// -->
/// ```swift
/// var configuration = Configuration()
/// configuration.dns = DNSConfiguration(
///     nameservers: [try Nameserver("192.0.2.53"), try Nameserver("[2001:db8::53]:5353")])
/// try await engine.start(configuration)
/// let alice = AccountConfiguration(
///     identity: "sip:alice@example.com", registrar: "sip:example.com",
///     credentials: [.password("secret", username: "alice")])
/// _ = try await engine.addAccount(alice)
/// ```
public struct DNSConfiguration: Sendable, Hashable {
    /// The DNS servers to query, in order of preference; at most
    /// ``maximumNameservers``. Empty (the default) leaves name resolution to the system's
    /// `getaddrinfo`, without SRV records. pjlib-util's resolver sends each query to the
    /// nameserver that has answered fastest, and probes the others now and then; one that
    /// stops answering is left alone for ``unresponsiveNameserverHoldDown``.
    public var nameservers: [Nameserver]
    /// How long the resolver waits for an answer before sending a query again (and to the
    /// next nameserver); pjlib-util's default is 2 s. Wraps `pj_dns_settings.qretr_delay`.
    /// Must be 1 ms to 1 hour.
    public var queryRetransmitInterval: Duration
    /// How many times a query is sent again before the lookup fails (pjlib-util's default
    /// 5): a lookup with no answer fails after about
    /// `(queryRetransmissions + 1) × queryRetransmitInterval` (12 s with the defaults), and
    /// an SRV lookup followed by its targets' A lookups can take two of those. Wraps
    /// `pj_dns_settings.qretr_count`. Must be 0 to 100.
    public var queryRetransmissions: Int
    /// How long a nameserver that left a query unanswered is held as bad (pjlib-util's
    /// default 60 s). While every nameserver is held bad, lookups fail at once with
    /// `PJLIB_UTIL_EDNSNOWORKINGNS` — ``PJSUA/addAccount(_:)``, ``PJSUA/register(_:deadline:)``
    /// and ``PJSUA/placeCall(to:from:headers:)`` throw ``PJSUAError`` with it — so after a
    /// network change an app may want this short. After it, the nameserver is probed again
    /// with the next lookup. Whole seconds, zero to 24 hours. Wraps `pj_dns_settings.bad_ns_ttl`.
    public var unresponsiveNameserverHoldDown: Duration
    /// How long a target whose REGISTER got no response stays behind the other targets of
    /// its domain (default 5 minutes); `.zero` turns failover after timeouts off (pjsip's own
    /// behaviour: every request resolves to the preferred target, dead or not). Must be
    /// zero to 24 hours.
    public var unresponsiveTargetHoldDown: Duration

    /// The most nameservers pjsua takes (`pjsua_config.nameserver` holds 4).
    public static let maximumNameservers = 4

    /// Creates DNS settings; with no nameservers, the system resolves names.
    public init(
        nameservers: [Nameserver] = [],
        queryRetransmitInterval: Duration = .seconds(2),
        queryRetransmissions: Int = 5,
        unresponsiveNameserverHoldDown: Duration = .seconds(60),
        unresponsiveTargetHoldDown: Duration = .seconds(300)
    ) {
        self.unresponsiveNameserverHoldDown = unresponsiveNameserverHoldDown
        self.nameservers = nameservers
        self.queryRetransmitInterval = queryRetransmitInterval
        self.queryRetransmissions = queryRetransmissions
        self.unresponsiveTargetHoldDown = unresponsiveTargetHoldDown
    }
}

extension DNSConfiguration: Validatable {
    /// Throws ``PJSUAUsageError/invalidConfiguration(_:)`` naming the first value out of range.
    func validate() throws(PJSUAUsageError) {
        guard nameservers.count <= Self.maximumNameservers else {
            throw .invalidConfiguration(
                "dns.nameservers has \(nameservers.count) entries, at most \(Self.maximumNameservers) are allowed")
        }
        for nameserver in nameservers {
            // A value built with the memberwise path is checked here as the parser would.
            _ = try Nameserver(host: nameserver.host, port: nameserver.port)
        }
        guard queryRetransmitInterval >= .milliseconds(1), queryRetransmitInterval <= .seconds(3600) else {
            throw .invalidConfiguration(
                "dns.queryRetransmitInterval must be 1 ms...1 h, got \(queryRetransmitInterval)")
        }
        guard (0...100).contains(queryRetransmissions) else {
            throw .invalidConfiguration("dns.queryRetransmissions must be 0...100, got \(queryRetransmissions)")
        }
        guard unresponsiveNameserverHoldDown >= .zero, unresponsiveNameserverHoldDown <= .seconds(86_400) else {
            throw .invalidConfiguration(
                "dns.unresponsiveNameserverHoldDown must be 0...24 h, got \(unresponsiveNameserverHoldDown)")
        }
        guard unresponsiveTargetHoldDown >= .zero, unresponsiveTargetHoldDown <= .seconds(86_400) else {
            throw .invalidConfiguration(
                "dns.unresponsiveTargetHoldDown must be 0...24 h, got \(unresponsiveTargetHoldDown)")
        }
    }
}

/// One DNS server: an IPv4 or IPv6 address and a UDP port.
///
/// Only IP literals are accepted: a name would itself need resolving, with the blocking
/// system resolver the nameservers are there to avoid. Queries go over UDP; pjlib-util's
/// resolver has no TCP fallback, so answers must fit in 512 bytes (a handful of SRV
/// targets do).
public struct Nameserver: Sendable, Hashable, CustomStringConvertible {
    /// The server's address, `192.0.2.53` or `2001:db8::53` (no brackets).
    public let host: String
    /// The server's UDP port, 53 unless given.
    public let port: UInt16

    /// Creates a nameserver from an address and a port.
    /// - Parameters:
    ///   - host: an IPv4 address (`192.0.2.53`) or an IPv6 address (`2001:db8::53`, no
    ///     brackets, no zone).
    ///   - port: the UDP port, 1–65535.
    /// - Throws: ``PJSUAUsageError/invalidConfiguration(_:)`` when `host` is not an IP
    ///   address or `port` is 0.
    public init(host: String, port: UInt16 = 53) throws(PJSUAUsageError) {
        guard Self.isIPv4(host) || Self.isIPv6(host) else {
            throw .invalidConfiguration("nameserver \"\(host)\" is not an IPv4 or IPv6 address")
        }
        guard port != 0 else { throw .invalidConfiguration("nameserver \(host) has port 0") }
        self.host = host
        self.port = port
    }

    /// Parses `address`, `address:port`, `IPv6` or `[IPv6]:port`, as the CLI's
    /// `--nameserver` takes it: `192.0.2.53`, `192.0.2.53:5353`, `2001:db8::53`,
    /// `[2001:db8::53]:5353`.
    /// - Throws: ``PJSUAUsageError/invalidConfiguration(_:)`` naming the text when it is not
    ///   one of those forms, the address is not an IP address (host names are refused), or
    ///   the port is not 1–65535.
    public init(_ text: String) throws(PJSUAUsageError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var host = trimmed
        var port: UInt16 = 53
        func badPort(_ value: Substring) -> PJSUAUsageError {
            .invalidConfiguration("nameserver \"\(text)\": port \"\(value)\" is not 1...65535")
        }
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else {
                throw .invalidConfiguration("nameserver \"\(text)\": \"[\" without \"]\"")
            }
            host = String(trimmed[trimmed.index(after: trimmed.startIndex)..<close])
            let rest = trimmed[trimmed.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let value = UInt16(rest.dropFirst()), value != 0 else {
                    throw badPort(rest.dropFirst())
                }
                port = value
            }
            guard Self.isIPv6(host) else {
                throw .invalidConfiguration("nameserver \"\(text)\": \"\(host)\" is not an IPv6 address")
            }
        } else if trimmed.filter({ $0 == ":" }).count == 1, let colon = trimmed.firstIndex(of: ":") {
            host = String(trimmed[..<colon])
            let value = trimmed[trimmed.index(after: colon)...]
            guard let number = UInt16(value), number != 0 else { throw badPort(value) }
            port = number
        }
        do { try self.init(host: host, port: port) } catch {
            throw .invalidConfiguration(
                "nameserver \"\(text)\" is not an IP address with an optional port "
                    + "(192.0.2.53, 192.0.2.53:5353, 2001:db8::53, [2001:db8::53]:5353)")
        }
    }

    /// `192.0.2.53:53` or `[2001:db8::53]:53`.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    private static func isIPv4(_ text: String) -> Bool {
        var address = in_addr()
        return !text.isEmpty && inet_pton(AF_INET, text, &address) == 1
    }

    private static func isIPv6(_ text: String) -> Bool {
        var address = in6_addr()
        return !text.isEmpty && inet_pton(AF_INET6, text, &address) == 1
    }
}
