import CPJSIP

extension Native {
    // MARK: Calls

    /// Whether `uri` is a SIP or SIPS URI pjsip can parse (`pjsua_verify_sip_url`).
    static func isValidSIPURI(_ uri: String) -> Bool {
        uri.withCString { pjsua_verify_sip_url($0) } == cpj_success()
    }

    /// - Parameter generation: the new call's generation; a caller that subscribes to the
    ///   call's events before placing it reserves one first.
    static func makeCall(
        to uri: String, from account: pjsua_acc_id, generation: UInt64 = nextGeneration()
    ) throws(PJSUAError) -> Call {
        var setting = pjsua_call_setting()
        pjsua_call_setting_default(&setting)
        setting.aud_cnt = 1
        setting.vid_cnt = 0
        var slot = pjsua_call_id(cpj_invalid_id())
        // The generation goes in as the call's user data, so it is in place before the
        // first callback for the call runs.
        let status = PJ.withPJString(uri) { target in
            var target = target
            return pjsua_call_make_call(
                account, &target, &setting, UnsafeMutableRawPointer(bitPattern: UInt(generation)), nil, &slot)
        }
        try PJ.check(status, "pjsua_call_make_call")
        return Call(slot: slot, generation: generation)
    }

    static func answer(_ slot: pjsua_call_id, statusCode: Int) throws(PJSUAError) {
        var setting = pjsua_call_setting()
        pjsua_call_setting_default(&setting)
        setting.aud_cnt = 1
        setting.vid_cnt = 0
        try PJ.check(pjsua_call_answer2(slot, &setting, UInt32(statusCode), nil, nil), "pjsua_call_answer2")
    }

    static func hangup(_ slot: pjsua_call_id, statusCode: Int) throws(PJSUAError) {
        try PJ.check(pjsua_call_hangup(slot, UInt32(statusCode), nil, nil), "pjsua_call_hangup")
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
            let stream = MediaStream(
                index: Int(m.pointee.index), type: type,
                status: MediaStatus(native: m.pointee.status), direction: MediaDirection(native: m.pointee.dir))
            media.append(stream)
            if type == .audio, stream.status == .active || stream.status == .remoteHold {
                let conf = cpj_call_media_conf_slot(m)
                if conf != cpj_invalid_id() { slots.append(conf) }
            }
        }
        var codec: String?
        if let audio = media.first(where: { $0.type == .audio && $0.status != .none && $0.status != .error }) {
            var stream = pjsua_stream_info()
            if cpj_call_get_stream_info(slot, UInt32(audio.index), &stream) == cpj_success() {
                let fmt = stream.info.aud.fmt
                codec = "\(PJ.string(fmt.encoding_name))/\(fmt.clock_rate)"
            }
        }
        let snapshot = CallInfo(
            call: call,
            role: info.role == PJSIP_ROLE_UAC ? .caller : .callee,
            account: info.acc_id >= 0 ? Handles.account(info.acc_id) : nil,
            state: CallState(native: info.state),
            sipCallID: PJ.string(info.call_id),
            local: SIPAddress(parsing: PJ.string(info.local_info)),
            remote: SIPAddress(parsing: PJ.string(info.remote_info)),
            remoteContact: PJ.string(info.remote_contact),
            lastStatusCode: Int(info.last_status.rawValue),
            lastReason: PJ.string(info.last_status_text),
            connectDuration: Duration(info.connect_duration),
            totalDuration: Duration(info.total_duration),
            media: media,
            audioCodec: codec)
        return NativeCallInfo(info: snapshot, audioConferenceSlots: slots, remoteVideoCount: Int(info.rem_vid_cnt))
    }

    static func streamStatistics(_ slot: pjsua_call_id, mediaIndex: Int) throws(PJSUAError) -> StreamStatistics {
        let raw = UnsafeMutablePointer<pjsua_stream_stat>.allocate(capacity: 1)
        defer { raw.deallocate() }
        try PJ.check(cpj_call_get_stream_stat(slot, UInt32(mediaIndex), raw), "pjsua_call_get_stream_stat")
        let rtcp = raw.pointee.rtcp
        return StreamStatistics(
            packetsSent: UInt64(rtcp.tx.pkt), bytesSent: UInt64(rtcp.tx.bytes),
            packetsReceived: UInt64(rtcp.rx.pkt), bytesReceived: UInt64(rtcp.rx.bytes),
            packetsLost: UInt64(rtcp.rx.loss),
            jitter: .microseconds(Int64(rtcp.rx.jitter.last)),
            roundTripTime: .microseconds(Int64(rtcp.rtt.last)))
    }

}
