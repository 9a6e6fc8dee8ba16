import Foundation
import KitTestSupport
import PJSUATestSupport
import SwiftPJSUA
import SwiftPJSUAKit
import Testing

// Why these Kit tests live in this target, nested in `EngineTests`:
// pjsua is one per process (a second engine's `start` throws
// `PJSUAUsageError.anotherEngineRunning`) and `swift test` runs every test target in one
// process, in parallel by default. `.serialized` only orders the tests inside the suite it is
// on, so a separate serialized suite in another target would still overlap with
// `EngineTests`. Nesting this suite in `EngineTests` puts it under that suite's `.serialized`
// trait, which applies recursively: these tests run one at a time and never while another
// engine test runs. The Kit's tests that need no engine are in SwiftPJSUAUnitTests/Kit and
// run in parallel.
extension EngineTests {
    /// The push ↔ INVITE orderings of issue 6, on the real engine with sipp as the caller and a
    /// recording provider where CallKit would be. Each ordering must give exactly one
    /// reported call.
    @Suite("Kit orderings on the real engine")
    struct KitOrderings {
        /// A router over a running engine (sound device `.byApp`), recording both sides.
        struct Rig {
            let h: EngineHarness
            let engine: RecordingEngine
            let provider: RecordingProvider
            let clock: ManualClock
            let router: CallRouter
            let folder: TemporaryFolder
            let caller = SIPAddress(displayName: "Kit Caller", uri: "sip:sipp@127.0.0.1")
            let peers = PeerList()
            var remote: String { "127.0.0.1:\(h.transport.port)" }

            /// The sipp peers started so far, so a failure can show what they saw.
            final class PeerList: Sendable {
                private let list = Protected<[Sipp]>([])
                func add(_ sipp: Sipp) { list.withLock { $0.append(sipp) } }
                var all: [Sipp] { list.withLock { $0 } }
            }

            /// What each side saw: for failure messages.
            var diagnostics: String {
                "engine ops: \(engine.records)\nengine events:\n  "
                    + h.log.events.map { "\($0)" }.joined(separator: "\n  ")
                    + peers.all.map {
                        "\nsipp (\($0.port)):\n\($0.process.output.suffix(1500))\n\($0.messages.suffix(3000))"
                    }
                    .joined()
            }

            /// Waits for the provider to be told `record`; on timeout the failure shows every side.
            func expect(_ record: ProviderRecord, timeout: Duration = .seconds(10)) async throws {
                do {
                    try await provider.wait(for: record, timeout: timeout)
                } catch {
                    Issue.record("\(error)\n\(diagnostics)")
                    throw error
                }
            }

            func push(callID: String?) -> PushPayload {
                .incomingCall(
                    IncomingCallPush(sipCallID: callID, caller: SIPAddress(uri: caller.uri), accountHint: "bob"))
            }

            /// Starts sipp as the caller: `delay` ms before its INVITE, with `callID` if given.
            func sipp(_ scenario: String, callID: String? = nil, delay: Int = 0) async throws -> Sipp {
                var extra = ["-d", String(delay)]
                if let callID { extra += ["-cid_str", callID] }
                let sipp = try await Self.startSipp(scenario, remote: remote, extra: extra, folder: folder)
                peers.add(sipp)
                return sipp
            }

            static func startSipp(
                _ scenario: String, remote: String? = nil, extra: [String] = [], folder: TemporaryFolder
            ) async throws -> Sipp {
                try await Sipp.start(scenario: scenario, remote: remote, extra: extra, folder: folder)
            }

            /// Waits until the router has rung an INVITE (it sends 180 when one arrives).
            func waitForRinging() async throws -> Call {
                let records: [EngineRecord]
                do {
                    records = try await engine.journal.wait("the router rings the INVITE") { records in
                        records.contains { if case .answer(_, 180) = $0 { true } else { false } }
                    }
                } catch {
                    Issue.record("\(error)\n\(diagnostics)")
                    throw error
                }
                for case .answer(let call, 180) in records { return call }
                throw TimedOut(what: "180", seen: [])
            }

