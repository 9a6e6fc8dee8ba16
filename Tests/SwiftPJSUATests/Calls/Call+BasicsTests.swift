import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Calls placed and answered against sipp and the engine itself: states, Call-IDs, headers,
/// limits, and the per-call event stream.
extension EngineTests {
    @Test("Outgoing call to sipp's UAS runs CALLING → EARLY → CONNECTING → CONFIRMED → DISCONNECTED")
    func outgoingCallToSippUAS() async throws {
        try await withSipp(scenario: "uas") { sipp in
            try await EngineHarness.run { h in
                let call = try await h.confirmedCall(to: sipp.uri)
                let info = try await h.engine.callInfo(call)
                #expect(info.role == .caller)
                #expect(info.state == .confirmed)
                #expect(info.statusCode == 200)
                #expect(info.remote.uri.contains("127.0.0.1:\(sipp.port)"))
                try await h.hangUp(call)
                #expect(h.log.states(of: call) == [.calling, .early, .connecting, .confirmed, .disconnected])
            }
            let result = try await sipp.expectFinished(exitStatus: 0)
            #expect(result.failedCalls == 0, "\(result)")
            #expect(sipp.receivedRequests.contains("BYE"))
        }
    }

    @Test("Incoming call from sipp's UAC carries its Call-ID, is answered 200 and ended by sipp's BYE")
    func incomingCallFromSippUAC() async throws {
        try await EngineHarness.run { h in
            let sipp = try await h.sippCaller("uac")
            let incoming = try await h.log.incoming()
            let call = incoming.call
            #expect(incoming.account == h.account)
            #expect(!incoming.offeredVideo)
            try await h.engine.answer(call, statusCode: 200)
            let events = try await h.log.wait("DISCONNECTED") { $0.contains { $0.isState(.disconnected, of: call) } }
            try await sipp.expectFinished(exitStatus: 0)
            #expect(sipp.sentInviteCallIDs == [incoming.sipCallID], "\(sipp.messages.prefix(600))")
            #expect(h.log.states(of: call).first == .incoming)
            #expect(h.log.states(of: call).suffix(2) == [.confirmed, .disconnected])
            #expect(events.filter { $0.isState(.disconnected, of: call) }.count == 1)
            #expect(sipp.receivedStatusCodes.contains(200))
        }
    }

    @Test("Incoming call rejected with 486: sipp sees 486")
    func incomingCallRejected() async throws {
        try await EngineHarness.run { h in
            let sipp = try await h.sippCaller("uac_expect_486.xml")
            let call = try await h.log.incoming().call
            try await h.engine.answer(call, statusCode: 486)
            let end = try await h.log.first("DISCONNECTED") { $0.isState(.disconnected, of: call) }
            #expect(end.finalStatus == 486)
            try await sipp.expectFinished()
            #expect(sipp.receivedStatusCodes.last == 486)
        }
    }

    @Test("A From display-name with escaped quotes and UTF-8 comes through exactly")
    func displayNameIsExact() async throws {
        try await EngineHarness.run { h in
            let sipp = try await h.sippCaller("uac_display_name.xml")
            let incoming = try await h.log.incoming()
            #expect(incoming.from.displayName == "Zoë \"Z\" Tester 測試")
            #expect(incoming.from.uri == "sip:alice@example.com")
            let info = try await h.engine.callInfo(incoming.call)
            #expect(info.remote.displayName == "Zoë \"Z\" Tester 測試")
            try await h.engine.answer(incoming.call, statusCode: 486)
            try await sipp.expectFinished()
        }
    }
}

