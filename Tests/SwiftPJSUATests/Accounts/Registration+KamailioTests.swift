import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Accounts and registration against Kamailio (and sipp where Kamailio cannot play the part).
extension EngineTests {
    @Test("Kamailio: register → registered with the granted expiry; unregister → unregistered")
    func kamailioRegisterAndUnregister() async throws {
        try await withKamailio { kamailio in
            try await EngineHarness.run { h in
                let alice = try await h.engine.addAccount(kamailio.account("alice", expiry: .seconds(120)))
                let registered = try await h.log.first("registered") { $0.isRegistration(of: alice) }
                guard case .registrationState(let registration) = registered else { return }
                let outcome = registration.outcome
                let code = registration.statusCode
                let reason = registration.reason
                let expiration = registration.expiration
                #expect(outcome == .registered(expiration: .seconds(120)))
                #expect(code == 200)
                #expect(reason == "OK")
                #expect(expiration == .seconds(120))
                let info = try await h.engine.accountInfo(alice)
                #expect(info.isRegistered && info.statusCode == 200 && info.reason == "OK")
                #expect(info.expiresIn > .seconds(100) && info.expiresIn <= .seconds(120))

                try await h.engine.setRegistration(alice, renew: false)
                let unregistered = try await h.log.first("unregistered") { $0.isRegistration(of: alice, active: false) }
                #expect(unregistered.registrationOutcome(of: alice) == .unregistered)
                #expect(try await !h.engine.accountInfo(alice).isRegistered)
                // Removing an unregistered account sends nothing more and reports no outcome.
                #expect(try await h.engine.removeAccount(alice) == nil)
                await #expect(throws: PJSUAUsageError.unknownAccount(alice)) { try await h.engine.accountInfo(alice) }
            }
            let registers = kamailio.receivedRequests.filter { $0.method == "REGISTER" }
            // Challenge, authenticated REGISTER, unregistering REGISTER (maybe challenged once more).
            #expect((3...4).contains(registers.count), "\(registers)")
            #expect(registers.allSatisfy { $0.user == "alice" && $0.transport == "udp" })
            #expect(registers.last?.expires == "0", "\(registers)")
        }
    }

    @Test("Kamailio: removeAccount unregisters first and reports the outcome")
    func kamailioRemoveRegisteredAccount() async throws {
        try await withKamailio { kamailio in
            try await EngineHarness.run { h in
                let alice = try await h.registeredAccount(kamailio.account("alice"))
                let outcome = try await h.engine.removeAccount(alice)
                #expect(outcome == .unregistered)
                #expect(try await !h.engine.accounts().contains(alice))
            }
        }
    }

    @Test("Kamailio: a wrong password fails once per attempt, retried only at the retry interval")
    func kamailioWrongPasswordRetriesAtInterval() async throws {
        try await withKamailio { kamailio in
            let interval = Duration.seconds(4)
            try await EngineHarness.run { h in
                let timed = h.engine.timestampedEvents
                let start = ContinuousClock.now
                let alice = try await h.engine.addAccount(
                    kamailio.account("alice", password: "not-the-password", retry: interval))
                var failures: [(ContinuousClock.Instant, Int)] = []
                let watch = Task {
                    var seen: [(ContinuousClock.Instant, Int)] = []
                    for await item in timed {
                        if case .registrationState(let registration) = item.event, registration.account == alice,
                            case .failed(let code, _) = registration.outcome
                        {
                            seen.append((item.raisedAt, code))
                        }
                    }
                    return seen
                }
                // Watch for 20 s: attempts at 0, 4, 8, 12, 16 (and perhaps 20) seconds. Not a
                // settle: the retry timer under test runs meanwhile.
                try await Task.sleep(until: start + .seconds(20))
                let registers = kamailio.receivedRequests.filter { $0.method == "REGISTER" }.count
                await h.engine.shutdown()
                failures = await watch.value
                #expect((5...6).contains(failures.count), "\(failures.map { ($0.0 - start, $0.1) })")
                #expect(failures.allSatisfy { $0.1 == 401 })
                for (earlier, later) in zip(failures, failures.dropFirst()) {
                    let gap = later.0 - earlier.0
                    #expect(gap >= interval - .milliseconds(300) && gap <= interval + .seconds(1), "gap \(gap)")
                }
                // Each attempt is at most a REGISTER and its authenticated repeat.
                #expect(registers <= 2 * failures.count && registers >= failures.count, "\(registers) REGISTERs")
            }
        }
    }

