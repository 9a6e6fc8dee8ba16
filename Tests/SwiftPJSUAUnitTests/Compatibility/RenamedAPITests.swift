import SwiftPJSUA
import Testing

/// The names kept, deprecated, for code written before the vocabulary was made one: they
/// read and write the fields of the new names.
@Suite("Renamed API")
struct RenamedAPITests {
    @available(*, deprecated, message: "uses the deprecated names on purpose")
    static func readThroughOldNames() -> (Int, Int) {
        var change = CallStateChange(
            call: Call(slot: 0, generation: 1), state: .early, sipCallID: "a@b", lastStatus: 180, reason: "Ringing")
        let before = change.statusCode
        change.lastStatus = 183
        return (before, change.statusCode)
    }

    @Test("CallStateChange.lastStatus is statusCode")
    @available(*, deprecated, message: "uses the deprecated names on purpose")
    func callStateChange() {
        let (before, after) = Self.readThroughOldNames()
        #expect(before == 180)
        #expect(after == 183)
    }
}
