/*
 * Requests nothing handles: pjsua leaves them unanswered (its sample app, not the library,
 * adds a default handler), so a peer would retransmit into silence until its transaction
 * times out. This last-priority module gives each a final response: 481 for a request aimed
 * at a dialog or transaction that does not exist (a To tag, BYE, CANCEL, NOTIFY; RFC 3261
 * §12.2.2, §15.1.2, RFC 6665 §4.1.3), 405 with Allow otherwise. ACK gets none.
 */
#include "CPJSUAShim.h"

/* The module's on_rx_request: 481 or 405 (with Allow) for what reached it; ACK gets none. */
static pj_bool_t cpj_unhandled_on_rx_request(pjsip_rx_data *rdata) {
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    const pjsip_method *method = &rdata->msg_info.msg->line.req.method;
    pjsip_tx_data *tdata = NULL;
    pj_str_t notify = pj_str((char *)"NOTIFY");
    int code;
    if (method->id == PJSIP_ACK_METHOD) return PJ_TRUE;
    if ((rdata->msg_info.to && rdata->msg_info.to->tag.slen > 0) || method->id == PJSIP_BYE_METHOD ||
        method->id == PJSIP_CANCEL_METHOD || pj_stricmp(&method->name, &notify) == 0) {
        code = PJSIP_SC_CALL_TSX_DOES_NOT_EXIST;
    } else {
        code = PJSIP_SC_METHOD_NOT_ALLOWED;
    }
    if (pjsip_endpt_create_response(endpt, rdata, code, NULL, &tdata) != PJ_SUCCESS) return PJ_TRUE;
    if (code == PJSIP_SC_METHOD_NOT_ALLOWED) {
        const pjsip_hdr *allow = pjsip_endpt_get_capability(endpt, PJSIP_H_ALLOW, NULL);
        if (allow) pjsip_msg_add_hdr(tdata->msg, (pjsip_hdr *)pjsip_hdr_clone(tdata->pool, allow));
    }
    if (pjsip_endpt_send_response2(endpt, rdata, tdata, NULL, NULL) != PJ_SUCCESS) pjsip_tx_data_dec_ref(tdata);
    return PJ_TRUE;
}

/* Registers the module above with the endpoint pjsua_init just created; call once per
 * pjsua_init. pjsip_endpt_destroy unregisters it again, so it is free to reuse here. */
pj_status_t cpj_register_unhandled_request_responder(void) {
    static pjsip_module module;
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pj_str_t name = pj_str((char *)"mod-swiftpjsua-unhandled");
    if (!endpt) return PJ_EINVALIDOP;
    pj_bzero(&module, sizeof(module));
    module.name = name;
    module.id = -1;
    module.priority = PJSIP_MOD_PRIORITY_APPLICATION + 99;
    module.on_rx_request = &cpj_unhandled_on_rx_request;
    return pjsip_endpt_register_module(endpt, &module);
}
