import CPJSUAShim

extension Native {
    // MARK: DTMF

    static func sendDTMF(
        _ slot: pjsua_call_id, digits: String, method: DTMFMethod, milliseconds: Int
    ) throws(PJSUAError) {
        var param = pjsua_call_send_dtmf_param()
        pjsua_call_send_dtmf_param_default(&param)
        param.method = method == .sipInfo ? PJSUA_DTMF_METHOD_SIP_INFO : PJSUA_DTMF_METHOD_RFC2833
        param.duration = UInt32(milliseconds)
        let status = PJ.withPJString(digits) { text in
            param.digits = text
            return pjsua_call_send_dtmf(slot, &param)
        }
        try PJ.check(status, "pjsua_call_send_dtmf")
    }

    /// RFC 4733 digits still queued on the call's audio stream, or -1 when this pjproject
    /// cannot tell (before 2.17).
    /// Whether an offer/answer exchange is open on the call (an INVITE transaction or a
    /// negotiator waiting for an answer): its answer may rebuild the audio stream.
    static func offerPending(_ slot: pjsua_call_id) -> Bool {
        cpj_call_offer_pending(slot) != 0
    }

    static func queuedDTMFDigits(_ slot: pjsua_call_id) -> Int {
        Int(cpj_call_queued_dtmf_digits(slot))
    }
}

/// Reports a digit once, when it ends: pjmedia reports an RFC 4733 event's start, updates and
/// end (and drops repeated end packets); a SIP INFO digit arrives as one ended event.
func onDTMFEvent(_ slot: pjsua_call_id, _ event: UnsafePointer<pjsua_dtmf_event>?) {
    guard let bridge = EngineBridge.active(), let event else { return }
    guard event.pointee.flags & cpj_dtmf_flag_is_end() != 0 else { return }
    // SIP INFO carries whatever character the peer put after `Signal=`; pjsua passes it on.
    // Report only what the event promises (0-9 * # A-D, uppercase); anything else is no digit.
    guard let scalar = Unicode.Scalar(event.pointee.digit),
        let digit = Character(scalar).uppercased().first, "0123456789*#ABCD".contains(digit)
    else { return }
    let duration = event.pointee.duration
    guard let call = Handles.liveCall(slot) else { return }
    bridge.hub.emit(
        .dtmf(
            DTMFDigit(
                call: call, digit: digit,
                method: event.pointee.method == PJSUA_DTMF_METHOD_SIP_INFO ? .sipInfo : .rfc4733,
                duration: duration == cpj_dtmf_unknown_duration() ? nil : .milliseconds(Int64(duration)))))
}
