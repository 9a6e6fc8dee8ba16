import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// An engine behind a NAT that moves to another subnet in the middle of a call: a `swiftpjsua
/// listen` (alice, playing a tone) registered with Kamailio (nathelper) on the public segment,
/// called by bob from there. The move deletes alice's address, adds one in another subnet and
/// moves the default route, as a phone switching networks does.
extension EngineTests {
    /// What one run of the move left behind.
    struct NetworkMove {
        /// alice's Contact bindings at Kamailio before the move, and 3 s after it.
        var contactsBefore: [String]
        var contactsAfter: [String]
        /// Everything alice printed.
        var alice: String
        /// The tone in the last 5 s of bob's recording (from 5 s after the move on).
        var toneAfterMove: ToneAnalysis
        /// Whether carol's call, placed through Kamailio after the move, reached alice.
        var laterCallArrived: Bool
        /// Where Kamailio received alice's requests from (address:port) before the move, and
        /// after it (until the test ends).
        var sourcesBefore: Set<String>
        var sourcesAfter: Set<String>
    }

    static let movingFrequency = 1000.0

    /// Waits until `user`'s registration at `kamailio` has settled into one binding (the
    /// Contact rewrite after the first REGISTER's answer replaces the first one).
    static func waitForOneBinding(of user: String, at kamailio: Kamailio) async throws {
        try await waitUntil(
            "one binding of \(user)", every: .milliseconds(100), seen: { "\(kamailio.receivedRequests)" }
        ) {
            kamailio.contacts(of: user).count == 1
        }
    }

    /// The move: a second subnet (10.0.9.0/24) on the NAT box's LAN, the host's address and
    /// default route into it, its old address gone, as a phone switching networks sees it.
    static func moveToAnotherSubnet(_ host: Topology.Host, behind box: Topology.NATBox) throws {
        let commands: [(Topology.Host?, [String])] = [
            (nil, ["ip", "addr", "add", "10.0.9.1/24", "dev", "lan"]),
            (host, ["ip", "addr", "add", "10.0.9.2/24", "dev", "eth0"]),
            (host, ["ip", "route", "replace", "default", "via", "10.0.9.1"]),
            (host, ["ip", "addr", "del", "\(host.address)/24", "dev", "eth0"]),
        ]
        for (target, command) in commands {
            let result = target?.exec(command) ?? box.exec(command)
            try #require(result.status == 0, "\(command): \(result.output)")
        }
    }

