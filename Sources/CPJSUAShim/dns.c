/*
 * DNS: nameservers with ports, resolver timing, SRV failover (RFC 3263 §4.3).
 *
 * pjsua_init creates pjsip's asynchronous DNS resolver from pjsua_config.nameserver, but
 * only for port 53 (pj_dns_resolver_set_ns is called without ports) and with pjlib-util's
 * default retransmission timing. And pjsip moves to the next SRV target only when sending
 * fails (a refused TCP connection): a UDP request that times out at one target is never
 * tried at the next, and every later request resolves to the same dead target first.
 *
 * cpj_dns_setup therefore re-sets the nameservers with their ports and the timing, and
 * puts an external resolver in front of pjsip's: it runs pjsip's own resolution (a second
 * pjsip_resolver_t on the same DNS resolver: IP literals, SRV with A/AAAA fallback,
 * weights) and then moves the targets marked unresponsive to the end of the list. A
 * REGISTER that timed out marks the address it went to (cpj_dns_mark_register_unanswered),
 * for a hold-down time; the engine then registers again and that REGISTER resolves to the
 * next target. A module records where each REGISTER went, since pjsua's registration
 * callback does not say.
 *
 * State: cpj_dns, one struct behind one lock, set up by cpj_dns_setup on the engine thread
 * and read by pjsip's resolver and transmit callbacks on its worker threads.
 */
#include "CPJSUAShim.h"
#include <pjsua-lib/pjsua_internal.h>
#include <pthread.h>
#include <string.h>

#define CPJ_DNS_MAX_MARKED 16
#define CPJ_DNS_MAX_SENT 32

typedef struct cpj_dns_sent {
    int used;
    char user[64], domain[128];     /* the To URI of the REGISTER: the account's AOR */
    pj_sockaddr dst;                /* where it went */
    unsigned count;                 /* the targets its resolution gave */
    pj_sockaddr targets[PJSIP_MAX_RESOLVED_ADDRESSES];
} cpj_dns_sent;

typedef struct cpj_dns_state {
    pjsip_module module;            /* records where each REGISTER went */
    pjsip_resolver_t *inner;        /* pjsip's own resolution logic */
    pjsip_ext_resolver ext;         /* the resolver in front of it */
    int active;                     /* atomic: set up for this run of pjsua (a nameserver is configured) */
    unsigned hold_down_msec;        /* written and read on the engine thread */
    pthread_mutex_t lock;           /* guards everything below */
    struct { pj_sockaddr addr; pj_uint64_t until; int used; } marked[CPJ_DNS_MAX_MARKED];
    cpj_dns_sent sent[CPJ_DNS_MAX_SENT];
    unsigned next_sent;
} cpj_dns_state;

static cpj_dns_state cpj_dns = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The state of this run of pjsua, or NULL when no nameserver was configured. */
static cpj_dns_state *cpj_dns_current(void) {
    return __atomic_load_n(&cpj_dns.active, __ATOMIC_ACQUIRE) ? &cpj_dns : NULL;
}

/* pjlib's monotonic clock in milliseconds: when a target's hold-down ends. */
static pj_uint64_t cpj_dns_now_msec(void) {
    pj_time_val now;
    pj_gettickcount(&now);
    return (pj_uint64_t)now.sec * 1000 + (pj_uint64_t)now.msec;
}

/* Whether addr is marked unresponsive now; call with the lock held. */
static int cpj_dns_is_marked_locked(cpj_dns_state *st, const pj_sockaddr *addr, pj_uint64_t now) {
    unsigned i;
    for (i = 0; i < CPJ_DNS_MAX_MARKED; ++i) {
        if (st->marked[i].used && st->marked[i].until > now && pj_sockaddr_cmp(&st->marked[i].addr, addr) == 0)
            return 1;
    }
    return 0;
}

typedef struct cpj_dns_job { void *token; pjsip_resolver_callback *cb; } cpj_dns_job;

/* pjsip's answer, with the targets marked unresponsive moved behind the others (their
 * order kept); then on to whoever asked. */
