import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

// Call features of issue 4 against real peers: the engine calling itself (both legs are
// real SIP and RTP over loopback) and sipp scenarios that check what went over the wire.

/// A DTMF event's parts.
struct ReceivedDigit: Hashable, Sendable {
    var call: Call
    var digit: Character
    var method: DTMFMethod
    var duration: Duration?
}

extension PJSUAEvent {
    var receivedDigit: ReceivedDigit? {
        if case .dtmf(let received) = self {
            let call = received.call
            let digit = received.digit
            let method = received.method
            let duration = received.duration
            return ReceivedDigit(call: call, digit: digit, method: method, duration: duration)
        }
        return nil
    }

    /// The media streams of a media event of `call`.
    func media(of call: Call) -> [MediaStream]? {
        if case .callMediaState(let mediaChange) = self, mediaChange.call == call { return mediaChange.media }
        return nil
    }

    /// Whether this is a media event of `call` whose audio stream has `status`.
    func hasAudio(_ status: MediaStatus, _ call: Call) -> Bool {
        media(of: call)?.contains { $0.type == .audio && $0.status == status } ?? false
    }

    var transferStatus: (call: Call, code: Int, reason: String, final: Bool)? {
        if case .transferStatus(let progress) = self { return (progress.call, progress.statusCode, progress.reason, progress.isFinal) }
        return nil
    }
}

/// The DTMF digits `call` received among `events`.
func digits(in events: [PJSUAEvent], of call: Call) -> [ReceivedDigit] {
    events.compactMap(\.receivedDigit).filter { $0.call == call }
}

extension EventLog {
    /// Waits for an incoming call whose From URI's user is `user` and returns it.
    func incomingCall(fromUser user: String) async throws -> Call {
        let event = try await first("incoming call from \(user)") {
            if case .incomingCall(let incoming) = $0 { return incoming.from.uri.hasPrefix("sip:\(user)@") }
            return false
        }
        return try #require(event.incomingCall)
    }

    /// Waits for `call`'s `n`th media event (from 1) and returns its audio stream.
    func audio(ofMediaEvent n: Int, of call: Call) async throws -> MediaStream? {
        let events = try await wait("media event #\(n) of \(call)") { $0.compactMap { $0.media(of: call) }.count >= n }
        return events.compactMap { $0.media(of: call) }[n - 1].first { $0.type == .audio }
    }

    func digits(of call: Call) -> [ReceivedDigit] { SwiftPJSUATests.digits(in: events, of: call) }

    /// Waits for a self-call's two legs to be confirmed with audio flowing.
    func waitForAudio(_ caller: Call, _ callee: Call) async throws {
        try await wait("both legs confirmed with audio") { events in
            events.contains { $0.isState(.confirmed, of: caller) }
                && events.contains { $0.isState(.confirmed, of: callee) }
                && events.contains { $0.hasActiveAudio(caller) } && events.contains { $0.hasActiveAudio(callee) }
        }
    }
}

extension EngineHarness {
    /// Records what `call` receives until `packets` more RTP packets have arrived, then
    /// closes the file and analyses it for `frequency`.
    func recordTone(
        _ call: Call, to file: URL, packets: UInt64 = 100, frequency: Double = 1000
    ) async throws -> ToneAnalysis {
        let start = try await engine.streamStatistics(call).packetsReceived
        let recorder = try await engine.record(call, to: file.path)
        try await poll("\(packets) packets on \(call)") {
            try await $0.streamStatistics(call).packetsReceived >= start + packets
        }
        try await engine.stop(recorder)
        return ToneAnalysis(try WAVAudio(contentsOf: file), frequency: frequency)
    }
}

func isInvalidState(_ error: any Error, _ call: Call) -> Bool {
    if case .invalidCallState(let c, _) = error as? PJSUAUsageError { return c == call }
    return false
}

