import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// pjsip's DNS resolver against dnsmasq, SRV failover between two Kamailio registrars, all on
/// 127.0.0.1: the nameserver's port is configurable, so nothing needs port 53 or a namespace.
extension EngineTests {
    /// Two registrars for `example.test`: SRV `_sip._udp.example.test` names reg1 (priority
    /// 10) and reg2 (priority 20), each on its own port of 127.0.0.1.
    private struct ExampleTestDomain {
        let folder: TemporaryFolder
        let dnsmasq: Dnsmasq
        let first: Kamailio
        let second: Kamailio

        static func start() async throws -> ExampleTestDomain {
            let folder = try TemporaryFolder()
            do {
                let first = try await Kamailio.start(folder: folder, name: "reg1")
                let second = try await Kamailio.start(folder: folder, name: "reg2")
                let dnsmasq = try await Dnsmasq.start(
                    folder: folder, domain: "example.test",
                    srv: [
                        .init(
                            service: "_sip._udp.example.test", target: "reg1.example.test", port: first.port,
                            priority: 10),
                        .init(
                            service: "_sip._udp.example.test", target: "reg2.example.test", port: second.port,
                            priority: 20),
                    ],
                    hosts: ["reg1.example.test": "127.0.0.1", "reg2.example.test": "127.0.0.1"])
                return ExampleTestDomain(folder: folder, dnsmasq: dnsmasq, first: first, second: second)
            } catch {
                folder.remove()
                throw error
            }
        }

        func stop() {
            dnsmasq.stop()
            first.stop()
            second.stop()
            folder.remove()
        }

        var nameserver: Nameserver {
            get throws { try Nameserver(host: "127.0.0.1", port: dnsmasq.port) }
        }

        static let alice = AccountConfiguration(
            identity: "sip:alice@example.test", registrar: "sip:example.test",
            credentials: [.password(Kamailio.passwords["alice"] ?? "", username: "alice")],
            registrationExpiry: .seconds(120), retryInterval: .seconds(300))

        func registers(at kamailio: Kamailio) -> [Kamailio.Request] {
            kamailio.receivedRequests.filter { $0.method == "REGISTER" && $0.user == "alice" }
        }
    }

