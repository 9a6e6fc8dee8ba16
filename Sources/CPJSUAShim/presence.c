/*
 * Buddies over the pjproject versions the engine supports. Later releases (2.17 here) have
 * dialog-event subscriptions (RFC 4235, busy lamps) and the account of a buddy in
 * pjsua_buddy_config; 2.12.1 has neither, so the Swift side cannot name those fields itself.
 * PJSUA_BUDDY_DLG_EVENT_INFO_BUF_SIZE came with them and marks the headers that have them.
 */
#include "CPJSUAShim.h"
#include <string.h>

#ifdef PJSUA_BUDDY_DLG_EVENT_INFO_BUF_SIZE
#define CPJ_HAS_DIALOG_EVENT 1
#else
#define CPJ_HAS_DIALOG_EVENT 0
#endif

pj_bool_t cpj_dialog_event_supported(void) { return CPJ_HAS_DIALOG_EVENT ? PJ_TRUE : PJ_FALSE; }

pj_bool_t cpj_buddy_account_supported(void) { return CPJ_HAS_DIALOG_EVENT ? PJ_TRUE : PJ_FALSE; }

void cpj_presence_set_dialog_callback(pjsua_config *cfg, void (*callback)(pjsua_buddy_id buddy_id)) {
#if CPJ_HAS_DIALOG_EVENT
    cfg->cb.on_buddy_dlg_event_state = callback;
#else
    PJ_UNUSED_ARG(cfg);
    PJ_UNUSED_ARG(callback);
#endif
}

pj_status_t cpj_buddy_add(const pj_str_t *uri, pj_bool_t presence, pj_bool_t dialog, pjsua_acc_id acc_id,
                          void *user_data, pjsua_buddy_id *out) {
    pjsua_buddy_config cfg;
    pjsua_buddy_config_default(&cfg);
    cfg.uri = *uri;
    cfg.subscribe = presence;
    cfg.user_data = user_data;
#if CPJ_HAS_DIALOG_EVENT
    cfg.subscribe_dlg_event = dialog;
    if (acc_id >= 0) cfg.acc_id = acc_id;
#else
    if (dialog || acc_id >= 0) return PJ_ENOTSUP;
#endif
    return pjsua_buddy_add(&cfg, out);
}

pj_status_t cpj_buddy_subscribe_dialog(pjsua_buddy_id buddy_id, pj_bool_t subscribe) {
#if CPJ_HAS_DIALOG_EVENT
    return pjsua_buddy_subscribe_dlg_event(buddy_id, subscribe);
#else
    PJ_UNUSED_ARG(buddy_id);
    PJ_UNUSED_ARG(subscribe);
    return PJ_ENOTSUP;
#endif
}

void *cpj_buddy_user_data_if_valid(pjsua_buddy_id buddy_id) {
    if (!pjsua_buddy_is_valid(buddy_id)) return NULL;
    return pjsua_buddy_get_user_data(buddy_id);
}

int cpj_evsub_event_retry_after(const pjsip_event *event) {
    static const pj_str_t name = {"Subscription-State", 18};
    pjsip_rx_data *rdata = NULL;
    if (!event) return -1;
    if (event->type == PJSIP_EVENT_TSX_STATE && event->body.tsx_state.type == PJSIP_EVENT_RX_MSG) {
        rdata = event->body.tsx_state.src.rdata;
    } else if (event->type == PJSIP_EVENT_RX_MSG) {
        rdata = event->body.rx_msg.rdata;
    }
    if (!rdata || !rdata->msg_info.msg || rdata->msg_info.msg->type != PJSIP_REQUEST_MSG) return -1;
    /* pjsip-simple registers a parser for the header, so what it finds is a pjsip_sub_state_hdr. */
    const pjsip_sub_state_hdr *hdr =
        (const pjsip_sub_state_hdr *)pjsip_msg_find_hdr_by_name(rdata->msg_info.msg, &name, NULL);
    return hdr ? hdr->retry_after : -1;
}

#if CPJ_HAS_DIALOG_EVENT
/* Copies src into out's buffer (truncated when it is full) and points dst at the copy. */
static void copy_str(cpj_dialog_state *out, pj_size_t *used, pj_str_t *dst, const pj_str_t *src) {
    pj_size_t room = sizeof(out->buffer) - *used;
    pj_size_t length = src->slen > 0 ? (pj_size_t)src->slen : 0;
    if (length > room) length = room;
    if (length) pj_memcpy(out->buffer + *used, src->ptr, length);
    dst->ptr = out->buffer + *used;
    dst->slen = (pj_ssize_t)length;
    *used += length;
}
#endif

pj_status_t cpj_buddy_dialog_state(pjsua_buddy_id buddy_id, cpj_dialog_state *out) {
#if CPJ_HAS_DIALOG_EVENT
    pjsua_buddy_dlg_event_info info;
    pj_size_t used = 0;
    pj_status_t status = pjsua_buddy_get_dlg_event_info(buddy_id, &info);
    if (status != PJ_SUCCESS) return status;
    pj_bzero(out, sizeof(*out));
    copy_str(out, &used, &out->uri, &info.uri);
    copy_str(out, &used, &out->dialog_id, &info.dialog_id);
    copy_str(out, &used, &out->info_state, &info.dialog_info_state);
    copy_str(out, &used, &out->state, &info.dialog_state);
    copy_str(out, &used, &out->direction, &info.dialog_direction);
    copy_str(out, &used, &out->call_id, &info.dialog_call_id);
    copy_str(out, &used, &out->remote_identity, &info.remote_identity);
    copy_str(out, &used, &out->remote_display, &info.remote_identity_display);
    copy_str(out, &used, &out->local_identity, &info.local_identity);
    copy_str(out, &used, &out->term_reason, &info.sub_term_reason);
    out->sub_state = (int)info.sub_state;
    out->term_code = info.sub_term_code;
    return PJ_SUCCESS;
#else
    PJ_UNUSED_ARG(buddy_id);
    PJ_UNUSED_ARG(out);
    return PJ_ENOTSUP;
#endif
}
