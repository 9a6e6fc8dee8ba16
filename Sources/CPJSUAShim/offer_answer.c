/*
 * Offer/answer edge cases (RFC 3261 §13-14, RFC 3264): 488 instead of pjsip's 500 for an
 * unacceptable re-INVITE offer, a repeated early answer that is no new answer, and a call
 * confirmed by an ACK without the answer to our offer. One pjsip module plus the checks the
 * engine makes from its call callbacks.
 */
#include "CPJSUAShim.h"
#include <pjsua-lib/pjsua_internal.h>

/* pjsip answers a re-INVITE whose offer it cannot negotiate (no codec in common) with
 * 500 "SDP negotiation failed": pjsua builds an answer and the negotiation fails after it.
 * RFC 3261 §14.2 asks 488 for an offer that is not acceptable. Rewrites that response on its
 * way out, before the transport layer prints it (the transaction retransmits the same
 * buffer); pjsip uses that reason text for this failure only. */
static pj_status_t cpj_offer_on_tx_response(pjsip_tx_data *tdata) {
    static const pj_str_t failed = { (char *)"SDP negotiation failed", 22 };
    pjsip_msg *msg = tdata->msg;
    const pjsip_cseq_hdr *cseq = (const pjsip_cseq_hdr *)pjsip_msg_find_hdr(msg, PJSIP_H_CSEQ, NULL);
    if (msg->type != PJSIP_RESPONSE_MSG || msg->line.status.code != PJSIP_SC_INTERNAL_SERVER_ERROR) return PJ_SUCCESS;
    if (!cseq || cseq->method.id != PJSIP_INVITE_METHOD) return PJ_SUCCESS;
    if (pj_strcmp(&msg->line.status.reason, &failed) != 0) return PJ_SUCCESS;
    msg->line.status.code = PJSIP_SC_NOT_ACCEPTABLE_HERE;
    msg->line.status.reason = *pjsip_get_status_text(PJSIP_SC_NOT_ACCEPTABLE_HERE);
    return PJ_SUCCESS;
}

/* Whether two SDP o= lines name the same session version (RFC 3264 §8: an SDP with the
 * version of the previous one is that SDP again). */
static pj_bool_t cpj_same_sdp_origin(const pjmedia_sdp_session *a, const pjmedia_sdp_session *b) {
    return a->origin.id == b->origin.id && a->origin.version == b->origin.version &&
        pj_strcmp(&a->origin.user, &b->origin.user) == 0 && pj_strcmp(&a->origin.addr, &b->origin.addr) == 0;
}

/* With accept_multiple_sdp_answers (pjsip's default) every unreliable 18x with SDP is
 * negotiated again and pjsua updates the call's media and reports it each time, even for
 * the same answer repeated (a UAS resending 183 while it rings): the app sees a media change
 * that is none, and whatever it does on one (restart ringback or early-media playout)
 * cuts the audio's start. A response whose SDP has the o= session id and version of the
 * dialog's active answer carries no new answer: its body is dropped here, before the
 * transaction layer hands it on, and pjsip sees an 18x without SDP. */
static pj_bool_t cpj_offer_on_rx_response(pjsip_rx_data *rdata) {
    pjsip_msg *msg = rdata->msg_info.msg;
    pjsip_dialog *dlg;
    pjsip_inv_session *inv;
    if (msg->line.status.code / 10 != 18 || !msg->body) return PJ_FALSE;
    if (!rdata->msg_info.cseq || rdata->msg_info.cseq->method.id != PJSIP_INVITE_METHOD) return PJ_FALSE;
    if (!rdata->msg_info.cid || !rdata->msg_info.from || !rdata->msg_info.to || rdata->msg_info.to->tag.slen == 0)
        return PJ_FALSE;
    dlg = pjsip_ua_find_dialog(&rdata->msg_info.cid->id, &rdata->msg_info.from->tag, &rdata->msg_info.to->tag, PJ_TRUE);
    if (!dlg) return PJ_FALSE;
    inv = pjsip_dlg_get_inv_session(dlg);
    if (inv && inv->role == PJSIP_ROLE_UAC && inv->state == PJSIP_INV_STATE_EARLY && inv->neg &&
        pjmedia_sdp_neg_get_state(inv->neg) == PJMEDIA_SDP_NEG_STATE_DONE) {
        const pjmedia_sdp_session *active = NULL;
        const pjsip_rdata_sdp_info *info = pjsip_rdata_get_sdp_info(rdata);
        if (pjmedia_sdp_neg_get_active_remote(inv->neg, &active) == PJ_SUCCESS && active && info && info->sdp &&
            cpj_same_sdp_origin(active, info->sdp)) {
            PJ_LOG(4, ("swiftpjsua", "%s repeats the early answer (same o= version): body ignored",
                       pjsip_rx_data_get_info(rdata)));
            msg->body = NULL;
        }
    }
    pjsip_dlg_dec_lock(dlg);
    return PJ_FALSE;
}

