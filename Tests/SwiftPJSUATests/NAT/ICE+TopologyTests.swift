import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// STUN, ICE and TURN between two `swiftpjsua` processes, each in its own client site
/// behind its own NAT box of a ``Topology``. Kamailio (registrar and proxy) and coturn
/// (STUN and TURN) run on the public segment. bob registers and answers; alice calls him
/// through Kamailio. Each plays a tone of its own and records what it hears, so the audio
/// check is made at both far ends.
extension EngineTests {
    /// What a call between the two sites left behind.
    struct NATCall {
        /// Everything each process printed (read before the test's folder goes).
        var alice: String
        var bob: String
        /// What alice heard: bob's 600 Hz tone if audio reached her.
        var aliceHeard: ToneAnalysis
        /// What bob heard: alice's 1000 Hz tone if audio reached him.
        var bobHeard: ToneAnalysis
        /// coturn's TURN sessions, closed once both engines shut down.
        var relayedSessions: [Coturn.RelayedSession]
        var coturnAddress: String
        /// What coturn logged.
        var coturnLog: String
        /// The NATs' public addresses.
        var alicePublic: String
        var bobPublic: String
    }

    static let aliceFrequency = 1000.0
    static let bobFrequency = 600.0

    /// Builds the bed, places one call of `seconds` from alice to bob with the same media
    /// NAT options (`swiftpjsua --stun/--ice/--turn`) on both, and tears everything down.
    static func natCall(
        nat: NATBehavior, options: (Coturn) -> [String], seconds: Double = 2, expectsRelay: Bool = false,
        turnTLS: Bool = false
    ) async throws -> NATCall {
        try await withTemporaryFolder { folder in
            // pjnath does not check a TURN server's certificate: any will do.
            let certificates = turnTLS ? try await TestCertificates.make(in: folder) : nil
            let aliceTone = try folder.toneFile("alice-tone.wav", frequency: aliceFrequency, duration: .seconds(10))
            let bobTone = try folder.toneFile("bob-tone.wav", frequency: bobFrequency, duration: .seconds(10))
            let aliceHeard = folder.file("alice-heard.wav"), bobHeard = folder.file("bob-heard.wav")
            return try await withTopology({ plan in
                plan.server("public")
                plan.client("alice", nat: nat)
                plan.client("bob", nat: nat)
            }) { bed in
                let server = bed.host("public")
                // A route out of the bed for the servers, to no one: a packet to an address the bed
                // does not have (a client's private host candidate, 10.0.N.x) vanishes, as it would
                // on the internet. Without a route the send fails with ENETUNREACH, and coturn
                // closes the whole allocation when relaying an ICE check to such a candidate.
                server.exec(["/usr/sbin/ip", "route", "add", "default", "via", "203.0.113.1"])
                let coturn = try await Coturn.start(
                    folder: folder, address: server.address, launcher: server.launcher,
                    tls: certificates.map {
                        Kamailio.TLSFiles(certificate: $0.serverCertificate, privateKey: $0.serverKey)
                    })
                // The pjproject 2.12.1 that provision.sh builds (Debian's ring package, Jami's
                // pjnath) lists the host's IPv6 addresses over netlink for every ICE candidate
                // and waits forever when the kernel sends the dump's end in the same datagram
                // as the addresses, which it does: the call hangs. An IPv4-only host is spared.
                if PJSUA.pjprojectVersion.loaded.hasPrefix("2.12") {
                    for user in ["alice", "bob"] {
                        bed.host(user).exec([
                            "/usr/sbin/sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                            "net.ipv6.conf.lo.disable_ipv6=1", "net.ipv6.conf.eth0.disable_ipv6=1",
                        ])
                    }
                }
                let kamailio = try await Kamailio.start(folder: folder, in: server)
                let media = options(coturn)
                var environment = ["TURN_PASSWORD": Coturn.password]
                func account(_ user: String) -> [String] {
                    environment["SIP_PASSWORD_\(user)"] = Kamailio.passwords[user] ?? ""
                    let host = bed.host(user)
                    return [
                        "--bind", host.address, "--port", "5060", "--registrar", kamailio.uri,
                        "--id", kamailio.aor(user),
                        "--username", user, "--password-env", "SIP_PASSWORD_\(user)", "--codecs", "PCMU",
                    ] + media
                }
                let bobArguments = ["listen", "--play", bobTone.path, "--record", bobHeard.path] + account("bob")
                let aliceArguments =
                    ["call", kamailio.aor("bob"), "--play", aliceTone.path, "--record", aliceHeard.path]
                    + ["--hangup-after", String(seconds)]
                    + account("alice")
                let bob = try bed.host("bob").run(
                    "listen-bob", executable: Repository.tool.path, arguments: bobArguments, folder: folder,
                    environment: environment)
                try await bob.waitUntilListening()
                let alice = try bed.host("alice").run(
                    "call-alice", executable: Repository.tool.path, arguments: aliceArguments, folder: folder,
                    environment: environment)
                // The call ends at alice's hang-up; each side closes its recorder right after its
                // DISCONNECTED line. Stopping the processes then shuts their engines down (which
                // releases the TURN allocations) without alice's wait for a late 200 to ACK.
                try await alice.waitForOutput(containing: "DISCONNECTED", timeout: .seconds(20))
                try await bob.waitForOutput(containing: "DISCONNECTED")
                // Both recordings closed (a WAV file's sizes are written when it is): only then
                // may a slow shutdown end in SIGKILL.
                // A side whose media never became flowing audio never opened its recording:
                // the processes' lines say how far ICE got.
                try await waitUntil(
                    "both recordings closed", timeout: .seconds(5),
                    seen: { "alice:\n\(alice.output)\nbob:\n\(bob.output)\ncoturn:\n\(coturn.output)" }
                ) {
                    [aliceHeard, bobHeard].allSatisfy { ((try? WAVAudio(contentsOf: $0))?.duration ?? .zero) > .zero }
                }
                alice.stop()
                bob.stop()
                #expect(alice.output.contains("DISCONNECTED 200"), "\(alice.output)")
                var sessions: [Coturn.RelayedSession] = []
                if expectsRelay {
                    // Both engines have shut down: each ICE component's allocation is closed.
                    let closed = try? await coturn.waitForRelayedSessions(4, timeout: .seconds(5))
                    sessions = closed ?? coturn.relayedSessions
                }
                return NATCall(
                    alice: alice.output, bob: bob.output,
                    aliceHeard: ToneAnalysis(try WAVAudio(contentsOf: aliceHeard), frequency: bobFrequency),
                    bobHeard: ToneAnalysis(try WAVAudio(contentsOf: bobHeard), frequency: aliceFrequency),
                    relayedSessions: sessions, coturnAddress: coturn.address, coturnLog: coturn.output,
                    alicePublic: bed.nat("alice").publicAddress, bobPublic: bed.nat("bob").publicAddress)
            }
        }
    }