static void cpj_dns_resolved(pj_status_t status, void *token, const struct pjsip_server_addresses *addr) {
    cpj_dns_job *job = (cpj_dns_job *)token;
    cpj_dns_state *st = cpj_dns_current();
    pjsip_server_addresses sorted;
    unsigned i, n = 0, late = 0;
    char marked[PJSIP_MAX_RESOLVED_ADDRESSES];
    pj_uint64_t now = cpj_dns_now_msec();
    if (status != PJ_SUCCESS || !addr || addr->count < 2 || !st) { (*job->cb)(status, job->token, addr); return; }
    pthread_mutex_lock(&st->lock);
    for (i = 0; i < addr->count; ++i) {
        marked[i] = (char)cpj_dns_is_marked_locked(st, &addr->entry[i].addr, now);
        late += marked[i] ? 1 : 0;
    }
    pthread_mutex_unlock(&st->lock);
    if (late == 0 || late == addr->count) { (*job->cb)(status, job->token, addr); return; }
    sorted.count = addr->count;
    for (i = 0; i < addr->count; ++i) if (!marked[i]) sorted.entry[n++] = addr->entry[i];
    for (i = 0; i < addr->count; ++i) if (marked[i]) sorted.entry[n++] = addr->entry[i];
    PJ_LOG(4, ("swiftpjsua", "DNS: %u of %u targets marked unresponsive, tried last", late, addr->count));
    (*job->cb)(status, job->token, &sorted);
}

/* The external resolver: pjsip's resolution on the inner resolver, then cpj_dns_resolved. */
static void cpj_dns_resolve(pjsip_resolver_t *resolver, pj_pool_t *pool, const pjsip_host_info *target,
                            void *token, pjsip_resolver_callback *cb) {
    cpj_dns_state *st = cpj_dns_current();
    cpj_dns_job *job;
    PJ_UNUSED_ARG(resolver);
    job = st ? PJ_POOL_ALLOC_T(pool, cpj_dns_job) : NULL;
    if (!job) {
        pjsip_server_addresses none;
        none.count = 0;
        (*cb)(PJ_ENOMEM, token, &none);
        return;
    }
    job->token = token;
    job->cb = cb;
    pjsip_resolve(st->inner, pool, target, job, &cpj_dns_resolved);
}

/* A lowercased, NUL-terminated copy of `text` (truncated to `size`): AORs compare so. */
static void cpj_dns_copy_lower(char *out, pj_size_t size, const pj_str_t *text) {
    pj_size_t i, n = (pj_size_t)text->slen < size - 1 ? (pj_size_t)text->slen : size - 1;
    for (i = 0; i < n; ++i) out[i] = (char)pj_tolower(text->ptr[i]);
    out[n] = '\0';
}

/* Records where each REGISTER went, and the targets its resolution gave, by the AOR in its
 * To (the latest REGISTER of an account replaces its earlier record). */
static pj_status_t cpj_dns_on_tx_request(pjsip_tx_data *tdata) {
    cpj_dns_state *st = cpj_dns_current();
    pjsip_to_hdr *to;
    pjsip_sip_uri *aor;
    char user[64], domain[128];
    unsigned i, slot;
    if (!st || tdata->msg->type != PJSIP_REQUEST_MSG || tdata->msg->line.req.method.id != PJSIP_REGISTER_METHOD
        || tdata->dest_info.addr.count < 1 || tdata->tp_info.dst_addr_len <= 0) return PJ_SUCCESS;
    to = PJSIP_MSG_TO_HDR(tdata->msg);
    if (!to || !to->uri || (!PJSIP_URI_SCHEME_IS_SIP(to->uri) && !PJSIP_URI_SCHEME_IS_SIPS(to->uri))) return PJ_SUCCESS;
    aor = (pjsip_sip_uri *)pjsip_uri_get_uri(to->uri);
    cpj_dns_copy_lower(user, sizeof(user), &aor->user);
    cpj_dns_copy_lower(domain, sizeof(domain), &aor->host);
    pthread_mutex_lock(&st->lock);
    for (slot = 0; slot < CPJ_DNS_MAX_SENT; ++slot) {
        if (st->sent[slot].used && strcmp(st->sent[slot].user, user) == 0 &&
            strcmp(st->sent[slot].domain, domain) == 0)
            break;
    }
    if (slot == CPJ_DNS_MAX_SENT) slot = st->next_sent++ % CPJ_DNS_MAX_SENT;
    st->sent[slot].used = 1;
    strcpy(st->sent[slot].user, user);
    strcpy(st->sent[slot].domain, domain);
    pj_sockaddr_cp(&st->sent[slot].dst, &tdata->tp_info.dst_addr);
    st->sent[slot].count = tdata->dest_info.addr.count;
    for (i = 0; i < tdata->dest_info.addr.count && i < PJSIP_MAX_RESOLVED_ADDRESSES; ++i) {
        pj_sockaddr_cp(&st->sent[slot].targets[i], &tdata->dest_info.addr.entry[i].addr);
    }
    pthread_mutex_unlock(&st->lock);
    return PJ_SUCCESS;
}

