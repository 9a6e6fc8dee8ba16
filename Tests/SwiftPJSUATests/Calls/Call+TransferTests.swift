import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

// Issue 15, items 2 and 3: every REFER the engine sends resolves exactly once, before its
// call's terminal event, and a REFER answered after its call ended invents no call.

/// Where the late answer of an ended call's REFER lands.
enum LateREFERAnswerCase: String, CaseIterable, Sendable {
    /// No call holds the ended call's slot (pjsua used to mint a phantom call for it).
    case freedSlot
    /// A second call holds the slot (pjsua used to report the answer as that call's).
    case reusedSlot
    /// A second call holds the slot and waits for its own REFER's outcome.
    case reusedSlotWithItsOwnREFER
}

extension EngineTests {
    /// The transferee answers the REFER (202, then the final NOTIFY) 1.5 s after the engine
    /// hung up; with `maxCalls: 1` a second call is in the same slot by then.
    @Test(
        """
        A REFER answered after BYE: one final transferStatus (487) before DISCONNECTED, no phantom call, none for a \
        call in the reused slot
        """,
        arguments: LateREFERAnswerCase.allCases)
    func lateREFERAnswer(_ landing: LateREFERAnswerCase) async throws {
        try await withTemporaryFolder { folder in
            let transferee = try await Sipp.start(scenario: "uas_refer_202_after_bye.xml", folder: folder)
            let other: Sipp? =
                switch landing {
                case .freedSlot: nil
                case .reusedSlot: try await Sipp.start(scenario: "uas", folder: folder)
                case .reusedSlotWithItsOwnREFER:
                    try await Sipp.start(scenario: "uas_refer_202_no_notify.xml", folder: folder)
                }
            defer { other?.stop() }
            // T1 3 s: the REFER is not retransmitted before the late 202 comes (1.5 s after BYE),
            // and the second call's REFER stays pending (Timer N 192 s) until it hangs up.
            let timers = SIPTimers(t1: .seconds(3), t2: .seconds(6))
            try await EngineHarness.run(maxCalls: other == nil ? 4 : 1, timers: timers) { h in
                let call = try await h.confirmedCall(to: transferee.uri)
                try await h.engine.transfer(call, to: "sip:carol@127.0.0.1:5999")
                try await h.hangUp(call)
                var second: Call?
                if let other {
                    // pjsua frees the slot once the BYE is answered, just after DISCONNECTED.
                    try await h.poll("the first call's slot free", timeout: .seconds(2)) {
                        try await $0.callSlotsInUse() == 0
                    }
                    let next = try await h.engine.makeCall(to: other.uri, from: h.account)
                    #expect(next.slot == call.slot, "maxCalls 1 puts the second call in the first one's slot")
                    try await h.log.first("second call confirmed") { $0.isState(.confirmed, of: next) }
                    if landing == .reusedSlotWithItsOwnREFER {
                        try await h.engine.transfer(next, to: "sip:dave@127.0.0.1:5999")
                        try await h.log.first("the second call's 202") {
                            $0.transferStatus?.call == next && $0.transferStatus?.code == 100
                        }
                    }
                    second = next
                }
                // sipp ends once the engine has answered its late NOTIFY: pjsua has reported
                // the 202 and the NOTIFY by then.
                let result = try await transferee.finish(timeout: .seconds(20))
                #expect(result.successfulCalls == 1, "\(result)")
                #expect(
                    transferee.receivedStatusCodes.contains { $0 == 200 || $0 == 481 },
                    "\(transferee.receivedStatusCodes)")
                if let second {
                    try await h.hangUp(second)
                } else {
                    // Not a settle: time for a phantom call's events, which must not come.
                    try await Task.sleep(for: .milliseconds(200))
                }

                let events = h.log.events
                let statuses = events.compactMap(\.transferStatus)
                let first = statuses.filter { $0.call == call }
                #expect(first.map(\.code) == [487] && first.allSatisfy(\.final), "\(statuses)")
                #expect(first.first?.reason == PJSUA.transferCallEndedReason)
                let finalIndex = events.firstIndex {
                    $0.transferStatus?.call == call && $0.transferStatus?.final == true
                }
                let endIndex = events.firstIndex { $0.isState(.disconnected, of: call) }
                #expect(finalIndex.flatMap { f in endIndex.map { f < $0 } } == true, "final before DISCONNECTED")
                // The second call's statuses are its own REFER's only: its 202, and 487 at its end.
                let others = statuses.filter { $0.call != call }
                let expected: [Int] = landing == .reusedSlotWithItsOwnREFER ? [100, 487] : []
                #expect(others.map(\.code) == expected && others.allSatisfy { $0.call == second }, "\(statuses)")
                let known = Set([call] + (second.map { [$0] } ?? []))
                let strangers = events.compactMap(\.call).filter { !known.contains($0) }
                #expect(strangers.isEmpty, "events for calls the engine never had: \(strangers)")
                #expect(try await h.engine.activeCalls().isEmpty)
            }
        }
    }

    @Test(
        "A REFER accepted with 202 and never NOTIFYed resolves with 408 after 64×T1; a second transfer meanwhile throws"
    )
    func referWithoutNotify() async throws {
        try await withSipp(scenario: "uas_refer_202_no_notify.xml") { transferee in
            let t1 = Duration.milliseconds(50)
            try await EngineHarness.run(
                timers: SIPTimers(t1: t1, t2: .milliseconds(400), t4: .milliseconds(500))
            ) { h in
                let call = try await h.confirmedCall(to: transferee.uri)
                let sent = ContinuousClock.now
                try await h.engine.transfer(call, to: "sip:carol@127.0.0.1:5999")
                try await h.log.first("202") { $0.transferStatus?.call == call && $0.transferStatus?.code == 100 }
                await #expect(throws: PJSUAUsageError.transferPending(call)) {
                    try await h.engine.transfer(call, to: "sip:dave@127.0.0.1:5999")
                }
                let final = try await h.log.first("final status", timeout: .seconds(10)) {
                    $0.transferStatus?.final == true
                }
                let elapsed = ContinuousClock.now - sent
                #expect(final.transferStatus?.code == 408)
                #expect(final.transferStatus?.reason == PJSUA.transferTimeoutReason)
                // Timer N is 64 × T1 = 3.2 s from the REFER; pjlib's timer heap counts whole
                // milliseconds on its own clock (it fired 17 µs "early" once), and a loaded
                // machine is late.
                #expect(elapsed >= t1 * 64 - .milliseconds(5) && elapsed < t1 * 64 + .seconds(3), "\(elapsed)")
                #expect(try await h.engine.callInfo(call).state == .confirmed)
                try await h.hangUp(call)
                let statuses = h.log.events.compactMap(\.transferStatus)
                #expect(statuses.map(\.code) == [100, 408], "\(statuses)")
                #expect(statuses.filter(\.final).count == 1)
            }
            try await transferee.expectFinished()
            #expect(transferee.receivedRequests.filter { $0 == "REFER" }.count == 1, "the second transfer sent nothing")
        }
    }
}

