/*
 * NAT64 (RFC 6146) for media: a call of an account with nat64_opt binds its RTP to IPv6, and
 * when the peer's SDP names a plain IPv4 address pjmedia's transport_udp asks
 * pj_sockaddr_synthesize (getaddrinfo) for an IPv6 one. glibc's getaddrinfo synthesizes
 * nothing, and pjmedia then sends to (and a debug build asserts on) an address that was
 * never filled in. This module rewrites every IPv4 media address in a received SDP of such
 * an account into the NAT64 prefix (RFC 6052) before the transaction layer, the dialog and
 * pjsua's invite usage see it. The prefix comes from RFC 7050 discovery: the AAAA records the
 * system resolver (DNS64) gives for ipv4only.arpa. An a=rtcp attribute with an IPv4 address
 * is dropped instead (see cpj_nat64_rewrite_sdp). With no prefix known an offer is refused
 * with 488 and a Warning, and an answer has its streams rejected (port 0) so that pjmedia
 * attaches nothing; the engine then ends that call (cpj_nat64_take_refused).
 */
#include "CPJSUAShim.h"
#include <pjsua-lib/pjsua_internal.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>

static struct {
    pthread_mutex_t lock;
    int known;
    unsigned char prefix[16];
    unsigned length;
    unsigned char refused[PJSUA_MAX_CALLS];
} cpj_nat64 = { PTHREAD_MUTEX_INITIALIZER, 0, { 0 }, 0, { 0 } };

static int cpj_nat64_length_valid(unsigned length) {
    return length == 32 || length == 40 || length == 48 || length == 56 || length == 64 || length == 96;
}

int cpj_nat64_synthesize(const unsigned char *prefix, unsigned length, const unsigned char *ipv4, unsigned char *out) {
    unsigned position, i;
    if (!prefix || !ipv4 || !out || !cpj_nat64_length_valid(length)) return 0;
    memset(out, 0, 16);
    memcpy(out, prefix, length / 8);
    /* RFC 6052 §2.2: the IPv4 bits follow the prefix, skipping bits 64-71 (the u octet,
     * zero); the suffix is zero. */
    position = length / 8;
    for (i = 0; i < 4; i++) {
        if (position == 8) position++;
        out[position++] = ipv4[i];
    }
    return 1;
}

/* RFC 7050 §3: the prefix is where the well-known IPv4 address 192.0.0.170 or .171 sits in
 * the synthesized AAAA, at one of RFC 6052's lengths. */
int cpj_nat64_prefix_from_address(const unsigned char *address, unsigned char *prefix, unsigned *length) {
    static const unsigned lengths[] = { 96, 64, 56, 48, 40, 32 };
    unsigned i, j;
    for (i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
        unsigned char v4[4];
        unsigned position = lengths[i] / 8;
        for (j = 0; j < 4; j++) {
            if (position == 8) position++;
            v4[j] = address[position++];
        }
        if (v4[0] == 192 && v4[1] == 0 && v4[2] == 0 && (v4[3] == 170 || v4[3] == 171)) {
            memset(prefix, 0, 16);
            memcpy(prefix, address, lengths[i] / 8);
            *length = lengths[i];
            return 1;
        }
    }
    return 0;
}

void cpj_nat64_set_prefix(const unsigned char *prefix, unsigned length) {
    pthread_mutex_lock(&cpj_nat64.lock);
    if (prefix && cpj_nat64_length_valid(length)) {
        memset(cpj_nat64.prefix, 0, 16);
        memcpy(cpj_nat64.prefix, prefix, length / 8);
        cpj_nat64.length = length;
        cpj_nat64.known = 1;
    } else {
        cpj_nat64.known = 0;
    }
    pthread_mutex_unlock(&cpj_nat64.lock);
}

int cpj_nat64_prefix(unsigned char *prefix, unsigned *length) {
    int known;
    pthread_mutex_lock(&cpj_nat64.lock);
    known = cpj_nat64.known;
    if (known) {
        memcpy(prefix, cpj_nat64.prefix, 16);
        *length = cpj_nat64.length;
    }
    pthread_mutex_unlock(&cpj_nat64.lock);
    return known;
}

