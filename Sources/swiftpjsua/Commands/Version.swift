import SwiftPJSUA

/// `swiftpjsua version`: the pjproject loaded and the one compiled against, which thread
/// carries RTP and the build's call limit. Takes no options (and ignores any arguments).
enum Version {
    /// Prints the lines.
    /// - Returns: 0 when the loaded pjproject is the one compiled against, else 1.
    static func run() -> Int32 {
        let version = PJSUA.pjprojectVersion
        out("pjproject \(version.loaded) loaded")
        out("compiled against pjproject \(version.compiled)")
        out("IPv6: \(PJSUA.supportsIPv6 ? "yes" : "no (PJ_HAS_IPV6 is 0)")")
        out("RTP on \(PJSUA.usesMediaWorkerThread ? "pjmedia's media worker thread" : "pjsua's SIP worker thread")")
        out("call limit: \(PJSUA.compiledCallLimit)")
        return version.loaded == version.compiled ? 0 : 1
    }
}
