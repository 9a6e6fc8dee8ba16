/*
 * RFC checks: requests pjsip accepts or drops that RFC 3261 and RFC 4566 want answered.
 * One module, registered after pjsua_init by cpj_register_rfc_checks, at a priority after
 * the transaction layer (a retransmission of a transaction in progress is absorbed there
 * and never reaches it) and before the UA layer (dialogs) and pjsua's modules. In the order
 * RFC 3261 §8.2 and §18.3 give them:
 *   513 a UDP request that filled pjsip's receive buffer (sizeof pkt_info.packet, i.e.
 *       PJSIP_MAX_PKT_LEN of the pjproject being built against) and is not complete
 *       there: the kernel cut the datagram, the rest would be parsed as if whole;
 *   400 a UDP request whose Content-Length is larger than the body that arrived (§18.3);
 *   416 a Request-URI scheme other than sip, sips or tel (§8.2.2.1);
 *   482 a request without a To tag whose From tag, Call-ID and CSeq match a server
 *       transaction still in progress that it does not belong to (§8.2.2.2);
 *   420 with Unsupported (and Supported, as pjsip's INVITE check sends) for Require
 *       option tags the endpoint does not list in Supported, on requests other than
 *       INVITE, ACK and CANCEL (§8.2.2.3; pjsip_inv_verify_request does INVITEs);
 *   488 an INVITE whose SDP has a NUL byte or a media port above 65535 (RFC 4566 §5.14;
 *       pjmedia 2.12 truncates the port to 16 bits, 2.17's parser fails and pjsip 400s).
 * Methods the endpoint does not Allow are left alone (405 comes first, §8.2.1); ACK is
 * never answered. A TCP or TLS message too large for the buffer never reaches a module:
 * the transport manager drops it and reports it to the drop-data callback, which answers
 * 513 on the connection from the header lines that did arrive and shuts it down.
 *
 * State: the merged-request table (below), one struct behind one lock.
 */
#include "CPJSUAShim.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A response to rdata, in a server transaction (retransmitted over UDP, ACK absorbed),
 * or stateless where a transaction must not be created (482: a second UAS transaction
 * would take the merged one's place in pjsip's own merged-request table). */
static void cpj_rfc_respond(pjsip_rx_data *rdata, int code, const pjsip_hdr *headers, pj_bool_t stateful) {
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    if (stateful && pjsip_endpt_respond(endpt, NULL, rdata, code, NULL, headers, NULL, NULL) == PJ_SUCCESS) return;
    pjsip_endpt_respond_stateless(endpt, rdata, code, NULL, headers, NULL);
}

/* The bytes of the message after the blank line that ends its headers, or -1 when the
 * datagram has no blank line (it ends inside the header section). */
static pj_ssize_t cpj_rfc_body_received(const char *buffer, pj_ssize_t length) {
    pj_ssize_t i;
    for (i = 0; i + 1 < length; ++i) {
        if (buffer[i] != '\n') continue;
        if (buffer[i + 1] == '\n') return length - (i + 2);
        if (i + 2 < length && buffer[i + 1] == '\r' && buffer[i + 2] == '\n') return length - (i + 3);
    }
    return -1;
}

/* Whether an SDP body has a NUL byte or an m= line whose port is no 16-bit number. */
static pj_bool_t cpj_rfc_sdp_is_malformed(const char *sdp, pj_size_t length) {
    pj_size_t i = 0;
    if (memchr(sdp, 0, length) != NULL) return PJ_TRUE;
    while (i < length) {
        pj_size_t line = i;
        while (i < length && sdp[i] != '\n') ++i;
        if (i - line > 2 && sdp[line] == 'm' && sdp[line + 1] == '=') {
            pj_size_t j = line + 2;
            unsigned long port = 0;
            pj_size_t digits = 0;
            while (j < i && sdp[j] != ' ') ++j;
            while (j < i && sdp[j] == ' ') ++j;
            while (j < i && sdp[j] >= '0' && sdp[j] <= '9' && digits < 10) {
                port = port * 10 + (unsigned long)(sdp[j] - '0');
                ++j;
                ++digits;
            }
            if (digits == 0 || port > 65535 || (j < i && sdp[j] >= '0' && sdp[j] <= '9')) return PJ_TRUE;
        }
        ++i;
    }
    return PJ_FALSE;
}

