/*
 * Dead-flow recovery (RFC 5626 §4.4-4.5). A TCP or TLS connection that a NAT or firewall
 * forgot silently stays in pjsip's transport manager, which hands it to every later request
 * to the same address: each retry would time out on it again. Shutting the transport down
 * takes it out of the manager, so the next request opens a new connection; it is destroyed
 * once its last user lets go of it.
 */
#include "CPJSUAShim.h"
#include <pjsua-lib/pjsua_internal.h>

/* The transport a client registration last used (NULL when none). pjsip_regc_get_info
 * returns it together with strings the caller does not need; the regc holds a reference to
 * it for as long as the regc lives (inside the registration callback: all through it). */
pjsip_transport *cpj_regc_last_transport(pjsip_regc *regc) {
    pjsip_regc_info info;
    if (!regc || pjsip_regc_get_info(regc, &info) != PJ_SUCCESS) return NULL;
    return info.transport;
}

/* Shuts down `tp` when it is connection-oriented and not already shutting down; returns
 * PJ_TRUE when it did. A datagram transport has no flow to replace and is left alone. */
pj_bool_t cpj_shutdown_failed_flow(pjsip_transport *tp, const char *why) {
    if (!tp || !(tp->flag & PJSIP_TRANSPORT_RELIABLE) || tp->is_shutdown || tp->is_destroying) return PJ_FALSE;
    PJ_LOG(3, ("swiftpjsua", "%s: %s: shutting the flow down so that the next request opens a new one",
               tp->obj_name, why ? why : "failed"));
    return pjsip_transport_shutdown(tp) == PJ_SUCCESS;
}

/* The transport of a request we sent that timed out with no response at all (a client
 * transaction ended by its timer B or F), else NULL. The transaction holds it while its
 * state callbacks run. A transport error is not a silent death: pjsip's TCP and TLS
 * transports shut themselves down on it. */
pjsip_transport *cpj_tsx_unanswered_transport(const pjsip_transaction *tsx, const pjsip_event *e) {
    if (!tsx || !e || tsx->role != PJSIP_ROLE_UAC || tsx->state != PJSIP_TSX_STATE_TERMINATED) return NULL;
    if (tsx->status_code != PJSIP_SC_TSX_TIMEOUT || e->type != PJSIP_EVENT_TSX_STATE ||
        e->body.tsx_state.type != PJSIP_EVENT_TIMER) return NULL;
    return tsx->transport;
}

/* RFC 5626 §4.4.1 CRLF keep-alive on an account's registration flow: the ping is CRLF CRLF
 * on the connection; the registrar's pong (CRLF), like any other data that arrives, moves
 * the transport's last_recv_ts, which pjsip keeps for every transport (pjsip drops the pong
 * itself before anything else can see it). Both functions take pjsua's lock, under which
 * the account's regc, and the transport it holds, stay alive. */

#define CPJ_FLOW_FAILED 0 /* nothing arrived since the ping: the flow was shut down */
#define CPJ_FLOW_ALIVE 1  /* something arrived since the ping (last, a message) */
#define CPJ_FLOW_GONE 2   /* the account registers over another flow now, or none */
#define CPJ_FLOW_PONG 3   /* something arrived since the ping, last a bare CRLF: a pong */
#define CPJ_FLOW_SILENT 4 /* nothing arrived, and the caller did not allow a shutdown */

/* The TCP or TLS transport the account's registration last used, when still in service.
 * Call with pjsua's lock held. */
static pjsip_transport *cpj_acc_flow_locked(pjsua_acc_id acc_id) {
    pjsip_transport *tp;
    if (acc_id < 0 || acc_id >= (pjsua_acc_id)PJ_ARRAY_SIZE(pjsua_var.acc)) return NULL;
    if (!pjsua_var.acc[acc_id].valid || !pjsua_var.acc[acc_id].regc) return NULL;
    tp = cpj_regc_last_transport(pjsua_var.acc[acc_id].regc);
    if (!tp || !(tp->flag & PJSIP_TRANSPORT_RELIABLE) || tp->is_shutdown || tp->is_destroying) return NULL;
    return tp;
}

/* Sends a ping on the account's registration flow; stores when in *sent_at. Returns the
 * flow's identity (the transport's address, only ever compared afterwards), or 0 when the
 * account has no TCP or TLS flow now or the send failed. */
pj_size_t cpj_acc_flow_ping(pjsua_acc_id acc_id, pj_uint64_t *sent_at) {
    static const char ping[] = "\r\n\r\n";
    pjsip_transport *tp;
    pjsip_tpselector sel;
    pj_timestamp now;
    pj_status_t status;
    pj_size_t flow = 0;
    PJSUA_LOCK();
    tp = cpj_acc_flow_locked(acc_id);
    if (tp) {
        pj_bzero(&sel, sizeof(sel));
        sel.type = PJSIP_TPSELECTOR_TRANSPORT;
        sel.u.transport = tp;
        pj_get_timestamp(&now);
        status = pjsip_tpmgr_send_raw(pjsip_endpt_get_tpmgr(pjsua_get_pjsip_endpt()),
                                      (pjsip_transport_type_e)tp->key.type, &sel, NULL, ping, 4,
                                      &tp->key.rem_addr, tp->addr_len, NULL, NULL);
        if (status == PJ_SUCCESS || status == PJ_EPENDING) {
            *sent_at = now.u64;
            flow = (pj_size_t)tp;
        }
    }
    PJSUA_UNLOCK();
    return flow;
}

/* Judges the flow pinged at sent_at: CPJ_FLOW_PONG, CPJ_FLOW_ALIVE or CPJ_FLOW_GONE; when
 * nothing arrived, CPJ_FLOW_FAILED after shutting the flow down if may_shut (the caller then
 * registers again, on a new connection), else CPJ_FLOW_SILENT. pjsip records the length of
 * the last packet received (last_recv_len): 2 is the CRLF of a pong. */
int cpj_acc_flow_check(pjsua_acc_id acc_id, pj_size_t flow, pj_uint64_t sent_at, pj_bool_t may_shut) {
    pjsip_transport *tp;
    int result = CPJ_FLOW_GONE;
    PJSUA_LOCK();
    tp = cpj_acc_flow_locked(acc_id);
    if (tp && (pj_size_t)tp == flow) {
        if (tp->last_recv_ts.u64 > sent_at) {
            result = tp->last_recv_len == 2 ? CPJ_FLOW_PONG : CPJ_FLOW_ALIVE;
        } else if (may_shut) {
            cpj_shutdown_failed_flow(tp, "no pong to the keep-alive ping");
            result = CPJ_FLOW_FAILED;
        } else {
            result = CPJ_FLOW_SILENT;
        }
    }
    PJSUA_UNLOCK();
    return result;
}
