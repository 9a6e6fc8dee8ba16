import Foundation
import KitTestSupport
import PJSUATestSupport
import SwiftPJSUA
import SwiftPJSUAKit
import Testing

/// Issue 14 on the real engine: a call push after a cold launch (the engine not running),
/// through a real registrar and a real caller; and a start action with a phone-number handle.
/// In `EngineTests` for its `.serialized` trait (one pjsua per process, see CallRouter+OrderingTests.swift).
extension EngineTests {
    @Suite("Kit cold start and handle mapping on the real engine")
    struct KitColdStart {
        /// `swiftpjsua call` registered as `user` at Kamailio, calling `target` with a 1 kHz tone.
        static func caller(
            _ user: String, calling target: String, at kamailio: Kamailio, tone: URL, extra: [String] = [],
            folder: TemporaryFolder, name: String
        ) throws -> PeerProcess {
            try PeerProcess(
                name, executable: Repository.tool.path,
                arguments: [
                    "call", target, "--registrar", kamailio.uri, "--id", kamailio.aor(user), "--username", user,
                    "--password-env", "TEST_SIP_PASSWORD", "--play", tone.path,
                ] + extra, folder: folder, environment: ["TEST_SIP_PASSWORD": Kamailio.passwords[user] ?? ""])
        }

        @Test(
            """
            Cold start: a push starts the engine and registers bob; alice's INVITE, sent once Kamailio has the \
            binding, is one call, answered, with her tone
            """
        )
        func pushStartsEngineThenInviteArrives() async throws {
            try await withTemporaryFolder { folder in
                let kamailio = try await Kamailio.start(folder: folder)
                let tone = try folder.toneFile(duration: .seconds(10))

                // Control: before the push nobody is registered as bob, so Kamailio's location
                // lookup fails and an INVITE for bob is refused (404): a call that succeeds later
                // can only have found the binding the push made.
                let early = try Self.caller(
                    "alice", calling: kamailio.aor("bob"), at: kamailio, tone: tone, folder: folder,
                    name: "alice-early")
                #expect(try await early.waitForExit(timeout: .seconds(20)) != 0, "\(early.output)")
                #expect(early.output.contains("404"), "\(early.output)")
                let controlInvites = kamailio.receivedRequests.filter { $0.method == "INVITE" }.count
                #expect(controlInvites >= 1, "\(kamailio.receivedRequests)")

                // The app was launched by the push: the engine exists but is not started.
                let engine = PJSUA()
                let log = EventLog(engine.events)
                var media = MediaConfiguration(soundDevice: .null, soundDeviceActivation: .byApp)
                media.rtpPorts = EngineHarness.randomRTPPorts()
                let plan = PJSUAEngine.ColdStart(
                    configuration: Configuration(
                        transports: [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)],
                        logLevel: 0, media: media),
                    accounts: ["bob": kamailio.account("bob")])
                let provider = RecordingProvider()
                let router = CallRouter(engine: PJSUAEngine(engine, coldStart: plan), provider: provider)
                let loop = Task { await router.run(events: engine.events) }
                do {
                    await #expect(throws: PJSUAUsageError.notStarted) { try await engine.transports() }
                    let server = UUID()
                    let payload: [AnyHashable: Any] = [
                        "version": 1, "type": "call", "uuid": server.uuidString, "account": "bob",
                        "caller": ["uri": kamailio.aor("alice"), "name": "Alice"] as [String: Any],
                    ]
                    let pushedAt = ContinuousClock.now
                    let receipt = router.receiveVoIPPush(payload)
                    #expect(receipt.callUUID == server)
                    let outcome = try await router.handleVoIPPush(receipt)
                    let reachableAfter = ContinuousClock.now - pushedAt
                    #expect(outcome == .reportedNewCall(server))
                    // handleVoIPPush returned: the engine runs and Kamailio answered bob's REGISTER 2xx.
                    let registration = try await log.first("bob registered", timeout: .seconds(2)) {
                        $0.isRegistration(active: true)
                    }
                    guard case .registrationState(let change) = registration else { return }
                    #expect(change.statusCode == 200)
                    let requests = kamailio.receivedRequests
                    #expect(requests.contains { $0.method == "REGISTER" && $0.user == "bob" && $0.expires != "0" })
                    #expect(requests.filter { $0.method == "INVITE" }.count == controlInvites, "\(requests)")
                    #expect(provider.reportedCalls == [server])
                    print("cold start: push → engine started and bob registered at Kamailio in \(reachableAfter)")

                    // G.711 between the two processes (see RegistrarCallTests): only PCMU on our side.
                    for codec in try await engine.codecs() where !codec.id.hasPrefix("PCMU/") {
                        try await engine.setCodecPriority(codec.id, 0)
                    }
                    // Only now does alice call, carrying the server's UUID as a real server would.
                    let alice = try Self.caller(
                        "alice", calling: kamailio.aor("bob"), at: kamailio, tone: tone,
                        extra: [
                            "--header", "X-Call-UUID: \(server.uuidString)", "--hangup-after", "30",
                        ], folder: folder,
                        name: "alice")
                    let incoming = try await log.first("the INVITE", timeout: .seconds(15)) { $0.incomingCall != nil }
                    let call = try #require(incoming.incomingCall)
                    // The REGISTER that made bob reachable came before the INVITE that reached him.
                    let after = kamailio.receivedRequests
                    let registeredAt = try #require(
                        after.firstIndex { $0.method == "REGISTER" && $0.user == "bob" && $0.expires != "0" })
                    let invitedAt = try #require(
                        after.indices.filter { after[$0].method == "INVITE" && after[$0].user == "alice" }.last)
                    #expect(registeredAt < invitedAt, "\(after)")

