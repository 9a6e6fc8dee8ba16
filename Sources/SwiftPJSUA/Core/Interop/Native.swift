import CPJSUAShim
import Foundation

/// Every pjsua call the engine makes. All functions run on the engine thread (the
/// ``PJSUA`` actor's executor), except `readCallInfo` and `applyMediaLinks`, which the
/// C callbacks also use on pjsua's own threads.
enum Native {
    // MARK: Lifecycle

    /// `pjsua_create` → `pjsua_init` → transports → `pjsua_start` → sound device. On failure
    /// everything created is destroyed again and the error is thrown.
    static func start(_ configuration: Configuration) throws(PJSUAError) -> [Transport] {
        if !hasIPv6, let transport = configuration.transports.first(where: \.type.isIPv6) {
            throw ipv6Unavailable("pjsua_transport_create", "transport \(transport.type.rawValue) is IPv6")
        }
        // pjsua_create logs before pjsua_init installs the logging config: route and
        // filter those lines the same way from the start.
        let level = Int32(max(0, min(6, configuration.logLevel)))
        pj_log_set_level(configuration.logHandler == nil ? 0 : level)
        pj_log_set_log_func { onLog($0, $1, $2) }
        try PJ.check(pjsua_create(), "pjsua_create")
        do {
            let scope = StringScope()
            var config = pjsua_config()
            pjsua_config_default(&config)
            config.user_agent = scope.pj(configuration.userAgent)
            config.max_calls = UInt32(configuration.maxCalls)
            // pjsua's worker thread pumps SIP events; the engine never polls.
            config.thread_cnt = 1
            config.cb.on_call_state = { onCallState($0, $1) }
            config.cb.on_incoming_call = { onIncomingCall($0, $1, $2) }
            config.cb.on_call_media_state = { onCallMediaState($0) }
            config.cb.on_reg_state2 = { onRegistrationState($0, $1) }
            config.cb.on_dtmf_event = { onDTMFEvent($0, $1) }
            config.cb.on_call_transfer_status = { onTransferStatus($0, $1, $2, $3, $4) }
            config.cb.on_call_transfer_request2 = { onTransferRequest($0, $1, $2, $3) }
            config.cb.on_call_replace_request2 = { onCallReplaceRequest($0, $1, $2, $3, $4) }
            config.cb.on_call_replaced = { onCallReplaced($0, $1) }
            config.cb.on_call_tsx_state = { onCallTransactionState($0, $1, $2) }
            config.cb.on_transport_state = { onTransportState($0, $1, $2) }
            config.cb.on_pager2 = { onPager($0, $1, $2, $3, $4, $5, $6, $7) }
            config.cb.on_pager_status2 = { onPagerStatus($0, $1, $2, $3, $4, $5, $6, $7, $8) }
            config.cb.on_typing2 = { onTyping($0, $1, $2, $3, $4, $5, $6) }
            config.cb.on_mwi_info = { onMessageWaitingInfo($0, $1) }
            config.cb.on_incoming_subscribe = { account, _, _, from, _, code, reason, _ in
                onIncomingSubscribe(account, from, code, reason)
            }
            config.cb.on_buddy_state = { onBuddyState($0) }
            config.cb.on_buddy_evsub_state = { buddy, _, event in onBuddySubscriptionState(buddy, event) }
            cpj_presence_set_dialog_callback(&config) { onBuddyDialogState($0) }
            applyNameservers(configuration.dns, to: &config, scope: scope)
            config.cb.on_ip_change_progress = { onIPChangeProgress($0, $1, $2) }

            var logging = pjsua_logging_config()
            pjsua_logging_config_default(&logging)
            logging.level = configuration.logHandler == nil ? 0 : UInt32(level)
            logging.console_level = logging.level
            logging.msg_logging = logging.level >= 4 ? 1 : 0
            logging.cb = { onLog($0, $1, $2) }

            var media = pjsua_media_config()
            pjsua_media_config_default(&media)
            media.clock_rate = UInt32(configuration.media.clockRate)
            media.snd_clock_rate = 0
            // The null device clocks the bridge from start to shutdown (pjsua would close it
            // after a second without calls and open a new one on the next connect), so a
            // sound-device tap put into it stays there.
            if configuration.media.soundDevice == .null { media.snd_auto_close_time = -1 }
            media.no_vad = configuration.media.voiceActivityDetection ? 0 : 1
            applyJitterBuffer(configuration.media.jitterBuffer, to: &media)
            // pjproject 2.13 and later: RTP and RTCP have pjmedia's own I/O queue and worker
            // thread, as in pjsua's app, so media never waits behind SIP processing.
            //
            // pjproject 2.12: RTP and RTCP sockets share pjsip's I/O queue, polled by the
            // SIP worker above, instead of a media I/O queue of their own. pjmedia's own worker polls with a
            // fixed 500 ms timeout (endpoint.c, worker_proc), and pjlib's epoll queue sleeps
            // that whole timeout when epoll reports a socket that has no read pending yet
            // (ioqueue_epoll.c, "epoll returns > 0 but no descriptors"). A caller's RTP and
            // RTCP sockets are exactly that between the callee's first packets and the 200 OK
            // that starts the caller's stream (transport_udp.c starts reading in media_start),
            // so the caller read nothing for half a second and then a burst of ~24 packets:
            // the jitter buffer kept ~480 ms of latency and its progressive discard dropped a
            // frame every ~180 ms, which speex's decoder and PLC turn into broken audio. The
            // SIP worker polls with a 10 ms timeout, which bounds that stall to one frame.
            let ownMediaWorker = Native.usesMediaWorker
            media.has_ioqueue = ownMediaWorker ? 1 : 0
            media.thread_cnt = ownMediaWorker ? 1 : 0
            media.max_media_ports = UInt32(Native.conferenceBridgeSize)

            applyMediaNAT(configuration, config: &config, media: &media, scope: scope)

            let adjustments = configuration.nativeAdjustments
            adjust(&config, with: adjustments.ua, maxCalls: configuration.maxCalls, scope: scope)
            adjust(&logging, with: adjustments.logging, scope: scope)
            try adjust(&media, with: adjustments.media, scope: scope)
            callSettingAdjustment.withLock { $0 = adjustments.callSetting }
            try PJ.check(pjsua_init(&config, &logging, &media), "pjsua_init")
            // Answer requests no module handles (an out-of-dialog BYE, an unknown method)
            // instead of leaving the peer to time out.
            try PJ.check(cpj_register_unhandled_request_responder(), "pjsip_endpt_register_module")
            // Answer malformed requests pjsip accepts or drops (513, 400, 416, 482, 420, 488).
            try PJ.check(cpj_register_rfc_checks(), "pjsip_endpt_register_module")
            try PJ.check(cpj_register_push_contact_module(), "pjsip_endpt_register_module")
            // 100rel and timer out of Supported for accounts with them off.
            try PJ.check(cpj_register_drop_supported_module(), "pjsip_endpt_register_module")
            // A REGISTER 2xx with Expires 4294967295 would make sip_reg.c assert.
            try PJ.check(cpj_register_expires_guard(), "pjsip_endpt_register_module")
            // Decline (603) an INVITE with Replaces for a call the app has already hung up.
            try PJ.check(cpj_register_replaces_check(), "pjsip_endpt_register_module")
            // 488 (not 500) for a re-INVITE offer with no codec in common; no renegotiation
            // for an 18x repeating the early answer.
            try PJ.check(cpj_register_offer_answer_module(), "pjsip_endpt_register_module")
            // IPv4 media addresses in received SDP, for accounts with nat64, into the NAT64
            // prefix (pjmedia would otherwise be left with no remote address on Linux).
            try PJ.check(cpj_register_nat64_module(), "pjsip_endpt_register_module")
            // 480 (not pjsua's unconditional 200) for a MESSAGE while nothing consumes messages.
            try PJ.check(cpj_register_im_consent(), "pjsip_endpt_register_module")
            // Who may call and the limits (403, 404, 503, 486) before anything else sees a request.
            try registerAdmission(configuration.limits)
            try setUpDNS(configuration.dns)
            applyTimers(configuration.timers)

            var transports: [Transport] = []
            for transport in configuration.transports {
                var tcfg = pjsua_transport_config()
                pjsua_transport_config_default(&tcfg)
                tcfg.port = UInt32(transport.port)
                if let address = transport.bindAddress {
                    tcfg.bound_addr = scope.pj(address)
                    tcfg.public_addr = scope.pj(address)
                }
                if let address = transport.publicAddress { tcfg.public_addr = scope.pj(address) }
                if transport.type == .tls || transport.type == .tls6 {
                    applyTLS(transport.tls, to: &tcfg.tls_setting, scope: scope)
                }
                transport.nativeAdjustment?.apply(to: &tcfg, strings: NativeStrings(scope))
                var id = pjsua_transport_id(cpj_invalid_id())
                // Name the transport: "Address already in use" alone does not say which port.
                try PJ.check(
                    pjsua_transport_create(transport.type.native, &tcfg, &id), "pjsua_transport_create",
                    subject: "\(transport.type.rawValue) \(transport.bindAddress ?? "*"):\(tcfg.port)")
                transports.append(Transport(id: id))
            }

            // Strings the adjustments and transports point at live until pjsua has copied them.
            withExtendedLifetime(scope) {}
            try PJ.check(pjsua_start(), "pjsua_start")
            if configuration.media.soundDeviceActivation == .automatic {
                try attachSoundDevice(configuration.media.soundDevice)
            } else {
                _ = pjsua_set_no_snd_dev()
            }
            return transports
        } catch {
            destroy()
            throw error
        }
    }

