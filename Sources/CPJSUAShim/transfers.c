/*
 * Transfers (RFC 3515, RFC 3891): what an attended transfer's Refer-To names, the NOTIFY
 * that reports on a REFER, and a pjsip module that declines an INVITE with Replaces for a
 * call the app has already hung up.
 */
#include "CPJSUAShim.h"
#include <pjsua-lib/pjsua_internal.h>

/* ---- An INVITE with Replaces (RFC 3891) for a call the app has hung up: pjsua reports the
 * call DISCONNECTED at once but keeps its dialog (still CONFIRMED) until the BYE is
 * answered, and pjsip only refuses a Replaces for a DISCONNECTED session. In that window
 * pjsua skips its replace callbacks (the call is hanging up), answers the new call 200 on
 * its own and gives it the old call's user data: a call with audio the app never hears of.
 * The dialog has terminated for the app, so this module, just ahead of pjsua's, declines
 * such an INVITE with 603 (RFC 3891 §3). Anything else passes on to pjsua. ---- */

/* The module's on_rx_request: 603 for an INVITE replacing a dialog pjsua is hanging up. */
static pj_bool_t cpj_replaces_on_rx_request(pjsip_rx_data *rdata) {
    const pj_str_t name = { (char *)"Replaces", 8 };
    pjsip_msg *msg = rdata->msg_info.msg;
    const pjsip_replaces_hdr *replaces;
    pjsip_dialog *dlg;
    pj_bool_t hanging_up = PJ_FALSE;
    if (msg->line.req.method.id != PJSIP_INVITE_METHOD) return PJ_FALSE;
    if (pjsip_rdata_get_dlg(rdata) || pjsip_rdata_get_tsx(rdata)) return PJ_FALSE;
    /* pjsua_init registers pjsip's Replaces parser, so the header is the parsed type. */
    replaces = (const pjsip_replaces_hdr *)pjsip_msg_find_hdr_by_name(msg, &name, NULL);
    if (!replaces) return PJ_FALSE;
    dlg = pjsip_ua_find_dialog(&replaces->call_id, &replaces->to_tag, &replaces->from_tag, PJ_TRUE);
    if (!dlg) return PJ_FALSE;
    {
        const pjsua_call *call = (const pjsua_call *)dlg->mod_data[pjsua_get_var()->mod.id];
        hanging_up = call && call->hanging_up ? PJ_TRUE : PJ_FALSE;
    }
    pjsip_dlg_dec_lock(dlg);
    if (!hanging_up) return PJ_FALSE;
    pjsip_endpt_respond(pjsua_get_pjsip_endpt(), NULL, rdata, PJSIP_SC_DECLINE, NULL, NULL, NULL, NULL);
    return PJ_TRUE;
}

/* Registers the module above (once per pjsua_init, like the unhandled-request responder),
 * one priority step ahead of pjsua's own module. */
pj_status_t cpj_register_replaces_check(void) {
    static pjsip_module module;
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pj_str_t name = pj_str((char *)"mod-swiftpjsua-replaces");
    if (!endpt) return PJ_EINVALIDOP;
    pj_bzero(&module, sizeof(module));
    module.name = name;
    module.id = -1;
    module.priority = PJSIP_MOD_PRIORITY_APPLICATION - 1;
    module.on_rx_request = &cpj_replaces_on_rx_request;
    return pjsip_endpt_register_module(endpt, &module);
}

/* Whether the event is a NOTIFY of the refer event package (RFC 3515 §2.4.4) that has just
 * arrived: the first one stops the REFER's Timer N (RFC 6665 §4.1.2.4). */
pj_bool_t cpj_event_is_refer_notify(const pjsip_transaction *tsx, const pjsip_event *e) {
    const pj_str_t name = { "Event", 5 }, short_name = { "o", 1 };
    const pjsip_event_hdr *hdr;
    const pjsip_rx_data *rdata;
    if (!tsx || !e || tsx->role != PJSIP_ROLE_UAS || tsx->state != PJSIP_TSX_STATE_TRYING) return PJ_FALSE;
    if (pjsip_method_cmp(&tsx->method, pjsip_get_notify_method()) != 0) return PJ_FALSE;
    if (e->type != PJSIP_EVENT_TSX_STATE || e->body.tsx_state.type != PJSIP_EVENT_RX_MSG) return PJ_FALSE;
    rdata = e->body.tsx_state.src.rdata;
    if (!rdata || !rdata->msg_info.msg) return PJ_FALSE;
    hdr = (const pjsip_event_hdr *)pjsip_msg_find_hdr_by_names(rdata->msg_info.msg, &name, &short_name, NULL);
    return hdr != NULL && pj_stricmp2(&hdr->event_type, "refer") == 0 ? PJ_TRUE : PJ_FALSE;
}

/* What an attended transfer's Refer-To names (RFC 3891, RFC 5589 §7): the far end's remote
 * Contact URI (the device in the dialog; pjsua_call_xfer_replaces names the To URI, which a
 * proxy may fork to another device), the Call-ID and both tags of the call's dialog, copied
 * under the dialog lock into `buf` one after another; `lengths` gets the four lengths in
 * that order. Falls back to the dialog's remote target, then the To URI, when the far end
 * sent no Contact. PJ_ETOOSMALL when `buf` is too small; acquire_call's status when the
 * call has no dialog. */
pj_status_t cpj_call_dialog_identity(pjsua_call_id call_id, char *buf, pj_size_t size, int lengths[4]) {
    pjsua_call *call = NULL;
    pjsip_dialog *dlg = NULL;
    pj_status_t status;
    const pjsip_uri *uri;
    const pj_str_t *parts[3];
    pj_size_t used;
    int printed, i;
    if (call_id < 0 || call_id >= (int)pjsua_call_get_max_count() || !buf || size == 0) return PJ_EINVAL;
    status = acquire_call("cpj_call_dialog_identity()", call_id, &call, &dlg);
    if (status != PJ_SUCCESS) return status;
    if (dlg->remote.contact && dlg->remote.contact->uri) uri = dlg->remote.contact->uri;
    else if (dlg->target) uri = dlg->target;
    else uri = dlg->remote.info->uri;
    printed = pjsip_uri_print(PJSIP_URI_IN_REQ_URI, pjsip_uri_get_uri(uri), buf, size);
    if (printed < 0) { pjsip_dlg_dec_lock(dlg); return PJ_ETOOSMALL; }
    lengths[0] = printed;
    used = (pj_size_t)printed;
    parts[0] = &dlg->call_id->id;
    parts[1] = &dlg->local.info->tag;
    parts[2] = &dlg->remote.info->tag;
    for (i = 0; i < 3; ++i) {
        if ((pj_size_t)parts[i]->slen > size - used) { pjsip_dlg_dec_lock(dlg); return PJ_ETOOSMALL; }
        pj_memcpy(buf + used, parts[i]->ptr, parts[i]->slen);
        lengths[i + 1] = (int)parts[i]->slen;
        used += (pj_size_t)parts[i]->slen;
    }
    pjsip_dlg_dec_lock(dlg);
    return PJ_SUCCESS;
}
