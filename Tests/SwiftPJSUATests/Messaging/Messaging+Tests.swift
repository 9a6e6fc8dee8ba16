import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// MESSAGE (RFC 3428) and typing indications (RFC 3994) against sipp and through Kamailio.
extension EngineTests {
    /// Reads `engine.messages` into a journal until cancelled.
    private final class MessageReader: Sendable {
        let journal = Journal<MessageEvent>()
        let task: Task<Void, Never>

        init(_ stream: AsyncStream<MessageEvent>) {
            let journal = journal
            task = Task { for await event in stream { journal.append(event) } }
        }

        var messages: [IncomingMessage] {
            journal.records.compactMap { if case .message(let message) = $0 { message } else { nil } }
        }

        var typing: [TypingIndication] {
            journal.records.compactMap { if case .typing(let indication) = $0 { indication } else { nil } }
        }

        /// Stops reading and waits until the stream has let go (the engine then answers 480).
        func stop() async {
            task.cancel()
            await task.value
        }
    }

    @Test(
        "An incoming MESSAGE gets 480 while nothing reads messages, and 200 with its content when something does"
    )
    func incomingMessageConsent() async throws {
        try await EngineHarness.run { h in
            let unread = try await h.sippCaller("uac_message.xml", timeout: .seconds(10))
            #expect(try await unread.finish(timeout: .seconds(20)).exitStatus == 0)
            #expect(unread.receivedStatusCodes == [480, 480], "\(unread.messages.suffix(2000))")
            let refusal = unread.firstMessage(sent: false, startingWith: "SIP/2.0 480")
            #expect(refusal?.firstLine == "SIP/2.0 480 \(PJSUA.noMessageConsumerReason)")

            let reader = MessageReader(h.engine.messages)
            let read = try await h.sippCaller("uac_message.xml", timeout: .seconds(10))
            #expect(try await read.finish(timeout: .seconds(20)).exitStatus == 0)
            #expect(read.receivedStatusCodes == [200, 200], "\(read.messages.suffix(2000))")
            try await reader.journal.wait("a message and a typing indication") { $0.count >= 2 }
            let message = try #require(reader.messages.first)
            #expect(message.account == h.account)
            #expect(message.call == nil)
            #expect(message.from.displayName == "Sipp Sender")
            #expect(message.from.uri == "sip:sipp@127.0.0.1", "\(message.from)")
            #expect(message.to == "sip:engine@127.0.0.1")
            #expect(message.contentType == "text/plain")
            #expect(message.charset == "utf-8", "\(message.headers)")
            #expect(message.body.hasPrefix("Hello from sipp, grüße"), "\(message.body)")
            #expect(message.headers.contains(SIPHeader(name: "X-Message-Test", value: "first")), "\(message.headers)")
            #expect(reader.typing.map(\.isTyping) == [true])
            #expect(reader.typing.first?.from.displayName == "Sipp Sender")
            // Only the two requests sipp sent were delivered: the refused ones are gone.
            #expect(reader.journal.records.count == 2, "\(reader.journal.records)")

            // The reader stops: 480 again.
            await reader.stop()
            let after = try await h.sippCaller("uac_message.xml", timeout: .seconds(10))
            #expect(try await after.finish(timeout: .seconds(20)).exitStatus == 0)
            #expect(after.receivedStatusCodes == [480, 480])
        }
    }

    @Test("A MESSAGE inside a call's dialog gets 480 with no reader and 200 with one, and names the call")
    func inDialogMessageConsent() async throws {
        try await EngineHarness.run { h in
            var previous: Call?
            for reading in [false, true] {
                let reader = reading ? MessageReader(h.engine.messages) : nil
                let sipp = try await h.sippCaller("uac_call_message.xml", timeout: .seconds(15))
                let earlier = previous
                let incoming = try await h.log.incoming { $0.call != earlier }
                previous = incoming.call
                try await h.engine.answer(incoming.call, statusCode: 200)
                _ = try await h.log.wait("the call's end") {
                    $0.contains { $0.isState(.disconnected, of: incoming.call) }
                }
                try await sipp.expectFinished(exitStatus: 0)
                // The INVITE's 200, the MESSAGE's answer, the BYE's 200.
                #expect(sipp.receivedStatusCodes.filter { $0 >= 200 } == [200, reading ? 200 : 480, 200])
                // The refusal left the call as it was: the BYE after it ended it normally.
                #expect(h.log.states(of: incoming.call).suffix(2) == [.confirmed, .disconnected])
                if let reader {
                    try await reader.journal.wait("the in-dialog message") { !$0.isEmpty }
                    let message = try #require(reader.messages.first)
                    #expect(message.call == incoming.call)
                    // sipp ends the body with its line break.
                    #expect(message.body.trimmingCharacters(in: .newlines) == "inside the call", "\(message.body)")
                    await reader.stop()
                }
            }
        }
    }