    // MARK: Versions

    /// The pjproject version of the headers the engine was compiled against ("2.17").
    static var compiledVersion: String { String(cString: cpj_compiled_version()) }
    /// The pjproject version of the libraries loaded at run time (`pj_get_version`).
    static var loadedVersion: String { String(cString: cpj_runtime_version()) }
    /// Whether the pjproject build has IPv6 (`PJ_HAS_IPV6`).
    static var hasIPv6: Bool { cpj_has_ipv6() != 0 }
    /// The error for IPv6 asked of a pjproject built without it, where pjsua would assert.
    static func ipv6Unavailable(_ function: String, _ what: String) -> PJSUAError {
        PJSUAError(
            code: .addressFamilyNotSupported, function: function,
            message: "\(what), and this pjproject \(loadedVersion) was built without IPv6 (PJ_HAS_IPV6 is 0)")
    }
    /// Whether RTP runs on pjmedia's own worker thread (pjproject 2.13+) rather than on
    /// pjsip's SIP worker (2.12, whose media worker stalls for 500 ms).
    static var usesMediaWorker: Bool { cpj_media_worker_is_reliable() != 0 }

    /// Sets pjsip's process-wide transaction timers (`pjsip_cfg()->tsx` and the transaction
    /// layer's copies, `pjsip_tsx_set_timers`); timer B/F (the timeout) is 64 × T1.
    static func applyTimers(_ timers: SIPTimers) {
        // Validated at start to fit; clamping keeps a slip from trapping.
        let t1 = UInt32(clamping: timers.t1.milliseconds), t2 = UInt32(clamping: timers.t2.milliseconds)
        let t4 = UInt32(clamping: timers.t4.milliseconds)
        let td = UInt32(clamping: timers.transactionTimeout.milliseconds)
        if let settings = pjsip_cfg() {
            settings.pointee.tsx.t1 = t1
            settings.pointee.tsx.t2 = t2
            settings.pointee.tsx.t4 = t4
            settings.pointee.tsx.td = td
        }
        pjsip_tsx_set_timers(t1, t2, t4, td)
    }

