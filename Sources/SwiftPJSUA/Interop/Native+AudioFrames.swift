import CPJSIP
import Synchronization

/// A port the engine added to pjsua's conference bridge (frame ports, tone generators),
/// taken off the bridge when its call ends, when stopped, or at shutdown.
protocol BridgePort: AnyObject, Sendable {
    /// The conference slot, fixed while the port is on the bridge.
    var slot: pjsua_conf_port_id { get }
    /// Takes the port off the bridge; later calls do nothing. Engine thread only, while
    /// pjsua runs. Returns whether this call removed it.
    func removeFromBridge() -> Bool
}

/// One of the engine's frame ports (`cpj_frame_port` in the shim) on pjsua's conference
/// bridge, linked to one call: it receives what the call receives, or sends what the app
/// queues, or both. The C side does the real-time part on pjmedia's clock thread; this
/// class reads and writes its rings from any thread and removes it from the bridge once.
///
/// `@unchecked Sendable`: the pointer is only passed to the shim's atomic ring functions
/// (one reader and one writer at a time, which the public types guarantee) and to
/// `cpj_frame_port_remove` (once, on the engine thread, guarded by `removed`).
final class FramePort: BridgePort, @unchecked Sendable {
    let call: Call
    let format: AudioFrameFormat
    /// Which way audio flows through the port.
    let receives: Bool
    let sends: Bool
    private let port: UnsafeMutablePointer<cpj_frame_port>
    /// The port's conference slot, fixed while it is on the bridge.
    let slot: pjsua_conf_port_id
    private let removed = Atomic<Bool>(false)

    fileprivate init(
        call: Call, format: AudioFrameFormat, receives: Bool, sends: Bool,
        port: UnsafeMutablePointer<cpj_frame_port>, slot: pjsua_conf_port_id
    ) {
        self.call = call
        self.format = format
        self.receives = receives
        self.sends = sends
        self.port = port
        self.slot = slot
    }

    deinit { cpj_frame_port_release(port) }

    /// The next received frame's samples and sequence number; `.empty` when none is
    /// waiting, `.ended` once the port is off the bridge and drained.
    enum Read {
        case frame(sequence: UInt64, samples: [Int16])
        case empty
        case ended
    }

    func read() -> Read {
        let capacity = format.samplesPerFrame
        var sequence: UInt64 = 0
        var count: Int32 = 0
        let samples = [Int16](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            count = cpj_frame_port_read(port, buffer.baseAddress, UInt32(capacity), &sequence)
            initialized = max(0, Int(count))
        }
        switch count {
        case ..<0: return .ended
        case 0: return .empty
        default: return .frame(sequence: sequence, samples: samples)
        }
    }

    /// Queues one frame; `false` when the send ring is full.
    func write(_ samples: ArraySlice<Int16>) -> Bool {
        samples.withUnsafeBufferPointer { cpj_frame_port_write(port, $0.baseAddress, UInt32($0.count)) == 0 }
    }

    var droppedFrames: Int { Int(clamping: cpj_frame_port_dropped(port)) }
    var underflows: Int { Int(clamping: cpj_frame_port_underflows(port)) }
    var queuedFrames: Int { Int(clamping: cpj_frame_port_queued(port)) }
    var isRemoved: Bool { cpj_frame_port_is_closed(port) != 0 }

    @discardableResult
    func removeFromBridge() -> Bool {
        guard !removed.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        cpj_frame_port_remove(port, slot)
        return true
    }
}

extension Native {
    // MARK: Audio frame ports

