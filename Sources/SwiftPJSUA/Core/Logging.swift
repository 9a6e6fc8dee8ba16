import Foundation

#if canImport(os)
    import os
#endif

/// Writes pjsip's log lines to standard error, one line each, as pjsip formats them (its
/// time and sender prefix, then the text).
///
/// The engine's default handler on Linux and other platforms without unified logging: a
/// ``Configuration/logLevel`` above 0 with no ``Configuration/logHandler`` logs here (or to
/// ``SystemLogHandler`` where unified logging exists). Each line is one `write(2)`, so lines
/// from pjsua's threads do not interleave. Safe to call from any thread.
public struct StandardErrorLogHandler: PJSUALogHandler {
    /// Creates the handler.
    public init() {}

    /// Writes `message` and a line break to standard error.
    /// - Parameters:
    ///   - level: pjsip's level, 1 (error) to 6 (trace); not written.
    ///   - message: the line, without its line break.
    public func log(level: Int, message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}

/// The platform's own log: unified logging (`os.Logger`) on Apple platforms, standard error
/// elsewhere (``StandardErrorLogHandler``).
///
/// pjsip's levels map to the logger's: 1 to `.error`, 2 to `.default` (notice), 3 to
/// `.info`, 4 to 6 (the SIP messages and traces) to `.debug`, which the system keeps in
/// memory only unless a profile or `log config` raises it. Lines are logged as public: they
/// are pjsip's own (SIP messages at level 4 and above included), and passwords never appear
/// in them.
///
/// The engine uses this handler when ``Configuration/logLevel`` is above 0 and
/// ``Configuration/logHandler`` is `nil`.
public struct SystemLogHandler: PJSUALogHandler {
    /// The subsystem the lines are logged under (Apple platforms only).
    public let subsystem: String
    /// The category the lines are logged under (Apple platforms only).
    public let category: String
    #if canImport(os)
        private let logger: Logger
    #endif

    /// Creates the handler.
    /// - Parameters:
    ///   - subsystem: the unified-logging subsystem, `swift-pjsua` by default (a reverse-DNS
    ///     name of your app's is usual: `com.example.phone.sip`).
    ///   - category: the unified-logging category, `pjsip` by default.
    public init(subsystem: String = "swift-pjsua", category: String = "pjsip") {
        self.subsystem = subsystem
        self.category = category
        #if canImport(os)
            logger = Logger(subsystem: subsystem, category: category)
        #endif
    }

    /// Logs one of pjsip's lines at the level that matches pjsip's.
    /// - Parameters:
    ///   - level: pjsip's level, 1 (error) to 6 (trace).
    ///   - message: the line, without its line break.
    public func log(level: Int, message: String) {
        #if canImport(os)
            let type: OSLogType =
                switch level {
                case ...1: .error
                case 2: .default
                case 3: .info
                default: .debug
                }
            logger.log(level: type, "\(message, privacy: .public)")
        #else
            StandardErrorLogHandler().log(level: level, message: message)
        #endif
    }
}

extension Configuration {
    /// The configuration with ``SystemLogHandler`` as its handler when a ``logLevel`` above 0
    /// is set without one, so that asking for logs never silently gives none.
    func withDefaultLogHandler() -> Configuration {
        guard logHandler == nil, logLevel > 0 else { return self }
        var configuration = self
        configuration.logHandler = SystemLogHandler()
        return configuration
    }
}
