import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Malformed requests the engine answers as RFC 3261 and RFC 4566 say, where pjsip alone
/// accepts them or drops them in silence. Each sends the bad message from a raw socket and
/// checks the status code on the wire, then that the engine still places and answers a call.
extension EngineTests {
    /// pjsip's receive buffer, `PJSIP_MAX_PKT_LEN` (pjsip's 4000, which provision/config_site.h
    /// leaves; 16000 on the 2.17-ios profile).
    static var receiveBuffer: Int { PJSUA.buildLimits.sipMessageBytes }

    @Test("513: a UDP request longer than pjsip's receive buffer is cut by it; one that fills it exactly is not")
    func rfcOversizedDatagram() async throws {
        try await EngineHarness.run { h in
            let peer = try RawSIPPeer()
            defer { peer.close() }
            var options = RawSIPRequest(method: "OPTIONS", callID: "cut-\(UUID().uuidString)")
            options.headers = ["X-Padding: " + String(repeating: "a", count: Self.receiveBuffer + 1000)]
            try peer.send(bytes: peer.request(options, to: h.transport.port), to: h.transport.port)
            let cut = try await peer.response(callID: options.callID, timeout: .seconds(5))
            #expect(cut?.statusCode == 513, "\(cut.map { "\($0.statusCode)" } ?? "no response")")

            // The same request padded to exactly the buffer's size is whole: 200.
            var exact = RawSIPRequest(method: "OPTIONS", callID: "exact-\(UUID().uuidString)")
            exact.headers = ["X-Padding: "]
            let short = peer.request(exact, to: h.transport.port).count
            exact.headers = ["X-Padding: " + String(repeating: "b", count: Self.receiveBuffer - short)]
            let bytes = peer.request(exact, to: h.transport.port)
            #expect(bytes.count == Self.receiveBuffer)
            try peer.send(bytes: bytes, to: h.transport.port)
            let whole = try await peer.response(callID: exact.callID, timeout: .seconds(5))
            #expect(whole?.statusCode == 200, "\(whole.map { "\($0.statusCode)" } ?? "no response")")

            // An INVITE cut inside its SDP: 513, and no call reached the application.
            var invite = RawSIPRequest(method: "INVITE", callID: "cut-invite-\(UUID().uuidString)")
            invite.contentType = "application/sdp"
            invite.body = Array(
                Self.offer(
                    port: 40_000,
                    attributes: Array(
                        repeating: "a=x-pad:" + String(repeating: "c", count: 200),
                        count: Self.receiveBuffer / 200 + 10)
                ).utf8)
            try peer.send(bytes: peer.request(invite, to: h.transport.port), to: h.transport.port)
            let cutInvite = try await peer.response(callID: invite.callID, timeout: .seconds(5))
            #expect(cutInvite?.statusCode == 513)
            if let cutInvite {
                try peer.send(
                    bytes: peer.request(Self.ack(invite, cutInvite), to: h.transport.port), to: h.transport.port)
            }
            #expect(!h.log.events.contains { $0.incomingCall != nil })
            try await Self.expectCallStillWorks(h)
        }
    }

    @Test("400: a UDP request whose Content-Length is larger than the body in the datagram (RFC 3261 §18.3)")
    func rfcContentLengthBeyondDatagram() async throws {
        try await EngineHarness.run { h in
            let peer = try RawSIPPeer()
            defer { peer.close() }
            var options = RawSIPRequest(method: "OPTIONS", callID: "clen-\(UUID().uuidString)")
            options.contentType = "text/plain"
            options.body = Array("hello".utf8)
            options.contentLength = 50
            try peer.send(bytes: peer.request(options, to: h.transport.port), to: h.transport.port)
            let response = try await peer.response(callID: options.callID, timeout: .seconds(5))
            #expect(response?.statusCode == 400, "\(response.map { "\($0.statusCode)" } ?? "no response")")

            // A Content-Length with no body at all.
            var empty = RawSIPRequest(method: "OPTIONS", callID: "clen-empty-\(UUID().uuidString)")
            empty.contentLength = 10
            try peer.send(bytes: peer.request(empty, to: h.transport.port), to: h.transport.port)
            #expect(try await peer.finalResponse(callID: empty.callID, timeout: .seconds(5)) == 400)

            // The right Content-Length is still 200.
            var right = RawSIPRequest(method: "OPTIONS", callID: "clen-right-\(UUID().uuidString)")
            right.contentType = "text/plain"
            right.body = Array("hello".utf8)
            try peer.send(bytes: peer.request(right, to: h.transport.port), to: h.transport.port)
            #expect(try await peer.finalResponse(callID: right.callID, timeout: .seconds(5)) == 200)
            try await Self.expectCallStillWorks(h)
        }
    }

