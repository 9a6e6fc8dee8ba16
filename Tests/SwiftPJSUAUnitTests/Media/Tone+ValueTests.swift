import Foundation
import SwiftPJSUA
import Testing

@Suite("Tone values")
struct ToneValueTests {
    /// Characters whose upper case is more than one character (ß → SS, the ﬁ ligature → FI)
    /// or none that is a key: no DTMF tone, and no trap making a Character of several.
    @Test("Tone.dtmf of a character whose upper case is two characters is nil, not a trap")
    func dtmfOfMultiCharacterUppercase() {
        #expect(Tone.dtmf("ß") == nil)
        #expect(Tone.dtmf("\u{FB01}") == nil)
        #expect(throws: PJSUAUsageError.invalidDTMFDigits("1ß")) { try Tone.dtmf(digits: "1ß") }
        #expect(Tone.dtmf("d")?.secondFrequency == 1633)
    }
}
