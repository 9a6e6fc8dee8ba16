import Foundation

/// Mono 16-bit PCM audio in a WAV (RIFF) container, as pjsua's players read and its
/// recorders write.
public struct WAVAudio: Sendable, Equatable {
    /// Samples per second (Hz).
    public var sampleRate: Int
    /// Signed 16-bit samples, one channel.
    public var samples: [Int16]

    /// Wraps samples taken at `sampleRate` Hz.
    public init(sampleRate: Int, samples: [Int16]) {
        self.sampleRate = sampleRate
        self.samples = samples
    }

    /// The audio's length.
    public var duration: Duration {
        sampleRate > 0 ? .nanoseconds(Int64(samples.count) * 1_000_000_000 / Int64(sampleRate)) : .zero
    }

    /// Errors reading a WAV file.
    public enum ReadError: LocalizedError, Equatable, CustomStringConvertible {
        /// The data is not a RIFF/WAVE file.
        case notWAV
        /// The format is not 16-bit PCM with one or two channels.
        case unsupportedFormat(String)
        /// A chunk runs past the end of the data.
        case truncated

        /// What is wrong with the file, in one line.
        public var description: String {
            switch self {
            case .notWAV: "not a RIFF/WAVE file"
            case .unsupportedFormat(let format): "not 16-bit PCM with one or two channels: \(format)"
            case .truncated: "a WAV chunk runs past the end of the data"
            }
        }

        /// The same text as ``description``, for `localizedDescription`.
        public var errorDescription: String? { description }
    }

    /// A sine tone.
    /// - Parameters:
    ///   - frequency: in Hz.
    ///   - duration: the length.
    ///   - sampleRate: in Hz.
    ///   - amplitude: peak level, 0–1 of full scale.
    public static func tone(
        frequency: Double, duration: Duration, sampleRate: Int = 16000, amplitude: Double = 0.5
    ) -> WAVAudio {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        let count = Int(seconds * Double(sampleRate))
        let scale = amplitude * Double(Int16.max)
        let samples = (0..<count).map { i in
            Int16(scale * sin(2 * Double.pi * frequency * Double(i) / Double(sampleRate)))
        }
        return WAVAudio(sampleRate: sampleRate, samples: samples)
    }

    /// Parses a WAV file's bytes. Stereo is mixed down to mono.
    /// - Throws: ``ReadError``.
    public init(data: Data) throws(ReadError) {
        let bytes = [UInt8](data)
        func u32(_ at: Int) -> Int {
            Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8)
        else {
            throw .notWAV
        }
        var offset = 12
        var channels = 0
        var rate = 0
        var bits = 0
        var samples: [Int16]?
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            var size = u32(offset + 4)
            let body = offset + 8
            if id == "data", body + size > bytes.count {
                // A recorder still writing (or killed) leaves the size unset: take what is there.
                size = bytes.count - body
            }
            guard body + size <= bytes.count else { throw .truncated }
            if id == "fmt " {
                guard size >= 16 else { throw .truncated }
                let format = u16(body)
                channels = u16(body + 2)
                rate = u32(body + 4)
                bits = u16(body + 14)
                guard format == 1, bits == 16, channels == 1 || channels == 2 else {
                    throw .unsupportedFormat("format \(format), \(bits) bits, \(channels) channels")
                }
            } else if id == "data" {
                guard channels > 0 else { throw .unsupportedFormat("data before fmt") }
                let frameCount = size / (2 * channels)
                var out = [Int16](repeating: 0, count: frameCount)
                for frame in 0..<frameCount {
                    var sum = 0
                    for channel in 0..<channels {
                        sum += Int(Int16(bitPattern: UInt16(u16(body + (frame * channels + channel) * 2))))
                    }
                    out[frame] = Int16(sum / channels)
                }
                samples = out
            }
            offset = body + size + (size & 1)
        }
        guard let samples, rate > 0 else { throw .notWAV }
        self.init(sampleRate: rate, samples: samples)
    }

    /// Reads a WAV file.
    /// - Throws: ``ReadError``, or a Foundation error when the file cannot be read.
    public init(contentsOf url: URL) throws {
        try self.init(data: Data(contentsOf: url))
    }

    /// The file's bytes: a canonical 44-byte header and the samples, little-endian.
    public var data: Data {
        var out = Data()
        // Little-endian, lowest byte first, whatever the host's byte order.
        func put32(_ v: Int) {
            let value = UInt32(v)
            for shift: UInt32 in [0, 8, 16, 24] { out.append(UInt8(truncatingIfNeeded: value >> shift)) }
        }
        func put16(_ v: Int) {
            let value = UInt16(v)
            out.append(UInt8(truncatingIfNeeded: value))
            out.append(UInt8(truncatingIfNeeded: value >> 8))
        }
        let dataSize = samples.count * 2
        out.append(contentsOf: Array("RIFF".utf8)); put32(36 + dataSize)
        out.append(contentsOf: Array("WAVE".utf8))
        out.append(contentsOf: Array("fmt ".utf8)); put32(16)
        put16(1); put16(1); put32(sampleRate); put32(sampleRate * 2); put16(2); put16(16)
        out.append(contentsOf: Array("data".utf8)); put32(dataSize)
        for sample in samples { put16(Int(UInt16(bitPattern: sample))) }
        return out
    }

    /// Writes the file.
    public func write(to url: URL) throws {
        try data.write(to: url)
    }
}