extension EngineTests {
    @Test("DTMF: 0-9 * # A-D by RFC 4733 and by SIP INFO arrive once each, in order, with their method")
    func dtmfBothMethods() async throws {
        // PCMU: pjproject 2.12 sends RFC 4733 digits a fixed 1600 timestamp units long, which
        // is 200 ms at PCMU's 8 kHz but 33 ms at opus's 48 kHz (see sendDTMF's docs).
        var media = MediaConfiguration(soundDevice: .null)
        media.codecOrder = ["PCMU"]
        try await EngineHarness.run(media: media) { h in
            let caller = try await h.engine.makeCall(to: h.uri("self"), from: h.account)
            let callee = try #require(try await h.log.first("incoming") { $0.incomingCall != nil }.incomingCall)
            // Not confirmed yet: a typed error, nothing sent.
            await #expect { try await h.engine.sendDTMF(caller, digits: "1") } throws: { isInvalidState($0, caller) }
            await #expect(throws: PJSUAUsageError.invalidDTMFDigits("12x")) {
                try await h.engine.sendDTMF(caller, digits: "12x")
            }
            try await h.engine.answer(callee)
            try await h.log.waitForAudio(caller, callee)

            let all = "0123456789*#ABCD"
            try await h.engine.sendDTMF(caller, digits: all, method: .rfc4733)
            try await h.log.wait("16 RFC 4733 digits", timeout: .seconds(10)) { digits(in: $0, of: callee).count >= 16 }
            // SIP INFO the other way, with a chosen duration.
            try await h.engine.sendDTMF(callee, digits: "5#", method: .sipInfo, duration: .milliseconds(250))
            try await h.log.wait("2 INFO digits") { digits(in: $0, of: caller).count >= 2 }
            // pjmedia sends each RFC 4733 end packet three times; by now any duplicate has
            // arrived (it was sent before the INFO requests), and none was reported.
            let received = h.log.digits(of: callee)
            #expect(String(received.map(\.digit)) == all)
            #expect(received.allSatisfy { $0.method == .rfc4733 })
            for digit in received {
                let duration = try #require(digit.duration)
                #expect(duration >= .milliseconds(100) && duration <= .milliseconds(400), "\(digit)")
            }
            let info = h.log.digits(of: caller)
            #expect(info.map(\.digit) == ["5", "#"])
            #expect(info.allSatisfy { $0.method == .sipInfo && $0.duration == .milliseconds(250) })
            try await h.engine.hangup(caller)
            try await h.log.first("ended") { $0.isState(.disconnected, of: callee) }
        }
    }

    @Test("Hold then resume on a self-call: local and remote hold in media events, the tone flows after resume")
    func holdResumeCarriesToneAfter() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let tone = folder.file("tone.wav")
        try WAVAudio.tone(frequency: 1000, duration: .seconds(3)).write(to: tone)
        try await EngineHarness.run { h in
            let (caller, callee) = try await h.engine.answeredSelfCall(to: h.uri("self"), from: h.account, log: h.log)
            try await h.log.waitForAudio(caller, callee)
            try await h.engine.play(file: tone.path, into: callee, loop: true)
            try await h.engine.setHold(caller)
            try await h.log.wait("caller local hold, callee remote hold") { events in
                events.contains { $0.hasAudio(.localHold, caller) }
                    && events.contains { $0.hasAudio(.remoteHold, callee) }
            }
            // Held: we send only, the far end sends nothing.
            let held = h.log.events.last { $0.media(of: caller) != nil }?.media(of: caller)?.first
            #expect(held?.direction == .send)
            let heldBy = h.log.events.last { $0.media(of: callee) != nil }?.media(of: callee)?.first
            #expect(heldBy?.direction == .receive)
            let mediaEvents = h.log.events.filter { $0.media(of: caller) != nil }.count
            try await h.engine.resume(caller)
            try await h.log.wait("caller active again") { events in
                events.filter { $0.media(of: caller) != nil }.count > mediaEvents
                    && events.last { $0.media(of: caller) != nil }?.hasActiveAudio(caller) == true
            }
            let analysis = try await h.recordTone(caller, to: folder.file("after-resume.wav"))
            #expect(analysis.detected(), "\(analysis)")
            try await h.engine.hangup(caller)
            try await h.log.first("ended") { $0.isState(.disconnected, of: callee) }
        }
    }

    @Test("Mute silences what a call sends; unmute brings the tone back")
    func muteAndUnmute() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let tone = folder.file("tone.wav")
        try WAVAudio.tone(frequency: 1000, duration: .seconds(3)).write(to: tone)
        try await EngineHarness.run { h in
            let (caller, callee) = try await h.engine.answeredSelfCall(to: h.uri("self"), from: h.account, log: h.log)
            try await h.log.waitForAudio(caller, callee)
            try await h.engine.setMuted(caller, muted: true)
            try await h.engine.play(file: tone.path, into: caller, loop: true)
            let muted = try await h.recordTone(callee, to: folder.file("muted.wav"))
            #expect(!muted.detected(minimumDuration: .milliseconds(100)), "\(muted)")
            try await h.engine.setMuted(caller, muted: false)
            let unmuted = try await h.recordTone(callee, to: folder.file("unmuted.wav"))
            #expect(unmuted.detected(), "\(unmuted)")
            try await h.engine.hangup(caller)
        }
    }

    @Test("Early media: a 183 with SDP puts the caller in EARLY and the callee's tone is heard before any answer")
    func earlyMediaTone() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let tone = folder.file("tone.wav")
        try WAVAudio.tone(frequency: 1000, duration: .seconds(3)).write(to: tone)
        try await EngineHarness.run { h in
            let (caller, callee) = try await h.engine.answeredSelfCall(
                to: h.uri("self"), from: h.account, log: h.log, statusCode: 183)
            try await h.log.wait("caller EARLY with audio") { events in
                events.contains { $0.isState(.early, of: caller) } && events.contains { $0.hasActiveAudio(caller) }
                    && events.contains { $0.hasActiveAudio(callee) }
            }
            try await h.engine.play(file: tone.path, into: callee, loop: true)
            let analysis = try await h.recordTone(caller, to: folder.file("early.wav"))
            #expect(analysis.detected(), "\(analysis)")
            let early = h.log.events.first { $0.isState(.early, of: caller) }
            if case .callState(let change) = early { #expect(change.lastStatus == 183) }
            #expect(try await h.engine.callInfo(caller).state == .early)
            #expect(!h.log.states(of: caller).contains(.confirmed))
            // The final answer follows the early media.
            try await h.engine.answer(callee, statusCode: 200)
            try await h.log.wait("both confirmed") { events in
                events.contains { $0.isState(.confirmed, of: caller) }
                    && events.contains { $0.isState(.confirmed, of: callee) }
            }
            #expect(h.log.states(of: caller) == [.calling, .early, .connecting, .confirmed])
            try await h.engine.hangup(caller)
            try await h.log.first("callee ended") { $0.isState(.disconnected, of: callee) }
        }
    }

    @Test("quality(of:) yields growing RTP counters and finishes when the call ends")
    func qualityStream() async throws {
        try await EngineHarness.run { h in
            let (caller, callee) = try await h.engine.answeredSelfCall(to: h.uri("self"), from: h.account, log: h.log)
            try await h.log.waitForAudio(caller, callee)
            let samples = Task {
                var collected: [StreamStatistics] = []
                for await sample in h.engine.quality(of: caller, every: .milliseconds(200)) { collected.append(sample) }
                return collected
            }
            try await h.poll("25 packets") { try await $0.streamStatistics(callee).packetsReceived >= 25 }
            try await h.poll("1 s of packets") { try await $0.streamStatistics(caller).packetsSent >= 60 }
            let calleeView = try await h.engine.streamStatistics(callee)
            try await h.engine.hangup(caller)
            let clock = ContinuousClock()
            let hungUp = clock.now
            let collected = await samples.value
            #expect(clock.now - hungUp < .seconds(2))
            #expect(collected.count >= 3)
            #expect(zip(collected, collected.dropFirst()).allSatisfy { $0.packetsSent <= $1.packetsSent })
            let last = try #require(collected.last)
            #expect(last.packetsSent > 0 && last.bytesSent > 0)
            #expect(last.packetsReceived > 0 && last.bytesReceived > 0)
            #expect(calleeView.packetsLost == 0)
            #expect(calleeView.jitter < .milliseconds(100))
        }
    }

    @Test("Codecs: listed with priorities; the top priority is negotiated, a disabled one is not offered")
    func codecPriorities() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let sipp = try await Sipp.start(scenario: "uas", folder: folder)
        defer { sipp.stop() }
        try await EngineHarness.run { h in
            let codecs = try await h.engine.codecs()
            let ids = codecs.map(\.id)
            #expect(ids.contains("PCMU/8000/1") && ids.contains("PCMA/8000/1"), "\(codecs)")
            #expect(codecs.filter { $0.id.hasPrefix("PCM") }.allSatisfy { $0.isEnabled }, "\(codecs)")
            #expect(codecs.map(\.priority) == codecs.map(\.priority).sorted(by: >))
            try await h.engine.setCodecPriority("PCMA", 255)
            #expect(try await h.engine.codecs().first?.id == "PCMA/8000/1")
            let (caller, callee) = try await h.engine.answeredSelfCall(to: h.uri("self"), from: h.account, log: h.log)
            try await h.log.waitForAudio(caller, callee)
            #expect(try await h.engine.callInfo(caller).audioCodec == "PCMA/8000")
            try await h.engine.hangup(caller)
            try await h.log.first("ended") { $0.isState(.disconnected, of: callee) }

            // Disable PCMA: sipp's INVITE carries no payload type 8 and the top is PCMU (0).
            try await h.engine.setCodecPriority("PCMA", 0)
            try await h.engine.setCodecPriority("PCMU", 254)
            #expect(try await h.engine.codecs().first { $0.id == "PCMA/8000/1" }?.isEnabled == false)
            await #expect(throws: PJSUAError.self) { try await h.engine.setCodecPriority("NOPE", 1) }
            let call = try await h.engine.makeCall(to: sipp.uri, from: h.account)
            try await h.log.first("confirmed") { $0.isState(.confirmed, of: call) }
            #expect(try await h.engine.callInfo(call).audioCodec == "PCMU/8000")
            try await h.engine.hangup(call)
            try await h.log.first("ended") { $0.isState(.disconnected, of: call) }
        }
        _ = try await sipp.finish()
        let invite = try #require(
            sipp.messageBlocks.first { $0.direction == .received && $0.firstLine.hasPrefix("INVITE") })
        let mLine = try #require(invite.lines.first { $0.hasPrefix("m=audio") })
        let payloads = mLine.split(separator: " ").dropFirst(3)
        #expect(payloads.first == "0", "\(mLine)")
        #expect(!payloads.contains("8"), "\(mLine)")
    }
}

