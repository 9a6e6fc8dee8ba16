import Foundation
import KitTestSupport
import SwiftPJSUA
import SwiftPJSUAKit
import Testing

/// The router's logic against a fake engine whose events the test writes. No pjsua here, so
/// these run in parallel with everything; the same orderings against the real engine and
/// sipp are in SwiftPJSUATests/Kit/CallRouter+OrderingTests.swift.
@Suite("Call router (fake engine)")
struct CallRouterTests {
    let engine = FakeCallEngine(unknownCalls: .accept)
    let provider = RecordingProvider()
    let clock = ManualClock()
    let router: CallRouter
    let account = Account(slot: 0, generation: 1)
    let alice = SIPAddress(displayName: "Alice", uri: "sip:alice@example.com")

    init() async {
        router = CallRouter(engine: engine, provider: provider, clock: clock, pushTimeToLive: .seconds(30))
        await router.bind(account, pushHint: "bob")
    }

    func push(_ callID: String?, uuid: UUID? = nil, hint: String? = "bob") -> PushPayload {
        .incomingCall(
            IncomingCallPush(serverUUID: uuid, sipCallID: callID, caller: SIPAddress(uri: alice.uri), accountHint: hint)
        )
    }

    func invite(_ call: Call, _ callID: String, headers: [SIPHeader] = []) -> PJSUAEvent {
        .incomingCall(
            IncomingCall(
                account: account, call: call, sipCallID: callID, from: alice, offeredVideo: false, headers: headers))
    }

    func state(_ call: Call, _ state: CallState, _ callID: String, _ status: Int = 200) -> PJSUAEvent {
        .callState(CallStateChange(call: call, state: state, sipCallID: callID, statusCode: status, reason: ""))
    }

    @Test("Push then INVITE: one report, the INVITE rings (180) and adds the display-name")
    func pushThenInvite() async throws {
        let outcome = try await router.handlePush(push("c1@h"))
        let id = CallIdentity.uuid(sipCallID: "c1@h")
        #expect(outcome == .reportedNewCall(id))
        let call = Call(slot: 0, generation: 10)
        await router.handle(invite(call, "c1@h"))
        #expect(provider.reportedCalls == [id])
        #expect(engine.records == [.answer(call, 180)])
        #expect(provider.records.last == .updated(id, CallUpdate(remoteURI: alice.uri, displayName: "Alice")))
        #expect(await router.calls.map(\.call) == [call])
    }

    @Test("INVITE then push: the push finds the call already reported")
    func inviteThenPush() async throws {
        let call = Call(slot: 0, generation: 10)
        await router.handle(invite(call, "c1@h"))
        let outcome = try await router.handlePush(push("c1@h", uuid: UUID()))
        #expect(outcome == .alreadyReported(CallIdentity.uuid(sipCallID: "c1@h")))
        #expect(provider.reportedCalls.count == 1)
    }

    @Test("An INVITE that arrives while the push's report is still under way joins it")
    func inviteOvertakesReport() async throws {
        provider.closeGate()
        let router = router
        let pushed = Task { try await router.handlePush(push("c1@h")) }
        try await provider.arrivals.wait("push report entered") { $0.count == 1 }
        let call = Call(slot: 0, generation: 10)
        await router.handle(invite(call, "c1@h"))
        #expect(engine.records == [.answer(call, 180)])
        provider.openGate()
        #expect(try await pushed.value == .reportedNewCall(CallIdentity.uuid(sipCallID: "c1@h")))
        #expect(provider.reportedCalls.count == 1)
        #expect(provider.arrivals.records.count == 1)
    }

    @Test("A call cancelled while its push's report is under way is reported ended after the report")
    func cancelDuringReport() async throws {
        provider.closeGate()
        let router = router
        let pushed = Task { try await router.handlePush(push("c1@h")) }
        try await provider.arrivals.wait("push report entered") { $0.count == 1 }
        let call = Call(slot: 0, generation: 10)
        await router.handle(invite(call, "c1@h"))
        await router.handle(state(call, .disconnected, "c1@h", 487))
        #expect(provider.records.isEmpty)
        provider.openGate()
        let id = CallIdentity.uuid(sipCallID: "c1@h")
        #expect(try await pushed.value == .reportedNewCall(id))
        #expect(provider.records == [.newIncomingCall(id, CallUpdate(remoteURI: alice.uri)), .ended(id, .unanswered)])
        #expect(await router.calls.isEmpty)
    }

