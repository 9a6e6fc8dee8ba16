import Foundation
import SwiftPJSUA

/// An IPv6-only client site behind a NAT64 gateway with DNS64, in front of an IPv4-only
/// network: what App Review's test network and many mobile carriers look like.
///
/// ```
/// IPv4 segment 203.0.113.0/24 (bridge, namespace "pub")
///   registrar 203.0.113.10   (Kamailio, coturn)
///   callee    203.0.113.11
///   gateway   203.0.113.100  (wan)  ── tayga: 2001:db8:64::/96 <-> pool 192.168.255.0/24,
///                                      then nftables masquerade to 203.0.113.100
///             2001:db8:1::1  (lan)  ── unbound on [2001:db8:1::1]:53 with dns64
/// client      2001:db8:1::2  (only IPv6: no IPv4 address, not even 127.0.0.1)
/// ```
///
/// DNS64 (unbound's `dns64` module in front of its iterator) answers AAAA queries for the
/// zone ``zone`` from its A records, mapped into ``prefix``; the zone holds one A record
/// per IPv4 host (`registrar.nat64.test`, `callee.nat64.test`). The prefix is not the
/// well-known `64:ff9b::/96`: RFC 6052 §3.1 forbids that prefix for IPv4 addresses that
/// are not global, and tayga drops traffic to such addresses, 203.0.113.0/24 included;
/// an operator prefix (here from 2001:db8::/32) has no such limit.
///
/// Use ``withNAT64Bed(_:)``: the namespaces (and with them the tun device and the veths)
/// and every process inside them go when the body returns or throws.
public final class NAT64Bed: Sendable {
    /// The NAT64 prefix tayga translates and unbound synthesizes into.
    public static let prefix = "2001:db8:64::/96"
    /// ``prefix`` without its length, ready for an IPv4 address to follow (`2001:db8:64::`).
    public static let prefixHead = "2001:db8:64::"
    /// The DNS zone the DNS64 resolver serves (from a zone file of A records only).
    public static let zone = "nat64.test"

    /// The IPv4-only host of the registrar (and of the STUN server).
    public let registrar: Topology.Host
    /// The IPv4-only host of the callee.
    public let callee: Topology.Host
    /// The IPv6-only client.
    public let client: Topology.Host
    /// The gateway (tayga and unbound); its ``Topology/Host/address`` is its IPv4 side.
    public let gateway: Topology.Host
    /// The gateway's IPv6 address: the client's router and DNS server.
    public let gatewayIPv6 = "2001:db8:1::1"
    /// The address IPv4 hosts see the client's traffic come from (tayga's pool, masqueraded).
    public var gatewayIPv4: String { gateway.address }
    /// tayga, and then unbound, once started.
    private let processes: Protected<[PeerProcess]> = Protected([])
    private let namespaces: [String]
    private let tornDown = Protected(false)
    /// Whether unbound synthesizes AAAA answers (its `dns64` module); without it nothing
    /// on the client site can discover the NAT64 prefix (RFC 7050), and names of IPv4-only
    /// hosts do not resolve there.
    public let dns64: Bool
    /// The client namespace's `resolv.conf` folder (`ip netns exec` mounts it over
    /// `/etc`): the system resolver of processes in the client site is the gateway's DNS64.
    private var clientResolverFolder: String { "/etc/netns/\(client.namespace)" }
    /// Whether `/etc/netns` was missing when the bed was made: teardown then removes it once
    /// empty, so the machine is left as it was found.
    private let madeNetnsFolder = !FileManager.default.fileExists(atPath: "/etc/netns")

    /// The DNS name of the registrar's host.
    public var registrarName: String { "registrar.\(Self.zone)" }
    /// The DNS name of the callee's host.
    public var calleeName: String { "callee.\(Self.zone)" }

    private init(prefix: String, dns64: Bool) {
        self.dns64 = dns64
        namespaces = ["pub", "registrar", "callee", "gateway", "client"].map { "\(prefix)-\($0)" }
        registrar = Topology.Host(name: "registrar", namespace: "\(prefix)-registrar", address: "203.0.113.10")
        callee = Topology.Host(name: "callee", namespace: "\(prefix)-callee", address: "203.0.113.11")
        gateway = Topology.Host(name: "gateway", namespace: "\(prefix)-gateway", address: "203.0.113.100")
        client = Topology.Host(name: "client", namespace: "\(prefix)-client", address: "2001:db8:1::2")
    }

