import Foundation
import KitTestSupport
import PJSUATestSupport
import SwiftPJSUA
import SwiftPJSUAKit
import Testing

/// A ``CallEngine`` over a ``FakeCallEngine`` that also answers the cold-start and identity
/// questions: what the router asked, and what the provider had been told when it asked.
final class ColdStartEngine: CallEngine {
    let base = FakeCallEngine(unknownCalls: .accept)
    let provider: RecordingProvider
    let ready: [String: Account]
    let failure: (any Error & Sendable)?
    let identityURI: String?
    /// Each preparation: the hint, the bound account, the calls reported by then and the
    /// push token the router handed over.
    let preparations = Journal<Preparation>()
    private let prepareHook = Protected<(@Sendable () async -> Void)?>(nil)

    struct Preparation: Sendable, Hashable {
        var hint: String?
        var bound: Account?
        var reportedBefore: [UUID]
        var pushToken: String? = nil
    }

    /// Runs `hook` inside each preparation, before it returns (while the router awaits it).
    func onPrepare(_ hook: @escaping @Sendable () async -> Void) { prepareHook.withLock { $0 = hook } }

    init(
        provider: RecordingProvider, ready: [String: Account] = [:], failure: (any Error & Sendable)? = nil,
        identity: String? = nil
    ) {
        self.provider = provider
        self.ready = ready
        self.failure = failure
        identityURI = identity
    }

    func prepareForPushedCall(
        accountHint: String?, boundAccount: Account?, pushToken: String?
    ) async throws -> [String: Account] {
        preparations.append(
            Preparation(
                hint: accountHint, bound: boundAccount, reportedBefore: provider.reportedCalls, pushToken: pushToken))
        if let hook = prepareHook.withLock({ $0 }) { await hook() }
        if let failure { throw failure }
        return ready
    }

    func prepareForPushedCall(accountHint: String?, boundAccount: Account?) async throws -> [String: Account] {
        try await prepareForPushedCall(accountHint: accountHint, boundAccount: boundAccount, pushToken: nil)
    }

    func pushConfiguration(of account: Account) async -> PushConfiguration? {
        await base.pushConfiguration(of: account)
    }
    func reRegister(_ account: Account, updatingPush push: PushConfiguration) async throws {
        try await base.reRegister(account, updatingPush: push)
    }

    func identity(of account: Account) async -> String? { identityURI }

    func makeCall(to uri: String, from account: Account) async throws -> Call {
        try await base.makeCall(to: uri, from: account)
    }
    func answer(_ call: Call, statusCode: Int) async throws { try await base.answer(call, statusCode: statusCode) }
    func hangup(_ call: Call, statusCode: Int?) async throws { try await base.hangup(call, statusCode: statusCode) }
    func activateAudioDevice() async throws { try await base.activateAudioDevice() }
    func deactivateAudioDevice() async throws { try await base.deactivateAudioDevice() }
    func reRegister(_ account: Account) async throws { try await base.reRegister(account) }
    func setHold(_ call: Call, onHold: Bool) async throws { try await base.setHold(call, onHold: onHold) }
    func setMuted(_ call: Call, muted: Bool) async throws { try await base.setMuted(call, muted: muted) }
    func sendDTMF(_ call: Call, digits: String) async throws { try await base.sendDTMF(call, digits: digits) }
    func setConferenced(_ call: Call, with other: Call, joined: Bool) async throws {
        try await base.setConferenced(call, with: other, joined: joined)
    }
}

/// A Flexisip-like payload: none of schema version 1's keys.
private func foreignPayload(callID: String) -> [AnyHashable: Any] {
    [
        "aps": ["content-available": 1] as [String: Any],
        "from-uri": "sip:alice@example.com", "display-name": "Alice", "call-id": callID, "to-user": "bob",
    ]
}

/// The custom parser an app would write for that shape.
private let foreignParser: IncomingCallPushParser = { dictionary in
    guard let from = dictionary["from-uri"] as? String else { return nil }
    return IncomingCallPush(
        sipCallID: dictionary["call-id"] as? String,
        caller: SIPAddress(displayName: dictionary["display-name"] as? String, uri: from),
        accountHint: dictionary["to-user"] as? String)
}

