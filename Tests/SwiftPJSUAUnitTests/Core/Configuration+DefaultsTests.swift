import Foundation
import SwiftPJSUA
import Testing

@Suite("Defaults without pjsua")
struct DefaultConfigurationTests {
    @Test("Configuration() means UDP and TCP on port 5060 and the system's sound device")
    func defaults() {
        let configuration = Configuration()
        #expect(configuration.transports.map(\.type) == [.udp, .tcp])
        #expect(configuration.transports.map(\.port) == [5060, 5060])
        #expect(configuration.transports.allSatisfy { $0.bindAddress == nil })
        #expect(configuration.media.soundDevice == .systemDefault)
        #expect(MediaConfiguration().soundDevice == .systemDefault)
        #expect(configuration.nativeAdjustments == NativeAdjustments())
    }
}
