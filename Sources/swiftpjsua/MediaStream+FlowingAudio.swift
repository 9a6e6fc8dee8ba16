import SwiftPJSUA

extension MediaStream {
    /// Whether this is an audio stream that is active, or held by the far end (not by us).
    var isFlowingAudio: Bool { type == .audio && (status == .active || status == .remoteHold) }
}