    /// The address inside ``prefix`` that stands for `ipv4` (RFC 6052 §2.2, a /96).
    public static func synthesized(_ ipv4: String) -> String {
        let bytes = ipv4.split(separator: ".").compactMap { UInt8($0) }
        guard bytes.count == 4 else { return "" }
        let high = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
        let low = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
        return "2001:db8:64::\(String(high, radix: 16)):\(String(low, radix: 16))"
    }

    /// Builds the namespaces and links, then starts tayga and unbound in the gateway and
    /// waits until the client resolves the registrar's name to its synthesized address and
    /// the registrar's host answers through the gateway (`ping`-free: a DNS query and a UDP
    /// exchange from the client). On failure everything made is removed before the error
    /// is thrown.
    /// - Throws: ``TopologyError`` for a command that failed; ``TimedOut`` when a daemon
    ///   does not come up.
    ///   With `dns64` off unbound answers AAAA queries only from the zone (which has
    ///   none), and the readiness check asks for the registrar's A record instead.
    public static func build(folder: TemporaryFolder, dns64: Bool = true) async throws -> NAT64Bed {
        let bed = NAT64Bed(
            prefix: "spj-" + String(format: "%06x", UInt32.random(in: 0...0xFF_FFFF)), dns64: dns64)
        do {
            try bed.link()
            try await bed.startGateway(folder: folder)
        } catch {
            bed.teardown()
            throw error
        }
        return bed
    }

    private func link() throws {
        let pub = namespaces[0]
        var script = namespaces.map { "ip netns add \($0)" }
        script += namespaces.map { "ip -n \($0) link set lo up" }
        script += ["ip -n \(pub) link add br0 type bridge", "ip -n \(pub) link set br0 up"]
        for (index, host) in [registrar, callee].enumerated() {
            script += [
                "ip link add name eth0 netns \(host.namespace) type veth peer name s\(index) netns \(pub)",
                "ip -n \(pub) link set s\(index) master br0 up",
                "ip -n \(host.namespace) addr add \(host.address)/24 dev eth0",
                "ip -n \(host.namespace) link set eth0 up",
            ]
        }
        let gw = gateway.namespace
        let lan = client.namespace
        script += [
            "ip link add name wan netns \(gw) type veth peer name g0 netns \(pub)",
            "ip -n \(pub) link set g0 master br0 up",
            "ip -n \(gw) addr add \(gateway.address)/24 dev wan",
            "ip -n \(gw) link set wan up",
            "ip link add name lan netns \(gw) type veth peer name eth0 netns \(lan)",
            // No duplicate address detection: the addresses are usable at once.
            "ip -n \(gw) addr add \(gatewayIPv6)/64 dev lan nodad",
            "ip -n \(gw) link set lan up",
            // The client: IPv6 only, down to its loopback.
            "ip -n \(lan) addr del 127.0.0.1/8 dev lo",
            "ip -n \(lan) addr add \(client.address)/64 dev eth0 nodad",
            "ip -n \(lan) link set eth0 up",
            "ip -n \(lan) -6 route add default via \(gatewayIPv6)",
            "mkdir -p \(clientResolverFolder)",
            "printf 'nameserver \(gatewayIPv6)\\noptions timeout:1 attempts:1\\n' \\",
            "  > \(clientResolverFolder)/resolv.conf",
            "ip netns exec \(gw) sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1",
            // The IPv4 side of tayga's pool leaves with the gateway's address.
            """
            ip netns exec \(gw) nft -f - <<'RULES'
            table ip nat {
            chain postrouting { type nat hook postrouting priority srcnat; oifname "wan" masquerade; }
            }
            RULES
            """,
        ]
        try Topology.shell(script.joined(separator: "\n"))
    }

