/*
 * SRTP (RFC 3711) with SDES (RFC 4568) or DTLS-SRTP (RFC 5763/5764) keying: what the
 * pjmedia linked in offers, an account's SRTP settings (fixed arrays Swift cannot index),
 * and what a call's streams negotiated.
 */
#include "CPJSUAShim.h"
#include <pjsua-lib/pjsua_internal.h>

/* Whether the pjmedia linked in has DTLS-SRTP keying: PJMEDIA_SRTP_HAS_DTLS is a build
 * option (0 by default), and without it pjmedia_srtp_enum_keying lists SDES alone. */
pj_bool_t cpj_srtp_has_keying(pjmedia_srtp_keying_method method) {
    pjmedia_srtp_keying_method keying[PJMEDIA_SRTP_KEYINGS_COUNT];
    unsigned count = PJMEDIA_SRTP_KEYINGS_COUNT, i;
    if (pjmedia_srtp_enum_keying(&count, keying) != PJ_SUCCESS) return PJ_FALSE;
    for (i = 0; i < count; ++i)
        if (keying[i] == method) return PJ_TRUE;
    return PJ_FALSE;
}

/* The crypto suites pjmedia knows, by name (index 0 up to the count); NULL past the end.
 * The names are static strings of libsrtp's table. */
unsigned cpj_srtp_crypto_count(void) {
    pjmedia_srtp_crypto crypto[PJMEDIA_SRTP_MAX_CRYPTOS];
    unsigned count = PJMEDIA_SRTP_MAX_CRYPTOS;
    return pjmedia_srtp_enum_crypto(&count, crypto) == PJ_SUCCESS ? count : 0;
}
pj_str_t cpj_srtp_crypto_name(unsigned index) {
    pjmedia_srtp_crypto crypto[PJMEDIA_SRTP_MAX_CRYPTOS];
    unsigned count = PJMEDIA_SRTP_MAX_CRYPTOS;
    pj_str_t none = {NULL, 0};
    if (pjmedia_srtp_enum_crypto(&count, crypto) != PJ_SUCCESS || index >= count) return none;
    return crypto[index].name;
}

/* Fills an account's SRTP settings; Swift cannot index srtp_opt's fixed arrays. `keying`
 * lists the methods in order of preference, `crypto` the suite names (pjsua_acc_add and
 * pjsua_acc_modify copy them); an empty list keeps pjmedia's defaults (every suite it has,
 * every keying it was built with). */
void cpj_acc_config_set_srtp(pjsua_acc_config *cfg, pjmedia_srtp_use use, int secure_signaling,
                             const pjmedia_srtp_keying_method *keying, unsigned keying_count,
                             const pj_str_t *crypto, unsigned crypto_count) {
    unsigned i;
    cfg->use_srtp = use;
    cfg->srtp_secure_signaling = secure_signaling;
    if (keying_count > PJMEDIA_SRTP_KEYINGS_COUNT) keying_count = PJMEDIA_SRTP_KEYINGS_COUNT;
    if (keying_count > 0) {
        cfg->srtp_opt.keying_count = keying_count;
        for (i = 0; i < keying_count; ++i) cfg->srtp_opt.keying[i] = keying[i];
    }
    if (crypto_count > PJMEDIA_SRTP_MAX_CRYPTOS) crypto_count = PJMEDIA_SRTP_MAX_CRYPTOS;
    if (crypto_count > 0) {
        cfg->srtp_opt.crypto_count = crypto_count;
        for (i = 0; i < crypto_count; ++i) {
            pj_bzero(&cfg->srtp_opt.crypto[i], sizeof(cfg->srtp_opt.crypto[i]));
            cfg->srtp_opt.crypto[i].name = crypto[i];
        }
    }
}

/* The SRTP state of one of a call's media transports: whether the SRTP session is active
 * and the suite it sends with (tx_policy.name, copied NUL-terminated into `suite`, which
 * holds `capacity` bytes: the name points into the transport, which the call can free; the
 * keys are left out). Returns 0 when the stream has no SRTP transport.
 * pjsua_call_get_med_transport_info locks the call itself. */