    @Test("Kamailio: two accounts on one engine are registered at the same time")
    func kamailioTwoAccounts() async throws {
        try await withKamailio { kamailio in
            try await EngineHarness.run { h in
                let alice = try await h.engine.addAccount(kamailio.account("alice"))
                let bob = try await h.engine.addAccount(kamailio.account("bob"))
                try await h.log.wait("both registered") { events in
                    events.contains { $0.isRegistration(of: alice, active: true) }
                        && events.contains { $0.isRegistration(of: bob, active: true) }
                }
                #expect(try await h.engine.accountInfo(alice).isRegistered)
                #expect(try await h.engine.accountInfo(bob).isRegistered)
                #expect(try await h.engine.accounts().filter { [alice, bob].contains($0) }.count == 2)
            }
            let users = Set(kamailio.receivedRequests.filter { $0.method == "REGISTER" }.map(\.user))
            #expect(users == ["alice", "bob"])
        }
    }

    @Test("423 Interval Too Brief with Min-Expires 3600: registers again with 3600 by itself")
    func intervalTooBrief() async throws {
        try await withSipp(scenario: "registrar_423.xml") { sipp in
            try await EngineHarness.run { h in
                let account = try await h.engine.addAccount(
                    AccountConfiguration(
                        identity: "sip:alice@127.0.0.1", registrar: "sip:127.0.0.1:\(sipp.port)",
                        registrationExpiry: .seconds(60)))
                let event = try await h.log.first("registration") { $0.isRegistration(of: account) }
                #expect(event.registrationOutcome(of: account) == .registered(expiration: .seconds(3600)))
                #expect(try await h.engine.accountInfo(account).expiresIn > .seconds(3500))
                // Only one registration event: the 423 was handled without the app.
                #expect(h.log.events.filter { $0.isRegistration(of: account) }.count == 1)
            }
            _ = try await sipp.finish()
            let registers = sipp.messageBlocks.filter {
                $0.direction == .received && $0.firstLine.hasPrefix("REGISTER ")
            }
            #expect(registers.count == 3)
            #expect(registers.first.flatMap(Self.expiresValue) == 60)
            #expect(
                registers.dropFirst().first.flatMap(Self.expiresValue) == 3600,
                "\(registers.dropFirst().first?.lines ?? [])")
        }
    }

    /// The expiry a REGISTER asks for: the Contact's `expires` parameter, else its Expires header.
    static func expiresValue(_ message: Sipp.LoggedMessage) -> Int? {
        if let contact = message.header("Contact")?.lowercased(), let range = contact.range(of: "expires=") {
            return Int(contact[range.upperBound...].prefix { $0.isNumber })
        }
        return message.header("Expires").flatMap { Int($0) }
    }

    @Test("Kamailio stopped: failed within the transaction timeout, retried at the interval, registered when back")
    func kamailioUnreachableThenBack() async throws {
        try await withTemporaryFolder { folder in
            var kamailio = try await Kamailio.start(folder: folder)
            let port = kamailio.port
            let engine = PJSUA()
            let log = EventLog(engine.events)
            let timers = SIPTimers(t1: .milliseconds(50), t2: .milliseconds(400))
            try await engine.start(
                Configuration(
                    transports: loopbackUDP, media: nullSound, timers: timers))
            let interval = Duration.seconds(2)
            let alice = try await engine.addAccount(kamailio.account("alice", retry: interval))
            try await log.first("registered") { $0.isRegistration(of: alice, active: true) }
            kamailio.stop()

            let refreshed = ContinuousClock.now
            try await engine.setRegistration(alice, renew: true)
            let failure = try await log.first("failed") {
                if case .failed? = $0.registrationOutcome(of: alice) { return true }
                return false
            }
            let failedAt = ContinuousClock.now
            guard case .failed(let code, let reason)? = failure.registrationOutcome(of: alice) else { return }
            #expect(code == 408 || (500...599).contains(code), "\(code) \(reason)")
            #expect(failedAt - refreshed <= timers.transactionTimeout + .seconds(1))

            kamailio = try await Kamailio.start(folder: folder, port: port, name: "kamailio-again")
            defer { kamailio.stop() }
            let events = try await log.wait("registered again", timeout: .seconds(20)) { events in
                guard let index = events.firstIndex(of: failure) else { return false }
                return events[(index + 1)...].contains { $0.isRegistration(of: alice, active: true) }
            }
            let back = events.last { $0.isRegistration(of: alice, active: true) }
            let backAt = ContinuousClock.now
            #expect(back?.registrationOutcome(of: alice) == .registered(expiration: .seconds(300)))
            // The retry came at the configured interval after the last failure, not before.
            let failures = events.filter {
                if case .failed? = $0.registrationOutcome(of: alice) { return true }
                return false
            }
            #expect(backAt - failedAt >= interval - .milliseconds(300), "\(failures.count) failures")
            #expect(kamailio.receivedRequests.contains { $0.method == "REGISTER" && $0.user == "alice" })
            await engine.shutdown()
        }
    }

    @Test("Kamailio over TCP: REGISTER travels on TCP")
    func kamailioTCP() async throws {
        try await withKamailio { kamailio in
            let engine = PJSUA()
            let log = EventLog(engine.events)
            try await engine.start(
                Configuration(
                    transports: [TransportConfiguration(type: .tcp, bindAddress: "127.0.0.1", port: 0)],
                    media: nullSound))
            let tcp = try #require(try await engine.transports().first)
            #expect(tcp.type == .tcp)
            let alice = try await engine.addAccount(kamailio.account("alice", transport: tcp.transport))
            let event = try await log.first("registration") { $0.isRegistration(of: alice) }
            #expect(event.registrationOutcome(of: alice) == .registered(expiration: .seconds(300)), "\(event)")
            await engine.shutdown()
            let registers = kamailio.receivedRequests.filter { $0.method == "REGISTER" }
            #expect(!registers.isEmpty && registers.allSatisfy { $0.transport == "tcp" }, "\(registers)")
            #expect(registers.first?.contact.lowercased().contains("transport=tcp") == true, "\(registers)")
        }
    }

    @Test("Kamailio over TLS: an untrusted certificate fails clearly; with the test CA it registers")
    func kamailioTLS() async throws {
        try await withTemporaryFolder { folder in
            let certificates = try await TestCertificates.make(in: folder)
            let kamailio = try await Kamailio.start(
                folder: folder,
                tls: .init(certificate: certificates.serverCertificate, privateKey: certificates.serverKey))
            let tlsPort = try #require(kamailio.tlsPort)
            let registrar = "sip:127.0.0.1:\(tlsPort);transport=tls"

            func register(trusting caFile: String?) async throws -> PJSUAEvent {
                let engine = PJSUA()
                let log = EventLog(engine.events)
                try await engine.start(
                    Configuration(
                        transports: [
                            TransportConfiguration(
                                type: .tls, bindAddress: "127.0.0.1", port: 0, tls: TLSConfiguration(caFile: caFile))
                        ],
                        media: nullSound))
                let tls = try await engine.transports().first?.transport
                let alice = try await engine.addAccount(
                    kamailio.account("alice", transport: tls, registrar: registrar))
                let event = try await log.first("registration") { $0.isRegistration(of: alice) }
                await engine.shutdown()
                return event
            }

            // Default trust (the system's CAs) does not include the throwaway CA.
            let untrusted = try await register(trusting: nil)
            guard case .registrationState(let registration) = untrusted,
                case .failed(let code, let reason) = registration.outcome
            else {
                Issue.record("expected a failure, got \(untrusted)")
                return
            }
            #expect((500...599).contains(code) || code == 408, "\(code)")
            #expect(reason.lowercased().contains("certificate") || reason.lowercased().contains("ssl"), "\(reason)")
            #expect(!kamailio.receivedRequests.contains { $0.method == "REGISTER" })

            let trusted = try await register(trusting: certificates.caCertificate.path)
            guard case .registrationState(let registration) = trusted else { return }
            let outcome = registration.outcome
            #expect(outcome.isRegistered, "\(trusted)")
            let registers = kamailio.receivedRequests.filter { $0.method == "REGISTER" }
            #expect(!registers.isEmpty && registers.allSatisfy { $0.transport == "tls" }, "\(registers)")
        }
    }

    @Test(
        "Kamailio over IPv6: registers on [::1] over UDP",
        .enabled(if: PJSUA.supportsIPv6, "this pjproject was built without IPv6"))
    func kamailioIPv6() async throws {
        try await withKamailio(ipv6: true) { kamailio in
            let port6 = try #require(kamailio.ipv6Port)
            let engine = PJSUA()
            let log = EventLog(engine.events)
            try await engine.start(
                Configuration(
                    transports: [TransportConfiguration(type: .udp6, bindAddress: "::1", port: 0)], media: nullSound))
            let alice = try await engine.addAccount(
                AccountConfiguration(
                    identity: "sip:alice@[::1]:\(port6)", registrar: "sip:[::1]:\(port6)",
                    credentials: [.password(Kamailio.passwords["alice"] ?? "", username: "alice")]))
            let event = try await log.first("registration") { $0.isRegistration(of: alice) }
            #expect(event.registrationOutcome(of: alice) == .registered(expiration: .seconds(300)), "\(event)")
            await engine.shutdown()
            let registers = kamailio.receivedRequests.filter { $0.method == "REGISTER" }
            #expect(!registers.isEmpty && registers.allSatisfy { $0.source.hasPrefix("::1") }, "\(registers)")
        }
    }

    @Test("The password never appears in the log, at level 6, through registration and re-registration")
    func passwordNeverLogged() async throws {
        try await withKamailio { kamailio in
            let captured = CapturedLog()
            let password = try #require(Kamailio.passwords["alice"])
            try await EngineHarness.run(logHandler: captured, logLevel: 6) { h in
                let alice = try await h.registeredAccount(kamailio.account("alice"))
                try await h.engine.reRegister(alice)
                try await h.log.wait("registered twice") {
                    $0.filter { $0.isRegistration(of: alice, active: true) }.count == 2
                }
                let configuration = try await h.engine.accountConfiguration(alice)
                #expect(!"\(configuration)".contains(password))
            }
            let lines = captured.all
            // The log did carry the REGISTERs and their digest Authorization…
            #expect(lines.contains { $0.contains("REGISTER sip:127.0.0.1") })
            #expect(lines.contains { $0.contains("Authorization: Digest") })
            // …but never the password.
            #expect(!lines.contains { $0.contains(password) })
        }
    }

    @Test("RFC 8599 push parameters go in the REGISTER Contact; reRegister(updatingPush:) replaces them")
    func pushParameters() async throws {
        try await withKamailio { kamailio in
            try await EngineHarness.run { h in
                var configuration = kamailio.account("alice")
                configuration.push = .apns(teamID: "ABCDE12345", bundleID: "com.example.phone", token: "00aa11bb")
                let alice = try await h.registeredAccount(configuration)
                try await h.engine.reRegister(
                    alice, updatingPush: .apns(teamID: "ABCDE12345", bundleID: "com.example.phone", token: "99ff88ee"))
                try await h.log.wait("registered with the new token") { _ in
                    kamailio.receivedRequests.contains {
                        $0.method == "REGISTER" && $0.contact.contains("pn-prid=99ff88ee")
                    }
                }
                try await h.log.wait("registered twice") {
                    $0.filter { $0.isRegistration(of: alice, active: true) }.count >= 2
                }
                #expect(try await h.engine.accountConfiguration(alice).push?.resourceID == "99ff88ee")
                #expect(try await h.engine.removeAccount(alice) == .unregistered)
            }
            let registers = kamailio.receivedRequests.filter { $0.method == "REGISTER" }
            let contacts = registers.map(\.contact)
            // Every REGISTER (challenged, authenticated, refreshed, unregistering) carries the
            // parameters once, in the Contact URI, and never the engine's private carrier header.
            #expect(registers.allSatisfy { $0.privateHeaders == 0 }, "\(registers)")
            #expect(contacts.allSatisfy { $0.components(separatedBy: "pn-provider=apns").count == 2 }, "\(contacts)")
            #expect(
                registers.last?.expires == "0" && registers.last?.contact.contains("pn-prid=99ff88ee") == true,
                "\(registers)")
            let parameters = ";pn-provider=apns;pn-param=ABCDE12345.com.example.phone.voip;pn-prid=00aa11bb"
            #expect(
                contacts.first?.contains(parameters) == true,
                "\(contacts)")
            #expect(contacts.contains { $0.contains("pn-prid=99ff88ee") })
        }
    }
}

