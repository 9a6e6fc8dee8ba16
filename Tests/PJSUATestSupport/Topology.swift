import Foundation
import SwiftPJSUA

/// How a NAT box between a client segment and the public segment maps and filters UDP.
///
/// Linux conntrack filters inbound packets by the whole 5-tuple of the mapping (only the
/// address and port a client sent to can answer), so every behaviour here has
/// address-and-port-dependent *filtering* (RFC 4787); they differ in the *mapping*.
public struct NATBehavior: Sendable, Hashable {
    /// How the NAT picks the public port of a new flow.
    public enum Mapping: Sendable, Hashable {
        /// Endpoint-independent mapping: nftables `masquerade`, which keeps the client's
        /// source port when it is free, so every destination sees the same public
        /// address and port ("port-restricted cone").
        case endpointIndependent
        /// Address-and-port-dependent mapping ("symmetric"): nftables `masquerade random`,
        /// a fresh random public port for each new destination address and port.
        case addressAndPortDependent
        /// 1:1 NAT (a cloud VM's public address): everything sent to the NAT's public
        /// address is forwarded to the site's first host (DNAT) and the host's traffic
        /// leaves with the public address (SNAT), ports unchanged.
        case oneToOne
    }

    /// The mapping behaviour.
    public var mapping: Mapping
    /// The UDP mapping lifetime, set in the NAT's namespace as
    /// `net.netfilter.nf_conntrack_udp_timeout` and `nf_conntrack_udp_timeout_stream`
    /// (per network namespace); `nil` keeps the kernel's defaults (30 s / 120 s).
    public var udpTimeout: Duration?

    public init(mapping: Mapping = .endpointIndependent, udpTimeout: Duration? = nil) {
        self.mapping = mapping
        self.udpTimeout = udpTimeout
    }

    /// A home router: endpoint-independent mapping, default timeouts.
    public static let endpointIndependent = NATBehavior(mapping: .endpointIndependent)
    /// A symmetric NAT: address-and-port-dependent mapping.
    public static let symmetric = NATBehavior(mapping: .addressAndPortDependent)
    /// A cloud VM's 1:1 NAT.
    public static let oneToOne = NATBehavior(mapping: .oneToOne)
}

/// A failure while building the topology: the command that failed and what it printed.
public struct TopologyError: Error, CustomStringConvertible {
    public let command: [String]
    public let status: Int32
    public let output: String
    public var description: String { "\(command.joined(separator: " ")) exited \(status): \(output)" }
}

/// A simulated internet made of network namespaces: a public segment (a bridge in its own
/// namespace, 203.0.113.0/24) with server hosts on it, and client sites, each a LAN
/// (10.0.N.0/24) behind a NAT box namespace whose WAN side sits on the public segment.
///
/// ```
/// servers  203.0.113.10, .11, …            ─┐
///                                           ├─ bridge (namespace "pub")
/// NAT box  203.0.113.100+N (wan) ───────────┘
///          10.0.N.1 (lan) ── hosts 10.0.N.2, .3, …   (default route via 10.0.N.1)
/// ```
///
/// Every namespace is named `spj-<6 hex>-<role>`; nothing is created in the root namespace
/// (veth pairs are created directly inside their namespaces). Use ``withTopology(_:_:)``,
/// which tears the bed down when its body returns or throws: every process inside the
/// namespaces is killed and the namespaces (and with them every veth) are deleted.
///
/// Processes started with ``Host/run(_:executable:arguments:folder:environment:lifetimeSeconds:)``
/// are ``PeerProcess``es whose command runs under `ip netns exec`.
public final class Topology: Sendable {
    /// What to build: servers on the public segment and client sites behind NATs.
    public struct Plan: Sendable {
        struct Site: Sendable {
            var name: String
            var nat: NATBehavior
            var hosts: [String]
        }
        var servers: [String] = []
        var sites: [Site] = []

        public init() {}

        /// A host on the public segment (203.0.113.10 and up, in the order added).
        public mutating func server(_ name: String) { servers.append(name) }

        /// A client site named `name`: a NAT box with behaviour `nat` and a LAN with `hosts`
        /// on it (10.0.N.2 and up); one host named like the site when `hosts` is empty.
        public mutating func site(_ name: String, nat: NATBehavior = .endpointIndependent, hosts: [String] = []) {
            sites.append(Site(name: name, nat: nat, hosts: hosts.isEmpty ? [name] : hosts))
        }

        /// One client host `name` alone behind its own NAT box (the site is named like it).
        public mutating func client(_ name: String, nat: NATBehavior = .endpointIndependent) {
            site(name, nat: nat)
        }
    }