extension EngineTests {
    @Test(
        """
        Custom headers: incomingCall lists the INVITE's X- and P-Asserted-Identity headers; make/answer/hangup send \
        ours
        """
    )
    func customHeaders() async throws {
        try await withSipp(scenario: "uas") { uas in
            try await EngineHarness.run { h in
                let sipp = try await h.sippCaller("uac_headers.xml")
                let incoming = try await h.log.incoming()
                let call = incoming.call
                let headers = incoming.headers
                #expect(headers.value(of: "x-campaign") == "spring-7")
                #expect(headers.value(of: "P-Asserted-Identity") == "\"Alice Example\" <sip:alice@example.com>")
                #expect(headers.contains { $0.name == "Call-ID" })
                await #expect(throws: PJSUAUsageError.invalidHeader("X-Bad: a\r\nInjected: 1")) {
                    try await h.engine.answer(call, headers: [SIPHeader(name: "X-Bad", value: "a\r\nInjected: 1")])
                }
                // Headers pjsip writes itself cannot be added a second time, in any spelling.
                for name in ["CSeq", "call-id", "Via", "i", "Content-Length"] {
                    await #expect(throws: PJSUAUsageError.invalidHeader("\(name): 99 BYE")) {
                        try await h.engine.answer(call, headers: [SIPHeader(name: name, value: "99 BYE")])
                    }
                }
                try await h.engine.answer(call, headers: [SIPHeader(name: "X-Answered-By", value: "engine")])
                try await h.log.first("confirmed") { $0.isState(.confirmed, of: call) }
                try await h.engine.hangup(call, headers: [SIPHeader(name: "X-Hangup-Cause", value: "test done")])
                try await h.log.first("ended") { $0.isState(.disconnected, of: call) }
                try await sipp.expectFinished()
                #expect(sipp.received("SIP/2.0 200")?.header("X-Answered-By") == "engine")
                #expect(sipp.received("BYE")?.header("X-Hangup-Cause") == "test done")

                let outgoing = try await h.engine.makeCall(
                    to: uas.uri, from: h.account, headers: [SIPHeader(name: "X-Campaign", value: "outbound-3")])
                try await h.log.first("outgoing confirmed") { $0.isState(.confirmed, of: outgoing) }
                try await h.hangUp(outgoing)
            }
            _ = try await uas.finish()
            #expect(uas.received("INVITE")?.header("X-Campaign") == "outbound-3")
        }
    }

    @Test("32 concurrent calls from sipp (-l 32) are up together; ending one leaves the other 31 up")
    func thirtyTwoConcurrentCalls() async throws {
        // 32 INVITEs from one source in half a second, all ringing at once: past the default limits.
        try await EngineHarness.run(maxCalls: 40, limits: .unlimited) { h in
            // Answer every incoming call as it arrives.
            let answering = Task {
                for await event in h.engine.events {
                    if let call = event.incomingCall { try? await h.engine.answer(call) }
                }
            }
            defer { answering.cancel() }
            let sipp = try await h.sippCaller("uac", calls: 32, extra: ["-l", "32", "-r", "64", "-d", "2500"])
            // All 32 confirmed at the same time: no call ended before the 32nd was up.
            let events = try await h.log.wait("32 calls up at once", timeout: .seconds(15)) { events in
                let confirmed = events.filter { $0.isState(.confirmed) }.count
                let ended = events.filter { $0.isState(.disconnected) }.count
                return confirmed >= 32 && ended == 0
            }
            let calls = Set(events.compactMap(\.incomingCall))
            #expect(calls.count == 32)
            #expect(try await h.engine.activeCalls().count == 32)
            var callIDs: Set<String> = []
            for call in calls {
                let info = try await h.engine.callInfo(call)
                #expect(info.state == .confirmed)
                callIDs.insert(info.sipCallID)
            }
            // Independent: ending one call leaves the other 31 confirmed.
            let ended = try #require(calls.min { $0.generation < $1.generation })
            try await h.hangUp(ended)
            for call in calls where call != ended {
                #expect(try await h.engine.callInfo(call).state == .confirmed)
            }
            try await h.log.wait("all 32 ended", timeout: .seconds(15)) { events in
                events.filter { $0.isState(.disconnected) }.count >= 32
            }
            let result = try await sipp.finish()
            // sipp's scenario did not expect our BYE on that one call.
            #expect(result.successfulCalls == 31, "\(result)")
            #expect(result.failedCalls == 1, "\(result)")
            #expect(Set(sipp.sentInviteCallIDs) == callIDs)
            // Each call ended once; the other 31 by sipp's own BYE.
            for call in calls { #expect(h.log.states(of: call).filter { $0 == .disconnected }.count == 1) }
            #expect(sipp.receivedRequests.filter { $0 == "BYE" }.count == 1)
        }
    }

    @Test("Beyond maxCalls: an incoming INVITE gets 486 with no incomingCall event, and makeCall throws tooMany")
    func callLimit() async throws {
        try await withSipp(scenario: "uas") { uas in
            try await EngineHarness.run(maxCalls: 1) { h in
                let call = try await h.confirmedCall(to: uas.uri)
                let busy = try await h.sippCaller("uac_expect_486.xml")
                try await busy.expectFinished()
                #expect(busy.receivedStatusCodes.last == 486)
                #expect(!h.log.events.contains { $0.incomingCall != nil })
                do {
                    _ = try await h.engine.makeCall(to: uas.uri, from: h.account)
                    Issue.record("makeCall beyond the limit did not throw")
                } catch let error as PJSUAError {
                    #expect(error.code == .tooMany, "\(error)")
                }
                #expect(try await h.engine.activeCalls() == [call])
                try await h.hangUp(call)
            }
        }
    }
}

