/*
 * Network changes: pjsua_handle_ip_change's steps by name for every version (2.17 added
 * PJSUA_IP_CHANGE_OP_SHUTDOWN_TP in the middle of its enum, shifting the later values; the
 * header's CPJ_IP_CHANGE_ values do not move), its settings that arrived in 2.13 and 2.15,
 * and the Contact of an early incoming call after the host's address moved.
 */
#include "CPJSUAShim.h"
#include <pjsua-lib/pjsua_internal.h>

/* pjsua's operation as one of the header's CPJ_IP_CHANGE_ values. */
int cpj_ip_change_step(pjsua_ip_change_op op) {
    switch (op) {
#if CPJ_VERSION_AT_LEAST(2, 17)
    case PJSUA_IP_CHANGE_OP_SHUTDOWN_TP: return CPJ_IP_CHANGE_SHUTDOWN_TP;
#endif
    case PJSUA_IP_CHANGE_OP_RESTART_LIS: return CPJ_IP_CHANGE_RESTART_LIS;
    case PJSUA_IP_CHANGE_OP_ACC_SHUTDOWN_TP: return CPJ_IP_CHANGE_ACC_SHUTDOWN_TP;
    case PJSUA_IP_CHANGE_OP_ACC_UPDATE_CONTACT: return CPJ_IP_CHANGE_ACC_UPDATE_CONTACT;
    case PJSUA_IP_CHANGE_OP_ACC_HANGUP_CALLS: return CPJ_IP_CHANGE_ACC_HANGUP_CALLS;
    case PJSUA_IP_CHANGE_OP_ACC_REINVITE_CALLS: return CPJ_IP_CHANGE_ACC_REINVITE_CALLS;
    case PJSUA_IP_CHANGE_OP_COMPLETED: return CPJ_IP_CHANGE_COMPLETED;
    default: return CPJ_IP_CHANGE_OTHER;
    }
}

/* pjsua_ip_change_param.shutdown_transport arrived in 2.14 or 2.15 (pjproject#3781):
 * used from 2.15 on; before, only the account's own registration transport is shut down
 * (ip_change_cfg.shutdown_tp). */
void cpj_ip_change_param_set_shutdown_transport(pjsua_ip_change_param *param, pj_bool_t value) {
#if CPJ_VERSION_AT_LEAST(2, 15)
    param->shutdown_transport = value;
#else
    (void)param; (void)value;
#endif
}

/* ip_change_cfg.reinv_use_update arrived in 2.13 (pjproject#3146); before, re-INVITE. */
void cpj_ip_change_cfg_set_use_update(pjsua_ip_change_acc_cfg *config, pj_bool_t value) {
#if CPJ_VERSION_AT_LEAST(2, 13)
    config->reinv_use_update = value;
#else
    (void)config; (void)value;
#endif
}

/* The re-INVITE flags pjsua's default uses (enum constants, spelled as unsigned). */
unsigned cpj_ip_change_reinvite_flags(void) {
    return PJSUA_CALL_REINIT_MEDIA | PJSUA_CALL_UPDATE_CONTACT | PJSUA_CALL_UPDATE_VIA;
}

/* Before a final 2xx to an incoming call that is still early: when the account's Contact
 * changed since the INVITE arrived (a network change moved it), make it the dialog's local
 * Contact, so the 2xx names the address the host has now (RFC 3261 §12.1.1: the
 * 2xx's Contact is the UAC's remote target). pjsua updates the Contact of confirmed calls by
 * re-INVITE, but leaves an early dialog on the address it was created with, where the ACK
 * then goes. Returns 1 when it changed the Contact, 0 when not, -1 on failure. */
int cpj_call_refresh_early_contact(pjsua_call_id call_id) {
    if (call_id < 0 || call_id >= (int)pjsua_var.ua_cfg.max_calls) return -1;
    pjsua_call *call = &pjsua_var.calls[call_id];
    pjsip_inv_session *inv = call->inv;
    if (inv == NULL || inv->role != PJSIP_ROLE_UAS || inv->state >= PJSIP_INV_STATE_CONNECTING) return 0;
    if (!pjsua_acc_is_valid(call->acc_id)) return 0;
    pjsua_acc *acc = &pjsua_var.acc[call->acc_id];
    const pj_str_t *wanted = acc->cfg.force_contact.slen ? &acc->cfg.force_contact : &acc->contact;
    if (wanted->slen == 0) return 0;
    pjsip_dialog *dlg = inv->dlg;
    int result = 0;
    pjsip_dlg_inc_lock(dlg);
    char current[PJSIP_MAX_URL_SIZE];
    int length = dlg->local.contact ? pjsip_uri_print(PJSIP_URI_IN_CONTACT_HDR, dlg->local.contact->uri,
                                                      current, sizeof current) : -1;
    /* acc->contact is "<uri>" with parameters after it; compare the URI inside. */
    pj_str_t inside = *wanted;
    if (inside.slen > 1 && inside.ptr[0] == '<') {
        const char *end = pj_memchr(inside.ptr, '>', inside.slen);
        if (end) { inside.ptr += 1; inside.slen = end - inside.ptr; }
    }
    if (length < 0 || length != inside.slen || pj_memcmp(current, inside.ptr, length) != 0) {
        const pj_str_t name = { (char *)"Contact", 7 };
        pj_str_t copy;
        pj_strdup_with_null(dlg->pool, &copy, wanted);
        pjsip_contact_hdr *contact = (pjsip_contact_hdr *)pjsip_parse_hdr(dlg->pool, &name, copy.ptr, copy.slen, NULL);
        if (contact == NULL) {
            result = -1;
        } else {
            dlg->local.contact = contact;
            result = 1;
        }
    }
    pjsip_dlg_dec_lock(dlg);
    return result;
}