    /// Runs the move over `transport` (`udp` or `tcp`), with `--follow-network` on alice when
    /// `follows`.
    static func networkMove(follows: Bool, transport: String = "udp") async throws -> NetworkMove {
        try await withTemporaryFolder { folder in
            let tone = try folder.toneFile("alice-tone.wav", frequency: movingFrequency, duration: .seconds(30))
            let heard = folder.file("bob-heard.wav")
            return try await withTopology({ plan in
                plan.server("registrar")
                plan.server("bob")
                plan.client("alice")
            }) { bed in
                let registrarHost = bed.host("registrar")
                var tlsFiles: Kamailio.TLSFiles?
                var caFile: String?
                if transport == "tls" {
                    let certificates = try await TestCertificates.make(in: folder, addresses: [registrarHost.address])
                    tlsFiles = Kamailio.TLSFiles(
                        certificate: certificates.serverCertificate, privateKey: certificates.serverKey)
                    caFile = certificates.caCertificate.path
                }
                let kamailio = try await Kamailio.start(
                    folder: folder, tls: tlsFiles, in: registrarHost, natHelper: true)
                var environment: [String: String] = [:]
                // alice uses `transport` (TLS: the registrar's TLS port, its CA trusted); bob UDP.
                func account(_ user: String) -> [String] {
                    environment["PW_\(user)"] = Kamailio.passwords[user] ?? ""
                    var registrar = kamailio.uri
                    var options = ["--codecs", "PCMU"]
                    if user == "alice" {
                        options += ["--transport", transport]
                        if transport == "tcp" { registrar += ";transport=tcp" }
                        if let port = kamailio.tlsPort, let caFile {
                            registrar = "sip:\(kamailio.address):\(port);transport=tls"
                            options += ["--ca-file", caFile]
                        }
                    }
                    return [
                        "--port", "5060", "--registrar", registrar, "--id", kamailio.aor(user), "--username", user,
                        "--password-env", "PW_\(user)",
                    ] + options
                }
                let aliceHost = bed.host("alice"), box = bed.nat("alice")
                let aliceArguments =
                    [
                        "listen", "--play", tone.path,
                    ] + account("alice") + (follows ? ["--follow-network"] : [])
                let alice = try aliceHost.run(
                    "alice", executable: Repository.tool.path, arguments: aliceArguments, folder: folder,
                    environment: environment)
                try await alice.waitForOutput(containing: "registered expires=")
                let before = kamailio.contacts(of: "alice").map(\.contact)
                func aliceRequests() -> [Kamailio.Request] { kamailio.receivedRequests.filter { $0.user == "alice" } }
                let bob = try bed.host("bob").run(
                    "bob", executable: Repository.tool.path,
                    arguments: [
                        "call", kamailio.aor("alice"), "--record", heard.path, "--hangup-after", "12",
                    ] + account("bob"),
                    folder: folder, environment: environment)
                try await alice.waitForOutput(containing: " CONFIRMED", timeout: .seconds(10))
                // The scenario's timeline, not a settle: the move comes 2 s into the call, so that
                // the recording's last 5 s begin 5 s after it.
                try await Task.sleep(for: .seconds(2))

                let requestsBefore = aliceRequests()
                try Self.moveToAnotherSubnet(aliceHost, behind: box)
                // A followed move replaces the binding within 3 s; without --follow-network the
                // 3 s pass, to show that the binding stays.
                try? await waitUntil("alice's binding to move", timeout: .seconds(3), every: .milliseconds(100)) {
                    let now = kamailio.contacts(of: "alice").map(\.contact)
                    return follows && now.count == 1 && now != before
                }
                let after = kamailio.contacts(of: "alice").map(\.contact)

                // bob hangs up after 12 s; his recording then holds the call's last seconds.
                let bobStatus = try await bob.waitForExit(timeout: .seconds(20))
                #expect(bobStatus == 0 || !follows, "\(bob.output)")
                let recording = try WAVAudio(contentsOf: heard)
                let tail = Array(recording.samples.suffix(recording.sampleRate * 5))
                let toneAfter = ToneAnalysis(
                    WAVAudio(sampleRate: recording.sampleRate, samples: tail), frequency: movingFrequency)

                // A new call through the registrar after the move.
                _ = try bed.host("bob").run(
                    "carol", executable: Repository.tool.path,
                    arguments: ["call", kamailio.aor("alice"), "--hangup-after", "1"] + account("carol"),
                    folder: folder, environment: environment)
                let arrived: Bool
                do {
                    try await alice.waitForOutput(containing: "from <sip:carol@", timeout: .seconds(4))
                    arrived = true
                } catch {
                    arrived = false
                }
                let requestsAfter = aliceRequests().dropFirst(requestsBefore.count)
                return NetworkMove(
                    contactsBefore: before, contactsAfter: after, alice: alice.output, toneAfterMove: toneAfter,
                    laterCallArrived: arrived, sourcesBefore: Set(requestsBefore.map(\.source)),
                    sourcesAfter: Set(requestsAfter.map(\.source)))
            }
        }
    }

    @Test(
        """
        Network move (UDP, behind NAT): with --follow-network the registrar holds only the new Contact, the call is \
        re-INVITEd and the tone comes back; a later call arrives
        """
    )
    func networkMoveFollowed() async throws {
        try Self.expectFollowedMove(try await Self.networkMove(follows: true))
    }

    @Test(
        """
        Network move (TCP, behind NAT): with --follow-network the dead connection is shut down, the new one carries \
        the REGISTER, the re-INVITE and a later call
        """
    )
    func networkMoveFollowedTCP() async throws {
        let move = try await Self.networkMove(follows: true, transport: "tcp")
        try Self.expectFollowedMove(move, transport: "tcp")
        #expect(move.contactsAfter.allSatisfy { $0.lowercased().contains("transport=tcp") }, "\(move.contactsAfter)")
    }

