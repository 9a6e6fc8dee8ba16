extension PJSUA {
    // MARK: Network changes

    /// The longest ``NetworkChangeOptions/listenerRestartDelay``.
    public static let longestListenerRestartDelay = Duration.seconds(10)
    /// The longest ``NetworkChangeOptions/deadline``.
    public static let longestNetworkChangeDeadline = Duration.seconds(300)

    /// Moves the engine to the network the host has now: after an address was added or
    /// removed, the default route moved (Wi-Fi to cellular), or the host woke from sleep.
    /// Wraps `pjsua_handle_ip_change`.
    ///
    /// In order, pjsua shuts the TCP and TLS connections down and re-creates the listeners
    /// (as ``NetworkChangeOptions`` asks), then for each account (as its
    /// ``AccountConfiguration/networkChange`` policy asks): shuts down the connection it
    /// registered over, sends a REGISTER with the new Contact (and removes the old binding,
    /// pjsua's `contact_rewrite_method`), then re-INVITEs or UPDATEs its confirmed calls with a
    /// new Contact, Via and SDP, or ends them. Outgoing calls that are not confirmed are
    /// ended (see ``NetworkChangePolicy``). Each step is also delivered as
    /// ``PJSUAEvent/networkChange(_:)``. A REGISTER of the change that fails (the registrar
    /// unreachable from the new network: 408 after 64 × T1) is retried after the account's
    /// ``AccountConfiguration/retryInterval``, until it succeeds; pjsua itself retries none.
    ///
    /// - Parameter options: what to do with the transports and how long to wait.
    /// - Returns: every step pjsua reported, up to ``NetworkChangeProgress/Step/completed``,
    ///   or those reported when ``NetworkChangeOptions/deadline`` passed
    ///   (``NetworkChangeReport/isComplete`` is `false` then; pjsua goes on in the background).
    /// - Throws: ``PJSUAUsageError/networkChangeInProgress`` until pjsua has completed the
    ///   previous change (even when that change's caller stopped waiting at its deadline; at
    ///   most 5 minutes); ``PJSUAUsageError/invalidArgument(_:)``
    ///   for a delay outside 0 ms to 10 s or a deadline outside (0, 5 min];
    ///   ``PJSUAUsageError/notStarted`` or ``PJSUAUsageError/shutDown``; `PJSUAError` when
    ///   pjsua refuses to start; `CancellationError` when the task is cancelled while
    ///   waiting (the change goes on).
    public func handleNetworkChange(_ options: NetworkChangeOptions = NetworkChangeOptions()) async throws
        -> NetworkChangeReport
    {
        let runtime = try runtime()
        guard options.listenerRestartDelay >= .zero, options.listenerRestartDelay <= Self.longestListenerRestartDelay
        else {
            throw PJSUAUsageError.invalidArgument(
                "listenerRestartDelay must be 0 ms to 10 s, got \(options.listenerRestartDelay)")
        }
        guard options.deadline > .zero, options.deadline <= Self.longestNetworkChangeDeadline else {
            throw PJSUAUsageError.invalidArgument(
                "a network change's deadline must be more than zero and at most 5 minutes, got \(options.deadline)")
        }
        let bridge = runtime.bridge
        let now = ContinuousClock.now
        // The claim lasts until pjsua reports the change completed, whatever this caller's
        // deadline: pjsua would interleave a second change with the first. Five minutes
        // bound it should pjsua never report completion.
        let claimed = bridge.network.withLock { $0.claim(at: now, longest: Self.longestNetworkChangeDeadline) }
        guard claimed else { throw PJSUAUsageError.networkChangeInProgress }
        // Subscribed before pjsua starts: with no account it completes inside the call.
        let events = bridge.hub.subscribe()
        do {
            try Native.handleIPChange(options)
        } catch {
            bridge.network.withLock { $0.inProgressUntil = nil }
            throw error
        }
        return try await Self.networkChangeSteps(in: events, deadline: options.deadline)
    }

    /// The ``PJSUAEvent/networkChange(_:)`` events on `events` up to the completed one or
    /// the deadline.
    private static func networkChangeSteps(
        in events: AsyncStream<PJSUAEvent>, deadline: Duration
    ) async throws -> NetworkChangeReport {
        let collected = Protected<[NetworkChangeProgress]>([])
        let complete: Bool = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await event in events {
                    guard case .networkChange(let progress) = event else { continue }
                    collected.withLock { $0.append(progress) }
                    if progress.step == .completed { return true }
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: deadline)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        try Task.checkCancellation()
        return NetworkChangeReport(steps: collected.withLock { $0 }, isComplete: complete)
    }

    /// Handles each change of `changes` (the automatic mode's monitor) until shutdown.
    /// Changes that come while one is handled are gathered into one more change, handled
    /// right after it: a monitor that reports a burst never queues a change per report.
    func followNetwork(_ changes: AsyncStream<NetworkPathChange>, options: NetworkChangeOptions) {
        networkFollower?.cancel()
        networkFollower = Task { [weak self] in
            // At most one change waits while one is handled.
            let (pending, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await _ in changes { signal.yield() }
                    signal.finish()
                }
                group.addTask {
                    for await _ in pending {
                        while !Task.isCancelled {
                            guard let engine = self else { return }
                            do {
                                _ = try await engine.handleNetworkChange(options)
                                break
                            } catch PJSUAUsageError.networkChangeInProgress {
                                try? await Task.sleep(for: .milliseconds(100))
                            } catch {
                                // Stopped, or pjsua refused: the events said what there was to say.
                                break
                            }
                        }
                    }
                }
                // Until shutdown cancels both; a monitor that stops still has its last change handled.
                await group.waitForAll()
            }
        }
    }
}
