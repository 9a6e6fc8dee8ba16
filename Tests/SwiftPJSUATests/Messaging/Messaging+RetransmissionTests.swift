import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// A refused MESSAGE or unsolicited message-summary NOTIFY is answered once per transaction:
/// a retransmission of it (same branch, RFC 3261 §17.2.2) gets the same final response
/// even when a reader has appeared since, and is not delivered.
extension EngineTests {
    @Test("A retransmitted MESSAGE refused 480 gets 480 again after a reader appears, and is not delivered")
    func refusedMessageRetransmission() async throws {
        try await EngineHarness.run { h in
            let peer = try RawSIPPeer()
            defer { peer.close() }
            var message = RawSIPRequest(method: "MESSAGE", callID: "im-retx-\(UUID().uuidString)")
            message.contentType = "text/plain"
            message.body = Array("sent while nobody read".utf8)
            let bytes = peer.request(message, to: h.transport.port)
            try peer.send(bytes: bytes, to: h.transport.port)
            let first = try await peer.response(callID: message.callID, timeout: .seconds(5))
            #expect(first?.statusCode == 480, "\(first.map(\.description) ?? "no response")")

            let journal = Journal<MessageEvent>()
            let stream = h.engine.messages
            let reader = Task { for await event in stream { journal.append(event) } }
            defer { reader.cancel() }
            // The same request again, as a sender whose 480 was lost retransmits it (T1).
            try peer.send(bytes: bytes, to: h.transport.port)
            let again = try await peer.response(callID: message.callID, timeout: .seconds(5))
            #expect(again?.statusCode == 480, "\(again.map(\.description) ?? "no response")")

            // A new MESSAGE is taken; only it reaches the reader.
            var next = RawSIPRequest(method: "MESSAGE", callID: "im-new-\(UUID().uuidString)")
            next.contentType = "text/plain"
            next.body = Array("sent while read".utf8)
            try peer.send(bytes: peer.request(next, to: h.transport.port), to: h.transport.port)
            #expect(try await peer.finalResponse(callID: next.callID, timeout: .seconds(5)) == 200)
            try await journal.wait("the new message") { !$0.isEmpty }
            let bodies = journal.records.compactMap { if case .message(let m) = $0 { m.body } else { nil } }
            #expect(bodies == ["sent while read"], "\(journal.records)")
        }
    }

    @Test("A retransmitted unsolicited message-summary NOTIFY refused 481 gets 481 again after a reader appears")
    func refusedSummaryRetransmission() async throws {
        try await EngineHarness.run { h in
            let peer = try RawSIPPeer()
            defer { peer.close() }
            var notify = RawSIPRequest(method: "NOTIFY", callID: "mwi-retx-\(UUID().uuidString)")
            notify.headers = ["Event: message-summary", "Subscription-State: active"]
            notify.contentType = "application/simple-message-summary"
            notify.body = Array("Messages-Waiting: yes\r\nVoice-Message: 1/0\r\n".utf8)
            let bytes = peer.request(notify, to: h.transport.port)
            try peer.send(bytes: bytes, to: h.transport.port)
            let first = try await peer.response(callID: notify.callID, timeout: .seconds(5))
            #expect(first?.statusCode == 481, "\(first.map(\.description) ?? "no response")")

            let journal = Journal<MessageSummary>()
            let stream = h.engine.messageSummaries
            let reader = Task { for await summary in stream { journal.append(summary) } }
            defer { reader.cancel() }
            try peer.send(bytes: bytes, to: h.transport.port)
            let again = try await peer.response(callID: notify.callID, timeout: .seconds(5))
            #expect(again?.statusCode == 481, "\(again.map(\.description) ?? "no response")")

            var next = RawSIPRequest(method: "NOTIFY", callID: "mwi-new-\(UUID().uuidString)")
            next.headers = notify.headers
            next.contentType = notify.contentType
            next.body = Array("Messages-Waiting: no\r\n".utf8)
            try peer.send(bytes: peer.request(next, to: h.transport.port), to: h.transport.port)
            #expect(try await peer.finalResponse(callID: next.callID, timeout: .seconds(5)) == 200)
            try await journal.wait("the new summary") { !$0.isEmpty }
            #expect(journal.records.map(\.messagesWaiting) == [false], "\(journal.records)")
        }
    }
}