@Suite("VoIP push intake: parser hook, placeholders, cold start (fake engine)")
struct PushIntakeTests {
    let provider = RecordingProvider()
    let clock = ManualClock()
    let account = Account(slot: 0, generation: 1)

    func router(
        _ engine: any CallEngine, parser: IncomingCallPushParser? = nil, mapping: HandleMapping = .standard
    ) -> CallRouter {
        if let parser {
            return CallRouter(
                engine: engine, provider: provider, clock: clock, pushParser: parser, handleMapping: mapping)
        }
        return CallRouter(engine: engine, provider: provider, clock: clock, handleMapping: mapping)
    }

    @Test("A foreign payload read by a custom parser is a proper call, matched by its INVITE")
    func foreignPayloadWithParser() async throws {
        let engine = FakeCallEngine(unknownCalls: .accept)
        let router = router(engine, parser: foreignParser)
        await router.bind(account, pushHint: "bob")
        let receipt = router.receiveVoIPPush(foreignPayload(callID: "f1@example.com"))
        let id = CallIdentity.uuid(sipCallID: "f1@example.com")
        #expect(receipt.callUUID == id)
        #expect(receipt.update == CallUpdate(remoteURI: "sip:alice@example.com", displayName: "Alice"))
        guard case .call(let push) = receipt.content else {
            Issue.record("not a call: \(receipt)")
            return
        }
        #expect(push.sipCallID == "f1@example.com")
        #expect(push.accountHint == "bob")
        #expect(try await router.handleVoIPPush(receipt) == .reportedNewCall(id))
        let call = Call(slot: 0, generation: 7)
        await router.handle(
            .incomingCall(
                IncomingCall(
                    account: account, call: call, sipCallID: "f1@example.com",
                    from: SIPAddress(displayName: "Alice", uri: "sip:alice@example.com"), offeredVideo: false)))
        #expect(provider.reportedCalls == [id])
        #expect(!provider.records.contains { if case .ended = $0 { true } else { false } })
        #expect(engine.records == [.answer(call, 180)])
        #expect(await router.calls.map(\.call) == [call])
    }