    @Test("A push that comes after its call ended is not a new call, until the TTL forgets the Call-ID")
    func latePush() async throws {
        let call = Call(slot: 0, generation: 10)
        await router.handle(invite(call, "c1@h"))
        await router.handle(state(call, .disconnected, "c1@h", 487))
        let id = CallIdentity.uuid(sipCallID: "c1@h")
        #expect(try await router.handlePush(push("c1@h")) == .alreadyEnded(id))
        #expect(router.claimCallUUID(for: IncomingCallPush(serverUUID: UUID(), sipCallID: "c1@h", caller: alice)) == id)
        #expect(provider.reportedCalls == [id])
        clock.advance(by: .seconds(29))
        #expect(try await router.handlePush(push("c1@h")) == .alreadyEnded(id))
        clock.advance(by: .seconds(1))
        // Forgotten: the same Call-ID again is a new call.
        #expect(try await router.handlePush(push("c1@h")) == .reportedNewCall(id))
        #expect(provider.reportedCalls == [id, id])
    }

    @Test("PushKit's synchronous claim: an INVITE that overtakes the push joins the claimed UUID")
    func claimBeforeInvite() async throws {
        let server = UUID()
        let claimed = router.claimCallUUID(for: IncomingCallPush(serverUUID: server, sipCallID: "c1@h", caller: alice))
        #expect(claimed == server)
        let call = Call(slot: 0, generation: 10)
        await router.handle(invite(call, "c1@h"))
        #expect(provider.reportedCalls == [server])
        let pinned = IncomingCallPush(serverUUID: claimed, sipCallID: "c1@h", caller: alice, accountHint: "bob")
        #expect(try await router.handlePush(.incomingCall(pinned)) == .alreadyReported(server))
        #expect(provider.reportedCalls == [server])
    }

    @Test("PushKit's synchronous claim after the INVITE returns the INVITE's UUID, not the server's")
    func claimAfterInvite() async throws {
        await router.handle(invite(Call(slot: 0, generation: 10), "c1@h"))
        let claimed = router.claimCallUUID(for: IncomingCallPush(serverUUID: UUID(), sipCallID: "c1@h", caller: alice))
        #expect(claimed == CallIdentity.uuid(sipCallID: "c1@h"))
    }

    @Test("The user answers before the INVITE: 200 goes out when it arrives, fulfilled once it is sent")
    func answerBeforeInvite() async throws {
        guard case .reportedNewCall(let id) = try await router.handlePush(push("c1@h")) else {
            Issue.record("not reported")
            return
        }
        let answer = CallAction(callUUID: id, kind: .answer)
        await router.perform(answer)
        #expect(engine.records.isEmpty)
        let call = Call(slot: 0, generation: 10)
        await router.handle(invite(call, "c1@h"))
        #expect(engine.records == [.answer(call, 200)])
        // The 200 is out: fulfilled now, not at the ACK (CONNECTING, CONFIRMED come later).
        #expect(provider.records.last == .fulfilled(answer.id))
        await router.handle(state(call, .connecting, "c1@h"))
        await router.handle(state(call, .confirmed, "c1@h"))
        #expect(provider.records.filter { $0 == .fulfilled(answer.id) }.count == 1)
        #expect(!engine.records.contains(.activateAudio))
        await router.handle(state(call, .disconnected, "c1@h", 200))
        #expect(provider.records.last == .ended(id, .remoteEnded))
        #expect(provider.reportedCalls == [id])
    }

    @Test(
        "A call the engine ended for a vanished peer (media timeout, lost connection) ends failed, not remote-ended",
        arguments: [PJSUA.mediaTimeoutReason, PJSUA.transportLostReason])
    func vanishedPeerEndsFailed(reason: String) async throws {
        let call = Call(slot: 0, generation: 10)
        await router.handle(invite(call, "c1@h"))
        let id = CallIdentity.uuid(sipCallID: "c1@h")
        await router.handle(state(call, .confirmed, "c1@h"))
        await router.handle(
            .callState(
                CallStateChange(call: call, state: .disconnected, sipCallID: "c1@h", statusCode: 200, reason: reason)))
        #expect(provider.records.last == .ended(id, .failed))
    }

