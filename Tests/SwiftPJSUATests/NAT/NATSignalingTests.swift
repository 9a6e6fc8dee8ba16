import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// SIP signalling through NATs, in the namespace test bed: `swiftpjsua` child processes
/// behind NAT boxes register with Kamailio on the public segment and take calls from a
/// `swiftpjsua` caller there; the audio check is made on both recordings.
@Suite("NAT signalling", .serialized)
struct NATTests {
    static let callerTone = 1000.0
    static let calleeTone = 700.0

    /// Tone files for both ends and the test's folder.
    struct Files {
        let folder: TemporaryFolder
        let callerTone: URL
        let calleeTone: URL

        init() throws {
            folder = try TemporaryFolder("swiftpjsua-nat")
            callerTone = try folder.toneFile("caller-tone.wav", frequency: NATTests.callerTone, duration: .seconds(10))
            calleeTone = try folder.toneFile("callee-tone.wav", frequency: NATTests.calleeTone, duration: .seconds(10))
        }

        func recording(_ name: String) -> URL { folder.file("\(name)-heard.wav") }
    }

    /// `swiftpjsua listen` inside `host`, registered as `user` at `kamailio`, answering
    /// every call with the callee tone and recording what it hears; returns once it
    /// reports the registration.
    static func registeredListener(
        _ user: String, on host: Topology.Host, at kamailio: Kamailio, files: Files, extra: [String] = []
    ) async throws -> PeerProcess {
        let listener = try host.run(
            "listen-\(user)", executable: Repository.tool.path,
            arguments: [
                "listen", "--bind", host.address, "--port", "5060", "--registrar", kamailio.uri, "--id",
                kamailio.aor(user), "--username", user, "--password-env", "TEST_SIP_PASSWORD", "--expires", "300",
                "--codecs", "PCMU", "--play", files.calleeTone.path, "--record", files.recording(user).path,
            ] + extra, folder: files.folder, environment: ["TEST_SIP_PASSWORD": Kamailio.passwords[user] ?? ""])
        try await listener.waitForOutput(containing: "registered expires=", timeout: .seconds(15))
        return listener
    }

    /// `swiftpjsua call` from `host` as carol (registered at `kamailio`, SIP port `port`)
    /// to `target`, playing the caller tone and recording, hanging up after `seconds`.
    static func caller(
        to target: String, on host: Topology.Host, at kamailio: Kamailio, port: UInt16 = 5060, seconds: Int = 3,
        files: Files, name: String, extra: [String] = []
    ) throws -> PeerProcess {
        try host.run(
            "call-\(name)", executable: Repository.tool.path,
            arguments: [
                "call", target, "--bind", host.address, "--port", String(port), "--registrar", kamailio.uri,
                "--id", kamailio.aor("carol"), "--username", "carol", "--password-env", "TEST_SIP_PASSWORD",
                "--codecs", "PCMU", "--play", files.callerTone.path, "--record", files.recording(name).path,
                "--hangup-after", String(seconds),
            ] + extra, folder: files.folder, environment: ["TEST_SIP_PASSWORD": Kamailio.passwords["carol"] ?? ""])
    }

    /// Expects `recording` to carry `frequency` for at least 800 ms.
    static func expectTone(_ frequency: Double, in recording: URL, _ what: String) {
        do {
            let analysis = ToneAnalysis(try WAVAudio(contentsOf: recording), frequency: frequency)
            #expect(analysis.detected(minimumDuration: .milliseconds(800)), "\(what): \(analysis)")
        } catch {
            Issue.record("\(what): no recording at \(recording.path): \(error)")
        }
    }

    /// The `LOOKUP <user> ruri=… dst=…` lines Kamailio logged for `user`.
    static func lookups(of user: String, in kamailio: Kamailio) -> [String] {
        kamailio.output.split(whereSeparator: \.isNewline).filter { $0.contains("LOOKUP \(user) ") }.map(String.init)
    }

    /// Where Kamailio sent the request of a `LOOKUP` line: its destination URI (a NAT's
    /// `received` address) when set, else the request URI (the registered Contact).
    static func destination(_ lookup: String) -> String {
        let fields = lookup.split(separator: " ")
        func value(_ key: String) -> String? {
            fields.first { $0.hasPrefix("\(key)=") }.map { String($0.dropFirst(key.count + 1)) }
        }
        if let dst = value("dst"), dst != "<null>" { return dst }
        return value("ruri") ?? ""
    }

