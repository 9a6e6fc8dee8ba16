import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Accounts removed and re-added under live traffic: nothing a peer sends may crash the
/// engine, and a new account never reports an older account's registration.
extension EngineTests {
    @Test("An account removed while its call is up: the call lives on, the peer's re-INVITE and BYE get 200")
    func accountRemovedUnderCall() async throws {
        try await EngineHarness.run { h in
            // sipp calls, re-INVITEs 1.5 s after the ACK, and hangs up 5.5 s later.
            let sipp = try await h.sippCaller(
                "uac_reinvite_new_port.xml", extra: ["-rtp_echo", "-mp", String(FreePort.udp())])
            let call = try await h.answeredCall(fromUser: "sipp")
            #expect(try await h.engine.callInfo(call).account == h.account)

            #expect(try await h.engine.removeAccount(h.account) == nil)
            // Every call-control entry point on the orphaned call still works.
            let info = try await h.engine.callInfo(call)
            #expect(info.account == nil && info.state == .confirmed, "\(info)")
            _ = try await h.engine.streamStatistics(call)
            try await h.engine.setMuted(call, muted: true)
            try await h.engine.setMuted(call, muted: false)
            #expect(try await h.engine.accounts().isEmpty)
            // A new account in the removed one's slot is not the orphaned call's account.
            let account = try await h.engine.addLocalAccount()
            #expect(account.slot == h.account.slot, "the test needs the slot reused")
            #expect(try await h.engine.callInfo(call).account == nil)

            // sipp's re-INVITE (new port, PCMA) rebuilds the stream; its BYE ends the call.
            let rebuilt = try? await h.log.audio(ofMediaEvent: 2, of: call)
            #expect(rebuilt?.status == .active, "\(sipp.messageBlocks.map(\.firstLine))")
            try await h.log.first("sipp's BYE", timeout: .seconds(15)) { $0.isState(.disconnected, of: call) }
            let result = try await sipp.finish()
            #expect(result.successfulCalls == 1 && result.failedCalls == 0, "\(result)")
            #expect(sipp.receivedStatusCodes.filter { $0 == 200 }.count >= 3, "\(sipp.receivedStatusCodes)")

            // The engine goes on: the new account calls itself.
            let caller = try await h.engine.makeCall(to: h.uri("again"), from: account)
            let incoming = try await h.log.first("the new incoming call") {
                if let other = $0.incomingCall { other != call } else { false }
            }
            try await h.engine.answer(try #require(incoming.incomingCall))
            try await h.log.first("media") { $0.hasActiveAudio(caller) }
            await h.engine.hangupAll()
        }
    }

    @Test("200 INVITEs racing the removal of their account by 0–20 ms: each gets a final response, nothing crashes")
    func invitesRacingAccountRemoval() async throws {
        let engine = PJSUA()
        let log = EventLog(engine.events)
        var configuration = Configuration(transports: loopbackUDP, maxCalls: 64, media: nullSound)
        // 200 INVITEs from one source in a few seconds, each meant to reach the account race.
        configuration.limits = .unlimited
        try await engine.start(configuration)
        defer { Task { await engine.shutdown() } }
        let port = try #require(try await engine.transports().first?.port)
        // Whatever reaches the app is answered at once with 486.
        let answering = Task {
            for await event in engine.events {
                if let call = event.incomingCall { try? await engine.answer(call, statusCode: 486) }
            }
        }
        defer { answering.cancel() }
        let peer = try RawSIPPeer()
        defer { peer.close() }
        var seed = SeededGenerator(seed: UInt64.random(in: 0...UInt64.max))
        var unanswered: [String] = []
        for round in 0..<200 {
            let account = try await engine.addLocalAccount()
            let callID = "race-\(round)-\(UUID().uuidString)"
            let offset = Duration.milliseconds(Int.random(in: 0...20, using: &seed))
            let sendFirst = Bool.random(using: &seed)
            if sendFirst { try peer.sendInvite(to: port, callID: callID) }
            // The race under test: the INVITE and the removal 0–20 ms apart.
            try await Task.sleep(for: offset)
            _ = try await engine.removeAccount(account, deadline: .milliseconds(200))
            if !sendFirst { try peer.sendInvite(to: port, callID: callID) }
            if let code = try await peer.finalResponse(callID: callID, timeout: .seconds(5)) {
                #expect((200...699).contains(code))
                if code >= 300 { try peer.sendAck(to: port, callID: callID) }
            } else {
                unanswered.append(callID)
            }
        }
        #expect(unanswered.isEmpty, "no final response to \(unanswered.count) INVITEs: \(unanswered.prefix(5))")
        // Alive and well: a self-call works.
        let account = try await engine.addLocalAccount()
        let call = try await engine.makeCall(to: "sip:self@127.0.0.1:\(port)", from: account)
        try await log.first("486 from the answering task") { $0.isState(.disconnected, of: call) }
        await engine.shutdown()
    }

    @Test("Kamailio: an account re-added in a removed one's slot with a wrong password never reads registered")
    func reAddedAccountStartsUnregistered() async throws {
        try await withKamailio { kamailio in
            try await EngineHarness.run { h in
                for _ in 0..<5 {
                    let alice = try await h.engine.addAccount(kamailio.account("alice"))
                    try await h.log.first("registered") { $0.isRegistration(of: alice) }
                    #expect(try await h.engine.accountInfo(alice).isRegistered)
                    _ = try await h.engine.removeAccount(alice)

                    let wrong = try await h.engine.addAccount(kamailio.account("alice", password: "wrong"))
                    #expect(wrong.slot == alice.slot, "the test needs the slot reused")
                    var readings: [AccountInfo] = []
                    let deadline = ContinuousClock.now + .seconds(1)
                    while ContinuousClock.now < deadline {
                        readings.append(try await h.engine.accountInfo(wrong))
                        // Sampling for a second, not a settle: no reading may say registered.
                        try await Task.sleep(for: .milliseconds(5))
                    }
                    #expect(
                        readings.allSatisfy { !$0.isRegistered && $0.expiresIn == .zero },
                        "\(readings.filter(\.isRegistered))")
                    // Before its own first response the status is 0, never the old account's 200.
                    #expect(
                        readings.allSatisfy { $0.statusCode == 0 || $0.statusCode == 401 },
                        "\(Set(readings.map(\.statusCode)))")
                    try await h.log.first("401") {
                        if case .registrationState(let registration) = $0, registration.account == wrong,
                            case .failed(401, _) = registration.outcome
                        {
                            true
                        } else {
                            false
                        }
                    }
                    let after = try await h.engine.accountInfo(wrong)
                    let registrations = h.log.events.filter {
                        $0.isRegistration(of: wrong) || $0.isRegistration(of: alice)
                    }
                    #expect(after.statusCode == 401, "\(after) after \(registrations)")
                    _ = try await h.engine.removeAccount(wrong)
                }
            }
        }
    }
}
