import Foundation
import KitTestSupport
import PJSUATestSupport
import SwiftPJSUA
import SwiftPJSUAKit
import Testing

// In `EngineTests` for its `.serialized` trait (one pjsua per process, see CallRouter+OrderingTests.swift).
extension EngineTests {
    /// CallKit's flow as Apple describes it, on the real engine: start and answer actions
    /// fulfilled without waiting for the far end, so the audio session (and with `.byApp`
    /// the sound device) is up while the call rings. Times come from sipp's message log
    /// (what was on the wire, stamped to the microsecond) and the recording provider's
    /// stamps, both on the wall clock of this machine.
    @Suite("Kit: CallKit's start and answer flow on the real engine")
    struct KitCallKitFlow {
        typealias Rig = KitOrderings.Rig

        /// `later - earlier` in milliseconds.
        static func milliseconds(_ earlier: Date, _ later: Date) -> Double {
            later.timeIntervalSince(earlier) * 1000
        }

        /// Writes the long-ring scenario with `seconds` of a 1 kHz tone as its early media.
        static func longRingScenario(in folder: TemporaryFolder, seconds: Int = 30) throws -> URL {
            let audio = folder.file("early-media.ulaw")
            let tone = WAVAudio.tone(frequency: 1000, duration: .seconds(seconds), sampleRate: 8000, amplitude: 0.3)
            try Data(tone.samples.map(EngineTests.muLaw)).write(to: audio)
            let template = try String(
                contentsOfFile: Repository.scenario("kit_uas_long_ring_early_media_template.xml"), encoding: .utf8)
            let scenario = folder.file("kit_uas_long_ring_early_media.xml")
            try template.replacingOccurrences(of: "@AUDIO@", with: audio.path).write(
                to: scenario, atomically: true, encoding: .utf8)
            return scenario
        }

        @Test(
            """
            Outgoing, 180 then 183 with a 1 kHz tone then 200 after 20 s: start fulfilled within 100 ms of the INVITE, \
            ringback and the tone at the sound device after didActivate and before the 200, connecting at the 180, \
            connected at the 200
            """
        )
        func outgoingLongRingWithEarlyMedia() async throws {
            try await withTemporaryFolder { folder in
                let scenario = try Self.longRingScenario(in: folder)
                let sipp = try await Sipp.start(scenario: scenario.path, folder: folder)
                try await Rig.run { rig in
                    try await rig.h.engine.setCodecPriority("PCMU", 255)
                    let recording = SoundDeviceRecording(
                        try await rig.h.engine.soundDeviceFrames(
                            format: AudioFrameFormat(sampleRate: 8000, frameDuration: .milliseconds(20))))
                    let id = UUID()
                    let start = CallAction(callUUID: id, kind: .start(uri: sipp.uri, account: nil, hasVideo: false))
                    await rig.router.perform(start)
                    // perform returned: the start action is settled, the far end has not answered.
                    try await rig.expect(.fulfilled(start.id), timeout: .milliseconds(1))
                    let call = try #require(await rig.router.calls.first { $0.id == id }?.call)
                    #expect(recording.mark == 0, "no audio session yet, so no sound device and no frames")

                    // CallKit activates the audio session after the fulfilled start action.
                    try await rig.router.audioSessionDidActivate()
                    try await rig.expect(.startedConnecting(id))
                    try await rig.h.log.first("the 183 with early media") {
                        if case .callState(let change) = $0 {
                            change.call == call && change.statusCode == 183
                        } else {
                            false
                        }
                    }
                    let earlyMedia = recording.mark
                    try await rig.expect(.connected(id), timeout: .seconds(30))
                    let answered = recording.mark

                    let end = CallAction(callUUID: id, kind: .end)
                    await rig.router.perform(end)
                    try await rig.expect(.fulfilled(end.id))
                    try await rig.router.audioSessionDidDeactivate()
                    await recording.stop()
                    try await sipp.expectFinished()

                    // On the wire, as sipp logged it.
                    let invite = try #require(sipp.firstMessage(sent: false, startingWith: "INVITE ")?.time)
                    let ringing = try #require(sipp.firstMessage(sent: true, startingWith: "SIP/2.0 180")?.time)
                    let progress = try #require(sipp.firstMessage(sent: true, startingWith: "SIP/2.0 183")?.time)
                    let ok = try #require(sipp.firstMessage(sent: true, startingWith: "SIP/2.0 200")?.time)
                    let fulfilledAt = try #require(rig.provider.time(of: .fulfilled(start.id)))
                    let connectingAt = try #require(rig.provider.time(of: .startedConnecting(id)))
                    let connectedAt = try #require(rig.provider.time(of: .connected(id)))

                    let startDelay = Self.milliseconds(invite, fulfilledAt)
                    let connectingDelay = Self.milliseconds(ringing, connectingAt)
                    let connectedDelay = Self.milliseconds(ok, connectedAt)
                    print(
                        """
                        CallKit outgoing flow: start fulfilled \(startDelay) ms after sipp received the INVITE; \
                        connecting \(connectingDelay) ms after the 180; connected \(connectedDelay) ms after the 200, \
                        which came \(Self.milliseconds(invite, ok)) ms after the INVITE
                        """)
                    // The INVITE leaves inside makeCall, before the fulfilment; sipp stamps it as it
                    // reads it, which can be a little after.
                    #expect(abs(startDelay) < 100, "start fulfilled \(startDelay) ms from the INVITE")
                    #expect(Self.milliseconds(invite, ok) >= 19_500, "the 200 came 20 s after the INVITE")
                    // sipp stamps a message after sending it: the engine may react first, by a
                    // little (negative delays down to -50 ms are that, not a report before the 180).
                    #expect(
                        connectingDelay > -50 && connectingDelay < 300 && connectingAt < progress,
                        "connecting reported \(connectingDelay) ms after the 180, before the 183")
                    #expect(
                        connectedDelay > -50 && connectedDelay < 300,
                        "connected reported \(connectedDelay) ms after the 200")
                    #expect(
                        rig.provider.records == [
                            .fulfilled(start.id), .startedConnecting(id), .connected(id), .fulfilled(end.id),
                        ])

