import CPJSIP
import Foundation
import PJSUATestSupport
import Testing

@testable import SwiftPJSUA

/// An actor isolated to an engine executor, to observe where and in what order jobs run.
actor ExecutorProbe {
    let executor: EngineExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    var order: [Int] = []

    init(_ executor: EngineExecutor) { self.executor = executor }

    func record(_ n: Int) -> Bool {
        order.append(n)
        return executor.isOnEngineThread && pj_thread_is_registered() != 0
    }
}

@Suite("Engine executor")
struct ExecutorTests {
    @Test("Jobs run on the one PJLIB-registered thread")
    func registeredThread() async {
        let executor = EngineExecutor(name: "test-engine")
        let probe = ExecutorProbe(executor)
        #expect(executor.pjlibStatus == 0)
        #expect(await probe.record(1))
        #expect(!executor.isOnEngineThread)
        executor.stop()
    }

    @Test("Posted work runs in FIFO order, and stop drains what was queued")
    func fifoAndDrain() {
        let executor = EngineExecutor(name: "test-fifo")
        let seen = Protected<[Int]>([])
        let gate = DispatchSemaphore(value: 0)
        executor.post { gate.wait() }
        for n in 0..<500 { executor.post { seen.withLock { $0.append(n) } } }
        gate.signal()
        executor.stop()
        #expect(seen.withLock { $0 } == Array(0..<500))
        #expect(!executor.post {})
    }
}