/// How much of a recording is a tone at one frequency.
///
/// The audio is cut into 20 ms blocks; in each block the Goertzel algorithm measures the
/// energy at the frequency, which is compared with the block's whole energy. A block
/// "has the tone" when it is louder than -50 dBFS and at least half its energy is at the
/// frequency. Codecs and resampling smear a tone a little; silence, noise, speech or
/// another frequency stay far below one half.
public struct ToneAnalysis: Sendable, Equatable {
    /// The frequency looked for, in Hz.
    public var frequency: Double
    /// The share of the whole recording's energy at the frequency, 0–1.
    public var toneEnergyRatio: Double
    /// The recording's level in dB relative to full scale (-∞ for silence).
    public var levelDBFS: Double
    /// Blocks (20 ms each) that carry the tone.
    public var toneBlocks: Int
    /// All blocks.
    public var blocks: Int
    /// Length of the tone-carrying audio.
    public var toneDuration: Duration { .milliseconds(toneBlocks * 20) }

    /// Whether the tone is present: at least `minimumDuration` of blocks carry it.
    public func detected(minimumDuration: Duration = .milliseconds(500)) -> Bool {
        toneDuration >= minimumDuration
    }

    /// Analyses `audio` for a tone at `frequency` Hz.
    public init(_ audio: WAVAudio, frequency: Double) {
        self.frequency = frequency
        let blockSize = max(1, audio.sampleRate / 50)
        let omega = 2 * Double.pi * frequency / Double(audio.sampleRate)
        let coefficient = 2 * cos(omega)
        var totalEnergy = 0.0
        var totalTone = 0.0
        var toneBlocks = 0
        var blocks = 0
        var start = 0
        while start + blockSize <= audio.samples.count {
            var s1 = 0.0
            var s2 = 0.0
            var energy = 0.0
            for i in start..<start + blockSize {
                let x = Double(audio.samples[i]) / 32768
                energy += x * x
                let s0 = x + coefficient * s1 - s2
                s2 = s1
                s1 = s0
            }
            let power = s1 * s1 + s2 * s2 - coefficient * s1 * s2
            let toneEnergy = 2 * power / Double(blockSize)
            totalEnergy += energy
            totalTone += toneEnergy
            blocks += 1
            let rms = (energy / Double(blockSize)).squareRoot()
            if rms > 0.00316 && toneEnergy >= 0.5 * energy { toneBlocks += 1 }
            start += blockSize
        }
        self.toneEnergyRatio = totalEnergy > 0 ? min(1, totalTone / totalEnergy) : 0
        let meanSquare = audio.samples.isEmpty ? 0 : totalEnergy / Double(max(1, blocks * blockSize))
        self.levelDBFS = meanSquare > 0 ? 10 * log10(meanSquare) : -.infinity
        self.toneBlocks = toneBlocks
        self.blocks = blocks
    }
}