/// The `a=` direction attributes of the SDP bodies in `messages`.
func sdpDirections(_ messages: [Sipp.LoggedMessage]) -> [String] {
    let directions: Set<String> = ["a=sendrecv", "a=sendonly", "a=recvonly", "a=inactive"]
    return messages.compactMap { message in
        message.lines.first { directions.contains($0.trimmingCharacters(in: .whitespaces)) }
            .map { String($0.trimmingCharacters(in: .whitespaces).dropFirst(2)) }
    }
}

extension EngineTests {
    @Test(
        "Hold per RFC 3264/6337 against sipp: sendonly, sendonly again, sendrecv; inactive when held; remote sendonly and inactive are remote hold"
    )
    func holdOffersOnTheWire() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try await EngineHarness.run { h in
            let sipp = try await Sipp.start(
                scenario: "uac_hold.xml", remote: "127.0.0.1:\(h.transport.port)", folder: folder)
            defer { sipp.stop() }
            let call = try #require(try await h.log.first("incoming") { $0.incomingCall != nil }.incomingCall)
            try await h.engine.answer(call)
            let media = { (n: Int) in try await h.log.audio(ofMediaEvent: n, of: call) }
            #expect(try await media(1)?.status == .active)
            try await h.log.first("confirmed") { $0.isState(.confirmed, of: call) }
            try await h.engine.setHold(call)
            #expect(try await media(2)?.status == .localHold)
            try await h.engine.setHold(call)
            #expect(try await media(3)?.status == .localHold)
            try await h.engine.resume(call)
            #expect(try await media(4)?.status == .active)
            // sipp holds us with sendonly.
            let heldBySendonly = try await media(5)
            #expect(heldBySendonly?.status == .remoteHold)
            #expect(heldBySendonly?.direction == .receive)
            // Holding while held offers inactive.
            try await h.engine.setHold(call)
            #expect(try await media(6)?.status == .localHold)
            try await h.engine.resume(call)
            #expect(try await media(7)?.status == .remoteHold)
            // sipp resumes, then holds with inactive.
            #expect(try await media(8)?.status == .active)
            let heldByInactive = try await media(9)
            #expect(heldByInactive?.status == .remoteHold)
            #expect(heldByInactive?.direction == MediaDirection.inactive)
            try await h.log.first("BYE from sipp") { $0.isState(.disconnected, of: call) }
            let result = try await sipp.finish()
            #expect(result.successfulCalls == 1, "\(result)")
            let blocks = sipp.messageBlocks
            // What the engine offered in its re-INVITEs, in order.
            let offers = blocks.filter { $0.direction == .received && $0.firstLine.hasPrefix("INVITE ") }
            #expect(sdpDirections(offers) == ["sendonly", "sendonly", "sendrecv", "inactive", "sendrecv"])
            // What the engine answered to sipp's offers (sendrecv, sendonly, sendrecv, inactive).
            let answers = blocks.filter {
                $0.direction == .received && $0.firstLine.hasPrefix("SIP/2.0 200")
                    && $0.header("CSeq")?.hasSuffix("INVITE") == true
            }
            #expect(sdpDirections(answers) == ["sendrecv", "recvonly", "sendrecv", "inactive"])
        }
    }
}

