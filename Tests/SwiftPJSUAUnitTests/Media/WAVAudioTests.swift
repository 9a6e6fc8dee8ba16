import Foundation
import SwiftPJSUA
import Testing

@Suite("WAV files and tone analysis")
struct AudioTests {
    @Test("A WAV file round-trips")
    func roundTrip() throws {
        let audio = WAVAudio.tone(frequency: 440, duration: .milliseconds(100), sampleRate: 8000)
        #expect(audio.samples.count == 800)
        #expect(try WAVAudio(data: audio.data) == audio)
        #expect(audio.duration == .milliseconds(100))
    }

    @Test("Non-WAV data is rejected with a typed error")
    func rejectsGarbage() {
        #expect(throws: WAVAudio.ReadError.notWAV) { try WAVAudio(data: Data("hello world, not a wav".utf8)) }
        var header = WAVAudio(sampleRate: 8000, samples: [1, 2]).data
        header[20] = 3  // format 3: IEEE float
        #expect(throws: WAVAudio.ReadError.self) { try WAVAudio(data: header) }
    }

    @Test("A 1 kHz tone is detected", arguments: [8000, 16000, 48000])
    func detectsTone(rate: Int) {
        let analysis = ToneAnalysis(
            WAVAudio.tone(frequency: 1000, duration: .seconds(1), sampleRate: rate), frequency: 1000)
        #expect(analysis.detected())
        #expect(analysis.toneEnergyRatio > 0.95)
        #expect(analysis.toneBlocks == analysis.blocks)
    }

    @Test("Silence, noise and another frequency are not the tone")
    func rejectsOthers() {
        let silence = WAVAudio(sampleRate: 16000, samples: [Int16](repeating: 0, count: 16000))
        #expect(!ToneAnalysis(silence, frequency: 1000).detected())
        var generator = SystemRandomNumberGenerator()
        let noise = WAVAudio(
            sampleRate: 16000, samples: (0..<16000).map { _ in Int16.random(in: -8000...8000, using: &generator) })
        #expect(!ToneAnalysis(noise, frequency: 1000).detected())
        let other = WAVAudio.tone(frequency: 1500, duration: .seconds(1))
        #expect(!ToneAnalysis(other, frequency: 1000).detected())
        let quiet = WAVAudio.tone(frequency: 1000, duration: .seconds(1), amplitude: 0.001)
        #expect(!ToneAnalysis(quiet, frequency: 1000).detected())
    }
}
