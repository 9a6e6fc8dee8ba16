import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Buddies: presence subscriptions (RFC 3856, RFC 6665) against a sipp notifier and between
/// two accounts through Kamailio, and the account's own status.
extension EngineTests {
    /// Reads `engine.buddyEvents` into a journal until cancelled.
    private final class BuddyReader: Sendable {
        let journal = Journal<BuddyEvent>()
        let task: Task<Void, Never>

        init(_ stream: AsyncStream<BuddyEvent>) {
            let journal = journal
            task = Task { for await event in stream { journal.append(event) } }
        }

        deinit { task.cancel() }

        static func presence(_ records: [BuddyEvent], of buddy: Buddy) -> [BuddyPresence] {
            records.compactMap { if case .presence(let change) = $0, change.buddy == buddy { change } else { nil } }
        }

        /// Waits until a presence event of `buddy` satisfies `predicate` and returns it.
        func presence(
            of buddy: Buddy, _ what: String, timeout: Duration = .seconds(5),
            where predicate: @escaping @Sendable (BuddyPresence) -> Bool
        ) async throws -> BuddyPresence {
            let records = try await journal.wait(what, timeout: timeout) {
                Self.presence($0, of: buddy).contains(where: predicate)
            }
            return try #require(Self.presence(records, of: buddy).first(where: predicate))
        }
    }

    @Test(
        "A buddy's NOTIFYs from sipp: busy with a note, a cut-off PIDF answered 488, terminated with retry-after"
    )
    func buddyPresenceFromNotifier() async throws {
        try await EngineHarness.run { h in
            let reader = BuddyReader(h.engine.buddyEvents)
            let sipp = try await Sipp.start(
                scenario: "uas_presence_notifier.xml", folder: h.folder, timeout: .seconds(10))
            let buddy = try await h.engine.addBuddy(sipp.uri)

            let busy = try await reader.presence(of: buddy, "busy") { $0.status.availability == .busy }
            #expect(busy.status.note == "On the phone", "\(busy)")
            #expect(busy.uri == sipp.uri)
            let back = try await reader.presence(of: buddy, "online again") {
                $0.status.availability == .online && $0.status.note == "Back again"
            }
            #expect(back.subscription.phase == .active)
            let ended = try await reader.presence(of: buddy, "terminated") { $0.subscription.phase == .terminated }
            #expect(ended.subscription.reason == "probation", "\(ended.subscription)")
            #expect(ended.subscription.retryAfter == .seconds(30), "\(ended.subscription)")
            #expect(ended.subscription.statusCode == nil)

            #expect(try await sipp.finish(timeout: .seconds(10)).exitStatus == 0, "\(sipp.messages.suffix(2000))")
            // What the notifier saw: its SUBSCRIBE from the engine, 200 to the readable NOTIFYs and
            // 488 to the cut-off one.
            let subscribe = try #require(sipp.firstMessage(sent: false, startingWith: "SUBSCRIBE "))
            #expect(subscribe.header("Event") == "presence", "\(subscribe.lines)")
            #expect(sipp.receivedStatusCodes == [200, 488, 200, 200], "\(sipp.messages.suffix(2000))")
            // The unreadable body changed nothing: no event between busy and online again says otherwise.
            let changes = BuddyReader.presence(reader.journal.records, of: buddy)
            let busyIndex = try #require(changes.firstIndex { $0.status.availability == .busy })
            let backIndex = try #require(changes.firstIndex { $0.status.note == "Back again" })
            #expect(changes[busyIndex..<backIndex].allSatisfy { $0.status.availability == .busy }, "\(changes)")

            try await h.engine.removeBuddy(buddy)
            await #expect(throws: PJSUAUsageError.unknownBuddy(buddy)) { try await h.engine.removeBuddy(buddy) }
            await #expect(throws: PJSUAUsageError.unknownBuddy(buddy)) { try await h.engine.presence(of: buddy) }
        }
    }

    @Test("A presence refresh answered 481 ends the subscription with status 481")
    func buddyRefreshAnswered481() async throws {
        try await EngineHarness.run { h in
            let reader = BuddyReader(h.engine.buddyEvents)
            let sipp = try await Sipp.start(
                scenario: "uas_presence_refresh_481.xml", folder: h.folder, timeout: .seconds(10))
            let buddy = try await h.engine.addBuddy(sipp.uri)
            _ = try await reader.presence(of: buddy, "online") { $0.status.availability == .online }
            let ended = try await reader.presence(of: buddy, "the 481", timeout: .seconds(8)) {
                $0.subscription.phase == .terminated
            }
            #expect(ended.subscription.statusCode == 481, "\(ended.subscription)")
            try await h.engine.removeBuddy(buddy)
            #expect(try await sipp.finish(timeout: .seconds(10)).exitStatus == 0, "\(sipp.messages.suffix(2000))")
            // Two SUBSCRIBEs in one dialog: the refresh carried the first one's Call-ID.
            let subscribes = sipp.messageBlocks.filter {
                $0.direction == .received && $0.firstLine.hasPrefix("SUBSCRIBE ")
            }
            #expect(subscribes.count >= 2)
            #expect(Set(subscribes.prefix(2).map { $0.header("Call-ID") }).count == 1)
        }
    }