    @Test(
        """
        Behind NAT: Kamailio (nathelper) stores the NAT's public address of an engine that does not rewrite its \
        Contact; a call through it reaches the engine and carries audio both ways
        """
    )
    func registrationAndIncomingCallBehindNAT() async throws {
        let files = try Files()
        defer { files.folder.remove() }
        try await withTopology({ plan in
            plan.server("registrar")
            plan.server("carol")
            plan.client("alice")
        }) { bed in
            let nat = bed.nat("alice")
            let kamailio = try await Kamailio.start(folder: files.folder, in: bed.host("registrar"), natHelper: true)
            // Without the engine's own Contact rewrite: only the registrar's handling helps.
            let alice = try await Self.registeredListener(
                "alice", on: bed.host("alice"), at: kamailio, files: files, extra: ["--contact-rewrite", "off"])
            let registers = kamailio.receivedRequests.filter { $0.method == "REGISTER" && $0.user == "alice" }
            #expect(
                !registers.isEmpty && registers.allSatisfy { $0.source.hasPrefix("\(nat.publicAddress):") },
                "\(registers)")
            let carol = try Self.caller(
                to: kamailio.aor("alice"), on: bed.host("carol"), at: kamailio, files: files, name: "carol",
                extra: ["--log-level", "4"])
            #expect(try await carol.waitForExit(timeout: .seconds(20)) == 0, "\(carol.output)")
            try await alice.waitForOutput(containing: "DISCONNECTED")
            // alice's binding is her private Contact with the NAT's address as `received`:
            // Kamailio sent the INVITE there.
            let lookups = Self.lookups(of: "alice", in: kamailio)
            #expect(lookups.count == 1, "\(lookups)")
            #expect(lookups.allSatisfy { $0.contains("ruri=sip:alice@\(bed.host("alice").address)") }, "\(lookups)")
            #expect(lookups.allSatisfy { $0.contains("dst=sip:\(nat.publicAddress):5060") }, "\(lookups)")
            Self.expectTone(Self.callerTone, in: files.recording("alice"), "alice hears carol")
            Self.expectTone(Self.calleeTone, in: files.recording("carol"), "carol hears alice")
            // alice's SDP names her private address (no SDP rewrite): her audio reaches carol
            // because carol's RTP follows where alice's packets come from.
            #expect(carol.output.contains("c=IN IP4 \(bed.host("alice").address)"), "\(carol.output.suffix(3000))")
        }
    }

    @Test(
        """
        Behind a NAT whose UDP mappings last 3 s: keep-alives (2 s, which pjsua sends every second) keep alice \
        reachable through three timeouts; bob, without keep-alives, is lost
        """
    )
    func keepAlivesHoldTheNATBinding() async throws {
        let files = try Files()
        defer { files.folder.remove() }
        let shortMappings = NATBehavior(mapping: .endpointIndependent, udpTimeout: .seconds(3))
        try await withTopology({ plan in
            plan.server("registrar")
            plan.server("carol")
            plan.client("alice", nat: shortMappings)
            plan.client("bob", nat: shortMappings)
        }) { bed in
            #expect(bed.nat("alice").udpTimeoutSeconds == 3)
            let kamailio = try await Kamailio.start(folder: files.folder, in: bed.host("registrar"), natHelper: true)
            async let startAlice = Self.registeredListener(
                "alice", on: bed.host("alice"), at: kamailio, files: files, extra: ["--keep-alive", "2"])
            async let startBob = Self.registeredListener(
                "bob", on: bed.host("bob"), at: kamailio, files: files, extra: ["--keep-alive", "off"])
            let (alice, bob) = try await (startAlice, startBob)
            defer {
                alice.stop()
                bob.stop()
            }
            // Three mapping lifetimes after the last REGISTER (a contact rewrite may send a
            // second one just after the first answer): not a settle, the NAT's timer under test.
            try await Task.sleep(for: .seconds(10))
            func registers() -> Int {
                kamailio.receivedRequests.filter { $0.method == "REGISTER" && ["alice", "bob"].contains($0.user) }.count
            }
            let lastRegister = registers()
            let carol = try Self.caller(
                to: kamailio.aor("alice"), on: bed.host("carol"), at: kamailio, files: files, name: "carol")
            let carolForBob = try Self.caller(
                to: kamailio.aor("bob"), on: bed.host("carol"), at: kamailio, port: 5062, seconds: 3, files: files,
                name: "carol-for-bob")
            #expect(try await carol.waitForExit(timeout: .seconds(20)) == 0, "\(carol.output)")
            try await alice.waitForOutput(containing: "DISCONNECTED")
            Self.expectTone(Self.callerTone, in: files.recording("alice"), "alice hears carol")
            Self.expectTone(Self.calleeTone, in: files.recording("carol"), "carol hears alice")
            // Kamailio did send bob's INVITE to where bob registered from, 4 s ago at least,
            // but the NAT had forgotten the mapping: nothing reached bob.
            try await waitUntil("Kamailio to relay the INVITE for bob", seen: { kamailio.output }) {
                !Self.lookups(of: "bob", in: kamailio).isEmpty
            }
            #expect(!bob.output.contains("incoming call"), "\(bob.output)")
            #expect(carolForBob.exitStatus == nil || carolForBob.exitStatus != 0, "\(carolForBob.output)")
            // No re-registration refreshed either binding meanwhile.
            #expect(registers() == lastRegister, "\(kamailio.receivedRequests)")
        }
    }

    @Test(
        """
        Behind NAT with a plain registrar: the engine's Contact rewrite (from received/rport) makes alice reachable \
        and its SDP rewrite names her public address; bob, with the Contact rewrite off, is not reachable
        """
    )
    func contactRewriteFromTheRegistrarsAnswer() async throws {
        let files = try Files()
        defer { files.folder.remove() }
        try await withTopology({ plan in
            plan.server("registrar")
            plan.server("carol")
            plan.client("alice")
            plan.client("bob")
        }) { bed in
            let kamailio = try await Kamailio.start(folder: files.folder, in: bed.host("registrar"))
            async let startAlice = Self.registeredListener(
                "alice", on: bed.host("alice"), at: kamailio, files: files, extra: ["--sdp-nat-rewrite", "on"])
            async let startBob = Self.registeredListener(
                "bob", on: bed.host("bob"), at: kamailio, files: files, extra: ["--contact-rewrite", "off"])
            let (alice, bob) = try await (startAlice, startBob)
            defer {
                alice.stop()
                bob.stop()
            }
            let aliceNAT = bed.nat("alice").publicAddress
            // alice registered again with the address the registrar saw.
            try await waitUntil("alice's rewritten Contact", seen: { "\(kamailio.receivedRequests)" }) {
                kamailio.receivedRequests.contains {
                    $0.method == "REGISTER" && $0.user == "alice" && $0.contact.contains(aliceNAT)
                }
            }
            #expect(
                !kamailio.receivedRequests.contains {
                    $0.method == "REGISTER" && $0.user == "bob" && $0.contact.contains(bed.nat("bob").publicAddress)
                })
            let carol = try Self.caller(
                to: kamailio.aor("alice"), on: bed.host("carol"), at: kamailio, files: files, name: "carol",
                extra: ["--log-level", "4"])
            _ = try Self.caller(
                to: kamailio.aor("bob"), on: bed.host("carol"), at: kamailio, port: 5062, files: files,
                name: "carol-for-bob")
            #expect(try await carol.waitForExit(timeout: .seconds(20)) == 0, "\(carol.output)")
            try await alice.waitForOutput(containing: "DISCONNECTED")
            Self.expectTone(Self.callerTone, in: files.recording("alice"), "alice hears carol")
            Self.expectTone(Self.calleeTone, in: files.recording("carol"), "carol hears alice")
            // With --sdp-nat-rewrite, alice's SDP names the address the registrar saw.
            #expect(carol.output.contains("c=IN IP4 \(aliceNAT)"), "\(carol.output.suffix(3000))")
            // bob's binding is his private address, which the registrar cannot reach.
            let bobLookups = Self.lookups(of: "bob", in: kamailio)
            #expect(bobLookups.allSatisfy { Self.destination($0).contains(bed.host("bob").address) }, "\(bobLookups)")
            #expect(!bob.output.contains("incoming call"), "\(bob.output)")
        }
    }

    @Test(
        """
        Behind 1:1 NAT (a cloud server): with --public-address the engine advertises its public address and a call \
        carries audio both ways; without, the caller's ACK goes to the private address and never arrives
        """
    )
    func oneToOneNATWithPublicAddress() async throws {
        let files = try Files()
        defer { files.folder.remove() }
        try await withTopology({ plan in
            plan.server("carol")
            plan.client("cloud", nat: .oneToOne)
            plan.client("hidden", nat: .oneToOne)
        }) { bed in
            func server(_ name: String, extra: [String]) throws -> PeerProcess {
                let host = bed.host(name)
                return try host.run(
                    "listen-\(name)", executable: Repository.tool.path,
                    arguments: [
                        "listen", "--bind", host.address, "--port", "5060", "--codecs", "PCMU",
                        "--play", files.calleeTone.path, "--record", files.recording(name).path,
                    ] + extra, folder: files.folder)
            }
            let cloudAddress = bed.nat("cloud").publicAddress, hiddenAddress = bed.nat("hidden").publicAddress
            let cloud = try server("cloud", extra: ["--public-address", cloudAddress])
            let hidden = try server("hidden", extra: [])
            try await cloud.waitUntilListening()
            try await hidden.waitUntilListening()
            #expect(cloud.output.contains("listening on udp \(cloudAddress):5060"), "\(cloud.output)")
            func call(_ address: String, port: UInt16, name: String) throws -> PeerProcess {
                let carol = bed.host("carol")
                return try carol.run(
                    "call-\(name)", executable: Repository.tool.path,
                    arguments: [
                        "call", "sip:\(name)@\(address):5060", "--bind", carol.address, "--port", String(port),
                        "--codecs", "PCMU", "--play", files.callerTone.path, "--record",
                        files.recording("carol-\(name)").path, "--hangup-after", "3", "--log-level", "4",
                    ], folder: files.folder)
            }
            let toCloud = try call(cloudAddress, port: 5060, name: "cloud")
            let toHidden = try call(hiddenAddress, port: 5062, name: "hidden")
            #expect(try await toCloud.waitForExit(timeout: .seconds(20)) == 0, "\(toCloud.output)")
            // (On failure, the expectations below show both sides' output.)
            try? await cloud.waitForOutput(containing: "DISCONNECTED")
            #expect(cloud.output.contains("CONFIRMED"), "\(cloud.output)\n\(toCloud.output)")
            // The answer's SDP and Contact name the public address only.
            #expect(toCloud.output.contains("c=IN IP4 \(cloudAddress)"), "\(toCloud.output)")
            #expect(!toCloud.output.contains(bed.host("cloud").address), "\(toCloud.output)")
            Self.expectTone(Self.callerTone, in: files.recording("cloud"), "the cloud server hears carol")
            Self.expectTone(Self.calleeTone, in: files.recording("carol-cloud"), "carol hears the cloud server")
            // Without a public address: the answer points at 10.0.x, and the ACK sent there is lost.
            #expect(toHidden.output.contains("Contact: <sip:\(bed.host("hidden").address):5060>"), "\(toHidden.output)")
            #expect(hidden.output.contains("incoming call"), "\(hidden.output)")
            #expect(!hidden.output.contains("CONFIRMED"), "\(hidden.output)")
        }
    }
}

