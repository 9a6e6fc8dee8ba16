import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// `handleNetworkChange` and the automatic mode: pjsua's steps reported in order, misuse
/// refused, and the netlink monitor (inside a network namespace of the test's own) turning
/// a burst of link changes into one handled change.
extension EngineTests {
    @Test("Network change: restart, re-REGISTER (200) and completion are reported in order, on the stream too")
    func networkChangeReportsSteps() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let kamailio = try await Kamailio.start(folder: folder)
        defer { kamailio.stop() }
        try await EngineHarness.run { h in
            let alice = try await h.engine.addAccount(Self.account("alice", at: kamailio), awaitingRegistration: .seconds(10)).account
            let before = kamailio.receivedRequests.filter { $0.method == "REGISTER" }.count
            let report = try await h.engine.handleNetworkChange()
            #expect(report.isComplete, "\(report.steps)")
            #expect(report.failures.isEmpty, "\(report.failures)")
            let steps = report.steps.map(\.step)
            #expect(steps.last == .completed, "\(steps)")
            #expect(steps.contains(.listenerRestarted), "\(steps)")
            let update = try #require(report.steps.first { $0.step == .contactUpdated }, "\(steps)")
            #expect(update.account == alice && update.isRegistration && update.statusCode == 200, "\(update)")
            if let restart = steps.firstIndex(of: .listenerRestarted), let contact = steps.firstIndex(of: .contactUpdated) {
                #expect(restart < contact, "listeners first, then the accounts: \(steps)")
            }
            // The registrar saw a new REGISTER, and the engine is registered after it.
            #expect(kamailio.receivedRequests.filter { $0.method == "REGISTER" }.count > before)
            #expect(try await h.engine.accountInfo(alice).isRegistered)
            // Every step went out on the event stream as well, ending with completed.
            let completed = try await h.log.first("completed on the stream") {
                if case .networkChange(let progress) = $0 { return progress.step == .completed }
                return false
            }
            #expect(completed.call == nil)
            // Calls keep working on the restarted listener.
            let (caller, _) = try await h.engine.answeredSelfCall(to: h.uri(), from: h.account, log: h.log)
            _ = try await h.log.first("confirmed after the change") { $0.isState(.confirmed, of: caller) }
            try await h.engine.hangup(caller)
        }
    }

    @Test("Network change: a second call while one runs, bad options, and calls outside running throw")
    func networkChangeMisuse() async throws {
        let engine = PJSUA()
        await #expect(throws: PJSUAUsageError.notStarted) { try await engine.handleNetworkChange() }
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let kamailio = try await Kamailio.start(folder: folder)
        defer { kamailio.stop() }
        // T1 of 50 ms: a REGISTER nobody answers fails after 64 × T1 = 3.2 s.
        try await EngineHarness.run(timers: SIPTimers(t1: .milliseconds(50))) { h in
            await #expect(throws: PJSUAUsageError.self) {
                try await h.engine.handleNetworkChange(NetworkChangeOptions(deadline: .zero))
            }
            await #expect(throws: PJSUAUsageError.self) {
                try await h.engine.handleNetworkChange(NetworkChangeOptions(listenerRestartDelay: .seconds(11)))
            }
            let alice = try await h.engine.addAccount(Self.account("alice", at: kamailio), awaitingRegistration: .seconds(10)).account
            // With the registrar gone, the change waits for its REGISTER to time out, so it is
            // still running when the second one is asked for.
            kamailio.stop()
            async let first = h.engine.handleNetworkChange(NetworkChangeOptions(deadline: .seconds(20)))
            try await Task.sleep(for: .milliseconds(300))
            await #expect(throws: PJSUAUsageError.networkChangeInProgress) {
                try await h.engine.handleNetworkChange()
            }
            let report = try await first
            #expect(report.isComplete && report.steps.last?.step == .completed, "\(report.steps)")
            let update = report.steps.first { $0.step == .contactUpdated }
            #expect(update?.account == alice && update?.isRegistration == true, "\(report.steps)")
            #expect(update?.statusCode == 408, "the unanswered REGISTER: \(report.steps)")
            // Once completed, a new change is accepted.
            #expect(try await h.engine.handleNetworkChange(NetworkChangeOptions(deadline: .seconds(20))).isComplete)
            await h.engine.shutdown()
            await #expect(throws: PJSUAUsageError.shutDown) { try await h.engine.handleNetworkChange() }
        }
    }

    @Test("Network change: automatic mode turns five link flaps in 2 s into one handled change (netlink, own namespace)")
    func networkFlappingGivesOneChange() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let space = try ScratchNamespace("flap")
        defer { space.remove() }
        // Both ends of a veth pair inside the namespace (this kernel has no dummy links).
        try space.run("ip", "link", "add", "flap0", "type", "veth", "peer", "name", "flap1")
        try space.run("ip", "addr", "add", "10.77.0.1/24", "dev", "flap0")
        try space.run("ip", "link", "set", "flap1", "up")
        try space.run("ip", "link", "set", "flap0", "up")
        let port = FreePort.udp()
        let listener = try PeerProcess(
            "listener", executable: "/usr/sbin/ip",
            arguments: ["netns", "exec", space.name, Repository.tool.path, "listen", "--bind", "10.77.0.1",
                        "--port", "\(port)", "--follow-network"], folder: folder)
        defer { listener.stop() }
        try await listener.waitUntilListening()
        // A change on the loopback interface is not a network change.
        try space.run("ip", "addr", "add", "127.0.0.9/8", "dev", "lo")
        try await Task.sleep(for: .seconds(1.5))
        #expect(!listener.output.contains("network-change"), "\(listener.output)")
        for _ in 0..<5 {
            try space.run("ip", "link", "set", "flap0", "down")
            try await Task.sleep(for: .milliseconds(150))
            try space.run("ip", "link", "set", "flap0", "up")
            try await Task.sleep(for: .milliseconds(150))
        }
        try await listener.waitForOutput(containing: "network-change completed", timeout: .seconds(10))
        // Well past the debounce: nothing more comes.
        try await Task.sleep(for: .seconds(2))
        let output = listener.output
        #expect(output.components(separatedBy: "network-change completed").count - 1 == 1, "\(output)")
        #expect(output.contains("network-change listenerRestarted"), "\(output)")
    }

    /// The first process named `name` among the descendants of `pid` (PeerProcess runs its
    /// command under `timeout`, and here under python's exec as well).
    static func childPID(of pid: Int32, named name: String) -> Int32? {
        var queue = [pid]
        while let parent = queue.first {
            queue.removeFirst()
            let children = (try? String(contentsOfFile: "/proc/\(parent)/task/\(parent)/children", encoding: .utf8)) ?? ""
            for child in children.split(separator: " ").compactMap({ Int32($0) }) {
                let command = (try? String(contentsOfFile: "/proc/\(child)/comm", encoding: .utf8)) ?? ""
                if command.trimmingCharacters(in: .whitespacesAndNewlines) == name { return child }
                queue.append(child)
            }
        }
        return nil
    }

    @Test("Network change: where netlink is refused, --follow-network fails with the typed error; plain listen works and handles a change on SIGUSR1")
    func networkMonitorRefusedIsTypedError() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let guardScript = Repository.root.appendingPathComponent("Tests/Peers/no_netlink.py").path
        let refused = try PeerProcess(
            "refused", executable: "/usr/bin/python3",
            arguments: [guardScript, Repository.tool.path, "listen", "--bind", "127.0.0.1",
                        "--port", "\(FreePort.udp())", "--follow-network"], folder: folder)
        defer { refused.stop() }
        let status = try await refused.waitForExit(timeout: .seconds(20))
        #expect(status != 0)
        #expect(refused.output.contains("cannot watch the network: socket(AF_NETLINK) or bind failed"), "\(refused.output)")
        #expect(refused.output.contains("(13)"), "EACCES from the filter: \(refused.output)")

        let plain = try PeerProcess(
            "plain", executable: "/usr/bin/python3",
            arguments: [guardScript, Repository.tool.path, "listen", "--bind", "127.0.0.1", "--port", "\(FreePort.udp())"],
            folder: folder)
        defer { plain.stop() }
        try await plain.waitUntilListening()
        // Without the monitor, a network change handled on request (SIGUSR1) works.
        let tool = try #require(Self.childPID(of: plain.pid, named: "swiftpjsua"), "\(plain.output)")
        kill(tool, SIGUSR1)
        try await plain.waitForOutput(containing: "network-change completed", timeout: .seconds(10))
        #expect(plain.output.contains("network-change listenerRestarted"), "\(plain.output)")
    }
}