    @Test("Buddy misuse throws typed errors: an invalid URI, both subscriptions, dialogs where pjproject lacks them")
    func buddyMisuse() async throws {
        try await EngineHarness.run { h in
            await #expect(throws: PJSUAUsageError.invalidURI("not a uri")) { try await h.engine.addBuddy("not a uri") }
            await #expect(throws: PJSUAUsageError.self) {
                try await h.engine.addBuddy("sip:x@127.0.0.1", subscribesToPresence: true, watchesDialogs: true)
            }
            let stale = Buddy(slot: 0, generation: 1)
            await #expect(throws: PJSUAUsageError.unknownBuddy(stale)) {
                try await h.engine.setSubscribesToPresence(true, of: stale)
            }
            if !PJSUA.supportsDialogWatching {
                await #expect(throws: PJSUAUsageError.self) {
                    try await h.engine.addBuddy("sip:x@127.0.0.1", subscribesToPresence: false, watchesDialogs: true)
                }
            }
        }
    }

    @Test("Two accounts through Kamailio see each other's presence go online, busy, offline, each within 2 s")
    func presenceThroughKamailio() async throws {
        try await EngineHarness.run { h in
            let kamailio = try await Kamailio.start(folder: h.folder)
            let alice = try await h.registeredAccount(kamailio.account("alice"))
            var bobConfiguration = kamailio.account("bob")
            bobConfiguration.watchers = WatcherPolicy(allowedWatchers: [kamailio.aor("alice")])
            let bob = try await h.registeredAccount(bobConfiguration)
            let reader = BuddyReader(h.engine.buddyEvents)

            // With 2.12.1 pjsua picks the account for the URI: alice, the first with that domain.
            let buddy = try await h.engine.addBuddy(
                kamailio.aor("bob"), account: PJSUA.supportsBuddyAccounts ? alice : nil)
            // An account starts offline (pjsua's default) until its app says otherwise.
            let first = try await reader.presence(of: buddy, "the subscription", timeout: .seconds(5)) {
                $0.subscription.phase == .active
            }
            #expect(first.uri == kamailio.aor("bob"))
            #expect(first.status.availability == .offline, "\(first)")

            for (status, name) in [
                (PresenceStatus(.online, note: "Here"), "online"), (PresenceStatus(.busy, note: "In a call"), "busy"),
                (PresenceStatus(.offline), "offline"),
            ] {
                let clock = ContinuousClock()
                let start = clock.now
                try await h.engine.setPresence(status, for: bob)
                let seen = try await reader.presence(of: buddy, "bob \(name)", timeout: .seconds(2)) {
                    $0.status.availability == status.availability
                }
                #expect(clock.now - start < .seconds(2))
                #expect(seen.status.note == status.note, "\(seen)")
            }

            // Kamailio relayed alice's SUBSCRIBE and bob's NOTIFYs (the first and three changes).
            let requests = kamailio.receivedRequests
            #expect(requests.contains { $0.method == "SUBSCRIBE" && $0.user == "alice" }, "\(requests)")
            #expect(requests.filter { $0.method == "NOTIFY" && $0.user == "bob" }.count >= 4, "\(requests)")
            try await h.engine.removeBuddy(buddy)
        }
    }
}

extension EngineTests {
    @Test("A busy lamp reports the watched call early, confirmed, terminated (2.12.1: a typed unsupported error)")
    func busyLampFromNotifier() async throws {
        try await EngineHarness.run { h in
            let sipp = try await Sipp.start(
                scenario: "uas_dialog_notifier.xml", folder: h.folder, timeout: .seconds(10))
            guard PJSUA.supportsDialogWatching else {
                // pjproject 2.12.1 has no dialog-event subscriptions: a typed refusal, nothing sent.
                await #expect(throws: PJSUAUsageError.self) {
                    try await h.engine.addBuddy(sipp.uri, subscribesToPresence: false, watchesDialogs: true)
                }
                sipp.process.stop()
                #expect(sipp.firstMessage(sent: false, startingWith: "SUBSCRIBE ") == nil)
                return
            }
            let journal = Journal<BuddyDialogs>()
            let events = h.engine.buddyEvents
            let reader = Task { for await case .dialogs(let change) in events { journal.append(change) } }
            defer { reader.cancel() }
            let buddy = try await h.engine.addBuddy(sipp.uri, subscribesToPresence: false, watchesDialogs: true)
            let records = try await journal.wait("the call to end") {
                $0.contains { $0.buddy == buddy && $0.state == .terminated }
            }
            // Each state once, in order (repeats from subscription changes collapsed).
            var states: [DialogState] = []
            for state in records.compactMap(\.state) where states.last != state { states.append(state) }
            #expect(states == [.early, .confirmed, .terminated], "\(records)")
            let early = try #require(records.first { $0.state == .early })
            #expect(early.dialogID == "lamp-call-1")
            #expect(early.direction == "recipient")
            #expect(early.subscription.phase == .active)
            #expect(try await sipp.finish(timeout: .seconds(10)).exitStatus == 0, "\(sipp.messages.suffix(2000))")
            let subscribe = try #require(sipp.firstMessage(sent: false, startingWith: "SUBSCRIBE "))
            #expect(subscribe.header("Event") == "dialog", "\(subscribe.lines)")
            #expect(sipp.receivedStatusCodes == [200, 200, 200])
            try await h.engine.removeBuddy(buddy)
        }
    }
}