int cpj_nat64_discover(const char *name, unsigned char *prefix, unsigned *length) {
    struct addrinfo hints;
    struct addrinfo *results = NULL;
    const struct addrinfo *entry;
    int found = 0;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_INET6;
    hints.ai_socktype = SOCK_DGRAM;
    if (getaddrinfo(name ? name : "ipv4only.arpa", NULL, &hints, &results) != 0) return 0;
    for (entry = results; entry && !found; entry = entry->ai_next) {
        const struct sockaddr_in6 *sin6;
        if (entry->ai_family != AF_INET6 || !entry->ai_addr) continue;
        sin6 = (const struct sockaddr_in6 *)entry->ai_addr;
        found = cpj_nat64_prefix_from_address(sin6->sin6_addr.s6_addr, prefix, length);
    }
    freeaddrinfo(results);
    return found;
}

/* Whether [start, end) starts with the literal. */
static int cpj_starts(const char *start, const char *end, const char *literal) {
    size_t n = strlen(literal);
    return (size_t)(end - start) >= n && memcmp(start, literal, n) == 0;
}

/* Appends bytes when they fit; counts them in any case. */
static void cpj_put(char *out, size_t capacity, size_t *used, const char *bytes, size_t n) {
    if (out && *used + n <= capacity) memcpy(out + *used, bytes, n);
    *used += n;
}

/* Whether [a, b) is a dotted-quad IPv4 address. */
static int cpj_is_ipv4(const char *a, const char *b) {
    char text[INET_ADDRSTRLEN];
    unsigned char v4[4];
    size_t n = (size_t)(b - a);
    if (n == 0 || n >= sizeof(text)) return 0;
    memcpy(text, a, n);
    text[n] = '\0';
    return inet_pton(AF_INET, text, v4) == 1;
}

/* Writes the address [a, b) of a line, synthesized when it is dotted-quad IPv4 and a prefix
 * is given; counts the IPv4 ones. */
static void cpj_put_address(const char *a, const char *b, const unsigned char *prefix, unsigned length, char *out,
                            size_t capacity, size_t *used, int *found) {
    char text[INET6_ADDRSTRLEN];
    unsigned char v4[4];
    unsigned char v6[16];
    size_t n = (size_t)(b - a);
    if (n > 0 && n < sizeof(text)) {
        memcpy(text, a, n);
        text[n] = '\0';
        if (inet_pton(AF_INET, text, v4) == 1) {
            (*found)++;
            if (prefix && cpj_nat64_synthesize(prefix, length, v4, v6) &&
                inet_ntop(AF_INET6, v6, text, sizeof(text))) {
                cpj_put(out, capacity, used, text, strlen(text));
                return;
            }
        }
    }
    cpj_put(out, capacity, used, a, n);
}

