import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Who may call (WhoMayCall) and the engine's limits (IncomingLimits), against Kamailio,
/// sipp and SIPVicious sending from loopback addresses that are not the registrar.
extension EngineTests {
    /// A scenario file in `folder`: one out-of-dialog INVITE to `[service]` (sipp's `-s`),
    /// from the user `scanner`, that expects the final response `code` and ACKs it.
    static func oneInviteScenario(expecting code: Int, folder: TemporaryFolder) throws -> String {
        let file = folder.file("invite-expecting-\(code).xml")
        let from = "\"scanner\" <sip:scanner@[local_ip]:[local_port]>;tag=[pid]SIPpTag[call_number]"
        let xml = """
            <?xml version="1.0" encoding="ISO-8859-1" ?>
            <scenario name="out-of-dialog INVITE answered \(code)">
              <send retrans="500"><![CDATA[
            INVITE sip:[service]@[remote_ip]:[remote_port] SIP/2.0
            Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
            From: \(from)
            To: <sip:[service]@[remote_ip]:[remote_port]>
            Call-ID: [call_id]
            CSeq: 1 INVITE
            Contact: <sip:scanner@[local_ip]:[local_port]>
            Max-Forwards: 70
            Content-Type: application/sdp
            Content-Length: [len]

            v=0
            o=- 1 1 IN IP[local_ip_type] [local_ip]
            s=-
            c=IN IP[media_ip_type] [media_ip]
            t=0 0
            m=audio [media_port] RTP/AVP 0
            a=rtpmap:0 PCMU/8000

            ]]></send>
              <recv response="100" optional="true"/>
              <recv response="180" optional="true"/>
              <recv response="183" optional="true"/>
              <recv response="\(code)"/>
              <send><![CDATA[
            ACK sip:[service]@[remote_ip]:[remote_port] SIP/2.0
            Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
            From: \(from)
            [last_To:]
            Call-ID: [call_id]
            CSeq: 1 ACK
            Max-Forwards: 70
            Content-Length: 0

            ]]></send>
            </scenario>
            """
        try xml.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    /// Runs SIPVicious's `svwar -m INVITE` from 127.0.0.3 over the extensions in `names`
    /// against 127.0.0.1:`port`, giving up 5 s after the last response.
    ///
    /// Debian's svwar (sipvicious 0.3.3) parses `-b` but never hands it to its scanner,
    /// which binds every address and so sends from 127.0.0.1, the registrar's address in
    /// these tests: this runs the same svwar with the binding given.
    static func svwar(names: URL, port: UInt16, folder: TemporaryFolder) throws -> PeerProcess {
        let wrapper = folder.file("svwar-bound.py")
        try """
        import os, sys
        sys.path.insert(0, "/usr/share/sipvicious")
        from sipvicious import svwar
        Scanner = svwar.TakeASip
        class BoundScanner(Scanner):
            def __init__(self, *args, **kwargs):
                kwargs["bindingip"] = os.environ["SVWAR_BINDING_IP"]
                super().__init__(*args, **kwargs)
        svwar.TakeASip = BoundScanner
        sys.argv[0] = "svwar"
        sys.exit(svwar.main())

        """.write(to: wrapper, atomically: true, encoding: .utf8)
        return try PeerProcess(
            "svwar-\(port)", executable: "/usr/bin/python3",
            arguments: [
                wrapper.path, "-m", "INVITE", "-d", names.path, "--force", "--maximumtime", "5", "-p", String(port),
                "127.0.0.1",
            ], folder: folder, environment: ["SVWAR_BINDING_IP": "127.0.0.3"])
    }

    /// Incoming calls from the user `scanner` in the log so far.
    static func scannerCalls(_ log: EventLog) -> Int {
        log.events.filter {
            if case .incomingCall(let incoming) = $0 { return incoming.from.uri.hasPrefix("sip:scanner@") }
            return false
        }.count
    }

    @Test(
        "Who may call: a stranger's INVITE gets 403, counted, no ring; via Kamailio it rings; policy off: it rings",
        arguments: [true, false])
    func registeredAccountRefusesStrangers(policyOn: Bool) async throws {
        try await withTemporaryFolder { folder in
            let kamailio = try await Kamailio.start(folder: folder)
            try await EngineHarness.run { h in
                var bob = kamailio.account("bob")
                if !policyOn { bob.whoMayCall = .anyone }
                let bobAccount = try await h.registeredAccount(bob)
                let alice = try await h.registeredAccount(kamailio.account("alice"))
                let scenario = try Self.oneInviteScenario(expecting: 403, folder: h.folder)
                let scanner = try await Sipp.start(
                    scenario: scenario, remote: "127.0.0.1:\(h.transport.port)",
                    extra: ["-s", "bob"], folder: h.folder, timeout: .seconds(15), sourceAddress: "127.0.0.3")
                if policyOn {
                    let result = try await scanner.finish(timeout: .seconds(20))
                    #expect(result.successfulCalls == 1, "\(result)")
                    #expect(scanner.receivedStatusCodes.contains(403), "\(scanner.messages.suffix(2000))")
                    #expect(try await h.engine.admissionCounters().notFromServer >= 1)
                } else {
                    try await waitUntil("the scanner's call rings", seen: { h.log.events.map { "\($0)" }.joined() }) {
                        Self.scannerCalls(h.log) == 1
                    }
                    scanner.stop()
                    #expect(try await h.engine.admissionCounters().notFromServer == 0)
                }
                if policyOn { #expect(Self.scannerCalls(h.log) == 0, "\(h.log.events)") }
                // Through the registrar: alice calls bob; Kamailio relays the INVITE from its
                // own address, with bob's Contact as the Request-URI.
                let call = try await h.engine.makeCall(to: kamailio.aor("bob"), from: alice)
                let incoming = try await h.log.first("bob's incoming call through Kamailio") {
                    if case .incomingCall(let incoming) = $0 { return incoming.account == bobAccount }
                    return false
                }
                #expect(incoming.incomingCall != nil)
                try await h.hangUp(call)
            }
        }
    }

    @Test("Who may call, Request-URI only: from a stranger, sip:100@ gets 404 and sip:bob@ rings")
    func requestURIUserCheck() async throws {
        try await withTemporaryFolder { folder in
            let kamailio = try await Kamailio.start(folder: folder)
            try await EngineHarness.run { h in
                var bob = kamailio.account("bob")
                bob.whoMayCall = WhoMayCall(onlyFromServers: false, requiresContactUser: true)
                _ = try await h.registeredAccount(bob)
                let wrongUser = try await Sipp.start(
                    scenario: try Self.oneInviteScenario(expecting: 404, folder: h.folder),
                    remote: "127.0.0.1:\(h.transport.port)", extra: ["-s", "100"], folder: h.folder,
                    timeout: .seconds(15), sourceAddress: "127.0.0.3")
                let result = try await wrongUser.finish(timeout: .seconds(20))
                #expect(result.successfulCalls == 1, "\(result)")
                #expect(try await h.engine.admissionCounters().unknownUser >= 1)
                #expect(Self.scannerCalls(h.log) == 0)
                let rightUser = try await Sipp.start(
                    scenario: try Self.oneInviteScenario(expecting: 486, folder: h.folder),
                    remote: "127.0.0.1:\(h.transport.port)", extra: ["-s", "bob"], folder: h.folder,
                    timeout: .seconds(15), sourceAddress: "127.0.0.3")
                let call = try await h.log.first("bob's call from the stranger") {
                    if case .incomingCall(let incoming) = $0 { return incoming.from.uri.hasPrefix("sip:scanner@") }
                    return false
                }
                let callHandle = try #require(call.incomingCall)
                try await h.engine.answer(callHandle, statusCode: 486)
                #expect(try await rightUser.finish(timeout: .seconds(20)).successfulCalls == 1)
            }
        }
    }

    @Test(
        "svwar -m INVITE from 127.0.0.3 at a registered account rings nothing, is counted; policy off: it rings",
        arguments: [true, false])
    func svwarScan(policyOn: Bool) async throws {
        try await withTemporaryFolder { folder in
            let kamailio = try await Kamailio.start(folder: folder)
            try await EngineHarness.run { h in
                // The only account, as with `swiftpjsua listen`: requests for users no account
                // has go to it (pjsua_acc_find_for_incoming), not to the harness's local one.
                try await h.engine.removeAccount(h.account)
                var bob = kamailio.account("bob")
                if !policyOn { bob.whoMayCall = .anyone }
                _ = try await h.registeredAccount(bob)
                let dictionary = h.folder.file("extensions.txt")
                try "100\n101\n200\nbob\nadmin\n".write(to: dictionary, atomically: true, encoding: .utf8)
                let svwar = try Self.svwar(names: dictionary, port: h.transport.port, folder: h.folder)
                _ = try await svwar.waitForExit(timeout: .seconds(60))
                let counters = try await h.engine.admissionCounters()
                let rang = h.log.events.filter { $0.incomingCall != nil }.count
                if policyOn {
                    #expect(rang == 0, "\(svwar.output)")
                    // svwar's first INVITEs (a random user, then the first name) get 403; it
                    // takes that for an answer it does not know and gives up.
                    #expect(counters.notFromServer >= 1, "\(counters) \(svwar.output)")
                    #expect(svwar.output.contains("SIP/2.0 403 Forbidden"), "\(svwar.output)")
                    #expect(svwar.output.contains("found nothing"), "\(svwar.output)")
                } else {
                    #expect(rang >= 1, "\(svwar.output)")
                    #expect(counters.notFromServer == 0)
                }
            }
        }
    }

    @Test(
        "Limits: 200 INVITEs/s from 127.0.0.3 get 503 + Retry-After past 10/s burst 20; 127.0.0.1 still calls"
    )
    func floodFromOneSource() async throws {
        let limits = IncomingLimits(
            requestRate: .init(perSecond: 10, burst: 20), maxRingingCalls: nil, retryAfter: .seconds(7))
        try await EngineHarness.run(maxCalls: 128, limits: limits) { h in
            let start = ContinuousClock.now
            let flood = try await Sipp.start(
                scenario: try Self.oneInviteScenario(expecting: 503, folder: h.folder),
                remote: "127.0.0.1:\(h.transport.port)", calls: 200, extra: ["-s", "engine", "-r", "200", "-l", "200"],
                folder: h.folder, timeout: .seconds(30), sourceAddress: "127.0.0.3")
            try await waitUntil(
                "every flood INVITE answered", timeout: .seconds(20), seen: { "\(flood.receivedStatusCodes)" }
            ) {
                let codes = flood.receivedStatusCodes
                return codes.filter { $0 == 503 }.count + Self.scannerCalls(h.log) >= 200
            }
            let elapsed = ContinuousClock.now - start
            let other = try await h.sippCaller("uac", calls: 1)
            let incoming = try await h.log.first("the other source's call") {
                if case .incomingCall(let incoming) = $0 { return incoming.from.uri.hasPrefix("sip:sipp@") }
                return false
            }
            try await h.engine.answer(try #require(incoming.incomingCall), statusCode: 200)
            #expect(try await other.finish(timeout: .seconds(30)).successfulCalls == 1)
            flood.stop()
            let admitted = Self.scannerCalls(h.log)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            #expect(admitted >= 20 && Double(admitted) <= 20 + 10 * seconds + 2, "admitted \(admitted) in \(elapsed)")
            let limited = flood.messageBlocks.filter { $0.firstLine.hasPrefix("SIP/2.0 503") }
            print("flood: \(admitted) INVITEs admitted, \(limited.count) answered 503 in \(elapsed)")
            #expect(limited.count >= 200 - admitted, "\(limited.count) 503s")
            #expect(limited.allSatisfy { $0.header("Retry-After") == "7" })
            #expect(try await h.engine.admissionCounters().rateLimited >= limited.count)
        }
    }

    @Test("Limits: with 2 calls ringing, a third simultaneous INVITE gets 486 with Retry-After")
    func ringingCap() async throws {
        let limits = IncomingLimits(requestRate: nil, maxRingingCalls: 2, retryAfter: .seconds(5))
        try await EngineHarness.run(limits: limits) { h in
            let ringing = try await Sipp.start(
                scenario: try Self.oneInviteScenario(expecting: 486, folder: h.folder),
                remote: "127.0.0.1:\(h.transport.port)", calls: 3, extra: ["-s", "engine", "-r", "20", "-l", "3"],
                folder: h.folder, timeout: .seconds(30), sourceAddress: "127.0.0.3")
            try await waitUntil("a 486", seen: { "\(ringing.receivedStatusCodes)" }) {
                ringing.receivedStatusCodes.contains(486)
            }
            #expect(Self.scannerCalls(h.log) == 2)
            let busy = try #require(ringing.firstMessage(sent: false, startingWith: "SIP/2.0 486"))
            #expect(busy.header("Retry-After") == "5")
            #expect(try await h.engine.admissionCounters().ringingCapReached == 1)
            ringing.stop()
        }
    }

    @Test(
        "Limits and who may call are validated: out-of-range values throw invalidConfiguration",
        arguments: [
            IncomingLimits(requestRate: .init(perSecond: 0, burst: 20)),
            IncomingLimits(requestRate: .init(perSecond: 10, burst: 5)),
            IncomingLimits(maxRingingCalls: 0),
            IncomingLimits(retryAfter: .milliseconds(1500)),
            IncomingLimits(retryAfter: .seconds(7200)),
        ])
    func invalidLimits(limits: IncomingLimits) async throws {
        let engine = PJSUA()
        var configuration = Configuration(
            transports: [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)],
            media: MediaConfiguration(soundDevice: .null))
        configuration.limits = limits
        await #expect {
            try await engine.start(configuration)
        } throws: { error in
            if case PJSUAUsageError.invalidConfiguration(let text) = error { return text.contains("limits.") }
            return false
        }
        await engine.shutdown()
    }

    @Test("Who may call: onlyFromServers on an account without registrar or proxy throws invalidConfiguration")
    func onlyFromServersNeedsServers() async throws {
        try await EngineHarness.run { h in
            var account = AccountConfiguration(identity: "sip:carol@127.0.0.1")
            account.whoMayCall = .serversOnly
            await #expect(throws: PJSUAUsageError.self) { try await h.engine.addAccount(account) }
            #expect(account.effectiveWhoMayCall == .serversOnly)
            #expect(AccountConfiguration(identity: "sip:carol@127.0.0.1").effectiveWhoMayCall == .anyone)
            #expect(AccountConfiguration(identity: "sip:c@h", registrar: "sip:h").effectiveWhoMayCall == .serversOnly)
        }
    }
}
