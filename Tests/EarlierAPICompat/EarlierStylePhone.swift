import Foundation
import SwiftPJSUA
import SwiftPJSUAKit

// A program written against the earlier iOS-only swift-pjsua: every call its README's usage
// showed, with the earlier names and labels (`PJSUA()`, `start(.init(port:transport:))`,
// `addAccount(id:registrar:username:password:push: .apns(teamID:bundleID:token:))`, a
// `for await event in phone.events` loop answering with `answer(call)`, `makeCall(to:from:)`,
// `activateAudioDevice()` / `deactivateAudioDevice()` in `Task {}` from CallKit's
// didActivate / didDeactivate). The only edits from the earlier code are the event patterns
// (marked `// pattern edit`, with the earlier pattern beside them).
//
// It is a module of its own, as an app would be, importing only the library. Its steps are
// deprecated witnesses of a protocol that names only current types: the earlier names compile
// with deprecation warnings (a migrant's to-do list), and a deprecated declaration may use
// deprecated names silently, so this package keeps building with zero warnings. The
// compatibility test (SwiftPJSUATests, Compatibility/EarlierAPI+ProgramTests.swift) drives the steps through
// the protocol against Kamailio.

/// The steps of the earlier-style program, in this package's own types, for the test.
public protocol EarlierStyleSteps: Sendable {
    /// The engine the program created with `PJSUA()`.
    var phone: PJSUA { get }
    /// What the program's event loop did, in order: `answered <call>` and
    /// `<call> <state> <last status>` lines.
    var transcript: Transcript { get }
    /// README step: `start(.init(port: port, transport: .udp))`.
    func start(port: UInt32) async throws
    /// README step: `addAccount(id:registrar:username:password:push: .apns(…))` with a device
    /// token, `addAccount(id:registrar:username:password:)` (no push) without.
    func addAccount(id: String, registrar: String, username: String, password: String, token: String?) async throws
        -> Account
    /// README step: in a `Task`, `for await event in phone.events`, answering incoming calls.
    func listen()
    /// README step: `makeCall(to:from:)`.
    func makeCall(to uri: String, from account: Account) async throws -> Call
    /// CallKit's `didActivate`: `Task { try await phone.activateAudioDevice() }`.
    func didActivate() -> Task<Void, any Error>
    /// CallKit's `didDeactivate`: `Task { await phone.deactivateAudioDevice() }`.
    func didDeactivate() -> Task<Void, Never>
    /// Other calls the earlier package had, as it spelled them: `setMute(_:muted:)` and
    /// `sendDTMF(_:digits:duration:)` with `UInt32` milliseconds.
    func muteAndSendDigits(_ call: Call, digits: String) async throws
    /// `hangupAll()`, which the earlier package had non-throwing: called without `try`.
    func hangUpEverything() async
    /// The Kit's UUID of a call with no server UUID, both earlier ways:
    /// `CallIdentity.uuid(serverProvided:sipCallID:)` and `UUID(version5:namespace:)`.
    static func callUUIDs(sipCallID: String) -> [UUID]
    /// `makeCall(to:from:video: true)`, which this package refuses (it has no video).
    func makeVideoCall(to uri: String, from account: Account) async throws -> Call
    /// Configurations spelled the earlier ways: `.init(port: 5070, transport: .tcp)`,
    /// `.init(transport: .tls)` (the earlier default port) and `.init(port: 70_000)`.
    static func earlierConfigurations() -> [Configuration]
}

/// The lines the program's event loop writes.
public actor Transcript {
    /// Every line so far.
    public private(set) var lines: [String] = []

    /// Adds one line.
    public func append(_ line: String) { lines.append(line) }
}

/// The earlier-style app: one phone, its event loop, its CallKit callbacks.
public final class EarlierStylePhone: EarlierStyleSteps {
    public let phone = PJSUA()
    public let transcript = Transcript()
    /// What the test changes in the configuration the program builds, before it is used
    /// (the machines the tests run on have no audio hardware); an app passes nothing.
    private let adjust: @Sendable (Configuration) -> Configuration