/* Merged-request table: a slot per (From tag, Call-ID, CSeq) hash holding the key of the
 * server transaction of the last request seen with it. pjsip 2.12.1 has no merged-request
 * check; 2.17's pjsua has one (pjsip_tsx_detect_merged_requests) for the requests that
 * reach mod-pjsua, which gives the same 482. A collision only forgets a request, it never
 * joins two. */
enum { CPJ_RFC_MERGED_SLOTS = 256, CPJ_RFC_KEY_MAX = 320 };
typedef struct {
    char merge_key[CPJ_RFC_KEY_MAX];
    pj_ssize_t merge_key_length;
    char tsx_key[CPJ_RFC_KEY_MAX];
    pj_ssize_t tsx_key_length;
} cpj_rfc_merged_slot;

/* The table, cleared by each cpj_register_rfc_checks; pjsip's worker threads read and
 * write it from the module's callback. */
static struct {
    pthread_mutex_t lock; /* guards slots */
    cpj_rfc_merged_slot slots[CPJ_RFC_MERGED_SLOTS];
} cpj_rfc_merged = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Whether rdata (no To tag) is a merged request; records it otherwise. */
static pj_bool_t cpj_rfc_is_merged(pjsip_rx_data *rdata) {
    pjsip_msg *msg = rdata->msg_info.msg;
    char merge_key[CPJ_RFC_KEY_MAX];
    char earlier[CPJ_RFC_KEY_MAX];
    pj_str_t tsx_key, found = {earlier, 0};
    int length;
    unsigned slot;
    pj_status_t status;
    cpj_rfc_merged_slot *entry;
    /* The CSeq method is part of the key: a CANCEL or a PRACK with the INVITE's CSeq
     * number belongs to another transaction. */
    length = pj_ansi_snprintf(merge_key, sizeof(merge_key), "%.*s$%u$%.*s$%.*s",
                              (int)rdata->msg_info.cseq->method.name.slen, rdata->msg_info.cseq->method.name.ptr,
                              (unsigned)rdata->msg_info.cseq->cseq, (int)rdata->msg_info.from->tag.slen,
                              rdata->msg_info.from->tag.ptr, (int)rdata->msg_info.cid->id.slen,
                              rdata->msg_info.cid->id.ptr);
    if (length <= 0 || length >= (int)sizeof(merge_key)) return PJ_FALSE;
    status = pjsip_tsx_create_key(rdata->tp_info.pool, &tsx_key, PJSIP_ROLE_UAS, &msg->line.req.method, rdata);
    if (status != PJ_SUCCESS || tsx_key.slen >= CPJ_RFC_KEY_MAX) return PJ_FALSE;
    slot = pj_hash_calc(0, merge_key, (unsigned)length) % CPJ_RFC_MERGED_SLOTS;
    pthread_mutex_lock(&cpj_rfc_merged.lock);
    entry = &cpj_rfc_merged.slots[slot];
    if (entry->merge_key_length == length && memcmp(entry->merge_key, merge_key, (size_t)length) == 0 &&
        !(entry->tsx_key_length == tsx_key.slen && memcmp(entry->tsx_key, tsx_key.ptr, (size_t)tsx_key.slen) == 0)) {
        memcpy(earlier, entry->tsx_key, (size_t)entry->tsx_key_length);
        found.slen = entry->tsx_key_length;
    }
    pthread_mutex_unlock(&cpj_rfc_merged.lock);
    /* In progress: the earlier request's server transaction still exists. */
    if (found.slen > 0 && pjsip_tsx_layer_find_tsx(&found, PJ_FALSE) != NULL) return PJ_TRUE;
    pthread_mutex_lock(&cpj_rfc_merged.lock);
    memcpy(entry->merge_key, merge_key, (size_t)length);
    entry->merge_key_length = length;
    memcpy(entry->tsx_key, tsx_key.ptr, (size_t)tsx_key.slen);
    entry->tsx_key_length = tsx_key.slen;
    pthread_mutex_unlock(&cpj_rfc_merged.lock);
    return PJ_FALSE;
}

