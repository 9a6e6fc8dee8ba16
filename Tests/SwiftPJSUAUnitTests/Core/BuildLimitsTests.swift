import Foundation
import Testing

@testable import SwiftPJSUA

@Suite("The build's limits without pjsua")
struct BuildLimitsTests {
    @Test("buildLimits agrees with compiledCallLimit, and each limit leaves room for the others")
    func consistent() {
        let limits = PJSUA.buildLimits
        #expect(limits.calls == PJSUA.compiledCallLimit)
        for (name, value) in [
            ("accounts", limits.accounts), ("players", limits.players), ("recorders", limits.recorders),
            ("transactions", limits.transactions), ("dialogs", limits.dialogs),
        ] {
            #expect(value >= 1, "\(name) is \(value)")
        }
        // Every call has a conference slot, and the bridge the engine makes fits the build's.
        #expect(limits.conferencePorts > limits.calls)
        #expect(Native.conferenceBridgeSize <= limits.conferencePorts)
        #expect(Native.conferenceBridgeSize > limits.calls)
        // pjsip's default is 4000; an INVITE with SDP is well under 2000.
        #expect(limits.sipMessageBytes >= 2000)
        #expect(limits.description.contains("calls \(limits.calls), accounts \(limits.accounts)"))
    }

    @Test("maxCalls defaults to 32 or the build's lower limit, and the default passes start's check")
    func defaultMaxCallsFitsTheBuild() throws {
        #expect(Configuration.defaultMaxCalls == min(32, PJSUA.compiledCallLimit))
        #expect(Configuration().maxCalls == Configuration.defaultMaxCalls)
        try Configuration().validate()
        var configuration = Configuration(maxCalls: PJSUA.compiledCallLimit)
        try configuration.validate()
        configuration.maxCalls = PJSUA.compiledCallLimit + 1
        #expect(throws: PJSUAUsageError.self) { try configuration.validate() }
    }
}
