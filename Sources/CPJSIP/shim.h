/*
 * The one header Swift imports from pjproject.
 *
 * Every helper here is a header-only `static inline` function prefixed `cpj_`,
 * each with the reason it exists: Swift cannot import function-like or
 * expression macros, cannot index fixed-size C arrays without copying, and
 * cannot walk pjlib's intrusive lists safely on its own.
 */
#ifndef SWIFT_PJSUA_CPJSIP_SHIM_H
#define SWIFT_PJSUA_CPJSIP_SHIM_H

/* pjproject's pkg-config file passes these as -D flags, which SwiftPM filters out of
 * system-library targets; pjproject's headers need them to pick the autoconf'd config. */
#ifndef PJ_AUTOCONF
#define PJ_AUTOCONF 1
#endif

#include <pjsua-lib/pjsua.h>
#include <pjsua-lib/pjsua_internal.h>
#include <pjsip/sip_errno.h>
#include <pjlib-util/sha1.h>

/* ---- Status codes: pj_status_t bases differ between versions; never hard-code them. ---- */

/* PJ_SUCCESS is a plain macro, but spelled here so every status check reads the same. */
static inline pj_status_t cpj_success(void) { return PJ_SUCCESS; }
/* Expression macros (PJ_ERRNO_START_STATUS + n) are not imported by Swift. */
static inline pj_status_t cpj_status_einval(void) { return PJ_EINVAL; }
static inline pj_status_t cpj_status_enotfound(void) { return PJ_ENOTFOUND; }
static inline pj_status_t cpj_status_etoomany(void) { return PJ_ETOOMANY; }
static inline pj_status_t cpj_status_ebusy(void) { return PJ_EBUSY; }
static inline pj_status_t cpj_status_einvalidop(void) { return PJ_EINVALIDOP; }
static inline pj_status_t cpj_status_etimedout(void) { return PJ_ETIMEDOUT; }
static inline pj_status_t cpj_status_eexists(void) { return PJ_EEXISTS; }
static inline pj_status_t cpj_status_enomem(void) { return PJ_ENOMEM; }
static inline pj_status_t cpj_status_einvaliduri(void) { return PJSIP_EINVALIDURI; }
static inline pj_status_t cpj_status_esessionterminated(void) { return PJSIP_ESESSIONTERMINATED; }
static inline pj_status_t cpj_status_esessionstate(void) { return PJSIP_ESESSIONSTATE; }

/* PJSIP_ERRNO_FROM_SIP_STATUS / PJSIP_ERRNO_TO_SIP_STATUS are function-like macros. */
static inline pj_status_t cpj_status_from_sip(int code) { return PJSIP_ERRNO_FROM_SIP_STATUS(code); }
static inline int cpj_sip_code_from_status(pj_status_t status) {
    if (status >= PJSIP_ERRNO_FROM_SIP_STATUS(100) && status < PJSIP_ERRNO_FROM_SIP_STATUS(800))
        return PJSIP_ERRNO_TO_SIP_STATUS(status);
    return 0;
}

/* ---- Build-time limits (expression macros in config_site.h). ---- */

static inline unsigned cpj_max_calls(void) { return PJSUA_MAX_CALLS; }
static inline unsigned cpj_max_accounts(void) { return PJSUA_MAX_ACC; }
static inline unsigned cpj_max_sdp_media(void) { return PJMEDIA_MAX_SDP_MEDIA; }
static inline int cpj_invalid_id(void) { return PJSUA_INVALID_ID; }

/* ---- Fixed-size arrays inside info structs: Swift sees them as tuples. ---- */

static inline const pjsua_call_media_info *
cpj_call_info_media(const pjsua_call_info *info, unsigned index) {
    return index < info->media_cnt ? &info->media[index] : NULL;
}

/* The audio arm of an anonymous union inside pjsua_call_media_info. */
static inline pjsua_conf_port_id cpj_call_media_conf_slot(const pjsua_call_media_info *m) {
    return m->stream.aud.conf_slot;
}

/* ---- Name-address URIs: the vtable call that tells a name-addr from a bare URI. ---- */

/* The display-name of a From/To/Contact URI, or an empty string for a bare URI.
 * pjsip keeps the display-name without its surrounding quotes, escapes intact. */
static inline pj_str_t cpj_uri_display(const pjsip_uri *uri) {
    pj_str_t empty = { NULL, 0 };
    if (uri == NULL) return empty;
    if ((const void *)pjsip_uri_get_uri(uri) == (const void *)uri) return empty;
    return ((const pjsip_name_addr *)uri)->display;
}