extension EngineTests {
    @Test("Conference: leg A's tone reaches leg B, and still does after B's re-INVITE moves to a new port and codec")
    func conferenceSurvivesReinvite() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let tone = folder.file("tone.wav")
        try WAVAudio.tone(frequency: 1000, duration: .seconds(3)).write(to: tone)
        try await EngineHarness.run { h in
            // Leg A: the callee of a self-call whose caller plays the tone.
            let (caller, legA) = try await h.engine.answeredSelfCall(to: h.uri("self"), from: h.account, log: h.log)
            try await h.log.waitForAudio(caller, legA)
            try await h.engine.play(file: tone.path, into: caller, loop: true)
            // Leg B: sipp, echoing every RTP packet back, on media_port and later media_port+2.
            let mediaPort = FreePort.udp()
            let sipp = try await Sipp.start(
                scenario: "uac_reinvite_new_port.xml", remote: "127.0.0.1:\(h.transport.port)",
                extra: ["-rtp_echo", "-mp", String(mediaPort)], folder: folder)
            defer { sipp.stop() }
            let legB = try await h.log.incomingCall(fromUser: "sipp")
            try await h.engine.answer(legB)
            #expect(try await h.log.audio(ofMediaEvent: 1, of: legB)?.status == .active)
            try await h.engine.joinConference([legA, legB])
            // The re-INVITE: new port, PCMA instead of PCMU; the stream is rebuilt.
            #expect(try await h.log.audio(ofMediaEvent: 2, of: legB)?.status == .active)
            #expect(try await h.engine.callInfo(legB).audioCodec == "PCMA/8000")
            // What leg B receives is sipp's echo of what the engine sent it: leg A's tone.
            let analysis = try await h.recordTone(legB, to: folder.file("legB-after.wav"))
            #expect(analysis.detected(), "\(analysis)")
            // Out of the conference, leg B no longer gets leg A's audio.
            try await h.engine.leaveConference(legB)
            let alone = try await h.recordTone(legB, to: folder.file("legB-alone.wav"), packets: 50)
            #expect(!alone.detected(minimumDuration: .milliseconds(200)), "\(alone)")
            try await h.log.first("sipp's BYE") { $0.isState(.disconnected, of: legB) }
            let result = try await sipp.finish()
            #expect(result.successfulCalls == 1, "\(result)")
            let reinvite = sipp.messageBlocks.filter { $0.direction == .sent && $0.firstLine.hasPrefix("INVITE") }.last
            #expect(reinvite?.lines.contains { $0.hasPrefix("m=audio \(mediaPort + 2) RTP/AVP 8") } == true)
            try await h.engine.hangup(caller)
        }
    }
}

