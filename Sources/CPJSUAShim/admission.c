/*
 * Admission of out-of-dialog requests: who may call an account, and how fast one source
 * may start dialogs. One module, registered after pjsua_init by cpj_register_admission, at
 * a priority after the transaction layer (a retransmission of a request whose transaction
 * exists is absorbed there and never counted) and before the RFC checks, the UA layer and
 * pjsua's modules, so a rejected request never reaches the app. It looks only at requests
 * without a To tag whose method is INVITE, SUBSCRIBE, REFER, MESSAGE or OPTIONS, in this
 * order:
 *   503 + Retry-After  the source IP's token bucket is empty (INVITE, SUBSCRIBE, REFER and
 *                      MESSAGE take a token; OPTIONS does not);
 *   403                the account pjsua would give the request to
 *                      (pjsua_acc_find_for_incoming) accepts only its registrar's and
 *                      outbound proxies' addresses, and the source IP is none of them;
 *   404                the account accepts only its own Contact user, and the
 *                      Request-URI's user part is another one;
 *   486 + Retry-After  an INVITE while the most incoming calls allowed ring already.
 * Every answer is stateless (pjsip_endpt_respond_stateless): a flood creates no
 * transactions; a UDP retransmission of a rejected request is answered (and counted) again.
 *
 * A source's addresses: those of the registrar's and proxies' hosts (getaddrinfo, at
 * configuration and again after every registration outcome, on a thread of the caller's),
 * and the source of the last REGISTER responses (the server pjsip's resolver really used).
 *
 * State: the per-account policies, the token buckets and the counters, one struct behind
 * one lock.
 */
#include "CPJSUAShim.h"
#include <pjsua-lib/pjsua_internal.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

enum {
    CPJ_ADM_HOSTS = 9,       /* registrar + 8 proxies */
    CPJ_ADM_HOST_MAX = 256,
    CPJ_ADM_RESOLVED = 16,   /* addresses from getaddrinfo per account */
    CPJ_ADM_LEARNED = 4,     /* addresses REGISTER responses came from, per account */
    CPJ_ADM_BUCKETS = 1024,  /* sources tracked at once */
    CPJ_ADM_PROBE = 8
};

/* An IP address without port: family, then 4 or 16 bytes. */
typedef struct {
    int family;
    unsigned char bytes[16];
} cpj_adm_ip;

typedef struct {
    pj_bool_t only_servers;
    pj_bool_t contact_user;
    unsigned generation;
    unsigned host_count;
    char hosts[CPJ_ADM_HOSTS][CPJ_ADM_HOST_MAX];
    unsigned resolved_count;
    cpj_adm_ip resolved[CPJ_ADM_RESOLVED];
    unsigned learned_count, learned_next;
    cpj_adm_ip learned[CPJ_ADM_LEARNED];
} cpj_adm_account;

typedef struct {
    pj_bool_t used;
    cpj_adm_ip ip;
    double tokens;
    pj_uint64_t updated_ms;
} cpj_adm_bucket;

static struct {
    pthread_mutex_t lock; /* guards everything below */
    double rate;          /* tokens per second; 0: no rate limit */
    double burst;
    unsigned retry_after; /* seconds */
    unsigned max_ringing; /* 0: no cap */
    unsigned generation;
    cpj_adm_account accounts[PJSUA_MAX_ACC];
    cpj_adm_bucket buckets[CPJ_ADM_BUCKETS];
    cpj_admission_counters counters;
} cpj_adm = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pj_uint64_t cpj_adm_now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (pj_uint64_t)now.tv_sec * 1000u + (pj_uint64_t)now.tv_nsec / 1000000u;
}

static pj_bool_t cpj_adm_ip_from_sockaddr(const pj_sockaddr *addr, cpj_adm_ip *out) {
    pj_bzero(out, sizeof(*out));
    if (addr->addr.sa_family == pj_AF_INET()) {
        out->family = 4;
        pj_memcpy(out->bytes, &addr->ipv4.sin_addr, 4);
        return PJ_TRUE;
    }
#if PJ_HAS_IPV6
    if (addr->addr.sa_family == pj_AF_INET6()) {
        out->family = 6;
        pj_memcpy(out->bytes, &addr->ipv6.sin6_addr, 16);
        return PJ_TRUE;
    }
#endif
    return PJ_FALSE;
}