/* The module's on_rx_request: the checks listed at the top, in order; PJ_TRUE when answered. */
static pj_bool_t cpj_rfc_on_rx_request(pjsip_rx_data *rdata) {
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pjsip_msg *msg = rdata->msg_info.msg;
    const pjsip_method *method = &msg->line.req.method;
    pj_bool_t is_ack = method->id == PJSIP_ACK_METHOD;
    pjsip_hdr headers;
    pj_list_init(&headers);

    /* RFC 3261 §18.3: over UDP the datagram is the message; its Content-Length must fit. */
    if (rdata->tp_info.transport->flag & PJSIP_TRANSPORT_DATAGRAM) {
        pj_ssize_t body = cpj_rfc_body_received(rdata->msg_info.msg_buf, rdata->msg_info.len);
        long declared = rdata->msg_info.clen ? (long)rdata->msg_info.clen->len : -1;
        pj_bool_t filled = rdata->pkt_info.len >= (pj_ssize_t)sizeof(rdata->pkt_info.packet);
        /* A full buffer is a cut datagram unless the message provably ends there (a
         * datagram of exactly the buffer's size): headers closed, Content-Length met. */
        if (filled && !(body >= 0 && declared >= 0 && (long)body == declared)) {
            if (!is_ack) cpj_rfc_respond(rdata, PJSIP_SC_MESSAGE_TOO_LARGE, NULL, PJ_FALSE);
            return PJ_TRUE;
        }
        if (declared > 0 && (body < 0 || (long)body < declared)) {
            if (!is_ack) cpj_rfc_respond(rdata, PJSIP_SC_BAD_REQUEST, NULL, PJ_TRUE);
            return PJ_TRUE;
        }
    }
    if (is_ack) return PJ_FALSE;
    /* §8.2.1 first: a method nothing here allows gets its 405 from later modules. */
    if (method->id != PJSIP_INVITE_METHOD && method->id != PJSIP_CANCEL_METHOD &&
        !pjsip_endpt_has_capability(endpt, PJSIP_H_ALLOW, NULL, &method->name))
        return PJ_FALSE;

    /* §8.2.2.1: a scheme we cannot route on: the stand-in the drop-data callback put in
     * place of one (marked by the NUL before it), or any other "other" URI. */
    {
        const pj_str_t *scheme = pjsip_uri_get_scheme(msg->line.req.uri);
        pj_bool_t stand_in = rdata->msg_info.msg_buf > rdata->pkt_info.packet && rdata->msg_info.msg_buf[-1] == '\0' &&
                             PJSIP_URI_SCHEME_IS_SIP(msg->line.req.uri) &&
                             pj_stricmp2(&((pjsip_sip_uri *)pjsip_uri_get_uri(msg->line.req.uri))->host, "x") == 0;
        if (stand_in || !scheme ||
            (pj_stricmp2(scheme, "sip") != 0 && pj_stricmp2(scheme, "sips") != 0 && pj_stricmp2(scheme, "tel") != 0)) {
            cpj_rfc_respond(rdata, PJSIP_SC_UNSUPPORTED_URI_SCHEME, NULL, PJ_TRUE);
            return PJ_TRUE;
        }
    }

    /* §8.2.2.2 */
    if (rdata->msg_info.to->tag.slen == 0 && cpj_rfc_is_merged(rdata)) {
        cpj_rfc_respond(rdata, PJSIP_SC_LOOP_DETECTED, NULL, PJ_FALSE);
        return PJ_TRUE;
    }

    /* §8.2.2.3, for what pjsip_inv_verify_request does not see. */
    if (method->id != PJSIP_INVITE_METHOD && method->id != PJSIP_CANCEL_METHOD) {
        pjsip_unsupported_hdr *unsupported = NULL;
        const pjsip_require_hdr *require = (const pjsip_require_hdr *)pjsip_msg_find_hdr(msg, PJSIP_H_REQUIRE, NULL);
        while (require) {
            unsigned i;
            for (i = 0; i < require->count; ++i) {
                if (pjsip_endpt_has_capability(endpt, PJSIP_H_SUPPORTED, NULL, &require->values[i])) continue;
                if (!unsupported) unsupported = pjsip_unsupported_hdr_create(rdata->tp_info.pool);
                if (unsupported->count < PJSIP_GENERIC_ARRAY_MAX_COUNT)
                    unsupported->values[unsupported->count++] = require->values[i];
            }
            require = (const pjsip_require_hdr *)pjsip_msg_find_hdr(msg, PJSIP_H_REQUIRE, require->next);
        }
        if (unsupported) {
            const pjsip_hdr *supported = pjsip_endpt_get_capability(endpt, PJSIP_H_SUPPORTED, NULL);
            pj_list_push_back(&headers, unsupported);
            if (supported) pj_list_push_back(&headers, pjsip_hdr_clone(rdata->tp_info.pool, supported));
            cpj_rfc_respond(rdata, PJSIP_SC_BAD_EXTENSION, &headers, PJ_TRUE);
            return PJ_TRUE;
        }
    }

    /* RFC 4566 and RFC 3264 §6: an offer we cannot read as sent is not acceptable. */
    if (method->id == PJSIP_INVITE_METHOD && msg->body && msg->body->data &&
        pj_stricmp2(&msg->body->content_type.type, "application") == 0 &&
        pj_stricmp2(&msg->body->content_type.subtype, "sdp") == 0 &&
        cpj_rfc_sdp_is_malformed((const char *)msg->body->data, msg->body->len)) {
        pj_str_t text = pj_str((char *)"Malformed SDP: a NUL byte or a port above 65535");
        pjsip_warning_hdr *warning = pjsip_warning_hdr_create(rdata->tp_info.pool, 399, pjsip_endpt_name(endpt), &text);
        if (warning) pj_list_push_back(&headers, warning);
        cpj_rfc_respond(rdata, PJSIP_SC_NOT_ACCEPTABLE_HERE, &headers, PJ_TRUE);
        return PJ_TRUE;
    }
    return PJ_FALSE;
}

