/*
 * pj_status_t values Swift compares against. Their bases differ between pjproject
 * versions, so they are never hard-coded; most are expression macros
 * (PJ_ERRNO_START_STATUS + n), which Swift does not import.
 */
#include "CPJSUAShim.h"

/* PJ_SUCCESS is a plain macro, but spelled here so every status check reads the same. */
pj_status_t cpj_success(void) { return PJ_SUCCESS; }
/* Expression macros (PJ_ERRNO_START_STATUS + n) are not imported by Swift. */
pj_status_t cpj_status_einval(void) { return PJ_EINVAL; }
pj_status_t cpj_status_enotfound(void) { return PJ_ENOTFOUND; }
pj_status_t cpj_status_etoomany(void) { return PJ_ETOOMANY; }
pj_status_t cpj_status_ebusy(void) { return PJ_EBUSY; }
pj_status_t cpj_status_einvalidop(void) { return PJ_EINVALIDOP; }
pj_status_t cpj_status_etimedout(void) { return PJ_ETIMEDOUT; }
pj_status_t cpj_status_eexists(void) { return PJ_EEXISTS; }
pj_status_t cpj_status_eafnotsup(void) { return PJ_EAFNOTSUP; }
pj_status_t cpj_status_auth_stale_count(void) { return PJSIP_EAUTHSTALECOUNT; }
pj_status_t cpj_status_enomem(void) { return PJ_ENOMEM; }
pj_status_t cpj_status_einvaliduri(void) { return PJSIP_EINVALIDURI; }
pj_status_t cpj_status_esessionterminated(void) { return PJSIP_ESESSIONTERMINATED; }
pj_status_t cpj_status_esessionstate(void) { return PJSIP_ESESSIONSTATE; }
/* PJSIP_EMSGTOOLONG: a message longer than PJSIP_MAX_PKT_LEN (16000 bytes on the iOS build). */
pj_status_t cpj_status_emsgtoolong(void) { return PJSIP_EMSGTOOLONG; }
/* No default sound device (PJMEDIA_EAUD_NODEFDEV): a machine without audio hardware. */
pj_status_t cpj_status_aud_nodefdev(void) { return PJMEDIA_EAUD_NODEFDEV; }
/* PJSIP_EBUSY: pjsua_acc_set_registration while the account's REGISTER is in flight. */
pj_status_t cpj_status_pjsip_ebusy(void) { return PJSIP_EBUSY; }
/* PJSIP_ESESSIONINSECURE: SRTP asked for with secure signalling on an insecure transport. */
pj_status_t cpj_status_esessioninsecure(void) { return PJSIP_ESESSIONINSECURE; }

/* PJSIP_ERRNO_FROM_SIP_STATUS / PJSIP_ERRNO_TO_SIP_STATUS are function-like macros. */
pj_status_t cpj_status_from_sip(int code) { return PJSIP_ERRNO_FROM_SIP_STATUS(code); }
/* The SIP status (100-799) a pj_status_t carries, or 0 when it is no SIP status. */
int cpj_sip_code_from_status(pj_status_t status) {
    if (status >= PJSIP_ERRNO_FROM_SIP_STATUS(100) && status < PJSIP_ERRNO_FROM_SIP_STATUS(800))
        return PJSIP_ERRNO_TO_SIP_STATUS(status);
    return 0;
}
