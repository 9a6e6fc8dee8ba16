import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// RFC 5626 §4.4-4.5: a TCP or TLS flow that dies silently (a NAT or firewall forgot it; new
/// connections still work) is detected by a request that gets no response — a REGISTER, or a
/// request of a call — and replaced by a new connection for the next request.
extension EngineTests {
    static let loopbackTCP = TransportConfiguration(type: .tcp, bindAddress: "127.0.0.1", port: 0)

    /// alice at `kamailio` through `relay` over TCP, with flow keep-alives every `interval`
    /// and a refresh far away (only the keep-alive can notice a dead flow in test time).
    static func keepAliveAccount(
        at kamailio: Kamailio, through relay: TCPRelay, _ h: EngineHarness, _ interval: Duration
    ) -> AccountConfiguration {
        var configuration = kamailio.account(
            "alice", transport: h.transport.transport, registrar: "sip:127.0.0.1:\(relay.port);transport=tcp",
            expiry: .seconds(600), retry: .seconds(2))
        configuration.flowKeepAliveInterval = interval
        return configuration
    }

    @Test(
        """
        A registrar behind a relay that silently drops the flow: 408, then registered again on a new connection \
        within two retry intervals
        """,
        arguments: [TransportType.tcp, .tls])
    func deadFlowIsReplaced(_ type: TransportType) async throws {
        try await withTemporaryFolder { folder in
            let certificates = type == .tls ? try await TestCertificates.make(in: folder) : nil
            let kamailio = try await Kamailio.start(
                folder: folder,
                tls: certificates.map { .init(certificate: $0.serverCertificate, privateKey: $0.serverKey) })
            let relay = try await TCPRelay.start(folder: folder, targetPort: kamailio.tlsPort ?? kamailio.port)

            // A REGISTER without a response fails after 64 × T1 = 3.2 s.
            let timers = SIPTimers(t1: .milliseconds(50), t2: .milliseconds(400))
            let transport = TransportConfiguration(
                type: type, bindAddress: "127.0.0.1", port: 0,
                tls: TLSConfiguration(caFile: certificates?.caCertificate.path))
            try await EngineHarness.run(transports: [transport], timers: timers) { h in
                let (engine, log) = (h.engine, h.log)
                let interval = Duration.seconds(2)
                let registrar = "sip:127.0.0.1:\(relay.port);transport=\(type == .tls ? "tls" : "tcp")"
                let alice = try await h.registeredAccount(
                    kamailio.account(
                        "alice", transport: h.transport.transport, registrar: registrar, expiry: .seconds(60),
                        retry: interval))
                #expect(relay.acceptedConnections == 1, "\(relay.output)")

                // The relay forgets the flow; the next REGISTER (a refresh) goes into the void.
                #expect(try relay.blackhole() == 1)
                let mark = log.events.count
                let refreshedAt = ContinuousClock.now
                try await engine.setRegistration(alice, renew: true)
                let failure = try await log.first(
                    "the refresh to fail", timeout: timers.transactionTimeout + .seconds(5)
                ) {
                    if case .failed? = $0.registrationOutcome(of: alice) { return true }
                    return false
                }
                let failedAt = ContinuousClock.now
                #expect(log.events.firstIndex(of: failure).map { $0 >= mark } == true)
                guard case .failed(let code, let reason)? = failure.registrationOutcome(of: alice) else { return }
                #expect(code == 408, "\(code) \(reason)")
                #expect(relay.droppedClientBytes > 0, "the refresh went out on the dead flow\n\(relay.output)")

                // pjsua retries after the interval: it must register on a new connection, not
                // time out again on the dead one.
                let events = try await log.wait("registered again", timeout: interval * 2) { events in
                    guard let index = events.firstIndex(of: failure) else { return false }
                    return events[(index + 1)...].contains { $0.isRegistration(of: alice, active: true) }
                }
                let backAfter = ContinuousClock.now - failedAt
                // pjsua's retry at the interval, on a new connection: not sooner, not a second timeout later.
                #expect(backAfter >= interval - .milliseconds(300), "registered again \(backAfter) after the failure")
                #expect(backAfter <= interval * 2, "registered again \(backAfter) after the failure")
                print(
                    "dead flow (\(type)): failed \(failedAt - refreshedAt) after the refresh,",
                    "registered again \(backAfter) after the failure")
                let back = events.last { $0.isRegistration(of: alice, active: true) }
                #expect(back?.registrationOutcome(of: alice) == .registered(expiration: .seconds(60)))
                #expect(relay.acceptedConnections == 2, "\(relay.output)")
                #expect(try await engine.accountInfo(alice).isRegistered)

                // Kamailio saw the last REGISTER arrive on another connection than the first.
                let registers = kamailio.receivedRequests.filter { $0.method == "REGISTER" && $0.user == "alice" }
                #expect(Set(registers.map(\.source)).count == 2, "\(registers)")
                #expect(registers.first?.source != registers.last?.source, "\(registers)")
                #expect(registers.allSatisfy { $0.transport == (type == .tls ? "tls" : "tcp") }, "\(registers)")
            }
        }
    }

