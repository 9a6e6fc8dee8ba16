/*
 * Option tags out of Supported for an account: 100rel off (ReliableProvisionalPolicy.off)
 * and session timers off (SessionTimers.Mode.off). pjsua registers 100rel and timer as
 * endpoint capabilities and puts them in the Supported header of every INVITE and answer,
 * for every account; pjsua_acc_config has no switch for that, and a peer told that we
 * support timers may pick us as the refresher of a session we never refresh. The engine
 * adds a private marker header, whose value lists the tags, to the INVITEs and answers of
 * such an account; this module, before the transport layer prints the message, takes the
 * marker out and replaces the Supported header with one without those tags (a tag the
 * message also Requires stays). The marker never reaches the wire.
 */
#include "CPJSUAShim.h"

#define CPJ_DROP_SUPPORTED_HEADER "X-SwiftPJSUA-Drop-Supported"

/* Whether `tag` is one of the comma- or space-separated tokens of `list`. */
static pj_bool_t cpj_list_has_token(const pj_str_t *list, const pj_str_t *tag) {
    pj_ssize_t i = 0;
    while (i < list->slen) {
        pj_ssize_t start;
        pj_str_t token;
        while (i < list->slen && (list->ptr[i] == ',' || list->ptr[i] == ' ' || list->ptr[i] == '\t')) ++i;
        start = i;
        while (i < list->slen && list->ptr[i] != ',' && list->ptr[i] != ' ' && list->ptr[i] != '\t') ++i;
        token.ptr = list->ptr + start;
        token.slen = i - start;
        if (token.slen > 0 && pj_stricmp(&token, tag) == 0) return PJ_TRUE;
    }
    return PJ_FALSE;
}

/* Whether the message Requires `tag`. */
static pj_bool_t cpj_msg_requires(pjsip_msg *msg, const pj_str_t *tag) {
    pjsip_require_hdr *require = (pjsip_require_hdr *)pjsip_msg_find_hdr(msg, PJSIP_H_REQUIRE, NULL);
    while (require) {
        unsigned i;
        for (i = 0; i < require->count; ++i) {
            if (pj_stricmp(&require->values[i], tag) == 0) return PJ_TRUE;
        }
        require = (pjsip_require_hdr *)pjsip_msg_find_hdr(msg, PJSIP_H_REQUIRE, require->next);
    }
    return PJ_FALSE;
}

/* Removes the marker; when there was one, rebuilds Supported without its tags. The
 * message's Supported header is a shallow clone of the endpoint's capability (its values
 * array is shared), so it is replaced rather than edited. */
static pj_status_t cpj_drop_supported(pjsip_tx_data *tdata) {
    pj_str_t name = pj_str((char *)CPJ_DROP_SUPPORTED_HEADER);
    pjsip_generic_string_hdr *marker;
    pjsip_supported_hdr *supported;
    pjsip_supported_hdr *rebuilt;
    unsigned i;
    marker = (pjsip_generic_string_hdr *)pjsip_msg_find_hdr_by_name(tdata->msg, &name, NULL);
    if (!marker) return PJ_SUCCESS;
    pj_list_erase(marker);
    pjsip_tx_data_invalidate_msg(tdata);
    supported = (pjsip_supported_hdr *)pjsip_msg_find_hdr(tdata->msg, PJSIP_H_SUPPORTED, NULL);
    if (!supported) return PJ_SUCCESS;
    rebuilt = pjsip_supported_hdr_create(tdata->pool);
    for (i = 0; i < supported->count && rebuilt->count < PJSIP_GENERIC_ARRAY_MAX_COUNT; ++i) {
        const pj_str_t *tag = &supported->values[i];
        if (cpj_list_has_token(&marker->hvalue, tag) && !cpj_msg_requires(tdata->msg, tag)) continue;
        pj_strdup(tdata->pool, &rebuilt->values[rebuilt->count++], tag);
    }
    pj_list_insert_before(supported, rebuilt);
    pj_list_erase(supported);
    /* A Supported header with no value left says nothing: leave it out. */
    if (rebuilt->count == 0) pj_list_erase(rebuilt);
    return PJ_SUCCESS;
}

/* Registers the module with the endpoint pjsua_init just created; call once per pjsua_init. */
pj_status_t cpj_register_drop_supported_module(void) {
    static pjsip_module module;
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pj_str_t name = pj_str((char *)"mod-swiftpjsua-drop-supported");
    if (!endpt) return PJ_EINVALIDOP;
    pj_bzero(&module, sizeof(module));
    module.name = name;
    module.id = -1;
    /* Before the transaction layer sends (and the transport layer prints) the message. */
    module.priority = PJSIP_MOD_PRIORITY_APPLICATION;
    module.on_tx_request = &cpj_drop_supported;
    module.on_tx_response = &cpj_drop_supported;
    return pjsip_endpt_register_module(endpt, &module);
}

/* The marker header's name, which the engine adds to an account's INVITEs and answers. */
pj_str_t cpj_drop_supported_header_name(void) { return pj_str((char *)CPJ_DROP_SUPPORTED_HEADER); }

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
