/*
 * REGISTER responses with pjsip's "not specified" Expires. A 2xx to REGISTER whose Expires
 * header is 4294967295 (a valid delta-seconds value, RFC 3261 §20.19) is pjsip's own
 * PJSIP_EXPIRES_NOT_SPECIFIED sentinel: sip_reg.c then asserts (expiration != NOEXP), so
 * any registrar, or anyone who can spoof its answers, could abort the process. This module,
 * ahead of the transaction layer, lowers such a value by one second. (A Contact's expires
 * is not affected: sip_reg.c reads the sentinel there as "absent".)
 */
#include "CPJSUAShim.h"

/* The module's on_rx_response: lowers a REGISTER response's sentinel Expires by one. */
static pj_bool_t cpj_expires_on_rx_response(pjsip_rx_data *rdata) {
    pjsip_msg *msg = rdata->msg_info.msg;
    pjsip_hdr *hdr;
    if (!msg || !rdata->msg_info.cseq || rdata->msg_info.cseq->method.id != PJSIP_REGISTER_METHOD) return PJ_FALSE;
    for (hdr = msg->hdr.next; hdr != &msg->hdr; hdr = hdr->next) {
        if (hdr->type == PJSIP_H_EXPIRES) {
            pjsip_expires_hdr *expires = (pjsip_expires_hdr *)hdr;
            if ((pj_uint32_t)expires->ivalue == (pj_uint32_t)PJSIP_EXPIRES_NOT_SPECIFIED) {
                expires->ivalue = (pj_uint32_t)PJSIP_EXPIRES_NOT_SPECIFIED - 1;
            }
        }
    }
    return PJ_FALSE;
}

/* Registers the module above; call once per pjsua_init. */
pj_status_t cpj_register_expires_guard(void) {
    static pjsip_module module;
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pj_str_t name = pj_str((char *)"mod-swiftpjsua-expires-guard");
    if (!endpt) return PJ_EINVALIDOP;
    pj_bzero(&module, sizeof(module));
    module.name = name;
    module.id = -1;
    module.priority = PJSIP_MOD_PRIORITY_TSX_LAYER - 1;
    module.on_rx_response = &cpj_expires_on_rx_response;
    return pjsip_endpt_register_module(endpt, &module);
}
