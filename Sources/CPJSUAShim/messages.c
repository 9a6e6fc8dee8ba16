/*
 * Reading and checking SIP messages: URIs, header lists and parses that pjsip offers only
 * as macros, as intrusive lists with a sentinel, or with assertions on long input.
 */
#include "CPJSUAShim.h"

/* The display-name of a From/To/Contact URI, or an empty string for a bare URI (pjsip tells
 * a name-addr from a bare URI by a vtable call, which Swift cannot make).
 * pjsip keeps the display-name without its surrounding quotes, escapes intact. */
pj_str_t cpj_uri_display(const pjsip_uri *uri) {
    pj_str_t empty = { NULL, 0 };
    if (uri == NULL) return empty;
    if ((const void *)pjsip_uri_get_uri(uri) == (const void *)uri) return empty;
    return ((const pjsip_name_addr *)uri)->display;
}

/* ---- SIP message headers: pjlib's intrusive list has a sentinel, not NULL. ---- */

/* A received message's parsed form, NULL-safe (Swift reads it through these). */
const pjsip_msg *cpj_rdata_msg(const pjsip_rx_data *rdata) {
    return rdata ? rdata->msg_info.msg : NULL;
}

/* The message's body as it arrived (its bytes, not NUL-terminated), or an empty string. */
pj_str_t cpj_rdata_body(const pjsip_rx_data *rdata) {
    pj_str_t body = {NULL, 0};
    if (rdata && rdata->msg_info.msg && rdata->msg_info.msg->body && rdata->msg_info.msg->body->data) {
        body.ptr = (char *)rdata->msg_info.msg->body->data;
        body.slen = (pj_ssize_t)rdata->msg_info.msg->body->len;
    }
    return body;
}

/* The message's first header, or NULL for none: the list's end is its sentinel. */
const pjsip_hdr *cpj_msg_first_header(const pjsip_msg *msg) {
    if (msg == NULL || msg->hdr.next == &msg->hdr) return NULL;
    return msg->hdr.next;
}

/* The header after `hdr`, or NULL at the sentinel. */
const pjsip_hdr *cpj_msg_next_header(const pjsip_msg *msg, const pjsip_hdr *hdr) {
    if (msg == NULL || hdr == NULL || hdr->next == &msg->hdr) return NULL;
    return hdr->next;
}

/* Prints "Name: value" into buf; returns the length or -1 when it does not fit. */
int cpj_header_print(const pjsip_hdr *hdr, char *buf, pj_size_t size) {
    return pjsip_hdr_print_on((void *)hdr, buf, size);
}

/* The From header's URI of a received request. */
const pjsip_uri *cpj_rdata_from_uri(const pjsip_rx_data *rdata) {
    return (rdata && rdata->msg_info.from) ? rdata->msg_info.from->uri : NULL;
}

/* The request's Call-ID in full (pjsua_call_info keeps only its first 127 bytes). */
pj_str_t cpj_rdata_call_id(const pjsip_rx_data *rdata) {
    pj_str_t empty = { NULL, 0 };
    return (rdata && rdata->msg_info.cid) ? rdata->msg_info.cid->id : empty;
}

/* Adds "name: value" to a pjsua_msg_data's header list; pj_list_push_back may be a macro.
 * pjsip_generic_string_hdr_create copies both strings into the pool. */
pj_bool_t cpj_msg_data_add_header(pjsua_msg_data *data, pj_pool_t *pool, pj_str_t name, pj_str_t value) {
    pjsip_generic_string_hdr *hdr = pjsip_generic_string_hdr_create(pool, &name, &value);
    if (hdr == NULL) return PJ_FALSE;
    pj_list_push_back(&data->hdr_list, hdr);
    return PJ_TRUE;
}

/* pjsua_verify_sip_url parses in a fixed 1024-byte pool with no growth and no exception
 * handler around the copy: a URI of about 1000 bytes or more makes the pool throw with no
 * PJ_TRY, which asserts (aborts the process). This does the same check in a pool that
 * grows: the text parses as a URI, the whole text, with scheme sip or sips. */
pj_status_t cpj_verify_sip_uri(const char *text, pj_size_t length) {
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

/* Whether pjsip's parser accepts `value` for a header named `name` (a known header's syntax:
 * Expires, Max-Forwards, Replaces, Require…; any text for an unknown one). An app header
 * pjsip cannot parse would make the far end's pjsip drop the whole request unanswered. The
 * copy is NUL-terminated, as pjsip's scanner needs. PJ_TRUE when pjsua is not created. */
pj_bool_t cpj_header_parses(const char *name, pj_size_t name_len, const char *value, pj_size_t value_len) {
    pj_pool_t *pool;
    char *copy;
    pj_str_t hname;
    void *parsed;
    if (pjsua_get_state() == PJSUA_STATE_NULL) return PJ_TRUE;
    pool = pjsua_pool_create("hdr-check", value_len + name_len + 512, 512);
    if (!pool) return PJ_TRUE;
    copy = (char *)pj_pool_alloc(pool, name_len + value_len + 2);
    pj_memcpy(copy, name, name_len);
    copy[name_len] = '\0';
    hname = pj_str(copy);
    pj_memcpy(copy + name_len + 1, value, value_len);
    copy[name_len + 1 + value_len] = '\0';
    parsed = pjsip_parse_hdr(pool, &hname, copy + name_len + 1, value_len, NULL);
    pj_pool_release(pool);
    return parsed != NULL ? PJ_TRUE : PJ_FALSE;
}

