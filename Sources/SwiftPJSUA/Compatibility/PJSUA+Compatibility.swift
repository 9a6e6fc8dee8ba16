// The earlier swift-pjsua's engine methods, kept compiling (deprecated) like the names in
// Compatibility.swift; each calls the current method it names.

extension PJSUA {
    /// The engine's configuration, under the name the earlier package nested it as
    /// (`PJSUA.Configuration`); the same type as the top-level ``SwiftPJSUA/Configuration``.
    public typealias Configuration = SwiftPJSUA.Configuration

    /// Adds an account that registers with `registrar`, the earlier swift-pjsua's way: its
    /// parameters become an ``AccountConfiguration`` with one password credential, and the
    /// account is made the default one unless `makeDefault` is `false` (the earlier default,
    /// kept here; ``AccountConfiguration/isDefault`` defaults to `false`).
    /// Wraps `pjsua_acc_add` through ``addAccount(_:)``.
    /// - Parameters:
    ///   - id: the identity, a SIP URI such as `sip:alice@example.com`.
    ///   - registrar: the registrar's URI, for example `sip:example.com`.
    ///   - username: the digest username.
    ///   - password: the digest password.
    ///   - realm: the realm the credential answers; `*` for any.
    ///   - push: RFC 8599 push parameters for the Contact; `nil` for none.
    ///   - makeDefault: make it the account for requests no other account matches.
    /// - Returns: the new account's handle.
    /// - Throws: what ``addAccount(_:)`` throws.
    @available(*, deprecated, message: "use addAccount(_:) with an AccountConfiguration")
    @discardableResult
    public func addAccount(
        id: String, registrar: String, username: String, password: String, realm: String = "*",
        push: PushConfiguration? = nil, makeDefault: Bool = true
    ) throws -> Account {
        try addAccount(
            AccountConfiguration(
                identity: id, registrar: registrar,
                credentials: [.password(password, username: username, realm: realm)], push: push,
                isDefault: makeDefault))
    }

    /// Places a call, the earlier swift-pjsua's way. This package has no video: `video: true`
    /// throws. Wraps `pjsua_call_make_call` through ``makeCall(to:from:headers:)``.
    /// - Parameters:
    ///   - uri: the target SIP or SIPS URI.
    ///   - account: the account the call is made from.
    ///   - video: must be `false`.
    /// - Returns: the call's handle.
    /// - Throws: ``PJSUAUsageError/invalidArgument(_:)`` when `video` is `true`; what
    ///   ``makeCall(to:from:headers:)`` throws.
    @available(*, deprecated, message: "use makeCall(to:from:headers:); this package has no video")
    @discardableResult
    public func makeCall(to uri: String, from account: Account, video: Bool) throws -> Call {
        guard !video else { throw PJSUAUsageError.invalidArgument("video calls: this package has no video") }
        return try makeCall(to: uri, from: account)
    }

    /// Answers an incoming call with a `UInt32` status code, as the earlier swift-pjsua did.
    /// Wraps `pjsua_call_answer2` through ``answer(_:statusCode:headers:)``.
    /// - Throws: what ``answer(_:statusCode:headers:)`` throws.
    @available(*, deprecated, message: "use answer(_:statusCode:headers:), whose status code is an Int")
    public func answer(_ call: Call, statusCode: UInt32) throws {
        try answer(call, statusCode: Int(statusCode))
    }

    /// Mutes or unmutes what a call transmits. Wraps `pjsua_conf_adjust_tx_level` through
    /// ``setMuted(_:muted:)``.
    /// - Throws: what ``setMuted(_:muted:)`` throws.
    @available(*, deprecated, renamed: "setMuted(_:muted:)")
    public func setMute(_ call: Call, muted: Bool) throws {
        try setMuted(call, muted: muted)
    }

    /// Sends RFC 4733 DTMF digits with each digit's duration in milliseconds, 0 meaning
    /// pjsua's default (160 ms), as the earlier swift-pjsua did. Wraps `pjsua_call_send_dtmf`
    /// through ``sendDTMF(_:digits:method:duration:)``.
    /// - Throws: what ``sendDTMF(_:digits:method:duration:)`` throws.
    @available(*, deprecated, message: "use sendDTMF(_:digits:method:duration:), whose duration is a Duration")
    public func sendDTMF(_ call: Call, digits: String, duration: UInt32) async throws {
        let length: Duration = duration == 0 ? .milliseconds(160) : .milliseconds(Int64(duration))
        try await sendDTMF(call, digits: digits, method: .rfc4733, duration: length)
    }
}
