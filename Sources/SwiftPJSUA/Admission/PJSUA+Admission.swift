extension PJSUA {
    // MARK: Admission

    /// How many out-of-dialog requests the engine has rejected itself since it started, by
    /// reason (``WhoMayCall``, ``IncomingLimits``). Read on the engine's actor; the counters
    /// live in the shim's admission module, which pjsua's worker thread updates.
    /// - Returns: the counters; they start at zero at every ``start(_:)``.
    /// - Throws: ``PJSUAUsageError`` when the engine is not running.
    public func admissionCounters() throws(PJSUAUsageError) -> AdmissionCounters {
        _ = try runtime()
        return Native.admissionCounters()
    }
}
