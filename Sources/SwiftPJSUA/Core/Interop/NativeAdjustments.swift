// The escape hatch: the only public API that names pjproject's C types. Clients that use it
// `import CPJSIP` themselves to reach the structs' fields.
public import CPJSUAShim

/// An edit of one pjsua configuration struct, run just before the engine hands the struct to
/// pjsua: the escape hatch for pjsua settings the engine does not model.
///
/// The engine fills the struct from its own configuration first (pjsua's defaults, then what
/// ``Configuration`` and ``AccountConfiguration`` say), then runs the adjustment on it, then
/// puts back the few fields it depends on (listed on each property that holds an adjustment,
/// and in <doc:EscapeHatch>), and calls pjsua.
///
/// ```swift
/// import CPJSIP
/// import SwiftPJSUA
///
/// var account = AccountConfiguration(identity: "sip:alice@example.com")
/// account.nativeAdjustment = NativeAdjustment { config in
///     config.use_timer = PJSUA_SIP_TIMER_ALWAYS
///     config.timer_setting.sess_expires = 1800
/// }
/// ```
///
/// Threading: the closure runs on the engine thread, synchronously, inside the engine method
/// that builds the struct (`start`, `addAccount`, `modifyAccount`, `makeCall`, `answer`). It
/// must not block and must not call into the engine (that would wait for the engine thread it
/// runs on); it may call pjsua's own functions that the engine thread may call.
///
/// Equality: two adjustments are equal when one is a copy of the other (they compare by an
/// identity made when the adjustment is created, since closures cannot be compared), so an
/// ``AccountConfiguration`` holding one stays `Hashable`. Creating a new adjustment from
/// the same closure gives an unequal value.
///
/// What it voids: nothing the engine documents about a setting holds once an adjustment
/// changed it, and the struct's fields are pjproject's, not the engine's: they change between
/// pjproject versions (``PJSUA/pjprojectVersion``) with no compatibility promise from this
/// package. The engine only guarantees that the fields it puts back keep it working.
public struct NativeAdjustment<Struct>: Sendable, Hashable {
    /// The closure's shape: the struct to edit, and a store for C strings the edit points
    /// the struct at.
    public typealias Body = @Sendable (inout Struct, NativeStrings) -> Void

    private final class Box: Sendable {
        let body: Body
        init(_ body: @escaping Body) { self.body = body }
    }

    private let box: Box

    /// Creates an adjustment whose closure may set string fields (`pj_str_t`, `char *`)
    /// through the given ``NativeStrings``.
    /// - Parameter body: edits the struct; runs on the engine thread.
    public init(_ body: @escaping Body) {
        box = Box(body)
    }

    /// Creates an adjustment that sets only plain fields (numbers, flags, enums).
    /// - Parameter body: edits the struct; runs on the engine thread.
    public init(_ body: @escaping @Sendable (inout Struct) -> Void) {
        box = Box { value, _ in body(&value) }
    }

    /// Whether `lhs` is a copy of `rhs` (the same adjustment).
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.box === rhs.box }

    /// Hashes the adjustment's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(box)) }

    /// Runs the closure on `value`; strings it makes live as long as `strings`' scope.
    func apply(to value: inout Struct, strings: NativeStrings) {
        box.body(&value, strings)
    }
}

/// C copies of Swift strings for an adjustment to point a struct's `pj_str_t` and `char *`
/// fields at. They stay valid until the pjsua function the struct is passed to has returned
/// (pjsua copies these structs' strings, or is done with them, before it returns); do not
/// keep them.
///
/// Only usable inside the ``NativeAdjustment`` closure it is passed to, on the engine thread.
public final class NativeStrings {
    let scope: StringScope

    init(_ scope: StringScope) { self.scope = scope }

    /// A `pj_str_t` over a copy of `text` (UTF-8, not counting a terminating NUL).
    public func pjString(_ text: String) -> pj_str_t { scope.pj(text) }

    /// A NUL-terminated copy of `text` (UTF-8).
    public func cString(_ text: String) -> UnsafeMutablePointer<CChar> { scope.cString(text) }
}