extension EngineTests {
    @Test("removeAccount waits for a silent registrar only until its deadline, then removes the account")
    func removeAccountDeadline() async throws {
        try await withSipp(scenario: "registrar_ignores_unregister.xml") { registrar in
            try await EngineHarness.run { h in
                let account = try await h.engine.addAccount(
                    AccountConfiguration(
                        identity: "sip:alice@127.0.0.1", registrar: "sip:127.0.0.1:\(registrar.port)"))
                try await h.log.first("registered") { $0.isRegistration(of: account, active: true) }
                let start = ContinuousClock.now
                let outcome = try await h.engine.removeAccount(account, deadline: .seconds(1))
                let waited = ContinuousClock.now - start
                #expect(outcome == nil)
                #expect(waited >= .milliseconds(900) && waited < .seconds(3), "\(waited)")
                #expect(try await !h.engine.accounts().contains(account))
                await #expect(throws: PJSUAUsageError.unknownAccount(account)) {
                    try await h.engine.removeAccount(account)
                }
            }
        }
    }

    @Test("Push parameters with scope allRequests go in the Contact of INVITEs too")
    func pushParametersOnAllRequests() async throws {
        try await withKamailio { kamailio in
            try await EngineHarness.run { h in
                var configuration = kamailio.account("alice")
                configuration.push = PushConfiguration(provider: "fcm", resourceID: "token-1", scope: .allRequests)
                let alice = try await h.registeredAccount(configuration)
                // Nobody is registered as dave: Kamailio answers 404 after authenticating the INVITE.
                let call = try await h.engine.makeCall(to: kamailio.aor("dave"), from: alice)
                let ended = try await h.log.first("ended") { $0.isState(.disconnected, of: call) }
                guard case .callState(let change) = ended else { return }
                let status = change.statusCode
                #expect(status == 404)
            }
            let requests = kamailio.receivedRequests
            let invites = requests.filter { $0.method == "INVITE" }
            #expect(!invites.isEmpty)
            #expect(invites.allSatisfy { $0.contact.contains(";pn-provider=fcm;pn-prid=token-1") }, "\(invites)")
            #expect(requests.first { $0.method == "REGISTER" }?.contact.contains("pn-prid=token-1") == true)
        }
    }
}
