import Foundation
import KitTestSupport
import PJSUATestSupport
import SwiftPJSUA
import SwiftPJSUAKit
import Testing

// In `EngineTests` for its `.serialized` trait (one pjsua per process, see CallRouter+OrderingTests.swift).
extension EngineTests {
    /// The VoIP push token on its way to a real registrar: what Kamailio's location table
    /// holds (`kamcmd ul.dump`) and the REGISTERs it received.
    @Suite("Kit: the push token in the REGISTER, at Kamailio")
    struct KitPushToken {
        static let teamID = "ABCDE12345"
        static let bundleID = "com.example.phone"

        /// The pn-prid values in the Contacts Kamailio holds for `user`.
        static func boundTokens(_ kamailio: Kamailio, _ user: String) -> [String] {
            kamailio.contacts(of: user).compactMap { contact in
                contact.contact.split(separator: ";").first { $0.hasPrefix("pn-prid=") }.map { String($0.dropFirst(8)) }
            }
        }

        static func registers(_ kamailio: Kamailio) -> [Kamailio.Request] {
            kamailio.receivedRequests.filter { $0.method == "REGISTER" }
        }

        static func registrations(_ log: EventLog, _ account: Account) -> Int {
            log.events.filter { $0.isRegistration(of: account, active: true) }.count
        }

        /// Waits for a registration of `account` beyond the `count` seen so far.
        static func nextRegistration(_ what: String, _ log: EventLog, _ account: Account, after count: Int) async throws
        {
            try await log.wait(what) { $0.filter { $0.isRegistration(of: account, active: true) }.count > count }
        }