    @Test(
        """
        Network move (TLS, behind NAT): with --follow-network the dead TLS connection is not reused; a new one carries \
        the REGISTER, the re-INVITE and a later call
        """
    )
    func networkMoveFollowedTLS() async throws {
        let move = try await Self.networkMove(follows: true, transport: "tls")
        try Self.expectFollowedMove(move, transport: "tls")
        #expect(move.contactsAfter.allSatisfy { $0.lowercased().contains("transport=tls") }, "\(move.contactsAfter)")
    }

    static func expectFollowedMove(_ move: NetworkMove, transport: String = "udp") throws {
        try #require(move.contactsBefore.count == 1, "\(move.contactsBefore)")
        #expect(move.contactsAfter.count == 1, "only the new binding 3 s after the move: \(move.contactsAfter)")
        #expect(move.contactsAfter != move.contactsBefore, "\(move.contactsBefore) → \(move.contactsAfter)")
        #expect(move.alice.contains("network-change targetRefreshSent"), "\(move.alice)")
        #expect(move.alice.contains("network-change completed"), "\(move.alice)")
        #expect(move.toneAfterMove.detected(minimumDuration: .milliseconds(1500)), "\(move.toneAfterMove)")
        try expectReconnection(in: move.alice, onlyNetworkChange: transport == "udp")
        #expect(move.laterCallArrived, "\(move.alice)")
        // After the move, nothing of alice's comes from the old address and port (for TCP:
        // over the dead connection).
        #expect(
            !move.sourcesAfter.isEmpty && move.sourcesAfter.isDisjoint(with: move.sourcesBefore),
            "before \(move.sourcesBefore), after \(move.sourcesAfter)")
    }

    /// alice's printed reconnection of the call: `reconnecting` after the change began (its
    /// first step, or over TCP and TLS the loss of the connection it shuts down, reported
    /// before that step), then `reconnected` (alternating, never twice in a row), the last
    /// one `reconnected` within 4 s of the change's start, so before the 5 s of bob's
    /// recording whose tone the test checks. Over UDP (`onlyNetworkChange`) exactly one
    /// episode, for the network change, started after its refresh; over TCP and TLS the
    /// lost connection starts one first, which may end before the refresh starts another.
    static func expectReconnection(in output: String, onlyNetworkChange: Bool) throws {
        let lines: [(at: Double, text: String)] = output.split(separator: "\n").compactMap { line in
            let parts = line.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let at = Double(parts[0]) else { return nil }
            return (at, parts[1].trimmingCharacters(in: .whitespaces))
        }
        let change = try #require(
            lines.first { $0.text.hasPrefix("network-change ") || $0.text.hasPrefix("transport-lost ") }, "\(output)")
        let phases = lines.filter { $0.text.hasPrefix("reconnect") }
        let words = phases.map {
            $0.text.hasPrefix("reconnecting ") ? "reconnecting" : String($0.text.prefix(while: { $0 != " " }))
        }
        try #require(!words.isEmpty, "no reconnection printed:\n\(output)")
        #expect(
            words.enumerated().allSatisfy { $1 == ($0 % 2 == 0 ? "reconnecting" : "reconnected") }
                && words.last == "reconnected", "\(words)\n\(output)")
        #expect(phases.allSatisfy { $0.at >= change.at }, "\(output)")
        if let last = phases.last { #expect(last.at - change.at < 4, "reconnected \(last.at - change.at) s after") }
        if onlyNetworkChange {
            let refresh = try #require(lines.first { $0.text.hasPrefix("network-change targetRefreshSent") })
            #expect(words == ["reconnecting", "reconnected"], "\(output)")
            #expect(phases.first?.text.hasSuffix(" network-change") == true, "\(output)")
            #expect(phases.allSatisfy { $0.at >= refresh.at }, "\(output)")
        }
    }

    @Test(
        """
        Network move (UDP, behind NAT), the negative control: without --follow-network the registrar keeps the dead \
        binding and a later call never arrives
        """
    )
    func networkMoveUnfollowed() async throws {
        let move = try await Self.networkMove(follows: false)
        try #require(move.contactsBefore.count == 1, "\(move.contactsBefore)")
        #expect(move.contactsAfter == move.contactsBefore, "\(move.contactsAfter)")
        #expect(!move.alice.contains("network-change"), "\(move.alice)")
        #expect(!move.laterCallArrived, "\(move.alice)")
    }
}

