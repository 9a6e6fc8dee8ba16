import Foundation

/// A value guarded by a lock that ThreadSanitizer can see: the package's one lock.
///
/// The engine's shared state (the event hub, the running engine's bridge) is touched from
/// pjsua's threads, the engine thread and any caller's thread. `Synchronization.Mutex` would
/// do, but on Linux it is a futex lock inside the uninstrumented standard library, so
/// `swift test --sanitize=thread` reports every access it guards as a race (a two-thread
/// `Mutex<[Int]>` append loop is enough to show it). This lock is a pthread mutex (through
/// `NSLock`), which TSan intercepts, so the sanitizer checks the engine's real
/// synchronization instead of drowning in false reports. `NSLock` is also there on every
/// platform the package supports, where `Mutex` would need iOS 18 and macOS 15.
///
/// `package`, not public: the Kit, the command-line tool and the test support targets use
/// this one type for their own state rather than wrapping locks of their own.
package final class Protected<Value: Sendable>: @unchecked Sendable {
    // Safety: `value` is read and written only inside `withLock`, between `lock()` and
    // `unlock()` of the one `NSLock`; `Value` is Sendable, so what leaves the lock may
    // cross threads.
    private let lock = NSLock()
    private var value: Value

    /// Creates the lock around `value`.
    package init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value. `body` must not call back into
    /// `withLock` of the same instance (the lock is not recursive).
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

extension Protected where Value == Bool {
    /// Sets the flag and returns whether it was set already: the first caller of several
    /// racing to do something once gets `false`.
    package func set() -> Bool {
        withLock { flag in
            defer { flag = true }
            return flag
        }
    }
}
