import CPJSUAShim

extension Native {
    // MARK: Reliable provisionals and session timers

    /// Sets `require_100rel`, `use_timer` and `timer_setting` from the account's policies
    /// (validated before: whole seconds, Min-SE ≥ 90 s, interval ≥ Min-SE, at most a day).
    static func applySessionPolicy(_ account: AccountConfiguration, to config: inout pjsua_acc_config) {
        config.require_100rel =
            account.reliableProvisionals == .required ? PJSUA_100REL_MANDATORY : PJSUA_100REL_NOT_USED
        let timers = account.sessionTimers
        switch timers.mode {
        case .off: config.use_timer = PJSUA_SIP_TIMER_INACTIVE
        case .required: config.use_timer = PJSUA_SIP_TIMER_REQUIRED
        case .always: config.use_timer = PJSUA_SIP_TIMER_ALWAYS
        default: config.use_timer = PJSUA_SIP_TIMER_OPTIONAL
        }
        config.timer_setting.sess_expires = UInt32(clamping: timers.interval.components.seconds)
        config.timer_setting.min_se = UInt32(clamping: timers.minimumInterval.components.seconds)
    }

    /// The private header that asks the engine's module (`cpj_register_drop_supported_module`)
    /// to take `tags` out of the request's or response's `Supported` header; it never reaches
    /// the wire.
    static func dropSupportedMarker(_ tags: [String]) -> SIPHeader {
        SIPHeader(name: PJ.string(cpj_drop_supported_header_name()), value: tags.joined(separator: ", "))
    }
}