/// A network namespace of one test, with its loopback up: `spj-<6 hex>-<role>`, deleted by
/// ``remove()`` together with every process still running in it.
private struct ScratchNamespace {
    let name: String

    init(_ role: String) throws {
        name = "spj-\(String(UInt32.random(in: 0...0xFF_FFFF), radix: 16))-\(role)"
        try Self.ip(["netns", "add", name])
        do { try run("ip", "link", "set", "lo", "up") } catch {
            remove()
            throw error
        }
    }

    /// Runs a command inside the namespace; throws when it fails.
    func run(_ arguments: String...) throws {
        try Self.ip(["netns", "exec", name] + arguments)
    }

    func remove() {
        if let pids = commandOutput("/usr/sbin/ip", ["netns", "pids", name])?.output {
            for pid in pids.split(separator: "\n").compactMap({ Int32($0) }) { kill(pid, SIGKILL) }
        }
        _ = commandOutput("/usr/sbin/ip", ["netns", "del", name])
    }

    private static func ip(_ arguments: [String]) throws {
        guard let result = commandOutput("/usr/sbin/ip", arguments, withStandardError: true), result.status == 0 else {
            throw NamespaceCommandFailed(command: "ip " + arguments.joined(separator: " "))
        }
    }
}

private struct NamespaceCommandFailed: Error {
    let command: String
}

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
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let tone = folder.file("alice-tone.wav"), heard = folder.file("bob-heard.wav")
        try WAVAudio.tone(frequency: movingFrequency, duration: .seconds(30)).write(to: tone)
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
                tlsFiles = Kamailio.TLSFiles(certificate: certificates.serverCertificate, privateKey: certificates.serverKey)
                caFile = certificates.caCertificate.path
            }
            let kamailio = try await Kamailio.start(folder: folder, tls: tlsFiles, in: registrarHost, natHelper: true)
            defer { kamailio.stop() }
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
            let aliceArguments = ["listen", "--play", tone.path] + account("alice") + (follows ? ["--follow-network"] : [])
            let alice = try aliceHost.run(
                "alice", executable: Repository.tool.path, arguments: aliceArguments, folder: folder,
                environment: environment)
            defer { alice.stop() }
            try await alice.waitForOutput(containing: "registered expires=")
            let before = kamailio.contacts(of: "alice").map(\.contact)
            func aliceRequests() -> [Kamailio.Request] { kamailio.receivedRequests.filter { $0.user == "alice" } }
            let bob = try bed.host("bob").run(
                "bob", executable: Repository.tool.path,
                arguments: ["call", kamailio.aor("alice"), "--record", heard.path, "--hangup-after", "12"] + account("bob"),
                folder: folder, environment: environment)
            defer { bob.stop() }
            try await alice.waitForOutput(containing: " CONFIRMED", timeout: .seconds(10))
            try await Task.sleep(for: .seconds(2))

            let requestsBefore = aliceRequests()
            try Self.moveToAnotherSubnet(aliceHost, behind: box)
            try await Task.sleep(for: .seconds(3))
            let after = kamailio.contacts(of: "alice").map(\.contact)

            // bob hangs up after 12 s; his recording then holds the call's last seconds.
            let bobStatus = try await bob.waitForExit(timeout: .seconds(20))
            #expect(bobStatus == 0 || !follows, "\(bob.output)")
            let recording = try WAVAudio(contentsOf: heard)
            let tail = Array(recording.samples.suffix(recording.sampleRate * 5))
            let toneAfter = ToneAnalysis(WAVAudio(sampleRate: recording.sampleRate, samples: tail), frequency: movingFrequency)

            // A new call through the registrar after the move.
            let carol = try bed.host("bob").run(
                "carol", executable: Repository.tool.path,
                arguments: ["call", kamailio.aor("alice"), "--hangup-after", "1"] + account("carol"),
                folder: folder, environment: environment)
            defer { carol.stop() }
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

    @Test("Network move (UDP, behind NAT): with --follow-network the registrar holds only the new Contact, the call is re-INVITEd and the tone comes back; a later call arrives")
    func networkMoveFollowed() async throws {
        try Self.expectFollowedMove(try await Self.networkMove(follows: true))
    }

    @Test("Network move (TCP, behind NAT): with --follow-network the dead connection is shut down, the new one carries the REGISTER, the re-INVITE and a later call")
    func networkMoveFollowedTCP() async throws {
        let move = try await Self.networkMove(follows: true, transport: "tcp")
        try Self.expectFollowedMove(move)
        #expect(move.contactsAfter.allSatisfy { $0.lowercased().contains("transport=tcp") }, "\(move.contactsAfter)")
    }

    @Test("Network move (TLS, behind NAT): with --follow-network the dead TLS connection is not reused; a new one carries the REGISTER, the re-INVITE and a later call")
    func networkMoveFollowedTLS() async throws {
        let move = try await Self.networkMove(follows: true, transport: "tls")
        try Self.expectFollowedMove(move)
        #expect(move.contactsAfter.allSatisfy { $0.lowercased().contains("transport=tls") }, "\(move.contactsAfter)")
    }

    static func expectFollowedMove(_ move: NetworkMove) throws {
        try #require(move.contactsBefore.count == 1, "\(move.contactsBefore)")
        #expect(move.contactsAfter.count == 1, "only the new binding 3 s after the move: \(move.contactsAfter)")
        #expect(move.contactsAfter != move.contactsBefore, "\(move.contactsBefore) → \(move.contactsAfter)")
        #expect(move.alice.contains("network-change targetRefreshSent"), "\(move.alice)")
        #expect(move.alice.contains("network-change completed"), "\(move.alice)")
        #expect(move.toneAfterMove.detected(minimumDuration: .milliseconds(1500)), "\(move.toneAfterMove)")
        #expect(move.laterCallArrived, "\(move.alice)")
        // After the move, nothing of alice's comes from the old address and port (for TCP:
        // over the dead connection).
        #expect(!move.sourcesAfter.isEmpty && move.sourcesAfter.isDisjoint(with: move.sourcesBefore),
                "before \(move.sourcesBefore), after \(move.sourcesAfter)")
    }

    @Test("Network move (UDP, behind NAT), the negative control: without --follow-network the registrar keeps the dead binding and a later call never arrives")
    func networkMoveUnfollowed() async throws {
        let move = try await Self.networkMove(follows: false)
        try #require(move.contactsBefore.count == 1, "\(move.contactsBefore)")
        #expect(move.contactsAfter == move.contactsBefore, "\(move.contactsAfter)")
        #expect(!move.alice.contains("network-change"), "\(move.alice)")
        #expect(!move.laterCallArrived, "\(move.alice)")
    }
}