                    let answer = CallAction(callUUID: server, kind: .answer)
                    await router.perform(answer)
                    try await provider.wait(for: .fulfilled(answer.id), timeout: .seconds(10))
                    // Fulfilled at CONFIRMED: the router has joined the INVITE to the pushed call.
                    #expect(await router.calls.map(\.id) == [server])
                    #expect(await router.calls.map(\.call) == [call])
                    try await log.first("audio active") { $0.hasActiveAudio(call) }
                    // CallKit's didActivate: the null sound device clocks the bridge from here.
                    try await router.audioSessionDidActivate()
                    let recording = folder.file("bob-heard.wav")
                    let recorder = try await engine.record(file: recording.path, from: call)
                    // 100 packets, then 75 more (1.5 s) recorded.
                    for packets: UInt64 in [100, 175] {
                        try await waitUntil("\(packets) RTP packets") {
                            try await engine.streamStatistics(call).packetsReceived >= packets
                        }
                    }
                    try await engine.stop(recorder)
                    let end = CallAction(callUUID: server, kind: .end)
                    await router.perform(end)
                    try await provider.wait(for: .fulfilled(end.id))
                    try await router.audioSessionDidDeactivate()

                    let analysis = ToneAnalysis(try WAVAudio(contentsOf: recording), frequency: 1000)
                    #expect(analysis.detected(minimumDuration: .milliseconds(800)), "\(analysis)")
                    #expect(provider.reportedCalls == [server], "\(provider.records)")
                    #expect(log.events.filter { $0.incomingCall != nil }.count == 1)
                    #expect(try await alice.waitForExit(timeout: .seconds(15)) == 0, "\(alice.output)")
                    #expect(alice.output.contains("CONFIRMED"), "\(alice.output)")
                } catch {
                    await engine.shutdown()
                    await loop.value
                    throw error
                }
                await engine.shutdown()
                await loop.value
            }
        }

        @Test("Warm app: a call push re-registers the bound, already registered account before handlePush returns")
        func pushReRegistersWarmAccount() async throws {
            try await withKamailio { kamailio in
                try await EngineHarness.run { h in
                    let bob = try await h.engine.addAccount(
                        kamailio.account("bob"), awaitingRegistration: .seconds(10)
                    ).account
                    func registers() -> Int {
                        kamailio.receivedRequests.filter { $0.method == "REGISTER" && $0.user == "bob" }.count
                    }
                    let before = registers()
                    let router = CallRouter(engine: PJSUAEngine(h.engine), provider: RecordingProvider())
                    await router.bind(bob, pushHint: "bob")
                    let server = UUID()
                    let push = IncomingCallPush(
                        serverUUID: server, caller: SIPAddress(uri: kamailio.aor("alice")), accountHint: "bob")
                    #expect(try await router.handlePush(.incomingCall(push)) == .reportedNewCall(server))
                    // Returned only after a fresh REGISTER was answered: Kamailio has seen it already.
                    #expect(registers() > before, "\(kamailio.receivedRequests)")
                    try await h.log.wait("a second registration", timeout: .seconds(2)) { events in
                        events.filter { $0.isRegistration(of: bob, active: true) }.count == 2
                    }
                }
            }
        }

        @Test("A start action with a phone-number handle calls the mapped URI: sipp sees it as the Request-URI")
        func dialPhoneNumber() async throws {
            try await withSipp(scenario: "uas") { uas in
                try await EngineHarness.run { h in
                    // An account whose domain is sipp's address: the default mapping puts numbers there.
                    let account = try await h.engine.addAccount(
                        AccountConfiguration(identity: "sip:kit@127.0.0.1:\(uas.port)"))
                    let provider = RecordingProvider()
                    let router = CallRouter(engine: PJSUAEngine(h.engine), provider: provider)
                    await router.bind(account, pushHint: "kit")
                    let events = h.engine.events
                    let loop = Task { await router.run(events: events) }
                    let id = UUID()
                    let dial = CallAction(
                        callUUID: id,
                        kind: .dial(CallHandle(.phoneNumber, "+1 (555) 010-9999"), account: nil, hasVideo: false))
                    await router.perform(dial)
                    try await provider.wait(for: .connected(id))
                    let end = CallAction(callUUID: id, kind: .end)
                    await router.perform(end)
                    try await provider.wait(for: .fulfilled(end.id))
                    #expect(provider.records.contains(.fulfilled(dial.id)))
                    loop.cancel()
                }
                try await uas.expectFinished()
                let invite = try #require(uas.received("INVITE "))
                #expect(invite.firstLine == "INVITE sip:+15550109999@127.0.0.1:\(uas.port);user=phone SIP/2.0")
            }
        }
    }
}
