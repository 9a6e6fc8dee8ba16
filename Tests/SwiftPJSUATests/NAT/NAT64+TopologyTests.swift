import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// NAT64/DNS64 (``NAT64Mode``) in a ``NAT64Bed``: alice, a `swiftpjsua` on the IPv6-only
/// client site, registers with an IPv4-only Kamailio by its DNS name (which only DNS64
/// makes resolvable for her) and calls bob, an IPv4-only `swiftpjsua` listening on the
/// IPv4 segment, through the gateway. Each plays a tone of its own and records what it
/// hears.
extension EngineTests {
    /// What one call through the NAT64 gateway left behind.
    struct NAT64Call {
        var alice: String
        var bob: String
        /// What each heard; `nil` when its recorder never wrote a frame (no media at all).
        var aliceHeard: ToneAnalysis?
        var bobHeard: ToneAnalysis?
        /// Where Kamailio sends requests for alice: her Contact, or its `received` address.
        var aliceBinding: [(contact: String, received: String?)]
        var kamailio: String
        var gatewayIPv4: String
        var bobAddress: String
    }

    /// Builds the bed, registers bob and alice, places one call of `seconds` from alice to
    /// bob with `aliceOptions` added to alice's command line, and tears everything down.
    /// With `rewritingSDP` Kamailio writes the IPv4 addresses of bob's answer into the
    /// prefix (what Apple's getaddrinfo would do); without it alice's engine gets them as
    /// bob sent them and must synthesize them itself.
    /// With `dns64` off the bed's resolver synthesizes nothing: alice knows the registrar
    /// and the STUN server by their addresses inside the prefix, and her engine can
    /// discover no prefix.
    static func nat64Call(
        aliceOptions: [String], seconds: Double = 2, rewritingSDP: Bool = true, dns64: Bool = true
    ) async throws -> NAT64Call {
        try await withTemporaryFolder { folder in
            let aliceTone = try folder.toneFile("alice-tone.wav", frequency: aliceFrequency, duration: .seconds(10))
            let bobTone = try folder.toneFile("bob-tone.wav", frequency: bobFrequency, duration: .seconds(10))
            let aliceHeard = folder.file("alice-heard.wav"), bobHeard = folder.file("bob-heard.wav")
            return try await withNAT64Bed(folder: folder, dns64: dns64) { bed in
                // Without DNS64 Kamailio is known by its own IPv4 address (so that it takes
                // requests for it as its own), and alice reaches it at its address in the prefix.
                let registrarHost = dns64 ? bed.registrarName : "[\(NAT64Bed.synthesized(bed.registrar.address))]"
                let coturn = try await Coturn.start(
                    folder: folder, address: bed.registrar.address, launcher: bed.registrar.launcher)
                // With `rewritingSDP` Kamailio writes the answers' IPv4 addresses into the
                // prefix and keeps the address type, `c=IN IP4 2001:db8:64::203.0.113.11`
                // (RFC 6052 §2.3 text), the form servers on NAT64 networks send: the engine
                // must leave those alone. Without it the engine synthesizes them itself.
                let kamailio = try await Kamailio.start(
                    folder: folder, in: bed.registrar, natHelper: true, advertisedHost: dns64 ? bed.registrarName : nil,
                    replySDPSubstitution: rewritingSDP
                        ? "/c=IN IP4 ([0-9.]+)/c=IN IP4 \(NAT64Bed.prefixHead)\\1/g" : nil)
                let environment = [
                    "SIP_PASSWORD_alice": Kamailio.passwords["alice"] ?? "",
                    "SIP_PASSWORD_bob": Kamailio.passwords["bob"] ?? "",
                ]
                // bob knows the registrar by its IPv4 address: his network has no DNS.
                let bob = try bed.callee.run(
                    "listen-bob", executable: Repository.tool.path,
                    arguments: [
                        "listen", "--play", bobTone.path, "--record", bobHeard.path, "--bind", bed.callee.address,
                        "--port", "5060", "--registrar", "sip:\(bed.registrar.address):\(kamailio.port)",
                        "--id", kamailio.aor("bob"), "--username", "bob", "--password-env", "SIP_PASSWORD_bob",
                        "--codecs", "PCMU", "--stun", coturn.server,
                    ], folder: folder, environment: environment)
                try await bob.waitUntilListening()
                // alice knows the registrar and the STUN server by name only; her resolver
                // is the gateway's DNS64.
                let alice = try bed.client.run(
                    "call-alice", executable: Repository.tool.path,
                    arguments: [
                        "call", kamailio.aor("bob"), "--play", aliceTone.path, "--record", aliceHeard.path,
                        "--hangup-after", String(seconds), "--bind", bed.client.address, "--port", "5060",
                        "--nameserver", bed.gatewayIPv6, "--registrar", "sip:\(registrarHost):\(kamailio.port)",
                        "--id", kamailio.aor("alice"),
                        "--username", "alice", "--password-env", "SIP_PASSWORD_alice", "--codecs", "PCMU",
                        "--stun", "\(registrarHost):\(coturn.port)",
                    ] + aliceOptions, folder: folder, environment: environment)
                try await alice.waitForOutput(containing: "DISCONNECTED", timeout: .seconds(20))
                if dns64 {
                    try await bob.waitForOutput(containing: "DISCONNECTED")
                } else {
                    // The test checks what bob printed: a call that never reached him leaves
                    // him waiting.
                    try? await bob.waitForOutput(containing: "DISCONNECTED", timeout: .seconds(5))
                }
                // Both recordings closed (a WAV file's sizes are written when it is), before a
                // slow shutdown may end in SIGKILL; a side whose media never started has none.
                try? await waitUntil("both recordings closed", timeout: .seconds(3)) {
                    [aliceHeard, bobHeard].allSatisfy { ((try? WAVAudio(contentsOf: $0))?.duration ?? .zero) > .zero }
                }
                let binding = kamailio.contacts(of: "alice")
                alice.stop()
                bob.stop()
                return NAT64Call(
                    alice: alice.output, bob: bob.output,
                    aliceHeard: (try? WAVAudio(contentsOf: aliceHeard)).map {
                        ToneAnalysis($0, frequency: bobFrequency)
                    },
                    bobHeard: (try? WAVAudio(contentsOf: bobHeard)).map { ToneAnalysis($0, frequency: aliceFrequency) },
                    aliceBinding: binding, kamailio: kamailio.output, gatewayIPv4: bed.gatewayIPv4,
                    bobAddress: bed.callee.address)
            }
        }
    }