extension EngineTests {
    @Test("events(for:) starts with the call's incomingCall, latest state and media, then follows it to its end")
    func callEventsReplaySnapshot() async throws {
        try await EngineHarness.run { h in
            let (caller, callee) = try await h.selfCall()
            // Subscribed long after INCOMING: the stream still begins with it.
            var iterator = h.engine.events(for: callee).makeAsyncIterator()
            let first = await iterator.next()
            let second = await iterator.next()
            let third = await iterator.next()
            guard case .incomingCall(let incoming) = first else {
                Issue.record("first replayed event: \(String(describing: first))")
                return
            }
            #expect(incoming.call == callee && incoming.account == h.account)
            guard case .callState(let state) = second, case .callMediaState(let media) = third else {
                Issue.record("replayed: \(String(describing: second)), \(String(describing: third))")
                return
            }
            #expect(state.call == callee && state.state == .confirmed)
            #expect(media.call == callee && media.media.contains { $0.type == .audio && $0.status == .active })
            // Then the live events, with no repeat of the snapshot, to the one terminal event.
            try await h.engine.hangup(caller)
            var rest: [PJSUAEvent] = []
            while let event = await iterator.next() { rest.append(event) }
            #expect(rest.last?.isState(.disconnected, of: callee) == true, "\(rest)")
            #expect(rest.filter { $0.isState(.confirmed) }.isEmpty, "\(rest)")
            #expect(!rest.contains { if case .incomingCall = $0 { true } else { false } }, "\(rest)")
            // An ended call's stream finishes at once, empty.
            var ended = h.engine.events(for: callee).makeAsyncIterator()
            #expect(await ended.next() == nil)
        }
    }

