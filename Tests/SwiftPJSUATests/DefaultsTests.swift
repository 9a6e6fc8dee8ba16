import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

@Suite("Defaults without pjsua")
struct DefaultConfigurationTests {
    @Test("Configuration() means UDP and TCP on port 5060 and the system's sound device")
    func defaults() {
        let configuration = Configuration()
        #expect(configuration.transports.map(\.type) == [.udp, .tcp])
        #expect(configuration.transports.map(\.port) == [5060, 5060])
        #expect(configuration.transports.allSatisfy { $0.bindAddress == nil })
        #expect(configuration.media.soundDevice == .systemDefault)
        #expect(MediaConfiguration().soundDevice == .systemDefault)
        #expect(configuration.nativeAdjustments == NativeAdjustments())
    }
}

extension EngineTests {
    @Test("The default sound device on a machine without one: start throws an error naming .null, and .null starts")
    func defaultSoundDeviceWithoutHardware() async throws {
        // The ALSA devices of this machine; a machine with sound hardware starts instead.
        let hasSoundHardware = FileManager.default.fileExists(atPath: "/dev/snd")
        let engine = PJSUA()
        var configuration = Configuration(transports: loopbackUDP)
        if hasSoundHardware {
            try await engine.start(configuration)
            await engine.shutdown()
            return
        }
        do {
            try await engine.start(configuration)
            await engine.shutdown()
            Issue.record("start with the system's default sound device and no sound hardware did not throw")
        } catch let error as PJSUAError {
            #expect(error.code == .noDefaultSoundDevice, "\(error)")
            #expect(error.function == "pjsua_set_snd_dev")
            #expect(error.description.contains("MediaConfiguration.soundDevice = .null"), "\(error)")
        }
        #expect(await !engine.isRunning)
        // Nothing was left behind: the same transports bind again with the null device.
        configuration.media.soundDevice = .null
        try await engine.start(configuration)
        #expect(await engine.isRunning)
        await engine.shutdown()

        // With the device attached by the app, the same error comes when it asks for it.
        configuration.media = MediaConfiguration(soundDeviceActivation: .byApp)
        try await engine.start(configuration)
        await #expect(throws: PJSUAError.self) { try await engine.activateAudioDevice() }
        await engine.shutdown()
    }

    /// The account of `user` at `kamailio`, with its password.
    private static func kamailioAccount(_ user: String, at kamailio: Kamailio, transport: Transport? = nil) -> AccountConfiguration {
        AccountConfiguration(
            identity: kamailio.aor(user), registrar: kamailio.uri,
            credentials: [.password(Kamailio.passwords[user] ?? "", username: user)], transport: transport)
    }

    @Test("With the default UDP and TCP transports, an INVITE over 1300 bytes goes over TCP (RFC 3261 §18.1.1), a small one over UDP")
    func largeRequestMovesToTCP() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let kamailio = try await Kamailio.start(folder: folder)
        defer { kamailio.stop() }
        // The default transports, on loopback and on a free port instead of 5060.
        let port = FreePort.tcpAndUDP()
        let transports = Configuration.defaultTransports.map { transport in
            var transport = transport
            transport.bindAddress = "127.0.0.1"
            transport.port = port
            return transport
        }
        let sizes = SIPSizeLog()
        try await EngineHarness.run(logHandler: sizes, logLevel: 5, transports: transports) { h in
            #expect(try await h.engine.transports().map(\.type) == [.udp, .tcp])
            let alice = try await h.engine.addAccount(Self.kamailioAccount("alice", at: kamailio))
            try await h.log.first("alice registered") { $0.isRegistration(of: alice, active: true) }
            func invites() -> [Kamailio.Request] {
                kamailio.receivedRequests.filter { $0.method == "INVITE" && $0.user == "alice" }
            }
            #expect(kamailio.receivedRequests.first { $0.method == "REGISTER" }?.transport == "udp")

            // Small: the INVITE and its authenticated retry stay on UDP. bob is not
            // registered, so Kamailio answers 404 once the credentials check out.
            let small = try await h.engine.makeCall(to: kamailio.aor("bob"), from: alice)
            try await h.log.first("small call ended") { $0.isState(.disconnected, of: small) }
            #expect(try await h.engine.callInfo(small).lastStatusCode == 404)
            #expect(invites().map(\.transport) == ["udp", "udp"], "\(kamailio.receivedRequests)")
            #expect(sizes.largestInvite < 1300, "\(sizes.largestInvite) bytes")

            // Large: 1300 bytes or more, so pjsip sends it over TCP; the 407 and the 404 come
            // back on that connection.
            let padding = SIPHeader(name: "X-Padding", value: String(repeating: "p", count: 900))
            let large = try await h.engine.makeCall(to: kamailio.aor("bob"), from: alice, headers: [padding])
            try await h.log.first("large call ended") { $0.isState(.disconnected, of: large) }
            #expect(try await h.engine.callInfo(large).lastStatusCode == 404)
            #expect(invites().map(\.transport) == ["udp", "udp", "tcp", "tcp"], "\(kamailio.receivedRequests)")
            #expect(sizes.largestInvite >= 1300, "\(sizes.largestInvite) bytes")

            // An account bound to the UDP transport keeps its requests there, whatever their size.
            let udp = try #require(try await h.engine.transports().first { $0.type == .udp }?.transport)
            let bound = try await h.engine.addAccount(Self.kamailioAccount("alice", at: kamailio, transport: udp))
            try await h.log.first("bound alice registered") { $0.isRegistration(of: bound, active: true) }
            let pinned = try await h.engine.makeCall(to: kamailio.aor("bob"), from: bound, headers: [padding])
            try await h.log.first("pinned call ended") { $0.isState(.disconnected, of: pinned) }
            #expect(try await h.engine.callInfo(pinned).lastStatusCode == 404)
            #expect(invites().map(\.transport).suffix(2) == ["udp", "udp"], "\(kamailio.receivedRequests)")
        }
    }
}

/// The largest INVITE pjsip logged sending (its "TX n bytes Request msg INVITE" lines).
final class SIPSizeLog: PJSUALogHandler {
    private let sizes = Protected<[Int]>([])

    func log(level: Int, message: String) {
        guard message.contains("TX "), message.contains("Request msg INVITE"),
              let range = message.range(of: #"TX (\d+) bytes"#, options: .regularExpression)
        else { return }
        let number = message[range].dropFirst(3).prefix { $0.isNumber }
        if let bytes = Int(number) { sizes.withLock { $0.append(bytes) } }
    }

    var largestInvite: Int { sizes.withLock { $0.max() ?? 0 } }
}