    /// The first line of `output` containing `text`, or an empty string.
    static func nat64Line(_ output: String, containing text: String) -> Substring {
        output.split(whereSeparator: \.isNewline).first { $0.contains(text) } ?? ""
    }

    /// alice registered, the call ended with her BYE's 200, and each side heard the other's
    /// tone for at least 1 s.
    static func expectRegisteredCallWithAudioBothWays(_ call: NAT64Call) {
        #expect(call.alice.contains("registered expires="), "\(call.alice)")
        #expect(call.alice.contains("DISCONNECTED 200"), "\(call.alice)")
        #expect(
            call.bobHeard?.detected(minimumDuration: .milliseconds(1000)) == true,
            "\(String(describing: call.bobHeard))\n\(call.bob)")
        #expect(
            call.aliceHeard?.detected(minimumDuration: .milliseconds(1000)) == true,
            "\(String(describing: call.aliceHeard))\n\(call.alice)")
    }

    // On the pjproject 2.12.1 that provision.sh builds (Jami's pjnath) the client with nat64
    // prints nothing within 20 s: its STUN server resolves to the synthesized address and
    // then start does not return (not diagnosed further). 2.17 passes.
    @Test(
        "NAT64/DNS64: an IPv6-only client with nat64 registers by name and its call carries audio both ways",
        .enabled(if: !PJSUA.pjprojectVersion.loaded.hasPrefix("2.12")))
    func nat64CallCarriesAudioBothWays() async throws {
        let started = ContinuousClock.now
        let call = try await Self.nat64Call(aliceOptions: ["--nat64"])
        print("NAT64 call bed took \(ContinuousClock.now - started)")
        Self.expectRegisteredCallWithAudioBothWays(call)
        // Kamailio reaches alice at the gateway's IPv4 address.
        #expect(
            call.aliceBinding.contains { ($0.received ?? $0.contact).contains(call.gatewayIPv4) },
            "\(call.aliceBinding)\n\(call.kamailio)")
        // alice advertised the gateway's IPv4 address (STUN's answer through NAT64) and got
        // bob's RTP from his address inside the NAT64 prefix; bob got hers from the gateway.
        let aliceRTP = Self.nat64Line(call.alice, containing: "rtp on")
        let bobRTP = Self.nat64Line(call.bob, containing: "rtp on")
        #expect(aliceRTP.contains("local \(call.gatewayIPv4):"), "\(call.alice)")
        #expect(aliceRTP.contains(NAT64Bed.synthesized(call.bobAddress)), "\(call.alice)")
        #expect(bobRTP.contains("from \(call.gatewayIPv4):"), "\(call.bob)")
    }

    @Test(
        "NAT64/DNS64: the callee's IPv4 SDP reaches the engine unrewritten; it synthesizes from the discovered prefix",
        .enabled(if: !PJSUA.pjprojectVersion.loaded.hasPrefix("2.12")))
    func nat64EngineSynthesizesFromDiscoveredPrefix() async throws {
        let call = try await Self.nat64Call(aliceOptions: ["--nat64"], rewritingSDP: false)
        Self.expectRegisteredCallWithAudioBothWays(call)
        // Kamailio passed bob's answer on as he sent it; alice sent to bob's address in the
        // prefix her engine learned from ipv4only.arpa.
        let aliceRTP = Self.nat64Line(call.alice, containing: "rtp on")
        #expect(aliceRTP.contains(NAT64Bed.synthesized(call.bobAddress)), "\(call.alice)")
    }

    @Test(
        "NAT64 without DNS64: no prefix to discover, the callee's IPv4 answer ends the call with a reason, no crash",
        .enabled(if: !PJSUA.pjprojectVersion.loaded.hasPrefix("2.12")))
    func nat64WithoutPrefixEndsTheCall() async throws {
        let call = try await Self.nat64Call(aliceOptions: ["--nat64"], rewritingSDP: false, dns64: false)
        #expect(call.alice.contains("registered expires="), "\(call.alice)")
        // bob answered; alice's engine had no prefix for his IPv4 address, rejected the
        // streams (so pjmedia attached nothing) and ended the call, saying why.
        #expect(call.bob.contains("answered call"), "\(call.bob)")
        #expect(call.alice.contains("DISCONNECTED"), "\(call.alice)")
        #expect(call.alice.contains(PJSUA.nat64PrefixUnknownReason), "\(call.alice)")
        #expect(!call.alice.contains("Assertion"), "\(call.alice)")
        #expect(
            call.bobHeard?.detected(minimumDuration: .milliseconds(100)) != true,
            "\(String(describing: call.bobHeard))\n\(call.bob)\n\(call.alice)")
    }

    @Test(
        "NAT64 without DNS64: an IPv4-only caller's offer to the nat64 client gets 488 Not Acceptable Here",
        .enabled(if: !PJSUA.pjprojectVersion.loaded.hasPrefix("2.12")))
    func nat64WithoutPrefixRefusesOffer() async throws {
        let (alice, bob) = try await withTemporaryFolder { folder in
            try await withNAT64Bed(folder: folder, dns64: false) { bed in
                let kamailio = try await Kamailio.start(folder: folder, in: bed.registrar, natHelper: true)
                let environment = [
                    "SIP_PASSWORD_alice": Kamailio.passwords["alice"] ?? "",
                    "SIP_PASSWORD_bob": Kamailio.passwords["bob"] ?? "",
                ]
                let registrar = "sip:[\(NAT64Bed.synthesized(bed.registrar.address))]:\(kamailio.port)"
                let alice = try bed.client.run(
                    "listen-alice", executable: Repository.tool.path,
                    arguments: [
                        "listen", "--bind", bed.client.address, "--port", "5060", "--registrar", registrar,
                        "--id", kamailio.aor("alice"), "--username", "alice", "--password-env", "SIP_PASSWORD_alice",
                        "--codecs", "PCMU", "--nat64",
                    ], folder: folder, environment: environment)
                try await alice.waitForOutput(containing: "registered expires=")
                let bob = try bed.callee.run(
                    "call-bob", executable: Repository.tool.path,
                    arguments: [
                        "call", kamailio.aor("alice"), "--hangup-after", "2", "--bind", bed.callee.address,
                        "--port", "5060", "--registrar", "sip:\(bed.registrar.address):\(kamailio.port)",
                        "--id", kamailio.aor("bob"), "--username", "bob", "--password-env", "SIP_PASSWORD_bob",
                        "--codecs", "PCMU",
                    ], folder: folder, environment: environment)
                try await bob.waitForOutput(containing: "DISCONNECTED", timeout: .seconds(15))
                alice.stop()
                bob.stop()
                return (alice.output, bob.output)
            }
        }
        // alice's engine knew no prefix for bob's IPv4 address: 488 before pjsua saw the
        // INVITE, so her app heard of no call.
        #expect(bob.contains("DISCONNECTED 488"), "\(bob)\n\(alice)")
        #expect(!alice.contains("incoming call"), "\(alice)")
        #expect(!alice.contains("Assertion"), "\(alice)")
    }

    @Test("NAT64/DNS64 without nat64 (the control): registered, but the IPv4 callee refuses the IPv6 offer (488)")
    func nat64ControlWithoutOptionCarriesNoAudio() async throws {
        let started = ContinuousClock.now
        let call = try await Self.nat64Call(aliceOptions: [])
        print("NAT64 control bed took \(ContinuousClock.now - started)")
        // Signalling needs nothing but DNS64 and an IPv6 transport ...
        #expect(call.alice.contains("registered expires="), "\(call.alice)")
        // ... but alice offers her IPv6 address (`c=IN IP6`), and bob, IPv4 only, cannot
        // make a media session with it: he answers 488 and the call never starts.
        #expect(call.bob.contains("SIP 488"), "\(call.bob)")
        #expect(call.alice.contains("DISCONNECTED 488"), "\(call.alice)")
        #expect(!call.alice.contains("CONFIRMED"), "\(call.alice)")
        #expect(
            call.bobHeard?.detected(minimumDuration: .milliseconds(100)) != true,
            "\(String(describing: call.bobHeard))\n\(call.bob)\n\(call.alice)")
        #expect(
            call.aliceHeard?.detected(minimumDuration: .milliseconds(100)) != true,
            "\(String(describing: call.aliceHeard))\n\(call.alice)")
    }
}