long cpj_nat64_rewrite_sdp(const char *sdp, size_t size, const unsigned char *prefix, unsigned length,
                           int reject_streams, char *out, size_t capacity, int *ipv4_found) {
    const char *line = sdp;
    const char *end = sdp + size;
    size_t used = 0;
    int found = 0;
    while (line < end) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        const char *next = eol ? eol + 1 : end;
        const char *content_end = eol ? eol : end;
        if (content_end > line && content_end[-1] == '\r') content_end--;
        if (cpj_starts(line, content_end, "c=IN IP4 ")) {
            /* c=IN IP4 <address>[/ttl]: pjmedia needs the address type to stay IP4 (the
             * local c= of a NAT64 account is IP4, and stream_common.c requires the same
             * family) and accepts an IPv6 literal there. */
            const char *a = line + 9;
            const char *b = a;
            while (b < content_end && *b != '/' && *b != ' ') b++;
            cpj_put(out, capacity, &used, line, (size_t)(a - line));
            cpj_put_address(a, b, prefix, length, out, capacity, &used, &found);
            cpj_put(out, capacity, &used, b, (size_t)(next - b));
        } else if (cpj_starts(line, content_end, "a=rtcp:")) {
            /* a=rtcp:<port> IN IP4 <address> (RFC 3605) */
            const char *tag = NULL;
            const char *p;
            for (p = line; p + 8 <= content_end; p++) {
                if (memcmp(p, " IN IP4 ", 8) == 0) {
                    tag = p + 8;
                    break;
                }
            }
            const char *b = tag;
            while (b && b < content_end && *b != ' ') b++;
            if (tag && cpj_is_ipv4(tag, b)) {
                /* pjmedia parses this address with the c= line's family (IP4), so an IPv6
                 * literal fails the whole stream and an empty one leaves a garbage address.
                 * Without the attribute RTCP goes to the RTP address, port + 1 (RFC 3550
                 * §11), which with a prefix is the synthesized one. */
                found++;
                if (!prefix) cpj_put(out, capacity, &used, line, (size_t)(next - line));
            } else {
                cpj_put(out, capacity, &used, line, (size_t)(next - line));
            }
        } else if (reject_streams && cpj_starts(line, content_end, "m=")) {
            /* m=<media> <port>[/<n>] ...: port 0 rejects the stream (RFC 3264 §6). */
            const char *a = memchr(line, ' ', (size_t)(content_end - line));
            const char *b = a ? a + 1 : NULL;
            if (b) {
                while (b < content_end && *b != ' ' && *b != '/') b++;
                while (b < content_end && *b != ' ') b++;
                cpj_put(out, capacity, &used, line, (size_t)(a + 1 - line));
                cpj_put(out, capacity, &used, "0", 1);
                cpj_put(out, capacity, &used, b, (size_t)(next - b));
            } else {
                cpj_put(out, capacity, &used, line, (size_t)(next - line));
            }
        } else {
            cpj_put(out, capacity, &used, line, (size_t)(next - line));
        }
        line = next;
    }
    if (ipv4_found) *ipv4_found = found;
    if (out && used > capacity) return -1;
    return (long)used;
}

/* The pjsua call whose dialog this message belongs to, and its account: -1 when none. */
static pjsua_call_id cpj_nat64_call_of_dialog(pjsip_dialog *dlg, pjsua_acc_id *acc) {
    pjsip_inv_session *inv = pjsip_dlg_get_inv_session(dlg);
    const pjsua_call *call = inv ? (const pjsua_call *)inv->mod_data[pjsua_get_var()->mod.id] : NULL;
    if (!call) return -1;
    *acc = call->acc_id;
    return call->index;
}

static pjsua_call_id cpj_nat64_find_call(pjsip_rx_data *rdata, pjsua_acc_id *acc) {
    const pjsip_msg *msg = rdata->msg_info.msg;
    pjsip_dialog *dlg = NULL;
    pjsua_call_id call = -1;
    *acc = PJSUA_INVALID_ID;
    if (!rdata->msg_info.cid || !rdata->msg_info.from || !rdata->msg_info.to || !rdata->msg_info.cseq) return -1;
    if (msg->type == PJSIP_REQUEST_MSG) {
        if (rdata->msg_info.to->tag.slen == 0) {
            /* A new INVITE: the account pjsua will give it. */
            if (msg->line.req.method.id == PJSIP_INVITE_METHOD) *acc = pjsua_acc_find_for_incoming(rdata);
            return -1;
        }
        dlg = pjsip_ua_find_dialog(&rdata->msg_info.cid->id, &rdata->msg_info.to->tag, &rdata->msg_info.from->tag,
                                   PJ_TRUE);
    } else {
        dlg = pjsip_ua_find_dialog(&rdata->msg_info.cid->id, &rdata->msg_info.from->tag, &rdata->msg_info.to->tag,
                                   PJ_TRUE);
        if (!dlg) {
            /* The first response with this To tag: the dialog is the INVITE transaction's. */
            pj_str_t key;
            pjsip_transaction *tsx;
            if (pjsip_tsx_create_key(rdata->tp_info.pool, &key, PJSIP_ROLE_UAC, &rdata->msg_info.cseq->method,
                                     rdata) != PJ_SUCCESS)
                return -1;
            tsx = pjsip_tsx_layer_find_tsx2(&key, PJ_TRUE);
            if (!tsx) return -1;
            dlg = pjsip_tsx_get_dlg(tsx);
            if (dlg) pjsip_dlg_inc_lock(dlg);
            pj_grp_lock_dec_ref(tsx->grp_lock);
        }
    }
    if (!dlg) return -1;
    call = cpj_nat64_call_of_dialog(dlg, acc);
    pjsip_dlg_dec_lock(dlg);
    return call;
}

