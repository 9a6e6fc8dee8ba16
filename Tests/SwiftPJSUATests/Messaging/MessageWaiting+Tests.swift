import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Message-waiting indications (RFC 3842) against sipp: unsolicited, and on the account's
/// own subscription.
extension EngineTests {
    @Test("An unsolicited message-summary NOTIFY gets 481 while nothing reads summaries, 200 and a summary when read")
    func unsolicitedMessageWaiting() async throws {
        try await EngineHarness.run { h in
            let unread = try await h.sippCaller("uac_mwi_unsolicited.xml", timeout: .seconds(10))
            #expect(try await unread.finish(timeout: .seconds(20)).exitStatus == 0)
            #expect(unread.receivedStatusCodes == [481], "\(unread.messages.suffix(1500))")

            let journal = Journal<MessageSummary>()
            let summaries = h.engine.messageSummaries
            let reader = Task { for await summary in summaries { journal.append(summary) } }
            defer { reader.cancel() }
            let read = try await h.sippCaller("uac_mwi_unsolicited.xml", timeout: .seconds(10))
            #expect(try await read.finish(timeout: .seconds(20)).exitStatus == 0)
            #expect(read.receivedStatusCodes == [200])
            try await journal.wait("the summary") { !$0.isEmpty }
            let summary = try #require(journal.records.first)
            #expect(!summary.isSolicited)
            #expect(summary.account == h.account)
            #expect(summary.messagesWaiting)
            #expect(summary.messageAccount == "sip:engine@127.0.0.1")
            #expect(
                summary.counts == [
                    MessageSummary.Counts(messageClass: "voice-message", new: 2, old: 8, urgentNew: 0, urgentOld: 2),
                    MessageSummary.Counts(messageClass: "fax-message", new: 0, old: 1),
                ])
            #expect(journal.records.count == 1)
        }
    }

    @Test("subscribesToMessageWaiting: after registering, a SUBSCRIBE to message-summary; its NOTIFY is reported")
    func subscribedMessageWaiting() async throws {
        try await EngineHarness.run { h in
            let server = try await Sipp.start(scenario: "uas_register_mwi.xml", calls: 2, folder: h.folder)
            let journal = Journal<MessageSummary>()
            let summaries = h.engine.messageSummaries
            let reader = Task { for await summary in summaries { journal.append(summary) } }
            defer { reader.cancel() }
            var configuration = AccountConfiguration(
                identity: "sip:engine@127.0.0.1:\(server.port)", registrar: "sip:127.0.0.1:\(server.port)")
            configuration.subscribesToMessageWaiting = true
            configuration.messageWaitingExpiry = .seconds(600)
            let account = try await h.registeredAccount(configuration)
            try await journal.wait("the subscription's summary") { !$0.isEmpty }
            let summary = try #require(journal.records.first)
            #expect(summary.isSolicited)
            #expect(summary.account == account)
            #expect(summary.messagesWaiting)
            #expect(
                summary.voice
                    == MessageSummary.Counts(messageClass: "voice-message", new: 3, old: 1, urgentNew: 1, urgentOld: 0))
            try await waitUntil("sipp to see the NOTIFY's 200", seen: { server.messages }) {
                server.receivedStatusCodes.contains(200)
            }
            let subscribe = try #require(server.firstMessage(sent: false, startingWith: "SUBSCRIBE "))
            #expect(subscribe.header("Event") == "message-summary", "\(subscribe.lines)")
            #expect(subscribe.header("Expires") == "600")
            #expect(subscribe.header("Accept")?.contains("application/simple-message-summary") == true)
        }
    }

    @Test("messageWaitingExpiry outside 60 s...1 day throws invalidConfiguration")
    func messageWaitingExpiryValidated() async throws {
        try await EngineHarness.run { h in
            for expiry in [Duration.seconds(59), .seconds(86_401)] {
                var configuration = AccountConfiguration(identity: "sip:engine@127.0.0.1", registrar: "sip:127.0.0.1:9")
                configuration.subscribesToMessageWaiting = true
                configuration.messageWaitingExpiry = expiry
                await #expect(throws: PJSUAUsageError.self) { try await h.engine.addAccount(configuration) }
            }
        }
    }
}
