import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Misuse reachable through the public API: each must throw a typed error, never trap.
extension EngineTests {
    @Test("Out-of-range account durations throw instead of trapping in an integer conversion")
    func hugeAccountDurationsThrow() async throws {
        try await EngineHarness.run { h in
            let base = AccountConfiguration(identity: "sip:alice@127.0.0.1", registrar: "sip:127.0.0.1:9")
            var expiry = base
            expiry.registrationExpiry = .seconds(Int64(UInt32.max) + 1)
            var retry = base
            retry.retryInterval = .seconds(Int64.max)
            var jitter = base
            jitter.retryJitter = .seconds(Int64(UInt32.max) * 2)
            // Under a second pjsua would see zero (no retry at all) while authentication
            // retries ran twice a second.
            var subsecond = base
            subsecond.retryInterval = .milliseconds(500)
            var keepAlives: [AccountConfiguration] = []
            for interval in [Duration.milliseconds(500), .seconds(-1), .seconds(86_401), .seconds(Int64.max)] {
                var configuration = base
                configuration.flowKeepAliveInterval = interval
                keepAlives.append(configuration)
            }
            for configuration in [expiry, retry, jitter, subsecond] + keepAlives {
                await #expect(throws: PJSUAUsageError.self) { try await h.engine.addAccount(configuration) }
            }
        }
    }

    @Test("sendDTMF with an enormous duration throws invalidDTMFDigits instead of overflowing")
    func hugeDTMFDurationThrows() async throws {
        try await EngineHarness.run { h in
            await #expect(throws: PJSUAUsageError.self) {
                try await h.engine.sendDTMF(
                    Call(slot: 0, generation: .max), digits: "1", duration: .seconds(Int64.max))
            }
            // The check comes before the handle's: a short one still reaches the handle check.
            await #expect(throws: PJSUAUsageError.unknownCall(Call(slot: 0, generation: .max))) {
                try await h.engine.sendDTMF(Call(slot: 0, generation: .max), digits: "1")
            }
        }
    }

    @Test("streamStatistics with a negative or absent media index throws")
    func badMediaIndexThrows() async throws {
        try await EngineHarness.run { h in
            let (caller, _) = try await h.selfCall()
            await #expect(throws: (any Error).self) { try await h.engine.streamStatistics(caller, mediaIndex: -1) }
            await #expect(throws: (any Error).self) { try await h.engine.streamStatistics(caller, mediaIndex: 99) }
            try await h.engine.hangup(caller)
        }
    }

    @Test("addLocalAccount on a transport that does not exist throws")
    func unknownTransportThrows() async throws {
        try await EngineHarness.run { h in
            for id: Int32 in [7, -1, 10_000] {
                await #expect(throws: (any Error).self) {
                    try await h.engine.addLocalAccount(on: Transport(id: id))
                }
            }
        }
    }

    @Test("Out-of-range SIP timers are refused at start instead of trapping")
    func hugeTimersThrow() async throws {
        let engine = PJSUA()
        for timers in [SIPTimers(t1: .seconds(Int64.max)), SIPTimers(t1: .zero), SIPTimers(t2: .seconds(-1))] {
            await #expect(throws: PJSUAUsageError.self) {
                try await engine.start(Configuration(transports: loopbackUDP, media: nullSound, timers: timers))
            }
            await engine.shutdown()
        }
    }

    @Test("REGISTER headers are checked like call headers: an empty or non-token name throws")
    func badRegisterHeaderThrows() async throws {
        try await EngineHarness.run { h in
            for header in [SIPHeader(name: "", value: "x"), SIPHeader(name: "X Bad:", value: "x")] {
                let configuration = AccountConfiguration(
                    identity: "sip:alice@127.0.0.1", registrar: "sip:127.0.0.1:9", registerHeaders: [header])
                await #expect(throws: PJSUAUsageError.self) { try await h.engine.addAccount(configuration) }
            }
        }
    }
}

extension EngineTests {
    @Test("Requests no dialog or module handles get a final response (481, 405), not silence")
    func outOfDialogRequestsAnswered() async throws {
        try await EngineHarness.run { h in
            let sipp = try await h.sippCaller("uac_out_of_dialog.xml", timeout: .seconds(10))
            let result = try await sipp.finish(timeout: .seconds(20))
            #expect(result.exitStatus == 0, "\(result)")
            #expect(sipp.receivedStatusCodes == [481, 481, 405], "\(sipp.messages.prefix(2000))")
            // The engine still places and answers calls afterwards.
            let (caller, _) = try await h.selfCall()
            try await h.hangUp(caller)
        }
    }
}

