import EarlierAPICompat
import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

// The program written against the earlier swift-pjsua's API lives in its own module
// (Tests/EarlierAPICompat), as an app would; it is run from here, nested in `EngineTests`,
// because pjsua is one per process and `swift test` runs every test target in one process:
// only `EngineTests`' `.serialized` trait (recursive) keeps it from overlapping another engine
// test (see Kit/CallRouter+OrderingTests.swift).
extension EngineTests {
    @Test(
        "A program written against the earlier swift-pjsua registers two accounts at Kamailio and its call is answered")
    func earlierStyleProgram() async throws {
        try await withKamailio { kamailio in
            let built = Protected<Configuration?>(nil)
            // What the test changes in the configuration the program builds: the machines the
            // tests run on have no audio hardware, so the null device stands in for the system's
            // default; RTP ports in a random window, as every engine test uses.
            let app: any EarlierStyleSteps = EarlierStylePhone { configuration in
                built.withLock { $0 = configuration }
                var configuration = configuration
                configuration.media.soundDevice = .null
                configuration.media.rtpPorts = EngineHarness.randomRTPPorts()
                return configuration
            }
            let phone = app.phone
            let log = EventLog(phone.events)
            try await app.start(port: 0)
            do {
                // Configuration(port:transport:) as documented: one UDP transport on the port, every
                // interface, the system's default device attached by the app.
                let configuration = try #require(built.withLock { $0 })
                #expect(configuration.transports == [TransportConfiguration(type: .udp, bindAddress: nil, port: 0)])
                #expect(configuration.media.soundDevice == .systemDefault)
                #expect(configuration.media.soundDeviceActivation == .byApp)
                #expect(configuration.logLevel == 4)

                let alice = try await app.addAccount(
                    id: kamailio.aor("alice"), registrar: kamailio.uri, username: "alice",
                    password: Kamailio.passwords["alice"] ?? "", token: "00aa11bb")
                let bob = try await app.addAccount(
                    id: kamailio.aor("bob"), registrar: kamailio.uri, username: "bob",
                    password: Kamailio.passwords["bob"] ?? "", token: nil)
                try await log.first("alice registered") { $0.isRegistration(of: alice, active: true) }
                try await log.first("bob registered") { $0.isRegistration(of: bob, active: true) }
                // makeDefault: true, the earlier default: the account added last is the default.
                #expect(try await phone.accountInfo(bob).isDefault)
                #expect(try await !phone.accountInfo(alice).isDefault)

                // The earlier video flag: refused, this package has no video.
                let refusal = await #expect(throws: PJSUAUsageError.self) {
                    try await app.makeVideoCall(to: kamailio.aor("bob"), from: alice)
                }
                if case .invalidArgument = refusal {
                } else {
                    Issue.record("video: true gave \(String(describing: refusal)), not invalidArgument")
                }
                app.listen()
                let call = try await app.makeCall(to: kamailio.aor("bob"), from: alice)
                let event = try await log.first("bob's leg") { $0.incomingCall != nil }
                guard case .incomingCall(let incoming) = event else {
                    throw TimedOut(what: "bob's leg", seen: ["\(event)"])
                }
                // The INVITE Kamailio forwarded to bob's Contact reached bob's account.
                #expect(incoming.account == bob)
                let bobsLeg = incoming.call
                try await log.first("alice's call confirmed") { $0.isState(.confirmed, of: call) }
                try await log.first("bob's leg confirmed") { $0.isState(.confirmed, of: bobsLeg) }
                try await log.wait("audio on both legs") { events in
                    events.contains { $0.hasActiveAudio(call) } && events.contains { $0.hasActiveAudio(bobsLeg) }
                }

                // .byApp: nothing clocks the bridge until the app activates the device.
                #expect(try await phone.streamStatistics(call).packetsSent == 0)
                try await app.didActivate().value
                try await waitUntil("RTP on bob's leg", timeout: .seconds(5)) {
                    try await phone.streamStatistics(bobsLeg).packetsReceived >= 10
                }

                try await app.muteAndSendDigits(call, digits: "7")
                try await log.first("digit 7 on bob's leg") { $0.isDigit("7", on: bobsLeg) }
                await app.hangUpEverything()
                try await log.first("alice's call ended") { $0.isState(.disconnected, of: call) }
                try await log.first("bob's leg ended") { $0.isState(.disconnected, of: bobsLeg) }
                await app.didDeactivate().value

                let lines = await app.transcript.lines
                #expect(lines.contains("answered \(bobsLeg)"), "\(lines)")
                #expect(lines.contains("\(call) confirmed 200"), "\(lines)")
                #expect(lines.contains { $0.hasPrefix("\(call) disconnected") }, "\(lines)")
                await phone.shutdown()
            } catch {
                await phone.shutdown()
                throw error
            }
            let requests = kamailio.receivedRequests
            let registers = requests.filter { $0.method == "REGISTER" }
            // Both registered with their digest credentials; alice with RFC 8599 parameters in the
            // Contact, bob (push: nil, the earlier default) without.
            #expect(
                registers.contains {
                    $0.user == "alice"
                        && $0.contact.contains(
                            ";pn-provider=apns;pn-param=ABCDE12345.com.example.phone.voip;pn-prid=00aa11bb")
                }, "\(registers)")
            #expect(registers.contains { $0.user == "bob" }, "\(registers)")
            #expect(!registers.contains { $0.user == "bob" && $0.contact.contains("pn-") }, "\(registers)")
            #expect(requests.contains { $0.method == "INVITE" && $0.user == "alice" }, "\(requests)")
        }
    }
}

extension PJSUAEvent {
    /// Whether this is the DTMF digit `digit` arriving on `call`.
    fileprivate func isDigit(_ digit: Character, on call: Call) -> Bool {
        if case .dtmf(let received) = self { return received.call == call && received.digit == digit }
        return false
    }
}