static pj_bool_t cpj_adm_ip_equal(const cpj_adm_ip *a, const cpj_adm_ip *b) {
    return a->family == b->family && memcmp(a->bytes, b->bytes, a->family == 4 ? 4 : 16) == 0;
}

/* Takes one token from the source's bucket; PJ_FALSE when it is empty. Called locked. */
static pj_bool_t cpj_adm_take_token(const cpj_adm_ip *ip) {
    pj_uint64_t now = cpj_adm_now_ms();
    unsigned hash = pj_hash_calc(0, ip->bytes, ip->family == 4 ? 4 : 16) % CPJ_ADM_BUCKETS;
    unsigned i, victim = hash;
    double most = -1;
    cpj_adm_bucket *bucket = NULL;
    for (i = 0; i < CPJ_ADM_PROBE; ++i) {
        cpj_adm_bucket *candidate = &cpj_adm.buckets[(hash + i) % CPJ_ADM_BUCKETS];
        double tokens;
        if (candidate->used && cpj_adm_ip_equal(&candidate->ip, ip)) {
            bucket = candidate;
            break;
        }
        /* A free slot, or else the one closest to full (a source that has gone quiet
         * loses nothing by being forgotten: it would start full anyway). */
        tokens = candidate->used ? candidate->tokens + (double)(now - candidate->updated_ms) * cpj_adm.rate / 1000.0
                                 : 1e300;
        if (tokens > most) {
            most = tokens;
            victim = (hash + i) % CPJ_ADM_BUCKETS;
        }
    }
    if (!bucket) {
        bucket = &cpj_adm.buckets[victim];
        bucket->used = PJ_TRUE;
        bucket->ip = *ip;
        bucket->tokens = cpj_adm.burst;
        bucket->updated_ms = now;
    }
    bucket->tokens += (double)(now - bucket->updated_ms) * cpj_adm.rate / 1000.0;
    if (bucket->tokens > cpj_adm.burst) bucket->tokens = cpj_adm.burst;
    bucket->updated_ms = now;
    if (bucket->tokens < 1.0) return PJ_FALSE;
    bucket->tokens -= 1.0;
    return PJ_TRUE;
}

/* Whether the source is one of the account's servers. Called locked. */
static pj_bool_t cpj_adm_is_server(const cpj_adm_account *account, const cpj_adm_ip *ip) {
    unsigned i;
    for (i = 0; i < account->resolved_count; ++i)
        if (cpj_adm_ip_equal(&account->resolved[i], ip)) return PJ_TRUE;
    for (i = 0; i < account->learned_count; ++i)
        if (cpj_adm_ip_equal(&account->learned[i], ip)) return PJ_TRUE;
    return PJ_FALSE;
}

/* Incoming calls ringing: UAS INVITE sessions not yet connecting. */
static unsigned cpj_adm_ringing_calls(void) {
    unsigned i, count = 0;
    PJSUA_LOCK();
    for (i = 0; i < pjsua_var.ua_cfg.max_calls && i < PJSUA_MAX_CALLS; ++i) {
        pjsip_inv_session *inv = pjsua_var.calls[i].inv;
        if (inv && inv->role == PJSIP_ROLE_UAS && inv->state < PJSIP_INV_STATE_CONNECTING) ++count;
    }
    PJSUA_UNLOCK();
    return count;
}

/* Whether the Request-URI's user part is the account's own (the user part pjsua puts in
 * the Contact it registers). */
static pj_bool_t cpj_adm_is_contact_user(pjsua_acc_id acc_id, const pjsip_uri *request_uri) {
    const pjsip_sip_uri *uri;
    pj_bool_t same;
    if (!PJSIP_URI_SCHEME_IS_SIP(request_uri) && !PJSIP_URI_SCHEME_IS_SIPS(request_uri)) return PJ_FALSE;
    uri = (const pjsip_sip_uri *)pjsip_uri_get_uri((pjsip_uri *)request_uri);
    PJSUA_LOCK();
    same = pjsua_var.acc[acc_id].valid && pj_stricmp(&pjsua_var.acc[acc_id].user_part, &uri->user) == 0;
    PJSUA_UNLOCK();
    return same;
}