extension EngineTests {
    @Test("More accounts than pjsua holds: the extra ones throw, the engine keeps working")
    func tooManyAccountsThrow() async throws {
        try await EngineHarness.run { h in
            var added = 0
            var failures = 0
            for index in 0..<40 {
                do {
                    _ = try await h.engine.addAccount(
                        AccountConfiguration(
                            identity: "sip:user\(index)@127.0.0.1", registersOnAdd: false))
                    added += 1
                } catch {
                    #expect((error as? PJSUAError)?.code == .tooMany, "\(error)")
                    failures += 1
                }
            }
            #expect(added > 0 && failures > 0)
            await #expect(throws: (any Error).self) { try await h.engine.addLocalAccount() }
            let (caller, _) = try await h.selfCall()
            try await h.engine.hangup(caller)
        }
    }

    @Test("An empty codec id throws instead of matching (and disabling) every codec")
    func emptyCodecIDThrows() async throws {
        try await EngineHarness.run { h in
            let before = try await h.engine.codecs()
            await #expect(throws: (any Error).self) { try await h.engine.setCodecPriority("", 0) }
            #expect(try await h.engine.codecs() == before)
        }
    }
}

extension EngineTests {
    @Test("A long URI or one with a NUL inside is checked, not a crash or a shorter URI")
    func longAndNULURIs() async throws {
        try await EngineHarness.run { h in
            for length in [1000, 70_000] {
                let long = "sip:" + String(repeating: "a", count: length) + "@127.0.0.1:9"
                if length < 4000 {
                    // Long but valid and fits a SIP message: the call is placed (and ended at once).
                    let call = try await h.engine.makeCall(to: long, from: h.account)
                    try await h.engine.hangup(call)
                } else {
                    // Too long for a SIP message: pjsua's typed error.
                    await #expect(throws: PJSUAError.self) { try await h.engine.makeCall(to: long, from: h.account) }
                }
                await #expect(throws: PJSUAUsageError.self) {
                    try await h.engine.addAccount(AccountConfiguration(identity: long + ">", registersOnAdd: false))
                }
            }
            await #expect(throws: PJSUAUsageError.self) {
                try await h.engine.makeCall(to: "sip:a@127.0.0.1:9\u{0}>;x", from: h.account)
            }
        }
    }
}

extension EngineTests {
    @Test("Attended transfer of a call to replace itself throws and the call stays up")
    func transferReplacingItselfThrows() async throws {
        try await EngineHarness.run { h in
            let (caller, _) = try await h.selfCall()
            await #expect(throws: PJSUAUsageError.self) { try await h.engine.transfer(caller, replacing: caller) }
            // A REFER would have been answered within milliseconds over loopback; then check.
            try await h.engine.setHold(caller)
            try await h.log.first("held") {
                if case .callMediaState(let mediaChange) = $0, mediaChange.call == caller {
                    return true
                } else {
                    return false
                }
            }
            #expect(try await h.engine.callInfo(caller).state == .confirmed)
            try await h.engine.hangup(caller)
        }
    }
}

extension EngineTests {
    @Test("A TLS transport naming a CA, certificate or key file that cannot be read fails start")
    func unreadableTLSFilesThrow() async throws {
        let engine = PJSUA()
        for tls in [
            TLSConfiguration(caFile: "/nonexistent/ca.pem"),
            TLSConfiguration(certificateFile: "/nonexistent/cert.pem", privateKeyFile: "/nonexistent/key.pem"),
        ] {
            await #expect(throws: PJSUAUsageError.self) {
                try await engine.start(
                    Configuration(
                        transports: [
                            TransportConfiguration(type: .tls, bindAddress: "127.0.0.1", port: 0, tls: tls)
                        ], media: nullSound))
            }
            await engine.shutdown()
        }
        // Nothing was left half-started.
        try await engine.start(Configuration(transports: loopbackUDP, media: nullSound))
        await engine.shutdown()
    }
}

extension EngineTests {
    @Test("A SIP INFO digit that is no DTMF digit is not reported; a lowercase one is reported uppercase")
    func infoWithInvalidDigit() async throws {
        try await EngineHarness.run { h in
            let sipp = try await h.sippCaller("uac_info_invalid_digits.xml")
            let call = try await h.log.incomingCall(fromUser: "sipp")
            try await h.engine.answer(call, statusCode: 200)
            let events = try await h.log.wait("sipp's BYE") { $0.contains { $0.isState(.disconnected, of: call) } }
            try await sipp.expectFinished()
            let digits = events.compactMap { $0.receivedDigit?.call == call ? $0.receivedDigit?.digit : nil }
            #expect(digits == ["D", "8"])
        }
    }
}

extension EngineTests {
    @Test("transfer(_:to:) before start and after shutdown throws instead of crashing in the URI check")
    func transferWhenNotRunningThrows() async throws {
        let engine = PJSUA()
        let stale = Call(slot: 0, generation: 1)
        await #expect(throws: PJSUAUsageError.notStarted) {
            try await engine.transfer(stale, to: "sip:a@127.0.0.1:9")
        }
        try await engine.start(Configuration(transports: loopbackUDP, media: nullSound))
        await engine.shutdown()
        await #expect(throws: PJSUAUsageError.shutDown) {
            try await engine.transfer(stale, to: "sip:a@127.0.0.1:9")
        }
    }
}