    /// A host: one network namespace with one interface (`eth0`).
    public struct Host: Sendable {
        /// The role given in the plan, e.g. `registrar` or `alice`.
        public let name: String
        /// The network namespace, e.g. `spj-3fa9c1-alice`.
        public let namespace: String
        /// The host's IPv4 address on its segment (public 203.0.113.x, or private 10.0.N.x).
        public let address: String

        /// The command prefix that runs a program inside this host's namespace.
        public var launcher: [String] { ["/usr/sbin/ip", "netns", "exec", namespace] }

        /// Starts `executable` inside the namespace as a ``PeerProcess``.
        public func run(
            _ name: String, executable: String, arguments: [String], folder: TemporaryFolder,
            environment: [String: String] = [:], lifetimeSeconds: Int = 300
        ) throws -> PeerProcess {
            try PeerProcess(
                name, executable: executable, arguments: arguments, folder: folder, lifetimeSeconds: lifetimeSeconds,
                environment: environment, launcher: launcher)
        }

        /// Runs a short command inside the namespace to its end: its exit status and its
        /// output (standard output and standard error), trimmed.
        @discardableResult
        public func exec(_ command: [String]) -> (status: Int32, output: String) {
            commandOutput(launcher[0], Array(launcher.dropFirst()) + command, withStandardError: true) ?? (-1, "")
        }

        /// The ids of the processes running in the namespace (`ip netns pids`).
        public var processIDs: [Int32] {
            let text = commandOutput("/usr/sbin/ip", ["netns", "pids", namespace])?.output ?? ""
            return text.split(whereSeparator: \.isNewline).compactMap { Int32($0) }
        }

        /// Whether something in the namespace has bound UDP `port` (from `ss`).
        public func isUDPBound(_ port: UInt16) -> Bool {
            exec(["/usr/bin/ss", "-Hlun", "sport", "= :\(port)"]).output.contains(":\(port)")
        }
    }

    /// A NAT box: the router of a client site.
    public struct NATBox: Sendable {
        /// The site's name.
        public let name: String
        /// The NAT box's namespace, e.g. `spj-3fa9c1-alice-nat`.
        public let namespace: String
        /// The NAT's address on the public segment: what servers see as the source.
        public let publicAddress: String
        /// The NAT's address on the site's LAN (the hosts' default gateway).
        public let privateAddress: String
        /// The behaviour it was built with.
        public let behavior: NATBehavior

        var host: Host { Host(name: name, namespace: namespace, address: publicAddress) }

        /// Runs a short command inside the NAT box's namespace (e.g. `nft list ruleset`).
        @discardableResult
        public func exec(_ command: [String]) -> (status: Int32, output: String) { host.exec(command) }

        /// Sets the UDP mapping lifetime (both conntrack UDP timeouts) in this namespace.
        public func setUDPTimeout(_ timeout: Duration) throws {
            let seconds = max(1, Int(timeout.components.seconds))
            for key in ["nf_conntrack_udp_timeout", "nf_conntrack_udp_timeout_stream"] {
                let result = exec(["/usr/sbin/sysctl", "-qw", "net.netfilter.\(key)=\(seconds)"])
                guard result.status == 0 else {
                    throw TopologyError(command: ["sysctl", key], status: result.status, output: result.output)
                }
            }
        }

        /// The UDP mapping lifetime in force in this namespace, in seconds (from sysctl).
        public var udpTimeoutSeconds: Int? {
            Int(exec(["/usr/sbin/sysctl", "-n", "net.netfilter.nf_conntrack_udp_timeout_stream"]).output)
        }
    }

    /// The random part of every namespace name, `spj-<6 hex>`.
    public let prefix: String
    /// The servers on the public segment, in the order planned.
    public let servers: [Host]
    /// Every client host, in the order planned.
    public let clients: [Host]
    /// Every NAT box, in the order planned.
    public let nats: [NATBox]
    private let namespaces: [String]
    private let tornDown = Protected(false)

    private init(prefix: String, servers: [Host], clients: [Host], nats: [NATBox], namespaces: [String]) {
        self.prefix = prefix
        self.servers = servers
        self.clients = clients
        self.nats = nats
        self.namespaces = namespaces
    }

    /// The host (server or client) planned as `name`.
    public func host(_ name: String) -> Host {
        guard let host = (servers + clients).first(where: { $0.name == name }) else {
            preconditionFailure("no host \(name) in the topology")
        }
        return host
    }

