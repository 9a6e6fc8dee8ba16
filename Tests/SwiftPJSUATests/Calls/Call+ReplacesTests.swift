import Foundation
import KitTestSupport
import PJSUATestSupport
import SwiftPJSUA
import SwiftPJSUAKit
import Testing

// Issue 15 items 1 and 4: an INVITE with Replaces (RFC 3891) for one of our calls, from a
// raw UDP peer that knows both dialogs' tags; and the Refer-To of an attended transfer,
// seen by a sipp transferee.

/// A raw peer's side of one INVITE dialog with the engine.
private struct PeerDialog {
    var invite: RawSIPRequest
    var toTag: String
}

extension EngineTests {
    /// An INVITE from `peer` to the engine with a PCMU offer, its From tag `fromTag` and
    /// `headers` added.
    static func replacesInvite(callID: String, fromTag: String, peer: RawSIPPeer, headers: [String] = [])
        -> RawSIPRequest
    {
        var invite = RawSIPRequest(method: "INVITE", callID: callID)
        invite.fromTag = fromTag
        invite.headers = headers
        invite.contentType = "application/sdp"
        invite.body = Array(
            [
                "v=0", "o=- 1 1 IN IP4 127.0.0.1", "s=-", "c=IN IP4 127.0.0.1", "t=0 0",
                "m=audio \(Int(peer.port) + 2) RTP/AVP 0", "a=rtpmap:0 PCMU/8000", "",
            ].joined(separator: "\r\n").utf8)
        return invite
    }

    /// The ACK for `response` to `invite`: a new transaction for a 2xx, the INVITE's for
    /// an error (RFC 3261 §13.2.2.4, §17.1.1.3).
    static func replacesAck(_ invite: RawSIPRequest, _ response: RawSIPResponse) -> RawSIPRequest {
        var ack = RawSIPRequest(method: "ACK", callID: invite.callID)
        if response.statusCode >= 300 { ack.branch = invite.branch }
        ack.fromTag = invite.fromTag
        ack.toTag = response.toTag
        return ack
    }

    /// Sends `invite`, waits for its final response and ACKs it.
    static func sendReplacesInvite(
        _ invite: RawSIPRequest, from peer: RawSIPPeer, to port: UInt16
    ) async throws -> RawSIPResponse {
        try peer.send(bytes: peer.request(invite, to: port), to: port)
        let response = try #require(try await peer.response(callID: invite.callID, timeout: .seconds(10)))
        try peer.send(bytes: peer.request(replacesAck(invite, response), to: port), to: port)
        return response
    }

    /// What a replacement test checks of the events: incoming calls (with what they
    /// replace), state changes and replacements of `calls`, in delivery order.
    private static func trace(_ events: [PJSUAEvent], _ calls: [Call: String]) -> [String] {
        events.compactMap { event -> String? in
            switch event {
            case .incomingCall(let incoming):
                guard let name = calls[incoming.call] else { return nil }
                return "\(name) incomingCall replaces \(incoming.replaces.flatMap { calls[$0] } ?? "nil")"
            case .callState(let change):
                guard let name = calls[change.call] else { return nil }
                return "\(name) \(change.state.description.uppercased())"
            case .callReplaced(let replacement):
                return "\(calls[replacement.call] ?? "?") replaced by \(calls[replacement.replacement] ?? "?")"
            default:
                return nil
            }
        }
    }

