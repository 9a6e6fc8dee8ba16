import CPJSUAShim

/// A call snapshot plus what only the interop layer needs (conference slots).
struct NativeCallInfo {
    var info: CallInfo
    var audioConferenceSlots: [pjsua_conf_port_id]
    var remoteVideoCount: Int

    var state: CallState { info.state }
    var sipCallID: String { info.sipCallID }
    var statusCode: Int { info.statusCode }
    var reason: String { info.reason }
    var remote: SIPAddress { info.remote }
    var media: [MediaStream] { info.media }
}

extension Native {
    // MARK: Calls

    /// Whether `uri` is a SIP or SIPS URI pjsip can parse, all of it (the check of
    /// `pjsua_verify_sip_url`, which aborts on a URI of about 1000 bytes or more). A NUL
    /// inside would make C see a shorter URI than the one later used: never valid.
    static func isValidSIPURI(_ uri: String) -> Bool {
        var text = uri
        guard !text.utf8.contains(0) else { return false }
        return text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { cpj_verify_sip_uri($0.baseAddress, pj_size_t($0.count)) }
        } == cpj_success()
    }

    /// Whether pjsip parses `value` as a `name` header: the syntax of the headers pjsip knows
    /// (Expires, Max-Forwards, Replaces…), any text for other names.
    static func headerParses(name: String, value: String) -> Bool {
        var name = name
        var value = value
        return name.withUTF8 { nameBytes in
            value.withUTF8 { valueBytes in
                nameBytes.withMemoryRebound(to: CChar.self) { n in
                    valueBytes.withMemoryRebound(to: CChar.self) { v in
                        cpj_header_parses(n.baseAddress, pj_size_t(n.count), v.baseAddress, pj_size_t(v.count))
                    }
                }
            }
        } != 0
    }

    /// Runs `body` with a `pjsua_msg_data` carrying `headers` (or `nil` when there are none).
    /// The headers live in a pool released afterwards; pjsua copies them into the request.
    static func withMessageData<R>(
        _ headers: [SIPHeader], _ body: (UnsafeMutablePointer<pjsua_msg_data>?) -> R
    ) -> R {
        guard !headers.isEmpty, let pool = pjsua_pool_create("hdrs", 512, 512) else { return body(nil) }
        defer { pj_pool_release(pool) }
        let data = UnsafeMutablePointer<pjsua_msg_data>.allocate(capacity: 1)
        defer { data.deallocate() }
        pjsua_msg_data_init(data)
        let scope = StringScope()
        for header in headers {
            _ = cpj_msg_data_add_header(data, pool, scope.pj(header.name), scope.pj(header.value))
        }
        return body(data)
    }

    /// - Parameter generation: the new call's generation; a caller that subscribes to the
    ///   call's events before placing it reserves one first.
    static func makeCall(
        to uri: String, from account: pjsua_acc_id, headers: [SIPHeader] = [],
        generation: UInt64 = nextGeneration()
    ) throws(PJSUAError) -> Call {
        var setting = pjsua_call_setting()
        pjsua_call_setting_default(&setting)
        cpj_call_setting_audio_only(&setting)
        let scope = StringScope()
        adjustCallSetting(&setting, scope: scope)
        var slot = pjsua_call_id(cpj_invalid_id())
        // The generation goes in as the call's user data, so it is in place before the
        // first callback for the call runs.
        let status = PJ.withPJString(uri) { target in
            var target = target
            return withMessageData(headers) { data in
                pjsua_call_make_call(
                    account, &target, &setting, UnsafeMutableRawPointer(bitPattern: UInt(generation)), data, &slot)
            }
        }
        withExtendedLifetime(scope) {}
        try PJ.check(status, "pjsua_call_make_call")
        return Call(slot: slot, generation: generation)
    }

    /// - Parameter refreshingContact: a network change happened since the INVITE arrived:
    ///   a 2xx carries the account's current Contact, not the one the dialog was made with.
    static func answer(
        _ slot: pjsua_call_id, statusCode: Int, headers: [SIPHeader] = [], refreshingContact: Bool = false
    ) throws(PJSUAError) {
        // An answer with SDP (183 or 2xx) gives a call without media yet its conference slot;
        // on a full bridge pjmedia asserts before it returns an error, so refuse here (the
        // call keeps ringing and can be rejected).
        if statusCode == 183 || (200..<300).contains(statusCode), pjsua_call_get_conf_port(slot) == cpj_invalid_id(),
            cpj_conf_is_full() != 0
        {
            throw PJ.error(cpj_status_etoomany(), "pjsua_call_answer2")
        }
        var setting = pjsua_call_setting()
        pjsua_call_setting_default(&setting)
        cpj_call_setting_audio_only(&setting)
        let scope = StringScope()
        adjustCallSetting(&setting, scope: scope)
        // A network change since the INVITE: the 2xx carries the account's current Contact.
        if refreshingContact, (200..<300).contains(statusCode) { _ = cpj_call_refresh_early_contact(slot) }
        let status = withMessageData(headers) { pjsua_call_answer2(slot, &setting, UInt32(statusCode), nil, $0) }
        // Strings an adjustment pointed the setting at live until pjsua has copied it.
        withExtendedLifetime(scope) {}
        try PJ.check(status, "pjsua_call_answer2")
    }

    static func hangup(_ slot: pjsua_call_id, statusCode: Int, headers: [SIPHeader] = []) throws(PJSUAError) {
        let status = withMessageData(headers) { pjsua_call_hangup(slot, UInt32(statusCode), nil, $0) }
        try PJ.check(status, "pjsua_call_hangup")
    }

    static func hangupAll() {
        pjsua_call_hangup_all()
    }

    /// Slots of calls pjsua still holds.
    static func activeCallCount() -> Int {
        Int(pjsua_call_get_count())
    }

    /// The headers of a received message, in order, as pjsip prints them.
    static func headers(of rdata: UnsafeMutablePointer<pjsip_rx_data>) -> [SIPHeader] {
        guard let msg = cpj_rdata_msg(rdata) else { return [] }
        var result: [SIPHeader] = []
        var buffer = [CChar](repeating: 0, count: 4096)
        var header = cpj_msg_first_header(msg)
        while let current = header {
            let length = buffer.withUnsafeMutableBufferPointer { buf -> Int in
                guard let base = buf.baseAddress else { return -1 }
                return Int(cpj_header_print(current, base, pj_size_t(buf.count)))
            }
            if length > 0 {
                let line = buffer.withUnsafeBufferPointer { buf in
                    String(decoding: UnsafeRawBufferPointer(buf).prefix(length), as: UTF8.self)
                }
                if let parsed = SIPHeader(parsing: line) { result.append(parsed) }
            }
            header = cpj_msg_next_header(msg, current)
        }
        return result
    }

    /// Bytes of the Call-ID `pjsua_call_info` keeps (its buffer holds 128 with the NUL).
    static let callInfoCallIDCapacity = 127

    /// The call's Call-ID: `truncated` unless pjsua's buffer cut it, in which case the full
    /// one the INVITE carried (kept by the incoming-call callback).
    static func fullCallID(_ truncated: String, of call: Call) -> String {
        guard truncated.utf8.count >= callInfoCallIDCapacity,
            let full = EngineBridge.active()?.calls.withLock({ $0.longCallIDs[call.generation] })
        else { return truncated }
        return full
    }

    /// The account `call` belongs to: the one in `accountSlot` if it is the account the call
    /// was first seen with (recorded then), else `nil`.
    static func ownAccount(of call: Call, slot accountSlot: pjsua_acc_id) -> Account? {
        let current = Handles.account(accountSlot)
        guard let bridge = EngineBridge.active() else { return current }
        return bridge.calls.withLock { calls in
            if let first = calls.callAccounts[call.generation] { return first == current ? current : nil }
            if let current { calls.callAccounts[call.generation] = current }
            return current
        }
    }

    /// Reads `pjsua_call_info` into storage owned here and converts it at once.
    static func readCallInfo(_ slot: pjsua_call_id, call: Call) -> NativeCallInfo? {
        let raw = UnsafeMutablePointer<pjsua_call_info>.allocate(capacity: 1)
        defer { raw.deallocate() }
        guard pjsua_call_get_info(slot, raw) == cpj_success() else { return nil }
        let info = raw.pointee
        var media: [MediaStream] = []
        var slots: [pjsua_conf_port_id] = []
        for index in 0..<info.media_cnt {
            guard let m = cpj_call_info_media(raw, index) else { continue }
            let type = MediaType(native: m.pointee.type)
            var status = MediaStatus(native: m.pointee.status)
            let direction = MediaDirection(native: m.pointee.dir)
            // pjsua reports a stream the far end made `inactive` (RFC 3264 §8.4 hold) as
            // active with no direction; it is a remote hold like `sendonly`.
            if status == .active, direction == .inactive, m.pointee.type == PJMEDIA_TYPE_AUDIO { status = .remoteHold }
            var stream = MediaStream(index: Int(m.pointee.index), type: type, status: status, direction: direction)
            if type == .audio, status != .unused, status != .error {
                stream.srtp = srtpSession(slot, call: call, mediaIndex: stream.index)
            }
            media.append(stream)
            if type == .audio, stream.status == .active || stream.status == .remoteHold || stream.status == .localHold {
                let conf = cpj_call_media_conf_slot(m)
                if conf != cpj_invalid_id() { slots.append(conf) }
            }
        }
        var codec: String?
        if let audio = media.first(where: { $0.type == .audio && $0.status != .unused && $0.status != .error }) {
            var stream = pjsua_stream_info()
            if cpj_call_get_stream_info(slot, UInt32(audio.index), &stream) == cpj_success() {
                let fmt = stream.info.aud.fmt
                codec = "\(PJ.string(fmt.encoding_name))/\(fmt.clock_rate)"
            }
        }
        let snapshot = CallInfo(
            call: call,
            role: info.role == PJSIP_ROLE_UAC ? .caller : .callee,
            // nil once the call's account has been removed, also when a new account has
            // taken its slot since.
            account: ownAccount(of: call, slot: info.acc_id),
            state: CallState(native: info.state),
            sipCallID: fullCallID(PJ.string(info.call_id), of: call),
            local: SIPAddress(parsing: PJ.string(info.local_info)),
            remote: SIPAddress(parsing: PJ.string(info.remote_info)),
            remoteContact: PJ.string(info.remote_contact),
            statusCode: Int(info.last_status.rawValue),
            reason: PJ.string(info.last_status_text),
            connectDuration: Duration(info.connect_duration),
            totalDuration: Duration(info.total_duration),
            media: media,
            audioCodec: codec)
        return NativeCallInfo(info: snapshot, audioConferenceSlots: slots, remoteVideoCount: Int(info.rem_vid_cnt))
    }
}
