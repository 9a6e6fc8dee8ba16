#if canImport(os)
    import os
#else
    import Synchronization
#endif

/// A value behind a lock, for the little state the Kit must read synchronously (PushKit
/// needs a call's UUID before its delegate method returns, so it cannot await an actor).
///
/// `OSAllocatedUnfairLock` on Apple platforms (iOS 16, macOS 13), where
/// `Synchronization.Mutex` would need iOS 18 and macOS 15, above this package's floor;
/// `Synchronization.Mutex` elsewhere.
final class Locked<Value: Sendable>: Sendable {
    #if canImport(os)
        private let lock: OSAllocatedUnfairLock<Value>
    #else
        private let lock: Mutex<Value>
    #endif

    /// Creates the lock around `value`.
    init(_ value: Value) {
        #if canImport(os)
            lock = OSAllocatedUnfairLock(initialState: value)
        #else
            lock = Mutex(value)
        #endif
    }

    /// Runs `body` with exclusive access to the value. Not re-entrant: `body` must not take
    /// this lock again.
    func withLock<R: Sendable>(_ body: @Sendable (inout Value) -> R) -> R {
        lock.withLock { body(&$0) }
    }
}