/// Adjustments of the structs ``PJSUA/start(_:)`` builds, and of the call settings of every
/// call the engine places or answers. Each is `nil` (no adjustment) by default.
///
/// See <doc:EscapeHatch> for what each one may change and what the engine puts back.
public struct NativeAdjustments: Sendable, Hashable {
    /// Edits the `pjsua_config` passed to `pjsua_init`. Afterwards the engine puts back
    /// `cb` (all of pjsua's callbacks: they are the engine's only source of events),
    /// `thread_cnt` (1: one pjsua worker thread pumps SIP events, the engine never polls)
    /// and `max_calls` (``Configuration/maxCalls``, which the engine's own call limit uses).
    public var ua: NativeAdjustment<pjsua_config>?
    /// Edits the `pjsua_logging_config` passed to `pjsua_init`. Afterwards the engine puts
    /// back `cb` (which routes lines to ``Configuration/logHandler``).
    public var logging: NativeAdjustment<pjsua_logging_config>?
    /// Edits the `pjsua_media_config` passed to `pjsua_init`. Afterwards the engine puts back
    /// `has_ioqueue` and `thread_cnt` (where RTP is polled: see
    /// ``PJSUA/usesMediaWorkerThread``) and `max_media_ports` (sized for the engine's calls,
    /// players and recorders). ``PJSUA/start(_:)`` throws ``PJSUAError`` with code
    /// ``PJSUAError/Code/invalidArgument`` for a `clock_rate` or `snd_clock_rate` other than
    /// 8, 16, 32, 44.1 or 48 kHz, an `audio_frame_ptime` other than 10–40 ms in 10 ms steps,
    /// or a `channel_count` other than 1 or 2 (pjmedia would assert on some of them).
    public var media: NativeAdjustment<pjsua_media_config>?
    /// Edits the `pjsua_call_setting` of every call placed (`pjsua_call_make_call`) or
    /// answered (`pjsua_call_answer2`) through the engine. Afterwards the engine puts back
    /// `vid_cnt` (0: calls are audio only). Not applied to the call pjsua places itself for
    /// an accepted REFER.
    public var callSetting: NativeAdjustment<pjsua_call_setting>?

    /// Creates a set of adjustments; each is `nil` unless given.
    public init(
        ua: NativeAdjustment<pjsua_config>? = nil,
        logging: NativeAdjustment<pjsua_logging_config>? = nil,
        media: NativeAdjustment<pjsua_media_config>? = nil,
        callSetting: NativeAdjustment<pjsua_call_setting>? = nil
    ) {
        self.ua = ua
        self.logging = logging
        self.media = media
        self.callSetting = callSetting
    }
}

/// An adjustment of the `pjsua_transport_config` passed to `pjsua_transport_create` for one
/// transport (``TransportConfiguration/nativeAdjustment``).
public typealias NativeTransportAdjustment = NativeAdjustment<pjsua_transport_config>

/// An adjustment of the `pjsua_acc_config` passed to `pjsua_acc_add` and `pjsua_acc_modify`
/// for one account (``AccountConfiguration/nativeAdjustment``).
public typealias NativeAccountAdjustment = NativeAdjustment<pjsua_acc_config>

extension Native {
    /// The call-setting adjustment of the running engine; set by `start`, cleared by `destroy`.
    static let callSettingAdjustment = Protected<NativeAdjustment<pjsua_call_setting>?>(nil)

    /// The engine's `pjsua_config` fields that an adjustment may not change.
    static func adjust(
        _ config: inout pjsua_config, with adjustment: NativeAdjustment<pjsua_config>?, maxCalls: Int,
        scope: StringScope
    ) {
        guard let adjustment else { return }
        let callbacks = config.cb
        adjustment.apply(to: &config, strings: NativeStrings(scope))
        config.cb = callbacks
        config.thread_cnt = 1
        config.max_calls = UInt32(maxCalls)
    }

    static func adjust(
        _ logging: inout pjsua_logging_config, with adjustment: NativeAdjustment<pjsua_logging_config>?,
        scope: StringScope
    ) {
        guard let adjustment else { return }
        let callback = logging.cb
        adjustment.apply(to: &logging, strings: NativeStrings(scope))
        logging.cb = callback
    }

    static func adjust(
        _ media: inout pjsua_media_config, with adjustment: NativeAdjustment<pjsua_media_config>?,
        scope: StringScope
    ) throws(PJSUAError) {
        guard let adjustment else { return }
        let (ioqueue, threads, ports) = (media.has_ioqueue, media.thread_cnt, media.max_media_ports)
        adjustment.apply(to: &media, strings: NativeStrings(scope))
        media.has_ioqueue = ioqueue
        media.thread_cnt = threads
        media.max_media_ports = ports
        // pjmedia asserts (aborts) on a bridge whose frame has no samples: refuse that first.
        let rates: Set<UInt32> = [8000, 16000, 32000, 44100, 48000]
        let ptime = media.audio_frame_ptime
        let problem: String? =
            if !rates.contains(media.clock_rate) {
                "clock_rate \(media.clock_rate) is not 8000, 16000, 32000, 44100 or 48000"
            } else if media.snd_clock_rate != 0 && !rates.contains(media.snd_clock_rate) {
                "snd_clock_rate \(media.snd_clock_rate) is not 0 or 8000, 16000, 32000, 44100, 48000"
            } else if ![10, 20, 30, 40].contains(ptime) {
                "audio_frame_ptime \(ptime) is not 10, 20, 30 or 40 ms"
            } else if !(1...2).contains(media.channel_count) {
                "channel_count \(media.channel_count) is not 1 or 2"
            } else {
                nil
            }
        if let problem {
            var error = PJ.error(cpj_status_einval(), "pjsua_init")
            error.message = "the media adjustment set \(problem)"
            throw error
        }
    }

    /// Applies the running engine's call-setting adjustment, then makes the call audio only.
    static func adjustCallSetting(_ setting: inout pjsua_call_setting, scope: StringScope) {
        if let adjustment = callSettingAdjustment.withLock({ $0 }) {
            adjustment.apply(to: &setting, strings: NativeStrings(scope))
        }
        setting.vid_cnt = 0
    }
}