    /// The NAT box of the site planned as `name` (a client's name for ``Plan/client(_:nat:)``).
    public func nat(_ name: String) -> NATBox {
        guard let nat = nats.first(where: { $0.name == name }) else { preconditionFailure("no site \(name)") }
        return nat
    }

    /// Builds the namespaces, links, addresses, routes and NAT rules of `plan`. On failure
    /// everything already made is removed before the error is thrown.
    /// - Throws: ``TopologyError`` naming the command that failed.
    public static func build(_ plan: Plan) async throws -> Topology {
        let prefix = "spj-" + String(format: "%06x", UInt32.random(in: 0...0xFF_FFFF))
        let bridge = "\(prefix)-pub"
        var namespaces = [bridge]
        var servers: [Host] = []
        var clients: [Host] = []
        var nats: [NATBox] = []
        var commands: [[String]] = []
        func ip(_ namespace: String, _ arguments: String) { commands.append(["ip", "-n", namespace, arguments]) }
        // Makes a veth pair with one end (named `inner`) in `namespace` and the other
        // (`port`) on the bridge.
        func attach(_ namespace: String, inner: String, port: String, address: String) {
            commands.append([
                "ip", "link", "add", "name", inner, "netns", namespace, "type", "veth", "peer", "name", port,
                "netns", bridge,
            ])
            ip(bridge, "link set \(port) master br0 up")
            ip(namespace, "addr add \(address)/24 dev \(inner)")
            ip(namespace, "link set \(inner) up")
        }
        ip(bridge, "link add br0 type bridge")
        ip(bridge, "link set br0 up")
        for (index, name) in plan.servers.enumerated() {
            let namespace = "\(prefix)-\(name)"
            namespaces.append(namespace)
            let address = "203.0.113.\(10 + index)"
            ip(namespace, "link set lo up")
            attach(namespace, inner: "eth0", port: "s\(index)", address: address)
            servers.append(Host(name: name, namespace: namespace, address: address))
        }
        var nftRules: [(String, String)] = []
        var sysctls: [(String, [String])] = []
        for (siteIndex, site) in plan.sites.enumerated() {
            let number = siteIndex + 1
            let natNamespace = "\(prefix)-\(site.name)-nat"
            namespaces.append(natNamespace)
            let publicAddress = "203.0.113.\(100 + number)"
            let gateway = "10.0.\(number).1"
            ip(natNamespace, "link set lo up")
            attach(natNamespace, inner: "wan", port: "n\(number)", address: publicAddress)
            // The LAN is a bridge in the NAT box, so a site can hold several hosts.
            ip(natNamespace, "link add lan type bridge")
            ip(natNamespace, "addr add \(gateway)/24 dev lan")
            ip(natNamespace, "link set lan up")
            var hostAddresses: [String] = []
            for (hostIndex, name) in site.hosts.enumerated() {
                let namespace = "\(prefix)-\(name)"
                namespaces.append(namespace)
                let address = "10.0.\(number).\(2 + hostIndex)"
                hostAddresses.append(address)
                ip(namespace, "link set lo up")
                commands.append([
                    "ip", "link", "add", "name", "eth0", "netns", namespace, "type", "veth", "peer", "name",
                    "h\(hostIndex)", "netns", natNamespace,
                ])
                ip(natNamespace, "link set h\(hostIndex) master lan")
                ip(namespace, "addr add \(address)/24 dev eth0")
                ip(namespace, "link set eth0 up")
                ip(namespace, "route add default via \(gateway)")
                clients.append(Host(name: name, namespace: namespace, address: address))
            }
            for hostIndex in site.hosts.indices { ip(natNamespace, "link set h\(hostIndex) up") }
            let translation: String
            switch site.nat.mapping {
            case .endpointIndependent:
                translation = """
                    chain postrouting { type nat hook postrouting priority srcnat; oifname "wan" masquerade; }
                    """
            case .addressAndPortDependent:
                translation = """
                    chain postrouting { type nat hook postrouting priority srcnat; oifname "wan" masquerade random; }
                    """
            case .oneToOne:
                translation = """
                    chain prerouting {
                        type nat hook prerouting priority dstnat;
                        iifname "wan" ip daddr \(publicAddress) dnat to \(hostAddresses[0]);
                    }
                    chain postrouting {
                        type nat hook postrouting priority srcnat;
                        oifname "wan" ip saddr \(hostAddresses[0]) snat to \(publicAddress);
                    }
                    """
            }
            // A packet from outside that opens no mapping is dropped before conntrack confirms
            // an entry for it, as a home router's firewall does. Left to reach the box, it
            // would leave an entry (peer -> public address:port) that makes the client's
            // own later flow to that peer take another public port, so hole punching
            // between two endpoint-independent NATs (RTP at STUN-learned addresses) fails.
            let firewall =
                site.nat.mapping == .oneToOne
                ? ""
                : """
                table ip filter {
                chain input { type filter hook input priority filter; iifname "wan" ct state new drop; }
                }

                """
            nftRules.append((natNamespace, "table ip nat {\n\(translation)\n}\n" + firewall))
            var settings = ["net.ipv4.ip_forward=1"]
            if let timeout = site.nat.udpTimeout {
                let seconds = max(1, Int(timeout.components.seconds))
                settings += [
                    "net.netfilter.nf_conntrack_udp_timeout=\(seconds)",
                    "net.netfilter.nf_conntrack_udp_timeout_stream=\(seconds)",
                ]
            }
            sysctls.append((natNamespace, settings))
            nats.append(
                NATBox(
                    name: site.name, namespace: natNamespace, publicAddress: publicAddress, privateAddress: gateway,
                    behavior: site.nat))
        }
        let topology = Topology(prefix: prefix, servers: servers, clients: clients, nats: nats, namespaces: namespaces)
        // One shell runs every command: a process launch from the test costs far more than
        // an `ip` command, and the bed must build in well under a second.
        var script = namespaces.map { "ip netns add \($0)" }
        script += commands.map { $0.joined(separator: " ") }
        for (namespace, settings) in sysctls {
            script.append("ip netns exec \(namespace) sysctl -qw \(settings.joined(separator: " "))")
        }
        for (namespace, rules) in nftRules {
            script.append("ip netns exec \(namespace) nft -f - <<'RULES'\n\(rules)RULES")
        }
        do {
            try shell(script.joined(separator: "\n"))
        } catch {
            topology.teardown()
            throw error
        }
        return topology
    }

