import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Presence watchers need consent: a SUBSCRIBE from a watcher the account's policy does
/// not admit gets 403 and no presence; an admitted one gets 200 and a NOTIFY with PIDF.
extension EngineTests {
    @Test("Presence SUBSCRIBE: a stranger gets 403 and no NOTIFY; an allowed watcher gets 200 and PIDF; both reported")
    func presenceWatcherConsent() async throws {
        try await EngineHarness.run { h in
            let journal = Journal<WatcherRequest>()
            let requests = h.engine.watcherRequests
            let reader = Task { for await request in requests { journal.append(request) } }
            defer { reader.cancel() }
            var configuration = AccountConfiguration(identity: "sip:engine@127.0.0.1")
            configuration.watchers = WatcherPolicy(allowedWatchers: ["sip:friend@EXAMPLE.test"])
            let account = try await h.engine.addAccount(configuration)

            let stranger = try await h.sippCaller("uac_presence_subscribe.xml", extra: ["-key", "watcher", "stranger"])
            #expect(try await stranger.finish(timeout: .seconds(20)).exitStatus == 0)
            #expect(stranger.receivedStatusCodes == [403], "\(stranger.messages.suffix(1500))")
            let refusal = try #require(stranger.firstMessage(sent: false, startingWith: "SIP/2.0 403"))
            #expect(refusal.firstLine == "SIP/2.0 403 Forbidden")

            let friend = try await h.sippCaller("uac_presence_subscribe.xml", extra: ["-key", "watcher", "friend"])
            #expect(try await friend.finish(timeout: .seconds(20)).exitStatus == 0)
            #expect(friend.receivedStatusCodes == [200], "\(friend.messages.suffix(1500))")
            let notify = try #require(friend.firstMessage(sent: false, startingWith: "NOTIFY "))
            #expect(notify.header("Subscription-State")?.hasPrefix("active") == true, "\(notify.lines)")
            #expect(notify.header("Content-Type") == "application/pidf+xml")
            #expect(notify.lines.contains { $0.contains("<basic>") }, "\(notify.lines)")

            // The stranger listened 500 ms after its 403 (a NOTIFY then fails its run).
            #expect(stranger.firstMessage(sent: false, startingWith: "NOTIFY ") == nil)
            try await journal.wait("both requests") { $0.count >= 2 }
            #expect(journal.records.map(\.isAccepted) == [false, true])
            #expect(journal.records.map(\.watcher.uri) == ["sip:stranger@example.test", "sip:friend@example.test"])
            #expect(journal.records.allSatisfy { $0.account == account })
        }
    }
}