            /// Answers as the user would, checks the audio rule around the answer, then lets
            /// the audio session come and go and ends the call from our side.
            func answerThenEnd(_ id: UUID, answeredEarly: UUID? = nil) async throws {
                let answer: CallAction
                if let answeredEarly {
                    answer = CallAction(id: answeredEarly, callUUID: id, kind: .answer)
                } else {
                    answer = CallAction(callUUID: id, kind: .answer)
                    await router.perform(answer)
                }
                try await expect(.fulfilled(answer.id))
                let call = try #require(await router.calls.first { $0.id == id }?.call)
                // Fulfilled when the 200 went out; the ACK confirms the call after.
                try await h.log.first("the ACK (CONFIRMED)") { $0.isState(.confirmed, of: call) }
                // Answered and confirmed, yet no sound device: nothing has clocked the bridge.
                #expect(!engine.records.contains(.activateAudio), "\(engine.records)")
                let before = try await h.engine.streamStatistics(call)
                let info = try await h.engine.callInfo(call)
                #expect(before.packetsSent == 0, "sent \(before.packetsSent) after \(info.connectDuration) connected")
                // CallKit's didActivate: now, and only now, audio flows.
                try await router.audioSessionDidActivate()
                try await h.poll("RTP sent once the audio session is active") {
                    try await $0.streamStatistics(call).packetsSent > 0
                }
                let end = CallAction(callUUID: id, kind: .end)
                await router.perform(end)
                try await expect(.fulfilled(end.id))
                try await router.audioSessionDidDeactivate()
                let audio = engine.records.filter { $0 == .activateAudio || $0 == .deactivateAudio }
                #expect(audio == [.activateAudio, .deactivateAudio])
                // The device came after the 200 that answered the call.
                let answeredAt = engine.records.firstIndex(of: .answer(call, 200))
                let activatedAt = engine.records.firstIndex(of: .activateAudio)
                if let answeredAt, let activatedAt {
                    #expect(answeredAt < activatedAt, "\(engine.records)")
                } else {
                    Issue.record("no answer(200) or no activation: \(engine.records)")
                }
            }

            /// Runs `body` with a router over an engine with the null sound device, activated
            /// by the app (the local ringback on, as by default), and the given SIP timers.
            static func run(timers: SIPTimers = SIPTimers(), _ body: (Rig) async throws -> Void) async throws {
                let media = MediaConfiguration(soundDevice: .null, soundDeviceActivation: .byApp)
                let loop = try await EngineHarness.run(media: media, timers: timers) { h in
                    let engine = RecordingEngine(PJSUAEngine(h.engine))
                    let provider = RecordingProvider()
                    let clock = ManualClock()
                    let router = CallRouter(
                        engine: engine, provider: provider, clock: clock, pushTimeToLive: .seconds(30))
                    await router.bind(h.account, pushHint: "bob")
                    let events = h.engine.events
                    // Ends by itself when the engine's shutdown finishes the stream.
                    let loop = Task { await router.run(events: events) }
                    try await body(
                        Rig(
                            h: h, engine: engine, provider: provider, clock: clock, router: router, folder: h.folder))
                    return loop
                }
                await loop.value
            }
        }

        @Test(
            "Push, then the INVITE 0, 100 or 2000 ms later: one call, answered, audio only after activation",
            arguments: [0, 100, 2000])
        func pushThenInvite(delay: Int) async throws {
            try await Rig.run { rig in
                let callID = "kit-\(delay)ms-\(UUID().uuidString)@127.0.0.1"
                let id = CallIdentity.uuid(sipCallID: callID)
                #expect(try await rig.router.handlePush(rig.push(callID: callID)) == .reportedNewCall(id))
                let sipp = try await rig.sipp("kit_uac_answered.xml", callID: callID, delay: delay)
                let call = try await rig.waitForRinging()
                #expect(await rig.router.calls.map(\.call) == [call])
                try await rig.answerThenEnd(id)
                try await sipp.expectFinished()
                #expect(sipp.sentInviteCallIDs == [callID])
                #expect(rig.provider.reportedCalls == [id])
                // The INVITE added the display-name the push lacked.
                #expect(
                    rig.provider.records.contains(
                        .updated(id, CallUpdate(remoteURI: rig.caller.uri, displayName: "Kit Caller"))))
                #expect(await rig.router.calls.isEmpty)
            }
        }

        @Test("INVITE, then its push: the push finds the call already reported")
        func inviteThenPush() async throws {
            try await Rig.run { rig in
                let callID = "kit-invite-first-\(UUID().uuidString)@127.0.0.1"
                let id = CallIdentity.uuid(sipCallID: callID)
                let sipp = try await rig.sipp("kit_uac_answered.xml", callID: callID)
                try await rig.provider.wait("the INVITE reported") {
                    if case .newIncomingCall = $0 { true } else { false }
                }
                // The server's UUID in the late push cannot rename a call already on screen.
                let late = PushPayload.incomingCall(
                    IncomingCallPush(
                        serverUUID: UUID(), sipCallID: callID, caller: rig.caller, accountHint: "bob"))
                #expect(try await rig.router.handlePush(late) == .alreadyReported(id))
                try await rig.answerThenEnd(id)
                try await sipp.expectFinished()
                #expect(rig.provider.reportedCalls == [id])
            }
        }