/* The header lines of a stream message too large for the buffer: everything up to the
 * blank line, or up to the last complete line when the headers alone overflowed. */
static void cpj_rfc_answer_overflow(pjsip_transport *transport, const char *data, pj_size_t length) {
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pj_pool_t *pool;
    pj_size_t head = 0, i;
    char *text;
    pjsip_msg *request, *response;
    pjsip_tx_data *tdata = NULL;
    pjsip_response_addr address;
    const pjsip_hdr *hdr;
    const pjsip_hdr *required[4];
    unsigned k;
    for (i = 0; i < length; ++i) {
        if (data[i] != '\n') continue;
        head = i + 1;
        if (i + 1 < length && data[i + 1] == '\n') break;
        if (i + 2 < length && data[i + 1] == '\r' && data[i + 2] == '\n') break;
    }
    if (head == 0) return;
    pool = pjsip_endpt_create_pool(endpt, "rfc513", head + 2048, 1024);
    if (!pool) return;
    text = (char *)pj_pool_alloc(pool, head + 3);
    pj_memcpy(text, data, head);
    text[head] = '\r';
    text[head + 1] = '\n';
    text[head + 2] = '\0';
    request = pjsip_parse_msg(pool, text, head + 2, NULL);
    if (!request || request->type != PJSIP_REQUEST_MSG || request->line.req.method.id == PJSIP_ACK_METHOD ||
        !pjsip_msg_find_hdr(request, PJSIP_H_VIA, NULL)) {
        pj_pool_release(pool);
        return;
    }
    required[0] = pjsip_msg_find_hdr(request, PJSIP_H_FROM, NULL);
    required[1] = pjsip_msg_find_hdr(request, PJSIP_H_TO, NULL);
    required[2] = pjsip_msg_find_hdr(request, PJSIP_H_CALL_ID, NULL);
    required[3] = pjsip_msg_find_hdr(request, PJSIP_H_CSEQ, NULL);
    for (k = 0; k < 4; ++k) {
        if (!required[k]) {
            pj_pool_release(pool);
            return;
        }
    }
    if (pjsip_endpt_create_tdata(endpt, &tdata) != PJ_SUCCESS) {
        pj_pool_release(pool);
        return;
    }
    pjsip_tx_data_add_ref(tdata);
    response = pjsip_msg_create(tdata->pool, PJSIP_RESPONSE_MSG);
    response->line.status.code = PJSIP_SC_MESSAGE_TOO_LARGE;
    response->line.status.reason = *pjsip_get_status_text(PJSIP_SC_MESSAGE_TOO_LARGE);
    tdata->msg = response;
    for (hdr = pjsip_msg_find_hdr(request, PJSIP_H_VIA, NULL); hdr;
         hdr = pjsip_msg_find_hdr(request, PJSIP_H_VIA, hdr->next))
        pjsip_msg_add_hdr(response, (pjsip_hdr *)pjsip_hdr_clone(tdata->pool, hdr));
    for (k = 0; k < 4; ++k) pjsip_msg_add_hdr(response, (pjsip_hdr *)pjsip_hdr_clone(tdata->pool, required[k]));
    pj_pool_release(pool);
    pj_bzero(&address, sizeof(address));
    address.transport = transport;
    pj_memcpy(&address.addr, &transport->key.rem_addr, sizeof(address.addr));
    address.addr_len = transport->addr_len;
    if (pjsip_endpt_send_response(endpt, &address, tdata, NULL, NULL) != PJ_SUCCESS) pjsip_tx_data_dec_ref(tdata);
}