extension EngineTests {
    /// pjsua gives the call it places for an accepted REFER the original call's user data,
    /// where the engine keeps the handle's generation: the two calls shared a generation,
    /// and once the original ended every event of the new call was dropped as a dead call's.
    @Test("Transferee: the call a REFER places has its own handle and reports its end after the original call's")
    func transferredCallHasItsOwnHandle() async throws {
        try await EngineHarness.run { h in
            let sipp = try await h.sippCaller("uac_refer.xml")
            let call = try await h.log.incomingCall(fromUser: "sipp")
            try await h.engine.answer(call)
            let placed = try await h.log.first("the call the REFER placed") {
                if case .callState(let change) = $0, change.state == .calling, change.call != call {
                    true
                } else {
                    false
                }
            }
            let transferred = try #require(placed.call)
            #expect(
                transferred.slot != call.slot && transferred.generation != call.generation, "\(transferred) vs \(call)")
            // Its other leg arrives at the engine itself (sip:transfer-target at our address).
            let target = try await h.log.first("the target leg") {
                if case .incomingCall(let incoming) = $0 { incoming.call != call } else { false }
            }
            try await h.engine.answer(try #require(target.incomingCall))
            try await h.log.first("sipp's BYE") { $0.isState(.disconnected, of: call) }
            #expect(try await sipp.finish().successfulCalls == 1)
            #expect(try await h.engine.callInfo(transferred).state == .confirmed)
            try await h.hangUp(transferred)
            try await h.log.first("the target leg's end") { $0.isState(.disconnected, of: target.incomingCall) }
            #expect(try await h.engine.activeCalls().isEmpty)
        }
    }
}

