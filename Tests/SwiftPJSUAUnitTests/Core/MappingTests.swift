import CPJSUAShim
import Foundation
import Testing

@testable import SwiftPJSUA

@Suite("C enum mappings")
struct MappingTests {
    @Test(
        "pjsip_inv_state → CallState",
        arguments: [
            (PJSIP_INV_STATE_NULL, CallState.null),
            (PJSIP_INV_STATE_CALLING, .calling),
            (PJSIP_INV_STATE_INCOMING, .incoming),
            (PJSIP_INV_STATE_EARLY, .early),
            (PJSIP_INV_STATE_CONNECTING, .connecting),
            (PJSIP_INV_STATE_CONFIRMED, .confirmed),
            (PJSIP_INV_STATE_DISCONNECTED, .disconnected),
        ])
    func callState(native: pjsip_inv_state, expected: CallState) {
        #expect(CallState(native: native) == expected)
        #expect(CallState(native: native).isTerminal == (expected == .disconnected))
    }

    @Test(
        "pjsua_call_media_status → MediaStatus",
        arguments: [
            (PJSUA_CALL_MEDIA_NONE, MediaStatus.unused),
            (PJSUA_CALL_MEDIA_ACTIVE, .active),
            (PJSUA_CALL_MEDIA_LOCAL_HOLD, .localHold),
            (PJSUA_CALL_MEDIA_REMOTE_HOLD, .remoteHold),
            (PJSUA_CALL_MEDIA_ERROR, .error),
        ])
    func mediaStatus(native: pjsua_call_media_status, expected: MediaStatus) {
        #expect(MediaStatus(native: native) == expected)
    }

    @Test(
        "pjmedia_dir → MediaDirection",
        arguments: [
            (PJMEDIA_DIR_NONE, MediaDirection.inactive),
            (PJMEDIA_DIR_ENCODING, .send),
            (PJMEDIA_DIR_DECODING, .receive),
            (PJMEDIA_DIR_ENCODING_DECODING, .sendReceive),
        ])
    func mediaDirection(native: pjmedia_dir, expected: MediaDirection) {
        #expect(MediaDirection(native: native) == expected)
    }

    @Test(
        "pjmedia_type → MediaType",
        arguments: [
            (PJMEDIA_TYPE_AUDIO, MediaType.audio), (PJMEDIA_TYPE_VIDEO, .video), (PJMEDIA_TYPE_APPLICATION, .other),
        ])
    func mediaType(native: pjmedia_type, expected: MediaType) {
        #expect(MediaType(native: native) == expected)
    }

    @Test("TransportType round-trips through pjsip_transport_type_e", arguments: TransportType.allCases)
    func transportType(type: TransportType) {
        #expect(TransportType(native: type.native) == type)
    }

    @Test("pj_time_val → Duration")
    func duration() {
        #expect(Duration(pj_time_val(sec: 3, msec: 250)) == .milliseconds(3250))
    }
}

@Suite("Errors")
struct ErrorTests {
    @Test("A SIP status code survives the trip through pj_status_t", arguments: [180, 404, 486, 503, 603])
    func sipStatus(code: Int) {
        let error = PJ.error(PJSUAError.Code.sip(code).rawValue, "pjsua_call_make_call")
        #expect(error.sipStatus == code)
        #expect(error.function == "pjsua_call_make_call")
        #expect(error.code == .sip(code))
        #expect(error.description.contains("SIP \(code)"))
    }

    @Test("Named codes come from the linked pjproject and differ from each other")
    func namedCodes() {
        let codes: [PJSUAError.Code] = [
            .invalidArgument, .notFound, .tooMany, .busy, .invalidOperation, .timedOut, .alreadyExists,
            .noMemory, .invalidURI, .sessionTerminated, .sessionState, .messageTooLong,
        ]
        #expect(Set(codes).count == codes.count)
        #expect(codes.allSatisfy { $0.rawValue != 0 })
        #expect(PJ.error(PJSUAError.Code.tooMany.rawValue, "x").sipStatus == nil)
    }

    @Test("The message is pj_strerror's text, captured when the error is made")
    func message() {
        let error = PJ.error(PJSUAError.Code.tooMany.rawValue, "pjsua_call_make_call")
        #expect(error.message.lowercased().contains("too many"), "\(error.message)")
        #expect(PJ.describe(0).lowercased().contains("success"))
    }

    @Test("check throws for failures only")
    func check() throws {
        try PJ.check(cpj_success(), "ok")
        #expect(throws: PJSUAError.self) { try PJ.check(cpj_status_einval(), "pjsua_init") }
    }

    @Test("pj_str_t is read by length, not to a NUL, and decoded with replacement")
    func pjString() {
        var bytes: [CChar] = Array("abcdef".utf8CString)
        let text = bytes.withUnsafeMutableBufferPointer { buf in
            PJ.string(pj_str_t(ptr: buf.baseAddress, slen: 3))
        }
        #expect(text == "abc")
        var invalid: [CChar] = [0x61, -1, 0x62]
        let replaced = invalid.withUnsafeMutableBufferPointer { PJ.string(pj_str_t(ptr: $0.baseAddress, slen: 3)) }
        #expect(replaced == "a\u{FFFD}b")
        #expect(PJ.string(pj_str_t(ptr: nil, slen: 0)) == "")
        let scoped = PJ.withPJString("Zoë") { PJ.string($0) }
        #expect(scoped == "Zoë")
    }
}

@Suite("SIP name-addresses")
struct SIPAddressTests {
    @Test(
        "Parsing what pjsip prints",
        arguments: [
            (#""Zoë \"Z\" Tester 測試" <sip:alice@example.com>"#, "Zoë \"Z\" Tester 測試", "sip:alice@example.com"),
            ("Bob <sip:bob@host;transport=tcp>", "Bob", "sip:bob@host;transport=tcp"),
            ("<sip:carol@10.0.0.1:5070>", nil, "sip:carol@10.0.0.1:5070"),
            ("sip:dave@host", nil, "sip:dave@host"),
            (#""back\\slash" <sip:e@h>"#, "back\\slash", "sip:e@h"),
            (#""" <sip:empty@h>"#, "", "sip:empty@h"),
        ] as [(String, String?, String)])
    func parse(text: String, display: String?, uri: String) {
        let address = SIPAddress(parsing: text)
        #expect(address.displayName == display)
        #expect(address.uri == uri)
    }

    @Test("description re-escapes the display-name")
    func roundTrip() {
        let address = SIPAddress(displayName: "A \"B\" \\ C", uri: "sip:x@y")
        #expect(SIPAddress(parsing: address.description) == address)
    }
}
