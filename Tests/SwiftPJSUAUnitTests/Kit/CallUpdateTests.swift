import Foundation
import KitTestSupport
import SwiftPJSUA
import SwiftPJSUAKit
import Testing

/// What CallKit is told about a call: the handle it shows for the far end, and video only
/// when the engine can carry it (fake engine).
@Suite("What the call UI is told: handles and video (fake engine)")
struct CallUpdateTests {
    static let handles: [(uri: String, kind: CallHandle.Kind, value: String)] = [
        // Numbers: tel: URIs, and SIP users that are E.164 or local numbers, separators removed.
        ("tel:+15550109999", .phoneNumber, "+15550109999"),
        ("tel:+1-555-010-9999;phone-context=example.com", .phoneNumber, "+15550109999"),
        ("tel:5550109", .phoneNumber, "5550109"),
        ("sip:+15550109999@example.com;user=phone", .phoneNumber, "+15550109999"),
        ("sip:+1-555-010-9999@example.com", .phoneNumber, "+15550109999"),
        ("sip:+1%20(555)%20010.9999@example.com", .phoneNumber, "+15550109999"),
        ("sip:0301234567@192.0.2.7:5070;transport=tcp", .phoneNumber, "0301234567"),
        ("sips:+4930123456@example.com", .phoneNumber, "+4930123456"),
        ("sip:100@pbx.example.com", .phoneNumber, "100"),
        ("  sip:+15550109999@example.com  ", .phoneNumber, "+15550109999"),
        // Addresses that read as email: sip:user@domain and nothing more.
        ("sip:alice@example.com", .emailAddress, "alice@example.com"),
        ("sip:alice.smith+work@mail.example.co.uk", .emailAddress, "alice.smith+work@mail.example.co.uk"),
        ("SIP:alice@example.com", .emailAddress, "alice@example.com"),
        // Everything else is shown as the URI itself.
        ("sip:alice@example.com:5070", .generic, "sip:alice@example.com:5070"),
        ("sip:alice@example.com;transport=tcp", .generic, "sip:alice@example.com;transport=tcp"),
        ("sip:alice@example.com?subject=hi", .generic, "sip:alice@example.com?subject=hi"),
        ("sip:sipp@127.0.0.1", .generic, "sip:sipp@127.0.0.1"),
        ("sip:alice@[2001:db8::1]", .generic, "sip:alice@[2001:db8::1]"),
        ("sip:alice@localhost", .generic, "sip:alice@localhost"),
        ("sips:alice@example.com", .generic, "sips:alice@example.com"),
        ("sip:example.com", .generic, "sip:example.com"),
        ("sip:*31%23555@example.com", .generic, "sip:*31%23555@example.com"),
        ("sip:+1555abc@example.com", .emailAddress, "+1555abc@example.com"),
        ("sip:al%20ice@example.com", .generic, "sip:al%20ice@example.com"),
        ("tel:*31#", .generic, "tel:*31#"),
        ("unknown", .generic, "unknown"),
    ]

    @Test("The far end's URI becomes a phone-number, email or generic handle", arguments: handles)
    func remoteHandle(uri: String, kind: CallHandle.Kind, value: String) {
        #expect(CallUpdate(remoteURI: uri).remoteHandle == CallHandle(kind, value))
    }

    @Test(
        "Calling back a shown email or generic handle reaches the same URI",
        arguments: ["sip:alice@example.com", "sip:alice@example.com:5070", "sips:alice@example.com", "sip:x@127.0.0.1"])
    func callBack(uri: String) {
        let handle = CallHandle(remoteURI: uri)
        #expect(HandleMapping.standard.uri(for: handle, accountIdentity: "sip:bob@other.example.net") == uri)
    }

    @Test("A shown number is called back in the account's domain")
    func callBackNumber() {
        let handle = CallHandle(remoteURI: "sip:+1-555-010-9999@carrier.example.com;user=phone")
        #expect(
            HandleMapping.standard.uri(for: handle, accountIdentity: "sip:bob@example.net")
                == "sip:+15550109999@example.net;user=phone")
    }

    static func invite(_ call: Call, _ callID: String, video: Bool) -> PJSUAEvent {
        .incomingCall(
            IncomingCall(
                account: Account(slot: 0, generation: 1), call: call, sipCallID: callID,
                from: SIPAddress(uri: "sip:+15550109999@example.com;user=phone"), offeredVideo: video))
    }

    @Test(
        "hasVideo is reported only when the engine carries video and the call offers it",
        arguments: [(false, false, false), (false, true, false), (true, false, false), (true, true, true)])
    func hasVideo(engineCarriesVideo: Bool, offered: Bool, shown: Bool) async throws {
        let provider = RecordingProvider()
        let router = CallRouter(
            engine: FakeCallEngine(unknownCalls: .accept, carriesVideo: engineCarriesVideo), provider: provider,
            clock: ManualClock())
        await router.bind(Account(slot: 0, generation: 1), pushHint: "bob")
        // An INVITE, a push and PushKit's synchronous receipt, each offering video or not.
        await router.handle(Self.invite(Call(slot: 0, generation: 10), "c1@h", video: offered))
        let pushed = IncomingCallPush(
            sipCallID: "c2@h", caller: SIPAddress(uri: "sip:alice@example.com"), hasVideo: offered, accountHint: "bob")
        _ = try await router.handlePush(.incomingCall(pushed))
        let receipt = router.receiveVoIPPush(
            ["version": 1, "type": "call", "callID": "c3@h", "video": offered, "caller": ["uri": "sip:a@example.com"]])
        #expect(receipt.update.hasVideo == shown)
        let reported = provider.records.compactMap {
            if case .newIncomingCall(_, let update) = $0 { update } else { nil }
        }
        #expect(reported.map(\.hasVideo) == [shown, shown])
        #expect(await router.calls.map(\.hasVideo) == [shown, shown])
        // A video start action: the call is recorded as audio unless the engine carries video.
        let start = CallAction(
            callUUID: UUID(), kind: .start(uri: "sip:carol@example.com", account: nil, hasVideo: true))
        await router.perform(start)
        #expect(await router.calls.first { $0.id == start.callUUID }?.hasVideo == engineCarriesVideo)
    }

    /// An engine of an app's own that says nothing about video.
    struct SilentEngine: CallEngine {
        func makeCall(to uri: String, from account: Account) async throws -> Call { Call(slot: 0, generation: 1) }
        func answer(_ call: Call, statusCode: Int) async throws {}
        func hangup(_ call: Call, statusCode: Int?) async throws {}
        func activateAudioDevice() async throws {}
        func deactivateAudioDevice() async throws {}
        func reRegister(_ account: Account) async throws {}
        func setHold(_ call: Call, onHold: Bool) async throws {}
        func setMuted(_ call: Call, muted: Bool) async throws {}
        func sendDTMF(_ call: Call, digits: String) async throws {}
        func setConferenced(_ call: Call, with other: Call, joined: Bool) async throws {}
    }

    @Test("The engine carries no video today; an engine that does not say follows it, and takes no push tokens")
    func engineCapability() async {
        #expect(PJSUA.carriesVideo == false)
        let engine = SilentEngine()
        #expect(engine.carriesVideo == PJSUA.carriesVideo)
        #expect(await engine.pushConfiguration(of: Account(slot: 0, generation: 1)) == nil)
        await #expect(throws: CallActionError.unsupported) {
            try await engine.reRegister(
                Account(slot: 0, generation: 1), updatingPush: PushConfiguration(provider: "apns", resourceID: "00"))
        }
    }
}
