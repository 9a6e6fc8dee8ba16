import Foundation
import SwiftPJSUA
import SwiftPJSUAKit
import Testing

@Suite("Call registry")
struct CallRegistryTests {
    let alice = SIPAddress(displayName: "Alice", uri: "sip:alice@example.com")
    let account = Account(slot: 0, generation: 1)
    let other = Account(slot: 1, generation: 2)

    @Test("Push then INVITE with the same Call-ID: one entry, the INVITE adds the engine call")
    func pushThenInvite() {
        var registry = CallRegistry()
        let push = registry.recordPush(IncomingCallPush(sipCallID: "c1@h", caller: SIPAddress(uri: alice.uri)))
        #expect(push.isNew)
        #expect(push.entry.isPushOnly)
        #expect(push.entry.id == CallIdentity.uuid(sipCallID: "c1@h"))
        let call = Call(slot: 3, generation: 7)
        let invite = registry.recordInvite(
            call: call, account: account, accountHint: nil, sipCallID: "c1@h", from: alice, hasVideo: false)
        #expect(!invite.isNew)
        #expect(invite.updateChanged)  // The INVITE brought the display-name.
        #expect(invite.entry.id == push.entry.id)
        #expect(invite.entry.call == call)
        #expect(invite.entry.remote.displayName == "Alice")
        #expect(registry.all.count == 1)
        #expect(registry.entry(for: call)?.id == push.entry.id)
    }

    @Test("INVITE then push: the push joins it and changes nothing it already has")
    func inviteThenPush() {
        var registry = CallRegistry()
        let call = Call(slot: 3, generation: 7)
        let invite = registry.recordInvite(
            call: call, account: account, accountHint: nil, sipCallID: "c1@h", from: alice, hasVideo: false)
        #expect(invite.isNew)
        let push = registry.recordPush(
            IncomingCallPush(
                serverUUID: UUID(), sipCallID: "c1@h", caller: SIPAddress(displayName: "Other", uri: alice.uri)))
        #expect(!push.isNew)
        #expect(!push.updateChanged)
        #expect(push.entry.id == invite.entry.id)
        #expect(push.entry.remote.displayName == "Alice")
        #expect(registry.all.count == 1)
    }

    @Test("A server UUID is kept, and a second push with the same UUID joins it")
    func serverUUID() {
        var registry = CallRegistry()
        let id = UUID()
        let first = registry.recordPush(IncomingCallPush(serverUUID: id, caller: alice))
        let again = registry.recordPush(IncomingCallPush(serverUUID: id, sipCallID: "late@h", caller: alice))
        #expect(first.entry.id == id)
        #expect(!again.isNew)
        #expect(again.entry.sipCallID == "late@h")
        #expect(registry.all.count == 1)
    }

    @Test("A push without a Call-ID reconciles with the next INVITE for its account, oldest first")
    func pushWithoutCallID() {
        var registry = CallRegistry()
        let first = registry.recordPush(IncomingCallPush(caller: alice, accountHint: "bob"))
        let second = registry.recordPush(IncomingCallPush(caller: alice, accountHint: "bob"))
        #expect(first.entry.id != second.entry.id)
        // An INVITE on another account does not take them.
        let elsewhere = registry.recordInvite(
            call: Call(slot: 1, generation: 1), account: other, accountHint: "carol", sipCallID: "x@h", from: alice,
            hasVideo: false)
        #expect(elsewhere.isNew)
        let next = registry.recordInvite(
            call: Call(slot: 2, generation: 2), account: account, accountHint: "bob", sipCallID: "y@h", from: alice,
            hasVideo: false)
        #expect(next.entry.id == first.entry.id)
        #expect(next.entry.sipCallID == "y@h")
        let then = registry.recordInvite(
            call: Call(slot: 3, generation: 3), account: account, accountHint: "bob", sipCallID: "z@h", from: alice,
            hasVideo: false)
        #expect(then.entry.id == second.entry.id)
        #expect(registry.all.count == 3)
    }

    @Test("Call-IDs are compared exactly: case, whitespace and punctuation all count")
    func exactCallIDs() {
        let long = String(repeating: #"x!%<>"'\;:@.~()[]{}?/`+*_-"#, count: 30) + "@example.com"
        var registry = CallRegistry()
        let push = registry.recordPush(IncomingCallPush(sipCallID: long, caller: alice))
        for nearMiss in [long.uppercased(), long + " ", " " + long, String(long.dropLast()), long + "m"] {
            #expect(registry.entry(sipCallID: nearMiss) == nil)
        }
        let decoy = registry.recordInvite(
            call: Call(slot: 1, generation: 1), account: account, accountHint: nil, sipCallID: long.uppercased(),
            from: alice, hasVideo: false)
        #expect(decoy.isNew)
        let exact = registry.recordInvite(
            call: Call(slot: 2, generation: 2), account: account, accountHint: nil, sipCallID: long, from: alice,
            hasVideo: false)
        #expect(exact.entry.id == push.entry.id)
    }

    @Test("Only push-only entries expire; removal forgets the call")
    func expiryAndRemoval() {
        var registry = CallRegistry()
        let waiting = registry.recordPush(IncomingCallPush(sipCallID: "a@h", caller: alice))
        let arrived = registry.recordPush(IncomingCallPush(sipCallID: "b@h", caller: alice))
        _ = registry.recordInvite(
            call: Call(slot: 1, generation: 1), account: account, accountHint: nil, sipCallID: "b@h", from: alice,
            hasVideo: false)
        #expect(registry.expire(arrived.entry.id) == nil)
        #expect(registry.expire(waiting.entry.id)?.id == waiting.entry.id)
        #expect(registry.remove(arrived.entry.id) != nil)
        #expect(registry.all.isEmpty)
    }
}
