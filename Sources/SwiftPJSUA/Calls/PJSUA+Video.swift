extension PJSUA {
    /// Whether the engine's calls can carry video: `false`.
    ///
    /// The engine places and answers every call with audio only (`pjsua_call_setting`'s
    /// `vid_cnt` 0), whatever the pjproject build has compiled in (the pinned iOS build has
    /// video; the Linux builds do not): a video stream in a peer's offer is declined in the
    /// answer, though ``IncomingCall/offeredVideo`` still says it was offered. So a call UI
    /// must not show such a call as a video call; SwiftPJSUAKit's router reads this to tell
    /// CallKit `hasVideo` only when it holds. It becomes `true` when the engine gains video
    /// calls. Constant for a run of the process; readable from any thread.
    public nonisolated static var carriesVideo: Bool { false }
}
