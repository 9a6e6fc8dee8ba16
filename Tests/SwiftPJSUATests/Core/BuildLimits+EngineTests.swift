import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// The build's fixed limits, reached through the public API: each one throws a typed error
/// at exactly the size `PJSUA.buildLimits` reports, and the engine keeps working. On the
/// `2.17-ios` profile (the pinned xcframework's 4 calls, 4 accounts, 12 conference ports)
/// these are the limits an app meets; on the provisioned builds the same tests reach 1024.
extension EngineTests {
    @Test("Configuration() with every default starts (the null device where the machine has no sound)")
    func defaultConfigurationStarts() async throws {
        var configuration = Configuration()
        #expect(configuration.maxCalls == min(32, PJSUA.buildLimits.calls))
        // The system's default device needs sound hardware (defaultSoundDeviceWithoutHardware).
        if !FileManager.default.fileExists(atPath: "/dev/snd") { configuration.media.soundDevice = .null }
        let engine = PJSUA()
        try await engine.start(configuration)
        #expect(await engine.isRunning)
        await engine.shutdown()
    }

    @Test("Accounts up to PJSUA_MAX_ACC are added; the next throws tooMany and calls still work")
    func accountLimitThrowsTooMany() async throws {
        try await EngineHarness.run { h in
            // The harness's local account is the first.
            var accounts = [h.account]
            var failure: (any Error)?
            while failure == nil, accounts.count <= PJSUA.buildLimits.accounts {
                do {
                    accounts.append(
                        try await h.engine.addAccount(
                            AccountConfiguration(identity: "sip:user\(accounts.count)@127.0.0.1", registersOnAdd: false)
                        ))
                } catch {
                    failure = error
                }
            }
            #expect(accounts.count == PJSUA.buildLimits.accounts)
            #expect((failure as? PJSUAError)?.code == .tooMany, "\(String(describing: failure))")
            // One removed makes room for one more.
            try await h.engine.removeAccount(accounts.removeLast())
            _ = try await h.engine.addAccount(
                AccountConfiguration(identity: "sip:again@127.0.0.1", registersOnAdd: false))
            let (caller, callee) = try await h.selfCall()
            try await h.hangUp(caller, waitingFor: callee)
        }
    }

    @Test(
        "Players and recorders up to PJSUA_MAX_PLAYERS and _RECORDERS, the next throws tooMany; a call's end frees all")
    func playerAndRecorderLimitsThrowTooMany() async throws {
        try await EngineHarness.run { h in
            let tone = try h.folder.toneFile()
            var (caller, callee) = try await h.selfCall()
            var players: [Player] = []
            var failure: (any Error)?
            while failure == nil, players.count <= PJSUA.buildLimits.players {
                do { players.append(try await h.engine.play(file: tone.path, into: caller, loop: true)) } catch {
                    failure = error
                }
            }
            #expect(players.count == PJSUA.buildLimits.players)
            #expect((failure as? PJSUAError)?.code == .tooMany, "\(String(describing: failure))")
            // One stopped by itself frees a slot for the next; the call's end closes the rest,
            // all on one bridge tick (the 2.17 build holds 1 056, 20 ms each one by one).
            try await h.engine.stop(players[0])
            try await h.engine.stop(try await h.engine.play(file: tone.path, into: caller))
            try await h.hangUp(caller, waitingFor: callee)
            await #expect(throws: PJSUAUsageError.unknownMediaPort) { try await h.engine.stop(players[1]) }

            (caller, callee) = try await h.selfCall()
            var recorders: [Recorder] = []
            failure = nil
            while failure == nil, recorders.count <= PJSUA.buildLimits.recorders {
                let file = h.folder.file("recording-\(recorders.count).wav")
                do { recorders.append(try await h.engine.record(file: file.path, from: callee)) } catch {
                    failure = error
                }
            }
            #expect(recorders.count == PJSUA.buildLimits.recorders)
            #expect((failure as? PJSUAError)?.code == .tooMany, "\(String(describing: failure))")
            try await h.engine.stop(recorders[0])
            try await h.engine.stop(try await h.engine.record(file: h.folder.file("again.wav").path, from: callee))
            // Every player the first call had was freed with it.
            try await h.engine.stop(try await h.engine.play(file: tone.path, into: caller))
            try await h.hangUp(caller, waitingFor: callee)
            // The call's end closes its recorders on the engine thread just after: the last
            // one's file becomes a complete WAV file (pjmedia writes the header on close).
            let last = h.folder.file("recording-\(recorders.count - 1).wav")
            try await waitUntil("the last recorder's file complete", timeout: .seconds(2)) {
                (try? WAVAudio(contentsOf: last))?.samples.isEmpty == false
            }
        }
    }