extension EngineTests {
    @Test(
        """
        Network change: five flaps of a registered engine's link in 2 s give one re-registration, not five (behind \
        NAT, Kamailio)
        """
    )
    func networkFlappingRegistersOnce() async throws {
        try await withTemporaryFolder { folder in
            try await withTopology({ plan in
                plan.server("registrar")
                plan.client("alice")
            }) { bed in
                let kamailio = try await Kamailio.start(folder: folder, in: bed.host("registrar"), natHelper: true)
                let host = bed.host("alice")
                let alice = try host.run(
                    "alice", executable: Repository.tool.path,
                    arguments: [
                        "listen", "--port", "5060", "--registrar", kamailio.uri, "--id", kamailio.aor("alice"),
                        "--username", "alice", "--password-env", "PW", "--follow-network",
                    ], folder: folder, environment: ["PW": Kamailio.passwords["alice"] ?? ""])
                try await alice.waitForOutput(containing: "registered expires=")
                try await Self.waitForOneBinding(of: "alice", at: kamailio)
                let before = kamailio.receivedRequests.filter { $0.method == "REGISTER" && $0.user == "alice" }.count
                for _ in 0..<5 {
                    #expect(host.exec(["ip", "link", "set", "eth0", "down"]).status == 0)
                    try await Task.sleep(for: .milliseconds(150))
                    #expect(host.exec(["ip", "link", "set", "eth0", "up"]).status == 0)
                    // Down drops the default route: put it back, as a DHCP client would.
                    _ = host.exec(["ip", "route", "replace", "default", "via", bed.nat("alice").privateAddress])
                    // The flaps' pace is the scenario: five in 2 s.
                    try await Task.sleep(for: .milliseconds(250))
                }
                try await alice.waitForOutput(containing: "network-change completed", timeout: .seconds(10))
                // Not a settle: time for a second change or more REGISTERs, which must not come.
                try await Task.sleep(for: .seconds(2))
                let output = alice.output
                #expect(output.components(separatedBy: "network-change completed").count - 1 == 1, "\(output)")
                let registers =
                    kamailio.receivedRequests.filter { $0.method == "REGISTER" && $0.user == "alice" }.count - before
                // One re-registration: its REGISTER, and the retry with credentials after a 401.
                #expect((1...2).contains(registers), "\(registers) REGISTERs after five flaps: \(output)")
                #expect(kamailio.contacts(of: "alice").count == 1, "\(kamailio.contacts(of: "alice").map(\.contact))")
            }
        }
    }
}

