import Foundation
import PJSUATestSupport
import SwiftPJSUA
import Testing

/// `swiftpjsua register --ha1-env VAR`: the HA1 in place of the password, from the
/// environment only.
extension EngineTests {
    @Test("CLI: register --once --ha1-env registers with the HA1; a missing or malformed variable is a usage error")
    func cliRegisterWithHA1() async throws {
        try await withTemporaryFolder { folder in
            let kamailio = try await Kamailio.start(folder: folder)
            let password = try #require(Kamailio.passwords["alice"])
            let ha1 = try DigestHA1.of(username: "alice", realm: kamailio.realm, password: password)
            func register(_ name: String, environment: [String: String], realm: String? = nil) throws -> PeerProcess {
                try PeerProcess(
                    "register-ha1-\(name)", executable: Repository.tool.path,
                    arguments: [
                        "register", "--bind", "127.0.0.1", "--registrar", kamailio.uri, "--id", kamailio.aor("alice"),
                        "--username", "alice", "--realm", realm ?? kamailio.realm, "--ha1-env", "ALICE_HA1",
                        "--expires", "90", "--once",
                    ], folder: folder, environment: environment)
            }
            let good = try register("good", environment: ["ALICE_HA1": ha1.uppercased()])
            #expect(try await good.waitForExit(timeout: .seconds(20)) == 0, "\(good.output)")
            #expect(good.output.contains("registered expires=90s"), "\(good.output)")
            #expect(good.output.contains("registration succeeded"), "\(good.output)")
            #expect(!good.output.lowercased().contains(ha1), "\(good.output)")

            let wrong = try DigestHA1.of(username: "alice", realm: kamailio.realm, password: "wrong-password")
            let bad = try register("wrong", environment: ["ALICE_HA1": wrong])
            #expect(try await bad.waitForExit(timeout: .seconds(20)) == 1, "\(bad.output)")
            #expect(bad.output.contains("failed 401"), "\(bad.output)")

            let missing = try register("missing", environment: [:])
            #expect(try await missing.waitForExit(timeout: .seconds(20)) == 64, "\(missing.output)")
            #expect(
                missing.output.contains("--ha1-env: environment variable ALICE_HA1 is not set"), "\(missing.output)")

            let short = try register("short", environment: ["ALICE_HA1": String(ha1.dropLast())])
            #expect(try await short.waitForExit(timeout: .seconds(20)) == 64, "\(short.output)")
            #expect(
                short.output.contains("ALICE_HA1 must hold the MD5 HA1 as 32 hex digits (it holds 31 characters)"),
                "\(short.output)")
            #expect(!short.output.contains(String(ha1.dropLast())), "\(short.output)")

            let anyRealm = try register("any-realm", environment: ["ALICE_HA1": ha1], realm: "*")
            #expect(try await anyRealm.waitForExit(timeout: .seconds(20)) == 64, "\(anyRealm.output)")
            #expect(anyRealm.output.contains("--ha1-env needs --realm"), "\(anyRealm.output)")

            // Two secrets, or an algorithm without an HA1, are usage errors too.
            for (name, extra, message) in [
                ("both", ["--password-env", "ALICE_PASSWORD"], "--password-env and --ha1-env are two forms"),
                ("sha-256-short", ["--ha1-algorithm", "sha-256"], "as 64 hex digits (it holds 32 characters)"),
            ] {
                let tool = try PeerProcess(
                    "register-ha1-\(name)", executable: Repository.tool.path,
                    arguments: [
                        "register", "--registrar", kamailio.uri, "--id", kamailio.aor("alice"), "--username", "alice",
                        "--realm", kamailio.realm, "--ha1-env", "ALICE_HA1",
                    ] + extra, folder: folder, environment: ["ALICE_HA1": ha1, "ALICE_PASSWORD": password])
                #expect(try await tool.waitForExit(timeout: .seconds(20)) == 64, "\(tool.output)")
                #expect(tool.output.contains(message), "\(tool.output)")
            }
            let algorithmAlone = try PeerProcess(
                "register-ha1-algorithm-alone", executable: Repository.tool.path,
                arguments: [
                    "register", "--registrar", kamailio.uri, "--id", kamailio.aor("alice"), "--username", "alice",
                    "--password-env", "ALICE_PASSWORD", "--ha1-algorithm", "sha-256",
                ], folder: folder, environment: ["ALICE_PASSWORD": password])
            #expect(try await algorithmAlone.waitForExit(timeout: .seconds(20)) == 64, "\(algorithmAlone.output)")
            #expect(algorithmAlone.output.contains("--ha1-algorithm goes with --ha1-env"), "\(algorithmAlone.output)")

            // Only the good and the wrong HA1 reached the registrar.
            let registers = kamailio.receivedRequests.filter { $0.method == "REGISTER" }
            #expect(registers.allSatisfy { $0.user == "alice" }, "\(registers)")
            #expect((5...6).contains(registers.count), "\(registers)")
        }
    }
}
