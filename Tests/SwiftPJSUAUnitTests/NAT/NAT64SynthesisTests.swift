import Testing

@testable import SwiftPJSUA

@Suite("NAT64 address synthesis (RFC 6052) and the SDP rewrite, without pjsua")
struct NAT64SynthesisTests {
    static let wellKnown: [UInt8] = [0x00, 0x64, 0xff, 0x9b] + [UInt8](repeating: 0, count: 12)
    static let documentation: [UInt8] =
        [0x20, 0x01, 0x0d, 0xb8, 0x01, 0x22, 0x03, 0x44] + [UInt8](repeating: 0, count: 8)

    static func hex(_ bytes: [UInt8]?) -> String {
        (bytes ?? []).map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }

    // RFC 6052 §2.4's table: 192.0.2.33 in 2001:db8:122:344::/n, as 32 hex digits.
    @Test(
        "RFC 6052 §2.4: 192.0.2.33 embedded at every prefix length",
        arguments: [
            (32, "20010db8c00002210000000000000000"),  // 2001:db8:c000:221::
            (40, "20010db801c000020021000000000000"),  // 2001:db8:1c0:2:21::
            (48, "20010db80122c0000002210000000000"),  // 2001:db8:122:c000:2:2100::
            (56, "20010db8012203c00000022100000000"),  // 2001:db8:122:3c0:0:221::
            (64, "20010db80122034400c0000221000000"),  // 2001:db8:122:344:c0:2:2100::
            (96, "20010db80122034400000000c0000221"),  // 2001:db8:122:344::192.0.2.33
        ])
    func table(length: Int, expected: String) throws {
        let prefix = NAT64Prefix(bytes: Self.documentation, length: length)
        let address = try #require(Native.synthesizeNAT64([192, 0, 2, 33], prefix: prefix))
        #expect(Self.hex(address) == expected)
    }

    @Test("64:ff9b::/96 gives 64:ff9b::c000:221, and a length RFC 6052 does not define gives nothing")
    func wellKnownPrefix() {
        let address = Native.synthesizeNAT64([192, 0, 2, 33], prefix: NAT64Prefix(bytes: Self.wellKnown, length: 96))
        #expect(Self.hex(address) == "0064ff9b0000000000000000c0000221")
        #expect(Native.synthesizeNAT64([192, 0, 2, 33], prefix: NAT64Prefix(bytes: Self.wellKnown, length: 80)) == nil)
    }

    @Test("RFC 7050 §3: the prefix is found where 192.0.0.170 or .171 sits", arguments: [32, 40, 48, 56, 64, 96])
    func discovery(length: Int) throws {
        let prefix = NAT64Prefix(bytes: Self.documentation, length: length)
        for last: UInt8 in [170, 171] {
            let address = try #require(Native.synthesizeNAT64([192, 0, 0, last], prefix: prefix))
            let found = Native.nat64Prefix(ofWellKnownAddress: address)
            #expect(found?.length == length)
            #expect(found?.bytes == Native.nat64Prefix(ofWellKnownAddress: address)?.bytes)
            #expect(found.map { Array($0.bytes.prefix(length / 8)) } == Array(Self.documentation.prefix(length / 8)))
        }
        // An address of another IPv4 address holds no prefix.
        let other = try #require(Native.synthesizeNAT64([192, 0, 2, 33], prefix: prefix))
        #expect(Native.nat64Prefix(ofWellKnownAddress: other) == nil)
    }

    static let offer = """
        v=0\r
        o=bob 1 1 IN IP4 203.0.113.11\r
        s=-\r
        c=IN IP4 203.0.113.11\r
        t=0 0\r
        m=audio 4000 RTP/AVP 0\r
        a=rtcp:4001 IN IP4 203.0.113.11\r
        m=audio 4002 RTP/AVP 0\r
        c=IN IP4 2001:db8:64::cb00:710\r
        m=video 4004/2 RTP/AVP 96\r
        c=IN IP6 2001:db8::1\r

        """

    @Test("The rewrite synthesizes c= IPv4 addresses, drops a=rtcp: with one, leaves o= and IPv6 addresses alone")
    func rewrite() {
        let prefix = NAT64Prefix(
            bytes: [0x20, 0x01, 0x0d, 0xb8, 0x00, 0x64] + [UInt8](repeating: 0, count: 10), length: 96)
        let (sdp, found) = Native.rewriteSDPForNAT64(Self.offer, prefix: prefix, rejectStreams: false)
        #expect(found == 2)
        #expect(sdp.contains("o=bob 1 1 IN IP4 203.0.113.11\r\n"))
        #expect(sdp.contains("\r\nc=IN IP4 2001:db8:64::cb00:710b\r\nt=0 0\r\n"))
        // pjmedia would parse an IPv6 literal there as IP4 and fail; RTCP goes to port + 1.
        #expect(!sdp.contains("a=rtcp:"))
        // Already IPv6 (a literal inside the prefix, or an IP6 line): not synthesized again.
        #expect(sdp.contains("c=IN IP4 2001:db8:64::cb00:710\r\n"))
        #expect(sdp.contains("c=IN IP6 2001:db8::1\r\n"))
        #expect(sdp.contains("m=audio 4000 RTP/AVP 0\r\n"))
        // Nothing else changed: the same text once the two addresses are put back.
        let restored = sdp.replacingOccurrences(of: "2001:db8:64::cb00:710b", with: "203.0.113.11")
        #expect(restored == Self.offer.replacingOccurrences(of: "a=rtcp:4001 IN IP4 203.0.113.11\r\n", with: ""))
    }

    @Test("Without a prefix the rewrite counts the IPv4 addresses and, for an answer, rejects every stream")
    func noPrefix() {
        let (kept, found) = Native.rewriteSDPForNAT64(Self.offer, prefix: nil, rejectStreams: false)
        #expect(found == 2)
        #expect(kept == Self.offer)
        let (rejected, _) = Native.rewriteSDPForNAT64(Self.offer, prefix: nil, rejectStreams: true)
        #expect(rejected.contains("m=audio 0 RTP/AVP 0\r\n"))
        #expect(rejected.contains("m=video 0 RTP/AVP 96\r\n"))
        #expect(!rejected.contains("m=audio 4000"))
        let (plain, none) = Native.rewriteSDPForNAT64("v=0\r\nc=IN IP6 ::1\r\n", prefix: nil, rejectStreams: false)
        #expect(none == 0 && plain == "v=0\r\nc=IN IP6 ::1\r\n")
    }
}
