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

    @Test(
        "An IPv6 host is compared whole: another IPv6 host with the same user is not admitted",
        arguments: [
            ("sip:bob@[2001:db8::1]", true),
            ("sip:bob@[2001:DB8::1]:5070;transport=udp", true),
            ("sip:bob@[2001:db8::66]", false),
            ("sip:bob@[::1]", false),
            ("sip:bob@example.com", false),
        ])
    func ipv6Hosts(uri: String, admitted: Bool) {
        let policy = WatcherPolicy(allowedWatchers: ["sip:bob@[2001:db8::1]"])
        #expect(policy.admits(uri) == admitted)
    }

    @Test("nobody admits no one; everyone admits anyone, even without a user part")
    func presets() {
        #expect(!WatcherPolicy.nobody.admits("sip:bob@example.com"))
        #expect(WatcherPolicy.everyone.admits("sip:example.com"))
        #expect(AccountConfiguration(identity: "sip:a@b").watchers == .nobody)
    }
}
