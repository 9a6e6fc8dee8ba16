import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// What `pkg-config --modversion libpjproject` prints in this environment (`make` points
/// pkg-config at the pjproject it builds against), or nil.
func pkgConfigVersion() -> String? {
    guard let (status, version) = commandOutput("/usr/bin/env", ["pkg-config", "--modversion", "libpjproject"])
    else { return nil }
    return status == 0 ? version : nil
}

/// The minor number of a pjproject version string ("2.17" → 17).
func pjprojectMinor(_ version: String) -> Int? {
    let parts = version.split(separator: ".")
    return parts.count >= 2 ? Int(parts[1].prefix { $0.isNumber }) : nil
}

extension EngineTests {
    @Test("The engine runs on the pjproject it was compiled against, the one pkg-config names")
    func pjprojectVersionMatches() async throws {
        let version = PJSUA.pjprojectVersion
        #expect(version.loaded == version.compiled)
        #expect(version.loaded == pkgConfigVersion(), "pkg-config names \(pkgConfigVersion() ?? "nothing")")
        let minor = try #require(pjprojectMinor(version.loaded))
        // RTP on pjmedia's own worker from 2.13, where it no longer stalls; on the SIP
        // worker in 2.12.
        #expect(PJSUA.usesMediaWorkerThread == (minor >= 13))

        // The tool says the same and exits 0.
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let tool = try PeerProcess("version", executable: Repository.tool.path, arguments: ["version"], folder: folder)
        let status = try await tool.waitForExit(timeout: .seconds(10))
        #expect(status == 0)
        #expect(tool.output.contains("pjproject \(version.loaded) loaded\n"), "\(tool.output)")
        #expect(tool.output.contains("IPv6: \(PJSUA.supportsIPv6 ? "yes" : "no")"), "\(tool.output)")
        #expect(tool.output.contains("compiled against pjproject \(version.compiled)"), "\(tool.output)")
    }

    @Test("An outgoing INVITE offers one audio stream and nothing else: no video, no real-time text")
    func inviteOffersAudioOnly() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let sipp = try await Sipp.start(scenario: "uas_answer_after_80ms.xml", folder: folder)
        defer { sipp.stop() }
        try await EngineHarness.run { h in
            let call = try await h.engine.makeCall(to: sipp.uri, from: h.account)
            try await h.log.first("confirmed") { $0.isState(.confirmed, of: call) }
            let media = try await h.engine.callInfo(call).media
            #expect(media.map(\.type) == [.audio], "\(media)")
            try await h.engine.hangup(call)
            try await h.log.first("ended") { $0.isState(.disconnected, of: call) }
        }
        _ = try await sipp.finish()
        let invite = try #require(
            sipp.messageBlocks.first { $0.direction == .received && $0.firstLine.hasPrefix("INVITE") })
        let mediaLines = invite.lines.filter { $0.hasPrefix("m=") }
        #expect(mediaLines.count == 1, "\(mediaLines)")
        #expect(mediaLines.first?.hasPrefix("m=audio ") == true, "\(mediaLines)")
    }

    @Test("A hung-up self-call: both legs report DISCONNECTED within 50 ms of the hang-up")
    func hangupReachesBothLegsQuickly() async throws {
        try await EngineHarness.run { h in
            let stamped = Journal<TimestampedEvent>()
            let stream = h.engine.timestampedEvents
            let collector = Task { for await event in stream { stamped.append(event) } }
            defer { collector.cancel() }
            let (caller, callee) = try await h.engine.answeredSelfCall(to: h.uri("self"), from: h.account, log: h.log)
            try await h.log.waitForAudio(caller, callee)
            let hungUp = ContinuousClock.now
            try await h.engine.hangup(caller)
            let isEnd: @Sendable (TimestampedEvent, Call) -> Bool = { stamped, leg in
                if case .callState(let change) = stamped.event, change.call == leg, change.state == .disconnected { true } else { false }
            }
            let records = try await stamped.wait("both legs DISCONNECTED") { records in
                records.contains { isEnd($0, caller) } && records.contains { isEnd($0, callee) }
            }
            for leg in [caller, callee] {
                let ended = try #require(records.first { isEnd($0, leg) })
                #expect(ended.raisedAt - hungUp < .milliseconds(50), "\(leg): \(ended.raisedAt - hungUp)")
            }
        }
    }

    @Test(
        "stop(recorder) returns with the WAV file complete, whether or not a sound device clocks the bridge",
        arguments: [true, false])
    func recorderCompleteWhenStopReturns(clocked: Bool) async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let tone = folder.file("tone.wav")
        try WAVAudio.tone(frequency: 1000, duration: .seconds(5)).write(to: tone)
        let recording = folder.file("received.wav")
        let media = MediaConfiguration(soundDevice: .null, soundDeviceActivation: clocked ? .automatic : .byApp)
        try await EngineHarness.run(media: media) { h in
            let (caller, callee) = try await h.engine.answeredSelfCall(to: h.uri("self"), from: h.account, log: h.log)
            try await h.log.waitForAudio(caller, callee)
            try await h.engine.play(file: tone.path, into: caller, loop: true)
            if !clocked {
                // The bridge runs while the device is attached, then the device goes away:
                // the recorder's removal would wait for a clock that never comes.
                try await h.engine.activateAudioDevice()
            }
            let recorder = try await h.engine.record(callee, to: recording.path)
            try await Task.sleep(for: .seconds(1))
            if !clocked { await h.engine.deactivateAudioDevice() }
            let before = ContinuousClock.now
            try await h.engine.stop(recorder)
            let took = ContinuousClock.now - before
            // Read at once: the header's sizes must match the file (WAVAudio throws
            // .truncated otherwise) and the audio must be what was sent.
            let audio = try WAVAudio(contentsOf: recording)
            #expect(took < .milliseconds(500), "stop took \(took)")
            #expect(audio.duration >= .milliseconds(800), "\(audio.duration)")
            #expect(ToneAnalysis(audio, frequency: 1000).detected(), "\(ToneAnalysis(audio, frequency: 1000))")
            await h.engine.hangupAll()
        }
    }

    @Test(
        "A pjproject built without IPv6: an IPv6 transport or RTP address throws a typed error, nothing aborts",
        .enabled(if: !PJSUA.supportsIPv6, "this pjproject has IPv6; `make test PJPROJECT=2.17-noipv6` runs this"))
    func withoutIPv6TypedErrors() async throws {
        let engine = PJSUA()
        await #expect {
            try await engine.start(Configuration(transports: [TransportConfiguration(type: .udp6, bindAddress: "::1")], media: nullSound))
        } throws: { ($0 as? PJSUAError)?.code == .addressFamilyNotSupported }
        // Nothing was left running: an IPv4 start works, and an IPv6 RTP address is refused.
        try await engine.start(Configuration(transports: loopbackUDP, media: MediaConfiguration(soundDevice: .null, rtpAddress: "::1")))
        await #expect {
            try await engine.addLocalAccount()
        } throws: { ($0 as? PJSUAError)?.code == .addressFamilyNotSupported }
        await engine.shutdown()
        try await engine.start(Configuration(transports: loopbackUDP, media: nullSound))
        let account = try await engine.addLocalAccount()
        let port = try #require(try await engine.transports().first?.port)
        let log = EventLog(engine.events)
        let (caller, _) = try await engine.answeredSelfCall(to: "sip:self@127.0.0.1:\(port)", from: account, log: log)
        try await log.first("media") { $0.hasActiveAudio(caller) }
        await engine.shutdown()
    }
}

