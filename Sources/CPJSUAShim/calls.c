/*
 * Calls: call settings and DTMF across versions, the fixed arrays and unions of
 * pjsua_call_info, stream info and statistics that cannot race a stream's teardown, and
 * whether a callback's slot still holds the call it was about.
 */
#include "CPJSUAShim.h"
#include <pjsua-lib/pjsua_internal.h>

/* Call settings for an audio-only call: one audio stream, no video and, from 2.16 on,
 * no real-time text (pjsua_call_setting_default offers one text stream there, which adds
 * a socket pair and a clock thread per call and up to 300 ms of teardown). */
void cpj_call_setting_audio_only(pjsua_call_setting *setting) {
    setting->aud_cnt = 1;
    setting->vid_cnt = 0;
#if CPJ_VERSION_AT_LEAST(2, 16)
    setting->txt_cnt = 0;
#endif
}

/* RFC 4733 digits still queued for sending on a call's audio stream, or -1 when this
 * pjproject cannot tell (pjsua_call_get_queued_dtmf_digits arrived in 2.17). */
int cpj_call_queued_dtmf_digits(pjsua_call_id call_id) {
#if CPJ_VERSION_AT_LEAST(2, 17)
    unsigned digits = 0;
    if (pjsua_call_get_queued_dtmf_digits(call_id, &digits) != PJ_SUCCESS) return 0;
    return (int)digits;
#else
    (void)call_id;
    return -1;
#endif
}

/* Whether an offer/answer exchange on the call is open: an INVITE transaction running or
 * the negotiator not done. Its answer may rebuild the audio stream, which drops RFC 4733
 * digits queued on the old one. Read without the call's lock: the caller polls. */
int cpj_call_offer_pending(pjsua_call_id call_id) {
    const pjsip_inv_session *inv;
    if (call_id < 0 || call_id >= (pjsua_call_id)PJSUA_MAX_CALLS) return 0;
    inv = pjsua_get_var()->calls[call_id].inv;
    if (!inv) return 0;
    return inv->invite_tsx != NULL || (inv->neg && pjmedia_sdp_neg_get_state(inv->neg) != PJMEDIA_SDP_NEG_STATE_DONE);
}

/* ---- Fixed-size arrays inside info structs: Swift sees them as tuples. ---- */

/* Media  of media[], or NULL past media_cnt. */
const pjsua_call_media_info *cpj_call_info_media(const pjsua_call_info *info, unsigned index) {
    return index < info->media_cnt ? &info->media[index] : NULL;
}

/* The audio arm of an anonymous union inside pjsua_call_media_info. */
pjsua_conf_port_id cpj_call_media_conf_slot(const pjsua_call_media_info *m) {
    return m->stream.aud.conf_slot;
}

/* ---- Media streams: pjsua hands a call's stream to pjmedia without a NULL check. ---- */

/* pjsua_call_get_stream_info and pjsua_call_get_stream_stat pass the call's audio stream
 * straight to pjmedia, which asserts (aborts, in a debug pjproject) when it is NULL. The
 * stream is torn down on pjsua's threads when the call ends or its media is removed, so a
 * caller that saw active media a moment earlier can race it. These check the stream under
 * pjsua's lock (recursive; the wrapped functions take it again) and return PJ_ENOTFOUND
 * when there is none. */
static pj_bool_t cpj_call_has_audio_stream(pjsua_call_id call_id, unsigned med_idx) {
    const pjsua_call *call = &pjsua_var.calls[call_id];
    return med_idx < call->med_cnt && call->media[med_idx].type == PJMEDIA_TYPE_AUDIO &&
           call->media[med_idx].strm.a.stream != NULL;
}

/* pjsua_call_get_stream_info, or PJ_ENOTFOUND when the call has no audio stream now. */
pj_status_t cpj_call_get_stream_info(pjsua_call_id call_id, unsigned med_idx, pjsua_stream_info *info) {
    pj_status_t status;
    if (call_id < 0 || call_id >= (int)pjsua_call_get_max_count()) return PJ_EINVAL;
    PJSUA_LOCK();
    status = cpj_call_has_audio_stream(call_id, med_idx)
                 ? pjsua_call_get_stream_info(call_id, med_idx, info) : PJ_ENOTFOUND;
    PJSUA_UNLOCK();
    return status;
}

/* pjsua_call_get_stream_stat, or PJ_ENOTFOUND when the call has no audio stream now. */
pj_status_t cpj_call_get_stream_stat(pjsua_call_id call_id, unsigned med_idx, pjsua_stream_stat *stat) {
    pj_status_t status;
    if (call_id < 0 || call_id >= (int)pjsua_call_get_max_count()) return PJ_EINVAL;
    PJSUA_LOCK();
    status = cpj_call_has_audio_stream(call_id, med_idx)
                 ? pjsua_call_get_stream_stat(call_id, med_idx, stat) : PJ_ENOTFOUND;
    PJSUA_UNLOCK();
    return status;
}

/* An enum constant used as a bit in an unsigned flags field: spell it as unsigned. */
unsigned cpj_dtmf_flag_is_end(void) { return PJMEDIA_STREAM_DTMF_IS_END; }
/* PJSUA_UNKNOWN_DTMF_DURATION is a cast expression macro. */
unsigned cpj_dtmf_unknown_duration(void) { return PJSUA_UNKNOWN_DTMF_DURATION; }