    @Test(
        """
        INVITE with Replaces: incomingCall naming the replaced call, INCOMING, callReplaced before the old call's end; \
        200 and BYE on the wire; a refusing handler answers 603 and keeps the call
        """
    )
    func inviteWithReplaces() async throws {
        try await EngineHarness.run { h in
            let peer = try RawSIPPeer()
            defer { peer.close() }
            let port = h.transport.port

            // The call to be replaced: answered by the app, confirmed.
            let first = Self.replacesInvite(callID: "replaced-\(UUID().uuidString)", fromTag: "alice-1", peer: peer)
            try peer.send(bytes: peer.request(first, to: port), to: port)
            let incoming = try await h.log.first("the first call") {
                if case .incomingCall(let call) = $0 { call.sipCallID == first.callID } else { false }
            }
            let old = try #require(incoming.incomingCall)
            try await h.engine.answer(old)
            let firstAnswer = try #require(try await peer.response(callID: first.callID, timeout: .seconds(10)))
            #expect(firstAnswer.statusCode == 200)
            try peer.send(bytes: peer.request(Self.replacesAck(first, firstAnswer), to: port), to: port)
            try await h.log.first("old confirmed") { $0.isState(.confirmed, of: old) }
            let oldTag = try #require(firstAnswer.toTag)

            // The replacing INVITE names the first dialog from the engine's side:
            // to-tag = the engine's tag, from-tag = ours (RFC 3891 §3).
            let seen = Protected<[ReplaceRequest]>([])
            try await h.engine.setReplaceRequestHandler { request in
                seen.withLock { $0.append(request) }
                return .accept
            }
            let second = Self.replacesInvite(
                callID: "replacement-\(UUID().uuidString)", fromTag: "bob-2", peer: peer,
                headers: ["Replaces: \(first.callID);to-tag=\(oldTag);from-tag=alice-1", "X-Replacing: yes"])
            let secondAnswer = try await Self.sendReplacesInvite(second, from: peer, to: port)
            #expect(secondAnswer.statusCode == 200, "\(secondAnswer)")
            let bye = await peer.receivedRequest("BYE", callID: first.callID, timeout: .seconds(10))
            #expect(bye != nil, "the replaced call's BYE")
            if let bye { try peer.respond(200, "OK", to: bye) }

            let events = try await h.log.wait("replacement confirmed, old call ended") { events in
                events.contains { $0.isState(.disconnected, of: old) }
                    && events.contains {
                        if case .callState(let change) = $0, change.sipCallID == second.callID,
                            change.state == .confirmed
                        {
                            true
                        } else {
                            false
                        }
                    }
            }
            let replacementEvent = try #require(
                events.first {
                    if case .incomingCall(let call) = $0 { call.sipCallID == second.callID } else { false }
                })
            guard case .incomingCall(let replacement) = replacementEvent else { return }
            let new = replacement.call
            #expect(new != old)
            #expect(replacement.replaces == old)
            #expect(replacement.account == h.account)
            #expect(replacement.headers.value(of: "X-Replacing") == "yes")
            #expect(replacement.from.uri.hasPrefix("sip:peer@127.0.0.1"), "\(replacement.from)")
            let names = [old: "old", new: "new"]
            let trace = Self.trace(events, names)
            // The new call's events, with the replacement in them; the old call's end comes
            // after the replacement (when depends on the BYE's response, not on the new call).
            #expect(
                trace.filter { $0.hasPrefix("new") || $0.contains("replaced") } == [
                    "new incomingCall replaces old", "new INCOMING", "old replaced by new", "new CONNECTING",
                    "new CONFIRMED",
                ], "\(trace)")
            let replacedAt = try #require(trace.firstIndex(of: "old replaced by new"))
            #expect(trace.firstIndex(of: "old DISCONNECTED").map { $0 > replacedAt } == true, "\(trace)")
            #expect(trace.filter { $0 == "old DISCONNECTED" }.count == 1)
            #expect(events.contains { $0.call == old && { if case .callReplaced = $0 { true } else { false } }($0) })
            let asked = seen.withLock { $0 }
            #expect(asked.map(\.call) == [old])
            #expect(asked.first?.sipCallID == second.callID)
            #expect(asked.first?.headers.value(of: "Replaces")?.hasPrefix(first.callID) == true)
            #expect(try await h.engine.callInfo(new).state == .confirmed)
            #expect(try await h.engine.activeCalls().contains(new))

