import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

// Issue 15, item 9: the command-line tool through a blind transfer, on both sides, with three
// `swiftpjsua` processes; and its wait before exit for a retransmitted 2xx.

/// The printed lines (`  1.234  text`) as (seconds since start, text).
private func stampedLines(_ output: String) -> [(at: Double, text: String)] {
    output.split(separator: "\n").compactMap { line in
        let trimmed = line.drop { $0 == " " }
        guard let space = trimmed.firstIndex(of: " "), let at = Double(trimmed[..<space]) else { return nil }
        return (at, String(trimmed[space...].drop { $0 == " " }))
    }
}

/// The first call name (`call 1#3`) in a printed line.
private func callName(in text: String) -> String? {
    guard let range = text.range(of: #"call [0-9]+#[0-9]+"#, options: .regularExpression) else { return nil }
    return String(text[range])
}

/// The first line containing every one of `parts`.
private func line(_ lines: [(at: Double, text: String)], _ parts: String...) -> (at: Double, text: String)? {
    lines.first { line in parts.allSatisfy { line.text.contains($0) } }
}

extension EngineTests {
    /// `call` (the transferee) → `listen --transfer-to` (the transferor) → a third `listen`
    /// (the target, which hangs up 2 s after answering).
    @Test("CLI transfer: listen --transfer-to hangs up after NOTIFY 200; call follows the new call to its end")
    func cliBlindTransferBothSides() async throws {
        try await withTemporaryFolder { folder in
            let targetPort = FreePort.udp()
            let target = try await PeerProcess.swiftpjsua(
                "swiftpjsua-target",
                ["listen", "--bind", "127.0.0.1", "--port", String(targetPort), "--hangup-after", "2"], folder: folder)
            let transferorPort = FreePort.udp()
            let targetURI = "sip:target@127.0.0.1:\(targetPort)"
            let transferor = try await PeerProcess.swiftpjsua(
                "swiftpjsua-transferor",
                ["listen", "--bind", "127.0.0.1", "--port", String(transferorPort), "--transfer-to", targetURI],
                folder: folder)
            let transferee = try await PeerProcess.swiftpjsua(
                "swiftpjsua-transferee", ["call", "--bind", "127.0.0.1", "sip:transferor@127.0.0.1:\(transferorPort)"],
                folder: folder)

            let status = try await transferee.waitForExit(timeout: .seconds(20))
            let calling = stampedLines(transferee.output)
            #expect(status == 0, "\(transferee.output)")
            // The transferee accepted the REFER, then printed the new call's events to its end.
            let accepted = try #require(
                line(calling, "transfer-request", targetURI, "answered 202"), "\(transferee.output)")
            let following = try #require(
                line(calling, "following call", "placed by the transfer"), "\(transferee.output)")
            let newCall = try #require(callName(in: following.text))
            let original = try #require(callName(in: accepted.text))
            #expect(newCall != original)
            let newConfirmed = try #require(line(calling, "state \(newCall) CONFIRMED"), "\(transferee.output)")
            let newEnded = try #require(line(calling, "state \(newCall) DISCONNECTED"), "\(transferee.output)")
            let originalEnded = try #require(line(calling, "state \(original) DISCONNECTED"), "\(transferee.output)")
            // The new call outlived the original one and lasted until the target hung up (2 s).
            #expect(originalEnded.at < newEnded.at, "\(transferee.output)")
            #expect(newEnded.at - newConfirmed.at >= 1.8, "\(transferee.output)")

            // The transferor saw NOTIFY 200 (final) and then hung up its call.
            let transferring = stampedLines(transferor.output)
            let succeeded = try #require(line(transferring, "transfer call", "200", "final"), "\(transferor.output)")
            let hungUp = try #require(line(transferring, "succeeded: hanging up"), "\(transferor.output)")
            let ended = try #require(line(transferring, "DISCONNECTED"), "\(transferor.output)")
            #expect(succeeded.at <= hungUp.at && hungUp.at <= ended.at, "\(transferor.output)")

            // The target had the transferred call, from the transferee, for its 2 s.
            let targetLines = stampedLines(target.output)
            #expect(
                line(targetLines, "incoming call") != nil && line(targetLines, "CONFIRMED") != nil, "\(target.output)")
            #expect(line(targetLines, "DISCONNECTED") != nil, "\(target.output)")
        }
    }

    /// sipp acts as if the CLI's ACK was lost: it retransmits its 200 when the BYE comes and
    /// answers the BYE only once that retransmission is ACKed.
    @Test("CLI: call stays long enough after its BYE to ACK a retransmitted 2xx")
    func cliAcksLate2xx() async throws {
        try await withTemporaryFolder { folder in
            let sipp = try await Sipp.start(scenario: "uas_200_retransmitted_after_bye.xml", folder: folder)
            let started = ContinuousClock.now
            let cli = try await PeerProcess.swiftpjsua(
                "swiftpjsua-call", ["call", "--bind", "127.0.0.1", sipp.uri, "--hangup-after", "0.2"], folder: folder)
            #expect(try await cli.waitForExit(timeout: .seconds(10)) == 0, "\(cli.output)")
            let elapsed = ContinuousClock.now - started
            let result = try await sipp.finish(timeout: .seconds(10))
            #expect(result.successfulCalls == 1, "\(result) \(sipp.messages)")
            #expect(sipp.receivedRequests.filter { $0 == "ACK" }.count == 2, "\(sipp.receivedRequests)")
            // The grace is T1 plus the call's length here (0.7 s), not 64 × T1.
            #expect(elapsed < .seconds(8), "\(elapsed)")
        }
    }
}
