// NAT64 (RFC 6146) with DNS64 (RFC 6147): an account on an IPv6-only network reaching IPv4
// servers and peers. The C side is Interop/Native+NAT64.swift.

/// Whether an account works as a client behind NAT64: on an IPv6-only network whose DNS64
/// resolver answers for IPv4-only names with addresses inside a NAT64 prefix (usually
/// `64:ff9b::/96`), and whose gateway translates those to IPv4.
///
/// Such networks are common on mobile carriers, and App Review tests every iOS app on
/// one: an IPv6-only Wi-Fi behind NAT64/DNS64. Signalling needs nothing from this setting:
/// the registrar's name resolves to a synthesized IPv6 address and SIP goes there over an
/// IPv6 transport. The media does: an IPv4-only peer cannot send RTP to the IPv6 address
/// the account would put in its SDP. With ``enabled`` pjsua
///
/// - puts the Contact and Via address of the account's UDP over IPv6 transport
///   (``TransportType/udp6``) in its requests, whatever transport it uses;
/// - binds the RTP of calls to IPv6 sockets and advertises in the SDP (`c=IN IP4`) the
///   IPv4 address a STUN server saw, reached through the gateway: so give the engine a
///   STUN server (``STUNConfiguration/servers``) with ``STUNConfiguration/triesIPv6`` on,
///   which makes pjsua resolve it to a synthesized IPv6 address instead of an IPv4 one it
///   cannot reach;
/// - sends RTP to an IPv4 address in the peer's SDP at the IPv6 address of that IPv4
///   address inside the network's NAT64 prefix. The engine does this itself, the same on
///   every platform: when the account is added (or modified) it discovers the prefix as
///   RFC 7050 says, from the AAAA records the system resolver (DNS64) gives for
///   `ipv4only.arpa`, and it rewrites each IPv4 media address (`c=`, `a=rtcp:`) of every
///   SDP the account receives (INVITE, re-INVITE and UPDATE offers, 18x and 2xx answers,
///   ACK and PRACK) into that prefix (RFC 6052, prefix lengths 32 to 96) before pjsua sees
///   it. Addresses already IPv6 are left as they are. When no prefix was discovered, an
///   offer with an IPv4 media address is refused with `488 Not Acceptable Here` and
///   `Warning: 301` (the app sees it only in the log, at level 3), and a call whose answer has one ends:
///   ``CallState/disconnected`` with ``PJSUA/nat64PrefixUnknownReason``, after a BYE or
///   CANCEL with `Reason: SIP;cause=488`. (On Apple platforms `getaddrinfo` would
///   synthesize such addresses too, from the same prefix; doing it in the engine keeps
///   Linux and Apple alike and keeps pjmedia from ever being handed an IPv4 address on an
///   IPv6 socket.)
///
/// The engine needs an IPv6 transport: ``PJSUA/addAccount(_:)`` throws when it has none.
/// ``disabled`` (the default) leaves every address as the transports and media have them.
/// Wraps `pjsua_acc_config.nat64_opt` (`PJSUA_NAT64_DISABLED`, `PJSUA_NAT64_ENABLED`).
///
/// ```swift
/// var configuration = Configuration(transports: [TransportConfiguration(type: .udp6)])
/// configuration.stun = STUNConfiguration(servers: ["stun.example.com"], triesIPv6: true)
/// var account = AccountConfiguration(identity: "sip:alice@example.com", registrar: "sip:example.com")
/// account.nat64 = .enabled
/// ```
public struct NAT64Mode: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Sendable, Hashable {
        case disabled
        case enabled
    }

    let kind: Kind
    /// The name whose AAAA records give the NAT64 prefix (RFC 7050 §2.1).
    let discoveryName = "ipv4only.arpa"

    /// No NAT64 handling (`PJSUA_NAT64_DISABLED`), the default.
    public static let disabled = NAT64Mode(kind: .disabled)
    /// The account is behind NAT64 (`PJSUA_NAT64_ENABLED`).
    public static let enabled = NAT64Mode(kind: .enabled)

    /// Whether the account is treated as behind NAT64.
    public var isEnabled: Bool { kind == .enabled }

    /// `disabled` or `enabled`.
    public var description: String { isEnabled ? "enabled" : "disabled" }
}

/// A NAT64 prefix (RFC 6052 §2.2): its first ``length`` bits, one of 32, 40, 48, 56, 64 or 96.
struct NAT64Prefix: Sendable, Hashable {
    /// 16 bytes, zero past the prefix.
    let bytes: [UInt8]
    /// The prefix length in bits.
    let length: Int
}

extension PJSUA {
    /// The reason of the ``CallState/disconnected`` event of a call of an account with
    /// ``AccountConfiguration/nat64`` that the engine ended because the peer's answer named
    /// an IPv4 media address while no NAT64 prefix was known (RFC 7050 discovery found
    /// none): there is no IPv6 address to send its media to. The engine sends BYE (or CANCEL
    /// for an early answer) with `Reason: SIP;cause=488`.
    public static let nat64PrefixUnknownReason = "IPv4 media address and no NAT64 prefix known (RFC 7050)"

    /// Checks that an account with ``NAT64Mode/enabled`` has what pjsua needs for it: an
    /// IPv6 transport to take the Contact from, and IPv6 in the pjproject build.
    /// - Throws: ``PJSUAUsageError/invalidConfiguration(_:)`` when the engine has no UDP
    ///   over IPv6 transport, or the account is bound to a transport that is not IPv6;
    ///   ``PJSUAError`` with ``PJSUAError/Code/addressFamilyNotSupported`` when pjproject was
    ///   built without IPv6 (pjsua would assert).
    func validateNAT64(_ account: AccountConfiguration, runtime: Runtime) throws {
        guard account.nat64.isEnabled else { return }
        try Native.ensureNAT64Available()
        let types = runtime.configuration.transports.map(\.type)
        // pjsua takes the Contact of a NAT64 account from its UDP over IPv6 transport and,
        // without one, quietly keeps an IPv4 Contact while the media goes IPv6.
        guard types.contains(.udp6) else {
            throw PJSUAUsageError.invalidConfiguration(
                "nat64 needs a UDP over IPv6 transport (TransportType.udp6) in Configuration.transports")
        }
        if let transport = account.transport, let index = runtime.transports.firstIndex(of: transport),
            !types[index].isIPv6
        {
            throw PJSUAUsageError.invalidConfiguration(
                "nat64 needs the account on an IPv6 transport, not \(types[index].rawValue)")
        }
    }
}