    @Test("A call's re-INVITE that times out on a dead TCP flow retires the connection: the next call opens a new one")
    func deadCallFlowIsReplaced() async throws {
        try await withTemporaryFolder { folder in
            // The relay's port goes into sipp's Contact, so it is chosen before either starts.
            let relayPort = FreePort.tcpAndUDP()
            let sipp = try await Sipp.start(
                scenario: "uas_tcp_behind_relay.xml", calls: 2,
                extra: ["-t", "t1", "-key", "relay_port", String(relayPort)], folder: folder)
            let relay = try await TCPRelay.start(folder: folder, targetPort: sipp.port, port: relayPort)

            // A request without a response fails after 64 × T1 = 3.2 s.
            let timers = SIPTimers(t1: .milliseconds(50), t2: .milliseconds(400))
            try await EngineHarness.run(transports: [Self.loopbackTCP], timers: timers) { h in
                let (engine, log, account) = (h.engine, h.log, h.account)
                let target = "sip:service@127.0.0.1:\(relayPort);transport=tcp"
                let first = try await engine.makeCall(to: target, from: account)
                try await log.first("the first call confirmed") { $0.isState(.confirmed, of: first) }
                #expect(try relay.blackhole() == 1)

                // The hold re-INVITE goes into the void and times out; pjsip ends the call (its
                // BYE, sent at once, takes the old connection too and times out as well).
                try await engine.setHold(first)
                let ended = try await log.first(
                    "the first call to end", timeout: timers.transactionTimeout * 2 + .seconds(5)
                ) {
                    $0.isState(.disconnected, of: first)
                }
                guard case .callState(let change) = ended else { return }
                let statusCode = change.statusCode
                #expect(statusCode == 408, "\(ended)")
                #expect(relay.droppedClientBytes > 0, "the re-INVITE went out on the dead flow\n\(relay.output)")

                // The next call to the same address must not take the dead connection.
                let second = try await engine.makeCall(to: target, from: account)
                let outcome = try await log.first(
                    "the second call confirmed or ended", timeout: timers.transactionTimeout + .seconds(5)
                ) {
                    $0.isState(.confirmed, of: second) || $0.isState(.disconnected, of: second)
                }
                #expect(outcome.isState(.confirmed, of: second), "\(outcome)\n\(relay.output)")
                #expect(relay.acceptedConnections == 2, "\(relay.output)")
                let result = try await sipp.finish(timeout: .seconds(10))
                #expect(result.successfulCalls == 2, "\(result)")
            }
        }
    }

    @Test(
        "A call's first INVITE that times out on a dead TCP flow retires the connection: the next call opens a new one")
    func deadFlowUnderInitialInviteIsReplaced() async throws {
        try await withTemporaryFolder { folder in
            // Calls 1 and 3 reach sipp; call 2's INVITE goes into the dead flow.
            let relayPort = FreePort.tcpAndUDP()
            let sipp = try await Sipp.start(
                scenario: "uas_tcp_behind_relay.xml", calls: 2,
                extra: ["-t", "t1", "-key", "relay_port", String(relayPort)], folder: folder)
            let relay = try await TCPRelay.start(folder: folder, targetPort: sipp.port, port: relayPort)

            // A request without a response fails after 64 × T1 = 3.2 s.
            let timers = SIPTimers(t1: .milliseconds(50), t2: .milliseconds(400))
            try await EngineHarness.run(transports: [Self.loopbackTCP], timers: timers) { h in
                let (engine, log, account) = (h.engine, h.log, h.account)
                let target = "sip:service@127.0.0.1:\(relayPort);transport=tcp"
                let first = try await engine.makeCall(to: target, from: account)
                try await log.first("the first call confirmed") { $0.isState(.confirmed, of: first) }
                #expect(try relay.blackhole() == 1)

                // A new call's INVITE takes the connection the first call opened, and times out.
                let second = try await engine.makeCall(to: target, from: account)
                let ended = try await log.first(
                    "the second call to end", timeout: timers.transactionTimeout + .seconds(5)
                ) {
                    $0.isState(.disconnected, of: second)
                }
                guard case .callState(let change) = ended else { return }
                #expect(change.statusCode == 408, "\(ended)")
                #expect(relay.droppedClientBytes > 0, "the INVITE went out on the dead flow\n\(relay.output)")

                // The third call must not take the dead connection.
                let third = try await engine.makeCall(to: target, from: account)
                let outcome = try await log.first(
                    "the third call confirmed or ended", timeout: timers.transactionTimeout + .seconds(5)
                ) {
                    $0.isState(.confirmed, of: third) || $0.isState(.disconnected, of: third)
                }
                #expect(outcome.isState(.confirmed, of: third), "\(outcome)\n\(relay.output)")
                #expect(relay.acceptedConnections == 2, "\(relay.output)")
                let result = try await sipp.finish(timeout: .seconds(10))
                #expect(result.successfulCalls == 2, "\(result)")
            }
        }
    }

