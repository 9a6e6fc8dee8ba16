import EarlierAPICompat
import Foundation
import SwiftPJSUA
import Testing

@Suite("The earlier swift-pjsua's Kit names")
struct EarlierKitNamesTests {
    /// The pair is `uuid.uuid5(uuid.UUID('B2D6F0E2-9B9A-5E7C-8F1A-9C2D3E4F5A6B'), call_id)` in
    /// Python, as in CallIdentityTests.
    @Test("CallIdentity.uuid(serverProvided:sipCallID:) and UUID(version5:namespace:) give the earlier UUID")
    func callUUIDs() {
        // Through the protocol, on the type: no engine is made outside EngineTests.
        let app: any EarlierStyleSteps.Type = EarlierStylePhone.self
        #expect(
            app.callUUIDs(sipCallID: "a84b4c76e66710@pc33.atlanta.com").map { $0.uuidString.lowercased() }
                == ["b8ea5344-679f-58ed-a719-403946747d80", "b8ea5344-679f-58ed-a719-403946747d80"])
    }
}

@Suite("The earlier swift-pjsua's configuration")
struct EarlierConfigurationTests {
    @Test("Configuration(port:transport:) and (transport:) make one transport; a port over 65535 makes none")
    func mapping() throws {
        let configurations = (EarlierStylePhone.self as any EarlierStyleSteps.Type).earlierConfigurations()
        try #require(configurations.count == 3)
        #expect(configurations[0].transports == [TransportConfiguration(type: .tcp, port: 5070)])
        #expect(configurations[1].transports == [TransportConfiguration(type: .tls, port: 5060)])
        // start throws invalidConfiguration for it (no transport) rather than binding another port.
        #expect(configurations[2].transports.isEmpty)
        for configuration in configurations {
            #expect(configuration.media.soundDevice == .systemDefault)
            #expect(configuration.media.soundDeviceActivation == .byApp)
            #expect(configuration.logLevel == 4)
            #expect(configuration.logHandler == nil)
        }
    }
}
