/*
 * Tone generators on the conference bridge: a pjmedia tone generator (16 kHz, 20 ms
 * frames; the bridge resamples) playing `count` tones once or in a loop, added to the
 * bridge. The pool is ours; from 2.15 on the generator and the bridge's record of it live
 * in pools of their own.
 */
#include "CPJSUAShim.h"

/* PJMEDIA_TONEGEN_MAX_DIGITS: the most tones one pjmedia_tonegen_play takes. */
unsigned cpj_tonegen_max_tones(void) { return PJMEDIA_TONEGEN_MAX_DIGITS; }

/* Creates a generator playing the tones and adds it to the bridge; on failure *failed names
 * the pjmedia or pjsua function that failed, and nothing is left behind. */
pj_status_t cpj_tonegen_start(
    const pjmedia_tone_desc *tones, unsigned count, int loop,
    pjmedia_port **out_port, pj_pool_t **out_pool, pjsua_conf_port_id *slot, const char **failed) {
    pj_pool_t *pool;
    pjmedia_port *port = NULL;
    pj_status_t status;
    if (!tones || count == 0 || count > PJMEDIA_TONEGEN_MAX_DIGITS) return PJ_EINVAL;
    *failed = "pjsua_conf_add_port";
    if (cpj_conf_is_full()) return PJ_ETOOMANY;
    pool = pjsua_pool_create("swiftpjsua-tones", 1024, 1024);
    if (!pool) return PJ_ENOMEM;
    *failed = "pjmedia_tonegen_create";
    status = pjmedia_tonegen_create(pool, 16000, 1, 320, 16, 0, &port);
    if (status == PJ_SUCCESS) {
        *failed = "pjmedia_tonegen_play";
        status = pjmedia_tonegen_play(port, count, tones, loop ? PJMEDIA_TONEGEN_LOOP : 0);
    }
    if (status == PJ_SUCCESS) {
        *failed = "pjsua_conf_add_port";
        status = pjsua_conf_add_port(pool, port, slot);
    }
    if (status != PJ_SUCCESS) {
        if (port) pjmedia_port_destroy(port);
        pj_pool_release(pool);
        return status;
    }
    *out_port = port;
    *out_pool = pool;
    return PJ_SUCCESS;
}

/* Takes a generator off the bridge and destroys it (from 2.15 on, once the bridge has let
 * go of it). */
void cpj_tonegen_remove(pjmedia_port *port, pj_pool_t *pool, pjsua_conf_port_id slot) {
    pjsua_conf_remove_port(slot);
    pjmedia_port_destroy(port);
    pj_pool_release(pool);
}
