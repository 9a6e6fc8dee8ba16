import CPJSIP
import Foundation
import SwiftPJSUA
import Testing

@Suite("Native adjustments without pjsua")
struct NativeAdjustmentValueTests {
    @Test("An adjustment equals its copies only, so AccountConfiguration stays Hashable")
    func equalityByIdentity() {
        let adjustment = NativeAccountAdjustment { $0.reg_retry_interval = 17 }
        var first = AccountConfiguration(identity: "sip:alice@127.0.0.1")
        first.nativeAdjustment = adjustment
        var copy = first
        #expect(copy == first)
        #expect(Set([first, copy]).count == 1)
        copy.nativeAdjustment = NativeAccountAdjustment { $0.reg_retry_interval = 17 }
        #expect(copy != first)
        copy.nativeAdjustment = nil
        #expect(copy != first)
        #expect(copy == AccountConfiguration(identity: "sip:alice@127.0.0.1"))
    }
}