    @Test("DNS: sip:alice@example.test registers at the first SRV target, then fails over to the second")
    func dnsSRVRegistrationAndFailover() async throws {
        let domain = try await ExampleTestDomain.start()
        defer { domain.stop() }
        // T1 = 100 ms: a REGISTER times out after 64 × T1 = 6.4 s instead of 32 s.
        let timers = SIPTimers(t1: .milliseconds(100), t2: .seconds(1), t4: .seconds(1))
        let log = CapturedLog()
        try await EngineHarness.run(
            logHandler: log, logLevel: 4, timers: timers, dns: DNSConfiguration(nameservers: [try domain.nameserver])
        ) { h in
            let alice = try await h.engine.addAccount(ExampleTestDomain.alice)
            let first = try await h.log.first("registered at reg1") { $0.isRegistration(of: alice, active: true) }
            #expect(first.registrationOutcome(of: alice) == .registered(expiration: .seconds(120)))
            #expect(domain.dnsmasq.queries.contains("SRV _sip._udp.example.test"), "\(domain.dnsmasq.queries)")
            // The binding is at reg1 (its 200 came after save("location")); reg2 has seen nothing.
            #expect(!domain.registers(at: domain.first).isEmpty)
            #expect(domain.registers(at: domain.second).isEmpty, "\(domain.registers(at: domain.second))")

            domain.first.stop()
            let stopped = ContinuousClock.now
            let before = h.log.events.count
            try await h.engine.setRegistration(alice, renew: true)
            let events = try await h.log.wait("registered at reg2", timeout: .seconds(20)) { events in
                events.dropFirst(before).contains { $0.isRegistration(of: alice, active: true) }
            }
            let elapsed = ContinuousClock.now - stopped
            let later = events.dropFirst(before).compactMap { event -> RegistrationChange? in
                if case .registrationState(let change) = event, change.account == alice { return change }
                return nil
            }
            // One timeout at reg1 (64 × T1), then at once the second target.
            #expect(later.first?.statusCode == 408, "\(later)")
            #expect(later.last?.outcome == .registered(expiration: .seconds(120)), "\(later)")
            #expect(
                elapsed >= timers.transactionTimeout && elapsed < timers.transactionTimeout + .seconds(3), "\(elapsed)")
            #expect(!domain.registers(at: domain.second).isEmpty)
            #expect(log.all.contains { $0.contains("marked unresponsive") })
            print(
                """
                DNS failover: registered at the second SRV target \(elapsed) after the first stopped (64 × T1 = \
                \(timers.transactionTimeout))
                """
            )

            // The mark holds: the next refresh goes straight to reg2, with no new timeout.
            let refreshed = h.log.events.count
            let change = try await h.engine.register(alice, deadline: .seconds(5))
            #expect(change.statusCode == 200)
            #expect(
                !h.log.events.dropFirst(refreshed).contains { $0.registrationOutcome(of: alice)?.isRegistered == false }
            )
        }
    }

    @Test("DNS: addAccount returns at once while the nameserver does not answer; the failure comes later")
    func dnsUnansweredNameserverDoesNotBlockTheEngine() async throws {
        let domain = try await ExampleTestDomain.start()
        defer { domain.stop() }
        domain.dnsmasq.pause()
        // A lookup with no answer gives up after (2 + 1) × 300 ms; the nameserver is then
        // held bad for 1 s, during which lookups fail at once.
        let dns = DNSConfiguration(
            nameservers: [try domain.nameserver], queryRetransmitInterval: .milliseconds(300), queryRetransmissions: 2,
            unresponsiveNameserverHoldDown: .seconds(1))
        try await EngineHarness.run(dns: dns) { h in
            let added = ContinuousClock.now
            let alice = try await h.engine.addAccount(ExampleTestDomain.alice)
            let addTook = ContinuousClock.now - added
            // The engine's actor answers while the lookup is pending.
            let asked = ContinuousClock.now
            let accounts = try await h.engine.accounts()
            let askTook = ContinuousClock.now - asked
            #expect(accounts.contains(alice))
            #expect(addTook < .milliseconds(500), "addAccount took \(addTook)")
            #expect(askTook < .milliseconds(200), "accounts() took \(askTook)")
            #expect(
                h.log.events.allSatisfy { $0.registrationOutcome(of: alice) == nil },
                "no outcome before the lookup ends")

            let failed = try await h.log.first("registration failed", timeout: .seconds(15)) {
                $0.registrationOutcome(of: alice).map { !$0.isRegistered } ?? false
            }
            let failedAfter = ContinuousClock.now - added
            guard case .registrationState(let failure) = failed else { return }
            #expect([502, 503].contains(failure.statusCode), "\(failure)")
            #expect(!failure.reason.isEmpty)
            #expect(failedAfter >= .milliseconds(800), "failed after \(failedAfter): before the lookup could time out")
            #expect(domain.registers(at: domain.first).isEmpty && domain.registers(at: domain.second).isEmpty)

            // The same engine registers once the nameserver answers again: at once while
            // it is held bad (PJLIB_UTIL_EDNSNOWORKINGNS, thrown), then through it.
            domain.dnsmasq.resume()
            let resumed = ContinuousClock.now
            var change: RegistrationChange?
            var refusals: [String] = []
            // Asked again every 100 ms while the nameserver is held bad.
            try? await waitUntil("registered through the nameserver", every: .milliseconds(100)) {
                do { change = try await h.engine.register(alice, deadline: .seconds(5)) } catch let error as PJSUAError
                {
                    refusals.append(error.description)
                }
                return change != nil
            }
            #expect(change?.statusCode == 200, "\(refusals)")
            #expect(ContinuousClock.now - resumed < .seconds(3), "\(refusals)")
            #expect(!domain.registers(at: domain.first).isEmpty)
        }
    }

    @Test("CLI: register --nameserver finds the registrar by SRV; a host name as nameserver is a usage error")
    func cliRegisterWithNameserver() async throws {
        let domain = try await ExampleTestDomain.start()
        defer { domain.stop() }
        func register(nameserver: String) throws -> PeerProcess {
            try PeerProcess(
                "register-\(nameserver.hashValue)", executable: Repository.tool.path,
                arguments: [
                    "register", "--nameserver", nameserver, "--registrar", "sip:example.test",
                    "--id", "sip:alice@example.test", "--username", "alice", "--password-env", "ALICE_PASSWORD",
                    "--expires", "60", "--once",
                ], folder: domain.folder, environment: ["ALICE_PASSWORD": Kamailio.passwords["alice"] ?? ""])
        }
        let good = try register(nameserver: "127.0.0.1:\(domain.dnsmasq.port)")
        #expect(try await good.waitForExit(timeout: .seconds(20)) == 0, "\(good.output)")
        #expect(good.output.contains("registered expires=60s"), "\(good.output)")
        #expect(!domain.registers(at: domain.first).isEmpty)
        #expect(domain.registers(at: domain.second).isEmpty)
        let bad = try register(nameserver: "ns.example.test")
        #expect(try await bad.waitForExit(timeout: .seconds(20)) == 64, "\(bad.output)")
        #expect(
            bad.output.contains("--nameserver: invalid configuration: nameserver \"ns.example.test\""), "\(bad.output)")
    }

    @Test("DNS: more than four nameservers, or timing out of range, fail start with invalidConfiguration")
    func dnsConfigurationValidation() async throws {
        let engine = PJSUA()
        var configuration = Configuration(
            transports: [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)],
            media: MediaConfiguration(soundDevice: .null))
        configuration.dns.nameservers = try (1...5).map { try Nameserver("192.0.2.\($0)") }
        await #expect(
            throws: PJSUAUsageError.invalidConfiguration(
                "dns.nameservers has 5 entries, at most 4 are allowed")
        ) { try await engine.start(configuration) }
        configuration.dns = DNSConfiguration(nameservers: [try Nameserver("192.0.2.1")], queryRetransmitInterval: .zero)
        await #expect(throws: PJSUAUsageError.self) { try await engine.start(configuration) }
        configuration.dns = DNSConfiguration(nameservers: [try Nameserver("192.0.2.1")], queryRetransmissions: -1)
        await #expect(throws: PJSUAUsageError.self) { try await engine.start(configuration) }
        // A valid one starts and shuts down (the resolver is handed back to pjsip at shutdown).
        // IPv4 only: a pjproject built without IPv6 cannot take an IPv6 nameserver.
        configuration.dns = DNSConfiguration(nameservers: [
            try Nameserver("192.0.2.1"), try Nameserver("192.0.2.2:5353"),
        ])
        try await engine.start(configuration)
        await engine.shutdown()
    }
}
