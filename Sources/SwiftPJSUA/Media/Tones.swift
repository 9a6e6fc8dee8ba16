/// One tone of a sequence: one or two sine frequencies played together for `duration`,
/// then `pause` of silence, as pjmedia's tone generator plays them (`pjmedia_tone_desc`).
public struct Tone: Sendable, Hashable {
    /// The first frequency, in Hz (1–7999).
    public var frequency: Int
    /// An optional second frequency played with the first (dual tone), in Hz.
    public var secondFrequency: Int?
    /// How long the tone sounds: 1 ms to 32.767 s.
    public var duration: Duration
    /// Silence after it: 0 to 32.767 s.
    public var pause: Duration
    /// Peak level, 0–1 of full scale; `nil` for pjmedia's default (`PJMEDIA_TONEGEN_VOLUME`).
    public var volume: Double?

    /// A tone of one frequency, or two with `secondFrequency`. Nothing is checked here: the
    /// ranges above are checked when the tone is played, which throws ``PJSUAUsageError``
    /// for a value outside them.
    public init(
        frequency: Int, secondFrequency: Int? = nil, duration: Duration, pause: Duration = .zero,
        volume: Double? = nil
    ) {
        self.frequency = frequency
        self.secondFrequency = secondFrequency
        self.duration = duration
        self.pause = pause
        self.volume = volume
    }

    /// The DTMF tone of `digit` (`0`–`9`, `*`, `#`, `A`–`D`, case-insensitive): its row and
    /// column frequencies (ITU-T Q.23), `nil` for any other character.
    public static func dtmf(
        _ digit: Character, duration: Duration = .milliseconds(100), pause: Duration = .milliseconds(50)
    ) -> Tone? {
        let keys: [[Character]] = [
            ["1", "2", "3", "A"], ["4", "5", "6", "B"], ["7", "8", "9", "C"], ["*", "0", "#", "D"],
        ]
        let rows = [697, 770, 852, 941]
        let columns = [1209, 1336, 1477, 1633]
        // Upper case may be several characters (ß → SS): none of those is a key.
        let upper = digit.uppercased()
        guard upper.count == 1, let key = upper.first else { return nil }
        for (r, row) in keys.enumerated() {
            if let c = row.firstIndex(of: key) {
                return Tone(frequency: rows[r], secondFrequency: columns[c], duration: duration, pause: pause)
            }
        }
        return nil
    }

    /// The DTMF tones of `digits`, in order.
    /// - Throws: ``PJSUAUsageError/invalidDTMFDigits(_:)`` when a character is no DTMF digit.
    public static func dtmf(
        digits: String, duration: Duration = .milliseconds(100), pause: Duration = .milliseconds(50)
    ) throws(PJSUAUsageError) -> [Tone] {
        var tones: [Tone] = []
        for digit in digits {
            guard let tone = dtmf(digit, duration: duration, pause: pause) else { throw .invalidDTMFDigits(digits) }
            tones.append(tone)
        }
        return tones
    }

    // MARK: Call progress tones (ITU-T E.180 values)

    /// North American ringback: 440 + 480 Hz, 2 s on, 4 s off. Loop it.
    public static let ringbackNorthAmerica = [
        Tone(frequency: 440, secondFrequency: 480, duration: .seconds(2), pause: .seconds(4))
    ]
    /// North American busy: 480 + 620 Hz, 0.5 s on, 0.5 s off. Loop it.
    public static let busyNorthAmerica = [
        Tone(frequency: 480, secondFrequency: 620, duration: .milliseconds(500), pause: .milliseconds(500))
    ]
    /// European (CEPT) ringback: 425 Hz, 1 s on, 4 s off. Loop it.
    public static let ringbackEurope = [Tone(frequency: 425, duration: .seconds(1), pause: .seconds(4))]
    /// European (CEPT) busy: 425 Hz, 0.5 s on, 0.5 s off. Loop it.
    public static let busyEurope = [Tone(frequency: 425, duration: .milliseconds(500), pause: .milliseconds(500))]
    /// Call waiting: 440 Hz, two 0.3 s beeps 10 s apart. Loop it.
    public static let callWaiting = [
        Tone(frequency: 440, duration: .milliseconds(300), pause: .milliseconds(300)),
        Tone(frequency: 440, duration: .milliseconds(300), pause: .milliseconds(9400)),
    ]

}

extension Tone: Validatable {
    func validate() throws(PJSUAUsageError) {
        let frequencies = [frequency] + (secondFrequency.map { [$0] } ?? [])
        guard frequencies.allSatisfy({ (1...7999).contains($0) }) else {
            throw .invalidArgument("tone frequencies must be 1–7999 Hz: \(frequencies)")
        }
        guard duration >= .milliseconds(1), duration <= .milliseconds(32767), pause >= .zero,
            pause <= .milliseconds(32767)
        else {
            throw .invalidArgument("a tone sounds 1 ms to 32.767 s and pauses 0 to 32.767 s: \(duration), \(pause)")
        }
        if let volume, !(volume > 0 && volume <= 1) {
            throw .invalidArgument("tone volume must be in (0, 1]: \(volume)")
        }
    }
}

/// A sequence of tones to play: 1 to `PJMEDIA_TONEGEN_MAX_DIGITS` (32) valid tones.
extension Array: Validatable where Element == Tone {
    func validate() throws(PJSUAUsageError) {
        guard !isEmpty, count <= Native.maxTones else {
            throw .invalidArgument("a tone sequence holds 1 to \(Native.maxTones) tones, not \(count)")
        }
        for tone in self { try tone.validate() }
    }
}

/// A handle to tones playing on the conference bridge, from
/// ``PJSUA/playTones(_:into:loop:)`` or ``PJSUA/playTonesToSoundDevice(_:loop:)``.
public struct TonePlayer: Hashable, Sendable {
    /// A process-wide counter value given to the player when it was created.
    public let generation: UInt64
    /// The call the tones play into; `nil` when they play to the sound device.
    public let call: Call?
    let port: TonePort

    /// Two handles are equal when they name the same player (one `playTones` call).
    public static func == (a: Self, b: Self) -> Bool { a.generation == b.generation }
    /// Hashes the player's generation, consistently with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(generation) }
}
