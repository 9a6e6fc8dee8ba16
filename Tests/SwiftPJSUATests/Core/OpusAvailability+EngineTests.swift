import SwiftPJSUA
import Testing

/// Opus settings on a pjproject build without Opus: in Core (not Media) so that the iOS-like
/// pass, whose build has no Opus, runs it.
extension EngineTests {
    @Test("Opus settings start the engine where Opus is built, else throw invalidConfiguration naming opus")
    func opusSettingsNeedOpus() async throws {
        let engine = PJSUA()
        var media = MediaConfiguration(soundDevice: .null)
        media.opus = OpusConfiguration(bitrate: 16000, inBandFEC: true, expectedPacketLoss: 10)
        let configuration = Configuration(
            transports: [TransportConfiguration(type: .udp, bindAddress: "127.0.0.1", port: 0)], media: media)
        if PJSUA.hasOpusCodec {
            try await engine.start(configuration)
            let codecs = try await engine.codecs()
            await engine.shutdown()
            #expect(codecs.contains { $0.id.lowercased().hasPrefix("opus/") })
        } else {
            await #expect {
                try await engine.start(configuration)
            } throws: { error in
                guard case PJSUAUsageError.invalidConfiguration(let text) = error else { return false }
                return text.contains("opus")
            }
            // Nothing was left running: the same engine starts without the setting.
            var plain = configuration
            plain.media.opus = nil
            try await engine.start(plain)
            let codecs = try await engine.codecs()
            await engine.shutdown()
            #expect(!codecs.contains { $0.id.lowercased().hasPrefix("opus/") })
        }
    }
}