/* Registers the module above, once per pjsua_init: one priority step ahead of the transaction
 * layer, so that it sees responses before they reach their transaction, and sends after
 * the transaction layer but before the transport layer prints. */
pj_status_t cpj_register_offer_answer_module(void) {
    static pjsip_module module;
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pj_str_t name = pj_str((char *)"mod-swiftpjsua-offer-answer");
    if (!endpt) return PJ_EINVALIDOP;
    pj_bzero(&module, sizeof(module));
    module.name = name;
    module.id = -1;
    module.priority = PJSIP_MOD_PRIORITY_TSX_LAYER - 1;
    module.on_rx_response = &cpj_offer_on_rx_response;
    module.on_tx_response = &cpj_offer_on_tx_response;
    return pjsip_endpt_register_module(endpt, &module);
}

/* Whether a call that just became CONFIRMED has no session: our 200 made the offer (the
 * INVITE had none) and the ACK brought no answer, so pjsip's negotiator still waits for one
 * and pjsua never set up media (RFC 3261 §13.2.1). Call from the call's state callback,
 * where pjsua holds the call's dialog. (pjmedia_sdp_neg_get_active_local asserts when
 * nothing is active, hence pjsua's media count.) */
int cpj_call_confirmed_without_answer(pjsua_call_id call_id) {
    const pjsua_call *call;
    pjsip_inv_session *inv;
    if (call_id < 0 || call_id >= (pjsua_call_id)PJSUA_MAX_CALLS) return 0;
    call = &pjsua_get_var()->calls[call_id];
    inv = call->inv;
    if (!inv || inv->role != PJSIP_ROLE_UAS || inv->state != PJSIP_INV_STATE_CONFIRMED || !inv->neg) return 0;
    return pjmedia_sdp_neg_get_state(inv->neg) == PJMEDIA_SDP_NEG_STATE_LOCAL_OFFER && call->med_cnt == 0;
}

/* The Reason (RFC 3326) the BYE for such a call carries. */
#define CPJ_NO_ANSWER_REASON "SIP;cause=488;text=\"no answer in ACK\""

/* Hangs up a call with a Reason header (copied into the BYE); pjsua_call_hangup's msg_data
 * takes headers as a list of pjsip headers, which Swift cannot build. */
pj_status_t cpj_call_hangup_no_answer(pjsua_call_id call_id) {
    pjsua_msg_data msg_data;
    pjsip_generic_string_hdr reason;
    pj_str_t name = pj_str((char *)"Reason");
    pj_str_t value = pj_str((char *)CPJ_NO_ANSWER_REASON);
    pjsua_msg_data_init(&msg_data);
    pjsip_generic_string_hdr_init2(&reason, &name, &value);
    pj_list_push_back(&msg_data.hdr_list, &reason);
    return pjsua_call_hangup(call_id, 0, NULL, &msg_data);
}
/* Whether a client INVITE transaction is the one that set up its dialog (not a re-INVITE):
 * a dialog we created (UAC) and its first CSeq; a dialog we answered starts its own CSeq
 * with our first re-INVITE. That transaction's end can be reported after the call is
 * confirmed, where a re-INVITE's outcome is awaited. */
int cpj_tsx_is_initial_invite(pjsip_transaction *tsx) {
    pjsip_dialog *dlg;
    if (!tsx || tsx->method.id != PJSIP_INVITE_METHOD || tsx->role != PJSIP_ROLE_UAC) return 0;
    dlg = pjsip_tsx_get_dlg(tsx);
    return dlg && dlg->role == PJSIP_ROLE_UAC && tsx->cseq == dlg->local.first_cseq;
}