extension EngineTests {
    @Test("Network change: five flaps of a registered engine's link in 2 s give one re-registration, not five (behind NAT, Kamailio)")
    func networkFlappingRegistersOnce() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try await withTopology({ plan in
            plan.server("registrar")
            plan.client("alice")
        }) { bed in
            let kamailio = try await Kamailio.start(folder: folder, in: bed.host("registrar"), natHelper: true)
            defer { kamailio.stop() }
            let host = bed.host("alice")
            let alice = try host.run(
                "alice", executable: Repository.tool.path,
                arguments: [
                    "listen", "--port", "5060", "--registrar", kamailio.uri, "--id", kamailio.aor("alice"),
                    "--username", "alice", "--password-env", "PW", "--follow-network",
                ], folder: folder, environment: ["PW": Kamailio.passwords["alice"] ?? ""])
            defer { alice.stop() }
            try await alice.waitForOutput(containing: "registered expires=")
            // Let the initial registration (and its Contact rewrite) settle.
            try await Task.sleep(for: .seconds(1))
            let before = kamailio.receivedRequests.filter { $0.method == "REGISTER" && $0.user == "alice" }.count
            for _ in 0..<5 {
                #expect(host.exec(["ip", "link", "set", "eth0", "down"]).status == 0)
                try await Task.sleep(for: .milliseconds(150))
                #expect(host.exec(["ip", "link", "set", "eth0", "up"]).status == 0)
                // Down drops the default route: put it back, as a DHCP client would.
                _ = host.exec(["ip", "route", "replace", "default", "via", bed.nat("alice").privateAddress])
                try await Task.sleep(for: .milliseconds(250))
            }
            try await alice.waitForOutput(containing: "network-change completed", timeout: .seconds(10))
            try await Task.sleep(for: .seconds(2))
            let output = alice.output
            #expect(output.components(separatedBy: "network-change completed").count - 1 == 1, "\(output)")
            let registers = kamailio.receivedRequests.filter { $0.method == "REGISTER" && $0.user == "alice" }.count - before
            // One re-registration: its REGISTER, and the retry with credentials after a 401.
            #expect((1...2).contains(registers), "\(registers) REGISTERs after five flaps: \(output)")
            #expect(kamailio.contacts(of: "alice").count == 1, "\(kamailio.contacts(of: "alice").map(\.contact))")
        }
    }
}

