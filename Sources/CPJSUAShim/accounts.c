/*
 * Accounts: pjsua_acc_config's fixed-size arrays and pjlib lists, which Swift sees as
 * tuples or cannot build, its version differences, and the user data of an account that
 * may have been deleted.
 */
#include "CPJSUAShim.h"
#include <pjsua-lib/pjsua_internal.h>

/* What an account's media uses when its RTP address is IPv6, or IPv4. Before 2.14,
 * PJSUA_IPV6_ENABLED meant IPv6; from 2.14 on it means "no preference", which falls back
 * to IPv4 for an offer (and to PJ_ERESOLVE on a ::1 socket), so ask for IPv6 only. */
pjsua_ipv6_use cpj_ipv6_media_use(pj_bool_t ipv6_address) {
    if (!PJ_HAS_IPV6 || !ipv6_address) return PJSUA_IPV6_DISABLED;
#if CPJ_VERSION_AT_LEAST(2, 14)
    return PJSUA_IPV6_ENABLED_USE_IPV6_ONLY;
#else
    return PJSUA_IPV6_ENABLED;
#endif
}

/* Start each account's RTP port search at a random even port of its range: pjsua has
 * pjsua_transport_config.randomize_port from 2.13; returns PJ_FALSE where it does not
 * (the engine then picks the start itself). */
pj_bool_t cpj_rtp_randomize_port(pjsua_transport_config *cfg) {
#if CPJ_VERSION_AT_LEAST(2, 13)
    cfg->randomize_port = PJ_TRUE;
    return PJ_TRUE;
#else
    (void)cfg;
    return PJ_FALSE;
#endif
}

/* ---- Accounts that may have been deleted: pjsua_acc_get_user_data asserts (aborts the
 * process) on a deleted account, and pjsua still hands out the account id of a call whose
 * account was removed (its callbacks, pjsua_call_get_info). This reads the same field
 * without the assertion: the user data of a valid account in range, else NULL. No lock:
 * pjsua_var.acc is a static array, and a removal racing the read only makes the handle
 * stale a moment sooner. ---- */

void *cpj_acc_user_data_if_valid(pjsua_acc_id acc_id) {
    if (acc_id < 0 || acc_id >= (pjsua_acc_id)PJ_ARRAY_SIZE(pjsua_var.acc)) return NULL;
    if (!pjsua_var.acc[acc_id].valid) return NULL;
    return pjsua_var.acc[acc_id].cfg.user_data;
}

/* PJSIP_EXPIRES_NOT_SPECIFIED is a cast expression macro: the "no Expires" lifetime. */
pj_uint32_t cpj_expires_not_specified(void) { return PJSIP_EXPIRES_NOT_SPECIFIED; }

/* ---- Account configuration: fixed-size arrays and pjlib lists inside pjsua_acc_config. ---- */

/* The sizes of cred_info[] and proxy[] (both PJSUA_ACC_MAX_PROXIES long). */
unsigned cpj_acc_max_credentials(void) { return PJSUA_ACC_MAX_PROXIES; }
unsigned cpj_acc_max_proxies(void) { return PJSUA_ACC_MAX_PROXIES; }

/* Credential `index` of cred_info[], or NULL past its end. */
pjsip_cred_info *cpj_acc_credential(pjsua_acc_config *cfg, unsigned index) {
    return index < PJSUA_ACC_MAX_PROXIES ? &cfg->cred_info[index] : NULL;
}

/* Sets proxy[index]; an index past the array's end is ignored. */
void cpj_acc_set_proxy(pjsua_acc_config *cfg, unsigned index, pj_str_t uri) {
    if (index < PJSUA_ACC_MAX_PROXIES) cfg->proxy[index] = uri;
}

/* pj_list_push_back may be an inline function or a macro depending on PJ_FUNCTIONS_ARE_INLINED. */
void cpj_acc_add_register_header(pjsua_acc_config *cfg, pj_pool_t *pool, pj_str_t name, pj_str_t value) {
    pjsip_generic_string_hdr *hdr = pjsip_generic_string_hdr_create(pool, &name, &value);
    if (hdr) pj_list_push_back(&cfg->reg_hdr_list, hdr);
}

/* pjsip_cred_data_type values, spelled as the unsigned field they go into. */
pj_uint32_t cpj_cred_plain_password(void) { return PJSIP_CRED_DATA_PLAIN_PASSWD; }
pj_uint32_t cpj_cred_digest(void) { return PJSIP_CRED_DATA_DIGEST; }

/* The digest algorithm of an HA1 credential (PJSIP_CRED_DATA_DIGEST), in the shim's own
 * numbering: pjsip_cred_info.algorithm_type and pjsip_auth_algorithm_type came with RFC 7616
 * and RFC 8760 support in 2.15.1, together with PJSIP_AUTH_MAX_DIGEST_BUFFER_LENGTH, which
 * stands for them here. Before that pjsip takes an HA1 as MD5 only. */
#if defined(PJSIP_AUTH_MAX_DIGEST_BUFFER_LENGTH)
static pjsip_auth_algorithm_type cpj_digest_algorithm_type(cpj_digest_algorithm algorithm) {
    switch (algorithm) {
    case CPJ_DIGEST_MD5: return PJSIP_AUTH_ALGORITHM_MD5;
    case CPJ_DIGEST_SHA256: return PJSIP_AUTH_ALGORITHM_SHA256;
    }
    return PJSIP_AUTH_ALGORITHM_NOT_SET;
}
#endif

/* Whether pjsip can answer a challenge with an HA1 of `algorithm`: MD5 always; SHA-256 only
 * from 2.15.1 and with OpenSSL (pjsip_auth_is_algorithm_supported asks it at run time). */
pj_bool_t cpj_digest_algorithm_available(cpj_digest_algorithm algorithm) {
    if (algorithm == CPJ_DIGEST_MD5) return PJ_TRUE;
#if defined(PJSIP_AUTH_MAX_DIGEST_BUFFER_LENGTH)
    pjsip_auth_algorithm_type type = cpj_digest_algorithm_type(algorithm);
    return type != PJSIP_AUTH_ALGORITHM_NOT_SET && pjsip_auth_is_algorithm_supported(type);
#else
    return PJ_FALSE;
#endif
}

/* Marks `cred` as an HA1 of `algorithm`; PJ_FALSE (and `cred` left alone) when this pjsip
 * cannot use one (see cpj_digest_algorithm_available). */
pj_bool_t cpj_cred_set_digest_algorithm(pjsip_cred_info *cred, cpj_digest_algorithm algorithm) {
    if (!cpj_digest_algorithm_available(algorithm)) return PJ_FALSE;
#if defined(PJSIP_AUTH_MAX_DIGEST_BUFFER_LENGTH)
    cred->algorithm_type = cpj_digest_algorithm_type(algorithm);
#else
    (void)cred;
#endif
    return PJ_TRUE;
}