    @Test("Flow keep-alive: pongs keep the flow; a silently dropped flow is noticed without a REGISTER timing out")
    func flowKeepAliveReplacesDeadFlow() async throws {
        try await withTemporaryFolder { folder in
            let kamailio = try await Kamailio.start(folder: folder)
            let relay = try await TCPRelay.start(folder: folder, targetPort: kamailio.port)

            try await EngineHarness.run(transports: [Self.loopbackTCP]) { h in
                let log = h.log
                let interval = Duration.seconds(1)
                let alice = try await h.registeredAccount(
                    Self.keepAliveAccount(at: kamailio, through: relay, h, interval))

                // Pings go out and Kamailio's pongs come back: the flow stays.
                try await relay.waitForCRLF(from: "upstream", count: 3, timeout: .seconds(10))
                #expect(relay.forwardedCRLF(from: "client") >= 3)
                #expect(relay.acceptedConnections == 1, "\(relay.output)")
                let registrations = log.events.filter { $0.isRegistration(of: alice) }
                #expect(registrations.count == 1, "\(registrations)")

                let mark = log.events.count
                let blackholedAt = ContinuousClock.now
                #expect(try relay.blackhole() == 1)
                // The next ping gets no pong: within one interval plus the pong wait (1 s + 1 s),
                // the account registers again on a new connection.
                let events = try await log.wait("registered again", timeout: interval * 2 + .seconds(3)) { events in
                    events.count > mark && events[mark...].contains { $0.isRegistration(of: alice, active: true) }
                }
                let backAfter = ContinuousClock.now - blackholedAt
                #expect(backAfter <= interval * 2 + .seconds(1), "registered again \(backAfter) after the blackhole")
                let failures = events[mark...].filter {
                    if case .failed? = $0.registrationOutcome(of: alice) { return true }
                    return false
                }
                #expect(failures.isEmpty, "\(failures)")
                #expect(relay.acceptedConnections == 2, "\(relay.output)")
                #expect(relay.droppedClientBytes > 0, "the unanswered ping went into the dead flow\n\(relay.output)")
                let registers = kamailio.receivedRequests.filter { $0.method == "REGISTER" && $0.user == "alice" }
                #expect(Set(registers.map(\.source)).count == 2, "\(registers)")
                print("flow keep-alive: registered again \(backAfter) after the blackhole")
            }
        }
    }

    @Test("Flow keep-alive against a registrar that never answers pings: the flow is kept")
    func flowKeepAliveWithoutPongsKeepsFlow() async throws {
        try await withTemporaryFolder { folder in
            let kamailio = try await Kamailio.start(folder: folder)
            let relay = try await TCPRelay.start(folder: folder, targetPort: kamailio.port, swallowingPongs: true)

            try await EngineHarness.run(transports: [Self.loopbackTCP]) { h in
                let (engine, log) = (h.engine, h.log)
                let alice = try await h.registeredAccount(
                    Self.keepAliveAccount(at: kamailio, through: relay, h, .seconds(1)))

                // Four pings, none answered: silence from a registrar that never answered one
                // proves nothing, so the flow and the registration stay.
                try await relay.waitForCRLF(from: "client", count: 4, timeout: .seconds(10))
                #expect(relay.output.contains("swallowed "), "\(relay.output)")
                #expect(relay.acceptedConnections == 1, "\(relay.output)")
                let registrations = log.events.filter { $0.isRegistration(of: alice) }
                #expect(registrations.count == 1, "\(registrations)")
                #expect(try await engine.accountInfo(alice).isRegistered)
            }
        }
    }
}