extension EngineTests {
    @Test("Network change while the registrar is unreachable: the change completes with the REGISTER's 408, nothing crashes, and the account registers once the registrar is back")
    func networkChangeWithRegistrarDown() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try await withTopology({ plan in
            plan.server("registrar")
            plan.server("bob")
            plan.client("alice")
        }) { bed in
            let kamailio = try await Kamailio.start(folder: folder, in: bed.host("registrar"), natHelper: true)
            defer { kamailio.stop() }
            let host = bed.host("alice"), registrar = bed.host("registrar")
            // T1 100 ms: an unanswered REGISTER fails after 6.4 s; retry 1 s after a failure.
            let alice = try host.run(
                "alice", executable: Repository.tool.path,
                arguments: [
                    "listen", "--port", "5060", "--registrar", kamailio.uri, "--id", kamailio.aor("alice"),
                    "--username", "alice", "--password-env", "PW", "--follow-network", "--t1", "100", "--retry", "1",
                ], folder: folder, environment: ["PW": Kamailio.passwords["alice"] ?? ""])
            defer { alice.stop() }
            try await alice.waitForOutput(containing: "registered expires=")
            try await Task.sleep(for: .seconds(1))
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
            let deadline = ContinuousClock.now + .seconds(15)
            while alice.output.components(separatedBy: "registered expires=").count == registeredBefore,
                ContinuousClock.now < deadline
            {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(alice.output.components(separatedBy: "registered expires=").count > registeredBefore, "\(alice.output)")
            // bob's call through the registrar reaches alice at her new address.
            let bob = try bed.host("bob").run(
                "bob", executable: Repository.tool.path,
                arguments: [
                    "call", kamailio.aor("alice"), "--port", "5060", "--registrar", kamailio.uri, "--id",
                    kamailio.aor("bob"), "--username", "bob", "--password-env", "PW", "--hangup-after", "1",
                ], folder: folder, environment: ["PW": Kamailio.passwords["bob"] ?? ""])
            defer { bob.stop() }
            try await alice.waitForOutput(containing: "from <sip:bob@", timeout: .seconds(8))
        }
    }
}

