import CPJSUAShim

extension Native {
    // MARK: Players and recorders

    static func createPlayer(file: String, loop: Bool) throws(PJSUAError) -> (pjsua_player_id, pjsua_conf_port_id) {
        // pjmedia asserts on a full bridge before it returns an error.
        if cpj_conf_is_full() != 0 { throw PJ.error(cpj_status_etoomany(), "pjsua_player_create") }
        var id = pjsua_player_id(cpj_invalid_id())
        let status = PJ.withPJString(file) { name in
            var name = name
            return pjsua_player_create(&name, loop ? 0 : UInt32(PJMEDIA_FILE_NO_LOOP.rawValue), &id)
        }
        try PJ.check(status, "pjsua_player_create", subject: file)
        return (id, pjsua_player_get_conf_port(id))
    }

    static func createRecorder(file: String) throws(PJSUAError) -> (pjsua_recorder_id, pjsua_conf_port_id) {
        if cpj_conf_is_full() != 0 { throw PJ.error(cpj_status_etoomany(), "pjsua_recorder_create") }
        var id = pjsua_recorder_id(cpj_invalid_id())
        let status = PJ.withPJString(file) { name in
            var name = name
            return pjsua_recorder_create(&name, 0, nil, -1, 0, &id)
        }
        try PJ.check(status, "pjsua_recorder_create", subject: file)
        return (id, pjsua_recorder_get_conf_port(id))
    }

    /// How long destroying a player or recorder waits for pjmedia to close its port.
    static let mediaPortCloseTimeout: Duration = .seconds(1)

    /// Destroys players and recorders and returns once pjmedia has closed each one (its WAV
    /// file complete on disk), or `false` when one was still open after
    /// ``mediaPortCloseTimeout``. From pjproject 2.15 on the conference bridge removes ports
    /// on its clock thread; this blocks the calling (engine) thread for that, one bridge
    /// tick (20 ms) for all of them together, running the ticks itself when no sound device
    /// clocks the bridge.
    @discardableResult
    static func destroyMediaPorts(players: [pjsua_player_id], recorders: [pjsua_recorder_id]) -> Bool {
        let timeout = UInt32(mediaPortCloseTimeout.milliseconds)
        return cpj_media_ports_destroy_and_wait(
            players, UInt32(players.count), recorders, UInt32(recorders.count), timeout) == 0
    }

    /// Attaches a new player to `call`'s transmitted audio and keeps the link across
    /// media changes; destroyed when the call ends.
    static func attachPlayer(bridge: EngineBridge, call: Call, file: String, loop: Bool) throws(PJSUAError) -> Player {
        let (id, port) = try createPlayer(file: file, loop: loop)
        let player = Player(id: id, generation: nextGeneration(), call: call)
        if !loop {
            let token = UnsafeMutableRawPointer(bitPattern: UInt(player.generation))
            let status = cpj_player_set_eof_callback(id, token) { _, token in
                onPlayerEndOfFile(generation: UInt64(UInt(bitPattern: token)))
            }
            if status != cpj_success() {
                _ = pjsua_player_destroy(id)
                throw PJ.error(status, "pjmedia_wav_player_set_eof_cb2")
            }
        }
        bridge.media.withLock {
            $0.plan.sources[call.generation, default: []].append(port)
            $0.plan.players[call.generation, default: []].append(player)
        }
        connect(bridge: bridge, call: call, source: port, sink: nil)
        return player
    }

    /// Attaches a new recorder to `call`'s received audio; closed when the call ends.
    static func attachRecorder(bridge: EngineBridge, call: Call, file: String) throws(PJSUAError) -> Recorder {
        let (id, port) = try createRecorder(file: file)
        let recorder = Recorder(id: id, generation: nextGeneration(), call: call)
        bridge.media.withLock {
            $0.plan.sinks[call.generation, default: []].append(port)
            $0.plan.recorders[call.generation, default: []].append(recorder)
        }
        connect(bridge: bridge, call: call, source: nil, sink: port)
        return recorder
    }

    /// Detaches and destroys a player or recorder the app no longer wants. Returns `false`
    /// when it is not (or no longer) attached; throws ``PJSUAError/Code/timedOut`` when
    /// pjmedia had not closed it after ``mediaPortCloseTimeout`` (it is detached either way).
    static func detach(bridge: EngineBridge, player: Player?, recorder: Recorder?) throws(PJSUAError) -> Bool {
        let found: Bool = bridge.media.withLock { media in
            if let player, var ids = media.plan.players[player.call.generation], let i = ids.firstIndex(of: player) {
                ids.remove(at: i)
                media.plan.players[player.call.generation] = ids
                let port = pjsua_player_get_conf_port(player.id)
                media.plan.sources[player.call.generation]?.removeAll { $0 == port }
                return true
            }
            if let recorder, var ids = media.plan.recorders[recorder.call.generation],
                let i = ids.firstIndex(of: recorder)
            {
                ids.remove(at: i)
                media.plan.recorders[recorder.call.generation] = ids
                let port = pjsua_recorder_get_conf_port(recorder.id)
                media.plan.sinks[recorder.call.generation]?.removeAll { $0 == port }
                return true
            }
            return false
        }
        guard found else { return false }
        guard destroyMediaPorts(players: player.map { [$0.id] } ?? [], recorders: recorder.map { [$0.id] } ?? [])
        else {
            throw PJ.error(
                cpj_status_etimedout(), recorder != nil ? "pjsua_recorder_destroy" : "pjsua_player_destroy")
        }
        return true
    }

    /// Releases media owned by a call that has already ended (the callback may have run
    /// before the resource was registered).
    static func releaseMedia(bridge: EngineBridge, of call: Call) {
        let owned = bridge.media.withLock { $0.plan.removeAll(for: call.generation) }
        destroyMediaPorts(players: owned.players, recorders: owned.recorders)
        removeBridgePorts(bridge: bridge, owned.frames)
    }
}

/// A non-looping player reached the end of its file (on pjmedia's event thread): reported
/// if the player is still attached to a live call.
private func onPlayerEndOfFile(generation: UInt64) {
    guard let bridge = EngineBridge.active() else { return }
    let player = bridge.media.withLock { media in
        media.plan.players.values.lazy.flatMap { $0 }.first { $0.generation == generation }
    }
    guard let player else { return }
    bridge.hub.emit(.playbackFinished(PlaybackFinished(player: player)))
}
