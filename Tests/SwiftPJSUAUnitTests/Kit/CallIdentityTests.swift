import Foundation
import SwiftPJSUA
import SwiftPJSUAKit
import Testing

@Suite("Call identity")
struct CallIdentityTests {
    @Test("UUIDv5 known answer (RFC 4122 DNS namespace, www.example.com)")
    func knownAnswer() throws {
        let dns = try #require(UUID(uuidString: "6ba7b810-9dad-11d1-80b4-00c04fd430c8"))
        #expect(
            UUID.nameBased(namespace: dns, name: "www.example.com").uuidString.lowercased()
                == "2ed6657d-e927-568b-95e1-2665a8aea6a2")
    }

    @Test("SHA-1 known answers (FIPS 180 'abc' and the empty message)")
    func sha1() {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(SHA1.hash(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(SHA1.hash([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    }

    @Test("Server UUID wins; Call-IDs are compared exactly; no identity gives a random UUID")
    func resolution() throws {
        let server = UUID()
        #expect(CallIdentity.uuid(serverUUID: server, sipCallID: "abc") == server)
        let long = String(repeating: "x!%<>\"'\\;:@", count: 40) + "@example.com"
        #expect(CallIdentity.uuid(sipCallID: long) == CallIdentity.uuid(sipCallID: long))
        #expect(CallIdentity.uuid(sipCallID: "abc@h") != CallIdentity.uuid(sipCallID: "ABC@h"))
        #expect(CallIdentity.uuid(sipCallID: "abc@h") != CallIdentity.uuid(sipCallID: "abc@h "))
        #expect(CallIdentity.uuid() != CallIdentity.uuid())
    }
}

@Test("The Call-ID namespace is the earlier swift-pjsua's documented constant")
func namespaceConstant() {
    #expect(CallIdentity.namespace.uuidString == "B2D6F0E2-9B9A-5E7C-8F1A-9C2D3E4F5A6B")
}

/// Call-ID → UUID pairs in that namespace, computed outside this package with Python's
/// standard library:
/// `uuid.uuid5(uuid.UUID('B2D6F0E2-9B9A-5E7C-8F1A-9C2D3E4F5A6B'), call_id)`. A server that
/// derives a call's UUID the same way must get the UUID the app reports to CallKit.
@Test(
    "A Call-ID maps to the UUID an independent UUIDv5 implementation gives in the earlier namespace",
    arguments: [
        // RFC 3261 §24.2's example Call-ID.
        ("a84b4c76e66710@pc33.atlanta.com", "b8ea5344-679f-58ed-a719-403946747d80"),
        ("c1@h", "66483538-e799-502a-b887-ec00ee50a080"),
    ])
func callIDKnownAnswer(callID: String, expected: String) {
    #expect(CallIdentity.uuid(sipCallID: callID).uuidString.lowercased() == expected)
}