extension EngineTests {
    @Test("Network change while an incoming call rings: the call keeps ringing, is answered from the new address, confirmed and carries the tone")
    func networkChangeWhileRinging() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let tone = folder.file("alice-tone.wav"), heard = folder.file("bob-heard.wav")
        try WAVAudio.tone(frequency: Self.movingFrequency, duration: .seconds(30)).write(to: tone)
        try await withTopology({ plan in
            plan.server("registrar")
            plan.server("bob")
            plan.client("alice")
        }) { bed in
            let kamailio = try await Kamailio.start(folder: folder, in: bed.host("registrar"), natHelper: true)
            defer { kamailio.stop() }
            func account(_ user: String) -> [String] {
                [
                    "--port", "5060", "--registrar", kamailio.uri, "--id", kamailio.aor(user),
                    "--username", user, "--password-env", "PW_\(user)", "--codecs", "PCMU",
                ]
            }
            let environment = ["PW_alice": Kamailio.passwords["alice"] ?? "", "PW_bob": Kamailio.passwords["bob"] ?? ""]
            let host = bed.host("alice"), box = bed.nat("alice")
            let alice = try host.run(
                "alice", executable: Repository.tool.path,
                arguments: ["listen", "--play", tone.path, "--answer-after", "4", "--follow-network"] + account("alice"),
                folder: folder, environment: environment)
            defer { alice.stop() }
            try await alice.waitForOutput(containing: "registered expires=")
            let bob = try bed.host("bob").run(
                "bob", executable: Repository.tool.path,
                arguments: ["call", kamailio.aor("alice"), "--record", heard.path, "--hangup-after", "4"] + account("bob"),
                folder: folder, environment: environment)
            defer { bob.stop() }
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

extension EngineTests {
    /// A monitor that reports `count` changes as fast as it can, then stops.
    struct BurstMonitor: NetworkMonitor {
        let count: Int
        func changes(debounce: Duration) throws(NetworkMonitorError) -> AsyncStream<NetworkPathChange> {
            AsyncStream { continuation in
                for _ in 0..<count { continuation.yield(NetworkPathChange(notifications: 1)) }
                continuation.finish()
            }
        }
    }

    @Test("Network change: a monitor's burst of 500 reports gives at most two handled changes, not 500")
    func networkMonitorBurstIsCoalesced() async throws {
        let engine = PJSUA()
        let log = EventLog(engine.events)
        var configuration = Configuration(
            transports: [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)],
            media: MediaConfiguration(soundDevice: .null))
        configuration.networkChangeHandling = .automatic(AutomaticNetworkChange(monitor: BurstMonitor(count: 500)))
        try await engine.start(configuration)
        _ = try await log.first("a change completed") {
            if case .networkChange(let progress) = $0 { return progress.step == .completed }
            return false
        }
        try await Task.sleep(for: .seconds(1))
        let completed = log.events.filter {
            if case .networkChange(let progress) = $0 { return progress.step == .completed }
            return false
        }
        #expect((1...2).contains(completed.count), "\(completed.count) changes handled for one burst")
        await engine.shutdown()
    }

    @Test("Network change: bad STUN servers and addresses throw at start instead of reaching pjlib's assertions")
    func networkAddressValidation() async throws {
        for servers in [[":3478"], [":"], ["[]:3478"], ["host:0"], ["host:65536"], ["a b"]] {
            var configuration = Configuration(media: MediaConfiguration(soundDevice: .null))
            configuration.stun = STUNConfiguration(servers: servers)
            await #expect(throws: PJSUAUsageError.self, "\(servers)") { try await PJSUA().start(configuration) }
        }
        for address in [String(repeating: "a", count: 254), "1.2.3.4:5", "a\u{1}b", "x y"] {
            let configuration = Configuration(
                transports: [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0, publicAddress: address)],
                media: MediaConfiguration(soundDevice: .null))
            await #expect(throws: PJSUAUsageError.self, "\(address)") { try await PJSUA().start(configuration) }
        }
    }
}
