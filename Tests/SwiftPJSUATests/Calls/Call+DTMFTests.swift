import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// DTMF by RFC 4733 and SIP INFO, on self-calls and against sipp.
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
            try await h.hangUp(caller, waitingFor: callee)
        }
    }

    @Test("On the wire: a 183 with SDP before the 200, and DTMF as SIP INFO application/dtmf-relay both ways")
    func earlyMediaAndInfoOnTheWire() async throws {
        try await EngineHarness.run { h in
            let sipp = try await h.sippCaller("uac_early_media_info.xml")
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
            try await sipp.expectFinished()
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
    @Test("RFC 4733 digits queued on a call all arrive when a hold follows at once")
    func queuedDigitsSurviveHold() async throws {
        try await EngineHarness.run { h in
            let (caller, callee) = try await h.selfCall()
            try await h.engine.sendDTMF(caller, digits: "159#", duration: .milliseconds(120))
            try await h.engine.setHold(caller)
            try await h.log.wait("4 digits and the hold", timeout: .seconds(10)) { events in
                digits(in: events, of: callee).count >= 4 && events.contains { $0.hasAudio(.localHold, caller) }
            }
            #expect(String(h.log.digits(of: callee).map(\.digit)) == "159#")
            await h.engine.hangupAll()
        }
    }
}

extension EngineTests {
    @Test("RFC 4733 digits sent right after a resume arrive at the new media address the late answer gives")
    func digitsRightAfterResume() async throws {
        try await withTemporaryFolder { folder in
            let before = try RTPEventSink()
            let after = try RTPEventSink()
            defer {
                before.close()
                after.close()
            }
            let template = try String(
                contentsOfFile: Repository.scenario("uas_resume_answered_late_template.xml"), encoding: .utf8)
            let scenario = folder.file("uas_resume_answered_late.xml")
            try template.replacingOccurrences(of: "@PORT1@", with: String(before.port))
                .replacingOccurrences(of: "@PORT2@", with: String(after.port))
                .write(to: scenario, atomically: true, encoding: .utf8)
            let sipp = try await Sipp.start(scenario: scenario.path, folder: folder)
            var media = MediaConfiguration(soundDevice: .null)
            media.codecOrder = ["PCMU"]
            try await EngineHarness.run(media: media) { h in
                let call = try await h.engine.makeCall(to: sipp.uri, from: h.account)
                try await h.log.first("confirmed") { $0.isState(.confirmed, of: call) }
                try await h.engine.setHold(call)
                try await h.log.wait("the hold") { $0.contains { $0.hasAudio(.localHold, call) } }
                // sipp answers the resume 400 ms late, with media at a new port: a rebuilt stream.
                try await h.engine.resume(call)
                try await h.engine.sendDTMF(call, digits: "123", duration: .milliseconds(100))
                try await waitUntil("3 digits at the new address", timeout: .seconds(5), seen: { after.digits }) {
                    after.digits.count >= 3
                }
                #expect(after.digits == "123")
                #expect(before.digits.isEmpty, "none to the old address: \(before.digits)")
                #expect(after.packets > 10, "the resumed stream's audio too")
                try await h.engine.hangup(call)
                try await sipp.expectFinished()
            }
        }
    }
}
