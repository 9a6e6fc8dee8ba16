import CPJSUAShim

/// A port the engine added to pjsua's conference bridge (frame ports, tone generators),
/// taken off the bridge when its call ends, when stopped, or at shutdown.
protocol BridgePort: AnyObject, Sendable {
    /// The conference slot, fixed while the port is on the bridge.
    var slot: pjsua_conf_port_id { get }
    /// Takes the port off the bridge; later calls do nothing. Engine thread only, while
    /// pjsua runs. Returns whether this call removed it.
    func removeFromBridge() -> Bool
}

/// One of the engine's frame ports (`cpj_frame_port` in the shim): on pjsua's conference
/// bridge, linked to one call (it receives what the call receives, or sends what the app
/// queues, or both), or, with no call, a sound-device tap (`cpj_snd_tap`) in the null
/// sound device's master port, receiving slot 0's mix. The C side does the real-time part
/// on pjmedia's clock thread; this class reads and writes its rings from any thread and
/// takes the port out once.
///
/// `@unchecked Sendable`: the pointers are only passed to the shim's atomic ring functions
/// (one reader and one writer at a time, which the public types guarantee), and to
/// `cpj_frame_port_remove`, `cpj_snd_tap_install` and `cpj_snd_tap_remove` on the engine
/// thread (removal once, guarded by `removed`).
final class FramePort: BridgePort, @unchecked Sendable {
    /// The call the port is linked to; `nil` for a sound-device tap.
    let call: Call?
    let format: AudioFrameFormat
    /// Which way audio flows through the port.
    let receives: Bool
    let sends: Bool
    private let port: UnsafeMutablePointer<cpj_frame_port>
    /// The sound-device tap this port is the frame part of, if it is one.
    private let tap: UnsafeMutablePointer<cpj_snd_tap>?
    /// The port's conference slot, fixed while it is on the bridge (invalid for a tap).
    let slot: pjsua_conf_port_id
    private let removed = Protected(false)

    fileprivate init(
        call: Call?, format: AudioFrameFormat, receives: Bool, sends: Bool,
        port: UnsafeMutablePointer<cpj_frame_port>, tap: UnsafeMutablePointer<cpj_snd_tap>? = nil,
        slot: pjsua_conf_port_id
    ) {
        self.call = call
        self.format = format
        self.receives = receives
        self.sends = sends
        self.port = port
        self.tap = tap
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
        guard !removed.set() else { return false }
        if let tap { cpj_snd_tap_remove(tap) } else { cpj_frame_port_remove(port, slot) }
        return true
    }

    /// Puts a sound-device tap (back) into the null sound device; `false` when no null
    /// device is attached. Engine thread.
    func installTap() -> Bool {
        guard let tap, !removed.withLock({ $0 }) else { return false }
        return cpj_snd_tap_install(tap) == cpj_success()
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
        guard
            let raw = cpj_frame_port_create(
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
        bridge.media.withLock { media in
            if port.receives { media.plan.sinks[call.generation, default: []].append(slot) }
            if port.sends { media.plan.sources[call.generation, default: []].append(slot) }
            media.plan.bridgePorts[call.generation, default: []].append(port)
            media.livePorts[ObjectIdentifier(port)] = port
        }
        connect(bridge: bridge, call: call, source: port.sends ? slot : nil, sink: port.receives ? slot : nil)
        return port
    }

    /// Creates a sound-device tap in `format` and puts it into the null sound device (see
    /// `cpj_snd_tap` in the shim); it is kept in ``MediaState/soundDeviceTap`` so that
    /// attaching the device again re-installs it, and taken out by shutdown.
    static func attachSoundDeviceTap(
        bridge: EngineBridge, format: AudioFrameFormat, frames: Int
    ) throws(PJSUAError) -> FramePort {
        guard let tap = cpj_snd_tap_create(UInt32(format.sampleRate), UInt32(format.samplesPerFrame), UInt32(frames)),
            let raw = cpj_snd_tap_frames(tap)
        else { throw PJ.error(cpj_status_enomem(), "pjmedia_resample_create") }
        let port = FramePort(
            call: nil, format: format, receives: true, sends: false, port: raw, tap: tap,
            slot: pjsua_conf_port_id(cpj_invalid_id()))
        bridge.media.withLock { media in
            media.livePorts[ObjectIdentifier(port)] = port
            media.soundDeviceTap = port
        }
        _ = port.installTap()
        return port
    }

    /// Re-installs the live sound-device tap after the null device was attached again
    /// (pjsua makes a new master port each time). Engine thread.
    static func reinstallSoundDeviceTap(bridge: EngineBridge) {
        _ = bridge.media.withLock { $0.soundDeviceTap }?.installTap()
    }

    /// Unlinks a frame port from its call and takes it off the bridge. Returns `false` when
    /// it was already off (stopped, or its call ended). Engine thread.
    @discardableResult
    static func detach(bridge: EngineBridge, port: any BridgePort, of call: Call?) -> Bool {
        if let call {
            bridge.media.withLock { media in
                let generation = call.generation
                media.plan.sinks[generation]?.removeAll { $0 == port.slot }
                media.plan.sources[generation]?.removeAll { $0 == port.slot }
                media.plan.bridgePorts[generation]?.removeAll { $0 === port }
            }
        }
        return removeBridgePorts(bridge: bridge, [port])
    }

    /// Takes ports off the bridge (frame readers end once drained). Engine thread.
    @discardableResult
    static func removeBridgePorts(bridge: EngineBridge, _ ports: [any BridgePort]) -> Bool {
        var any = false
        for port in ports {
            bridge.media.withLock { media in
                media.livePorts[ObjectIdentifier(port)] = nil
                if media.soundDeviceTap === port { media.soundDeviceTap = nil }
            }
            if port.removeFromBridge() { any = true }
        }
        return any
    }

    /// Every port of ours still on the bridge, off it: before `pjsua_destroy`.
    static func removeAllBridgePorts(bridge: EngineBridge) {
        let ports = bridge.media.withLock { media in
            defer {
                media.livePorts.removeAll()
                media.soundDeviceTap = nil
            }
            return Array(media.livePorts.values)
        }
        for port in ports { _ = port.removeFromBridge() }
    }
}