extension EngineTests {
    @Test(
        """
        Network change while the registrar is unreachable: the change completes with the REGISTER's 408, nothing \
        crashes, and the account registers once the registrar is back
        """
    )
    func networkChangeWithRegistrarDown() async throws {
        try await withTemporaryFolder { folder in
            try await withTopology({ plan in
                plan.server("registrar")
                plan.server("bob")
                plan.client("alice")
            }) { bed in
                let kamailio = try await Kamailio.start(folder: folder, in: bed.host("registrar"), natHelper: true)
                let host = bed.host("alice"), registrar = bed.host("registrar")
                // T1 100 ms: an unanswered REGISTER fails after 6.4 s; retry 1 s after a failure.
                let alice = try host.run(
                    "alice", executable: Repository.tool.path,
                    arguments: [
                        "listen", "--port", "5060", "--registrar", kamailio.uri, "--id", kamailio.aor("alice"),
                        "--username", "alice", "--password-env", "PW", "--follow-network",
                        "--t1", "100", "--retry", "1",
                    ], folder: folder, environment: ["PW": Kamailio.passwords["alice"] ?? ""])
                try await alice.waitForOutput(containing: "registered expires=")
                try await Self.waitForOneBinding(of: "alice", at: kamailio)
                try #require(registrar.exec(["ip", "link", "set", "eth0", "down"]).status == 0)
                let box = bed.nat("alice")
                try Self.moveToAnotherSubnet(host, behind: box)
                // The change's REGISTER goes unanswered: 408 after 64 × T1, then completed.
                try await alice.waitForOutput(containing: "network-change completed", timeout: .seconds(15))
                let output = alice.output
                #expect(output.contains("network-change contactUpdated account"), "\(output)")
                #expect(output.contains(" 408"), "\(output)")
                #expect(alice.exitStatus == nil, "alice is still running: \(output)")
                // The registrar comes back: the account registers again, at the new address.
                let registeredBefore = output.components(separatedBy: "registered expires=").count
                try #require(registrar.exec(["ip", "link", "set", "eth0", "up"]).status == 0)
                try? await waitUntil("alice registered again", timeout: .seconds(15)) {
                    alice.output.components(separatedBy: "registered expires=").count > registeredBefore
                }
                #expect(
                    alice.output.components(separatedBy: "registered expires=").count > registeredBefore,
                    "\(alice.output)")
                // bob's call through the registrar reaches alice at her new address.
                _ = try bed.host("bob").run(
                    "bob", executable: Repository.tool.path,
                    arguments: [
                        "call", kamailio.aor("alice"), "--port", "5060", "--registrar", kamailio.uri, "--id",
                        kamailio.aor("bob"), "--username", "bob", "--password-env", "PW", "--hangup-after", "1",
                    ], folder: folder, environment: ["PW": Kamailio.passwords["bob"] ?? ""])
                try await alice.waitForOutput(containing: "from <sip:bob@", timeout: .seconds(8))
            }
        }
    }
}

extension EngineTests {
    @Test(
        """
        Network change while an incoming call rings: the call keeps ringing, is answered from the new address, \
        confirmed and carries the tone
        """
    )
    func networkChangeWhileRinging() async throws {
        try await withTemporaryFolder { folder in
            let tone = try folder.toneFile("alice-tone.wav", frequency: Self.movingFrequency, duration: .seconds(30))
            let heard = folder.file("bob-heard.wav")
            try await withTopology({ plan in
                plan.server("registrar")
                plan.server("bob")
                plan.client("alice")
            }) { bed in
                let kamailio = try await Kamailio.start(folder: folder, in: bed.host("registrar"), natHelper: true)
                func account(_ user: String) -> [String] {
                    [
                        "--port", "5060", "--registrar", kamailio.uri, "--id", kamailio.aor(user),
                        "--username", user, "--password-env", "PW_\(user)", "--codecs", "PCMU",
                    ]
                }
                let environment = [
                    "PW_alice": Kamailio.passwords["alice"] ?? "", "PW_bob": Kamailio.passwords["bob"] ?? "",
                ]
                let host = bed.host("alice"), box = bed.nat("alice")
                let alice = try host.run(
                    "alice", executable: Repository.tool.path,
                    arguments: [
                        "listen", "--play", tone.path, "--answer-after", "4", "--follow-network",
                    ] + account("alice"),
                    folder: folder, environment: environment)
                try await alice.waitForOutput(containing: "registered expires=")
                let bob = try bed.host("bob").run(
                    "bob", executable: Repository.tool.path,
                    arguments: [
                        "call", kamailio.aor("alice"), "--record", heard.path, "--hangup-after", "4",
                    ] + account("bob"),
                    folder: folder, environment: environment)
                try await alice.waitForOutput(containing: "ringing ", timeout: .seconds(10))
                try Self.moveToAnotherSubnet(host, behind: box)
                try await alice.waitForOutput(containing: "network-change completed", timeout: .seconds(6))
                // Still ringing through the change: pjsua leaves incoming early calls alone.
                #expect(!alice.output.contains("network-change callEnded"), "\(alice.output)")
                try await alice.waitForOutput(containing: " CONFIRMED", timeout: .seconds(10))
                let status = try await bob.waitForExit(timeout: .seconds(20))
                #expect(status == 0, "bob's call was confirmed and ended by his hangup: \(bob.output)")
                let recording = try WAVAudio(contentsOf: heard)
                let analysis = ToneAnalysis(recording, frequency: Self.movingFrequency)
                #expect(analysis.detected(minimumDuration: .milliseconds(1500)), "\(analysis)")
            }
        }
    }
}
