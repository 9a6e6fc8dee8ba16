/*
 * Players and recorders: destroyed for real before their destroy call returns, and the
 * end of a non-looping player's file reported to the engine.
 *
 * From 2.15 on the conference bridge removes ports on its clock thread: pjsua_recorder_destroy
 * and pjsua_player_destroy queue the removal and return, and the WAV file is closed on a
 * later clock tick, when the port's group lock is destroyed. These wait for that (a
 * handler on the group lock, which runs after the port's own on_destroy has closed the
 * file), up to timeout_ms. When nothing clocks the bridge (no sound device attached) the
 * removal would wait forever, so the waiting thread runs bridge ticks itself: each mixes
 * one frame (one RTP packet per connected call). Before 2.15 the destroy is synchronous.
 */
#include "CPJSUAShim.h"
#include <pjsua-lib/pjsua_internal.h>
#include <stdlib.h>

#if CPJ_VERSION_AT_LEAST(2, 15)
typedef struct cpj_port_closing {
    int closed;
    int refs; /* the waiter and the handler; the last one out frees it */
} cpj_port_closing;

/* Drops one reference to the closing record. */
static void cpj_port_closing_release(cpj_port_closing *closing) {
    if (__atomic_sub_fetch(&closing->refs, 1, __ATOMIC_ACQ_REL) == 0) free(closing);
}

/* The group lock's handler: the port is gone, its file closed. */
static void cpj_port_closing_on_destroy(void *member) {
    cpj_port_closing *closing = (cpj_port_closing *)member;
    __atomic_store_n(&closing->closed, 1, __ATOMIC_RELEASE);
    cpj_port_closing_release(closing);
}

/* One tick of the bridge when no sound device or null device clocks it. */
static void cpj_conf_tick_if_unclocked(void) {
    pjmedia_port *master;
    pjmedia_frame frame;
    pj_size_t size;
    if (pjsua_var.snd_port != NULL || pjsua_var.null_snd != NULL || pjsua_var.mconf == NULL) return;
    master = pjmedia_conf_get_master_port(pjsua_var.mconf);
    if (master == NULL) return;
    size = PJMEDIA_PIA_SPF(&master->info) * PJMEDIA_PIA_BITS(&master->info) / 8;
    pj_bzero(&frame, sizeof(frame));
    frame.type = PJMEDIA_FRAME_TYPE_AUDIO;
    frame.buf = malloc(size);
    frame.size = size;
    if (frame.buf == NULL) return;
    pjmedia_port_get_frame(master, &frame);
    free(frame.buf);
}

/* Runs `destroy(id)` with a closing record on the port's group lock; NULL when there is
 * nothing to wait for (no group lock, no memory) or the destroy failed (*status says). */
static cpj_port_closing *cpj_destroy_port(pjmedia_port *port, pj_status_t (*destroy)(int), int id,
                                          pj_status_t *status) {
    cpj_port_closing *closing = NULL;
    if (port != NULL && port->grp_lock != NULL) {
        closing = (cpj_port_closing *)calloc(1, sizeof(*closing));
        if (closing != NULL) {
            closing->refs = 2;
            if (pj_grp_lock_add_handler(port->grp_lock, NULL, closing, &cpj_port_closing_on_destroy) != PJ_SUCCESS) {
                free(closing);
                closing = NULL;
            }
        }
    }
    *status = destroy(id);
    if (closing != NULL && *status != PJ_SUCCESS) {
        if (pj_grp_lock_del_handler(port->grp_lock, closing, &cpj_port_closing_on_destroy) == PJ_SUCCESS)
            free(closing);
        else
            cpj_port_closing_release(closing);
        closing = NULL;
    }
    return closing;
}

/* Waits up to timeout_ms until every record is closed, releases them all, and returns how
 * many were still open. The ports close on the same bridge tick: one wait for all of them. */
static unsigned cpj_wait_closed(cpj_port_closing **closing, unsigned count, unsigned timeout_ms) {
    pj_time_val start, now;
    unsigned i, open = 0;
    pj_gettickcount(&start);
    for (;;) {
        open = 0;
        for (i = 0; i < count; ++i)
            if (closing[i] != NULL && !__atomic_load_n(&closing[i]->closed, __ATOMIC_ACQUIRE)) ++open;
        if (open == 0) break;
        pj_gettickcount(&now);
        PJ_TIME_VAL_SUB(now, start);
        if (PJ_TIME_VAL_MSEC(now) >= (long)timeout_ms) break;
        cpj_conf_tick_if_unclocked();
        pj_thread_sleep(2);
    }
    for (i = 0; i < count; ++i)
        if (closing[i] != NULL) cpj_port_closing_release(closing[i]);
    return open;
}

#endif

/* Destroys players and recorders (a call's, or all at shutdown) and waits up to timeout_ms
 * for all of them to close, one bridge tick for the lot instead of one each. Returns how
 * many were still open; ids pjsua refuses are skipped. */
unsigned cpj_media_ports_destroy_and_wait(const pjsua_player_id *players, unsigned player_count,
                                          const pjsua_recorder_id *recorders, unsigned recorder_count,
                                          unsigned timeout_ms) {
    unsigned i;
#if CPJ_VERSION_AT_LEAST(2, 15)
    unsigned open, count = 0;
    pj_status_t status;
    pjmedia_port *port;
    cpj_port_closing **closing = (cpj_port_closing **)calloc(player_count + recorder_count + 1, sizeof(*closing));
    for (i = 0; i < player_count; ++i) {
        if (pjsua_player_get_port(players[i], &port) != PJ_SUCCESS) port = NULL;
        if (closing == NULL) (void)pjsua_player_destroy(players[i]);
        else closing[count++] = cpj_destroy_port(port, &pjsua_player_destroy, players[i], &status);
    }
    for (i = 0; i < recorder_count; ++i) {
        if (pjsua_recorder_get_port(recorders[i], &port) != PJ_SUCCESS) port = NULL;
        if (closing == NULL) (void)pjsua_recorder_destroy(recorders[i]);
        else closing[count++] = cpj_destroy_port(port, &pjsua_recorder_destroy, recorders[i], &status);
    }
    if (closing == NULL) return 0;
    open = cpj_wait_closed(closing, count, timeout_ms);
    free(closing);
    return open;
#else
    (void)timeout_ms;
    for (i = 0; i < player_count; ++i) (void)pjsua_player_destroy(players[i]);
    for (i = 0; i < recorder_count; ++i) (void)pjsua_recorder_destroy(recorders[i]);
    return 0;
#endif
}

/* End of a non-looping player's file: pjmedia calls `callback` (from its event manager's
 * thread) when the player reaches the end of its file; Swift cannot take the player's port
 * out of pjsua itself. */
pj_status_t cpj_player_set_eof_callback(
    pjsua_player_id id, void *token, void (*callback)(pjmedia_port *port, void *token)) {
    pjmedia_port *port = NULL;
    pj_status_t status = pjsua_player_get_port(id, &port);
    if (status != PJ_SUCCESS) return status;
    return pjmedia_wav_player_set_eof_cb2(port, token, callback);
}

/* Whether pjsua's conference bridge has no free slot. pjmedia_conf_add_port asserts when it
 * is full before it returns PJ_ETOOMANY, and in a pjproject built with assertions on (the
 * 2.12.1 that provisioning builds) that ends the process: every path of the engine that adds
 * a port checks this first and throws instead. */
pj_bool_t cpj_conf_is_full(void) {
    return pjsua_conf_get_active_ports() >= pjsua_conf_get_max_ports() ? PJ_TRUE : PJ_FALSE;
}