    @Test("sendMessage returns the far end's final status (202, 404) and sipp sees the body, content type and headers")
    func outgoingMessageDelivery() async throws {
        try await EngineHarness.run { h in
            for (code, phrase) in [(202, "Accepted"), (404, "Not Found")] {
                // sipp checks a response's status when it loads the scenario: write one per status.
                let template = try String(contentsOfFile: Repository.scenario("uas_message.xml"), encoding: .utf8)
                let scenario = h.folder.file("uas_message_\(code).xml")
                try template.replacingOccurrences(of: "STATUS-LINE", with: "\(code) \(phrase)")
                    .write(to: scenario, atomically: true, encoding: .utf8)
                let uas = try await Sipp.start(scenario: scenario.path, folder: h.folder, timeout: .seconds(10))
                let delivery = try await h.engine.sendMessage(
                    "{\"n\":\(code)}", to: uas.uri, from: h.account, contentType: "application/json",
                    headers: [SIPHeader(name: "X-Message-Test", value: "out")])
                #expect(delivery == MessageDelivery(statusCode: code, reason: phrase))
                #expect(delivery.isAccepted == (code == 202))
                #expect(try await uas.finish(timeout: .seconds(10)).exitStatus == 0)
                let request = try #require(uas.firstMessage(sent: false, startingWith: "MESSAGE "))
                #expect(request.header("Content-Type") == "application/json", "\(request.lines)")
                #expect(request.header("X-Message-Test") == "out")
                // A local account's identity is its transport address, with no user part (pjsip
                // prints From without the port).
                let identity = "<sip:\(h.transport.host)>"
                #expect(request.header("From")?.contains(identity) == true, "\(request.lines)")
                #expect(request.lines.last == "{\"n\":\(code)}", "\(request.lines)")
            }
        }
    }

    @Test(
        "Messages through Kamailio: delivered (200), refused by a non-reader (480), unknown user (404)"
    )
    func messagesThroughKamailio() async throws {
        try await EngineHarness.run { h in
            let kamailio = try await Kamailio.start(folder: h.folder)
            let alice = try await h.registeredAccount(kamailio.account("alice"))
            let bob = try await h.registeredAccount(kamailio.account("bob"))

            // Nothing reads messages: Kamailio relays bob's 480 back to alice.
            let refused = try await h.engine.sendMessage("are you there?", to: kamailio.aor("bob"), from: alice)
            #expect(refused.statusCode == 480, "\(refused)")

            let reader = MessageReader(h.engine.messages)
            defer { reader.task.cancel() }
            let delivered = try await h.engine.sendMessage("hello bob", to: kamailio.aor("bob"), from: alice)
            #expect(delivered.statusCode == 200, "\(delivered)")
            try await reader.journal.wait("bob's message") { !$0.isEmpty }
            let message = try #require(reader.messages.first)
            #expect(message.account == bob)
            #expect(message.body == "hello bob")
            #expect(message.from.uri == "sip:alice@127.0.0.1", "\(message.from)")
            #expect(reader.messages.count == 1, "\(reader.journal.records)")

            try await h.engine.sendTypingIndication(true, to: kamailio.aor("alice"), from: bob)
            try await reader.journal.wait("alice's typing indication") { records in
                records.contains { if case .typing(let t) = $0 { t.account == alice && t.isTyping } else { false } }
            }

            let unknown = try await h.engine.sendMessage("hello?", to: kamailio.aor("carol"), from: alice)
            #expect(unknown.statusCode == 404, "\(unknown)")
        }
    }

    @Test("MESSAGE with baresip both ways: each side gets the text; a non-reading engine's 480 reaches baresip")
    func baresipMessages() async throws {
        try await EngineHarness.run { h in
            let reader = MessageReader(h.engine.messages)
            let contact = "\"Engine\" <\(h.uri("engine"))>"
            let peer = try await Baresip.start(
                folder: h.folder, codecs: ["g711"], rtpPorts: UInt16.random(in: 40...49) * 1000,
                commands: ["/message hello from baresip"], contacts: [contact], sipTrace: true)
            try await reader.journal.wait("baresip's message") { !$0.isEmpty }
            let message = try #require(reader.messages.first)
            #expect(message.body == "hello from baresip")
            #expect(message.from.uri == "sip:bob@127.0.0.1", "\(message.from)")
            #expect(message.contentType == "text/plain")

            let delivery = try await h.engine.sendMessage("hello from the engine", to: peer.uri, from: h.account)
            #expect(delivery.statusCode == 200, "\(delivery)")
            // baresip's SIP trace: the request with its body, and its 200.
            try await peer.process.waitForOutput(containing: "hello from the engine")
            let trace = peer.process.output
            let request = try #require(trace.range(of: "MESSAGE \(peer.uri) SIP/2.0"), "\(trace.suffix(1500))")
            #expect(trace[request.upperBound...].contains("SIP/2.0 200 OK"))
            #expect(!peer.process.output.contains(PJSUA.noMessageConsumerReason), "\(peer.process.output.suffix(800))")
            peer.process.stop()

            // Nothing reads now: baresip is told 480 with the engine's reason phrase (a second
            // baresip in the same folder, the first one stopped: its output file starts anew).
            await reader.stop()
            let second = try await Baresip.start(
                folder: h.folder, codecs: ["g711"], rtpPorts: UInt16.random(in: 40...49) * 1000,
                commands: ["/message anyone?"], contacts: [contact])
            defer { second.process.stop() }
            try await second.process.waitForOutput(containing: "480 \(PJSUA.noMessageConsumerReason)")
            #expect(reader.messages.count == 1)
        }
    }