static void cpj_adm_respond(pjsip_rx_data *rdata, int code, unsigned retry_after) {
    pjsip_hdr headers;
    pj_list_init(&headers);
    if (retry_after > 0) {
        pjsip_retry_after_hdr *header = pjsip_retry_after_hdr_create(rdata->tp_info.pool, retry_after);
        if (header) pj_list_push_back(&headers, header);
    }
    pjsip_endpt_respond_stateless(pjsua_get_pjsip_endpt(), rdata, code, NULL, &headers, NULL);
}

static pj_bool_t cpj_adm_on_rx_request(pjsip_rx_data *rdata) {
    pjsip_msg *msg = rdata->msg_info.msg;
    const pjsip_method *method = &msg->line.req.method;
    pj_bool_t is_options = method->id == PJSIP_OPTIONS_METHOD;
    pj_bool_t takes_token;
    cpj_adm_ip source;
    pjsua_acc_id acc_id;
    pj_bool_t only_servers = PJ_FALSE, contact_user = PJ_FALSE, from_server = PJ_FALSE;
    unsigned retry_after, max_ringing;
    if (rdata->msg_info.to->tag.slen > 0) return PJ_FALSE;
    if (method->id != PJSIP_INVITE_METHOD && !is_options && pj_stricmp2(&method->name, "SUBSCRIBE") != 0 &&
        pj_stricmp2(&method->name, "REFER") != 0 && pj_stricmp2(&method->name, "MESSAGE") != 0)
        return PJ_FALSE;
    if (!cpj_adm_ip_from_sockaddr(&rdata->pkt_info.src_addr, &source)) return PJ_FALSE;
    takes_token = !is_options;

    pthread_mutex_lock(&cpj_adm.lock);
    retry_after = cpj_adm.retry_after;
    max_ringing = cpj_adm.max_ringing;
    if (takes_token && cpj_adm.rate > 0 && !cpj_adm_take_token(&source)) {
        ++cpj_adm.counters.rate_limited;
        pthread_mutex_unlock(&cpj_adm.lock);
        cpj_adm_respond(rdata, PJSIP_SC_SERVICE_UNAVAILABLE, retry_after);
        return PJ_TRUE;
    }
    pthread_mutex_unlock(&cpj_adm.lock);

    acc_id = pjsua_acc_find_for_incoming(rdata);
    if (acc_id >= 0 && acc_id < (pjsua_acc_id)PJSUA_MAX_ACC) {
        pthread_mutex_lock(&cpj_adm.lock);
        only_servers = cpj_adm.accounts[acc_id].only_servers;
        contact_user = cpj_adm.accounts[acc_id].contact_user;
        if (only_servers) from_server = cpj_adm_is_server(&cpj_adm.accounts[acc_id], &source);
        if (only_servers && !from_server) ++cpj_adm.counters.not_from_server;
        pthread_mutex_unlock(&cpj_adm.lock);
    }
    /* The source first, with one answer whatever the user: a scanner that is not a server
     * cannot tell the account's user from any other. */
    if (only_servers && !from_server) {
        cpj_adm_respond(rdata, PJSIP_SC_FORBIDDEN, 0);
        return PJ_TRUE;
    }
    if (contact_user && !cpj_adm_is_contact_user(acc_id, msg->line.req.uri)) {
        pthread_mutex_lock(&cpj_adm.lock);
        ++cpj_adm.counters.unknown_user;
        pthread_mutex_unlock(&cpj_adm.lock);
        cpj_adm_respond(rdata, PJSIP_SC_NOT_FOUND, 0);
        return PJ_TRUE;
    }
    if (method->id == PJSIP_INVITE_METHOD && max_ringing > 0 && cpj_adm_ringing_calls() >= max_ringing) {
        pthread_mutex_lock(&cpj_adm.lock);
        ++cpj_adm.counters.ringing_cap;
        pthread_mutex_unlock(&cpj_adm.lock);
        cpj_adm_respond(rdata, PJSIP_SC_BUSY_HERE, retry_after);
        return PJ_TRUE;
    }
    return PJ_FALSE;
}