    /// Creates the app.
    /// - Parameter adjust: the test's change to the configuration `start` builds.
    public init(adjust: @escaping @Sendable (Configuration) -> Configuration = { $0 }) {
        self.adjust = adjust
    }

    @available(*, deprecated, message: "written with the earlier swift-pjsua's names on purpose")
    public func start(port: UInt32) async throws {
        try await phone.start(adjust(.init(port: port, transport: .udp)))
    }

    @available(*, deprecated, message: "written with the earlier swift-pjsua's names on purpose")
    public func addAccount(id: String, registrar: String, username: String, password: String, token: String?)
        async throws -> AccountID
    {
        guard let token else {
            return try await phone.addAccount(id: id, registrar: registrar, username: username, password: password)
        }
        let account: AccountID = try await phone.addAccount(
            id: id, registrar: registrar, username: username, password: password,
            push: .apns(teamID: "ABCDE12345", bundleID: "com.example.phone", token: token))
        return account
    }

    @available(*, deprecated, message: "written with the earlier swift-pjsua's names on purpose")
    public func listen() {
        let phone = phone
        let transcript = transcript
        Task {
            for await event in phone.events {
                switch event {
                // pattern edit; earlier:
                // case .incomingCall(let account, let call, let sipCallID, let from, let offeredVideo):
                case .incomingCall(let incoming):
                    let call: CallID = incoming.call
                    print("incoming call \(incoming.sipCallID) on \(incoming.account), video: \(incoming.offeredVideo)")
                    try await phone.answer(call)
                    await transcript.append("answered \(call)")
                // pattern edit; earlier: case .callState(let call, let state, _, let lastStatus):
                case .callState(let change):
                    await transcript.append("\(change.call) \(change.state) \(change.statusCode)")
                default:
                    break
                }
            }
        }
    }

    @available(*, deprecated, message: "written with the earlier swift-pjsua's names on purpose")
    public func makeCall(to uri: String, from account: AccountID) async throws -> CallID {
        try await phone.makeCall(to: uri, from: account)
    }

    @available(*, deprecated, message: "written with the earlier swift-pjsua's names on purpose")
    public func didActivate() -> Task<Void, any Error> {
        Task { try await phone.activateAudioDevice() }
    }

    @available(*, deprecated, message: "written with the earlier swift-pjsua's names on purpose")
    public func didDeactivate() -> Task<Void, Never> {
        Task { await phone.deactivateAudioDevice() }
    }

    @available(*, deprecated, message: "written with the earlier swift-pjsua's names on purpose")
    public func muteAndSendDigits(_ call: CallID, digits: String) async throws {
        try await phone.setMute(call, muted: true)
        try await phone.setMute(call, muted: false)
        try await phone.sendDTMF(call, digits: digits, duration: 100)
    }

    @available(*, deprecated, message: "written with the earlier swift-pjsua's names on purpose")
    public func hangUpEverything() async {
        await phone.hangupAll()
    }

    @available(*, deprecated, message: "written with the earlier swift-pjsua's names on purpose")
    public static func callUUIDs(sipCallID: String) -> [UUID] {
        [
            CallIdentity.uuid(serverProvided: nil, sipCallID: sipCallID),
            UUID(version5: sipCallID, namespace: CallIdentity.namespace),
        ]
    }

    @available(*, deprecated, message: "written with the earlier swift-pjsua's names on purpose")
    public func makeVideoCall(to uri: String, from account: AccountID) async throws -> CallID {
        try await phone.makeCall(to: uri, from: account, video: true)
    }

    @available(*, deprecated, message: "written with the earlier swift-pjsua's names on purpose")
    public static func earlierConfigurations() -> [Configuration] {
        [.init(port: 5070, transport: .tcp), .init(transport: .tls), .init(port: 70_000)]
    }
}