    @Test("placeCall(to:from:headers:) puts the headers on the INVITE and streams the call from CALLING to its end")
    func placeCallWithHeaders() async throws {
        try await EngineHarness.run { h in
            let outgoing = try await h.engine.placeCall(
                to: h.uri("desk"), from: h.account, headers: [SIPHeader(name: "X-Campaign", value: "7")])
            let incoming = try await h.log.incoming()
            #expect(incoming.headers.value(of: "X-Campaign") == "7")
            try await h.engine.answer(incoming.call, statusCode: 486)
            var states: [CallState] = []
            for await event in outgoing.events {
                if case .callState(let change) = event {
                    #expect(change.call == outgoing.call)
                    states.append(change.state)
                }
            }
            #expect(states.first == .calling && states.last == .disconnected, "\(states)")
            // call(_:from:headers:awaiting:) takes headers too, and throws the rejection.
            let log = h.log
            let engine = h.engine
            let rejecter = Task {
                let second = try await log.first("second incoming call") {
                    if case .incomingCall(let next) = $0 { next.call != incoming.call } else { false }
                }
                guard case .incomingCall(let next) = second else { return "" }
                try await engine.answer(next.call, statusCode: 486)
                return next.headers.value(of: "X-Try") ?? ""
            }
            let error = try await #require(throws: CallFailedError.self) {
                try await h.engine.call(h.uri("busy"), from: h.account, headers: [SIPHeader(name: "X-Try", value: "2")])
            }
            #expect(try await rejecter.value == "2")
            #expect(error.statusCode == 486)
            #expect(error.localizedDescription == "\(error.call) failed: 486 \(error.reason)", "\(error)")
        }
    }

    @Test("Headers pjsip cannot parse are refused before they go out; integer literals pick the current hangup")
    func unparseableHeadersRefused() async throws {
        try await EngineHarness.run { h in
            for header in [
                SIPHeader(name: "Expires", value: "not-a-number"), SIPHeader(name: "Max-Forwards", value: "many"),
            ] {
                await #expect(throws: PJSUAUsageError.invalidHeader("\(header.name): \(header.value)")) {
                    try await h.engine.placeCall(to: h.uri("x"), from: h.account, headers: [header])
                }
            }
            // Well-formed ones of the same headers still go out.
            let outgoing = try await h.engine.placeCall(
                to: h.uri("x"), from: h.account, headers: [SIPHeader(name: "Expires", value: "60")])
            let incoming = try await h.log.incoming()
            #expect(incoming.headers.value(of: "Expires") == "60")
            try await h.engine.hangup(incoming.call, statusCode: 486)  // the Int? form, no deprecation warning
            for await _ in outgoing.events {}
            await #expect(throws: PJSUAUsageError.invalidArgument("a DTMF digit lasts 1 ms to 10 s, not 20.0 seconds"))
            {
                try await h.engine.sendDTMF(outgoing.call, digits: "1", duration: .seconds(20))
            }
        }
    }
}

extension EngineTests {
    @Test("An outgoing INVITE offers one audio stream and nothing else: no video, no real-time text")
    func inviteOffersAudioOnly() async throws {
        try await withSipp(scenario: "uas_answer_after_80ms.xml") { sipp in
            try await EngineHarness.run { h in
                let call = try await h.confirmedCall(to: sipp.uri)
                let media = try await h.engine.callInfo(call).media
                #expect(media.map(\.type) == [.audio], "\(media)")
                try await h.hangUp(call)
            }
            _ = try await sipp.finish()
            let mediaLines = try #require(sipp.received("INVITE")).lines.filter { $0.hasPrefix("m=") }
            #expect(mediaLines.count == 1, "\(mediaLines)")
            #expect(mediaLines.first?.hasPrefix("m=audio ") == true, "\(mediaLines)")
        }
    }

    @Test("A hung-up self-call: both legs report DISCONNECTED within 50 ms of the hang-up")
    func hangupReachesBothLegsQuickly() async throws {
        try await EngineHarness.run { h in
            let stamped = Journal<TimestampedEvent>()
            let stream = h.engine.timestampedEvents
            let collector = Task { for await event in stream { stamped.append(event) } }
            defer { collector.cancel() }
            let (caller, callee) = try await h.selfCall()
            let hungUp = ContinuousClock.now
            try await h.engine.hangup(caller)
            let isEnd: @Sendable (TimestampedEvent, Call) -> Bool = { stamped, leg in
                if case .callState(let change) = stamped.event, change.call == leg, change.state == .disconnected {
                    true
                } else {
                    false
                }
            }
            let records = try await stamped.wait("both legs DISCONNECTED") { records in
                records.contains { isEnd($0, caller) } && records.contains { isEnd($0, callee) }
            }
            for leg in [caller, callee] {
                let ended = try #require(records.first { isEnd($0, leg) })
                #expect(ended.raisedAt - hungUp < .milliseconds(50), "\(leg): \(ended.raisedAt - hungUp)")
            }
        }
    }
}