extension EngineTests {
    @Test("nat64 is checked at addAccount: it needs a UDP over IPv6 transport and the account on an IPv6 one")
    func nat64NeedsAnIPv6Transport() async throws {
        var account = AccountConfiguration(identity: "sip:alice@127.0.0.1")
        account.nat64 = .enabled
        func expectRefusal(_ engine: PJSUA, _ account: AccountConfiguration, saying text: String) async {
            await #expect {
                try await engine.addAccount(account)
            } throws: { error in
                if !PJSUA.supportsIPv6 {
                    // A pjproject without IPv6: pjsua would assert on nat64_opt.
                    return (error as? PJSUAError)?.code == .addressFamilyNotSupported
                }
                guard case .invalidConfiguration(let message) = error as? PJSUAUsageError else { return false }
                return message.contains(text)
            }
        }
        let ipv4Only = PJSUA()
        try await ipv4Only.start(
            Configuration(
                transports: [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)], media: nullSound))
        await expectRefusal(ipv4Only, account, saying: "UDP over IPv6")
        account.nat64 = .disabled
        _ = try await ipv4Only.addAccount(account)
        await ipv4Only.shutdown()
        guard PJSUA.supportsIPv6 else { return }

        let dualStack = PJSUA()
        try await dualStack.start(
            Configuration(
                transports: [
                    TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0),
                    TransportConfiguration(type: .udp6, bindAddress: "::1", port: 0),
                ], media: nullSound))
        let transports = try await dualStack.transports()
        account.nat64 = .enabled
        account.transport = transports.first { $0.type == .udp }?.transport
        await expectRefusal(dualStack, account, saying: "IPv6 transport, not udp")
        account.transport = transports.first { $0.type == .udp6 }?.transport
        _ = try await dualStack.addAccount(account)
        account.transport = nil
        _ = try await dualStack.addAccount(account)
        await dualStack.shutdown()
    }
}