extension EngineTests {
    @Test("Blind transfer: REFER with Refer-To; progress: accepted, then 100 and 200 (final) from the NOTIFY sipfrags")
    func blindTransfer() async throws {
        try await withSipp(scenario: "uas_refer_accept.xml") { sipp in
            try await EngineHarness.run { h in
                let call = try await h.confirmedCall(to: sipp.uri)
                try await h.engine.transfer(
                    call, to: "sip:carol@127.0.0.1:5999", headers: [SIPHeader(name: "X-Transfer", value: "blind")])
                let events = try await h.log.wait("final transfer status") { events in
                    events.contains { $0.transferStatus?.call == call && $0.transferStatus?.final == true }
                }
                let progress = events.compactMap(\.transferStatus).filter { $0.call == call }
                // pjsua reports the REFER's 202 as "100 Accepted", then each sipfrag's status line.
                #expect(progress.map(\.code) == [100, 100, 200])
                #expect(progress.map(\.reason) == ["Accepted", "Trying", "OK"])
                #expect(progress.map(\.final) == [false, false, true])
                #expect(try await h.engine.callInfo(call).state == .confirmed)
                try await h.hangUp(call)
            }
            try await sipp.expectFinished()
            let refer = try #require(sipp.received("REFER"))
            #expect(refer.header("Refer-To")?.contains("sip:carol@127.0.0.1:5999") == true)
            #expect(refer.header("X-Transfer") == "blind")
        }
    }

    @Test("A REFER answered 403 gives a final failed-transfer event and the call stays up")
    func transferRejected() async throws {
        try await withSipp(scenario: "uas_refer_403.xml") { sipp in
            try await EngineHarness.run { h in
                let call = try await h.confirmedCall(to: sipp.uri)
                try await h.engine.transfer(call, to: "sip:carol@127.0.0.1:5999")
                let failed = try await h.log.first("final transfer status") { $0.transferStatus?.final == true }
                #expect(failed.transferStatus?.code == 403)
                #expect(try await h.engine.callInfo(call).state == .confirmed)
                #expect(!h.log.states(of: call).contains(.disconnected))
                try await h.hangUp(call)
            }
            try await sipp.expectFinished()
            #expect(sipp.receivedRequests.last == "BYE")
        }
    }

    /// Calls `transferee` (A) and `target` (B), transfers A to B's dialog (an attended
    /// transfer, RFC 3891), waits for the transfer's final status and ends both calls.
    /// - Returns: B's Call-ID.
    static func attendedTransfer(
        to transferee: Sipp, replacing target: Sipp, _ h: EngineHarness
    ) async throws -> String {
        let a = try await h.engine.makeCall(to: transferee.uri, from: h.account)
        let b = try await h.engine.makeCall(to: target.uri, from: h.account)
        try await h.log.wait("both confirmed") { events in
            events.contains { $0.isState(.confirmed, of: a) } && events.contains { $0.isState(.confirmed, of: b) }
        }
        let bCallID = try await h.engine.callInfo(b).sipCallID
        try await h.engine.transfer(a, replacing: b)
        try await h.log.first("final transfer status") {
            $0.transferStatus?.call == a && $0.transferStatus?.final == true
        }
        await h.engine.hangupAll()
        try await h.log.wait("both ended") { events in
            events.contains { $0.isState(.disconnected, of: a) } && events.contains { $0.isState(.disconnected, of: b) }
        }
        return bCallID
    }

