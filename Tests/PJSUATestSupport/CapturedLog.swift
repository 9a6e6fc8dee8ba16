import Foundation
import SwiftPJSUA
import Synchronization

/// Collects pjsip's log lines.
public final class CapturedLog: PJSUALogHandler {
    private let lines = Mutex<[String]>([])
    public init() {}
    public func log(level: Int, message: String) { lines.withLock { $0.append(message) } }
    public var all: [String] { lines.withLock { $0 } }
}
