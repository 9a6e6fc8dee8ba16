import Foundation
import SwiftPJSUA
import Testing

@Suite("Call feature values")
struct CallValueTests {
    @Test(
        "SIPHeader(parsing:) splits at the first colon and trims",
        arguments: [
            ("X-Campaign: spring-7", "X-Campaign", "spring-7"),
            ("P-Asserted-Identity:  \"A\" <sip:a@b.c:5060>", "P-Asserted-Identity", "\"A\" <sip:a@b.c:5060>"),
            ("X-Empty:", "X-Empty", ""),
        ])
    func parsesHeader(line: String, name: String, value: String) throws {
        let header = try #require(SIPHeader(parsing: line))
        #expect(header.name == name)
        #expect(header.value == value)
    }

    @Test("Lines without a name or colon are not headers; lookup ignores case")
    func rejectsNonHeaders() {
        #expect(SIPHeader(parsing: "no colon here") == nil)
        #expect(SIPHeader(parsing: ": value") == nil)
        let headers = [SIPHeader(name: "X-One", value: "1"), SIPHeader(name: "x-one", value: "2")]
        #expect(headers.value(of: "X-ONE") == "1")
        #expect(headers.value(of: "X-Two") == nil)
    }
}