extension EngineTests {
    @Test("Blind transfer: REFER with Refer-To; progress: accepted, then 100 and 200 (final) from the NOTIFY sipfrags")
    func blindTransfer() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let sipp = try await Sipp.start(scenario: "uas_refer_accept.xml", folder: folder)
        defer { sipp.stop() }
        try await EngineHarness.run { h in
            let call = try await h.engine.makeCall(to: sipp.uri, from: h.account)
            try await h.log.first("confirmed") { $0.isState(.confirmed, of: call) }
            try await h.engine.transfer(
                call, to: "sip:carol@127.0.0.1:5999", headers: [SIPHeader(name: "X-Transfer", value: "blind")])
            let events = try await h.log.wait("final transfer status") { events in
                events.contains { $0.transferStatus?.call == call && $0.transferStatus?.final == true }
            }
            let progress = events.compactMap(\.transferStatus).filter { $0.call == call }
            // pjsua reports the REFER's 202 as "100 Accepted", then each sipfrag's status line.
            #expect(progress.map(\.code) == [100, 100, 200])
            #expect(progress.map(\.reason) == ["Accepted", "Trying", "OK"])
            #expect(progress.map(\.final) == [false, false, true])
            #expect(try await h.engine.callInfo(call).state == .confirmed)
            try await h.engine.hangup(call)
            try await h.log.first("ended") { $0.isState(.disconnected, of: call) }
        }
        let result = try await sipp.finish()
        #expect(result.successfulCalls == 1, "\(result)")
        let refer = try #require(
            sipp.messageBlocks.first { $0.direction == .received && $0.firstLine.hasPrefix("REFER") })
        #expect(refer.header("Refer-To")?.contains("sip:carol@127.0.0.1:5999") == true)
        #expect(refer.header("X-Transfer") == "blind")
    }

    @Test("A REFER answered 403 gives a final failed-transfer event and the call stays up")
    func transferRejected() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let sipp = try await Sipp.start(scenario: "uas_refer_403.xml", folder: folder)
        defer { sipp.stop() }
        try await EngineHarness.run { h in
            let call = try await h.engine.makeCall(to: sipp.uri, from: h.account)
            try await h.log.first("confirmed") { $0.isState(.confirmed, of: call) }
            try await h.engine.transfer(call, to: "sip:carol@127.0.0.1:5999")
            let failed = try await h.log.first("final transfer status") { $0.transferStatus?.final == true }
            #expect(failed.transferStatus?.code == 403)
            #expect(try await h.engine.callInfo(call).state == .confirmed)
            #expect(!h.log.states(of: call).contains(.disconnected))
            try await h.engine.hangup(call)
            try await h.log.first("ended") { $0.isState(.disconnected, of: call) }
        }
        let result = try await sipp.finish()
        #expect(result.successfulCalls == 1, "\(result)")
        #expect(sipp.receivedRequests.last == "BYE")
    }

    @Test("Attended transfer: REFER on call A whose Refer-To replaces call B's dialog (RFC 3891)")
    func attendedTransfer() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let transferee = try await Sipp.start(scenario: "uas_refer_accept.xml", folder: folder)
        defer { transferee.stop() }
        let target = try await Sipp.start(scenario: "uas", folder: folder)
        defer { target.stop() }
        try await EngineHarness.run { h in
            let a = try await h.engine.makeCall(to: transferee.uri, from: h.account)
            let b = try await h.engine.makeCall(to: target.uri, from: h.account)
            try await h.log.wait("both confirmed") { events in
                events.contains { $0.isState(.confirmed, of: a) } && events.contains { $0.isState(.confirmed, of: b) }
            }
            let bCallID = try await h.engine.callInfo(b).sipCallID
            try await h.engine.transfer(a, replacing: b)
            try await h.log.first("final transfer status") {
                $0.transferStatus?.call == a && $0.transferStatus?.final == true
            }
            await h.engine.hangupAll()
            try await h.log.wait("both ended") { events in
                events.contains { $0.isState(.disconnected, of: a) }
                    && events.contains { $0.isState(.disconnected, of: b) }
            }
            let refer = try #require(
                transferee.messageBlocks.first { $0.direction == .received && $0.firstLine.hasPrefix("REFER") })
            let referTo = try #require(refer.header("Refer-To"))
            #expect(referTo.contains("127.0.0.1:\(target.port)"), "\(referTo)")
            #expect(referTo.contains("Replaces="), "\(referTo)")
            // The Call-ID is URI-escaped inside the Refer-To ('@' → %40).
            let escaped = bCallID.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? bCallID
            let unescaped = referTo.removingPercentEncoding ?? referTo
            #expect(unescaped.contains(bCallID) || referTo.contains(escaped), "\(referTo) vs \(bCallID)")
        }
        #expect(try await transferee.finish().successfulCalls == 1)
        #expect(try await target.finish().successfulCalls == 1)
    }

    @Test(
        "Incoming REFER: accepted by default (the engine calls the target and NOTIFYs 200); rejected 603 by a handler")
    func incomingRefer() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try await EngineHarness.run { h in
            let sipp = try await Sipp.start(
                scenario: "uac_refer.xml", remote: "127.0.0.1:\(h.transport.port)", folder: folder)
            defer { sipp.stop() }
            let call = try await h.log.incomingCall(fromUser: "sipp")
            try await h.engine.answer(call)
            // The REFER makes the engine call sip:transfer-target at its own address.
            let events = try await h.log.wait("the transferred call") {
                $0.filter { $0.incomingCall != nil }.count >= 2
            }
            let target = try #require(events.last { $0.incomingCall != nil }?.incomingCall)
            try await h.engine.answer(target)
            let request = try await h.log.first("transfer request") {
                if case .transferRequest(let answer) = $0, answer.call == call { return true }
                return false
            }
            if case .transferRequest(let answer) = request {
                let uri = answer.target
                let status = answer.statusCode
                #expect(uri.contains("sip:transfer-target@127.0.0.1:\(h.transport.port)"))
                #expect(status == 202)
            }
            try await h.log.first("sipp's BYE") { $0.isState(.disconnected, of: call) }
            let result = try await sipp.finish()
            #expect(result.successfulCalls == 1, "\(result)")
            let notifies = sipp.messageBlocks.filter { $0.direction == .received && $0.firstLine.hasPrefix("NOTIFY") }
            #expect(notifies.last?.lines.contains("SIP/2.0 200 OK") == true, "\(notifies.map(\.lines))")
            #expect(notifies.last?.header("Subscription-State")?.hasPrefix("terminated") == true)
            await h.engine.hangupAll()

            // With a handler that refuses, the REFER is answered 603 and nothing is called.
            try await h.engine.setTransferRequestHandler { _ in .reject(statusCode: 603) }
            let refused = try await Sipp.start(
                scenario: "uac_refer_rejected.xml", remote: "127.0.0.1:\(h.transport.port)", folder: folder)
            defer { refused.stop() }
            let later = try await h.log.wait("second sipp call") { $0.filter { $0.incomingCall != nil }.count >= 3 }
            let second = try #require(later.last { $0.incomingCall != nil }?.incomingCall)
            try await h.engine.answer(second)
            try await h.log.first("sipp's BYE") { $0.isState(.disconnected, of: second) }
            let refusedResult = try await refused.finish()
            #expect(refusedResult.successfulCalls == 1, "\(refusedResult)")
            #expect(h.log.events.filter { $0.incomingCall != nil }.count == 3)
            #expect(
                h.log.events.contains {
                    if case .transferRequest(let answer) = $0, answer.call == second, answer.statusCode == 603 { return true }
                    return false
                })
        }
    }
}

