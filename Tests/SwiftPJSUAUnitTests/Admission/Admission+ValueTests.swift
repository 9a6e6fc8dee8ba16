import Testing

@testable import SwiftPJSUA

/// WhoMayCall and IncomingLimits as values: the documented defaults and the ranges the
/// engine's start accepts, without starting pjsua.
@Suite("Admission settings")
struct AdmissionValueTests {
    @Test("Defaults: 10 requests/s in bursts of 20 per source, 4 ringing calls, Retry-After 5 s")
    func documentedDefaults() throws {
        let limits = Configuration().limits
        #expect(limits.requestRate == IncomingLimits.RequestRate(perSecond: 10, burst: 20))
        #expect(limits.maxRingingCalls == 4)
        #expect(limits.retryAfter == .seconds(5))
        try limits.validate()
        try IncomingLimits.unlimited.validate()
    }

    @Test(
        "Who may call by default: servers only with a registrar, anyone without; an explicit value wins",
        arguments: [
            (AccountConfiguration(identity: "sip:a@h", registrar: "sip:h"), WhoMayCall.serversOnly),
            (AccountConfiguration(identity: "sip:a@h"), WhoMayCall.anyone),
            (AccountConfiguration(identity: "sip:a@h", outboundProxies: ["sip:p;lr"]), WhoMayCall.anyone),
        ])
    func defaultPolicy(account: AccountConfiguration, expected: WhoMayCall) {
        #expect(account.effectiveWhoMayCall == expected)
        var explicit = account
        explicit.whoMayCall = WhoMayCall(onlyFromServers: false, requiresContactUser: true)
        #expect(explicit.effectiveWhoMayCall == WhoMayCall(onlyFromServers: false, requiresContactUser: true))
    }

    @Test(
        "Limits out of range throw invalidConfiguration naming the field",
        arguments: [
            (IncomingLimits(requestRate: .init(perSecond: 0, burst: 1)), "perSecond"),
            (IncomingLimits(requestRate: .init(perSecond: 10_001, burst: 20_000)), "perSecond"),
            (IncomingLimits(requestRate: .init(perSecond: 10, burst: 9)), "burst"),
            (IncomingLimits(requestRate: .init(perSecond: 10, burst: 100_001)), "burst"),
            (IncomingLimits(maxRingingCalls: 0), "maxRingingCalls"),
            (IncomingLimits(retryAfter: .zero), "retryAfter"),
            (IncomingLimits(retryAfter: .milliseconds(2500)), "retryAfter"),
            (IncomingLimits(retryAfter: .seconds(3601)), "retryAfter"),
        ])
    func outOfRange(limits: IncomingLimits, field: String) {
        #expect {
            try limits.validate()
        } throws: { error in
            guard case PJSUAUsageError.invalidConfiguration(let text) = error else { return false }
            return text.contains(field)
        }
    }

    @Test("The edges of the ranges are accepted")
    func edgesAccepted() throws {
        try IncomingLimits(requestRate: .init(perSecond: 1, burst: 1), maxRingingCalls: 1, retryAfter: .seconds(1))
            .validate()
        try IncomingLimits(
            requestRate: .init(perSecond: 10_000, burst: 100_000), maxRingingCalls: 10_000, retryAfter: .seconds(3600)
        ).validate()
    }
}