    /// Builds the topology `configure` plans (a closure over a ``Plan``).
    public static func build(_ configure: (inout Plan) -> Void) async throws -> Topology {
        var plan = Plan()
        configure(&plan)
        return try await build(plan)
    }

    /// Kills every process inside the bed's namespaces and deletes the namespaces (which
    /// deletes their veths). Safe to call more than once.
    public func teardown() {
        guard
            tornDown.withLock({ done in
                defer { done = true }
                return !done
            })
        else { return }
        Self.deleteNamespaces(namespaces)
    }

    /// Kills every process inside `namespaces` and deletes them (which deletes their veths
    /// and tun devices); names that do not exist are skipped.
    static func deleteNamespaces(_ namespaces: [String]) {
        // A process that outlives its namespace's name keeps the namespace alive: kill
        // everything inside (again, for anything forked meanwhile), then delete.
        let script = namespaces.map { namespace in
            """
            if [ -e /run/netns/\(namespace) ]; then
              for attempt in 1 2 3 4 5 6 7 8 9 10; do
                pids=$(ip netns pids \(namespace) 2>/dev/null); [ -z "$pids" ] && break
                kill -9 $pids 2>/dev/null; sleep 0.02
              done
              ip netns del \(namespace)
            fi
            """
        }
        try? Self.shell(script.joined(separator: "\n"), exitOnError: false)
    }

    /// The names in `ip netns list` that start with `prefix` (for leak checks).
    public static func namespaces(withPrefix prefix: String) -> [String] {
        (commandOutput("/usr/sbin/ip", ["netns", "list"])?.output ?? "").split(whereSeparator: \.isNewline)
            .compactMap { $0.split(separator: " ").first.map(String.init) }.filter { $0.hasPrefix(prefix) }
    }

    /// Runs `script` with `/bin/sh` (stopping at the first failing command unless
    /// `exitOnError` is false) and throws when it fails, with the trace of what ran.
    static func shell(_ script: String, exitOnError: Bool = true) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [exitOnError ? "-exc" : "-c", script]
        process.environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TopologyError(command: ["/bin/sh", "-exc", "…"], status: process.terminationStatus, output: text)
        }
    }

    deinit { teardown() }
}

/// Builds the topology `plan` describes (``Topology/build(_:)``), runs `body` with it and
/// tears it down (``Topology/teardown()``) whether `body` returns or throws.
public func withTopology<T>(
    _ configure: (inout Topology.Plan) -> Void, _ body: (Topology) async throws -> T
) async throws -> T {
    let bed = try await Topology.build(configure)
    do {
        let result = try await body(bed)
        bed.teardown()
        return result
    } catch {
        bed.teardown()
        throw error
    }
}