extension EngineTests {
    @Test(
        "Custom headers: incomingCall lists the INVITE's X- and P-Asserted-Identity headers; make/answer/hangup send ours"
    )
    func customHeaders() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let uas = try await Sipp.start(scenario: "uas", folder: folder)
        defer { uas.stop() }
        try await EngineHarness.run { h in
            let sipp = try await Sipp.start(
                scenario: "uac_headers.xml", remote: "127.0.0.1:\(h.transport.port)", folder: folder)
            defer { sipp.stop() }
            let event = try await h.log.first("incoming") { $0.incomingCall != nil }
            guard case .incomingCall(let incoming) = event else { return }
            let call = incoming.call
            let headers = incoming.headers
            #expect(headers.value(of: "x-campaign") == "spring-7")
            #expect(headers.value(of: "P-Asserted-Identity") == "\"Alice Example\" <sip:alice@example.com>")
            #expect(headers.contains { $0.name == "Call-ID" })
            await #expect(throws: PJSUAUsageError.invalidHeader("X-Bad: a\r\nInjected: 1")) {
                try await h.engine.answer(call, headers: [SIPHeader(name: "X-Bad", value: "a\r\nInjected: 1")])
            }
            // Headers pjsip writes itself cannot be added a second time, in any spelling.
            for name in ["CSeq", "call-id", "Via", "i", "Content-Length"] {
                await #expect(throws: PJSUAUsageError.invalidHeader("\(name): 99 BYE")) {
                    try await h.engine.answer(call, headers: [SIPHeader(name: name, value: "99 BYE")])
                }
            }
            try await h.engine.answer(call, headers: [SIPHeader(name: "X-Answered-By", value: "engine")])
            try await h.log.first("confirmed") { $0.isState(.confirmed, of: call) }
            try await h.engine.hangup(call, headers: [SIPHeader(name: "X-Hangup-Cause", value: "test done")])
            try await h.log.first("ended") { $0.isState(.disconnected, of: call) }
            let result = try await sipp.finish()
            #expect(result.successfulCalls == 1, "\(result)")
            let received = sipp.messageBlocks.filter { $0.direction == .received }
            #expect(received.first { $0.firstLine.hasPrefix("SIP/2.0 200") }?.header("X-Answered-By") == "engine")
            #expect(received.first { $0.firstLine.hasPrefix("BYE") }?.header("X-Hangup-Cause") == "test done")

            let outgoing = try await h.engine.makeCall(
                to: uas.uri, from: h.account, headers: [SIPHeader(name: "X-Campaign", value: "outbound-3")])
            try await h.log.first("outgoing confirmed") { $0.isState(.confirmed, of: outgoing) }
            try await h.engine.hangup(outgoing)
            try await h.log.first("outgoing ended") { $0.isState(.disconnected, of: outgoing) }
        }
        _ = try await uas.finish()
        let invite = uas.messageBlocks.first { $0.direction == .received && $0.firstLine.hasPrefix("INVITE") }
        #expect(invite?.header("X-Campaign") == "outbound-3")
    }

    @Test("32 concurrent calls from sipp (-l 32) are up together; ending one leaves the other 31 up")
    func thirtyTwoConcurrentCalls() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try await EngineHarness.run(maxCalls: 40) { h in
            // Answer every incoming call as it arrives.
            let answering = Task {
                for await event in h.engine.events {
                    if let call = event.incomingCall { try? await h.engine.answer(call) }
                }
            }
            defer { answering.cancel() }
            let sipp = try await Sipp.start(
                scenario: "uac", remote: "127.0.0.1:\(h.transport.port)", calls: 32,
                extra: ["-l", "32", "-r", "64", "-d", "2500"], folder: folder)
            defer { sipp.stop() }
            // All 32 confirmed at the same time: no call ended before the 32nd was up.
            let events = try await h.log.wait("32 calls up at once", timeout: .seconds(15)) { events in
                let confirmed = events.filter { $0.isState(.confirmed) }.count
                let ended = events.filter { $0.isState(.disconnected) }.count
                return confirmed >= 32 && ended == 0
            }
            let calls = Set(events.compactMap(\.incomingCall))
            #expect(calls.count == 32)
            #expect(try await h.engine.activeCalls().count == 32)
            var callIDs: Set<String> = []
            for call in calls {
                let info = try await h.engine.callInfo(call)
                #expect(info.state == .confirmed)
                callIDs.insert(info.sipCallID)
            }
            // Independent: ending one call leaves the other 31 confirmed.
            let ended = try #require(calls.min { $0.generation < $1.generation })
            try await h.engine.hangup(ended)
            try await h.log.first("one call ended") { $0.isState(.disconnected, of: ended) }
            for call in calls where call != ended {
                #expect(try await h.engine.callInfo(call).state == .confirmed)
            }
            try await h.log.wait("all 32 ended", timeout: .seconds(15)) { events in
                events.filter { $0.isState(.disconnected) }.count >= 32
            }
            let result = try await sipp.finish()
            // sipp's scenario did not expect our BYE on that one call.
            #expect(result.successfulCalls == 31, "\(result)")
            #expect(result.failedCalls == 1, "\(result)")
            #expect(Set(sipp.sentInviteCallIDs) == callIDs)
            // Each call ended once; the other 31 by sipp's own BYE.
            for call in calls { #expect(h.log.states(of: call).filter { $0 == .disconnected }.count == 1) }
            #expect(sipp.receivedRequests.filter { $0 == "BYE" }.count == 1)
        }
    }

    @Test("Beyond maxCalls: an incoming INVITE gets 486 with no incomingCall event, and makeCall throws tooMany")
    func callLimit() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let uas = try await Sipp.start(scenario: "uas", folder: folder)
        defer { uas.stop() }
        try await EngineHarness.run(maxCalls: 1) { h in
            let call = try await h.engine.makeCall(to: uas.uri, from: h.account)
            try await h.log.first("confirmed") { $0.isState(.confirmed, of: call) }
            let busy = try await Sipp.start(
                scenario: "uac_expect_486.xml", remote: "127.0.0.1:\(h.transport.port)", folder: folder)
            defer { busy.stop() }
            let result = try await busy.finish()
            #expect(result.successfulCalls == 1, "\(result)")
            #expect(busy.receivedStatusCodes.last == 486)
            #expect(!h.log.events.contains { $0.incomingCall != nil })
            do {
                _ = try await h.engine.makeCall(to: uas.uri, from: h.account)
                Issue.record("makeCall beyond the limit did not throw")
            } catch let error as PJSUAError {
                #expect(error.code == .tooMany, "\(error)")
            }
            #expect(try await h.engine.activeCalls() == [call])
            try await h.engine.hangup(call)
            try await h.log.first("ended") { $0.isState(.disconnected, of: call) }
        }
    }
}

