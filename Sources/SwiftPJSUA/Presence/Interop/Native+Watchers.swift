import CPJSUAShim

/// `on_incoming_subscribe`: a SUBSCRIBE to an account's presence. Runs on pjsua's thread
/// with pjsua's lock held; decides at once from the account's policy (pjsua needs the code
/// before it returns) and copies the request out.
func onIncomingSubscribe(
    _ accountSlot: pjsua_acc_id, _ from: UnsafePointer<pj_str_t>?, _ code: UnsafeMutablePointer<pjsip_status_code>?,
    _ reason: UnsafeMutablePointer<pj_str_t>?
) {
    let account = Handles.account(accountSlot)
    let watcher = SIPAddress(parsing: from.map { PJ.string($0.pointee) } ?? "")
    let policy = account.flatMap { EngineBridge.active()?.accountRecords.configuration(of: $0)?.watchers } ?? .nobody
    let accepted = policy.admits(watcher.uri)
    if !accepted {
        code?.pointee = pjsip_status_code(403)
        reason?.pointee = cpj_watcher_refused_reason()
    }
    ConsentStreams.watchers.deliver(WatcherRequest(account: account, watcher: watcher, isAccepted: accepted))
}