    /// Destroys pjsua: hangs up what is left, closes transports and the sound device.
    /// The engine has already ended calls and unregistered accounts with its own deadline,
    /// so pjsua is told not to wait for more responses (`PJSUA_DESTROY_NO_RX_MSG`), which
    /// also skips its fixed one-second pause.
    static func destroy() {
        tearDownDNS()
        pjsua_destroy2(UInt32(PJSUA_DESTROY_NO_RX_MSG.rawValue))
        callSettingAdjustment.withLock { $0 = nil }
        // No slot holds a call now, including those whose end pjsua did not report.
        Handles.forgetAll()
    }

    /// The pjproject build's call limit (`PJSUA_MAX_CALLS`).
    static var buildCallLimit: Int { Int(cpj_max_calls()) }

    /// The pjproject build's table sizes, from the macros of its `config_site.h`.
    static var buildLimits: BuildLimits {
        BuildLimits(
            calls: Int(cpj_max_calls()), accounts: Int(cpj_max_accounts()),
            players: Int(cpj_max_players()), recorders: Int(cpj_max_recorders()),
            conferencePorts: Int(cpj_max_conf_ports()), transactions: Int(cpj_max_transactions()),
            dialogs: Int(cpj_max_dialogs()), sipMessageBytes: Int(cpj_max_packet_length()))
    }

    /// The conference bridge's size: two slots per call the build holds plus 32 for
    /// players, recorders, tones and taps, but no more than `PJSUA_MAX_CONF_PORTS`, the
    /// length of the listener arrays in `pjsua_conf_port_info` (a larger bridge could
    /// overflow them) and the size the build was meant to run with.
    static var conferenceBridgeSize: Int {
        min(Int(cpj_max_calls()) * 2 + 32, Int(cpj_max_conf_ports()))
    }
}

extension Duration {
    /// Whole milliseconds, rounded down, at least 0; saturates at `Int64.max` instead of
    /// overflowing for durations beyond about 292 million years.
    var milliseconds: Int64 {
        let (whole, overflow) = components.seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return components.seconds < 0 ? 0 : .max }
        let (total, carry) = whole.addingReportingOverflow(components.attoseconds / 1_000_000_000_000_000)
        return carry ? .max : max(0, total)
    }

    init(_ value: pj_time_val) {
        self = .seconds(Int64(value.sec)) + .milliseconds(Int64(value.msec))
    }
}