        @Test(
            """
            Kamailio's binding takes the new pn-prid with the first REGISTER after a token change, the old one gone; \
            a token that came before the account is applied when it is bound; a repeated token sends no REGISTER
            """
        )
        func tokenReachesRegistrar() async throws {
            try await withKamailio { kamailio in
                try await EngineHarness.run { h in
                    let engine = RecordingEngine(PJSUAEngine(h.engine))
                    let router = CallRouter(engine: engine, provider: RecordingProvider(), clock: ManualClock())
                    let first = Data(repeating: 0xa1, count: 32)
                    let second = Data((0..<32).map { UInt8($0) })
                    let firstHex = String(repeating: "a1", count: 32)
                    let secondHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

                    // PushKit's token comes before the account exists: kept, nothing sent.
                    #expect(await router.updatePushToken(first) == [])
                    // The app adds the account with the token it saved last time.
                    var configuration = kamailio.account("alice")
                    configuration.push = .apns(teamID: Self.teamID, bundleID: Self.bundleID, token: "5a1ed")
                    let alice = try await h.registeredAccount(configuration)
                    #expect(Self.boundTokens(kamailio, "alice") == ["5a1ed"])
                    // Binding it applies the kept token.
                    var seen = Self.registers(kamailio).count
                    var registered = Self.registrations(h.log, alice)
                    await router.bind(alice, pushHint: "alice")
                    try await Self.nextRegistration("registered with the kept token", h.log, alice, after: registered)
                    #expect(Self.boundTokens(kamailio, "alice") == [firstHex], "\(kamailio.contacts(of: "alice"))")
                    let onBind = Array(Self.registers(kamailio)[seen...])

                    // A token change: one REGISTER that binds, with the new pn-prid.
                    seen = Self.registers(kamailio).count
                    registered = Self.registrations(h.log, alice)
                    #expect(await router.updatePushToken(second) == [alice])
                    try await Self.nextRegistration("registered with the new token", h.log, alice, after: registered)
                    #expect(Self.boundTokens(kamailio, "alice") == [secondHex], "\(kamailio.contacts(of: "alice"))")
                    let onChange = Array(Self.registers(kamailio)[seen...])
                    let binding = onChange.filter { $0.expires != "0" }
                    print(
                        "push token change: REGISTERs at Kamailio: "
                            + onChange.map { "expires=\($0.expires) \($0.contact)" }.joined(separator: " | "))
                    // The first REGISTER that binds carries the new token; the old one appears only
                    // in the unregistration pjsua sends for the old Contact.
                    #expect(binding.first?.contact.contains("pn-prid=\(secondHex)") == true, "\(onChange)")
                    #expect(binding.allSatisfy { $0.contact.contains("pn-prid=\(secondHex)") }, "\(onChange)")
                    #expect(onChange.filter { $0.contact.contains(firstHex) }.allSatisfy { $0.expires == "0" })
                    #expect(
                        onChange.allSatisfy { $0.contact.components(separatedBy: "pn-provider=apns").count == 2 },
                        "\(onChange)")
                    #expect(
                        onBind.first { $0.expires != "0" }?.contact.contains("pn-prid=\(firstHex)") == true, "\(onBind)"
                    )

                    // The same token again: nothing. To see that without waiting for a silence,
                    // ask for a refresh afterwards: REGISTERs leave the engine in order, so one
                    // the repeat had caused would arrive before the refresh's.
                    #expect(await router.updatePushToken(second) == [])
                    seen = Self.registers(kamailio).count
                    registered = Self.registrations(h.log, alice)
                    try await h.engine.reRegister(alice)
                    try await Self.nextRegistration("the refresh answered", h.log, alice, after: registered)
                    let afterRepeat = Array(Self.registers(kamailio)[seen...])
                    // The refresh alone (its REGISTER, re-sent once with credentials if challenged).
                    #expect(afterRepeat.count <= 2 && !afterRepeat.isEmpty, "\(afterRepeat)")
                    #expect(afterRepeat.allSatisfy { $0.expires != "0" && $0.contact.contains(secondHex) })
                    let pushRegisters = engine.records.filter {
                        if case .reRegisterWithPush = $0 { true } else { false }
                    }
                    #expect(
                        pushRegisters == [
                            .reRegisterWithPush(alice, firstHex), .reRegisterWithPush(alice, secondHex),
                        ])
                    #expect(Self.boundTokens(kamailio, "alice") == [secondHex])
                }
            }
        }

        @Test("A cold start registers its account with the router's token in the first REGISTER")
        func coldStartCarriesToken() async throws {
            try await withKamailio { kamailio in
                let engine = PJSUA()
                let log = EventLog(engine.events)
                var media = MediaConfiguration(soundDevice: .null, soundDeviceActivation: .byApp)
                media.rtpPorts = EngineHarness.randomRTPPorts()
                var bob = kamailio.account("bob")
                // The template as the app ships it: the router's token replaces the pn-prid.
                bob.push = .apns(teamID: Self.teamID, bundleID: Self.bundleID, token: "")
                let plan = PJSUAEngine.ColdStart(
                    configuration: Configuration(
                        transports: [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)],
                        logLevel: 0, media: media),
                    accounts: ["bob": bob])
                let router = CallRouter(engine: PJSUAEngine(engine, coldStart: plan), provider: RecordingProvider())
                let loop = Task { await router.run(events: engine.events) }
                defer { loop.cancel() }
                do {
                    let token = Data([0xc0, 0xff, 0xee])
                    #expect(await router.updatePushToken(token) == [])
                    let payload: [AnyHashable: Any] = [
                        "version": 1, "type": "call", "account": "bob",
                        "caller": ["uri": kamailio.aor("alice")] as [String: Any],
                    ]
                    _ = try await router.handleVoIPPush(router.receiveVoIPPush(payload))
                    try await log.first("bob registered") { $0.isRegistration(active: true) }
                    let registers = Self.registers(kamailio)
                    #expect(!registers.isEmpty)
                    #expect(registers.allSatisfy { $0.contact.contains(";pn-prid=c0ffee") }, "\(registers)")
                    #expect(Self.boundTokens(kamailio, "bob") == ["c0ffee"])
                } catch {
                    await engine.shutdown()
                    throw error
                }
                await engine.shutdown()
            }
        }
    }
}