                    // At the sound device: ringback (425 Hz) from the activation until the 183,
                    // then the far end's 1 kHz tone until the 200.
                    let ringback = recording.analysis(0..<earlyMedia, frequency: 425)
                    #expect(ringback.toneDuration >= .milliseconds(600), "ringback while it rang: \(ringback)")
                    let tone = recording.analysis(earlyMedia..<answered, frequency: 1000)
                    #expect(
                        tone.blocks >= 800 && tone.toneBlocks >= tone.blocks * 9 / 10,
                        "the early media's tone before the 200: \(tone)")
                    let firstTone = (earlyMedia..<answered).first {
                        ToneAnalysis(recording.audio($0..<($0 + 1), trim: .zero), frequency: 1000).toneBlocks == 1
                    }
                    let toneAfter183 = firstTone.map { ($0 - earlyMedia) * 20 }
                    let firstToneText = toneAfter183.map(String.init) ?? "-"
                    print(
                        """
                        CallKit outgoing flow: \(earlyMedia * 20) ms of device audio before the 183 \
                        (\(ringback.toneDuration) of ringback), first 1 kHz frame \(firstToneText) ms after the \
                        183's event, \(tone.toneDuration) of tone before the 200
                        """)
                    #expect(
                        toneAfter183.map { $0 < 1000 } == true, "the tone began \(toneAfter183 ?? -1) ms after the 183")
                }
            }
        }

        @Test("Incoming: the answer action is fulfilled when the 200 is sent, before the caller's (late) ACK")
        func answerFulfilledBeforeACK() async throws {
            // T1 of 2 s: the 200 is not retransmitted during the caller's 1 s wait for its ACK.
            try await Rig.run(timers: SIPTimers(t1: .seconds(2), t2: .seconds(4))) { rig in
                let sipp = try await rig.sipp("kit_uac_late_ack.xml")
                let reported = try await rig.provider.wait("the INVITE reported") {
                    if case .newIncomingCall = $0 { true } else { false }
                }
                guard case .newIncomingCall(let id, _) = reported else { return }
                let call = try await rig.waitForRinging()
                let answer = CallAction(callUUID: id, kind: .answer)
                await rig.router.perform(answer)
                try await rig.expect(.fulfilled(answer.id), timeout: .milliseconds(1))
                #expect(
                    !rig.h.log.events.contains { $0.isState(.confirmed, of: call) }, "fulfilled before CONFIRMED")
                try await rig.h.log.first("the ACK (CONFIRMED)", timeout: .seconds(5)) {
                    $0.isState(.confirmed, of: call)
                }
                let end = CallAction(callUUID: id, kind: .end)
                await rig.router.perform(end)
                try await rig.expect(.fulfilled(end.id))
                try await sipp.expectFinished()

                let ok = try #require(sipp.firstMessage(sent: false, startingWith: "SIP/2.0 200")?.time)
                let ack = try #require(sipp.firstMessage(sent: true, startingWith: "ACK ")?.time)
                let fulfilledAt = try #require(rig.provider.time(of: .fulfilled(answer.id)))
                let afterOK = Self.milliseconds(ok, fulfilledAt)
                let beforeACK = Self.milliseconds(fulfilledAt, ack)
                print(
                    "CallKit answer flow: fulfilled \(afterOK) ms after sipp received the 200,",
                    "\(beforeACK) ms before the ACK")
                #expect(abs(afterOK) < 100, "fulfilled \(afterOK) ms from the 200")
                #expect(beforeACK > 800, "fulfilled only \(beforeACK) ms before the ACK")
                // The 200 went out once: the ACK came within T1.
                #expect(sipp.receivedStatusCodes.filter { $0 == 200 }.count == 1, "\(sipp.receivedStatusCodes)")
                #expect(rig.provider.reportedCalls == [id])
            }
        }
    }
}
