extension PJSUA {
    // MARK: Message-waiting indications (RFC 3842)

    /// Message-waiting summaries (RFC 3842), from the moment of this access on, in order,
    /// none dropped: those of each account that subscribes
    /// (``AccountConfiguration/subscribesToMessageWaiting``) and unsolicited ones.
    ///
    /// **Unsolicited summaries need a reader.** pjsua by itself answers a message-summary
    /// NOTIFY that arrives outside any subscription `200 OK` and, with nothing to hand it
    /// to, drops it. The engine takes one only while at least one `messageSummaries` stream
    /// is alive, and delivers it with ``MessageSummary/isSolicited`` `false`; with none, the
    /// sender gets `481 Subscription Does Not Exist` (RFC 6665 §4.1.3). A NOTIFY on the
    /// account's own subscription is always answered `200` (it belongs to the subscription
    /// pjsua keeps) and is delivered to the streams alive then.
    ///
    /// Each access is a new unbounded subscription; the streams do not end when the engine
    /// shuts down. Wraps pjsua's `on_mwi_info` callback. Safe from any thread.
    public nonisolated var messageSummaries: AsyncStream<MessageSummary> { ConsentStreams.summaries.subscribe() }
}
