/*
 * 100rel off for an account (ReliableProvisionalPolicy.off). pjsua registers 100rel as an
 * endpoint capability and puts it in the Supported header of every INVITE and answer, for
 * every account; pjsua_acc_config has no switch for it. The engine adds a private marker
 * header to the INVITEs and answers of an account with 100rel off; this module, before the
 * transport layer prints the message, takes the marker out and replaces the Supported
 * header with one without 100rel. The marker never reaches the wire.
 */
#include "CPJSUAShim.h"

#define CPJ_NO_100REL_HEADER "X-SwiftPJSUA-No-100rel"

/* Removes the marker; when there was one, rebuilds Supported without 100rel. The message's
 * Supported header is a shallow clone of the endpoint's capability (its values array is
 * shared), so it is replaced rather than edited. */
static pj_status_t cpj_no_100rel_strip(pjsip_tx_data *tdata) {
    pj_str_t name = pj_str((char *)CPJ_NO_100REL_HEADER);
    pj_str_t token = pj_str((char *)"100rel");
    pjsip_hdr *marker;
    pjsip_supported_hdr *supported;
    pjsip_supported_hdr *rebuilt;
    unsigned i;
    marker = (pjsip_hdr *)pjsip_msg_find_hdr_by_name(tdata->msg, &name, NULL);
    if (!marker) return PJ_SUCCESS;
    pj_list_erase(marker);
    pjsip_tx_data_invalidate_msg(tdata);
    supported = (pjsip_supported_hdr *)pjsip_msg_find_hdr(tdata->msg, PJSIP_H_SUPPORTED, NULL);
    if (!supported) return PJ_SUCCESS;
    rebuilt = pjsip_supported_hdr_create(tdata->pool);
    for (i = 0; i < supported->count && rebuilt->count < PJSIP_GENERIC_ARRAY_MAX_COUNT; ++i) {
        if (pj_stricmp(&supported->values[i], &token) == 0) continue;
        pj_strdup(tdata->pool, &rebuilt->values[rebuilt->count++], &supported->values[i]);
    }
    pj_list_insert_before(supported, rebuilt);
    pj_list_erase(supported);
    /* A Supported header with no value left says nothing: leave it out. */
    if (rebuilt->count == 0) pj_list_erase(rebuilt);
    return PJ_SUCCESS;
}

/* Registers the module with the endpoint pjsua_init just created; call once per pjsua_init. */
pj_status_t cpj_register_no_100rel_module(void) {
    static pjsip_module module;
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pj_str_t name = pj_str((char *)"mod-swiftpjsua-no-100rel");
    if (!endpt) return PJ_EINVALIDOP;
    pj_bzero(&module, sizeof(module));
    module.name = name;
    module.id = -1;
    /* Before the transaction layer sends (and the transport layer prints) the message. */
    module.priority = PJSIP_MOD_PRIORITY_APPLICATION;
    module.on_tx_request = &cpj_no_100rel_strip;
    module.on_tx_response = &cpj_no_100rel_strip;
    return pjsip_endpt_register_module(endpt, &module);
}

/* The marker header's name, which the engine adds to an account's INVITEs and answers. */
pj_str_t cpj_no_100rel_header_name(void) { return pj_str((char *)CPJ_NO_100REL_HEADER); }

/* The final status of a request of a confirmed call's dialog that we sent and that can
 * refresh its session (a re-INVITE or an UPDATE): 0 while it is not finished, not ours or
 * another method; *local is set when pjsip made the status up itself (timeout, transport
 * error) rather than receiving a response. */
int cpj_event_refresh_outcome(pjsip_transaction *tsx, const pjsip_event *e, pj_bool_t *local) {
    static const pj_str_t update = {(char *)"UPDATE", 6};
    if (!tsx || !e || e->type != PJSIP_EVENT_TSX_STATE || tsx->role != PJSIP_ROLE_UAC) return 0;
    if (tsx->method.id != PJSIP_INVITE_METHOD && pj_strcmp(&tsx->method.name, &update) != 0) return 0;
    if (tsx->state != PJSIP_TSX_STATE_COMPLETED && tsx->state != PJSIP_TSX_STATE_TERMINATED) return 0;
    /* Once per transaction: a COMPLETED → TERMINATED move reports the same status again. */
    if (e->body.tsx_state.prev_state == PJSIP_TSX_STATE_COMPLETED) return 0;
    if (tsx->status_code < 200) return 0;
    if (local) *local = e->body.tsx_state.type == PJSIP_EVENT_RX_MSG ? PJ_FALSE : PJ_TRUE;
    return tsx->status_code;
}