            // A handler that refuses: 603 on the wire, no event, the call stays up.
            try await h.engine.setReplaceRequestHandler { _ in .reject(statusCode: 603) }
            let newTag = try #require(secondAnswer.toTag)
            let third = Self.replacesInvite(
                callID: "refused-\(UUID().uuidString)", fromTag: "carol-3", peer: peer,
                headers: ["Replaces: \(second.callID);to-tag=\(newTag);from-tag=bob-2"])
            let refused = try await Self.sendReplacesInvite(third, from: peer, to: port)
            #expect(refused.statusCode == 603, "\(refused)")
            #expect(await peer.receivedRequest("BYE", callID: second.callID, timeout: .milliseconds(500)) == nil)
            #expect(try await h.engine.callInfo(new).state == .confirmed)
            #expect(
                !h.log.events.contains {
                    if case .incomingCall(let call) = $0 { call.sipCallID == third.callID } else { false }
                })
            #expect(!h.log.events.contains { if case .callReplaced(let r) = $0 { r.call == new } else { false } })

            try await h.engine.hangup(new)
            if let bye = await peer.receivedRequest("BYE", callID: second.callID, timeout: .seconds(10)) {
                try peer.respond(200, "OK", to: bye)
            }
            try await h.log.first("new call ended") { $0.isState(.disconnected, of: new) }
        }
    }

    @Test(
        """
        INVITE with Replaces for a call we placed that is still ringing: answered 200, the old call CANCELled after \
        callReplaced
        """
    )
    func inviteReplacesEarlyCall() async throws {
        try await EngineHarness.run { h in
            let peer = try RawSIPPeer()
            defer { peer.close() }
            let port = h.transport.port
            let outgoing = try await h.engine.placeCall(to: "sip:ringing@127.0.0.1:\(peer.port)", from: h.account)
            let old = outgoing.call
            let ringing = try #require(
                await peer.receivedRequest(
                    "INVITE", callID: try await h.engine.callInfo(old).sipCallID, timeout: .seconds(10)))
            try peer.respond(180, "Ringing", to: ringing, toTag: "ringing-1")
            try await h.log.first("old early") { $0.isState(.early, of: old) }
            let engineTag = try #require(ringing.values("From").first?.components(separatedBy: ";tag=").last)

            // Replaces from the engine's view: to-tag is its own (From) tag, from-tag ours.
            let replacing = Self.replacesInvite(
                callID: "replaces-early-\(UUID().uuidString)", fromTag: "dave-2", peer: peer,
                headers: ["Replaces: \(ringing.callID);to-tag=\(engineTag);from-tag=ringing-1"])
            let answer = try await Self.sendReplacesInvite(replacing, from: peer, to: port)
            #expect(answer.statusCode == 200, "\(answer)")
            let cancel = await peer.receivedRequest("CANCEL", callID: ringing.callID, timeout: .seconds(10))
            #expect(cancel != nil, "the early call's CANCEL")
            if let cancel {
                try peer.respond(200, "OK", to: cancel, toTag: "ringing-1")
                try peer.respond(487, "Request Terminated", to: ringing, toTag: "ringing-1")
            }
            let events = try await h.log.wait("old ended, new confirmed") { events in
                events.contains { $0.isState(.disconnected, of: old) }
                    && events.contains {
                        if case .callState(let change) = $0, change.sipCallID == replacing.callID,
                            change.state == .confirmed
                        {
                            true
                        } else {
                            false
                        }
                    }
            }
            let new = try #require(
                events.compactMap {
                    if case .incomingCall(let call) = $0, call.replaces == old { call.call } else { nil }
                }.first)
            let trace = Self.trace(events, [old: "old", new: "new"])
            #expect(
                trace.filter { $0.hasPrefix("new") || $0.contains("replaced") } == [
                    "new incomingCall replaces old", "new INCOMING", "old replaced by new", "new CONNECTING",
                    "new CONFIRMED",
                ], "\(trace)")
            let replacedAt = try #require(trace.firstIndex(of: "old replaced by new"))
            #expect(trace.firstIndex(of: "old DISCONNECTED").map { $0 > replacedAt } == true, "\(trace)")
            try await h.engine.hangup(new)
            if let bye = await peer.receivedRequest("BYE", callID: replacing.callID, timeout: .seconds(10)) {
                try peer.respond(200, "OK", to: bye)
            }
            try await h.log.first("new call ended") { $0.isState(.disconnected, of: new) }
        }
    }

    @Test(
        "INVITE with Replaces for a call the app hung up, its BYE still unanswered: 603 (RFC 3891 §3), no call appears"
    )
    func inviteReplacesHungUpCall() async throws {
        try await EngineHarness.run { h in
            let peer = try RawSIPPeer()
            defer { peer.close() }
            let port = h.transport.port
            let first = Self.replacesInvite(callID: "hung-up-\(UUID().uuidString)", fromTag: "alice-1", peer: peer)
            try peer.send(bytes: peer.request(first, to: port), to: port)
            let old = try #require(
                try await h.log.first("the first call") {
                    if case .incomingCall(let call) = $0 { call.sipCallID == first.callID } else { false }
                }.incomingCall)
            try await h.engine.answer(old)
            let answered = try #require(try await peer.response(callID: first.callID, timeout: .seconds(10)))
            try peer.send(bytes: peer.request(Self.replacesAck(first, answered), to: port), to: port)
            try await h.log.first("old confirmed") { $0.isState(.confirmed, of: old) }

            // The app hangs up; the BYE goes unanswered for now, so pjsip keeps the dialog.
            try await h.hangUp(old)
            let bye = await peer.receivedRequest("BYE", callID: first.callID, timeout: .seconds(10))
            #expect(bye != nil)

            let second = Self.replacesInvite(
                callID: "too-late-\(UUID().uuidString)", fromTag: "bob-2", peer: peer,
                headers: ["Replaces: \(first.callID);to-tag=\(answered.toTag ?? "");from-tag=alice-1"])
            let refused = try await Self.sendReplacesInvite(second, from: peer, to: port)
            #expect(refused.statusCode == 603, "\(refused)")
            if let bye { try peer.respond(200, "OK", to: bye) }
            // Nothing of the refused INVITE reached the app, and no call is left behind.
            #expect(!h.log.events.contains { $0.call != nil && $0.call != old }, "\(h.log.events)")
            #expect(try await h.engine.activeCalls().isEmpty)
        }
    }

    /// Calls this engine's own `user` and answers the incoming leg; both legs once confirmed.
    private static func selfCall(_ h: EngineHarness, user: String) async throws -> (out: Call, in: Call) {
        let out = try await h.engine.makeCall(to: h.uri(user), from: h.account)
        let callID = try await h.engine.callInfo(out).sipCallID
        let incoming = try await h.log.first("\(user)'s incoming leg") {
            if case .incomingCall(let call) = $0 { call.sipCallID == callID } else { false }
        }
        let leg = try #require(incoming.incomingCall)
        try await h.engine.answer(leg)
        try await h.log.wait("\(user) confirmed both ways") { events in
            events.contains { $0.isState(.confirmed, of: out) } && events.contains { $0.isState(.confirmed, of: leg) }
        }
        return (out, leg)
    }

    @Test(
        """
        Engine to engine: attended transfer's REFER, the transferee's INVITE with Replaces, the target's replacement \
        events
        """
    )
    func attendedTransferEndToEnd() async throws {
        try await EngineHarness.run { h in
            // One engine plays all three parties over loopback: A is transferor ↔ transferee,
            // B is transferor ↔ target; the transferee's new call replaces the target's B leg.
            let a = try await Self.selfCall(h, user: "transferee")
            let b = try await Self.selfCall(h, user: "target")
            try await h.engine.transfer(a.out, replacing: b.out)
            let events = try await h.log.wait("transfer done, B's target leg replaced and ended") { events in
                events.contains { $0.transferStatus?.call == a.out && $0.transferStatus?.final == true }
                    && events.contains { $0.isState(.disconnected, of: b.in) }
                    && events.contains { $0.isState(.disconnected, of: b.out) }
                    && events.contains {
                        if case .incomingCall(let call) = $0, call.replaces == b.in { true } else { false }
                    }
            }
            let request = try #require(
                events.compactMap {
                    if case .transferRequest(let answer) = $0, answer.call == a.in { answer } else { nil }
                }
                .first)
            #expect(request.statusCode == 202)
            #expect(request.target.contains("?Require=replaces&Replaces="), "\(request.target)")
            let final = try #require(events.compactMap(\.transferStatus).last { $0.call == a.out })
            #expect(final.code == 200, "\(final)")
            let replacement = try #require(
                events.compactMap { if case .incomingCall(let call) = $0, call.replaces == b.in { call } else { nil } }
                    .first)
            let new = replacement.call
            let trace = Self.trace(events, [b.in: "target leg", new: "new"])
            #expect(
                trace.filter { $0.hasPrefix("new") || $0.contains("replaced") } == [
                    "new incomingCall replaces target leg", "new INCOMING", "target leg replaced by new",
                    "new CONNECTING", "new CONFIRMED",
                ], "\(trace)")
            let replacedAt = try #require(trace.firstIndex(of: "target leg replaced by new"))
            #expect(trace.firstIndex(of: "target leg DISCONNECTED").map { $0 > replacedAt } == true, "\(trace)")
            await h.engine.hangupAll()
            try await h.log.first("the replacement ended") { $0.isState(.disconnected, of: new) }
        }
    }

    @Test("Attended transfer: the Refer-To names the other call's remote Contact (not its To URI), Replaces escaped")
    func attendedTransferReferToContact() async throws {
        try await withTemporaryFolder { folder in
            let transferee = try await Sipp.start(scenario: "uas_refer_accept.xml", folder: folder)
            let target = try await Sipp.start(scenario: "uas_device_contact.xml", folder: folder)
            let bCallID = try await EngineHarness.run { h in
                try await Self.attendedTransfer(to: transferee, replacing: target, h)
            }
            #expect(try await transferee.finish().successfulCalls == 1)
            #expect(try await target.finish().successfulCalls == 1)
            let referTo = try #require(transferee.received("REFER")?.header("Refer-To"))
            // The target answered as sip:service@ (its To URI) from the device desk-7.
            let contact = "sip:desk-7@127.0.0.1:\(target.port);ob"
            #expect(referTo.hasPrefix("<\(contact)?"), "\(referTo)")
            #expect(!referTo.contains("sip:service@"), "\(referTo)")
            let invite = try #require(target.received("INVITE"))
            let engineTag = try #require(invite.header("From")?.components(separatedBy: ";tag=").last)
            let callID = try #require(invite.header("Call-ID"))
            // Replaces from the target's view: to-tag is the target's, from-tag ours; ';', '='
            // and '@' escaped inside the header value (RFC 3261 §25.1).
            let escaped = { (text: String) in
                text.addingPercentEncoding(
                    withAllowedCharacters: CharacterSet(
                        charactersIn:
                            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*'()[]/?:+$")) ?? text
            }
            #expect(callID == bCallID)
            let replaces = "\(callID);to-tag=desk-7%`tag;from-tag=\(engineTag)"
            #expect(referTo == "<\(contact)?Require=replaces&Replaces=\(escaped(replaces))>", "\(referTo)")
        }
    }
}

extension EngineTests.KitOrderings {
}