static int cpj_nat64_is_sdp(const pjsip_msg_body *body) {
    return body && body->len > 0 && pj_stricmp2(&body->content_type.type, "application") == 0 &&
        pj_stricmp2(&body->content_type.subtype, "sdp") == 0;
}

/* Answers a new or in-dialog offer statelessly: 488 with Warning 301 (RFC 3261 §20.43,
 * "Incompatible network address formats"). */
static void cpj_nat64_refuse_offer(pjsip_rx_data *rdata) {
    pjsip_hdr headers;
    pjsip_warning_hdr *warning;
    pj_str_t host = pj_str((char *)"swiftpjsua");
    pj_str_t text = pj_str((char *)CPJ_NAT64_WARNING_TEXT);
    pj_list_init(&headers);
    warning = pjsip_warning_hdr_create(rdata->tp_info.pool, 301, &host, &text);
    if (warning) pj_list_push_back(&headers, warning);
    pjsip_endpt_respond_stateless(pjsua_get_pjsip_endpt(), rdata, PJSIP_SC_NOT_ACCEPTABLE_HERE, NULL, &headers, NULL);
}

static pj_bool_t cpj_nat64_on_rx(pjsip_rx_data *rdata) {
    pjsip_msg *msg = rdata->msg_info.msg;
    pjsip_msg_body *body = msg->body;
    pjsua_acc_id acc;
    pjsua_call_id call;
    unsigned char prefix[16];
    unsigned length = 0;
    int known, found = 0, offer;
    long size;
    char *text;
    if (!cpj_nat64_is_sdp(body)) return PJ_FALSE;
    if (msg->type == PJSIP_REQUEST_MSG) {
        pjsip_method_e method = msg->line.req.method.id;
        pj_str_t update = pj_str((char *)"UPDATE");
        pj_str_t prack = pj_str((char *)"PRACK");
        if (method != PJSIP_INVITE_METHOD && method != PJSIP_ACK_METHOD &&
            pj_stricmp(&msg->line.req.method.name, &update) != 0 &&
            pj_stricmp(&msg->line.req.method.name, &prack) != 0)
            return PJ_FALSE;
        /* An INVITE or UPDATE with SDP is an offer; ACK and PRACK carry answers. */
        offer = method == PJSIP_INVITE_METHOD || pj_stricmp(&msg->line.req.method.name, &update) == 0;
    } else {
        if (!rdata->msg_info.cseq) return PJ_FALSE;
        offer = 0;
    }
    /* Quick look before any lookup: nothing to do without an IPv4 media address. */
    cpj_nat64_rewrite_sdp((const char *)body->data, body->len, NULL, 0, 0, NULL, 0, &found);
    if (found == 0) return PJ_FALSE;
    call = cpj_nat64_find_call(rdata, &acc);
    if (acc < 0 || acc >= (pjsua_acc_id)PJSUA_MAX_ACC || !pjsua_acc_is_valid(acc)) return PJ_FALSE;
    if (pjsua_get_var()->acc[acc].cfg.nat64_opt == PJSUA_NAT64_DISABLED) return PJ_FALSE;
    known = cpj_nat64_prefix(prefix, &length);
    if (!known && offer) {
        PJ_LOG(3, ("swiftpjsua", "%s: IPv4 media address and no NAT64 prefix known: 488",
                   pjsip_rx_data_get_info(rdata)));
        cpj_nat64_refuse_offer(rdata);
        return PJ_TRUE;
    }
    size = cpj_nat64_rewrite_sdp((const char *)body->data, body->len, known ? prefix : NULL, length, !known, NULL, 0,
                                 NULL);
    text = (char *)pj_pool_alloc(rdata->tp_info.pool, (pj_size_t)size + 1);
    size = cpj_nat64_rewrite_sdp((const char *)body->data, body->len, known ? prefix : NULL, length, !known, text,
                                 (size_t)size, NULL);
    if (size < 0) return PJ_FALSE;
    text[size] = '\0';
    body->data = text;
    body->len = (unsigned)size;
    if (known) {
        PJ_LOG(4, ("swiftpjsua", "%s: %d IPv4 media address(es) synthesized into the NAT64 prefix",
                   pjsip_rx_data_get_info(rdata), found));
    } else {
        PJ_LOG(3, ("swiftpjsua", "%s: IPv4 media address and no NAT64 prefix known: streams rejected, call ends",
                   pjsip_rx_data_get_info(rdata)));
        if (call >= 0 && call < (pjsua_call_id)PJSUA_MAX_CALLS) {
            pthread_mutex_lock(&cpj_nat64.lock);
            cpj_nat64.refused[call] = 1;
            pthread_mutex_unlock(&cpj_nat64.lock);
        }
    }
    return PJ_FALSE;
}

