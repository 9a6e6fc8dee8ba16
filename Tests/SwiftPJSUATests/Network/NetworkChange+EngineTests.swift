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
        try await withKamailio { kamailio in
            try await EngineHarness.run { h in
                // The self-call at the end goes to alice (pjsua prefers her over the local
                // account for a user no account has): she must take calls from anyone.
                var configuration = kamailio.account("alice")
                configuration.whoMayCall = .anyone
                let alice = try await h.engine.addAccount(configuration, awaitingRegistration: .seconds(10)).account
                let before = kamailio.receivedRequests.filter { $0.method == "REGISTER" }.count
                let report = try await h.engine.handleNetworkChange()
                #expect(report.isComplete, "\(report.steps)")
                #expect(report.failures.isEmpty, "\(report.failures)")
                let steps = report.steps.map(\.step)
                #expect(steps.last == .completed, "\(steps)")
                #expect(steps.contains(.listenerRestarted), "\(steps)")
                let update = try #require(report.steps.first { $0.step == .contactUpdated }, "\(steps)")
                #expect(update.account == alice && update.isRegistration && update.statusCode == 200, "\(update)")
                if let restart = steps.firstIndex(of: .listenerRestarted),
                    let contact = steps.firstIndex(of: .contactUpdated)
                {
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
                let (caller, _) = try await h.selfCall()
                _ = try await h.log.first("confirmed after the change") { $0.isState(.confirmed, of: caller) }
                try await h.engine.hangup(caller)
            }
        }
    }

    @Test("Network change: a second call while one runs, bad options, and calls outside running throw")
    func networkChangeMisuse() async throws {
        let engine = PJSUA()
        await #expect(throws: PJSUAUsageError.notStarted) { try await engine.handleNetworkChange() }
        try await withKamailio { kamailio in
            // T1 of 50 ms: a REGISTER nobody answers fails after 64 × T1 = 3.2 s.
            try await EngineHarness.run(timers: SIPTimers(t1: .milliseconds(50))) { h in
                await #expect(throws: PJSUAUsageError.self) {
                    try await h.engine.handleNetworkChange(NetworkChangeOptions(deadline: .zero))
                }
                await #expect(throws: PJSUAUsageError.self) {
                    try await h.engine.handleNetworkChange(NetworkChangeOptions(listenerRestartDelay: .seconds(11)))
                }
                let alice = try await h.engine.addAccount(
                    kamailio.account("alice"), awaitingRegistration: .seconds(10)
                ).account
                // With the registrar gone, the change waits for its REGISTER to time out, so it is
                // still running when the second one is asked for.
                kamailio.stop()
                async let first = h.engine.handleNetworkChange(NetworkChangeOptions(deadline: .seconds(20)))
                try await h.log.first("the first change under way") {
                    if case .networkChange = $0 { true } else { false }
                }
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
    }

    @Test(
        "Network change: automatic mode turns five link flaps in 2 s into one handled change (netlink, own namespace)")
    func networkFlappingGivesOneChange() async throws {
        try await withTemporaryFolder { folder in
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
                arguments: [
                    "netns", "exec", space.name, Repository.tool.path, "listen", "--bind", "10.77.0.1",
                    "--port", "\(port)", "--follow-network",
                ], folder: folder)
            try await listener.waitUntilListening()
            // A change on the loopback interface is not a network change.
            try space.run("ip", "addr", "add", "127.0.0.9/8", "dev", "lo")
            // Not a settle: three debounce periods (500 ms) for a change that must not come.
            try await Task.sleep(for: .seconds(1.5))
            #expect(!listener.output.contains("network-change"), "\(listener.output)")
            for _ in 0..<5 {
                // The flaps' pace is the scenario: every gap shorter than the 500 ms debounce.
                try space.run("ip", "link", "set", "flap0", "down")
                try await Task.sleep(for: .milliseconds(150))
                try space.run("ip", "link", "set", "flap0", "up")
                try await Task.sleep(for: .milliseconds(150))
            }
            try await listener.waitForOutput(containing: "network-change completed", timeout: .seconds(10))
            // Well past the debounce: nothing more comes (not a settle: a second change must not).
            try await Task.sleep(for: .seconds(2))
            let output = listener.output
            #expect(output.components(separatedBy: "network-change completed").count - 1 == 1, "\(output)")
            #expect(output.contains("network-change listenerRestarted"), "\(output)")
        }
    }

    /// The first process named `name` among the descendants of `pid` (PeerProcess runs its
    /// command under `timeout`, and here under python's exec as well).
    static func childPID(of pid: Int32, named name: String) -> Int32? {
        var queue = [pid]
        while let parent = queue.first {
            queue.removeFirst()
            let children =
                (try? String(contentsOfFile: "/proc/\(parent)/task/\(parent)/children", encoding: .utf8)) ?? ""
            for child in children.split(separator: " ").compactMap({ Int32($0) }) {
                let command = (try? String(contentsOfFile: "/proc/\(child)/comm", encoding: .utf8)) ?? ""
                if command.trimmingCharacters(in: .whitespacesAndNewlines) == name { return child }
                queue.append(child)
            }
        }
        return nil
    }

    @Test(
        """
        Network change: where netlink is refused, --follow-network fails with the typed error; plain listen works and \
        handles a change on SIGUSR1
        """
    )
    func networkMonitorRefusedIsTypedError() async throws {
        try await withTemporaryFolder { folder in
            let guardScript = Repository.root.appendingPathComponent("Tests/Peers/no_netlink.py").path
            let refused = try PeerProcess(
                "refused", executable: "/usr/bin/python3",
                arguments: [
                    guardScript, Repository.tool.path, "listen", "--bind", "127.0.0.1",
                    "--port", "\(FreePort.udp())", "--follow-network",
                ], folder: folder)
            let status = try await refused.waitForExit(timeout: .seconds(20))
            #expect(status != 0)
            #expect(
                refused.output.contains("cannot watch the network: socket(AF_NETLINK) or bind failed"),
                "\(refused.output)")
            #expect(refused.output.contains("(13)"), "EACCES from the filter: \(refused.output)")

            let plain = try PeerProcess(
                "plain", executable: "/usr/bin/python3",
                arguments: [
                    guardScript, Repository.tool.path, "listen", "--bind", "127.0.0.1", "--port", "\(FreePort.udp())",
                ],
                folder: folder)
            try await plain.waitUntilListening()
            // Without the monitor, a network change handled on request (SIGUSR1) works.
            let tool = try #require(Self.childPID(of: plain.pid, named: "swiftpjsua"), "\(plain.output)")
            kill(tool, SIGUSR1)
            try await plain.waitForOutput(containing: "network-change completed", timeout: .seconds(10))
            #expect(plain.output.contains("network-change listenerRestarted"), "\(plain.output)")
        }
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
        // Not a settle: a second of time for more handled changes, which must not come.
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
                transports: [
                    TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0, publicAddress: address)
                ],
                media: MediaConfiguration(soundDevice: .null))
            await #expect(throws: PJSUAUsageError.self, "\(address)") { try await PJSUA().start(configuration) }
        }
    }
}