/* The Request-URI a request with an unknown scheme is re-read with, after a NUL marker. */
#define CPJ_RFC_SCHEME_STAND_IN "sip:x"

/* Whether a header line is `name:` (any case, blanks allowed before the colon). */
static pj_bool_t cpj_rfc_is_header(const char *line, pj_size_t length, const char *name) {
    pj_size_t n = strlen(name), i = n;
    if (length < n || pj_ansi_strnicmp(line, name, n) != 0) return PJ_FALSE;
    while (i < length && (line[i] == ' ' || line[i] == '\t')) ++i;
    return i < length && line[i] == ':';
}

/* pjsip parses a Request-URI of an unknown scheme as an "other" URI but leaves the space
 * after it unread, so the SIP-Version fails and the whole request is dropped as a syntax
 * error before any module sees it. The drop-data callback may hand data back to be read
 * again from an offset (pjsip_tp_dropped_data.len): this rewrites the request in place,
 * one byte on, with CPJ_RFC_SCHEME_STAND_IN as its Request-URI, without Content-Type and
 * with the rest framed as an ignored body, so the RFC-check module gets it (with the
 * source address and transport pjsip recorded) and answers 416. Returns whether it did. */
static pj_bool_t cpj_rfc_reframe_unknown_scheme(pjsip_tp_dropped_data *dropped) {
    char *data = (char *)dropped->data;
    pj_size_t length = dropped->len, i = 0, method_end, uri_start, uri_end, colon = 0, line_end, head_end, at;
    pj_size_t used = 0, pad, digits;
    int pass;
    char *copy;
    const char *version = " SIP/2.0";
    pj_bool_t skipping = PJ_FALSE;
    while (i < length && data[i] != ' ' && data[i] != '\r' && data[i] != '\n') ++i;
    method_end = i;
    if (method_end == 0 || i >= length || data[i] != ' ') return PJ_FALSE;
    uri_start = ++i;
    while (i < length && data[i] != ' ' && data[i] != '\r' && data[i] != '\n') {
        if (data[i] == ':' && colon == 0) colon = i;
        ++i;
    }
    uri_end = i;
    if (colon == 0 || colon == uri_start || !pj_isalpha(data[uri_start])) return PJ_FALSE;
    for (at = uri_start; at < colon; ++at)
        if (!pj_isalnum(data[at]) && data[at] != '+' && data[at] != '-' && data[at] != '.') return PJ_FALSE;
    if ((colon - uri_start == 3 && pj_ansi_strnicmp(data + uri_start, "sip", 3) == 0) ||
        (colon - uri_start == 4 && pj_ansi_strnicmp(data + uri_start, "sips", 4) == 0) ||
        (colon - uri_start == 3 && pj_ansi_strnicmp(data + uri_start, "tel", 3) == 0))
        return PJ_FALSE;
    if (length - uri_end < 8 || pj_ansi_strnicmp(data + uri_end, version, 8) != 0) return PJ_FALSE;
    line_end = uri_end + 8;
    if (line_end < length && data[line_end] == '\r') ++line_end;
    if (line_end >= length || data[line_end] != '\n') return PJ_FALSE;
    ++line_end;
    /* The header lines: up to the blank line, or everything when there is none. */
    for (head_end = line_end; head_end < length; ) {
        pj_size_t next = head_end;
        while (next < length && data[next] != '\n') ++next;
        if (next - head_end == 0 || (next - head_end == 1 && data[head_end] == '\r')) break;
        head_end = next < length ? next + 1 : next;
    }
    copy = (char *)malloc(length);
    if (!copy) return PJ_FALSE;
    /* Start line, then every header but the body's (on a second pass, when that does not
     * fit, only those a response copies), then Content-Length over the rest. */
    for (pass = 0; pass < 2; ++pass) {
        used = method_end;
        pj_memcpy(copy, data, method_end);
        pj_memcpy(copy + used, " " CPJ_RFC_SCHEME_STAND_IN " SIP/2.0\r\n", strlen(CPJ_RFC_SCHEME_STAND_IN) + 11);
        used += strlen(CPJ_RFC_SCHEME_STAND_IN) + 11;
        skipping = PJ_FALSE;
        for (at = line_end; at < head_end; ) {
            pj_size_t next = at, size;
            while (next < head_end && data[next] != '\n') ++next;
            size = (next < head_end ? next + 1 : next) - at;
            if (data[at] != ' ' && data[at] != '\t') {
                const char *line = data + at;
                skipping = cpj_rfc_is_header(line, size, "Content-Length") || cpj_rfc_is_header(line, size, "l") ||
                           cpj_rfc_is_header(line, size, "Content-Type") || cpj_rfc_is_header(line, size, "c");
                if (pass == 1 && !skipping)
                    skipping = !(cpj_rfc_is_header(line, size, "Via") || cpj_rfc_is_header(line, size, "v") ||
                                 cpj_rfc_is_header(line, size, "From") || cpj_rfc_is_header(line, size, "f") ||
                                 cpj_rfc_is_header(line, size, "To") || cpj_rfc_is_header(line, size, "t") ||
                                 cpj_rfc_is_header(line, size, "Call-ID") || cpj_rfc_is_header(line, size, "i") ||
                                 cpj_rfc_is_header(line, size, "CSeq"));
            }
            if (!skipping) {
                if (used + size + 2 > length) break;
                pj_memcpy(copy + used, data + at, size);
                used += size;
                if (data[at + size - 1] != '\n') {
                    copy[used++] = '\r';
                    copy[used++] = '\n';
                }
            }
            at += size;
        }
        /* The rewrite fills the original less its first byte exactly: the headers so far,
         * "Content-Length: N" CRLF CRLF, then N spaces, N having `digits` digits. */
        for (digits = 1; digits < 12; ++digits) {
            pj_size_t fixed = used + 20 + digits, count = 1, p;
            if (fixed > length - 1) break;
            pad = length - 1 - fixed;
            for (p = pad; p >= 10; p /= 10) ++count;
            if (count != digits) continue;
            used += (pj_size_t)pj_ansi_snprintf(copy + used, length - used, "Content-Length: %lu\r\n\r\n",
                                                (unsigned long)pad);
            pj_memset(copy + used, ' ', pad);
            pj_memcpy(data + 1, copy, used + pad);
            data[0] = '\0';
            free(copy);
            dropped->len = 1;
            return PJ_TRUE;
        }
    }
    free(copy);
    return PJ_FALSE;
}

