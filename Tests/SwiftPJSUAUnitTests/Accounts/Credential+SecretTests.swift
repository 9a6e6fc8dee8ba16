import Foundation
import SwiftPJSUA
import Testing

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
}
