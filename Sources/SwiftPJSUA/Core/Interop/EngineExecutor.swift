import CPJSUAShim
import Foundation

/// A `SerialExecutor` that runs every job on one dedicated thread registered with PJLIB.
///
/// pjsua requires that every thread calling into it is known to PJLIB. The engine actor
/// uses this executor as its `unownedExecutor`, so all actor-isolated code, and with it
/// every pjsua call the engine makes, runs on this one thread in FIFO order.
///
/// The thread makes sure PJLIB is initialized (once per process, see ``PJLib``) and registers
/// itself with a `pj_thread_desc` that is allocated here and freed only after the
/// thread has exited, so it outlives the thread as PJLIB requires.
final class EngineExecutor: SerialExecutor, @unchecked Sendable {
    // Safety: all mutable state is guarded by `condition`; `thread` and `descriptor` are
    // written once in `init` before any other thread can see `self`.

    private enum Work {
        case job(UnownedJob)
        case block(@Sendable () -> Void)
    }

    private let condition = NSCondition()
    private var queue: [Work] = []
    private var head = 0
    private var stopping = false
    private var finished = false
    private var threadID: pthread_t?
    private var registrationStatus: pj_status_t = 0
    private let descriptor: UnsafeMutableRawPointer
    private let name: String

    /// Starts the thread and waits until it has registered with PJLIB.
    init(name: String = "pjsua-engine") {
        self.name = name
        descriptor = UnsafeMutableRawPointer.allocate(
            byteCount: Int(cpj_thread_desc_size()), alignment: MemoryLayout<Int>.alignment)
        descriptor.initializeMemory(as: UInt8.self, repeating: 0, count: Int(cpj_thread_desc_size()))
        // The thread keeps the executor alive until it has drained and exited, so the
        // descriptor is freed (in deinit) only after the thread is gone.
        let thread = Thread { self.run() }
        thread.name = name
        thread.stackSize = 1 << 20
        condition.lock()
        thread.start()
        while threadID == nil { condition.wait() }
        condition.unlock()
    }

    deinit {
        stop()
        descriptor.deallocate()
    }

    /// The status of PJLIB initialization on the engine thread (`PJ_SUCCESS` when usable).
    var pjlibStatus: pj_status_t {
        condition.lock()
        defer { condition.unlock() }
        return registrationStatus
    }

    private func run() {
        var status = PJLib.initialize()
        if status == cpj_success(), pj_thread_is_registered() == 0 {
            var handle: OpaquePointer?
            status = name.withCString { cpj_thread_register($0, descriptor, &handle) }
        }
        condition.lock()
        registrationStatus = status
        threadID = pthread_self()
        condition.broadcast()
        condition.unlock()

        while true {
            condition.lock()
            while head == queue.count && !stopping { condition.wait() }
            if head == queue.count {
                // Stopping and drained.
                finished = true
                condition.broadcast()
                condition.unlock()
                break
            }
            let work = queue[head]
            head += 1
            if head > 1024 && head * 2 > queue.count {
                queue.removeFirst(head)
                head = 0
            }
            condition.unlock()
            switch work {
            case .job(let job): job.runSynchronously(on: asUnownedSerialExecutor())
            case .block(let block): block()
            }
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        append(.job(unowned))
    }

    /// Runs `block` on the engine thread after the jobs already queued. Used by C
    /// callbacks to hand work back to the engine thread without holding an actor.
    /// Returns `false` when the executor has stopped and the block will not run.
    @discardableResult
    func post(_ block: @escaping @Sendable () -> Void) -> Bool {
        append(.block(block))
    }

    @discardableResult
    private func append(_ work: Work) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        // Jobs enqueued after stop still run (the thread drains before exiting) unless
        // the thread is already gone; then there is nowhere to run them.
        guard !finished else { return false }
        queue.append(work)
        condition.signal()
        return true
    }

    /// Stops accepting work once the queue is drained and waits for the thread to exit.
    /// Jobs already queued run first. Must not be called from the engine thread.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        if !isOnEngineThread {
            while !finished { condition.wait() }
        }
        condition.unlock()
    }

    /// Whether the calling thread is this executor's thread.
    var isOnEngineThread: Bool {
        guard let threadID else { return false }
        return pthread_equal(threadID, pthread_self()) != 0
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func checkIsolated() {
        precondition(isOnEngineThread, "expected to run on the \(name) thread")
    }

    func isIsolatingCurrentContext() -> Bool? {
        isOnEngineThread
    }
}

/// PJLIB's process-wide initialization.
///
/// `pj_init` is not safe to call from two threads at once (it registers the calling thread
/// with a static descriptor), so the first engine thread calls it under a lock and nothing
/// ever calls the matching `pj_shutdown`: the reference it holds keeps PJLIB alive across
/// `pjsua_destroy`/`pjsua_create` restarts and while several executors come and go.
enum PJLib {
    private static let status = Protected<pj_status_t?>(nil)

    static func initialize() -> pj_status_t {
        status.withLock { status in
            if let status { return status }
            // pj_init logs a banner at level 4; the engine's log settings apply at start.
            pj_log_set_level(0)
            let result = pj_init()
            status = result
            return result
        }
    }
}
