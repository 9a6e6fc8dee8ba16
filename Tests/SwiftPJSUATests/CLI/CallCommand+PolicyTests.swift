import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// `swiftpjsua call --100rel`, `--session-timers` and credentials on an account that does not
/// register, against sipp UASs: what sipp received decides.
extension EngineTests {
    /// Runs `call` with `arguments` to a sipp running `scenario`, waits for both to end and
    /// hands `check` the tool's exit status and output and sipp's messages.
    private static func callSipp(
        _ name: String, scenario: String, _ arguments: [String], environment: [String: String] = [:],
        check: (_ status: Int32, _ output: String, _ sipp: Sipp) throws -> Void
    ) async throws {
        try await withTemporaryFolder { folder in
            let sipp = try await Sipp.start(scenario: scenario, folder: folder)
            let cli = try await PeerProcess.swiftpjsua(
                "swiftpjsua-\(name)", ["call", "--bind", "127.0.0.1", sipp.uri, "--hangup-after", "0.3"] + arguments,
                folder: folder, environment: environment)
            let status = try await cli.waitForExit(timeout: .seconds(20))
            _ = try await sipp.finish(timeout: .seconds(10))
            try check(status, cli.output, sipp)
        }
    }

    /// The option tags of a comma-separated header value, lowercased.
    private static func tags(_ value: String?) -> [String] {
        (value ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
    }

    /// The seconds at the start of a `Session-Expires` or `Min-SE` value (`120;refresher=uac`).
    private static func seconds(_ value: String?) -> Int? {
        value.flatMap { Int($0.split(separator: ";")[0].trimmingCharacters(in: .whitespaces)) }
    }

    @Test("CLI: call --100rel required sends Require: 100rel; a UAS without 100rel answers 420 and the call fails")
    func cliCall100relRequired() async throws {
        try await Self.callSipp("100rel-required", scenario: "uas_420_no_100rel.xml", ["--100rel", "required"]) {
            status, output, sipp in
            let invite = try #require(sipp.received("INVITE "), "\(sipp.messages)")
            #expect(Self.tags(invite.header("Require")).contains("100rel"), "\(invite.lines)")
            #expect(sipp.firstMessage(sent: true, startingWith: "SIP/2.0 420") != nil)
            #expect(status == 1, "\(output)")
            #expect(output.contains("final status: 420"), "\(output)")
        }
    }

    @Test("CLI: call --100rel off sends neither Supported: 100rel nor Require: 100rel, and the call connects")
    func cliCall100relOff() async throws {
        try await Self.callSipp("100rel-off", scenario: "uas", ["--100rel", "off"]) { status, output, sipp in
            let invite = try #require(sipp.received("INVITE "), "\(sipp.messages)")
            let supported = Self.tags(invite.header("Supported"))
            #expect(!supported.isEmpty && !supported.contains("100rel"), "\(invite.lines)")
            #expect(!Self.tags(invite.header("Require")).contains("100rel"), "\(invite.lines)")
            #expect(status == 0, "\(output)")
        }
    }

    @Test("CLI: call --session-timers always --session-expires 120 --min-se 90 puts both in the INVITE")
    func cliCallSessionTimersAlways() async throws {
        try await Self.callSipp(
            "timers-always", scenario: "uas",
            ["--session-timers", "always", "--session-expires", "120", "--min-se", "90"]
        ) { status, output, sipp in
            let invite = try #require(sipp.received("INVITE "), "\(sipp.messages)")
            #expect(Self.seconds(invite.header("Session-Expires")) == 120, "\(invite.lines)")
            #expect(Self.seconds(invite.header("Min-SE")) == 90, "\(invite.lines)")
            #expect(Self.tags(invite.header("Supported")).contains("timer"), "\(invite.lines)")
            // pjsip puts `timer` in Require only for PJSUA_SIP_TIMER_REQUIRED: `always` uses
            // timers even with a peer that lacks them, without asking the peer to.
            #expect(!Self.tags(invite.header("Require")).contains("timer"), "\(invite.lines)")
            #expect(status == 0, "\(output)")
        }
    }

    @Test("CLI: call --session-timers required sends Require: timer")
    func cliCallSessionTimersRequired() async throws {
        try await Self.callSipp("timers-required", scenario: "uas", ["--session-timers", "required"]) { _, _, sipp in
            let invite = try #require(sipp.received("INVITE "), "\(sipp.messages)")
            #expect(Self.tags(invite.header("Require")).contains("timer"), "\(invite.lines)")
            #expect(Self.seconds(invite.header("Session-Expires")) == 1800, "\(invite.lines)")
        }
    }

    @Test(
        """
        CLI: call with --id and credentials but no --registrar answers the INVITE's 401: the right password \
        connects, a wrong one ends with 403
        """,
        arguments: [("s3cret-pass", Int32(0)), ("not-the-password", Int32(1))])
    func cliCallCredentialsWithoutRegistrar(password: String, expectedStatus: Int32) async throws {
        try await Self.callSipp(
            "credentials-\(expectedStatus)", scenario: "uas_digest_invite.xml",
            ["--id", "sip:alice@127.0.0.1", "--username", "alice", "--password-env", "ALICE_PASSWORD"],
            environment: ["ALICE_PASSWORD": password]
        ) { status, output, sipp in
            #expect(status == expectedStatus, "\(output)")
            #expect(!output.contains("registering"), "\(output)")
            #expect(!output.contains(password), "\(output)")
            let invites = sipp.messageBlocks.filter { $0.direction == .received && $0.firstLine.hasPrefix("INVITE ") }
            try #require(invites.count == 2, "\(sipp.messages)")
            #expect(invites[0].header("From")?.contains("sip:alice@127.0.0.1") == true, "\(invites[0].lines)")
            let authorization = try #require(invites[1].header("Authorization"), "\(invites[1].lines)")
            #expect(authorization.contains("username=\"alice\""), "\(authorization)")
            if expectedStatus == 0 {
                #expect(sipp.receivedRequests == ["INVITE", "ACK", "INVITE", "ACK", "BYE"], "\(sipp.receivedRequests)")
            } else {
                #expect(sipp.firstMessage(sent: true, startingWith: "SIP/2.0 403") != nil, "\(sipp.messages)")
                #expect(output.contains("final status: 403"), "\(output)")
            }
        }
    }

    @Test(
        """
        CLI: bad --100rel and --session-timers values, credentials without --id and a Min-SE the engine refuses \
        are usage errors
        """,
        arguments: [
            (["--100rel", "maybe"], "--100rel must be off, supported or required, not maybe"),
            (["--session-timers", "sometimes"], "--session-timers must be off, optional, required or always"),
            (["--session-expires", "soon"], "--session-expires must be a whole number of seconds"),
            (["--min-se", "1.5"], "--min-se must be a whole number of seconds"),
            (["--session-timers", "off", "--min-se", "120"], "--min-se needs session timers"),
            (["--username", "alice", "--password-env", "CLI_PASSWORD"], "credentials need --id"),
            (["--registrar", "sip:127.0.0.1:9"], "--registrar needs --id"),
            (["--id", "sip:alice@127.0.0.1", "--username", "alice"], "--username goes with --password-env"),
            // The engine's own check (RFC 4028's floor), reported as a usage error, not a crash.
            (["--min-se", "60"], "Min-SE) must be at least 90 s"),
            (["--session-expires", "100", "--min-se", "120"], "must be at least minimumInterval"),
        ])
    func cliCallPolicyUsageErrors(arguments: [String], message: String) async throws {
        try await withTemporaryFolder { folder in
            let cli = try await PeerProcess.swiftpjsua(
                "swiftpjsua-usage", ["call", "--bind", "127.0.0.1", "sip:nobody@127.0.0.1:9"] + arguments,
                folder: folder, environment: ["CLI_PASSWORD": "pw"])
            #expect(try await cli.waitForExit(timeout: .seconds(10)) == 64, "\(cli.output)")
            #expect(cli.output.contains(message), "\(cli.output)")
            #expect(cli.output.contains("usage: swiftpjsua"), "\(cli.output)")
            #expect(!cli.output.contains("calling"), "\(cli.output)")
        }
    }
}
