/*
 * Incoming MESSAGE requests (RFC 3428), inside or outside a dialog, before pjsua sees them.
 * pjsua answers every one 200 OK and then hands it to its callback, so a sender is told
 * "delivered" for a message nobody reads. This module lets pjsua take a MESSAGE only while
 * the engine has a consumer for messages; otherwise it answers 480 Temporarily Unavailable
 * (RFC 3261 §21.4.18: the UA was reached, the user is not available), with no Retry-After
 * so the sender does not queue retries, inside a transaction of its own (a retransmission
 * gets the same 480 even if a consumer appeared since). It sits just ahead of the UA layer,
 * which would route an in-dialog MESSAGE to the call (pjsua answers that one 200 as well);
 * a 480 outside the dialog's own transactions leaves the dialog as it was (a non-INVITE
 * request does not change dialog state beyond the remote CSeq, and a later request's
 * higher CSeq is accepted).
 *
 * The same holds for an unsolicited NOTIFY of the message-summary package (RFC 3842 §3.2:
 * a NOTIFY outside any subscription's dialog): pjsua answers it 200 and, with no callback,
 * drops it. While the engine has no consumer for message summaries it gets 481
 * Subscription Does Not Exist (RFC 6665 §4.1.3: no subscription, and none wanted). A NOTIFY
 * inside a subscription's dialog belongs to that subscription and passes.
 */
#include "CPJSUAShim.h"

/* How many message consumers the Swift side has: read on pjsip's threads, written on any. */
static int cpj_im_consumer_count;

void cpj_im_set_consumer_count(int count) { __atomic_store_n(&cpj_im_consumer_count, count, __ATOMIC_SEQ_CST); }

/* How many message-summary consumers the Swift side has. */
static int cpj_mwi_consumer_count;

void cpj_mwi_set_consumer_count(int count) { __atomic_store_n(&cpj_mwi_consumer_count, count, __ATOMIC_SEQ_CST); }

/* Whether rdata is a NOTIFY outside a dialog (no To tag) for the message-summary package. */
static pj_bool_t cpj_is_unsolicited_mwi(const pjsip_rx_data *rdata) {
    static const pj_str_t event_name = {(char *)"Event", 5};
    static const pj_str_t package = {(char *)"message-summary", 15};
    const pjsip_msg *msg = rdata->msg_info.msg;
    const pjsip_event_hdr *event;
    if (pjsip_method_cmp(&msg->line.req.method, &pjsip_notify_method) != 0) return PJ_FALSE;
    if (rdata->msg_info.to && rdata->msg_info.to->tag.slen > 0) return PJ_FALSE;
    event = (const pjsip_event_hdr *)pjsip_msg_find_hdr_by_name(msg, &event_name, NULL);
    return event && pj_stricmp(&event->event_type, &package) == 0;
}

/* The reason phrase of the 403 a presence SUBSCRIBE gets from a watcher the account's
 * policy does not admit (static: pjsua reads it after the callback returns). */
pj_str_t cpj_watcher_refused_reason(void) { return pj_str((char *)"Forbidden"); }

/* The reason phrase of the 480 a MESSAGE gets while nothing consumes messages. */
static pj_str_t cpj_im_no_consumer_reason(void) { return pj_str((char *)"No Message Consumer"); }

/* Answers rdata with a final refusal inside a UAS transaction, so that the transaction
 * layer answers its retransmissions with the same response (RFC 3261 §17.2.2): a stateless
 * answer would have a retransmission decided again, and a reader that appeared meanwhile
 * would take a request whose sender was already told it was refused. Stateless only if
 * the transaction cannot be made. */
static void cpj_refuse(pjsip_rx_data *rdata, int code, const pj_str_t *reason) {
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    if (pjsip_endpt_respond(endpt, NULL, rdata, code, reason, NULL, NULL, NULL) != PJ_SUCCESS) {
        pjsip_endpt_respond_stateless(endpt, rdata, code, reason, NULL, NULL);
    }
}

static pj_bool_t cpj_im_on_rx_request(pjsip_rx_data *rdata) {
    const pjsip_msg *msg = rdata->msg_info.msg;
    pj_str_t reason;
    if (cpj_is_unsolicited_mwi(rdata)) {
        if (__atomic_load_n(&cpj_mwi_consumer_count, __ATOMIC_SEQ_CST) > 0) return PJ_FALSE;
        pj_str_t no_subscription = pj_str((char *)"Subscription Does Not Exist");
        cpj_refuse(rdata, PJSIP_SC_CALL_TSX_DOES_NOT_EXIST, &no_subscription);
        return PJ_TRUE;
    }
    if (pjsip_method_cmp(&msg->line.req.method, &pjsip_message_method) != 0) return PJ_FALSE;
    if (__atomic_load_n(&cpj_im_consumer_count, __ATOMIC_SEQ_CST) > 0) return PJ_FALSE;
    reason = cpj_im_no_consumer_reason();
    cpj_refuse(rdata, PJSIP_SC_TEMPORARILY_UNAVAILABLE, &reason);
    return PJ_TRUE;
}

/* Registers the module with the endpoint pjsua_init just created; call once per pjsua_init
 * (pjsip_endpt_destroy unregisters it). */
pj_status_t cpj_register_im_consent(void) {
    static pjsip_module module;
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    if (!endpt) return PJ_EINVALIDOP;
    pj_bzero(&module, sizeof(module));
    module.name = pj_str((char *)"mod-swiftpjsua-im-consent");
    module.id = -1;
    module.priority = PJSIP_MOD_PRIORITY_UA_PROXY_LAYER - 1;
    module.on_rx_request = &cpj_im_on_rx_request;
    return pjsip_endpt_register_module(endpt, &module);
}