    /// The TURN transports the relay test covers. On the pjproject 2.12.1 that provision.sh
    /// builds (Jami's patched pjnath) only UDP: over TCP the checks never completed and over
    /// TLS the call stalled before its first response (not diagnosed further); 2.13 and
    /// later relay over all three.
    static var turnTransports: [TURNTransport] {
        PJSUA.pjprojectVersion.loaded.hasPrefix("2.12") ? [.udp] : [.udp, .tcp, .tls]
    }

    /// The `ice completed on …` line a process printed, if any.
    static func iceLine(_ output: String) -> Substring? {
        output.split(whereSeparator: \.isNewline).first { $0.contains("ice completed on") }
    }

    @Test(
        "Symmetric NATs on both sides: ICE with TURN relays the call through coturn, and the tones arrive both ways",
        arguments: EngineTests.turnTransports)
    func iceWithTURNThroughSymmetricNATs(transport: TURNTransport) async throws {
        let call = try await Self.natCall(
            nat: .symmetric,
            options: { coturn in
                let uri: String
                switch transport {
                case .udp: uri = "turn:\(Coturn.username)@\(coturn.server)"
                case .tcp: uri = "turn:\(Coturn.username)@\(coturn.server)?transport=tcp"
                case .tls: uri = "turns:\(Coturn.username)@\(coturn.address):\(coturn.tlsPort ?? 0)"
                }
                return ["--ice", "--stun", coturn.server, "--turn", uri, "--turn-password-env", "TURN_PASSWORD"]
            },
            // Over a relay ICE's checks, permissions and channel bindings take a round trip or
            // more each through coturn after the 200: a longer call keeps 2 s of relayed audio
            // inside it on a loaded machine too.
            seconds: 4, expectsRelay: true, turnTLS: transport == .tls)
        #expect(call.bobHeard.detected(minimumDuration: .milliseconds(1000)), "\(call.bobHeard)\n\(call.bob)")
        #expect(call.aliceHeard.detected(minimumDuration: .milliseconds(1000)), "\(call.aliceHeard)\n\(call.alice)")
        // The pair ICE nominated has coturn's relayed address at one end at least: no direct
        // path exists between two address-and-port-dependent NATs.
        let aliceICE = try #require(Self.iceLine(call.alice), "\(call.alice)")
        let bobICE = try #require(Self.iceLine(call.bob), "\(call.bob)")
        #expect(aliceICE.contains("relayed \(call.coturnAddress):"), "\(aliceICE)")
        #expect(bobICE.contains("relayed \(call.coturnAddress):"), "\(bobICE)")
        // And coturn relayed the audio: a session that carried the stream both ways
        // (50 packets a second of 20 ms PCMU for 4 s; count a conservative share).
        let carried = call.relayedSessions.filter { $0.receivedPackets >= 60 && $0.sentPackets >= 60 }
        #expect(!carried.isEmpty, "\(call.relayedSessions)")
        #expect(carried.allSatisfy { $0.username == Coturn.username })
        #expect(
            carried.allSatisfy {
                $0.client.hasPrefix("\(call.alicePublic):") || $0.client.hasPrefix("\(call.bobPublic):")
            },
            "\(carried)")
    }

    @Test("Symmetric NATs on both sides without ICE: the call connects but no audio arrives either way (the control)")
    func noICEThroughSymmetricNATsCarriesNoAudio() async throws {
        let call = try await Self.natCall(nat: .symmetric, options: { coturn in ["--stun", coturn.server] })
        // Signalling works through the registrar ...
        #expect(call.alice.contains("CONFIRMED"), "\(call.alice)")
        #expect(call.bob.contains("CONFIRMED"), "\(call.bob)")
        // ... but each side sends to the other's server-reflexive address, a mapping the
        // other NAT made for coturn alone, and drops: nothing arrives.
        #expect(!call.bobHeard.detected(minimumDuration: .milliseconds(100)), "\(call.bobHeard)")
        #expect(!call.aliceHeard.detected(minimumDuration: .milliseconds(100)), "\(call.aliceHeard)")
        #expect(!call.alice.contains("rtp on"), "\(call.alice)")
        #expect(!call.bob.contains("rtp on"), "\(call.bob)")
    }

    @Test("Endpoint-independent NATs with STUN alone: audio flows both ways on the server-reflexive addresses")
    func stunThroughEndpointIndependentNATs() async throws {
        let call = try await Self.natCall(nat: .endpointIndependent, options: { coturn in ["--stun", coturn.server] })
        #expect(call.bobHeard.detected(minimumDuration: .milliseconds(1000)), "\(call.bobHeard)\n\(call.bob)")
        #expect(call.aliceHeard.detected(minimumDuration: .milliseconds(1000)), "\(call.aliceHeard)\n\(call.alice)")
        // Each side advertised its NAT's public address (the STUN answer) and received RTP
        // from the other NAT's public address: the server-reflexive path, not a relay.
        let aliceRTP = call.alice.split(whereSeparator: \.isNewline).first { $0.contains("rtp on") } ?? ""
        let bobRTP = call.bob.split(whereSeparator: \.isNewline).first { $0.contains("rtp on") } ?? ""
        #expect(
            aliceRTP.contains("from \(call.bobPublic):") && aliceRTP.contains("local \(call.alicePublic):"),
            "\(call.alice)")
        #expect(
            bobRTP.contains("from \(call.alicePublic):") && bobRTP.contains("local \(call.bobPublic):"), "\(call.bob)")
    }
}