extension EngineTests {
    @Test(
        "CLI: swiftpjsua call --header --dtmf --transfer-to --hold-after does each, and prints DTMF, hold and transfer events"
    )
    func cliCallFeatures() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try await EngineHarness.run { h in
            try await h.engine.setTransferRequestHandler { _ in .reject(statusCode: 603) }
            let cli = try PeerProcess(
                "swiftpjsua-call", executable: Repository.tool.path,
                arguments: [
                    "call", "--bind", "127.0.0.1", h.uri("cli"), "--header", "X-From-Cli: yes", "--dtmf", "42#",
                    "--transfer-to", "sip:elsewhere@127.0.0.1:5999", "--hold-after", "0.3", "--hangup-after", "2.5",
                ], folder: folder)
            defer { cli.stop() }
            let event = try await h.log.first("incoming from the CLI") { $0.incomingCall != nil }
            guard case .incomingCall(let incoming) = event else { return }
            let call = incoming.call
            let headers = incoming.headers
            #expect(headers.value(of: "X-From-Cli") == "yes")
            try await h.engine.answer(call)
            try await h.log.wait("3 digits, a REFER and a remote hold") { events in
                digits(in: events, of: call).count >= 3
                    && events.contains { if case .transferRequest(let answer) = $0, answer.call == call, answer.statusCode == 603 { true } else { false } }
                    && events.contains { $0.hasAudio(.remoteHold, call) }
            }
            #expect(String(h.log.digits(of: call).map(\.digit)) == "42#")
            try await h.engine.sendDTMF(call, digits: "7", method: .sipInfo)
            try await h.log.first("the CLI's BYE", timeout: .seconds(5)) { $0.isState(.disconnected, of: call) }
            #expect(try await cli.waitForExit(timeout: .seconds(5)) == 0, "\(cli.output)")
            let output = cli.output
            #expect(output.contains("dtmf call") && output.contains(" 7 sipInfo"), "\(output)")
            #expect(output.contains("transfer call") && output.contains("603"), "\(output)")
            #expect(output.contains("audio localHold send"), "\(output)")
        }
    }
}

extension EngineTests {
    @Test("CLI: swiftpjsua listen --dtmf --transfer-to --hold-after acts on each answered call")
    func cliListenFeatures() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let port = FreePort.udp()
        let cli = try PeerProcess(
            "swiftpjsua-listen", executable: Repository.tool.path,
            arguments: [
                "listen", "--bind", "127.0.0.1", "--port", String(port), "--header", "X-Answered-By: cli",
                "--dtmf", "9*",
                "--transfer-to", "sip:elsewhere@127.0.0.1:5999", "--hold-after", "0.3",
            ], folder: folder)
        defer { cli.stop() }
        try await cli.waitUntilListening()
        try await EngineHarness.run { h in
            try await h.engine.setTransferRequestHandler { _ in .reject(statusCode: 603) }
            let call = try await h.engine.makeCall(to: "sip:cli@127.0.0.1:\(port)", from: h.account)
            try await h.log.wait("2 digits, a REFER and a remote hold") { events in
                digits(in: events, of: call).count >= 2
                    && events.contains { if case .transferRequest(let answer) = $0, answer.call == call, answer.statusCode == 603 { true } else { false } }
                    && events.contains { $0.hasAudio(.remoteHold, call) }
            }
            #expect(String(h.log.digits(of: call).map(\.digit)) == "9*")
            try await h.engine.hangup(call)
            try await h.log.first("ended") { $0.isState(.disconnected, of: call) }
        }
        let output = cli.output
        #expect(output.contains("sending dtmf 9*"), "\(output)")
        #expect(output.contains("transfer call") && output.contains("603"), "\(output)")
        #expect(output.contains("holding call"), "\(output)")
    }
}