        @Test("Push, then the caller CANCELs after ringing: one call, ended unanswered (487)")
        func pushThenCancel() async throws {
            try await Rig.run { rig in
                let callID = "kit-cancel-\(UUID().uuidString)@127.0.0.1"
                let id = CallIdentity.uuid(sipCallID: callID)
                #expect(try await rig.router.handlePush(rig.push(callID: callID)) == .reportedNewCall(id))
                let sipp = try await rig.sipp("kit_uac_cancel.xml", callID: callID)
                try await rig.expect(.ended(id, .unanswered))
                try await sipp.expectFinished()
                #expect(sipp.receivedStatusCodes.contains(487))
                #expect(rig.provider.reportedCalls == [id])
                #expect(!rig.engine.records.contains(.activateAudio))
                #expect(await rig.router.calls.isEmpty)
            }
        }

        @Test("INVITE, CANCEL, then a late push: the push is not a new call")
        func latePushAfterCancel() async throws {
            try await Rig.run { rig in
                let callID = "kit-late-push-\(UUID().uuidString)@127.0.0.1"
                let id = CallIdentity.uuid(sipCallID: callID)
                let sipp = try await rig.sipp("kit_uac_cancel.xml", callID: callID)
                try await rig.expect(.ended(id, .unanswered))
                #expect(rig.router.claimCallUUID(for: IncomingCallPush(sipCallID: callID, caller: rig.caller)) == id)
                #expect(try await rig.router.handlePush(rig.push(callID: callID)) == .alreadyEnded(id))
                try await sipp.expectFinished()
                #expect(rig.provider.reportedCalls == [id])
            }
        }

