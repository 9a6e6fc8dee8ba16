import CPJSUAShim

/// Conference-bridge links the engine keeps for each call and re-applies on every
/// media-state change (a re-INVITE can give the call a new conference slot).
struct MediaPlan {
    /// Ports that feed a call's transmitted audio (players), by call generation.
    var sources: [UInt64: [pjsua_conf_port_id]] = [:]
    /// Ports that receive a call's received audio (recorders), by call generation.
    var sinks: [UInt64: [pjsua_conf_port_id]] = [:]
    /// Players and recorders to destroy when the call ends, by call generation.
    var players: [UInt64: [Player]] = [:]
    var recorders: [UInt64: [Recorder]] = [:]
    /// Our bridge ports (frame streams and writers, tones) to take off when the call ends.
    var bridgePorts: [UInt64: [any BridgePort]] = [:]
    /// Calls whose transmitted audio is muted (conference tx level 0), by generation.
    var muted: Set<UInt64> = []
    /// Conference links between calls: audio received on `from` is sent to `to`.
    var callLinks: Set<CallLink> = []
    /// Each call's audio conference slots as last reported, so a link can reach the other
    /// call without taking that call's lock.
    var conferenceSlots: [UInt64: [pjsua_conf_port_id]] = [:]

    struct CallLink: Hashable {
        var from: UInt64
        var to: UInt64
    }

    mutating func removeAll(
        for generation: UInt64
    ) -> (players: [pjsua_player_id], recorders: [pjsua_recorder_id], frames: [any BridgePort]) {
        sources[generation] = nil
        sinks[generation] = nil
        muted.remove(generation)
        conferenceSlots[generation] = nil
        callLinks = callLinks.filter { $0.from != generation && $0.to != generation }
        let owned = (
            (players[generation] ?? []).map(\.id), (recorders[generation] ?? []).map(\.id),
            bridgePorts[generation] ?? []
        )
        players[generation] = nil
        recorders[generation] = nil
        bridgePorts[generation] = nil
        return owned
    }
}

extension Native {
    // MARK: Media links

    /// Connects each active or remote-hold audio stream of `call` to the sound device port
    /// both ways (as pjsua's own app does) and re-applies the players and recorders kept in
    /// the media plan. Idempotent: pjsua ignores a link that already exists.
    static func applyMediaLinks(bridge: EngineBridge, call: Call, info: NativeCallInfo) {
        let generation = call.generation
        let own = info.audioConferenceSlots
        let (sources, sinks, muted, outgoing, incoming) = bridge.media.withLock { media in
            media.plan.conferenceSlots[generation] = own
            let plan = media.plan
            let outgoing = plan.callLinks.filter { $0.from == generation }.flatMap { plan.conferenceSlots[$0.to] ?? [] }
            let incoming = plan.callLinks.filter { $0.to == generation }.flatMap { plan.conferenceSlots[$0.from] ?? [] }
            return (
                plan.sources[generation] ?? [], plan.sinks[generation] ?? [], plan.muted.contains(generation),
                outgoing, incoming
            )
        }
        for slot in own {
            if bridge.linksSoundDevice {
                pjsua_conf_connect(slot, 0)
                pjsua_conf_connect(0, slot)
            }
            for source in sources { pjsua_conf_connect(source, slot) }
            for sink in sinks { pjsua_conf_connect(slot, sink) }
            for other in outgoing { pjsua_conf_connect(slot, other) }
            for other in incoming { pjsua_conf_connect(other, slot) }
            // The level of what the bridge transmits to this port: 0 sends silence.
            pjsua_conf_adjust_tx_level(slot, muted ? 0 : 1)
        }
    }

    /// Mutes or unmutes what `call` transmits and keeps the choice across media changes.
    static func setMuted(bridge: EngineBridge, call: Call, _ muted: Bool) {
        bridge.media.withLock { media in
            if muted { media.plan.muted.insert(call.generation) } else { media.plan.muted.remove(call.generation) }
        }
        connectNow(bridge: bridge, call: call)
    }

    /// Links every pair of `calls` both ways (a local conference) and keeps the links.
    static func join(bridge: EngineBridge, calls: [Call]) {
        bridge.media.withLock { media in
            for a in calls {
                for b in calls where a != b {
                    media.plan.callLinks.insert(.init(from: a.generation, to: b.generation))
                }
            }
        }
        for call in calls { connectNow(bridge: bridge, call: call) }
    }

    /// Removes `call` from every conference link and disconnects its slots from the others'.
    static func leave(bridge: EngineBridge, call: Call) {
        let (own, others) = bridge.media.withLock { media -> ([pjsua_conf_port_id], [pjsua_conf_port_id]) in
            let involved = media.plan.callLinks.filter { $0.from == call.generation || $0.to == call.generation }
            media.plan.callLinks.subtract(involved)
            let peers = Set(involved.map { $0.from == call.generation ? $0.to : $0.from })
            let slots = media.plan.conferenceSlots
            return (slots[call.generation] ?? [], peers.flatMap { slots[$0] ?? [] })
        }
        for slot in own {
            for other in others {
                pjsua_conf_disconnect(slot, other)
                pjsua_conf_disconnect(other, slot)
            }
        }
    }

    /// Links one newly attached port to `call`'s audio slots, as a source of what the call
    /// sends or a sink of what it receives, without re-applying the call's other links:
    /// attaching N ports costs N connects, not N² (each a queued operation on 2.15+'s
    /// bridge). The media plan already holds the port, so later media changes re-link it.
    static func connect(bridge: EngineBridge, call: Call, source: pjsua_conf_port_id?, sink: pjsua_conf_port_id?) {
        guard let slot = Handles.liveSlot(call), let info = readCallInfo(slot, call: call) else { return }
        for own in info.audioConferenceSlots {
            if let source { pjsua_conf_connect(source, own) }
            if let sink { pjsua_conf_connect(own, sink) }
        }
    }

    /// Conference slots of `call`'s audio streams, read on the engine thread.
    static func connectNow(bridge: EngineBridge, call: Call) {
        guard let slot = Handles.liveSlot(call), let info = readCallInfo(slot, call: call) else { return }
        applyMediaLinks(bridge: bridge, call: call, info: info)
    }
}
