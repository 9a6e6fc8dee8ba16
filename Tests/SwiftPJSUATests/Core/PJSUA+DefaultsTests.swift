import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

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

    @Test("Default transports on a port whose TCP side is taken: start throws and releases the UDP side")
    func defaultTransportsPortCollision() async throws {
        let port = FreePort.tcpAndUDP()
        // A TCP listener holds the port, as another SIP stack on 5060 would.
        let listener = try #require(FreePort.listenTCP(port))
        defer { close(listener) }
        var configuration = Configuration(media: nullSound)
        configuration.transports = configuration.transports.map { transport in
            var transport = transport
            transport.bindAddress = "127.0.0.1"
            transport.port = port
            return transport
        }
        let engine = PJSUA()
        do {
            try await engine.start(configuration)
            await engine.shutdown()
            Issue.record("start on a taken TCP port did not throw")
        } catch let error as PJSUAError {
            #expect(error.function == "pjsua_transport_create", "\(error)")
        }
        #expect(await !engine.isRunning)
        #expect(!FreePort.isUDPBound(port))
        // Port 0: each transport gets a free port of its own.
        configuration.transports = configuration.transports.map { transport in
            var transport = transport
            transport.port = 0
            return transport
        }
        try await engine.start(configuration)
        let running = try await engine.transports()
        #expect(running.map(\.type) == [.udp, .tcp])
        #expect(running.allSatisfy { $0.port != 0 })
        await engine.shutdown()
    }
}
