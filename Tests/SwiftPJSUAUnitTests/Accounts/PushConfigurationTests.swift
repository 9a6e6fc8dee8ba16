import SwiftPJSUA
import Testing

@Suite("RFC 8599 push parameters")
struct PushConfigurationTests {
    @Test(
        "apns(teamID:bundleID:token:pushType:) builds pn-param from the team ID and the APNs topic",
        arguments: [
            (nil, ";pn-provider=apns;pn-param=ABCDE12345.com.example.phone.voip;pn-prid=00aa11bb"),
            ("voip", ";pn-provider=apns;pn-param=ABCDE12345.com.example.phone.voip;pn-prid=00aa11bb"),
            ("complication", ";pn-provider=apns;pn-param=ABCDE12345.com.example.phone.complication;pn-prid=00aa11bb"),
            ("", ";pn-provider=apns;pn-param=ABCDE12345.com.example.phone;pn-prid=00aa11bb"),
        ] as [(String?, String)])
    func apns(pushType: String?, expected: String) {
        let push =
            if let pushType {
                PushConfiguration.apns(
                    teamID: "ABCDE12345", bundleID: "com.example.phone", token: "00aa11bb", pushType: pushType)
            } else {
                PushConfiguration.apns(teamID: "ABCDE12345", bundleID: "com.example.phone", token: "00aa11bb")
            }
        #expect(push.uriParameters == expected)
        #expect(push.provider == "apns")
        #expect(push.resourceID == "00aa11bb")
        #expect(push.scope == .registerOnly)
    }
}