/* The drop-data callback: re-reads an unknown scheme's request, answers a stream overflow. */
static void cpj_rfc_on_rx_dropped(pjsip_tp_dropped_data *dropped) {
    if (!dropped || !dropped->tp || !dropped->data) return;
    if (dropped->status == PJSIP_EINVALIDMSG) {
        (void)cpj_rfc_reframe_unknown_scheme(dropped);
        return;
    }
    if (dropped->status != PJSIP_ERXOVERFLOW || (dropped->tp->flag & PJSIP_TRANSPORT_DATAGRAM)) return;
    cpj_rfc_answer_overflow(dropped->tp, (const char *)dropped->data, dropped->len);
    /* The rest of the stream cannot be framed: pjsip shuts a connection down itself only
     * when this was its first message, and would read the remainder as new messages. */
    pjsip_transport_shutdown(dropped->tp);
}

/* Registers the RFC-check module and the drop-data callback with the endpoint pjsua_init
 * just created; call once per pjsua_init (pjsip_endpt_destroy unregisters the module). */
pj_status_t cpj_register_rfc_checks(void) {
    static pjsip_module module;
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pj_str_t name = pj_str((char *)"mod-swiftpjsua-rfc-checks");
    pj_status_t status;
    if (!endpt) return PJ_EINVALIDOP;
    pthread_mutex_lock(&cpj_rfc_merged.lock);
    pj_bzero(cpj_rfc_merged.slots, sizeof(cpj_rfc_merged.slots));
    pthread_mutex_unlock(&cpj_rfc_merged.lock);
    pj_bzero(&module, sizeof(module));
    module.name = name;
    module.id = -1;
    module.priority = PJSIP_MOD_PRIORITY_UA_PROXY_LAYER - 1;
    module.on_rx_request = &cpj_rfc_on_rx_request;
    status = pjsip_endpt_register_module(endpt, &module);
    if (status != PJ_SUCCESS) return status;
    return pjsip_tpmgr_set_drop_data_cb(pjsip_endpt_get_tpmgr(endpt), &cpj_rfc_on_rx_dropped);
}