    @Test("513 on TCP: a message larger than pjsip's buffer gets 513 on its connection, which then closes")
    func rfcOversizedStreamMessage() async throws {
        let engine = PJSUA()
        let log = EventLog(engine.events)
        try await engine.start(
            Configuration(
                transports: [
                    TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0),
                    TransportConfiguration(type: .tcp, bindAddress: "127.0.0.1", port: 0),
                ],
                media: MediaConfiguration(soundDevice: .null, rtpPorts: 30_000...31_999)))
        do {
            let transports = try await engine.transports()
            let udp = try #require(transports.first { $0.type == .udp })
            let tcp = try #require(transports.first { $0.type == .tcp })
            let account = try await engine.addLocalAccount(on: udp.transport)

            let stream = try RawSIPStream(to: tcp.port)
            defer { stream.close() }
            var message = RawSIPRequest(method: "MESSAGE", callID: "tcp-big-\(UUID().uuidString)")
            message.contentType = "text/plain"
            message.body = Array(repeating: UInt8(ascii: "m"), count: Self.receiveBuffer * 2 + 2000)
            stream.send(bytes: stream.request(message, to: tcp.port))
            let response = await stream.response(timeout: .seconds(5))
            #expect(response?.statusCode == 513, "\(response.map { "\($0.statusCode)" } ?? "no response")")
            #expect(response?.callID == message.callID)
            #expect(await stream.closes(within: .seconds(5)))

            // A fresh connection still gets answers: a 416 for an unknown scheme (its
            // request re-read in place, body and all), then the next request on it.
            let second = try RawSIPStream(to: tcp.port)
            defer { second.close() }
            var scheme = RawSIPRequest(method: "MESSAGE", callID: "tcp-scheme-\(UUID().uuidString)")
            scheme.requestURI = "foo:engine@127.0.0.1"
            scheme.contentType = "text/plain"
            scheme.body = Array("hello".utf8)
            let options = RawSIPRequest(method: "OPTIONS", callID: "tcp-ok-\(UUID().uuidString)")
            second.send(bytes: second.request(scheme, to: tcp.port) + second.request(options, to: tcp.port))
            let unsupported = await second.response(timeout: .seconds(5))
            #expect(unsupported?.statusCode == 416 && unsupported?.callID == scheme.callID)
            let answered = await second.response(timeout: .seconds(5))
            #expect(answered?.statusCode == 200 && answered?.callID == options.callID)

            let harness = LocalEngine(engine: engine, log: log, account: account, port: udp.port)
            try await harness.expectCallStillWorks()
        } catch {
            await engine.shutdown()
            throw error
        }
        await engine.shutdown()
    }

    @Test("482: a second INVITE with the first's From tag, Call-ID and CSeq but another branch (RFC 3261 §8.2.2.2)")
    func rfcMergedRequest() async throws {
        try await EngineHarness.run { h in
            let peer = try RawSIPPeer()
            defer { peer.close() }
            var first = RawSIPRequest(method: "INVITE", callID: "merged-\(UUID().uuidString)", branch: "z9hG4bK-first")
            first.contentType = "application/sdp"
            first.body = Array(Self.offer(port: Int(peer.port) + 2).utf8)
            try peer.send(bytes: peer.request(first, to: h.transport.port), to: h.transport.port)
            let event = try await h.log.first("incoming call") { $0.incomingCall != nil }
            let callee = try #require(event.incomingCall)

            var merged = first
            merged.branch = "z9hG4bK-second"
            try peer.send(bytes: peer.request(merged, to: h.transport.port), to: h.transport.port)
            let response = try await peer.response(callID: first.callID, timeout: .seconds(5)) {
                $0.statusCode >= 200 && $0.branch == "z9hG4bK-second"
            }
            #expect(response?.statusCode == 482, "\(response.map { "\($0.statusCode)" } ?? "no response")")
            if let response {
                try peer.send(
                    bytes: peer.request(Self.ack(merged, response), to: h.transport.port), to: h.transport.port)
            }
            // Only the first INVITE became a call, and it is still ringing.
            #expect(h.log.events.filter { $0.incomingCall != nil }.count == 1)

            try await h.engine.answer(callee, statusCode: 486)
            let busy = try await peer.response(callID: first.callID, timeout: .seconds(5)) {
                $0.branch == "z9hG4bK-first" && $0.statusCode >= 200
            }
            #expect(busy?.statusCode == 486)
            if let busy {
                try peer.send(bytes: peer.request(Self.ack(first, busy), to: h.transport.port), to: h.transport.port)
            }
            try await h.log.first("DISCONNECTED") { $0.isState(.disconnected, of: callee) }

            // A new CSeq from the same peer is a new request, not a merged one.
            var next = RawSIPRequest(method: "OPTIONS", callID: first.callID)
            next.cseq = 2
            try peer.send(bytes: peer.request(next, to: h.transport.port), to: h.transport.port)
            let options = try await peer.response(callID: first.callID, timeout: .seconds(5)) {
                $0.branch == next.branch
            }
            #expect(options?.statusCode == 200)
            try await Self.expectCallStillWorks(h)
        }
    }

    @Test(
        "416: a Request-URI with a scheme other than sip, sips or tel (RFC 3261 §8.2.2.1)",
        arguments: zip(
            ["OPTIONS", "INVITE", "MESSAGE", "OPTIONS"],
            ["foo:engine@127.0.0.1", "foo:engine@127.0.0.1", "urn:service:sos", "a:b"]))
    func rfcUnsupportedURIScheme(method: String, uri: String) async throws {
        try await EngineHarness.run { h in
            let peer = try RawSIPPeer()
            defer { peer.close() }
            var request = RawSIPRequest(method: method, callID: "scheme-\(UUID().uuidString)")
            request.requestURI = uri
            if method == "INVITE" {
                request.contentType = "application/sdp"
                request.body = Array(Self.offer(port: Int(peer.port) + 2).utf8)
            }
            try peer.send(bytes: peer.request(request, to: h.transport.port), to: h.transport.port)
            let response = try await peer.response(callID: request.callID, timeout: .seconds(5))
            #expect(response?.statusCode == 416, "\(response.map { "\($0.statusCode)" } ?? "no response")")
            if let response, method == "INVITE" {
                try peer.send(
                    bytes: peer.request(Self.ack(request, response), to: h.transport.port), to: h.transport.port)
            }
            #expect(!h.log.events.contains { $0.incomingCall != nil })
            try await Self.expectCallStillWorks(h)
        }
    }

    @Test("420 with Unsupported: Require names an option tag the engine does not support (RFC 3261 §8.2.2.3)")
    func rfcUnknownRequire() async throws {
        try await EngineHarness.run { h in
            let peer = try RawSIPPeer()
            defer { peer.close() }
            // OPTIONS: pjsip's OPTIONS handler would answer 200. `timer` is supported.
            var options = RawSIPRequest(method: "OPTIONS", callID: "require-\(UUID().uuidString)")
            options.headers = ["Require: x-unknown-ext, timer", "Require: x-other"]
            try peer.send(bytes: peer.request(options, to: h.transport.port), to: h.transport.port)
            let response = try await peer.response(callID: options.callID, timeout: .seconds(5))
            #expect(response?.statusCode == 420, "\(response.map { "\($0.statusCode)" } ?? "no response")")
            #expect(response?.optionTags("Unsupported") == ["x-unknown-ext", "x-other"], "\(response?.text ?? "")")

            // Only supported tags: answered as usual.
            var supported = RawSIPRequest(method: "OPTIONS", callID: "require-ok-\(UUID().uuidString)")
            supported.headers = ["Require: timer"]
            try peer.send(bytes: peer.request(supported, to: h.transport.port), to: h.transport.port)
            #expect(try await peer.finalResponse(callID: supported.callID, timeout: .seconds(5)) == 200)

            // INVITE: pjsip's own check (pjsip_inv_verify_request), the same answer.
            var invite = RawSIPRequest(method: "INVITE", callID: "require-invite-\(UUID().uuidString)")
            invite.headers = ["Require: x-unknown-ext"]
            invite.contentType = "application/sdp"
            invite.body = Array(Self.offer(port: Int(peer.port) + 2).utf8)
            try peer.send(bytes: peer.request(invite, to: h.transport.port), to: h.transport.port)
            let inviteResponse = try await peer.response(callID: invite.callID, timeout: .seconds(5))
            #expect(inviteResponse?.statusCode == 420)
            #expect(inviteResponse?.optionTags("Unsupported") == ["x-unknown-ext"])
            if let inviteResponse {
                try peer.send(
                    bytes: peer.request(Self.ack(invite, inviteResponse), to: h.transport.port), to: h.transport.port)
            }
            try await Self.expectCallStillWorks(h)
        }
    }

    @Test("488: an offer with a media port above 65535 or a NUL byte, in an INVITE or a re-INVITE (RFC 4566, RFC 3264)")
    func rfcMalformedSDP() async throws {
        try await EngineHarness.run { h in
            let peer = try RawSIPPeer()
            defer { peer.close() }
            let nul = Array(Self.offer(port: Int(peer.port) + 2).utf8).flatMap { byte -> [UInt8] in
                byte == UInt8(ascii: "U") ? [byte, 0] : [byte]  // "PCMU" becomes "PCM\0U"
            }
            for (name, body) in [("port 70000", Array(Self.offer(port: 70_000).utf8)), ("NUL byte", nul)] {
                var invite = RawSIPRequest(method: "INVITE", callID: "sdp-\(UUID().uuidString)")
                invite.contentType = "application/sdp"
                invite.body = body
                try peer.send(bytes: peer.request(invite, to: h.transport.port), to: h.transport.port)
                let response = try await peer.response(callID: invite.callID, timeout: .seconds(5))
                #expect(response?.statusCode == 488, "\(name): \(response.map { "\($0.statusCode)" } ?? "no response")")
                if let response {
                    try peer.send(
                        bytes: peer.request(Self.ack(invite, response), to: h.transport.port), to: h.transport.port)
                }
            }
            #expect(!h.log.events.contains { $0.incomingCall != nil })

            // A re-INVITE with such an offer in a confirmed call: 488, and the call stays up.
            var invite = RawSIPRequest(method: "INVITE", callID: "sdp-dialog-\(UUID().uuidString)")
            invite.contentType = "application/sdp"
            invite.body = Array(Self.offer(port: Int(peer.port) + 2).utf8)
            try peer.send(bytes: peer.request(invite, to: h.transport.port), to: h.transport.port)
            let event = try await h.log.first("incoming call") { $0.incomingCall != nil }
            let callee = try #require(event.incomingCall)
            try await h.engine.answer(callee, statusCode: 200)
            let ok = try #require(
                try await peer.response(callID: invite.callID, timeout: .seconds(5)) { $0.statusCode == 200 })
            let toTag = try #require(ok.toTag)
            var ack = RawSIPRequest(method: "ACK", callID: invite.callID)
            ack.toTag = toTag
            try peer.send(bytes: peer.request(ack, to: h.transport.port), to: h.transport.port)
            try await h.log.first("CONFIRMED") { $0.isState(.confirmed, of: callee) }
            for (cseq, body) in [(2, Array(Self.offer(port: 70_000, version: 2).utf8)), (3, nul)] {
                var reinvite = RawSIPRequest(method: "INVITE", callID: invite.callID)
                reinvite.cseq = cseq
                reinvite.toTag = toTag
                reinvite.contentType = "application/sdp"
                reinvite.body = body
                try peer.send(bytes: peer.request(reinvite, to: h.transport.port), to: h.transport.port)
                let response = try await peer.response(callID: invite.callID, timeout: .seconds(5)) {
                    $0.branch == reinvite.branch && $0.statusCode >= 200
                }
                #expect(
                    response?.statusCode == 488,
                    "re-INVITE \(cseq): \(response.map { "\($0.statusCode)" } ?? "no response")")
                if let response {
                    try peer.send(
                        bytes: peer.request(Self.ack(reinvite, response), to: h.transport.port), to: h.transport.port)
                }
            }
            #expect(h.log.states(of: callee).last == .confirmed)
            var bye = RawSIPRequest(method: "BYE", callID: invite.callID)
            bye.cseq = 4
            bye.toTag = toTag
            try peer.send(bytes: peer.request(bye, to: h.transport.port), to: h.transport.port)
            let byeResponse = try await peer.response(callID: invite.callID, timeout: .seconds(5)) {
                $0.branch == bye.branch
            }
            #expect(byeResponse?.statusCode == 200)
            try await h.log.first("DISCONNECTED") { $0.isState(.disconnected, of: callee) }
            try await Self.expectCallStillWorks(h)
        }
    }

    // MARK: Helpers

    /// A PCMU audio offer from 127.0.0.1:`port` (written as given, even above 65535).
    static func offer(port: Int, version: Int = 1, attributes: [String] = []) -> String {
        ([
            "v=0", "o=- 1 \(version) IN IP4 127.0.0.1", "s=-", "c=IN IP4 127.0.0.1", "t=0 0",
            "m=audio \(port) RTP/AVP 0", "a=rtpmap:0 PCMU/8000",
        ] + attributes + [""]).joined(separator: "\r\n")
    }

    /// The ACK of a non-2xx final response: the INVITE's branch and CSeq, the response's To tag.
    static func ack(_ invite: RawSIPRequest, _ response: RawSIPResponse) -> RawSIPRequest {
        var ack = RawSIPRequest(method: "ACK", callID: invite.callID, branch: invite.branch)
        ack.cseq = invite.cseq
        ack.fromTag = invite.fromTag
        ack.toTag = response.toTag
        ack.requestURI = invite.requestURI
        return ack
    }

    static func expectCallStillWorks(_ h: EngineHarness) async throws {
        try await LocalEngine(engine: h.engine, log: h.log, account: h.account, port: h.transport.port)
            .expectCallStillWorks()
    }
}

/// An engine a test started itself, for the checks after the bad message.
struct LocalEngine {
    let engine: PJSUA
    let log: EventLog
    let account: Account
    let port: UInt16

    /// A call to the engine's own UDP address is answered, confirmed and hung up.
    func expectCallStillWorks() async throws {
        let known = Set(log.events.compactMap(\.incomingCall))
        let caller = try await engine.makeCall(to: "sip:self@127.0.0.1:\(port)", from: account)
        let incoming = try await log.first("a new incoming call") {
            $0.incomingCall.map { !known.contains($0) } ?? false
        }
        let callee = try #require(incoming.incomingCall)
        try await engine.answer(callee, statusCode: 200)
        try await log.first("CONFIRMED") { $0.isState(.confirmed, of: caller) }
        try await engine.hangup(caller)
        try await log.first("DISCONNECTED") { $0.isState(.disconnected, of: caller) }
    }
}
