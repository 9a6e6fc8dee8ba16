import Foundation
import PJSUATestSupport
import Testing

/// The namespace test bed itself: reachability through its NATs, what the servers see, and
/// that nothing is left behind.
@Suite("Topology")
struct TopologyTests {
    static let probe = Repository.root.appendingPathComponent("Tests/Peers/netprobe.py").path

    /// The interface names in the root namespace (`ip -o link`).
    static func rootLinks() -> Set<String> {
        Set(
            (commandOutput("/usr/sbin/ip", ["-o", "link"])?.output ?? "").split(whereSeparator: \.isNewline)
                .compactMap { $0.split(separator: ":").dropFirst().first?.trimmingCharacters(in: .whitespaces) })
    }

    /// Two servers each answer a datagram from one client socket with the source they saw.
    static func sources(seenFrom client: Topology.Host, in bed: Topology, folder: TemporaryFolder) async throws
        -> [String]
    {
        var echoes: [PeerProcess] = []
        defer { echoes.forEach { $0.stop() } }
        for server in bed.servers {
            let echo = try server.run(
                "echo-\(server.name)", executable: "/usr/bin/python3",
                arguments: ["-u", probe, "serve", server.address, "7000"], folder: folder)
            echoes.append(echo)
            try await echo.waitForOutput(containing: "serving")
        }
        let result = client.exec(
            ["/usr/bin/python3", probe, "send", "40000"] + bed.servers.map { "\($0.address):7000" })
        #expect(result.status == 0, "\(result.output)")
        return result.output.split(whereSeparator: \.isNewline).compactMap { line in
            line.split(separator: " ").last.map(String.init)
        }
    }

    @Test(
        """
        The bed: a client reaches public servers through its NAT, which rewrites its source (one port for every \
        destination, or one per destination when symmetric); teardown leaves nothing
        """,
        arguments: [
            NATBehavior.endpointIndependent, NATBehavior(mapping: .addressAndPortDependent, udpTimeout: .seconds(3)),
        ])
    func bedThroughNAT(nat: NATBehavior) async throws {
        try await withTemporaryFolder { folder in
            let linksBefore = Self.rootLinks()
            let started = ContinuousClock.now
            var built = started, bodyEnded = started
            var prefix = ""
            var sleeper: PeerProcess?
            try await withTopology({ plan in
                plan.server("one")
                plan.server("two")
                plan.client("alice", nat: nat)
            }) { bed in
                built = .now
                prefix = bed.prefix
                #expect(Topology.namespaces(withPrefix: prefix).count == 5)
                let alice = bed.host("alice"), box = bed.nat("alice")
                #expect(alice.address.hasPrefix("10.0."))
                let seen = try await Self.sources(seenFrom: alice, in: bed, folder: folder)
                try #require(seen.count == 2, "\(seen)")
                // Both servers see the NAT's public address, never the private one.
                #expect(seen.allSatisfy { $0.hasPrefix("\(box.publicAddress):") }, "\(seen)")
                let ports = Set(seen.map { $0.split(separator: ":").last.map(String.init) ?? "" })
                if nat.mapping == .endpointIndependent {
                    #expect(ports == ["40000"], "\(seen)")
                } else {
                    #expect(ports.count == 2, "\(seen)")
                }
                // The conntrack timeout is the NAT namespace's own: the root's is untouched.
                let rootTimeout = commandOutput(
                    "/usr/sbin/sysctl", ["-n", "net.netfilter.nf_conntrack_udp_timeout_stream"])?.output
                if let timeout = nat.udpTimeout {
                    #expect(box.udpTimeoutSeconds == Int(timeout.components.seconds))
                    #expect(rootTimeout != String(timeout.components.seconds))
                }
                // A process left running inside is killed by the teardown.
                let running = try alice.run("sleeper", executable: "/usr/bin/sleep", arguments: ["60"], folder: folder)
                sleeper = running
                try await waitUntil("the sleeper inside the namespace", timeout: .seconds(5)) {
                    !alice.processIDs.isEmpty
                }
                bodyEnded = .now
            }
            let tornDown = ContinuousClock.now
            #expect(Topology.namespaces(withPrefix: prefix).isEmpty)
            #expect(Self.rootLinks() == linksBefore)
            let exited = try await sleeper?.waitForExit(timeout: .seconds(5))
            #expect(exited != nil && exited != 0)
            // The bed's own cost (not the probes' python start-ups): build plus teardown.
            let cost = (built - started) + (tornDown - bodyEnded)
            #expect(cost < .seconds(5), "build \(built - started), teardown \(tornDown - bodyEnded)")
        }
    }

    @Test("The bed: a 1:1 NAT forwards what is sent to its public address to the host behind it")
    func oneToOneNAT() async throws {
        try await withTemporaryFolder { folder in
            try await withTopology({ plan in
                plan.server("client")
                plan.client("cloud", nat: .oneToOne)
            }) { bed in
                let cloud = bed.host("cloud"), box = bed.nat("cloud"), client = bed.host("client")
                let echo = try cloud.run(
                    "echo-cloud", executable: "/usr/bin/python3",
                    arguments: ["-u", Self.probe, "serve", "0.0.0.0", "7000"],
                    folder: folder)
                try await echo.waitForOutput(containing: "serving")
                let result = client.exec(["/usr/bin/python3", Self.probe, "send", "41000", "\(box.publicAddress):7000"])
                #expect(result.status == 0, "\(result.output)")
                // The host behind sees the client's own address; the client's reply came back.
                #expect(result.output.contains("seen \(client.address):41000"), "\(result.output)")
            }
        }
    }

    @Test("The bed: sipp behind a NAT places a call to a swiftpjsua listener on the public segment")
    func sippInsideANamespace() async throws {
        try await withTemporaryFolder { folder in
            try await withTopology({ plan in
                plan.server("callee")
                plan.client("caller")
            }) { bed in
                let callee = bed.host("callee")
                let listener = try callee.run(
                    "listen", executable: Repository.tool.path,
                    arguments: ["listen", "--bind", callee.address, "--port", "5060"], folder: folder)
                try await listener.waitUntilListening()
                let sipp = try await Sipp.start(
                    scenario: "uac", remote: "\(callee.address):5060", folder: folder, timeout: .seconds(15),
                    in: bed.host("caller"))
                #expect(sipp.address == bed.host("caller").address)
                let result = try await sipp.finish(timeout: .seconds(20))
                #expect(result.successfulCalls == 1, "\(result)")
                try await listener.waitForOutput(containing: "incoming call")
            }
        }
    }
}
