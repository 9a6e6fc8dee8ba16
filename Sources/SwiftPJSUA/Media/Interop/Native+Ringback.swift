import CPJSUAShim

/// Local ringback (``MediaConfiguration/localRingback``): which outgoing calls hear it, and
/// the one looping tone generator they share on the sound device (slot 0).
struct Ringback {
    /// Outgoing calls whose early dialog got 180 Ringing.
    var alerted: Set<Call> = []
    /// Calls that hear ringback now: alerted, still early, no active audio (no early media).
    var ringing: Set<Call> = []
    /// The shared generator, on the bridge while `ringing` is not empty.
    var port: TonePort?
    /// A reconcile job is queued on the engine thread.
    var scheduled = false
}

extension Native {
    // MARK: Local ringback

    /// A state change of `call` (from its callback, on pjsua's threads): an outgoing call in
    /// EARLY reads its media too (a 183 with SDP brings early media before or after the
    /// state callback).
    static func updateRingback(bridge: EngineBridge, call: Call, slot: pjsua_call_id, state: NativeCallState) {
        guard bridge.ringbackTones != nil, state.role == .caller else { return }
        let media = state.state == .early ? readCallInfo(slot, call: call)?.media ?? [] : []
        updateRingback(bridge: bridge, call: call, state: state.state, statusCode: state.statusCode, media: media)
    }

    /// A media change of `call` (from its callback): early media starts or stops.
    static func updateRingback(bridge: EngineBridge, call: Call, info: NativeCallInfo) {
        guard bridge.ringbackTones != nil, info.info.role == .caller else { return }
        updateRingback(
            bridge: bridge, call: call, state: info.state, statusCode: info.statusCode, media: info.media)
    }

    private static func updateRingback(
        bridge: EngineBridge, call: Call, state: CallState, statusCode: Int, media: [MediaStream]
    ) {
        let earlyMedia = media.contains { $0.type == .audio && $0.status == .active }
        let post = bridge.media.withLock { media -> Bool in
            if state == .early, statusCode == 180 { media.ringback.alerted.insert(call) }
            if state != .early { media.ringback.alerted.remove(call) }
            let rings = state == .early && media.ringback.alerted.contains(call) && !earlyMedia
            let changed =
                rings ? media.ringback.ringing.insert(call).inserted : media.ringback.ringing.remove(call) != nil
            guard changed, !media.ringback.scheduled else { return false }
            media.ringback.scheduled = true
            return true
        }
        if post { bridge.executor.post { reconcileRingback(bridge: bridge) } }
    }

    /// Starts the shared generator when some call rings and none plays, takes it off when no
    /// call rings. Engine thread; idempotent (a change while it runs queues it again).
    static func reconcileRingback(bridge: EngineBridge) {
        let (wanted, playing) = bridge.media.withLock { media in
            media.ringback.scheduled = false
            return (!media.ringback.ringing.isEmpty, media.ringback.port)
        }
        // pjsua may have been destroyed (and restarted) meanwhile; shutdown took the
        // generator off with every other port of ours.
        guard EngineBridge.active() === bridge, !bridge.isDestroying.withLock({ $0 }) else { return }
        if wanted, playing == nil, let tones = bridge.ringbackTones {
            // A bridge without a free slot leaves the caller without ringback, not the call
            // without audio: the next state change tries again.
            guard let player = try? attachTones(bridge: bridge, call: nil, tones: tones, loop: true) else { return }
            let stale = bridge.media.withLock { media -> Bool in
                media.ringback.port = player.port
                return media.ringback.ringing.isEmpty && !media.ringback.scheduled
            }
            if stale { reconcileRingback(bridge: bridge) }
        } else if !wanted, let playing {
            bridge.media.withLock { $0.ringback.port = nil }
            detach(bridge: bridge, port: playing, of: nil)
        }
    }

    /// Forgets ringing calls that are no longer live (an end pjsua never reported, which
    /// the lost-call sweep synthesized), so their ringback cannot play on. Engine thread.
    static func pruneRingback(bridge: EngineBridge) {
        let hub = bridge.hub
        let post = bridge.media.withLock { media -> Bool in
            media.ringback.alerted = media.ringback.alerted.filter { !hub.hasEnded($0) }
            let before = media.ringback.ringing.count
            media.ringback.ringing = media.ringback.ringing.filter { !hub.hasEnded($0) }
            let idle = media.ringback.ringing.isEmpty && media.ringback.port != nil
            return media.ringback.ringing.count != before || idle
        }
        if post { reconcileRingback(bridge: bridge) }
    }
}