    @Test("The same foreign payload without a parser: a placeholder call, reported and ended at once as failed")
    func foreignPayloadWithoutParser() async throws {
        let engine = FakeCallEngine(unknownCalls: .accept)
        let router = router(engine)
        let receipt = router.receiveVoIPPush(foreignPayload(callID: "f2@example.com"))
        guard case .unreadable(let why) = receipt.content else {
            Issue.record("read as \(receipt.content)")
            return
        }
        #expect(why == PushPayloadError.missingField("version").description)
        #expect(receipt.update.remoteURI == VoIPPushReceipt.placeholderURI)
        #expect(try await router.handleVoIPPush(receipt) == .unreadable(receipt.callUUID))
        #expect(
            provider.records == [
                .newIncomingCall(receipt.callUUID, CallUpdate(remoteURI: "unknown")),
                .ended(receipt.callUUID, .failed),
            ])
        #expect(await router.calls.isEmpty)
        #expect(engine.records.isEmpty)
    }

    @Test("With a custom parser, schema version 1 pushes are still read (the parser first, then v1)")
    func schemaV1StillRead() async throws {
        let router = router(FakeCallEngine(unknownCalls: .accept), parser: foreignParser)
        let v1 = try JSONSerialization.jsonObject(
            with: Data(#"{"version":1,"type":"call","callID":"v1@h","caller":{"uri":"sip:carol@h"}}"#.utf8))
        let dictionary = try #require(v1 as? [String: Any])
        let receipt = router.receiveVoIPPush(dictionary)
        #expect(receipt.callUUID == CallIdentity.uuid(sipCallID: "v1@h"))
        #expect(receipt.update.remoteURI == "sip:carol@h")
        let reregister: [AnyHashable: Any] = ["version": 1, "type": "reregister", "account": "bob"]
        #expect(router.receiveVoIPPush(reregister).content == .reRegister(accountHint: "bob"))
    }

    @Test("A VoIP reregister push: placeholder ended at once, then the bound account re-registers")
    func reRegisterAsVoIPPush() async throws {
        let engine = FakeCallEngine(unknownCalls: .accept)
        let router = router(engine)
        await router.bind(account, pushHint: "bob")
        let receipt = router.receiveVoIPPush(["version": 1, "type": "reregister", "account": "bob"])
        #expect(try await router.handleVoIPPush(receipt) == .reRegistered(account))
        #expect(provider.records.last == .ended(receipt.callUUID, .failed))
        #expect(engine.records == [.reRegister(account)])
    }

    @Test("A late VoIP push for a call that already ended is reported and ended at once as remote-ended")
    func lateVoIPPush() async throws {
        let router = router(FakeCallEngine(unknownCalls: .accept))
        await router.bind(account, pushHint: "bob")
        let call = Call(slot: 2, generation: 5)
        await router.handle(
            .incomingCall(
                IncomingCall(
                    account: account, call: call, sipCallID: "late@h", from: SIPAddress(uri: "sip:a@h"),
                    offeredVideo: false)))
        await router.handle(
            .callState(
                CallStateChange(call: call, state: .disconnected, sipCallID: "late@h", statusCode: 487, reason: "")))
        let id = CallIdentity.uuid(sipCallID: "late@h")
        let receipt = router.receiveVoIPPush(
            ["version": 1, "type": "call", "callID": "late@h", "caller": ["uri": "sip:a@h"] as [String: Any]])
        #expect(receipt.callUUID == id)
        #expect(try await router.handleVoIPPush(receipt) == .alreadyEnded(id))
        #expect(provider.records.suffix(2) == [.newIncomingCall(id, receipt.update), .ended(id, .remoteEnded)])
    }

    @Test("A call push reports first, then prepares the engine for the hint and binds what it registered")
    func coldStartOrder() async throws {
        let registered = Account(slot: 3, generation: 9)
        let engine = ColdStartEngine(provider: provider, ready: ["bob@example.com": registered])
        let router = router(engine)
        let push = IncomingCallPush(
            sipCallID: "cs@h", caller: SIPAddress(uri: "sip:alice@h"), accountHint: "bob@example.com")
        let id = CallIdentity.uuid(sipCallID: "cs@h")
        #expect(try await router.handlePush(.incomingCall(push)) == .reportedNewCall(id))
        // Prepared once, for the hint, with nothing bound yet, after the call was reported.
        #expect(engine.preparations.records == [.init(hint: "bob@example.com", bound: nil, reportedBefore: [id])])
        // The account it registered is bound: a second push finds it bound.
        let second = IncomingCallPush(
            sipCallID: "cs2@h", caller: SIPAddress(uri: "sip:alice@h"), accountHint: "bob@example.com")
        _ = try await router.handlePush(.incomingCall(second))
        #expect(engine.preparations.records.last?.bound == registered)
        // And its INVITE is reconciled on that account.
        let reregister = PushPayload.reRegister(accountHint: "bob@example.com")
        #expect(try await router.handlePush(reregister) == .reRegistered(registered))
    }

    @Test("A push whose INVITE came first prepares nothing; a refused report prepares nothing")
    func noPreparationWhenNotNeeded() async throws {
        let engine = ColdStartEngine(provider: provider)
        let router = router(engine)
        await router.bind(account, pushHint: "bob")
        let call = Call(slot: 1, generation: 2)
        await router.handle(
            .incomingCall(
                IncomingCall(
                    account: account, call: call, sipCallID: "first@h", from: SIPAddress(uri: "sip:a@h"),
                    offeredVideo: false)))
        let push = IncomingCallPush(sipCallID: "first@h", caller: SIPAddress(uri: "sip:a@h"), accountHint: "bob")
        #expect(
            try await router.handlePush(.incomingCall(push))
                == .alreadyReported(CallIdentity.uuid(sipCallID: "first@h")))
        provider.refuseNewCalls()
        let refused = IncomingCallPush(sipCallID: "dnd@h", caller: SIPAddress(uri: "sip:a@h"), accountHint: "bob")
        #expect(
            try await router.handlePush(.incomingCall(refused))
                == .rejectedBySystem(CallIdentity.uuid(sipCallID: "dnd@h")))
        #expect(engine.preparations.records.isEmpty)
    }

    @Test("A cold start that fails ends the reported call as failed at once and throws coldStartFailed")
    func coldStartFailure() async throws {
        struct Unreachable: Error, CustomStringConvertible { var description: String { "registrar silent" } }
        let engine = ColdStartEngine(provider: provider, failure: Unreachable())
        let router = router(engine)
        let push = IncomingCallPush(sipCallID: "fail@h", caller: SIPAddress(uri: "sip:a@h"), accountHint: "bob")
        let id = CallIdentity.uuid(sipCallID: "fail@h")
        await #expect(throws: CallRouterError.coldStartFailed("registrar silent")) {
            try await router.handlePush(.incomingCall(push))
        }
        #expect(provider.records == [.newIncomingCall(id, CallUpdate(remoteURI: "sip:a@h")), .ended(id, .failed)])
        #expect(await router.calls.isEmpty)
    }

    @Test("A dial action maps its phone-number handle with the account's domain and places the call there")
    func dialPhoneNumber() async throws {
        let engine = ColdStartEngine(
            provider: provider, identity: "\"Bob\" <sip:bob@pbx.example.com:5070;transport=tcp>")
        let router = router(engine)
        await router.bind(account, pushHint: "bob")
        let dial = CallAction(
            callUUID: UUID(), kind: .dial(CallHandle(.phoneNumber, "+1 (555) 010-9999"), account: nil, hasVideo: false))
        await router.perform(dial)
        #expect(engine.base.records == [.makeCall("sip:+15550109999@pbx.example.com:5070;user=phone")])
        #expect(await router.calls.map(\.id) == [dial.callUUID])
    }

    @Test("A dial action through a custom mapping, and one whose handle maps to nothing fails invalidHandle")
    func dialCustomAndInvalid() async throws {
        let engine = ColdStartEngine(provider: provider, identity: "sip:bob@example.com")
        let trunk = HandleMapping { handle, _ in
            handle.kind == .phoneNumber ? "sip:00\(handle.value.filter(\.isNumber))@trunk.example.net" : nil
        }
        let router = router(engine, mapping: trunk)
        await router.bind(account, pushHint: "bob")
        await router.perform(
            CallAction(
                callUUID: UUID(),
                kind: .dial(CallHandle(.phoneNumber, "+44 20 7946 0000"), account: nil, hasVideo: false)))
        #expect(engine.base.records == [.makeCall("sip:00442079460000@trunk.example.net")])
        let bad = CallAction(callUUID: UUID(), kind: .dial(CallHandle(.generic, "who?"), account: nil, hasVideo: false))
        await router.perform(bad)
        #expect(provider.records.last == .failed(bad.id, .invalidHandle("who?")))
        #expect(engine.base.records.count == 1)
    }
}