/// A pjproject library folder on this machine other than the one this process loaded, with
/// its version (from the pkg-config file beside it): what the mismatch test loads instead.
let otherPJProject: (libdir: String, version: String)? = {
    let loaded = PJSUA.pjprojectVersion.loaded
    var folders = ["/usr/local/lib"]
    if let names = try? FileManager.default.contentsOfDirectory(atPath: "/opt/swift-pjsua") {
        folders += names.sorted().map { "/opt/swift-pjsua/\($0)/lib" }
    }
    for folder in folders {
        guard let pc = try? String(contentsOfFile: "\(folder)/pkgconfig/libpjproject.pc", encoding: .utf8),
              FileManager.default.fileExists(atPath: "\(folder)/libpj.so.2"),
              let line = pc.split(separator: "\n").first(where: { $0.hasPrefix("Version:") })
        else { continue }
        let version = line.dropFirst("Version:".count).trimmingCharacters(in: .whitespaces)
        if version != loaded { return (folder, version) }
    }
    return nil
}()

extension EngineTests {
    @Test(
        "Another pjproject loaded at run time: start refuses with both versions named, the process does not crash",
        .enabled(if: otherPJProject != nil, "no second pjproject version installed here to load instead"))
    func versionMismatchRefused() async throws {
        let other = try #require(otherPJProject)
        let compiled = PJSUA.pjprojectVersion.compiled
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        // LD_LIBRARY_PATH comes before the tool's RUNPATH: the dynamic linker loads the
        // other version's libpj*.so.2 under the same names.
        for command in [["version"], ["demo"]] {
            let tool = try PeerProcess(
                "mismatch-\(command[0])", executable: Repository.tool.path, arguments: command, folder: folder,
                environment: ["LD_LIBRARY_PATH": other.libdir])
            let status = try await tool.waitForExit(timeout: .seconds(20))
            #expect(status == 1, "\(tool.output)")
            let expected = command == ["version"]
                ? "pjproject \(other.version) loaded\n"
                : "pjproject \(other.version) is loaded, but the engine was compiled against pjproject \(compiled)"
            #expect(tool.output.contains(expected), "\(tool.output)")
        }
    }

    @Test("RFC 4733 digits queued on a call all arrive when a hold follows at once")
    func queuedDigitsSurviveHold() async throws {
        try await EngineHarness.run { h in
            let (caller, callee) = try await h.engine.answeredSelfCall(to: h.uri("self"), from: h.account, log: h.log)
            try await h.log.waitForAudio(caller, callee)
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