int cpj_nat64_take_refused(pjsua_call_id call_id) {
    int refused;
    if (call_id < 0 || call_id >= (pjsua_call_id)PJSUA_MAX_CALLS) return 0;
    pthread_mutex_lock(&cpj_nat64.lock);
    refused = cpj_nat64.refused[call_id];
    cpj_nat64.refused[call_id] = 0;
    pthread_mutex_unlock(&cpj_nat64.lock);
    return refused;
}

void cpj_nat64_forget(pjsua_call_id call_id) { (void)cpj_nat64_take_refused(call_id); }

pj_status_t cpj_call_hangup_nat64(pjsua_call_id call_id) {
    pjsua_msg_data msg_data;
    pjsip_generic_string_hdr reason;
    pj_str_t name = pj_str((char *)"Reason");
    pj_str_t value = pj_str((char *)"SIP;cause=488;text=\"" CPJ_NAT64_WARNING_TEXT "\"");
    pjsua_msg_data_init(&msg_data);
    pjsip_generic_string_hdr_init2(&reason, &name, &value);
    pj_list_push_back(&msg_data.hdr_list, &reason);
    return pjsua_call_hangup(call_id, PJSIP_SC_NOT_ACCEPTABLE_HERE, NULL, &msg_data);
}

/* Registers the module, once per pjsua_init: two steps ahead of the transaction layer (so
 * before offer_answer.c's module, the dialogs and pjsua's invite usage), which is where
 * responses enter their transaction. */
pj_status_t cpj_register_nat64_module(void) {
    static pjsip_module module;
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pj_str_t name = pj_str((char *)"mod-swiftpjsua-nat64");
    unsigned i;
    if (!endpt) return PJ_EINVALIDOP;
    pthread_mutex_lock(&cpj_nat64.lock);
    for (i = 0; i < PJSUA_MAX_CALLS; i++) cpj_nat64.refused[i] = 0;
    pthread_mutex_unlock(&cpj_nat64.lock);
    pj_bzero(&module, sizeof(module));
    module.name = name;
    module.id = -1;
    module.priority = PJSIP_MOD_PRIORITY_TSX_LAYER - 2;
    module.on_rx_request = &cpj_nat64_on_rx;
    module.on_rx_response = &cpj_nat64_on_rx;
    return pjsip_endpt_register_module(endpt, &module);
}