/* ---- SIP message headers: pjlib's intrusive list has a sentinel, not NULL. ---- */

static inline const pjsip_msg *cpj_rdata_msg(const pjsip_rx_data *rdata) {
    return rdata ? rdata->msg_info.msg : NULL;
}

static inline const pjsip_hdr *cpj_msg_first_header(const pjsip_msg *msg) {
    if (msg == NULL || msg->hdr.next == &msg->hdr) return NULL;
    return msg->hdr.next;
}

static inline const pjsip_hdr *cpj_msg_next_header(const pjsip_msg *msg, const pjsip_hdr *hdr) {
    if (msg == NULL || hdr == NULL || hdr->next == &msg->hdr) return NULL;
    return hdr->next;
}

/* Prints "Name: value" into buf; returns the length or -1 when it does not fit. */
static inline int cpj_header_print(const pjsip_hdr *hdr, char *buf, pj_size_t size) {
    return pjsip_hdr_print_on((void *)hdr, buf, size);
}

/* The From header's URI of a received request. */
static inline const pjsip_uri *cpj_rdata_from_uri(const pjsip_rx_data *rdata) {
    return (rdata && rdata->msg_info.from) ? rdata->msg_info.from->uri : NULL;
}

/* The request's Call-ID in full (pjsua_call_info keeps only its first 127 bytes). */
static inline pj_str_t cpj_rdata_call_id(const pjsip_rx_data *rdata) {
    pj_str_t empty = { NULL, 0 };
    return (rdata && rdata->msg_info.cid) ? rdata->msg_info.cid->id : empty;
}

/* ---- Account configuration: fixed-size arrays and pjlib lists inside pjsua_acc_config. ---- */

static inline unsigned cpj_acc_max_credentials(void) { return PJSUA_ACC_MAX_PROXIES; }
static inline unsigned cpj_acc_max_proxies(void) { return PJSUA_ACC_MAX_PROXIES; }

static inline pjsip_cred_info *cpj_acc_credential(pjsua_acc_config *cfg, unsigned index) {
    return index < PJSUA_ACC_MAX_PROXIES ? &cfg->cred_info[index] : NULL;
}

static inline void cpj_acc_set_proxy(pjsua_acc_config *cfg, unsigned index, pj_str_t uri) {
    if (index < PJSUA_ACC_MAX_PROXIES) cfg->proxy[index] = uri;
}

/* pj_list_push_back may be an inline function or a macro depending on PJ_FUNCTIONS_ARE_INLINED. */
static inline void cpj_acc_add_register_header(pjsua_acc_config *cfg, pj_pool_t *pool, pj_str_t name, pj_str_t value) {
    pjsip_generic_string_hdr *hdr = pjsip_generic_string_hdr_create(pool, &name, &value);
    if (hdr) pj_list_push_back(&cfg->reg_hdr_list, hdr);
}

static inline pj_uint32_t cpj_cred_plain_password(void) { return PJSIP_CRED_DATA_PLAIN_PASSWD; }
static inline pj_uint32_t cpj_cred_digest(void) { return PJSIP_CRED_DATA_DIGEST; }

/* ---- Media streams: pjsua hands a call's stream to pjmedia without a NULL check. ---- */

/* pjsua_call_get_stream_info and pjsua_call_get_stream_stat pass the call's audio stream
 * straight to pjmedia, which asserts (aborts, in a debug pjproject) when it is NULL. The
 * stream is torn down on pjsua's threads when the call ends or its media is removed, so a
 * caller that saw active media a moment earlier can race it. These check the stream under
 * pjsua's lock (recursive; the wrapped functions take it again) and return PJ_ENOTFOUND
 * when there is none. */
static inline pj_bool_t cpj_call_has_audio_stream(pjsua_call_id call_id, unsigned med_idx) {
    const pjsua_call *call = &pjsua_var.calls[call_id];
    return med_idx < call->med_cnt && call->media[med_idx].type == PJMEDIA_TYPE_AUDIO &&
           call->media[med_idx].strm.a.stream != NULL;
}

static inline pj_status_t cpj_call_get_stream_info(pjsua_call_id call_id, unsigned med_idx,
                                                   pjsua_stream_info *info) {
    pj_status_t status;
    if (call_id < 0 || call_id >= (int)pjsua_call_get_max_count()) return PJ_EINVAL;
    PJSUA_LOCK();
    status = cpj_call_has_audio_stream(call_id, med_idx)
                 ? pjsua_call_get_stream_info(call_id, med_idx, info) : PJ_ENOTFOUND;
    PJSUA_UNLOCK();
    return status;
}