    @Test("CLI: message delivers to listen --messages (200, printed); without --messages listen refuses it (480)")
    func cliMessages() async throws {
        try await withTemporaryFolder { folder in
            for reading in [true, false] {
                let port = FreePort.udp()
                let arguments =
                    ["listen", "--bind", "127.0.0.1", "--port", String(port)] + (reading ? ["--messages"] : [])
                let listener = try await PeerProcess.swiftpjsua("swiftpjsua-listen", arguments, folder: folder)
                defer { listener.stop() }
                let sender = try await PeerProcess.swiftpjsua(
                    "swiftpjsua-message",
                    ["message", "sip:someone@127.0.0.1:\(port)", "--bind", "127.0.0.1", "--text", "two\nlines"],
                    folder: folder)
                let status = try await sender.waitForExit(timeout: .seconds(20))
                if reading {
                    #expect(status == 0, "\(sender.output)")
                    #expect(sender.output.contains("message delivered 200 OK"), "\(sender.output)")
                    try await listener.waitForOutput(containing: "message from sip:127.0.0.1 text/plain: two\\nlines")
                    // An unsolicited message-waiting NOTIFY is taken and printed too.
                    let notifier = try await Sipp.start(
                        scenario: "uac_mwi_unsolicited.xml", remote: "127.0.0.1:\(port)", folder: folder,
                        timeout: .seconds(10))
                    #expect(try await notifier.finish(timeout: .seconds(20)).exitStatus == 0)
                    #expect(notifier.receivedStatusCodes == [200])
                    try await listener.waitForOutput(
                        containing: "message-waiting yes unsolicited voice-message=2/8 fax-message=0/1")
                } else {
                    #expect(status == 1, "\(sender.output)")
                    #expect(sender.output.contains("message refused 480 \(PJSUA.noMessageConsumerReason)"))
                    #expect(!listener.output.contains("message from"), "\(listener.output)")
                }
            }
            // A bad URI is a usage error (64) before anything is sent.
            let bad = try await PeerProcess.swiftpjsua(
                "swiftpjsua-message-bad", ["message", "not a uri", "--bind", "127.0.0.1", "--text", "x"], folder: folder
            )
            #expect(try await bad.waitForExit(timeout: .seconds(20)) == 64, "\(bad.output)")
        }
    }

    @Test(
        "sendMessage misuse throws typed errors; a send pending at shutdown throws shutDown; after shutdown, shutDown")
    func messageMisuse() async throws {
        let engine = try await EngineHarness.run { h in
            await #expect(throws: PJSUAUsageError.invalidURI("not a uri")) {
                try await h.engine.sendMessage("x", to: "not a uri", from: h.account)
            }
            await #expect(throws: PJSUAUsageError.self) {
                try await h.engine.sendMessage("x", to: h.uri("peer"), from: h.account, contentType: "text")
            }
            await #expect(throws: PJSUAUsageError.self) {
                try await h.engine.sendMessage(
                    "x", to: h.uri("peer"), from: h.account, headers: [SIPHeader(name: "Bad Name", value: "v")])
            }
            let gone = Account(slot: 7, generation: 999_999)
            await #expect(throws: PJSUAUsageError.unknownAccount(gone)) {
                try await h.engine.sendMessage("x", to: h.uri("peer"), from: gone)
            }
            await #expect(throws: PJSUAUsageError.invalidURI("sip:")) {
                try await h.engine.sendTypingIndication(true, to: "sip:", from: h.account)
            }

            // A far end that never answers: shutdown ends the wait.
            let silent = try await Sipp.start(
                scenario: "uas_message_silent.xml", folder: h.folder, timeout: .seconds(40))
            let engine = h.engine
            let account = h.account
            let pending = Task { try await engine.sendMessage("anyone?", to: silent.uri, from: account) }
            try await waitUntil("sipp to receive the MESSAGE", seen: { silent.messages }) {
                silent.firstMessage(sent: false, startingWith: "MESSAGE ") != nil
            }
            await h.engine.shutdown()
            await #expect(throws: PJSUAUsageError.shutDown) { try await pending.value }
            return h.engine
        }
        await #expect(throws: PJSUAUsageError.shutDown) {
            try await engine.sendMessage("x", to: "sip:a@127.0.0.1", from: Account(slot: 0, generation: 1))
        }
    }
}