    /// Creates a frame port in `format`, adds it to the bridge and links it to `call` (as
    /// a sink of the call's received audio, a source of its transmitted audio, or both);
    /// the link is kept across media changes and the port removed when the call ends.
    static func attachFramePort(
        bridge: EngineBridge, call: Call, format: AudioFrameFormat, receiveFrames: Int, sendFrames: Int
    ) throws(PJSUAError) -> FramePort {
        guard let raw = cpj_frame_port_create(
            UInt32(format.sampleRate), UInt32(format.samplesPerFrame), UInt32(receiveFrames), UInt32(sendFrames))
        else { throw PJ.error(cpj_status_enomem(), "cpj_frame_port_create") }
        var slot = pjsua_conf_port_id(cpj_invalid_id())
        let status = cpj_frame_port_add(raw, &slot)
        guard status == cpj_success() else {
            cpj_frame_port_release(raw)
            throw PJ.error(status, "pjsua_conf_add_port")
        }
        let port = FramePort(
            call: call, format: format, receives: receiveFrames > 0, sends: sendFrames > 0, port: raw, slot: slot)
        bridge.media.withLock { plan in
            if port.receives { plan.sinks[call.generation, default: []].append(slot) }
            if port.sends { plan.sources[call.generation, default: []].append(slot) }
            plan.bridgePorts[call.generation, default: []].append(port)
        }
        bridge.livePorts.withLock { $0[ObjectIdentifier(port)] = port }
        connect(bridge: bridge, call: call, source: port.sends ? slot : nil, sink: port.receives ? slot : nil)
        return port
    }

    /// Unlinks a frame port from its call and takes it off the bridge. Returns `false` when
    /// it was already off (stopped, or its call ended). Engine thread.
    @discardableResult
    static func detach(bridge: EngineBridge, port: any BridgePort, of call: Call?) -> Bool {
        if let call {
            bridge.media.withLock { plan in
                let generation = call.generation
                plan.sinks[generation]?.removeAll { $0 == port.slot }
                plan.sources[generation]?.removeAll { $0 == port.slot }
                plan.bridgePorts[generation]?.removeAll { $0 === port }
            }
        }
        return removeBridgePorts(bridge: bridge, [port])
    }

    /// Takes ports off the bridge (frame readers end once drained). Engine thread.
    @discardableResult
    static func removeBridgePorts(bridge: EngineBridge, _ ports: [any BridgePort]) -> Bool {
        var any = false
        for port in ports {
            _ = bridge.livePorts.withLock { $0.removeValue(forKey: ObjectIdentifier(port)) }
            if port.removeFromBridge() { any = true }
        }
        return any
    }

    /// Every port of ours still on the bridge, off it: before `pjsua_destroy`.
    static func removeAllBridgePorts(bridge: EngineBridge) {
        let ports = bridge.livePorts.withLock { ports in
            defer { ports.removeAll() }
            return Array(ports.values)
        }
        for port in ports { _ = port.removeFromBridge() }
    }
}

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
    private let removed = Atomic<Bool>(false)

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
        once && !removed.load(ordering: .acquiring) && pjmedia_tonegen_is_busy(port) == 0
    }

    @discardableResult
    func removeFromBridge() -> Bool {
        guard !removed.exchange(true, ordering: .acquiringAndReleasing) else { return false }
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
    static func attachTones(bridge: EngineBridge, call: Call?, tones: [Tone], loop: Bool) throws(PJSUAError) -> TonePlayer {
        var descriptions = tones.map { tone in
            var description = pjmedia_tone_desc()
            description.freq1 = Int16(tone.frequency)
            description.freq2 = Int16(tone.secondFrequency ?? 0)
            description.on_msec = Int16(tone.duration.milliseconds)
            description.off_msec = Int16(tone.pause.milliseconds)
            description.volume = tone.volume.map { Int16(max(1, min(32767, ($0 * 32767).rounded())))} ?? 0
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
        bridge.livePorts.withLock { $0[ObjectIdentifier(tonePort)] = tonePort }
        if let call {
            bridge.media.withLock { plan in
                plan.sources[call.generation, default: []].append(slot)
                plan.bridgePorts[call.generation, default: []].append(tonePort)
            }
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
        let finished = bridge.livePorts.withLock { ports in
            ports.values.compactMap { $0 as? TonePort }.filter(\.once)
        }.filter(\.hasFinished)
        for port in finished { detach(bridge: bridge, port: port, of: port.call) }
    }
}