int cpj_call_srtp_info(pjsua_call_id call_id, unsigned med_idx, pj_bool_t *active,
                       char *suite, unsigned capacity) {
    pjmedia_transport_info info;
    const pjmedia_srtp_info *srtp;
    pj_ssize_t length;
    if (capacity == 0) return 0;
    suite[0] = 0;
    pjmedia_transport_info_init(&info);
    if (pjsua_call_get_med_transport_info(call_id, med_idx, &info) != PJ_SUCCESS) return 0;
    srtp = (const pjmedia_srtp_info *)pjmedia_transport_info_get_spc_info(&info, PJMEDIA_TRANSPORT_TYPE_SRTP);
    if (!srtp) return 0;
    *active = srtp->active;
    length = srtp->tx_policy.name.slen;
    if (length < 0) length = 0;
    if ((unsigned)length >= capacity) length = capacity - 1;
    if (length > 0 && srtp->tx_policy.name.ptr) pj_memcpy(suite, srtp->tx_policy.name.ptr, length);
    suite[length] = 0;
    return 1;
}

/* Whether an m= line has attribute `name`, in the media section or (a=fingerprint may sit
 * there, RFC 8122 §5; baresip puts it there) at session level. */
static pj_bool_t cpj_sdp_media_or_session_has(const pjmedia_sdp_session *sdp, const pjmedia_sdp_media *m,
                                              const char *name, pj_bool_t session_level) {
    pj_str_t attr = pj_str((char *)name);
    if (pjmedia_sdp_media_find_attr(m, &attr, NULL)) return PJ_TRUE;
    return session_level && pjmedia_sdp_attr_find(sdp->attr_count, sdp->attr, &attr, NULL) != NULL;
}

/* Which keying a negotiated stream used, from the active SDP: DTLS-SRTP when both the
 * local and the remote m= line carry a=fingerprint (in the m= section or at session level),
 * SDES when both carry a=crypto; -1 when
 * neither (or no session yet). pjmedia's SRTP transport does not report it. Call from a
 * call callback, where pjsua holds the call's dialog (the negotiator changes under it). */
int cpj_call_srtp_keying(pjsua_call_id call_id, unsigned med_idx) {
    const pjsua_call *call;
    pjsip_inv_session *inv;
    const pjmedia_sdp_session *local = NULL, *remote = NULL;
    const pjmedia_sdp_media *lm, *rm;
    if (call_id < 0 || call_id >= (pjsua_call_id)PJSUA_MAX_CALLS) return -1;
    call = &pjsua_get_var()->calls[call_id];
    inv = call->inv;
    if (!inv || !inv->neg || call->med_cnt == 0) return -1;
    if (pjmedia_sdp_neg_get_state(inv->neg) != PJMEDIA_SDP_NEG_STATE_DONE) return -1;
    if (pjmedia_sdp_neg_get_active_local(inv->neg, &local) != PJ_SUCCESS || !local) return -1;
    if (pjmedia_sdp_neg_get_active_remote(inv->neg, &remote) != PJ_SUCCESS || !remote) return -1;
    if (med_idx >= local->media_count || med_idx >= remote->media_count) return -1;
    lm = local->media[med_idx];
    rm = remote->media[med_idx];
    if (cpj_sdp_media_or_session_has(local, lm, "fingerprint", PJ_TRUE) &&
        cpj_sdp_media_or_session_has(remote, rm, "fingerprint", PJ_TRUE))
        return PJMEDIA_SRTP_KEYING_DTLS_SRTP;
    if (pjmedia_sdp_media_find_attr2(lm, "crypto", NULL) && pjmedia_sdp_media_find_attr2(rm, "crypto", NULL))
        return PJMEDIA_SRTP_KEYING_SDES;
    return -1;
}