/// The signalling NAT settings in the engine itself.
extension EngineTests {
    @Test(
        """
        RFC 5626 outbound over TCP: REGISTER's Contact carries the configured reg-id and +sip.instance; with outbound \
        off, neither
        """
    )
    func outboundIdentifiersInRegister() async throws {
        try await withKamailio { kamailio in
            let instance = "<urn:uuid:4f6c1b2e-8a1d-4c3e-9b7a-2d5e6f708192>"
            try await EngineHarness.run(
                transports: [TransportConfiguration(type: .tcp, bindAddress: "127.0.0.1", port: 0)]) {
                    h in
                    var alice = kamailio.account("alice", transport: h.transport.transport)
                    alice.natSignaling.outbound = SIPOutbound(instanceID: instance, registrationID: 7)
                    var bob = kamailio.account("bob", transport: h.transport.transport)
                    bob.natSignaling.outbound = nil
                    let aliceAccount = try await h.engine.addAccount(alice)
                    let bobAccount = try await h.engine.addAccount(bob)
                    try await h.log.first("alice registered") { $0.isRegistration(of: aliceAccount, active: true) }
                    try await h.log.first("bob registered") { $0.isRegistration(of: bobAccount, active: true) }
                }
            let registers = kamailio.receivedRequests.filter { $0.method == "REGISTER" && $0.expires != "0" }
            let alices = registers.filter { $0.user == "alice" }, bobs = registers.filter { $0.user == "bob" }
            #expect(!alices.isEmpty && !bobs.isEmpty, "\(registers)")
            #expect(alices.allSatisfy { $0.contact.contains("reg-id=7") && $0.contact.contains(instance) }, "\(alices)")
            #expect(
                bobs.allSatisfy { !$0.contact.contains("reg-id") && !$0.contact.contains("+sip.instance") }, "\(bobs)")
        }
    }

    @Test("NAT signalling settings out of range are refused before pjsua sees them")
    func invalidNATSignalingIsRefused() async throws {
        try await EngineHarness.run { h in
            var settings: [NATSignaling] = []
            settings.append(NATSignaling(keepAliveInterval: .milliseconds(500)))
            // pjsua would send keep-alives back to back at 1 s (its spread rounds the gap to 0 s).
            settings.append(NATSignaling(keepAliveInterval: .seconds(1)))
            settings.append(NATSignaling(keepAliveInterval: .seconds(86_401)))
            settings.append(NATSignaling(outbound: SIPOutbound(instanceID: "<urn:\"x\">")))
            settings.append(NATSignaling(outbound: SIPOutbound(registrationID: 0)))
            for nat in settings {
                var account = AccountConfiguration(identity: "sip:alice@127.0.0.1", registersOnAdd: false)
                account.natSignaling = nat
                await #expect(throws: PJSUAUsageError.self, "\(nat)") { try await h.engine.addAccount(account) }
            }
            var fine = AccountConfiguration(identity: "sip:alice@127.0.0.1", registersOnAdd: false)
            fine.natSignaling = .disabled
            _ = try await h.engine.addAccount(fine)
        }
    }
}