    @Test(
        """
        A call that reconnects keeps its UUID: reconnecting and reconnected are reported for it, no new call and no \
        end; a second episode and its end while reconnecting too
        """
    )
    func reconnectionKeepsTheUUID() async throws {
        let call = Call(slot: 0, generation: 10)
        await router.handle(invite(call, "c1@h"))
        let id = CallIdentity.uuid(sipCallID: "c1@h")
        await router.handle(state(call, .confirmed, "c1@h"))
        let before = provider.records.count
        func reconnection(_ phase: CallReconnection.Phase) -> PJSUAEvent {
            .reconnection(CallReconnection(call: call, phase: phase))
        }
        await router.handle(reconnection(.reconnecting(.networkChange)))
        // Still the one call, under its UUID, while it reconnects.
        #expect(await router.calls.map(\.id) == [id])
        #expect(await router.calls.map(\.call) == [call])
        await router.handle(reconnection(.reconnected))
        await router.handle(reconnection(.reconnecting(.transportLoss)))
        await router.handle(reconnection(.failed(statusCode: 488)))
        await router.handle(reconnection(.reconnecting(.transportLoss)))
        await router.handle(
            .callState(
                CallStateChange(
                    call: call, state: .disconnected, sipCallID: "c1@h", statusCode: 200,
                    reason: PJSUA.transportLostReason)))
        let records = Array(provider.records.dropFirst(before))
        #expect(
            records == [
                .reconnecting(id), .reconnected(id), .reconnecting(id), .reconnectionFailed(id), .reconnecting(id),
                .ended(id, .failed),
            ], "\(records)")
        #expect(provider.reportedCalls == [id])
    }

    @Test("A push whose INVITE never comes ends unanswered when its TTL runs out (manual clock)")
    func pushExpires() async throws {
        let outcome = try await router.handlePush(push(nil))
        guard case .reportedNewCall(let id) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(29))
        #expect(await router.calls.count == 1)
        clock.advance(by: .seconds(1))
        try await provider.wait(for: .ended(id, .unanswered))
        #expect(await router.calls.isEmpty)
        #expect(provider.reportedCalls == [id])
        // An action on the expired call fails; ending it is already done.
        let answer = CallAction(callUUID: id, kind: .answer)
        await router.perform(answer)
        #expect(provider.records.last == .failed(answer.id, .unknownCall(id)))
    }

    @Test("The INVITE cancels the expiry: a call that arrived is not expired")
    func inviteStopsExpiry() async throws {
        _ = try await router.handlePush(push("c1@h"))
        await clock.waitForSleepers(1)
        await router.handle(invite(Call(slot: 0, generation: 10), "c1@h"))
        #expect(clock.sleeperCount == 0)
        clock.advance(by: .seconds(60))
        #expect(await router.calls.count == 1)
        #expect(!provider.records.contains { if case .ended = $0 { true } else { false } })
    }

    @Test("A push without a Call-ID reconciles with the next INVITE for its account")
    func pushWithoutCallID() async throws {
        guard case .reportedNewCall(let id) = try await router.handlePush(push(nil)) else { return }
        let call = Call(slot: 0, generation: 10)
        await router.handle(invite(call, "whatever-the-server-chose@h"))
        #expect(provider.reportedCalls == [id])
        #expect(await router.calls.first?.sipCallID == "whatever-the-server-chose@h")
    }

    @Test("A push without a Call-ID but with the server's UUID matches the INVITE carrying that UUID")
    func serverUUIDHeader() async throws {
        let server = UUID()
        let other = UUID()
        _ = try await router.handlePush(push(nil, uuid: other))
        #expect(try await router.handlePush(push(nil, uuid: server)) == .reportedNewCall(server))
        let call = Call(slot: 0, generation: 10)
        // Not the oldest push for the account: the header names the second one.
        await router.handle(invite(call, "c1@h", headers: [SIPHeader(name: "X-Call-UUID", value: server.uuidString)]))
        #expect(await router.calls.first { $0.call == call }?.id == server)
        #expect(provider.reportedCalls == [other, server])
    }

    @Test("Declined before the INVITE: fulfilled at once, the INVITE gets 603, nothing more is reported")
    func declineBeforeInvite() async throws {
        guard case .reportedNewCall(let id) = try await router.handlePush(push("c1@h")) else { return }
        let end = CallAction(callUUID: id, kind: .end)
        await router.perform(end)
        #expect(provider.records.last == .fulfilled(end.id))
        let call = Call(slot: 0, generation: 10)
        await router.handle(invite(call, "c1@h"))
        #expect(engine.records == [.hangup(call, 603)])
        await router.handle(state(call, .disconnected, "c1@h", 603))
        #expect(provider.records.count == 2)
        #expect(await router.calls.isEmpty)
    }

    @Test("A call the system refuses is declined with 486")
    func systemRefuses() async throws {
        provider.refuseNewCalls()
        let call = Call(slot: 0, generation: 10)
        await router.handle(invite(call, "c1@h"))
        #expect(engine.records == [.answer(call, 180), .hangup(call, 486)])
        #expect(await router.calls.isEmpty)
        let outcome = try await router.handlePush(push("c2@h"))
        #expect(outcome == .rejectedBySystem(CallIdentity.uuid(sipCallID: "c2@h")))
        let second = Call(slot: 1, generation: 11)
        await router.handle(invite(second, "c2@h"))
        #expect(engine.records.last == .hangup(second, 486))
    }

    @Test("Ending a live call hangs up; the action is fulfilled when the call has ended, with no end report")
    func endLiveCall() async throws {
        let call = Call(slot: 0, generation: 10)
        await router.handle(invite(call, "c1@h"))
        let id = CallIdentity.uuid(sipCallID: "c1@h")
        let end = CallAction(callUUID: id, kind: .end)
        await router.perform(end)
        #expect(engine.records.last == .hangup(call, nil))
        #expect(!provider.records.contains(.fulfilled(end.id)))
        await router.handle(state(call, .disconnected, "c1@h", 603))
        #expect(provider.records.last == .fulfilled(end.id))
        #expect(!provider.records.contains { if case .ended = $0 { true } else { false } })
    }

    @Test(
        """
        A call replaced by an INVITE with Replaces keeps its UUID: an update with the new far end, no new call, no end \
        report
        """
    )
    func replacedCallCarriesOn() async throws {
        let old = Call(slot: 0, generation: 10)
        await router.handle(invite(old, "c1@h"))
        let id = CallIdentity.uuid(sipCallID: "c1@h")
        let answer = CallAction(callUUID: id, kind: .answer)
        await router.perform(answer)
        await router.handle(state(old, .confirmed, "c1@h"))
        #expect(provider.records.contains(.fulfilled(answer.id)))
        let answersBefore = engine.records

        // What the engine reports for a replacement it answered itself.
        let new = Call(slot: 1, generation: 11)
        let carol = SIPAddress(displayName: "Carol", uri: "sip:carol@example.com")
        await router.handle(
            .incomingCall(
                IncomingCall(
                    account: account, call: new, sipCallID: "c2@h", from: carol, offeredVideo: false, replaces: old)))
        await router.handle(state(new, .incoming, "c2@h", 0))
        await router.handle(.callReplaced(CallReplacement(call: old, replacement: new)))
        await router.handle(state(new, .connecting, "c2@h"))
        await router.handle(state(old, .disconnected, "c1@h", 200))
        await router.handle(state(new, .confirmed, "c2@h"))

        #expect(provider.reportedCalls == [id])
        #expect(provider.records.last == .updated(id, CallUpdate(remoteURI: carol.uri, displayName: "Carol")))
        #expect(!provider.records.contains { if case .ended = $0 { true } else { false } })
        // pjsua answered the replacement: the router neither rings nor answers it.
        #expect(engine.records == answersBefore)
        #expect(await router.calls.map(\.call) == [new])
        #expect(await router.calls.first?.sipCallID == "c2@h")

        // The call UI's end acts on the new call; a late push for the old Call-ID is no new call.
        let end = CallAction(callUUID: id, kind: .end)
        await router.perform(end)
        #expect(engine.records.last == .hangup(new, nil))
        await router.handle(state(new, .disconnected, "c2@h", 200))
        #expect(provider.records.last == .fulfilled(end.id))
        #expect(try await router.handlePush(push("c1@h")) == .alreadyEnded(id))
        #expect(provider.reportedCalls == [id])
    }

    @Test("A replacement for a call the router does not know is reported as a new call")
    func replacementOfUnknownCall() async throws {
        let new = Call(slot: 1, generation: 11)
        await router.handle(
            .incomingCall(
                IncomingCall(
                    account: account, call: new, sipCallID: "c2@h", from: alice, offeredVideo: false,
                    replaces: Call(slot: 0, generation: 3))))
        #expect(provider.reportedCalls == [CallIdentity.uuid(sipCallID: "c2@h")])
        #expect(await router.calls.map(\.call) == [new])
    }

    @Test(
        "Outgoing: start fulfilled once the INVITE is out, connecting at the first provisional, connected at CONFIRMED")
    func outgoing() async throws {
        let id = UUID()
        let start = CallAction(callUUID: id, kind: .start(uri: "sip:carol@example.com", account: nil, hasVideo: false))
        await router.perform(start)
        guard case .makeCall("sip:carol@example.com") = engine.records.first else {
            Issue.record("\(engine.records)")
            return
        }
        // makeCall returned: the INVITE is out, and CallKit may activate the audio session.
        #expect(provider.records == [.fulfilled(start.id)])
        let call = try #require(await router.calls.first?.call)
        await router.handle(state(call, .calling, "out@h", 0))
        #expect(provider.records == [.fulfilled(start.id)])
        await router.handle(state(call, .early, "out@h", 180))
        #expect(provider.records == [.fulfilled(start.id), .startedConnecting(id)])
        await router.handle(state(call, .early, "out@h", 183))
        await router.handle(state(call, .connecting, "out@h", 200))
        #expect(provider.records == [.fulfilled(start.id), .startedConnecting(id)])
        await router.handle(state(call, .confirmed, "out@h", 200))
        #expect(provider.records == [.fulfilled(start.id), .startedConnecting(id), .connected(id)])
        #expect(await router.calls.first?.sipCallID == "out@h")
        #expect(!engine.records.contains(.activateAudio))
        await router.handle(state(call, .disconnected, "out@h", 200))
        #expect(provider.records.last == .ended(id, .remoteEnded))
    }

    @Test("Outgoing: events that arrive before makeCall returns are replayed in order, not lost")
    func outgoingEarlyEvents() async throws {
        let router = router
        engine.onMakeCall { call in
            await router.handle(
                .callState(CallStateChange(call: call, state: .calling, sipCallID: "fast@h", statusCode: 0, reason: ""))
            )
            await router.handle(
                .callState(CallStateChange(call: call, state: .early, sipCallID: "fast@h", statusCode: 180, reason: ""))
            )
            await router.handle(
                .callState(
                    CallStateChange(call: call, state: .confirmed, sipCallID: "fast@h", statusCode: 200, reason: "")))
        }
        let id = UUID()
        let start = CallAction(callUUID: id, kind: .start(uri: "sip:fast@example.com", account: nil, hasVideo: false))
        await router.perform(start)
        // Fulfilled first (makeCall returned), then the progress that beat its return, in order.
        #expect(provider.records == [.fulfilled(start.id), .startedConnecting(id), .connected(id)])
        #expect(await router.calls.first?.sipCallID == "fast@h")
    }

    @Test(
        "An outgoing call that fails after its start was fulfilled is reported ended with its reason",
        arguments: [
            (486, CallEndReason.remoteEnded), (603, .remoteEnded), (487, .unanswered), (404, .failed),
            (503, .failed), (408, .failed),
        ])
    func outgoingFailsAfterStart(status: Int, reason: CallEndReason) async throws {
        let id = UUID()
        let start = CallAction(callUUID: id, kind: .start(uri: "sip:carol@example.com", account: nil, hasVideo: false))
        await router.perform(start)
        let call = try #require(await router.calls.first?.call)
        await router.handle(state(call, .early, "out@h", 180))
        await router.handle(state(call, .disconnected, "out@h", status))
        #expect(provider.records == [.fulfilled(start.id), .startedConnecting(id), .ended(id, reason)])
        #expect(await router.calls.isEmpty)
    }

    @Test("A start action whose placing throws fails, and nothing is left of the call")
    func startFailsWhenPlacingThrows() async throws {
        engine.failEvery(.makeCall, with: PJSUAUsageError.invalidURI("sip:"))
        let id = UUID()
        let start = CallAction(callUUID: id, kind: .start(uri: "sip:carol@example.com", account: nil, hasVideo: false))
        await router.perform(start)
        #expect(
            provider.records == [.failed(start.id, .engine(String(describing: PJSUAUsageError.invalidURI("sip:"))))])
        #expect(await router.calls.isEmpty)
        // The UUID is free again: a second attempt that succeeds is fulfilled.
        engine.stopFailing(.makeCall)
        let again = CallAction(callUUID: id, kind: .start(uri: "sip:carol@example.com", account: nil, hasVideo: false))
        await router.perform(again)
        #expect(provider.records.last == .fulfilled(again.id))
    }

    @Test("Answer: fulfilled once the 200 is sent, before the ACK; a second answer fails; a later failure is an end")
    func answerFulfilledWhenSent() async throws {
        let call = Call(slot: 0, generation: 10)
        await router.handle(invite(call, "c1@h"))
        let id = CallIdentity.uuid(sipCallID: "c1@h")
        let answer = CallAction(callUUID: id, kind: .answer)
        await router.perform(answer)
        #expect(engine.records == [.answer(call, 180), .answer(call, 200)])
        #expect(provider.records.last == .fulfilled(answer.id))
        let again = CallAction(callUUID: id, kind: .answer)
        await router.perform(again)
        #expect(provider.records.last == .failed(again.id, .invalidState))
        #expect(engine.records.count == 2)
        // The ACK never comes: pjsua ends the call 408 after it was answered.
        await router.handle(state(call, .connecting, "c1@h"))
        await router.handle(state(call, .disconnected, "c1@h", 408))
        #expect(provider.records.last == .ended(id, .failed))
        #expect(!provider.records.contains { if case .failed(answer.id, _) = $0 { true } else { false } })
    }

    @Test("Hold is fulfilled when the media state shows local hold, resume when it is active again")
    func hold() async throws {
        let call = Call(slot: 0, generation: 10)
        await router.handle(invite(call, "c1@h"))
        let id = CallIdentity.uuid(sipCallID: "c1@h")
        let hold = CallAction(callUUID: id, kind: .hold(true))
        await router.perform(hold)
        #expect(engine.records.last == .hold(call, true))
        let audio = { (status: MediaStatus) in
            PJSUAEvent.callMediaState(
                CallMediaChange(
                    call: call, media: [MediaStream(index: 0, type: .audio, status: status, direction: .sendReceive)]))
        }
        await router.handle(audio(.active))
        #expect(!provider.records.contains(.fulfilled(hold.id)))
        await router.handle(audio(.localHold))
        #expect(provider.records.last == .fulfilled(hold.id))
        let resume = CallAction(callUUID: id, kind: .hold(false))
        await router.perform(resume)
        await router.handle(audio(.active))
        #expect(provider.records.last == .fulfilled(resume.id))
    }

    @Test("Mute, DTMF and group reach the engine and are fulfilled; bad digits fail")
    func muteDTMFGroup() async throws {
        let first = Call(slot: 0, generation: 10)
        let second = Call(slot: 1, generation: 11)
        await router.handle(invite(first, "c1@h"))
        await router.handle(invite(second, "c2@h"))
        let a = CallIdentity.uuid(sipCallID: "c1@h")
        let b = CallIdentity.uuid(sipCallID: "c2@h")
        let actions = [
            CallAction(callUUID: a, kind: .mute(true)),
            CallAction(callUUID: a, kind: .playDTMF("12#*A")),
            CallAction(callUUID: a, kind: .group(with: b)),
            CallAction(callUUID: a, kind: .group(with: nil)),
        ]
        for action in actions { await router.perform(action) }
        #expect(
            engine.records.suffix(4) == [
                .mute(first, true), .dtmf(first, "12#*A"), .conference(first, second, true),
                .conference(first, second, false),
            ])
        #expect(provider.records.suffix(4) == actions.map { .fulfilled($0.id) })
        let bad = CallAction(callUUID: a, kind: .playDTMF("1x"))
        await router.perform(bad)
        #expect(provider.records.last == .failed(bad.id, .invalidState))
    }

    @Test("The sound device follows the audio session's signals and nothing else")
    func audioRule() async throws {
        let call = Call(slot: 0, generation: 10)
        await router.handle(invite(call, "c1@h"))
        let id = CallIdentity.uuid(sipCallID: "c1@h")
        await router.perform(CallAction(callUUID: id, kind: .answer))
        await router.handle(state(call, .confirmed, "c1@h"))
        await router.perform(CallAction(callUUID: UUID(), kind: .start(uri: "sip:x@y", account: nil, hasVideo: false)))
        #expect(!engine.records.contains(.activateAudio))
        try await router.audioSessionDidActivate()
        #expect(await router.isAudioSessionActive)
        try await router.audioSessionDidDeactivate()
        #expect(
            engine.records.filter { $0 == .activateAudio || $0 == .deactivateAudio } == [
                .activateAudio, .deactivateAudio,
            ])
    }

    @Test("A re-register push re-registers the bound account; an unknown hint throws")
    func reRegister() async throws {
        #expect(try await router.handlePush(.reRegister(accountHint: "bob")) == .reRegistered(account))
        #expect(engine.records == [.reRegister(account)])
        await #expect(throws: CallRouterError.unknownAccountHint("nobody")) {
            try await router.handlePush(.reRegister(accountHint: "nobody"))
        }
    }
}