/* Sets the nameservers (IP literals, each with its port), the query timing, how long a
 * nameserver that did not answer is left alone, the hold-down of unresponsive targets, and
 * installs the resolver and module above. Call once after pjsua_init, which created the DNS
 * resolver from pjsua_config.nameserver. */
pj_status_t cpj_dns_setup(const pj_str_t *servers, const pj_uint16_t *ports, unsigned count,
                          unsigned retransmit_msec, unsigned retransmissions, unsigned bad_ns_sec,
                          unsigned hold_down_msec) {
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pj_dns_resolver *dns = pjsua_var.resolver;
    pj_dns_settings settings;
    pj_pool_t *pool;
    pj_status_t status;
    if (!endpt || !dns) return PJ_EINVALIDOP;
    status = pj_dns_resolver_set_ns(dns, count, servers, ports);
    if (status != PJ_SUCCESS) return status;
    pj_dns_settings_default(&settings);
    pj_dns_resolver_get_settings(dns, &settings);
    settings.qretr_delay = retransmit_msec;
    settings.qretr_count = retransmissions;
    settings.bad_ns_ttl = bad_ns_sec;
    status = pj_dns_resolver_set_settings(dns, &settings);
    if (status != PJ_SUCCESS) return status;
    /* The inner resolver's pool lives until pjsua_destroy releases every pool. */
    pool = pjsua_pool_create("cpj-dns", 512, 512);
    if (!pool) return PJ_ENOMEM;
    pthread_mutex_lock(&cpj_dns.lock);
    pj_bzero(&cpj_dns.marked, sizeof(cpj_dns.marked));
    pj_bzero(&cpj_dns.sent, sizeof(cpj_dns.sent));
    cpj_dns.next_sent = 0;
    cpj_dns.hold_down_msec = hold_down_msec;
    pthread_mutex_unlock(&cpj_dns.lock);
    status = pjsip_resolver_create(pool, &cpj_dns.inner);
    if (status != PJ_SUCCESS) return status;
    pjsip_resolver_set_resolver(cpj_dns.inner, dns);
    pj_bzero(&cpj_dns.module, sizeof(cpj_dns.module));
    cpj_dns.module.name = pj_str((char *)"mod-swiftpjsua-dns-failover");
    cpj_dns.module.id = -1;
    cpj_dns.module.priority = PJSIP_MOD_PRIORITY_TRANSPORT_LAYER + 1;
    cpj_dns.module.on_tx_request = &cpj_dns_on_tx_request;
    status = pjsip_endpt_register_module(endpt, &cpj_dns.module);
    if (status != PJ_SUCCESS) return status;
    __atomic_store_n(&cpj_dns.active, 1, __ATOMIC_RELEASE);
    cpj_dns.ext.resolve = &cpj_dns_resolve;
    /* Detach the DNS resolver first: setting an external resolver destroys the one set. */
    pjsip_endpt_set_resolver(endpt, NULL);
    return pjsip_endpt_set_ext_resolver(endpt, &cpj_dns.ext);
}

/* Before pjsua_destroy: gives the endpoint its DNS resolver back, so that pjsip destroys
 * it as it would have, and requests sent while pjsua shuts down resolve as usual. */
