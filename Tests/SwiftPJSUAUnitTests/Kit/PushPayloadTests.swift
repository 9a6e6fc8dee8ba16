import Foundation
import SwiftPJSUA
import SwiftPJSUAKit
import Testing

@Suite("Push payload schema v1")
struct PushPayloadTests {
    @Test("A full call push parses field by field")
    func fullCallPush() throws {
        let json = #"""
            {"version": 1, "type": "call", "uuid": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
             "callID": "a84b4c76e66710@pc33.example.com",
             "caller": {"uri": "sip:alice@example.com", "name": "Alice \"A\" Zoë"}, "video": true,
             "account": "bob@example.com", "aps": {"alert": "ignored"}}
            """#
        let payload = try PushPayload(json: Data(json.utf8))
        guard case .incomingCall(let push) = payload else {
            Issue.record("not a call: \(payload)")
            return
        }
        #expect(push.serverUUID == UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(push.sipCallID == "a84b4c76e66710@pc33.example.com")
        #expect(push.caller == SIPAddress(displayName: "Alice \"A\" Zoë", uri: "sip:alice@example.com"))
        #expect(push.hasVideo)
        #expect(push.accountHint == "bob@example.com")
    }

    @Test("A minimal call push: only the caller's URI; no video by default")
    func minimalCallPush() throws {
        let payload = try PushPayload(json: Data(#"{"version":1,"type":"call","caller":{"uri":"tel:+15551234"}}"#.utf8))
        #expect(payload == .incomingCall(IncomingCallPush(caller: SIPAddress(uri: "tel:+15551234"))))
    }

    @Test("A re-register push names its account")
    func reRegisterPush() throws {
        let payload = try PushPayload(
            json: Data(#"{"version":1,"type":"reregister","account":"bob@example.com"}"#.utf8))
        #expect(payload == .reRegister(accountHint: "bob@example.com"))
    }

    @Test("Encoding and parsing round-trip, even for a punctuation-heavy Call-ID")
    func roundTrip() throws {
        let callID = String(repeating: #"a.b!c%d*e_f+g`h'i~j(k)l<m>n:o\p"q/r[s]t?u{v}w-"#, count: 8) + "@host.example"
        let payloads: [PushPayload] = [
            .incomingCall(
                IncomingCallPush(
                    serverUUID: UUID(), sipCallID: callID,
                    caller: SIPAddress(displayName: "Zoë", uri: "sips:z@example.com"),
                    hasVideo: true, accountHint: "acc")),
            .incomingCall(IncomingCallPush(caller: SIPAddress(uri: "sip:a@b"))),
            .reRegister(accountHint: "acc"),
        ]
        for payload in payloads {
            #expect(try PushPayload(json: payload.json) == payload)
        }
    }

    @Test("PushKit's dictionary form parses like the JSON")
    func dictionary() throws {
        let dictionary: [AnyHashable: Any] = [
            "version": 1, "type": "call", "callID": "x@y", "caller": ["uri": "sip:a@b", "name": "A"], "video": false,
        ]
        #expect(
            try PushPayload(dictionary: dictionary)
                == .incomingCall(
                    IncomingCallPush(
                        sipCallID: "x@y", caller: SIPAddress(displayName: "A", uri: "sip:a@b"))))
        #expect(throws: PushPayloadError.notJSON) { try PushPayload(dictionary: ["version": Date()]) }
    }

    @Test(
        "Malformed payloads are rejected with a typed error",
        arguments: [
            ("", PushPayloadError.notJSON),
            ("{not json", .notJSON),
            ("[1, 2]", .notAnObject),
            ("\"call\"", .notAnObject),
            (#"{"type":"call","caller":{"uri":"sip:a@b"}}"#, .missingField("version")),
            (#"{"version":"1","type":"call"}"#, .invalidField("version")),
            (#"{"version":2,"type":"call","caller":{"uri":"sip:a@b"}}"#, .unsupportedVersion(2)),
            (#"{"version":1}"#, .missingField("type")),
            (#"{"version":1,"type":"message"}"#, .unknownType("message")),
            (#"{"version":1,"type":"call"}"#, .missingField("caller")),
            (#"{"version":1,"type":"call","caller":{}}"#, .missingField("caller.uri")),
            (#"{"version":1,"type":"call","caller":"sip:a@b"}"#, .invalidField("caller")),
            (#"{"version":1,"type":"call","caller":{"uri":"http://a"}}"#, .invalidField("caller.uri")),
            (#"{"version":1,"type":"call","caller":{"uri":"sip:"}}"#, .invalidField("caller.uri")),
            (
                #"{"version":1,"type":"call","caller":{"uri":"sip:a@b","name":"A\r\nX: y"}}"#,
                .invalidField("caller.name")
            ),
            (#"{"version":1,"type":"call","caller":{"uri":"sip:a@b"},"video":1}"#, .invalidField("video")),
            (#"{"version":1,"type":"call","caller":{"uri":"sip:a@b"},"uuid":"not-a-uuid"}"#, .invalidField("uuid")),
            (#"{"version":1,"type":"call","caller":{"uri":"sip:a@b"},"callID":""}"#, .invalidField("callID")),
            (#"{"version":1,"type":"call","caller":{"uri":"sip:a@b"},"callID":"a b@c"}"#, .invalidField("callID")),
            (#"{"version":1,"type":"call","caller":{"uri":"sip:a@b"},"callID":42}"#, .invalidField("callID")),
            (#"{"version":1,"type":"reregister"}"#, .missingField("account")),
            (#"{"version":1,"type":"reregister","account":""}"#, .invalidField("account")),
        ])
    func malformed(json: String, error: PushPayloadError) {
        #expect(throws: error) { try PushPayload(json: Data(json.utf8)) }
    }
}

@Suite("End reasons from SIP status")
struct EndReasonTests {
    @Test(
        "SIP status → CallKit end reason",
        arguments: [
            (487, false, CallEndReason.unanswered), (487, true, .unanswered),
            (486, true, .remoteEnded), (600, true, .remoteEnded), (603, true, .remoteEnded),
            (486, false, .declinedElsewhere), (603, false, .declinedElsewhere),
            (404, true, .failed), (408, true, .failed), (480, false, .failed), (500, true, .failed),
            (503, false, .failed),
            (200, true, .remoteEnded), (200, false, .remoteEnded), (0, true, .failed),
        ])
    func mapping(status: Int, isOutgoing: Bool, reason: CallEndReason) {
        #expect(CallEndReason(sipStatus: status, isOutgoing: isOutgoing) == reason)
    }
}