@Suite("Call feature values")
struct CallValueTests {
    @Test(
        "SIPHeader(parsing:) splits at the first colon and trims",
        arguments: [
            ("X-Campaign: spring-7", "X-Campaign", "spring-7"),
            ("P-Asserted-Identity:  \"A\" <sip:a@b.c:5060>", "P-Asserted-Identity", "\"A\" <sip:a@b.c:5060>"),
            ("X-Empty:", "X-Empty", ""),
        ])
    func parsesHeader(line: String, name: String, value: String) throws {
        let header = try #require(SIPHeader(parsing: line))
        #expect(header.name == name)
        #expect(header.value == value)
    }

    @Test("Lines without a name or colon are not headers; lookup ignores case")
    func rejectsNonHeaders() {
        #expect(SIPHeader(parsing: "no colon here") == nil)
        #expect(SIPHeader(parsing: ": value") == nil)
        let headers = [SIPHeader(name: "X-One", value: "1"), SIPHeader(name: "x-one", value: "2")]
        #expect(headers.value(of: "X-ONE") == "1")
        #expect(headers.value(of: "X-Two") == nil)
    }
}

extension EngineTests {
    @Test("On the wire: a 183 with SDP before the 200, and DTMF as SIP INFO application/dtmf-relay both ways")
    func earlyMediaAndInfoOnTheWire() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try await EngineHarness.run { h in
            let sipp = try await Sipp.start(
                scenario: "uac_early_media_info.xml", remote: "127.0.0.1:\(h.transport.port)", folder: folder)
            defer { sipp.stop() }
            let call = try await h.log.incomingCall(fromUser: "sipp")
            try await h.engine.answer(call, statusCode: 183)
            try await h.log.first("media in the early dialog") { $0.hasActiveAudio(call) }
            try await h.engine.answer(call, statusCode: 200)
            try await h.log.first("confirmed") { $0.isState(.confirmed, of: call) }
            try await h.engine.sendDTMF(call, digits: "5", method: .sipInfo, duration: .milliseconds(100))
            let digit = try await h.log.first("sipp's INFO digit") { $0.receivedDigit?.call == call }.receivedDigit
            #expect(digit?.digit == "8")
            #expect(digit?.method == .sipInfo)
            #expect(digit?.duration == .milliseconds(120))
            try await h.log.first("sipp's BYE") { $0.isState(.disconnected, of: call) }
            let result = try await sipp.finish()
            #expect(result.successfulCalls == 1, "\(result)")
            let received = sipp.messageBlocks.filter { $0.direction == .received }
            let progress = try #require(received.first { $0.firstLine.hasPrefix("SIP/2.0 183") })
            #expect(progress.header("Content-Type") == "application/sdp")
            #expect(progress.lines.contains { $0.hasPrefix("m=audio ") })
            let info = try #require(received.first { $0.firstLine.hasPrefix("INFO ") })
            #expect(info.header("Content-Type") == "application/dtmf-relay")
            #expect(info.lines.contains("Signal=5"), "\(info.lines)")
            #expect(info.lines.contains("Duration=100"), "\(info.lines)")
        }
    }
}

extension EngineTests {
    @Test(
        "Each codec of the pjproject build negotiates when put first, and carries a tone",
        arguments: ["opus/48000", "PCMU/8000", "PCMA/8000", "G722/16000", "GSM/8000", "speex/16000", "speex/8000"])
    func everyBuiltCodecNegotiates(codec: String) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let tone = folder.file("tone.wav")
        try WAVAudio.tone(frequency: 1000, duration: .seconds(5)).write(to: tone)
        let recording = folder.file("heard.wav")
        try await EngineHarness.run { h in
            let available = try await h.engine.codecs().map(\.id)
            let id = try #require(available.first { $0.hasPrefix(codec + "/") }, "\(codec) not in \(available)")
            try await h.engine.setCodecPriority(id, 255)
            let (caller, callee) = try await h.engine.answeredSelfCall(to: h.uri("self"), from: h.account, log: h.log)
            try await h.log.waitForAudio(caller, callee)
            #expect(try await h.engine.callInfo(caller).audioCodec == codec)
            #expect(try await h.engine.callInfo(callee).audioCodec == codec)
            // In one process both legs share the bridge clock: the caller's tone reaches the callee.
            try await h.engine.play(file: tone.path, into: caller, loop: true)
            try await h.engine.record(callee, to: recording.path)
            try await h.poll("1 s of RTP") { try await $0.streamStatistics(callee).packetsReceived >= 60 }
            try await h.engine.hangup(caller)
            try await h.log.first("ended") { $0.isState(.disconnected, of: callee) }
        }
        let analysis = ToneAnalysis(try WAVAudio(contentsOf: recording), frequency: 1000)
        #expect(analysis.detected(minimumDuration: .milliseconds(400)), "\(codec): \(analysis)")
    }
}