void cpj_dns_teardown(void) {
    cpj_dns_state *st = cpj_dns_current();
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pj_dns_resolver *dns = pjsua_var.resolver;
    if (!st || !endpt) return;
    pjsip_endpt_set_ext_resolver(endpt, NULL);
    if (dns) pjsip_endpt_set_resolver(endpt, dns);
    /* The module stays registered until pjsua_destroy; with no state it does nothing. */
    __atomic_store_n(&cpj_dns.active, 0, __ATOMIC_RELEASE);
}

/* After the account's REGISTER timed out (or failed to send) with no response: marks the
 * address it went to unresponsive for the hold-down time. Returns 1 when its resolution
 * had another target not marked, that a new REGISTER would go to; 0 otherwise (no
 * nameserver, an IP or single-target registrar, or every target marked). */
int cpj_dns_mark_register_unanswered(pjsua_acc_id acc_id) {
    cpj_dns_state *st = cpj_dns_current();
    char user[64], domain[128];
    unsigned i, slot;
    int other = 0;
    pj_uint64_t now = cpj_dns_now_msec();
    if (!st || st->hold_down_msec == 0 || acc_id < 0 || acc_id >= (int)PJ_ARRAY_SIZE(pjsua_var.acc)) return 0;
    PJSUA_LOCK();
    cpj_dns_copy_lower(user, sizeof(user), &pjsua_var.acc[acc_id].user_part);
    cpj_dns_copy_lower(domain, sizeof(domain), &pjsua_var.acc[acc_id].srv_domain);
    PJSUA_UNLOCK();
    pthread_mutex_lock(&st->lock);
    for (slot = 0; slot < CPJ_DNS_MAX_SENT; ++slot) {
        if (st->sent[slot].used && strcmp(st->sent[slot].user, user) == 0 &&
            strcmp(st->sent[slot].domain, domain) == 0)
            break;
    }
    if (slot < CPJ_DNS_MAX_SENT) {
        unsigned free_slot = 0;
        pj_uint64_t oldest = (pj_uint64_t)-1;
        for (i = 0; i < CPJ_DNS_MAX_MARKED; ++i) {
            if (st->marked[i].used && pj_sockaddr_cmp(&st->marked[i].addr, &st->sent[slot].dst) == 0) {
                free_slot = i;
                break;
            }
            if (!st->marked[i].used || st->marked[i].until < oldest) {
                oldest = st->marked[i].used ? st->marked[i].until : 0;
                free_slot = i;
            }
        }
        st->marked[free_slot].used = 1;
        pj_sockaddr_cp(&st->marked[free_slot].addr, &st->sent[slot].dst);
        st->marked[free_slot].until = now + st->hold_down_msec;
        for (i = 0; i < st->sent[slot].count && i < PJSIP_MAX_RESOLVED_ADDRESSES; ++i) {
            if (!cpj_dns_is_marked_locked(st, &st->sent[slot].targets[i], now)) { other = 1; break; }
        }
        {
            char text[PJ_INET6_ADDRSTRLEN + 10];
            PJ_LOG(3, ("swiftpjsua", "DNS: REGISTER for %s@%s got no response from %s: marked unresponsive for %u ms%s",
                       user, domain, pj_sockaddr_print(&st->sent[slot].dst, text, sizeof(text), 3),
                       st->hold_down_msec, other ? ", trying the next target" : ", no other target left"));
        }
    }
    pthread_mutex_unlock(&st->lock);
    return other;
}

/* PJ_DNS_RESOLVER_MAX_NS bounds pj_dns_resolver_set_ns; pjsua_config holds 4. */
unsigned cpj_max_nameservers(void) { return (unsigned)PJ_ARRAY_SIZE(((pjsua_config *)0)->nameserver); }
/* pjsua_config.nameserver is a fixed-size C array: Swift would copy it as a tuple. */
void cpj_config_set_nameserver(pjsua_config *config, unsigned index, pj_str_t server) {
    if (index < PJ_ARRAY_SIZE(config->nameserver)) {
        config->nameserver[index] = server;
        if (config->nameserver_count <= index) config->nameserver_count = index + 1;
    }
}