@Suite("Handle mapping")
struct HandleMappingTests {
    @Test(
        "The standard mapping",
        arguments: [
            (
                CallHandle(.phoneNumber, "+1 (555) 010-9999"), "sip:bob@example.com",
                "sip:+15550109999@example.com;user=phone"
            ),
            (
                CallHandle(.phoneNumber, "555.0100"), "sips:bob@example.com:5061",
                "sip:5550100@example.com:5061;user=phone"
            ),
            (CallHandle(.phoneNumber, "+15550109999"), nil, "tel:+15550109999"),
            (CallHandle(.phoneNumber, "tel:+15550109999"), "sip:bob@example.com", "tel:+15550109999"),
            (CallHandle(.generic, "sip:alice@example.org"), "sip:bob@example.com", "sip:alice@example.org"),
            (CallHandle(.generic, "+49 30 1234567"), "sip:bob@example.com", "sip:+49301234567@example.com;user=phone"),
            (CallHandle(.generic, "alice"), "<sip:bob@example.com;transport=tls>", "sip:alice@example.com"),
            (CallHandle(.generic, "alice@example.org"), nil, "sip:alice@example.org"),
            (CallHandle(.emailAddress, "carol@example.net"), "sip:bob@example.com", "sip:carol@example.net"),
        ] as [(CallHandle, String?, String)])
    func standard(handle: CallHandle, identity: String?, expected: String) {
        #expect(HandleMapping.standard.uri(for: handle, accountIdentity: identity) == expected)
    }