    private func startGateway(folder: TemporaryFolder) async throws {
        let tayga = folder.file("tayga.conf")
        try """
        tun-device nat64
        ipv4-addr 192.168.255.1
        ipv6-addr 2001:db8:1::64
        prefix \(Self.prefix)
        dynamic-pool 192.168.255.0/24
        """.write(to: tayga, atomically: true, encoding: .utf8)
        let gw = gateway.namespace
        try Topology.shell(
            """
            ip netns exec \(gw) tayga -c \(tayga.path) --mktun
            ip -n \(gw) link set nat64 up
            ip -n \(gw) route add 192.168.255.0/24 dev nat64
            ip -n \(gw) route add \(Self.prefix) dev nat64
            """)
        let translator = try gateway.run(
            "tayga", executable: "/usr/sbin/tayga", arguments: ["-c", tayga.path, "-d"], folder: folder)
        processes.withLock { $0.append(translator) }

        let zoneFile = folder.file("nat64.zone")
        try """
        $ORIGIN \(Self.zone).
        $TTL 60
        @ IN SOA ns hostmaster 1 3600 600 86400 60
        @ IN NS ns
        ns IN A \(registrar.address)
        registrar IN A \(registrar.address)
        callee IN A \(callee.address)

        """.write(to: zoneFile, atomically: true, encoding: .utf8)
        // RFC 7050 §2.1's name, as the DNS64 in front of it synthesizes it.
        let wellKnownFile = folder.file("ipv4only.zone")
        try """
        $ORIGIN ipv4only.arpa.
        $TTL 60
        @ IN SOA ns hostmaster 1 3600 600 86400 60
        @ IN NS ns
        ns IN A 192.0.0.170
        @ IN A 192.0.0.170
        @ IN A 192.0.0.171

        """.write(to: wellKnownFile, atomically: true, encoding: .utf8)
        let unboundConf = folder.file("unbound.conf")
        // dns64 in front of the iterator, which takes the zone as if from upstream
        // (auth-zone for-upstream): answers to the client (local data) would bypass dns64.
        // `test.` is one of unbound's default local zones (RFC 6761): off for this one.
        try """
        server:
            interface: \(gatewayIPv6)
            port: 53
            do-ip4: no
            access-control: ::/0 allow
            username: ""
            chroot: ""
            directory: "\(folder.url.path)"
            pidfile: ""
            use-syslog: no
            logfile: ""
            verbosity: 1
            root-hints: ""
            module-config: "\(dns64 ? "dns64 iterator" : "iterator")"
            dns64-prefix: \(Self.prefix)
            local-zone: "test." nodefault
        auth-zone:
            name: "\(Self.zone)."
            zonefile: "\(zoneFile.path)"
            for-downstream: no
            for-upstream: yes
            fallback-enabled: no
        auth-zone:
            name: "ipv4only.arpa."
            zonefile: "\(wellKnownFile.path)"
            for-downstream: no
            for-upstream: yes
            fallback-enabled: no

        """.write(to: unboundConf, atomically: true, encoding: .utf8)
        let resolver = try gateway.run(
            "unbound", executable: "/usr/sbin/unbound", arguments: ["-d", "-c", unboundConf.path], folder: folder)
        processes.withLock { $0.append(resolver) }

        // Ready when the client's AAAA query for the registrar comes back synthesized.
        let probe = Repository.root.appendingPathComponent("Tests/Peers/netprobe.py").path
        let answer = client.exec(["/usr/bin/python3", probe, dns64 ? "aaaa" : "a", gatewayIPv6, registrarName, "10"])
        let expected = dns64 ? Self.synthesized(registrar.address) : registrar.address
        guard answer.status == 0, answer.output.contains(expected) else {
            throw TimedOut(
                what: "DNS to answer \(registrarName) with \(expected)",
                seen: [answer.output, resolver.output, translator.output])
        }
    }

    /// What tayga and unbound printed.
    public var gatewayOutput: String { processes.withLock { $0.map { "\($0.name):\n\($0.output)" } }.joined() }

    /// Kills every process in the bed's namespaces and deletes them. Safe to call twice.
    public func teardown() {
        guard
            tornDown.withLock({ done in
                defer { done = true }
                return !done
            })
        else { return }
        processes.withLock { $0.forEach { $0.stop() } }
        Topology.deleteNamespaces(namespaces)
        try? FileManager.default.removeItem(atPath: clientResolverFolder)
        if madeNetnsFolder, (try? FileManager.default.contentsOfDirectory(atPath: "/etc/netns"))?.isEmpty == true {
            try? FileManager.default.removeItem(atPath: "/etc/netns")
        }
    }

    deinit { teardown() }
}

/// Builds a ``NAT64Bed``, runs `body` with it and tears it down whether `body` returns or
/// throws.
public func withNAT64Bed<T>(
    folder: TemporaryFolder, dns64: Bool = true, _ body: (NAT64Bed) async throws -> T
) async throws -> T {
    let bed = try await NAT64Bed.build(folder: folder, dns64: dns64)
    do {
        let result = try await body(bed)
        bed.teardown()
        return result
    } catch {
        bed.teardown()
        throw error
    }
}
