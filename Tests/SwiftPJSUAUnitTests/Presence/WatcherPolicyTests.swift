import SwiftPJSUA
import Testing

@Suite("Watcher policy matching")
struct WatcherPolicyTests {
    @Test(
        "A watcher matches an entry by user and host (host case-insensitive; scheme, port, parameters ignored)",
        arguments: [
            ("sip:bob@example.com", true),
            ("sips:bob@Example.COM", true),
            ("<sip:bob@example.com:5070;transport=tcp>", true),
            ("sip:bob@example.com?subject=x", true),
            ("sip:Bob@example.com", false),
            ("sip:bob@example.org", false),
            ("sip:example.com", false),
            ("tel:+15551234", false),
            ("", false),
        ])
    func matching(uri: String, admitted: Bool) {
        let policy = WatcherPolicy(allowedWatchers: ["sip:bob@EXAMPLE.com"])
        #expect(policy.admits(uri) == admitted)
    }

    @Test("nobody admits no one; everyone admits anyone, even without a user part")
    func presets() {
        #expect(!WatcherPolicy.nobody.admits("sip:bob@example.com"))
        #expect(WatcherPolicy.everyone.admits("sip:example.com"))
        #expect(AccountConfiguration(identity: "sip:a@b").watchers == .nobody)
    }
}
