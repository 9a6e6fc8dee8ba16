/*
 * Dead-peer detection (media inactivity and lost SIP connections): which connection a
 * call's transactions use, what pjsip reports when one of them dies, and what a re-INVITE's
 * transaction ended with.
 */
#include "CPJSUAShim.h"

/* The transport an INVITE-session event went over: the transaction's transport, else the
 * transport of the message that caused the event; NULL when there is none (a timer). */
pjsip_transport *cpj_event_transport(const pjsip_event *e) {
    if (!e) return NULL;
    switch (e->type) {
    case PJSIP_EVENT_TSX_STATE:
        if (e->body.tsx_state.tsx && e->body.tsx_state.tsx->transport) return e->body.tsx_state.tsx->transport;
        if (e->body.tsx_state.type == PJSIP_EVENT_RX_MSG && e->body.tsx_state.src.rdata)
            return e->body.tsx_state.src.rdata->tp_info.transport;
        return NULL;
    case PJSIP_EVENT_RX_MSG:
        return e->body.rx_msg.rdata ? e->body.rx_msg.rdata->tp_info.transport : NULL;
    default:
        return NULL;
    }
}

/* PJSIP_TRANSPORT_IS_RELIABLE is a macro: whether the transport is a connection (TCP, TLS). */
pj_bool_t cpj_transport_is_reliable(const pjsip_transport *tp) {
    return tp && PJSIP_TRANSPORT_IS_RELIABLE(tp) ? PJ_TRUE : PJ_FALSE;
}

/* Names one connection as "TYPE local->remote" (for example "TCP 127.0.0.1:5060->127.0.0.1:40112"),
 * so a call can remember its connection without holding a reference on the transport. */
int cpj_transport_describe(const pjsip_transport *tp, char *buffer, pj_size_t size) {
    char local[PJ_INET6_ADDRSTRLEN + 10], remote[PJ_INET6_ADDRSTRLEN + 10];
    int length;
    if (!tp || !buffer || size == 0) return -1;
    pj_sockaddr_print(&tp->local_addr, local, sizeof(local), 3);
    pj_sockaddr_print(&tp->key.rem_addr, remote, sizeof(remote), 3);
    length = pj_ansi_snprintf(buffer, size, "%s %s->%s", tp->type_name ? tp->type_name : "?", local, remote);
    return length < 0 || (pj_size_t)length >= size ? -1 : length;
}

/* A reference that keeps a transport's memory valid until cpj_transport_release. */
void cpj_transport_retain(pjsip_transport *tp) { if (tp) pjsip_transport_add_ref(tp); }
void cpj_transport_release(pjsip_transport *tp) { if (tp) pjsip_transport_dec_ref(tp); }

/* Whether pjsip has taken the transport out of use: TCP and TLS report DISCONNECTED before
 * they shut the transport down, and until then a new request could still be sent over it. */
pj_bool_t cpj_transport_is_shut_down(const pjsip_transport *tp) {
    return tp && (tp->is_shutdown || tp->is_destroying) ? PJ_TRUE : PJ_FALSE;
}

/* The pjsip_transport_state values Swift compares against (an enum typedef it imports as a struct). */
pjsip_transport_state cpj_tp_state_disconnected(void) { return PJSIP_TP_STATE_DISCONNECTED; }

/* What a finished client INVITE transaction (a re-INVITE) of a call reports: 0 while it is
 * not finished or not ours, else its final status; *local is set when pjsip made the status
 * up itself (timeout, transport error) rather than receiving a response. */
int cpj_event_reinvite_outcome(pjsip_transaction *tsx, const pjsip_event *e, pj_bool_t *local) {
    if (!tsx || !e || e->type != PJSIP_EVENT_TSX_STATE) return 0;
    if (tsx->role != PJSIP_ROLE_UAC || tsx->method.id != PJSIP_INVITE_METHOD) return 0;
    if (tsx->state != PJSIP_TSX_STATE_COMPLETED && tsx->state != PJSIP_TSX_STATE_TERMINATED) return 0;
    if (tsx->status_code < 200) return 0;
    if (local) *local = e->body.tsx_state.type == PJSIP_EVENT_RX_MSG ? PJ_FALSE : PJ_TRUE;
    return tsx->status_code;
}