    @Test("Attended transfer: REFER on call A whose Refer-To replaces call B's dialog (RFC 3891)")
    func attendedTransfer() async throws {
        try await withTemporaryFolder { folder in
            let transferee = try await Sipp.start(scenario: "uas_refer_accept.xml", folder: folder)
            let target = try await Sipp.start(scenario: "uas", folder: folder)
            try await EngineHarness.run { h in
                let bCallID = try await Self.attendedTransfer(to: transferee, replacing: target, h)
                let referTo = try #require(transferee.received("REFER")?.header("Refer-To"))
                #expect(referTo.contains("127.0.0.1:\(target.port)"), "\(referTo)")
                #expect(referTo.contains("Replaces="), "\(referTo)")
                // The Call-ID is URI-escaped inside the Refer-To ('@' → %40).
                let escaped = bCallID.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? bCallID
                let unescaped = referTo.removingPercentEncoding ?? referTo
                #expect(unescaped.contains(bCallID) || referTo.contains(escaped), "\(referTo) vs \(bCallID)")
            }
            #expect(try await transferee.finish().successfulCalls == 1)
            #expect(try await target.finish().successfulCalls == 1)
        }
    }

    @Test(
        "Incoming REFER: accepted by default (the engine calls the target and NOTIFYs 200); rejected 603 by a handler")
    func incomingRefer() async throws {
        try await EngineHarness.run { h in
            let sipp = try await h.sippCaller("uac_refer.xml")
            let call = try await h.log.incomingCall(fromUser: "sipp")
            try await h.engine.answer(call)
            // The REFER makes the engine call sip:transfer-target at its own address.
            let events = try await h.log.wait("the transferred call") {
                $0.filter { $0.incomingCall != nil }.count >= 2
            }
            let target = try #require(events.last { $0.incomingCall != nil }?.incomingCall)
            try await h.engine.answer(target)
            let request = try await h.log.first("transfer request") {
                if case .transferRequest(let answer) = $0, answer.call == call { return true }
                return false
            }
            if case .transferRequest(let answer) = request {
                let uri = answer.target
                let status = answer.statusCode
                #expect(uri.contains("sip:transfer-target@127.0.0.1:\(h.transport.port)"))
                #expect(status == 202)
            }
            try await h.log.first("sipp's BYE") { $0.isState(.disconnected, of: call) }
            try await sipp.expectFinished()
            let notifies = sipp.messageBlocks.filter { $0.direction == .received && $0.firstLine.hasPrefix("NOTIFY") }
            #expect(notifies.last?.lines.contains("SIP/2.0 200 OK") == true, "\(notifies.map(\.lines))")
            #expect(notifies.last?.header("Subscription-State")?.hasPrefix("terminated") == true)
            await h.engine.hangupAll()

            // With a handler that refuses, the REFER is answered 603 and nothing is called.
            try await h.engine.setTransferRequestHandler { _ in .reject(statusCode: 603) }
            let refused = try await h.sippCaller("uac_refer_rejected.xml")
            let later = try await h.log.wait("second sipp call") { $0.filter { $0.incomingCall != nil }.count >= 3 }
            let second = try #require(later.last { $0.incomingCall != nil }?.incomingCall)
            try await h.engine.answer(second)
            try await h.log.first("sipp's BYE") { $0.isState(.disconnected, of: second) }
            try await refused.expectFinished()
            #expect(h.log.events.filter { $0.incomingCall != nil }.count == 3)
            #expect(
                h.log.events.contains {
                    if case .transferRequest(let answer) = $0, answer.call == second, answer.statusCode == 603 {
                        return true
                    }
                    return false
                })
        }
    }
}
