import Foundation
import Testing

@testable import SwiftPJSUA

@Suite("Secrets")
struct SecretTests {
    @Test("No rendering of a credential, an account or a configuration shows the password or HA1")
    func secretsNeverPrint() {
        let password = "s3cr3t-Pa55-7431"
        let ha1 = "0123456789abcdef0123456789abcdef"
        let account = AccountConfiguration(
            identity: "sip:alice@example.com", registrar: "sip:example.com",
            credentials: [
                .password(password, username: "alice"),
                Credential(realm: "r", username: "bob", secret: .ha1(ha1)),
            ])
        var renderings: [String] = []
        for value in [account.credentials[0].secret, account.credentials[1].secret] as [Any] {
            renderings.append("\(value)")
        }
        for value in [account, account.credentials[0], account.credentials[1].secret] as [Any] {
            renderings.append(String(describing: value))
            renderings.append(String(reflecting: value))
            var dumped = ""
            dump(value, to: &dumped)
            renderings.append(dumped)
            renderings.append("\(Mirror(reflecting: value).children.map { "\($0.label ?? ""): \($0.value)" })")
        }
        for text in renderings {
            #expect(!text.contains(password) && !text.contains(ha1), "\(text)")
        }
        #expect("\(account.credentials[0].secret)" == "password(<redacted>)")
        #expect(String(reflecting: account.credentials[1].secret) == "ha1(<redacted>)")
        // The secret is still there for the engine.
        #expect(account.credentials[0].secret == .password(password))
    }

    @Test("Credential.digest renders with its realm, username and algorithm, never the HA1")
    func digestNeverPrints() {
        let md5 = "5ebe2294ecd0e0f08eab7690d2a6ee69"
        let sha = String(repeating: "9f86d081884c7d65", count: 4)
        for credential in [
            Credential.digest(ha1: md5, username: "alice", realm: "example.com"),
            Credential.digest(ha1: sha.uppercased(), username: "alice", realm: "example.com", algorithm: .sha256),
        ] {
            var dumped = ""
            dump(AccountConfiguration(identity: "sip:alice@example.com", credentials: [credential]), to: &dumped)
            for text in ["\(credential)", String(reflecting: credential), dumped] {
                #expect(!text.lowercased().contains(md5) && !text.lowercased().contains(sha), "\(text)")
                #expect(text.contains("ha1(<redacted>)"), "\(text)")
            }
        }
        #expect(
            "\(Credential.digest(ha1: md5, username: "alice", realm: "example.com"))"
                == "Credential(realm: example.com, username: alice, secret: ha1(<redacted>))")
        #expect(
            "\(Credential.digest(ha1: sha, username: "alice", realm: "example.com", algorithm: .sha256))"
                == "Credential(realm: example.com, username: alice, secret: ha1(<redacted>), algorithm: SHA-256)")
        // The password form is what it was: any realm, MD5 unless told.
        let password = Credential.password("pw", username: "alice")
        #expect(password.realm == "*" && password.algorithm == .md5 && password.secret == .password("pw"))
        #expect(
            Credential.digest(ha1: md5, username: "alice", realm: "r")
                == Credential(
                    realm: "r", username: "alice", secret: .ha1(md5)))
    }

    @Test(
        "An HA1 must be its algorithm's hex digits, for a realm of its own; errors do not quote it",
        arguments: [
            ("5ebe2294ecd0e0f08eab7690d2a6ee6", "example.com", DigestAlgorithm.md5, "must be 32 hex digits"),
            ("5ebe2294ecd0e0f08eab7690d2a6ee699", "example.com", .md5, "must be 32 hex digits"),
            ("5ebe2294ecd0e0f08eab7690d2a6ee6g", "example.com", .md5, "must be 32 hex digits"),
            ("5ebe2294 cd0e0f08eab7690d2a6ee69", "example.com", .md5, "must be 32 hex digits"),
            ("5ebe2294ecd0e0f08eab7690d2a6ee69", "*", .md5, "needs the realm"),
            ("5ebe2294ecd0e0f08eab7690d2a6ee69", "", .md5, "needs the realm"),
            ("5ebe2294ecd0e0f08eab7690d2a6ee69", "example.com", .sha256, "must be 64 hex digits"),
            ("é" + String(repeating: "a", count: 30), "example.com", .md5, "must be 32 hex digits"),
        ])
    func malformedHA1Throws(ha1: String, realm: String, algorithm: DigestAlgorithm, problem: String) {
        let credential = Credential.digest(ha1: ha1, username: "alice", realm: realm, algorithm: algorithm)
        #expect {
            try credential.validate()
        } throws: { error in
            guard case .invalidConfiguration(let text) = error as? PJSUAUsageError else { return false }
            return text.contains(problem) && text.contains("alice") && !text.contains(ha1)
        }
    }

    @Test("A well-formed HA1 passes, in either case; SHA-256 only where pjsip has it, else unsupported")
    func wellFormedHA1Passes() throws {
        try Credential.digest(ha1: "5EBE2294ECD0E0F08EAB7690D2A6EE69", username: "a", realm: "r").validate()
        try Credential.password("pw", username: "a").validate()
        let sha = Credential.digest(
            ha1: String(repeating: "0123456789abcdef", count: 4), username: "a", realm: "r", algorithm: .sha256)
        #expect(DigestAlgorithm.md5.isAvailable)
        if DigestAlgorithm.sha256.isAvailable {
            try sha.validate()
        } else {
            #expect(
                throws: PJSUAUsageError.unsupported("SHA-256 HA1 credentials (pjproject 2.15.1 or later with OpenSSL)")
            ) {
                try sha.validate()
            }
        }
        // Which one it is follows the pjproject built against (every profile here has
        // OpenSSL): 2.16 and 2.17 have SHA-256, 2.12 to 2.14 do not.
        let version = PJSUA.pjprojectVersion.compiled
        if ["2.12", "2.13", "2.14"].contains(where: version.hasPrefix) {
            #expect(!DigestAlgorithm.sha256.isAvailable, "pjproject \(version)")
        } else if ["2.16", "2.17"].contains(where: version.hasPrefix) {
            #expect(DigestAlgorithm.sha256.isAvailable, "pjproject \(version)")
        }
    }
}