        @Test("Push and no INVITE: when the TTL runs out (manual clock) the call ends unanswered")
        func pushWithoutInviteExpires() async throws {
            try await Rig.run { rig in
                let id = CallIdentity.uuid(sipCallID: "kit-never-comes@127.0.0.1")
                #expect(
                    try await rig.router.handlePush(rig.push(callID: "kit-never-comes@127.0.0.1"))
                        == .reportedNewCall(id))
                await rig.clock.waitForSleepers(1)
                rig.clock.advance(by: .seconds(30))
                try await rig.expect(.ended(id, .unanswered))
                #expect(rig.provider.reportedCalls == [id])
                #expect(await rig.router.calls.isEmpty)
                #expect(rig.engine.records.isEmpty)
            }
        }

        @Test("The user answers before the INVITE arrives: the answer is applied when it does")
        func answerBeforeInvite() async throws {
            try await Rig.run { rig in
                let callID = "kit-early-answer-\(UUID().uuidString)@127.0.0.1"
                let id = CallIdentity.uuid(sipCallID: callID)
                #expect(try await rig.router.handlePush(rig.push(callID: callID)) == .reportedNewCall(id))
                let answer = CallAction(callUUID: id, kind: .answer)
                await rig.router.perform(answer)
                #expect(rig.engine.records.isEmpty)
                #expect(!rig.provider.records.contains(.fulfilled(answer.id)))
                let sipp = try await rig.sipp("kit_uac_answered.xml", callID: callID, delay: 100)
                try await rig.answerThenEnd(id, answeredEarly: answer.id)
                // The INVITE was answered 200 straight away, never rung.
                #expect(!rig.engine.records.contains { if case .answer(_, 180) = $0 { true } else { false } })
                try await sipp.expectFinished()
                #expect(sipp.receivedStatusCodes.contains(200))
                #expect(rig.provider.reportedCalls == [id])
            }
        }

        @Test("A push without a Call-ID is reconciled with the next INVITE for its account")
        func pushWithoutCallID() async throws {
            try await Rig.run { rig in
                guard case .reportedNewCall(let id) = try await rig.router.handlePush(rig.push(callID: nil)) else {
                    Issue.record("push not reported")
                    return
                }
                let sipp = try await rig.sipp("kit_uac_answered.xml")
                let call = try await rig.waitForRinging()
                let entry = try #require(await rig.router.calls.first)
                #expect(entry.id == id)
                #expect(entry.call == call)
                try await rig.answerThenEnd(id)
                try await sipp.expectFinished()
                // sipp's message log is complete once it has exited.
                #expect(entry.sipCallID == sipp.sentInviteCallIDs.first)
                #expect(rig.provider.reportedCalls == [id])
            }
        }

        @Test("A push with the server's UUID and no Call-ID matches the INVITE whose X-Call-UUID carries it")
        func pushWithServerUUID() async throws {
            try await Rig.run { rig in
                let server = UUID()
                // An older push for the same account, which account matching alone would pick.
                let older = IncomingCallPush(serverUUID: UUID(), caller: rig.caller, accountHint: "bob")
                _ = try await rig.router.handlePush(.incomingCall(older))
                let push = IncomingCallPush(serverUUID: server, caller: rig.caller, accountHint: "bob")
                #expect(try await rig.router.handlePush(.incomingCall(push)) == .reportedNewCall(server))
                let extra = ["-key", "uuid", server.uuidString, "-d", "0"]
                let sipp = try await Self.Rig.startSipp(
                    "kit_uac_cancel_uuid.xml", remote: rig.remote, extra: extra, folder: rig.folder)
                rig.peers.add(sipp)
                try await rig.expect(.ended(server, .unanswered))
                try await sipp.expectFinished()
                #expect(rig.provider.reportedCalls == [older.serverUUID, server].compactMap { $0 })
                // The older push is still waiting for its own INVITE.
                #expect(await rig.router.calls.map(\.id) == [older.serverUUID].compactMap { $0 })
            }
        }

        /// A Call-ID of RFC 3261 `word` characters (all but "%", which sipp's -cid_str
        /// expands), unique per run, exactly `length` bytes long.
        static func punctuationCallID(length: Int) -> String {
            let unique = UUID().uuidString + "@h.x"
            let filler = String(repeating: #"a.b!c*d_e+f`g'h~i(j)k<l>m:n\o"p/q[r]s?t{u}v-"#, count: 10)
            return String(filler.prefix(length - unique.utf8.count)) + unique
        }

        /// Push with `callID` (through JSON, escaped), then sipp's INVITE with it, CANCELled.
        func exactCallIDOrdering(_ callID: String) async throws {
            try await Rig.run { rig in
                let id = CallIdentity.uuid(sipCallID: callID)
                let payload = try PushPayload(json: rig.push(callID: callID).json)
                #expect(try await rig.router.handlePush(payload) == .reportedNewCall(id))
                let sipp = try await rig.sipp("kit_uac_cancel.xml", callID: callID)
                // Wait for any end, so that a mismatch shows as a diff of the Call-IDs below.
                try await rig.provider.wait("a call ended") { if case .ended = $0 { true } else { false } }
                try await sipp.expectFinished()
                #expect(sipp.sentInviteCallIDs == [callID])
                let incoming = rig.h.log.events.compactMap { event -> String? in
                    if case .incomingCall(let incoming) = event { incoming.sipCallID } else { nil }
                }
                #expect(incoming == [callID])
                #expect(rig.provider.reportedCalls == [id])
                #expect(rig.provider.records.contains(.ended(id, .unanswered)))
                #expect(await rig.router.calls.isEmpty)
            }
        }

        @Test("A long (128-byte), punctuation-heavy Call-ID is carried and compared exactly")
        func punctuationCallID() async throws {
            let callID = Self.punctuationCallID(length: 128)
            #expect(callID.utf8.count == 128)
            try await exactCallIDOrdering(callID)
        }

        @Test("Call-IDs longer than pjsua's 128-byte call-info buffer are matched exactly too")
        func overlongCallID() async throws {
            // pjsua_call_info keeps 127 bytes of the Call-ID; the engine takes the full one
            // from the INVITE, so a push naming it matches.
            try await exactCallIDOrdering(Self.punctuationCallID(length: 200))
        }

        @Test("Outgoing call to sipp's UAS: start fulfilled as the INVITE leaves, then connecting and connected")
        func outgoingCall() async throws {
            try await withSipp(scenario: "uas") { uas in
                try await Rig.run { rig in
                    let id = UUID()
                    let start = CallAction(callUUID: id, kind: .start(uri: uas.uri, account: nil, hasVideo: false))
                    await rig.router.perform(start)
                    try await rig.expect(.connected(id))
                    #expect(rig.provider.records == [.fulfilled(start.id), .startedConnecting(id), .connected(id)])
                    #expect(!rig.engine.records.contains(.activateAudio))
                    let end = CallAction(callUUID: id, kind: .end)
                    await rig.router.perform(end)
                    try await rig.expect(.fulfilled(end.id))
                    #expect(rig.provider.reportedCalls.isEmpty)
                    #expect(await rig.router.calls.isEmpty)
                }
                try await uas.expectFinished()
                #expect(uas.receivedRequests.contains("BYE"))
            }
        }

        @Test("Hold, resume, mute, DTMF and group on a real self-call; hold fulfilled only when media shows it")
        func callActions() async throws {
            try await Rig.run { rig in
                let outgoing = UUID()
                let start = CallAction(
                    callUUID: outgoing, kind: .start(uri: rig.h.uri("self"), account: nil, hasVideo: false))
                await rig.router.perform(start)
                // The engine calls itself: the INVITE comes back as a new incoming call.
                let incoming = try await rig.provider.wait("the incoming leg reported") {
                    if case .newIncomingCall = $0 { true } else { false }
                }
                guard case .newIncomingCall(let incomingID, _) = incoming else { return }
                let answer = CallAction(callUUID: incomingID, kind: .answer)
                await rig.router.perform(answer)
                try await rig.expect(.fulfilled(answer.id))
                try await rig.expect(.fulfilled(start.id))
                let call = try #require(await rig.router.calls.first { $0.id == outgoing }?.call)
                try await rig.h.log.wait("audio active") { $0.contains { $0.hasActiveAudio(call) } }
                // The caller's media is active before its CONFIRMED (the ACK): pjsua refuses a
                // hold while the call is still connecting.
                try await rig.expect(.connected(outgoing))
                // CallKit activates the session once the call is answered; RFC 4733 digits
                // travel in RTP, which only flows once the sound device clocks the bridge.
                try await rig.router.audioSessionDidActivate()

                let hold = CallAction(callUUID: outgoing, kind: .hold(true))
                await rig.router.perform(hold)
                try await rig.expect(.fulfilled(hold.id))
                // The router fulfils only on a media state with local hold: that event exists.
                try await rig.h.log.wait("local hold", timeout: .seconds(2)) { events in
                    events.contains {
                        if case .callMediaState(let mediaChange) = $0, mediaChange.call == call {
                            mediaChange.media.contains { $0.status == .localHold }
                        } else {
                            false
                        }
                    }
                }
                let resume = CallAction(callUUID: outgoing, kind: .hold(false))
                await rig.router.perform(resume)
                try await rig.expect(.fulfilled(resume.id))

                let others = [
                    CallAction(callUUID: outgoing, kind: .mute(true)),
                    CallAction(callUUID: outgoing, kind: .mute(false)),
                    CallAction(callUUID: outgoing, kind: .playDTMF("1#")),
                    CallAction(callUUID: outgoing, kind: .group(with: incomingID)),
                    CallAction(callUUID: outgoing, kind: .group(with: nil)),
                ]
                for action in others {
                    await rig.router.perform(action)
                    try await rig.expect(.fulfilled(action.id))
                }
                let dtmf = try await rig.h.log.wait("DTMF received on the other leg") { events in
                    events.filter { if case .dtmf = $0 { true } else { false } }.count == 2
                }
                let digits: [Character] = dtmf.compactMap {
                    if case .dtmf(let received) = $0 { received.digit } else { nil }
                }
                #expect(digits == ["1", "#"])
                let end = CallAction(callUUID: outgoing, kind: .end)
                await rig.router.perform(end)
                try await rig.expect(.fulfilled(end.id))
                try await rig.expect(.ended(incomingID, .remoteEnded))
                try await rig.router.audioSessionDidDeactivate()
                let audio = rig.engine.records.filter { $0 == .activateAudio || $0 == .deactivateAudio }
                #expect(audio == [.activateAudio, .deactivateAudio])
                #expect(rig.provider.reportedCalls == [incomingID])
            }
        }

        @Test("A re-register push sends a fresh REGISTER for the bound account")
        func reRegisterPush() async throws {
            try await withSipp(scenario: "kit_registrar_reregister.xml") { registrar in
                try await Rig.run { rig in
                    let account = try await rig.h.engine.addAccount(
                        AccountConfiguration(
                            identity: "sip:bob@127.0.0.1", registrar: "sip:127.0.0.1:\(registrar.port)"))
                    await rig.router.bind(account, pushHint: "bob@127.0.0.1")
                    try await rig.h.log.first("first registration") { $0.isRegistration(of: account, active: true) }
                    let payload = try PushPayload(
                        json: Data(#"{"version":1,"type":"reregister","account":"bob@127.0.0.1"}"#.utf8))
                    #expect(try await rig.router.handlePush(payload) == .reRegistered(account))
                    try await rig.h.log.wait("second registration") { events in
                        events.filter { $0.isRegistration(of: account, active: true) }.count == 2
                    }
                    #expect(rig.provider.records.isEmpty)
                }
                try await registrar.expectFinished()
                #expect(registrar.receivedRequests == ["REGISTER", "REGISTER", "REGISTER"])
            }
        }
    }
}
