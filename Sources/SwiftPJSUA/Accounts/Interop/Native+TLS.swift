import CPJSUAShim

extension Native {
    // MARK: TLS

    static func applyTLS(_ tls: TLSConfiguration, to setting: inout pjsip_tls_setting, scope: StringScope) {
        let caFile = tls.caFile ?? TLSConfiguration.systemTrust.caFile
        if let caFile { setting.ca_list_file = scope.pj(caFile) }
        if let certificate = tls.certificateFile { setting.cert_file = scope.pj(certificate) }
        if let key = tls.privateKeyFile { setting.privkey_file = scope.pj(key) }
        setting.verify_server = tls.verifiesServer ? 1 : 0
        setting.verify_client = tls.verifiesClient ? 1 : 0
        setting.require_client_cert = tls.verifiesClient ? 1 : 0
    }
}
