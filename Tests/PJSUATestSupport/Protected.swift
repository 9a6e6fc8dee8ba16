import Foundation

/// A value behind a pthread mutex (through `NSLock`), shareable between tasks and threads.
///
/// Test code uses this instead of `Synchronization.Mutex` because on Linux that mutex is
/// invisible to ThreadSanitizer (an uninstrumented futex lock), so the stress suite under
/// `--sanitize=thread` would report every access it guards as a race.
public final class Protected<Value>: @unchecked Sendable {
    // Safety: `value` is touched only inside `withLock`, under the one lock.
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value (not re-entrant).
    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
