import Foundation
import SwiftPJSUA

/// Collects pjsip's log lines.
public final class CapturedLog: PJSUALogHandler {
    private let lines = Protected<[String]>([])
    public init() {}
    public func log(level: Int, message: String) { lines.withLock { $0.append(message) } }
    public var all: [String] { lines.withLock { $0 } }
}