/* ---- Callbacks that can outlive their call. pjsua frees a call's slot (clearing its user
 * data) when the call ends, but a dialog that still carries a subscription (a REFER's) lives
 * on, and pjsua's callbacks for it name the slot it had: a freed one, or one a newer call now
 * holds. ---- */

/* Whether pjsua holds a call in the slot now (its INVITE session exists): a callback for a
 * slot without one is about a call that has ended. */
pj_bool_t cpj_call_slot_in_use(pjsua_call_id call_id) {
    if (call_id < 0 || call_id >= (int)pjsua_call_get_max_count()) return PJ_FALSE;
    return pjsua_var.calls[call_id].inv != NULL ? PJ_TRUE : PJ_FALSE;
}

/* Whether the transaction belongs to the dialog of the call now in the slot (pjsua finds the
 * call of an ended dialog through a pointer to the slot, whoever holds it now). */
pj_bool_t cpj_call_owns_tsx(pjsua_call_id call_id, pjsip_transaction *tsx) {
    const pjsip_inv_session *inv;
    if (!tsx || call_id < 0 || call_id >= (int)pjsua_call_get_max_count()) return PJ_FALSE;
    inv = pjsua_var.calls[call_id].inv;
    return inv != NULL && inv->dlg != NULL && pjsip_tsx_get_dlg(tsx) == inv->dlg ? PJ_TRUE : PJ_FALSE;
}

/* pjsua_call_reinvite with no options: the same offer again, sent over a connection pjsip
 * opens anew when the old one is gone. */
pj_status_t cpj_call_reinvite(pjsua_call_id call_id) {
    if (call_id < 0 || call_id >= (int)pjsua_call_get_max_count()) return PJ_EINVAL;
    return pjsua_call_reinvite(call_id, 0, NULL);
}

/* Everything StreamStatistics needs in one step under pjsua's lock, so the counters, the
 * codec and the levels describe the same moment: the stream's statistics, its codec and
 * packet time, the call port's signal levels, and the times pjmedia keeps as wall-clock
 * pj_time_val turned into "milliseconds ago" (the stream's start, the far end's last
 * receiver report) against one reading of the clock. PJ_ENOTFOUND when there is no audio
 * stream now. */
pj_status_t cpj_call_stream_snapshot(pjsua_call_id call_id, unsigned med_idx, cpj_stream_snapshot *out) {
    pj_status_t status;
    pjsua_stream_info info;
    pj_time_val now;
    if (call_id < 0 || call_id >= (int)pjsua_call_get_max_count() || out == NULL) return PJ_EINVAL;
    pj_bzero(out, sizeof(*out));
    PJSUA_LOCK();
    if (!cpj_call_has_audio_stream(call_id, med_idx)) {
        PJSUA_UNLOCK();
        return PJ_ENOTFOUND;
    }
    status = pjsua_call_get_stream_stat(call_id, med_idx, &out->stat);
    if (status == PJ_SUCCESS && pjsua_call_get_stream_info(call_id, med_idx, &info) == PJ_SUCCESS &&
        info.type == PJMEDIA_TYPE_AUDIO) {
        const pj_str_t *name = &info.info.aud.fmt.encoding_name;
        pj_size_t len = (pj_size_t)name->slen < sizeof(out->codec) - 1 ? (pj_size_t)name->slen
                                                                         : sizeof(out->codec) - 1;
        pj_memcpy(out->codec, name->ptr, len);
        out->codec[len] = '\0';
        out->clock_rate = info.info.aud.fmt.clock_rate;
        if (info.info.aud.param != NULL) {
            unsigned frames = info.info.aud.param->setting.frm_per_pkt;
            out->packet_time_msec = info.info.aud.param->info.frm_ptime * (frames ? frames : 1);
            out->frame_time_usec = info.info.aud.param->info.frm_ptime * 1000u;
#if PJ_VERSION_NUM >= 0x020E0000
            /* 2.14 added fractional frame times (2.5 ms Opus): frm_ptime / frm_ptime_denum ms,
             * the denominator 0 or 1 for whole milliseconds. */
            if (info.info.aud.param->info.frm_ptime_denum > 1)
                out->frame_time_usec /= info.info.aud.param->info.frm_ptime_denum;
#endif
        }
    }
    if (status == PJ_SUCCESS) {
        pjsua_conf_port_id port = pjsua_call_get_conf_port(call_id);
        out->has_levels = port != PJSUA_INVALID_ID &&
                          pjsua_conf_get_signal_level(port, &out->sent_level, &out->received_level) == PJ_SUCCESS;
    }
    PJSUA_UNLOCK();
    if (status != PJ_SUCCESS) return status;
    pj_gettimeofday(&now);
    {
        pj_time_val since = now;
        PJ_TIME_VAL_SUB(since, out->stat.rtcp.start);
        out->elapsed_msec = since.sec < 0 ? 0 : (pj_uint64_t)PJ_TIME_VAL_MSEC(since);
    }
    if (out->stat.rtcp.tx.update_cnt > 0) {
        pj_time_val since = now;
        PJ_TIME_VAL_SUB(since, out->stat.rtcp.tx.update);
        out->since_far_end_report_msec = since.sec < 0 ? 0 : (pj_uint64_t)PJ_TIME_VAL_MSEC(since);
    }
    out->burst_loss_rx = out->stat.rtcp.rx.loss_type.burst;
    out->random_loss_rx = out->stat.rtcp.rx.loss_type.random;
    out->burst_loss_tx = out->stat.rtcp.tx.loss_type.burst;
    out->random_loss_tx = out->stat.rtcp.tx.loss_type.random;
    return PJ_SUCCESS;
}
