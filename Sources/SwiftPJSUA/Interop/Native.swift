import CPJSIP
import Foundation

/// A call snapshot plus what only the interop layer needs (conference slots).
struct NativeCallInfo {
    var info: CallInfo
    var audioConferenceSlots: [pjsua_conf_port_id]
    var remoteVideoCount: Int

    var state: CallState { info.state }
    var sipCallID: String { info.sipCallID }
    var lastStatusCode: Int { info.lastStatusCode }
    var lastReason: String { info.lastReason }
    var remote: SIPAddress { info.remote }
    var media: [MediaStream] { info.media }
}

/// Every pjsua call the engine makes. All functions run on the engine thread (the
/// ``PJSUA`` actor's executor), except `readCallInfo` and `applyMediaLinks`, which the
/// C callbacks also use on pjsua's own threads.
enum Native {
    // MARK: Lifecycle

    /// `pjsua_create` → `pjsua_init` → transports → `pjsua_start` → sound device. On failure
    /// everything created is destroyed again and the error is thrown.
    static func start(_ configuration: Configuration) throws(PJSUAError) -> [Transport] {
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
            media.no_vad = configuration.media.voiceActivityDetection ? 0 : 1
            // The media event thread; pjsua's own, never zero.
            media.thread_cnt = 1
            media.max_media_ports = UInt32(cpj_max_calls() * 2 + 32)

            try PJ.check(pjsua_init(&config, &logging, &media), "pjsua_init")

            var transports: [Transport] = []
            for transport in configuration.transports {
                var tcfg = pjsua_transport_config()
                pjsua_transport_config_default(&tcfg)
                tcfg.port = UInt32(transport.port)
                if let address = transport.bindAddress {
                    tcfg.bound_addr = scope.pj(address)
                    tcfg.public_addr = scope.pj(address)
                }
                var id = pjsua_transport_id(cpj_invalid_id())
                try PJ.check(pjsua_transport_create(transport.type.native, &tcfg, &id), "pjsua_transport_create")
                transports.append(Transport(id: id))
            }

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

    /// Destroys pjsua: hangs up what is left, closes transports and the sound device.
    /// The engine has already ended calls and unregistered accounts with its own deadline,
    /// so pjsua is told not to wait for more responses (`PJSUA_DESTROY_NO_RX_MSG`), which
    /// also skips its fixed one-second pause.
    static func destroy() {
        pjsua_destroy2(UInt32(PJSUA_DESTROY_NO_RX_MSG.rawValue))
    }

    /// Accounts with a live registration.
    static func registeredAccounts() -> [Account] {
        accounts().filter { (try? accountInfo($0).isRegistered) == true }
    }

    /// Sends REGISTER with expires 0 for the account. Wraps `pjsua_acc_set_registration`.
    static func unregister(_ slot: pjsua_acc_id) throws(PJSUAError) {
        try PJ.check(pjsua_acc_set_registration(slot, 0), "pjsua_acc_set_registration")
    }

    static func hangupAll() {
        pjsua_call_hangup_all()
    }

    /// Slots of calls pjsua still holds.
    static func activeCallCount() -> Int {
        Int(pjsua_call_get_count())
    }

    // MARK: Sound device

    static func attachSoundDevice(_ device: SoundDevice) throws(PJSUAError) {
        switch device {
        case .null:
            try PJ.check(pjsua_set_null_snd_dev(), "pjsua_set_null_snd_dev")
        case .systemDefault:
            try PJ.check(
                pjsua_set_snd_dev(PJMEDIA_AUD_DEFAULT_CAPTURE_DEV, PJMEDIA_AUD_DEFAULT_PLAYBACK_DEV),
                "pjsua_set_snd_dev")
        }
    }

    static func detachSoundDevice() {
        _ = pjsua_set_no_snd_dev()
    }

    // MARK: Transports and accounts

    static func transportInfo(_ transport: Transport) throws(PJSUAError) -> TransportInfo {
        var info = pjsua_transport_info()
        try PJ.check(pjsua_transport_get_info(transport.id, &info), "pjsua_transport_get_info")
        return TransportInfo(
            transport: transport, type: TransportType(native: info.type),
            host: PJ.string(info.local_name.host), port: UInt16(truncatingIfNeeded: info.local_name.port))
    }

    /// An account for calls straight to and from this transport's address, with no registrar
    /// (like `pjsua_acc_add_local`, but with the engine's RTP port range).
    static func addLocalAccount(
        transport: Transport, isDefault: Bool, rtpPorts: ClosedRange<UInt16>, rtpAddress: String?
    ) throws(PJSUAError) -> Account {
        let info = try transportInfo(transport)
        let host = info.host.contains(":") ? "[\(info.host)]" : info.host
        var uri = "<sip:\(host):\(info.port)"
        switch info.type {
        case .tcp, .tcp6: uri += ";transport=tcp"
        case .udp, .udp6: break
        }
        uri += ">"
        let scope = StringScope()
        var config = pjsua_acc_config()
        pjsua_acc_config_default(&config)
        config.id = scope.pj(uri)
        config.transport_id = transport.id
        config.priority -= 1
        applyRTP(&config, ports: rtpPorts, address: rtpAddress, scope: scope)
        var slot = pjsua_acc_id(cpj_invalid_id())
        try PJ.check(pjsua_acc_add(&config, isDefault ? 1 : 0, &slot), "pjsua_acc_add")
        return Handles.account(slot)
    }

    static func applyRTP(
        _ config: inout pjsua_acc_config, ports: ClosedRange<UInt16>, address: String?, scope: StringScope
    ) {
        config.rtp_cfg.port = UInt32(ports.lowerBound)
        config.rtp_cfg.port_range = UInt32(ports.upperBound - ports.lowerBound)
        if let address {
            config.rtp_cfg.bound_addr = scope.pj(address)
            config.rtp_cfg.public_addr = scope.pj(address)
            // An IPv6 RTP address needs IPv6 media sockets and SDP.
            if address.contains(":") { config.ipv6_media_use = PJSUA_IPV6_ENABLED }
        }
    }

    static func removeAccount(_ account: Account) throws(PJSUAError) {
        try PJ.check(pjsua_acc_del(account.slot), "pjsua_acc_del")
    }

    // MARK: Calls

    /// Whether `uri` is a SIP or SIPS URI pjsip can parse (`pjsua_verify_sip_url`).
    static func isValidSIPURI(_ uri: String) -> Bool {
        uri.withCString { pjsua_verify_sip_url($0) } == cpj_success()
    }

    static func makeCall(to uri: String, from account: pjsua_acc_id) throws(PJSUAError) -> Call {
        var setting = pjsua_call_setting()
        pjsua_call_setting_default(&setting)
        setting.aud_cnt = 1
        setting.vid_cnt = 0
        let generation = nextGeneration()
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
            if pjsua_call_get_stream_info(slot, UInt32(audio.index), &stream) == cpj_success() {
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
        try PJ.check(pjsua_call_get_stream_stat(slot, UInt32(mediaIndex), raw), "pjsua_call_get_stream_stat")
        let rtcp = raw.pointee.rtcp
        return StreamStatistics(
            packetsSent: UInt64(rtcp.tx.pkt), bytesSent: UInt64(rtcp.tx.bytes),
            packetsReceived: UInt64(rtcp.rx.pkt), bytesReceived: UInt64(rtcp.rx.bytes),
            packetsLost: UInt64(rtcp.rx.loss),
            jitter: .microseconds(Int64(rtcp.rx.jitter.last)),
            roundTripTime: .microseconds(Int64(rtcp.rtt.last)))
    }

    // MARK: Media links

    /// Connects each active or remote-hold audio stream of `call` to the sound device port
    /// both ways (as pjsua's own app does) and re-applies the players and recorders kept in
    /// the media plan. Idempotent: pjsua ignores a link that already exists.
    static func applyMediaLinks(bridge: EngineBridge, call: Call, info: NativeCallInfo) {
        let (sources, sinks) = bridge.media.withLock {
            ($0.sources[call.generation] ?? [], $0.sinks[call.generation] ?? [])
        }
        for slot in info.audioConferenceSlots {
            if bridge.linksSoundDevice {
                pjsua_conf_connect(slot, 0)
                pjsua_conf_connect(0, slot)
            }
            for source in sources { pjsua_conf_connect(source, slot) }
            for sink in sinks { pjsua_conf_connect(slot, sink) }
        }
    }

    static func createPlayer(file: String, loop: Bool) throws(PJSUAError) -> (pjsua_player_id, pjsua_conf_port_id) {
        var id = pjsua_player_id(cpj_invalid_id())
        let status = PJ.withPJString(file) { name in
            var name = name
            return pjsua_player_create(&name, loop ? 0 : UInt32(PJMEDIA_FILE_NO_LOOP.rawValue), &id)
        }
        try PJ.check(status, "pjsua_player_create", subject: file)
        return (id, pjsua_player_get_conf_port(id))
    }

    static func createRecorder(file: String) throws(PJSUAError) -> (pjsua_recorder_id, pjsua_conf_port_id) {
        var id = pjsua_recorder_id(cpj_invalid_id())
        let status = PJ.withPJString(file) { name in
            var name = name
            return pjsua_recorder_create(&name, 0, nil, -1, 0, &id)
        }
        try PJ.check(status, "pjsua_recorder_create", subject: file)
        return (id, pjsua_recorder_get_conf_port(id))
    }

    static func destroyMediaPorts(players: [pjsua_player_id], recorders: [pjsua_recorder_id]) {
        for id in players { pjsua_player_destroy(id) }
        for id in recorders { pjsua_recorder_destroy(id) }
    }
}

// MARK: - Enum mappings

extension TransportType {
    var native: pjsip_transport_type_e {
        switch self {
        case .udp: PJSIP_TRANSPORT_UDP
        case .tcp: PJSIP_TRANSPORT_TCP
        case .udp6: PJSIP_TRANSPORT_UDP6
        case .tcp6: PJSIP_TRANSPORT_TCP6
        }
    }

    init(native: pjsip_transport_type_e) {
        switch native {
        case PJSIP_TRANSPORT_TCP: self = .tcp
        case PJSIP_TRANSPORT_UDP6: self = .udp6
        case PJSIP_TRANSPORT_TCP6: self = .tcp6
        default: self = .udp
        }
    }
}

extension CallState {
    init(native: pjsip_inv_state) {
        switch native {
        case PJSIP_INV_STATE_CALLING: self = .calling
        case PJSIP_INV_STATE_INCOMING: self = .incoming
        case PJSIP_INV_STATE_EARLY: self = .early
        case PJSIP_INV_STATE_CONNECTING: self = .connecting
        case PJSIP_INV_STATE_CONFIRMED: self = .confirmed
        case PJSIP_INV_STATE_DISCONNECTED: self = .disconnected
        default: self = .null
        }
    }
}

extension MediaStatus {
    init(native: pjsua_call_media_status) {
        switch native {
        case PJSUA_CALL_MEDIA_ACTIVE: self = .active
        case PJSUA_CALL_MEDIA_LOCAL_HOLD: self = .localHold
        case PJSUA_CALL_MEDIA_REMOTE_HOLD: self = .remoteHold
        case PJSUA_CALL_MEDIA_ERROR: self = .error
        default: self = .none
        }
    }
}

extension MediaDirection {
    init(native: pjmedia_dir) {
        switch native {
        case PJMEDIA_DIR_ENCODING: self = .send
        case PJMEDIA_DIR_DECODING: self = .receive
        case PJMEDIA_DIR_ENCODING_DECODING: self = .sendReceive
        default: self = .none
        }
    }
}

extension MediaType {
    init(native: pjmedia_type) {
        switch native {
        case PJMEDIA_TYPE_AUDIO: self = .audio
        case PJMEDIA_TYPE_VIDEO: self = .video
        default: self = .other
        }
    }
}

extension Duration {
    init(_ value: pj_time_val) {
        self = .seconds(Int64(value.sec)) + .milliseconds(Int64(value.msec))
    }
}

extension Native {
    static func liveSlot(_ call: Call) -> Int32? { Handles.liveSlot(call) }
    static func liveSlot(_ account: Account) -> Int32? { Handles.liveSlot(account) }

    /// The pjproject build's call limit (`PJSUA_MAX_CALLS`).
    static var buildCallLimit: Int { Int(cpj_max_calls()) }

    /// Conference slots of `call`'s audio streams, read on the engine thread.
    static func connectNow(bridge: EngineBridge, call: Call) {
        guard let slot = Handles.liveSlot(call), let info = readCallInfo(slot, call: call) else { return }
        applyMediaLinks(bridge: bridge, call: call, info: info)
    }

    /// Attaches a new player to `call`'s transmitted audio and keeps the link across
    /// media changes; destroyed when the call ends.
    static func attachPlayer(bridge: EngineBridge, call: Call, file: String, loop: Bool) throws(PJSUAError) -> Player {
        let (id, port) = try createPlayer(file: file, loop: loop)
        let player = Player(id: id, generation: nextGeneration(), call: call)
        bridge.media.withLock {
            $0.sources[call.generation, default: []].append(port)
            $0.players[call.generation, default: []].append(player)
        }
        connectNow(bridge: bridge, call: call)
        return player
    }

    /// Attaches a new recorder to `call`'s received audio; closed when the call ends.
    static func attachRecorder(bridge: EngineBridge, call: Call, file: String) throws(PJSUAError) -> Recorder {
        let (id, port) = try createRecorder(file: file)
        let recorder = Recorder(id: id, generation: nextGeneration(), call: call)
        bridge.media.withLock {
            $0.sinks[call.generation, default: []].append(port)
            $0.recorders[call.generation, default: []].append(recorder)
        }
        connectNow(bridge: bridge, call: call)
        return recorder
    }

    /// Detaches and destroys a player or recorder the app no longer wants. Returns `false`
    /// when it is not (or no longer) attached.
    static func detach(bridge: EngineBridge, player: Player?, recorder: Recorder?) -> Bool {
        let found: Bool = bridge.media.withLock { plan in
            if let player, var ids = plan.players[player.call.generation], let i = ids.firstIndex(of: player) {
                ids.remove(at: i)
                plan.players[player.call.generation] = ids
                let port = pjsua_player_get_conf_port(player.id)
                plan.sources[player.call.generation]?.removeAll { $0 == port }
                return true
            }
            if let recorder, var ids = plan.recorders[recorder.call.generation], let i = ids.firstIndex(of: recorder) {
                ids.remove(at: i)
                plan.recorders[recorder.call.generation] = ids
                let port = pjsua_recorder_get_conf_port(recorder.id)
                plan.sinks[recorder.call.generation]?.removeAll { $0 == port }
                return true
            }
            return false
        }
        guard found else { return false }
        destroyMediaPorts(players: player.map { [$0.id] } ?? [], recorders: recorder.map { [$0.id] } ?? [])
        return true
    }

    /// Releases media owned by a call that has already ended (the callback may have run
    /// before the resource was registered).
    static func releaseMedia(bridge: EngineBridge, of call: Call) {
        let owned = bridge.media.withLock { $0.removeAll(for: call.generation) }
        destroyMediaPorts(players: owned.players, recorders: owned.recorders)
    }
}

// MARK: - Accounts

extension Native {
    static var maxCredentials: Int { Int(cpj_acc_max_credentials()) }
    static var maxProxies: Int { Int(cpj_acc_max_proxies()) }

    /// Adds an account from a full configuration. Wraps `pjsua_acc_add`, which copies the
    /// configuration (strings, credentials and headers) before returning.
    static func addAccount(
        _ account: AccountConfiguration, rtpPorts: ClosedRange<UInt16>, rtpAddress: String?
    ) throws(PJSUAError) -> Account {
        let scope = StringScope()
        var config = pjsua_acc_config()
        pjsua_acc_config_default(&config)
        config.id = scope.pj(account.identity)
        if let registrar = account.registrar { config.reg_uri = scope.pj(registrar) }
        config.cred_count = UInt32(account.credentials.count)
        for (index, credential) in account.credentials.enumerated() {
            guard let info = cpj_acc_credential(&config, UInt32(index)) else { break }
            info.pointee.realm = scope.pj(credential.realm)
            info.pointee.scheme = scope.pj("digest")
            info.pointee.username = scope.pj(credential.username)
            switch credential.secret {
            case .password(let password):
                info.pointee.data_type = Int32(cpj_cred_plain_password())
                info.pointee.data = scope.pj(password)
            case .ha1(let ha1):
                info.pointee.data_type = Int32(cpj_cred_digest())
                info.pointee.data = scope.pj(ha1)
            }
        }
        config.proxy_cnt = UInt32(account.outboundProxies.count)
        for (index, proxy) in account.outboundProxies.enumerated() {
            cpj_acc_set_proxy(&config, UInt32(index), scope.pj(proxy))
        }
        if let transport = account.transport { config.transport_id = transport.id }
        config.reg_timeout = UInt32(account.registrationExpiry.components.seconds)
        config.reg_retry_interval = UInt32(account.retryInterval.components.seconds)
        config.register_on_acc_add = account.registersOnAdd ? 1 : 0
        if !account.contactParameters.isEmpty { config.contact_params = scope.pj(account.contactParameters) }
        applyRTP(&config, ports: rtpPorts, address: rtpAddress, scope: scope)

        var pool: UnsafeMutablePointer<pj_pool_t>?
        if !account.registerHeaders.isEmpty {
            pool = pjsua_pool_create("acc-headers", 512, 512)
            guard let pool else { throw PJ.error(cpj_status_enomem(), "pjsua_pool_create") }
            for header in account.registerHeaders {
                cpj_acc_add_register_header(&config, pool, scope.pj(header.name), scope.pj(header.value))
            }
        }
        defer { if let pool { pj_pool_release(pool) } }
        var slot = pjsua_acc_id(cpj_invalid_id())
        try PJ.check(pjsua_acc_add(&config, account.isDefault ? 1 : 0, &slot), "pjsua_acc_add")
        return Handles.account(slot)
    }

    static func accountInfo(_ account: Account) throws(PJSUAError) -> AccountInfo {
        var info = pjsua_acc_info()
        try PJ.check(pjsua_acc_get_info(account.slot, &info), "pjsua_acc_get_info")
        let code = Int(info.status.rawValue)
        let registered = info.has_registration != 0 && info.expires > 0 && code / 100 == 2
        return AccountInfo(
            account: account, identity: PJ.string(info.acc_uri), isDefault: info.is_default != 0,
            hasRegistration: info.has_registration != 0, isRegistered: registered,
            statusCode: code, reason: PJ.string(info.status_text),
            expiresIn: registered ? .seconds(Int64(info.expires)) : .zero)
    }

    static func accounts() -> [Account] {
        var slots = [pjsua_acc_id](repeating: 0, count: Int(cpj_max_accounts()))
        var count = UInt32(slots.count)
        guard pjsua_enum_accs(&slots, &count) == cpj_success() else { return [] }
        return slots.prefix(Int(count)).map { Handles.account($0) }
    }

    /// Starts registering (`renew`) or unregistering. Wraps `pjsua_acc_set_registration`.
    static func setRegistration(_ slot: pjsua_acc_id, renew: Bool) throws(PJSUAError) {
        try PJ.check(pjsua_acc_set_registration(slot, renew ? 1 : 0), "pjsua_acc_set_registration")
    }
}