pj_status_t cpj_register_admission(unsigned rate_per_second, unsigned burst, unsigned retry_after_seconds,
                                   unsigned max_ringing) {
    static pjsip_module module;
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pj_str_t name = pj_str((char *)"mod-swiftpjsua-admission");
    if (!endpt) return PJ_EINVALIDOP;
    pthread_mutex_lock(&cpj_adm.lock);
    cpj_adm.rate = (double)rate_per_second;
    cpj_adm.burst = (double)burst;
    cpj_adm.retry_after = retry_after_seconds;
    cpj_adm.max_ringing = max_ringing;
    pj_bzero(cpj_adm.accounts, sizeof(cpj_adm.accounts));
    pj_bzero(cpj_adm.buckets, sizeof(cpj_adm.buckets));
    pj_bzero(&cpj_adm.counters, sizeof(cpj_adm.counters));
    pthread_mutex_unlock(&cpj_adm.lock);
    pj_bzero(&module, sizeof(module));
    module.name = name;
    module.id = -1;
    /* After the transaction layer (16), before the RFC checks (31) and the UA layer (32). */
    module.priority = PJSIP_MOD_PRIORITY_UA_PROXY_LAYER - 2;
    module.on_rx_request = &cpj_adm_on_rx_request;
    return pjsip_endpt_register_module(endpt, &module);
}