    @Test("A full conference bridge: tones, frame streams, recorders and an answer throw tooMany, and nothing asserts")
    func fullConferenceBridgeThrowsTooMany() async throws {
        try await EngineHarness.run { h in
            let (caller, callee) = try await h.selfCall()
            // Fill every free slot with looping tones to the sound device.
            var tones: [TonePlayer] = []
            var failure: (any Error)?
            while failure == nil, tones.count <= PJSUA.buildLimits.conferencePorts {
                do { tones.append(try await h.engine.playTonesToSoundDevice(Tone.busyEurope, loop: true)) } catch {
                    failure = error
                }
            }
            #expect((failure as? PJSUAError)?.code == .tooMany, "\(String(describing: failure))")
            #expect(!tones.isEmpty && tones.count < PJSUA.buildLimits.conferencePorts)
            await #expect { _ = try await h.engine.audioFrames(from: caller) } throws: { error in
                (error as? PJSUAError)?.code == .tooMany
            }
            let file = h.folder.file("full.wav")
            await #expect { _ = try await h.engine.record(file: file.path, from: callee) } throws: { error in
                (error as? PJSUAError)?.code == .tooMany
            }
            // A call answered while the bridge is full: pjsua could not give it media (and
            // pjmedia would assert), so the answer throws tooMany and the call keeps ringing;
            // rejected, both legs end with the rejection's status.
            let caller2 = try await h.engine.makeCall(to: h.uri("full"), from: h.account)
            let callee2 = try await Self.incomingLeg(of: caller2, h)
            await #expect { try await h.engine.answer(callee2) } throws: { error in
                (error as? PJSUAError)?.code == .tooMany
            }
            #expect([.incoming, .early].contains(try await h.engine.callInfo(callee2).state))
            try await h.engine.hangup(callee2, statusCode: 486)
            try await h.log.wait("both legs DISCONNECTED 486") { events in
                [caller2, callee2].allSatisfy { leg in
                    events.contains { event in
                        guard case .callState(let change) = event else { return false }
                        return change.call == leg && change.state == .disconnected && change.statusCode == 486
                    }
                }
            }
            // One slot freed: a frame tap takes it.
            try await h.engine.stop(tones.removeLast())
            let tap = try await h.engine.audioFrames(from: caller)
            try await h.engine.stop(tap)
            for tone in tones { try await h.engine.stop(tone) }
            try await h.hangUp(caller, waitingFor: callee)
        }
    }

    @Test("A request above PJSIP_MAX_PKT_LEN throws a typed error and the engine keeps working")
    func requestAboveMaxPacketLengthThrows() async throws {
        try await EngineHarness.run { h in
            let big = SIPHeader(
                name: "X-Padding", value: String(repeating: "a", count: PJSUA.buildLimits.sipMessageBytes))
            await #expect {
                _ = try await h.engine.makeCall(to: h.uri("big"), from: h.account, headers: [big])
            } throws: { error in
                (error as? PJSUAError)?.code == .messageTooLong
            }
            // Just under the limit less the rest of the INVITE goes out.
            let fits = SIPHeader(
                name: "X-Padding", value: String(repeating: "a", count: PJSUA.buildLimits.sipMessageBytes / 4))
            let caller = try await h.engine.makeCall(to: h.uri("fits"), from: h.account, headers: [fits])
            let callee = try await Self.incomingLeg(of: caller, h)
            try await h.engine.answer(callee)
            try await h.log.first("the call with the padded INVITE confirmed") { $0.isState(.confirmed, of: caller) }
            try await h.hangUp(caller, waitingFor: callee)
        }
    }

    /// The incoming leg of a self-call the test placed, found by its Call-ID.
    private static func incomingLeg(of caller: Call, _ h: EngineHarness) async throws -> Call {
        let sipCallID = try await h.engine.callInfo(caller).sipCallID
        let event = try await h.log.first("the incoming leg of \(sipCallID)") { event in
            if case .incomingCall(let incoming) = event { return incoming.sipCallID == sipCallID }
            return false
        }
        return try #require(event.incomingCall)
    }
}
