import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// Conference bridging of calls: who hears whom, across a re-INVITE.
extension EngineTests {
    @Test("Conference: leg A's tone reaches leg B, and still does after B's re-INVITE moves to a new port and codec")
    func conferenceSurvivesReinvite() async throws {
        try await withTemporaryFolder { folder in
            let tone = try folder.toneFile()
            try await EngineHarness.run { h in
                // Leg A: the callee of a self-call whose caller plays the tone.
                let (caller, legA) = try await h.selfCall()
                try await h.engine.play(file: tone.path, into: caller, loop: true)
                // Leg B: sipp, echoing every RTP packet back, on media_port and later media_port+2.
                let mediaPort = FreePort.udp()
                let sipp = try await h.sippCaller(
                    "uac_reinvite_new_port.xml", extra: ["-rtp_echo", "-mp", String(mediaPort)])
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
                try await sipp.expectFinished()
                let reinvite = sipp.messageBlocks.last { $0.direction == .sent && $0.firstLine.hasPrefix("INVITE") }
                #expect(reinvite?.lines.contains { $0.hasPrefix("m=audio \(mediaPort + 2) RTP/AVP 8") } == true)
                try await h.engine.hangup(caller)
            }
        }
    }
}
