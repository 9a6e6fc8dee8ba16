import Foundation
import SwiftPJSUA
import Testing

/// Nameserver text as the CLI and apps hand it over: accepted forms and refused ones.
@Suite("Nameserver parsing")
struct NameserverParsingTests {
    @Test(
        "IPv4 and IPv6 literals, with and without a port",
        arguments: [
            ("192.0.2.53", "192.0.2.53", UInt16(53)), ("192.0.2.53:5353", "192.0.2.53", 5353),
            ("2001:db8::53", "2001:db8::53", 53), ("[2001:db8::53]", "2001:db8::53", 53),
            ("[2001:db8::53]:5353", "2001:db8::53", 5353), (" 127.0.0.1:1 ", "127.0.0.1", 1),
        ])
    func accepted(text: String, host: String, port: UInt16) throws {
        let nameserver = try Nameserver(text)
        #expect(nameserver.host == host && nameserver.port == port)
    }

    @Test(
        "Host names, bad ports and malformed text throw invalidConfiguration naming the text",
        arguments: [
            "", "ns1.example.test", "ns1.example.test:53", "192.0.2.53:0", "192.0.2.53:65536", "192.0.2.53:dns",
            "192.0.2", "[2001:db8::53", "[192.0.2.53]:53", "[2001:db8::53]x", "2001:db8::53:", "300.1.1.1",
        ])
    func refused(text: String) {
        #expect {
            try Nameserver(text)
        } throws: { error in
            guard case PJSUAUsageError.invalidConfiguration(let message) = error else { return false }
            return message.contains("nameserver \"\(text.trimmingCharacters(in: .whitespaces))")
        }
    }

    @Test("init(host:port:) checks like the parser; description brackets IPv6")
    func memberwise() throws {
        #expect(throws: PJSUAUsageError.self) { try Nameserver(host: "localhost") }
        #expect(throws: PJSUAUsageError.self) { try Nameserver(host: "192.0.2.1", port: 0) }
        #expect(try Nameserver(host: "2001:db8::1", port: 5353).description == "[2001:db8::1]:5353")
        #expect(try Nameserver("192.0.2.1").description == "192.0.2.1:53")
    }
}
