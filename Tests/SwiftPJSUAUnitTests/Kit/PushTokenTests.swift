import Foundation
import KitTestSupport
import PJSUATestSupport
import SwiftPJSUA
import SwiftPJSUAKit
import Testing

/// The VoIP push token on its way to the REGISTER (fake engine): every bound account with
/// push parameters gets it once per change, also when it came before the account.
@Suite("Push token to REGISTER (fake engine)")
struct PushTokenTests {
    let engine = FakeCallEngine(unknownCalls: .accept)
    let provider = RecordingProvider()
    let router: CallRouter
    let bob = Account(slot: 0, generation: 1)
    let carol = Account(slot: 1, generation: 2)
    /// An account with no push parameters: not woken by pushes, so it takes no token.
    let local = Account(slot: 2, generation: 3)
    static let token = Data([0x0f, 0xa0, 0x00, 0xff])

    init() {
        router = CallRouter(engine: engine, provider: provider, clock: ManualClock())
        engine.setPushConfiguration(
            .apns(teamID: "ABCDE12345", bundleID: "com.example.phone", token: "old"), of: bob)
        engine.setPushConfiguration(
            PushConfiguration(provider: "fcm", resourceID: "old", scope: .allRequests), of: carol)
    }

    var pushRegisters: [EngineRecord] {
        engine.records.filter { if case .reRegisterWithPush = $0 { true } else { false } }
    }

    @Test("A new token re-registers every bound account with push parameters, keeping their other parameters")
    func newToken() async throws {
        await router.bind(bob, pushHint: "bob")
        await router.bind(carol, pushHint: "carol")
        await router.bind(local, pushHint: "local")
        let updated = await router.updatePushToken(Self.token)
        #expect(updated == [bob, carol])
        #expect(pushRegisters == [.reRegisterWithPush(bob, "0fa000ff"), .reRegisterWithPush(carol, "0fa000ff")])
        #expect(await router.pushToken == "0fa000ff")
        // Only the pn-prid changed.
        let bobPush = try #require(await engine.pushConfiguration(of: bob))
        #expect(bobPush == .apns(teamID: "ABCDE12345", bundleID: "com.example.phone", token: "0fa000ff"))
        #expect(
            await engine.pushConfiguration(of: carol)
                == PushConfiguration(provider: "fcm", resourceID: "0fa000ff", scope: .allRequests))
        #expect(provider.records.isEmpty)
    }

    @Test("The same token again sends nothing; a different one sends one REGISTER per account")
    func oncePerChange() async throws {
        await router.bind(bob, pushHint: "bob")
        #expect(await router.updatePushToken(Self.token) == [bob])
        #expect(await router.updatePushToken(Self.token) == [])
        #expect(await router.updatePushToken(resourceID: "0fa000ff") == [])
        #expect(pushRegisters.count == 1)
        #expect(await router.updatePushToken(Data([0x01])) == [bob])
        #expect(pushRegisters == [.reRegisterWithPush(bob, "0fa000ff"), .reRegisterWithPush(bob, "01")])
    }

    @Test("An account that already carries the token is left alone")
    func alreadyCarried() async throws {
        engine.setPushConfiguration(.apns(teamID: "T", bundleID: "b", token: "0fa000ff"), of: bob)
        await router.bind(bob, pushHint: "bob")
        #expect(await router.updatePushToken(Self.token) == [])
        #expect(engine.records.isEmpty)
    }

    @Test("A token that comes before the account is kept and applied when the account is bound")
    func tokenBeforeAccount() async throws {
        #expect(await router.updatePushToken(Self.token) == [])
        #expect(engine.records.isEmpty)
        await router.bind(bob, pushHint: "bob")
        #expect(pushRegisters == [.reRegisterWithPush(bob, "0fa000ff")])
        // Bound again (another hint): it carries the token already.
        await router.bind(bob, pushHint: "bob@example.com")
        await router.bind(local, pushHint: "local")
        #expect(pushRegisters.count == 1)
    }

    @Test("nil (the token invalidated) forgets it and sends nothing; the next token is applied")
    func invalidated() async throws {
        await router.bind(bob, pushHint: "bob")
        await router.updatePushToken(Self.token)
        #expect(await router.updatePushToken(nil) == [])
        #expect(await router.pushToken == nil)
        #expect(pushRegisters.count == 1)
        await router.bind(carol, pushHint: "carol")
        #expect(pushRegisters.count == 1, "no token to apply")
        #expect(await router.updatePushToken(Data([0xab])) == [bob, carol])
    }

    @Test("Updates made at once are applied in order, each token once: the last one wins")
    func concurrentUpdates() async throws {
        await router.bind(bob, pushHint: "bob")
        let router = router
        await withTaskGroup(of: Void.self) { group in
            for byte in UInt8(1)...5 {
                group.addTask { await router.updatePushToken(Data([byte])) }
            }
        }
        let sent = pushRegisters.compactMap { if case .reRegisterWithPush(_, let id) = $0 { id } else { nil } }
        #expect(Set(sent).count == sent.count, "a token sent twice: \(sent)")
        let last = try #require(await router.pushToken)
        #expect(sent.last == last)
        #expect(await engine.pushConfiguration(of: bob)?.resourceID == last)
    }

    @Test("A cold start is handed the router's token, and what it binds gets a token that came meanwhile")
    func coldStartUsesToken() async throws {
        let coldStart = ColdStartEngine(provider: provider, ready: ["bob": bob])
        coldStart.base.setPushConfiguration(.apns(teamID: "T", bundleID: "b", token: "0fa000ff"), of: bob)
        let router = CallRouter(engine: coldStart, provider: provider, clock: ManualClock())
        await router.updatePushToken(Self.token)
        let push = IncomingCallPush(
            sipCallID: "c1@h", caller: SIPAddress(uri: "sip:alice@example.com"), accountHint: "bob")
        _ = try await router.handlePush(.incomingCall(push))
        #expect(coldStart.preparations.records.map(\.pushToken) == ["0fa000ff"])
        // The engine added bob with the token: binding it sent nothing more.
        #expect(coldStart.base.records.isEmpty)

        // A token that comes while the engine is being prepared reaches the account once bound.
        let late = ColdStartEngine(provider: provider, ready: ["carol": carol])
        late.base.setPushConfiguration(.apns(teamID: "T", bundleID: "b", token: "stale"), of: carol)
        let lateRouter = CallRouter(engine: late, provider: provider, clock: ManualClock())
        late.onPrepare { await lateRouter.updatePushToken(Data([0x77])) }
        let second = IncomingCallPush(
            sipCallID: "c2@h", caller: SIPAddress(uri: "sip:a@example.com"), accountHint: "carol")
        _ = try await lateRouter.handlePush(.incomingCall(second))
        #expect(late.preparations.records.map(\.pushToken) == [nil])
        #expect(late.base.records == [.reRegisterWithPush(carol, "77")])
    }
}