static inline pj_status_t cpj_call_get_stream_stat(pjsua_call_id call_id, unsigned med_idx,
                                                   pjsua_stream_stat *stat) {
    pj_status_t status;
    if (call_id < 0 || call_id >= (int)pjsua_call_get_max_count()) return PJ_EINVAL;
    PJSUA_LOCK();
    status = cpj_call_has_audio_stream(call_id, med_idx)
                 ? pjsua_call_get_stream_stat(call_id, med_idx, stat) : PJ_ENOTFOUND;
    PJSUA_UNLOCK();
    return status;
}

/* ---- Threads: pj_thread_desc is an array typedef, awkward to allocate from Swift. ---- */

static inline pj_size_t cpj_thread_desc_size(void) { return sizeof(pj_thread_desc); }

static inline pj_status_t cpj_thread_register(const char *name, void *desc, pj_thread_t **thread) {
    return pj_thread_register(name, (long *)desc, thread);
}

/* pjsua_schedule_timer2 is a macro when PJ_TIMER_DEBUG is set; this is callable either way. */
static inline pj_status_t cpj_schedule_timer(void (*cb)(void *user_data), void *user_data, unsigned msec_delay) {
    return pjsua_schedule_timer2(cb, user_data, msec_delay);
}

/* ---- Call features: message data headers, DTMF constants. ---- */

/* Adds "name: value" to a pjsua_msg_data's header list; pj_list_push_back may be a macro.
 * pjsip_generic_string_hdr_create copies both strings into the pool. */
static inline pj_bool_t cpj_msg_data_add_header(pjsua_msg_data *data, pj_pool_t *pool, pj_str_t name, pj_str_t value) {
    pjsip_generic_string_hdr *hdr = pjsip_generic_string_hdr_create(pool, &name, &value);
    if (hdr == NULL) return PJ_FALSE;
    pj_list_push_back(&data->hdr_list, hdr);
    return PJ_TRUE;
}

/* An enum constant used as a bit in an unsigned flags field: spell it as unsigned. */
static inline unsigned cpj_dtmf_flag_is_end(void) { return PJMEDIA_STREAM_DTMF_IS_END; }
/* PJSUA_UNKNOWN_DTMF_DURATION is a cast expression macro. */
static inline unsigned cpj_dtmf_unknown_duration(void) { return PJSUA_UNKNOWN_DTMF_DURATION; }

/* ---- Requests nothing handles: pjsua leaves them unanswered (its sample app, not the
 * library, adds a default handler), so a peer would retransmit into silence until its
 * transaction times out. This last-priority module gives each a final response: 481 for a
 * request aimed at a dialog or transaction that does not exist (a To tag, BYE, CANCEL,
 * NOTIFY; RFC 3261 §12.2.2, §15.1.2, RFC 6665 §4.1.3), 405 with Allow otherwise. ACK gets
 * none. ---- */

static inline pj_bool_t cpj_unhandled_on_rx_request(pjsip_rx_data *rdata) {
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
static inline pj_status_t cpj_register_unhandled_request_responder(void) {
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

/* pjsua_verify_sip_url parses in a fixed 1024-byte pool with no growth and no exception
 * handler around the copy: a URI of about 1000 bytes or more makes the pool throw with no
 * PJ_TRY, which asserts (aborts the process). This does the same check in a pool that
 * grows: the text parses as a URI, the whole text, with scheme sip or sips. */
static inline pj_status_t cpj_verify_sip_uri(const char *text, pj_size_t length) {
    pj_pool_t *pool;
    char *copy;
    pjsip_uri *uri;
    pj_status_t status = PJSIP_EINVALIDURI;
    if (!text || length == 0) return PJSIP_EINVALIDURI;
    /* The pool comes from pjsua's factory, which exists only between create and destroy. */
    if (pjsua_get_state() == PJSUA_STATE_NULL) return PJ_EINVALIDOP;
    pool = pjsua_pool_create("verify-uri", length + 1024, 1024);
    if (!pool) return PJ_ENOMEM;
    copy = (char *)pj_pool_alloc(pool, length + 1);
    pj_memcpy(copy, text, length);
    copy[length] = '\0';
    uri = pjsip_parse_uri(pool, copy, length, 0);
    if (uri) {
        const pj_str_t *scheme = pjsip_uri_get_scheme(uri);
        if (pj_stricmp2(scheme, "sip") == 0 || pj_stricmp2(scheme, "sips") == 0) status = PJ_SUCCESS;
    }
    pj_pool_release(pool);
    return status;
}

#endif