    @Test(
        "What the standard mapping refuses",
        arguments: [
            (CallHandle(.phoneNumber, "*21#"), "sip:bob@example.com"),
            (CallHandle(.phoneNumber, "call me"), "sip:bob@example.com"),
            (CallHandle(.phoneNumber, "+"), "sip:bob@example.com"),
            (CallHandle(.generic, "alice"), nil),
            (CallHandle(.generic, "al ice"), "sip:bob@example.com"),
            (CallHandle(.emailAddress, "not-an-address"), "sip:bob@example.com"),
            (CallHandle(.emailAddress, "a@b;lr"), "sip:bob@example.com"),
        ] as [(CallHandle, String?)])
    func refused(handle: CallHandle, identity: String?) {
        #expect(HandleMapping.standard.uri(for: handle, accountIdentity: identity) == nil)
    }

    @Test("telURIs: phone numbers become tel: URIs whatever the account")
    func tel() {
        #expect(
            HandleMapping.telURIs.uri(for: CallHandle(.phoneNumber, "+1 555 010 9999"), accountIdentity: "sip:b@x")
                == "tel:+15550109999")
        #expect(
            HandleMapping.telURIs.uri(for: CallHandle(.generic, "sip:a@x"), accountIdentity: "sip:b@x") == "sip:a@x")
    }
}

/// A provider that delivers actions, as the CallKit adapter does.
final class ActionSourceProvider: CallActionSource {
    let recorder = RecordingProvider()
    let deliveries = Journal<Int>()
    private let inputs = AsyncStream<CallAction>.makeStream()

    func send(_ action: CallAction) { inputs.continuation.yield(action) }

    func deliverActions(to router: CallRouter) {
        deliveries.append(1)
        let stream = inputs.stream
        Task {
            for await action in stream { await router.perform(action) }
        }
    }

    func reportNewIncomingCall(_ call: UUID, update: CallUpdate) async throws {
        try await recorder.reportNewIncomingCall(call, update: update)
    }
    func reportCallUpdated(_ call: UUID, update: CallUpdate) { recorder.reportCallUpdated(call, update: update) }
    func reportOutgoingCallStartedConnecting(_ call: UUID) { recorder.reportOutgoingCallStartedConnecting(call) }
    func reportOutgoingCallConnected(_ call: UUID) { recorder.reportOutgoingCallConnected(call) }
    func reportCallEnded(_ call: UUID, reason: CallEndReason) { recorder.reportCallEnded(call, reason: reason) }
    func fulfill(_ action: UUID) { recorder.fulfill(action) }
    func fail(_ action: UUID, error: CallActionError) { recorder.fail(action, error: error) }
}

@Suite("One-step wiring and push tokens")
struct WiringTests {
    @Test("A provider that is a CallActionSource is wired by the router's init: its actions reach the router")
    func oneStepWiring() async throws {
        let provider = ActionSourceProvider()
        let engine = FakeCallEngine(unknownCalls: .accept)
        let router = CallRouter(engine: engine, provider: provider)
        await router.bind(Account(slot: 0, generation: 1), pushHint: "bob")
        #expect(provider.deliveries.records == [1])
        // An action sent before anything else is done with the router is still performed.
        let start = CallAction(
            callUUID: UUID(), kind: .start(uri: "sip:alice@example.com", account: nil, hasVideo: false))
        provider.send(start)
        try await engine.journal.wait("the start action performed") { $0 == [.makeCall("sip:alice@example.com")] }
        let end = CallAction(callUUID: UUID(), kind: .end)
        provider.send(end)
        try await provider.recorder.wait(for: .fulfilled(end.id))
    }

    @Test("apns(token: Data) writes the token as lowercase hex, with the pushType suffix")
    func dataToken() {
        let token = Data([0x00, 0x0f, 0xa0, 0xff, 0x7e])
        let push = PushConfiguration.apns(teamID: "ABCDE12345", bundleID: "com.example.phone", token: token)
        #expect(push.resourceID == "000fa0ff7e")
        #expect(push.parameter == "ABCDE12345.com.example.phone.voip")
        #expect(push == .apns(teamID: "ABCDE12345", bundleID: "com.example.phone", token: "000fa0ff7e"))
        let bare = PushConfiguration.apns(teamID: "T", bundleID: "app", token: Data(), pushType: "")
        #expect(bare.parameter == "T.app")
        #expect(bare.resourceID == "")
    }
}
