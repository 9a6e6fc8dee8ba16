import Foundation
import SwiftPJSUA

extension PushConfiguration {
    /// Apple Push Notification service parameters from the token as PushKit hands it over
    /// (`PKPushCredentials.token`, or ``VoIPPushHandler``'s `onToken`): the bytes written as
    /// lowercase hexadecimal text, then as
    /// ``PushConfiguration/apns(teamID:bundleID:token:pushType:scope:)``.
    /// - Parameters:
    ///   - teamID: the developer team ID, for example `ABCDE12345`.
    ///   - bundleID: the app's bundle ID, for example `com.example.phone`.
    ///   - token: the device token's bytes (32 for APNs today; any length is written).
    ///   - pushType: the suffix of the APNs topic: `voip` (the default) for PushKit VoIP
    ///     pushes; empty for a topic that is the bundle ID alone.
    ///   - scope: which Contacts carry the parameters (REGISTER's alone by default).
    /// - Returns: `pn-provider=apns`, `pn-param=<teamID>.<bundleID>[.<pushType>]`,
    ///   `pn-prid=<hex token>`.
    public static func apns(
        teamID: String, bundleID: String, token: Data, pushType: String = "voip", scope: Scope = .registerOnly
    ) -> PushConfiguration {
        apns(teamID: teamID, bundleID: bundleID, token: token.hexadecimal, pushType: pushType, scope: scope)
    }
}

extension Data {
    /// The bytes as lowercase hexadecimal text, two digits each, for example `00ff10`.
    var hexadecimal: String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(count * 2)
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
