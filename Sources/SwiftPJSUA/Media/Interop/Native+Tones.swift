import CPJSUAShim

/// A pjmedia tone generator on the bridge (`cpj_tonegen_start` in the shim).
/// `@unchecked Sendable`: the pointers are only used on the engine thread: by
/// `removeFromBridge`, once (guarded by `removed`), and by `hasFinished` before that.
final class TonePort: BridgePort, @unchecked Sendable {
    let slot: pjsua_conf_port_id
    /// The call it plays into; `nil` for the sound device.
    let call: Call?
    /// Plays its sequence once (not in a loop).
    let once: Bool
    private let port: UnsafeMutablePointer<pjmedia_port>
    private let pool: UnsafeMutablePointer<pj_pool_t>
    private let removed = Protected(false)

    fileprivate init(
        slot: pjsua_conf_port_id, call: Call?, once: Bool, port: UnsafeMutablePointer<pjmedia_port>,
        pool: UnsafeMutablePointer<pj_pool_t>
    ) {
        self.slot = slot
        self.call = call
        self.once = once
        self.port = port
        self.pool = pool
    }

    /// Played once and done: nothing left to play (`pjmedia_tonegen_is_busy`, a read of
    /// the count the clock thread sets to 0 at the end). Engine thread, while on the bridge.
    var hasFinished: Bool {
        once && !removed.withLock({ $0 }) && pjmedia_tonegen_is_busy(port) == 0
    }

    @discardableResult
    func removeFromBridge() -> Bool {
        guard !removed.set() else { return false }
        cpj_tonegen_remove(port, pool, slot)
        return true
    }
}

extension Native {
    /// The most tones one generator plays (`PJMEDIA_TONEGEN_MAX_DIGITS`).
    static var maxTones: Int { Int(cpj_tonegen_max_tones()) }

    /// Starts a tone generator playing `tones` and links it to `call`'s transmitted audio
    /// (kept across media changes, removed when the call ends), or to the sound device
    /// (slot 0) when `call` is `nil`.
    static func attachTones(
        bridge: EngineBridge, call: Call?, tones: [Tone], loop: Bool
    ) throws(PJSUAError) -> TonePlayer {
        var descriptions = tones.map { tone in
            var description = pjmedia_tone_desc()
            description.freq1 = Int16(tone.frequency)
            description.freq2 = Int16(tone.secondFrequency ?? 0)
            description.on_msec = Int16(tone.duration.milliseconds)
            description.off_msec = Int16(tone.pause.milliseconds)
            description.volume = tone.volume.map { Int16(max(1, min(32767, ($0 * 32767).rounded()))) } ?? 0
            return description
        }
        var port: UnsafeMutablePointer<pjmedia_port>?
        var pool: UnsafeMutablePointer<pj_pool_t>?
        var slot = pjsua_conf_port_id(cpj_invalid_id())
        var failed: UnsafePointer<CChar>?
        let status = cpj_tonegen_start(
            &descriptions, UInt32(descriptions.count), loop ? 1 : 0, &port, &pool, &slot, &failed)
        guard status == cpj_success(), let port, let pool else {
            throw PJ.error(status, failed.map { String(cString: $0) } ?? "pjmedia_tonegen_create")
        }
        let tonePort = TonePort(slot: slot, call: call, once: !loop, port: port, pool: pool)
        bridge.media.withLock { media in
            media.livePorts[ObjectIdentifier(tonePort)] = tonePort
            if let call {
                media.plan.sources[call.generation, default: []].append(slot)
                media.plan.bridgePorts[call.generation, default: []].append(tonePort)
            }
        }
        if let call {
            connect(bridge: bridge, call: call, source: slot, sink: nil)
        } else {
            pjsua_conf_connect(slot, 0)
        }
        return TonePlayer(generation: nextGeneration(), call: call, port: tonePort)
    }
}

extension Native {
    /// Takes tone generators that played their sequence once and are done off the bridge,
    /// so that one-shot tones (a beep per key press) do not hold conference slots, which
    /// every call's audio needs too, until their call ends. Engine thread.
    static func removeFinishedTones(bridge: EngineBridge) {
        let finished = bridge.media.withLock { media in
            media.livePorts.values.compactMap { $0 as? TonePort }.filter(\.once)
        }.filter(\.hasFinished)
        for port in finished { detach(bridge: bridge, port: port, of: port.call) }
    }
}