/* Resolves `host` into `out` (at most `capacity`); numeric only unless `lookup`. */
static unsigned cpj_adm_resolve_host(const char *host, pj_bool_t lookup, cpj_adm_ip *out, unsigned capacity) {
    struct addrinfo hints, *list = NULL, *item;
    unsigned count = 0;
    pj_bzero(&hints, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = lookup ? 0 : AI_NUMERICHOST;
    if (getaddrinfo(host, NULL, &hints, &list) != 0) return 0;
    for (item = list; item && count < capacity; item = item->ai_next) {
        cpj_adm_ip ip;
        pj_bzero(&ip, sizeof(ip));
        if (item->ai_family == AF_INET) {
            ip.family = 4;
            pj_memcpy(ip.bytes, &((struct sockaddr_in *)item->ai_addr)->sin_addr, 4);
        } else if (item->ai_family == AF_INET6) {
            ip.family = 6;
            pj_memcpy(ip.bytes, &((struct sockaddr_in6 *)item->ai_addr)->sin6_addr, 16);
        } else {
            continue;
        }
        out[count++] = ip;
    }
    freeaddrinfo(list);
    return count;
}

/* Resolves every host of the account (numeric ones only unless `lookup`) and replaces its
 * resolved addresses, unless the account was configured again meanwhile. */
static void cpj_adm_resolve(pjsua_acc_id acc_id, unsigned generation, pj_bool_t lookup) {
    char hosts[CPJ_ADM_HOSTS][CPJ_ADM_HOST_MAX];
    unsigned host_count, i, count = 0;
    cpj_adm_ip resolved[CPJ_ADM_RESOLVED];
    if (acc_id < 0 || acc_id >= (pjsua_acc_id)PJSUA_MAX_ACC) return;
    pthread_mutex_lock(&cpj_adm.lock);
    if (cpj_adm.accounts[acc_id].generation != generation) {
        pthread_mutex_unlock(&cpj_adm.lock);
        return;
    }
    host_count = cpj_adm.accounts[acc_id].host_count;
    pj_memcpy(hosts, cpj_adm.accounts[acc_id].hosts, sizeof(hosts));
    pthread_mutex_unlock(&cpj_adm.lock);
    for (i = 0; i < host_count && count < CPJ_ADM_RESOLVED; ++i)
        count += cpj_adm_resolve_host(hosts[i], lookup, resolved + count, CPJ_ADM_RESOLVED - count);
    pthread_mutex_lock(&cpj_adm.lock);
    /* A lookup that found nothing (DNS down) keeps the addresses known so far. */
    if (cpj_adm.accounts[acc_id].generation == generation && (count > 0 || !lookup)) {
        if (count > 0 || cpj_adm.accounts[acc_id].resolved_count == 0) {
            pj_memcpy(cpj_adm.accounts[acc_id].resolved, resolved, sizeof(resolved));
            cpj_adm.accounts[acc_id].resolved_count = count;
        }
    }
    pthread_mutex_unlock(&cpj_adm.lock);
}

unsigned cpj_admission_configure_account(pjsua_acc_id acc_id, pj_bool_t only_servers, pj_bool_t contact_user,
                                         const pj_str_t *server_uris, unsigned count) {
    pj_pool_t *pool;
    unsigned i, generation, host_count = 0;
    char hosts[CPJ_ADM_HOSTS][CPJ_ADM_HOST_MAX];
    if (acc_id < 0 || acc_id >= (pjsua_acc_id)PJSUA_MAX_ACC) return 0;
    pj_bzero(hosts, sizeof(hosts));
    pool = pjsua_pool_create("admission", 512, 512);
    for (i = 0; pool && i < count && host_count < CPJ_ADM_HOSTS; ++i) {
        char *text = (char *)pj_pool_alloc(pool, server_uris[i].slen + 1);
        pjsip_uri *uri;
        pj_memcpy(text, server_uris[i].ptr, server_uris[i].slen);
        text[server_uris[i].slen] = '\0';
        uri = pjsip_parse_uri(pool, text, server_uris[i].slen, 0);
        if (uri && (PJSIP_URI_SCHEME_IS_SIP(uri) || PJSIP_URI_SCHEME_IS_SIPS(uri))) {
            const pjsip_sip_uri *sip = (const pjsip_sip_uri *)pjsip_uri_get_uri(uri);
            if (sip->host.slen > 0 && sip->host.slen < CPJ_ADM_HOST_MAX) {
                pj_memcpy(hosts[host_count], sip->host.ptr, sip->host.slen);
                hosts[host_count][sip->host.slen] = '\0';
                ++host_count;
            }
        }
    }
    if (pool) pj_pool_release(pool);
    pthread_mutex_lock(&cpj_adm.lock);
    generation = ++cpj_adm.generation;
    pj_bzero(&cpj_adm.accounts[acc_id], sizeof(cpj_adm.accounts[acc_id]));
    cpj_adm.accounts[acc_id].only_servers = only_servers;
    cpj_adm.accounts[acc_id].contact_user = contact_user;
    cpj_adm.accounts[acc_id].generation = generation;
    cpj_adm.accounts[acc_id].host_count = host_count;
    pj_memcpy(cpj_adm.accounts[acc_id].hosts, hosts, sizeof(hosts));
    pthread_mutex_unlock(&cpj_adm.lock);
    /* IP literals at once, without DNS. */
    cpj_adm_resolve(acc_id, generation, PJ_FALSE);
    return generation;
}

void cpj_admission_resolve_servers(pjsua_acc_id acc_id, unsigned generation) {
    cpj_adm_resolve(acc_id, generation, PJ_TRUE);
}

unsigned cpj_admission_generation(pjsua_acc_id acc_id) {
    unsigned generation;
    if (acc_id < 0 || acc_id >= (pjsua_acc_id)PJSUA_MAX_ACC) return 0;
    pthread_mutex_lock(&cpj_adm.lock);
    generation = cpj_adm.accounts[acc_id].only_servers ? cpj_adm.accounts[acc_id].generation : 0;
    pthread_mutex_unlock(&cpj_adm.lock);
    return generation;
}

void cpj_admission_learn_server(pjsua_acc_id acc_id, const pjsip_rx_data *rdata) {
    cpj_adm_ip ip;
    cpj_adm_account *account;
    if (acc_id < 0 || acc_id >= (pjsua_acc_id)PJSUA_MAX_ACC || !rdata) return;
    if (!cpj_adm_ip_from_sockaddr(&rdata->pkt_info.src_addr, &ip)) return;
    pthread_mutex_lock(&cpj_adm.lock);
    account = &cpj_adm.accounts[acc_id];
    if (account->only_servers && !cpj_adm_is_server(account, &ip)) {
        account->learned[account->learned_next] = ip;
        account->learned_next = (account->learned_next + 1) % CPJ_ADM_LEARNED;
        if (account->learned_count < CPJ_ADM_LEARNED) ++account->learned_count;
    }
    pthread_mutex_unlock(&cpj_adm.lock);
}

void cpj_admission_forget_account(pjsua_acc_id acc_id) {
    if (acc_id < 0 || acc_id >= (pjsua_acc_id)PJSUA_MAX_ACC) return;
    pthread_mutex_lock(&cpj_adm.lock);
    pj_bzero(&cpj_adm.accounts[acc_id], sizeof(cpj_adm.accounts[acc_id]));
    cpj_adm.accounts[acc_id].generation = ++cpj_adm.generation;
    pthread_mutex_unlock(&cpj_adm.lock);
}

void cpj_admission_get_counters(cpj_admission_counters *out) {
    pthread_mutex_lock(&cpj_adm.lock);
    *out = cpj_adm.counters;
    pthread_mutex_unlock(&cpj_adm.lock);
}
