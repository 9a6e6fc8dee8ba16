/*
 * The one header Swift imports from pjproject.
 *
 * Every helper here is a header-only `static inline` function prefixed `cpj_`,
 * each with the reason it exists: Swift cannot import function-like or
 * expression macros, cannot index fixed-size C arrays without copying, and
 * cannot walk pjlib's intrusive lists safely on its own.
 */
#ifndef SWIFT_PJSUA_CPJSIP_SHIM_H
#define SWIFT_PJSUA_CPJSIP_SHIM_H

/* pjproject's pkg-config file passes these as -D flags, which SwiftPM filters out of
 * system-library targets; pjproject's headers need them to pick the autoconf'd config. */
#ifndef PJ_AUTOCONF
#define PJ_AUTOCONF 1
#endif

#include <pjsua-lib/pjsua.h>
#include <pjsua-lib/pjsua_internal.h>
#include <pjsip/sip_errno.h>
#include <pjlib-util/sha1.h>
#include <stdlib.h>

/* ---- Versions: this header compiles against pjproject 2.12.1 through 2.17. Every
 * difference between them is handled here, behind PJ_VERSION_NUM, so the Swift side
 * sees one API. ---- */

#define CPJ_VERSION_AT_LEAST(major, minor) (PJ_VERSION_NUM >= (((major) << 24) | ((minor) << 16)))
#define CPJ_STRINGIFY_(x) #x
#define CPJ_STRINGIFY(x) CPJ_STRINGIFY_(x)

/* The version of the headers this module was compiled against, spelled as pjlib spells
 * PJ_VERSION ("2.17", "2.12.1", with PJ_VERSION_NUM_EXTRA appended). */
static inline const char *cpj_compiled_version(void) {
#if PJ_VERSION_NUM_REV
    return CPJ_STRINGIFY(PJ_VERSION_NUM_MAJOR) "." CPJ_STRINGIFY(PJ_VERSION_NUM_MINOR) "."
           CPJ_STRINGIFY(PJ_VERSION_NUM_REV) PJ_VERSION_NUM_EXTRA;
#else
    return CPJ_STRINGIFY(PJ_VERSION_NUM_MAJOR) "." CPJ_STRINGIFY(PJ_VERSION_NUM_MINOR) PJ_VERSION_NUM_EXTRA;
#endif
}

/* The version of the pjlib loaded at run time (PJ_VERSION is data inside libpj). */
static inline const char *cpj_runtime_version(void) { return pj_get_version(); }

/* Whether the build has IPv6 (PJ_HAS_IPV6, 0 by pjlib's default). From 2.15 on
 * pjsua_acc_add asserts, aborting the process, when an account asks for IPv6 in a
 * build without it. */
static inline pj_bool_t cpj_has_ipv6(void) { return PJ_HAS_IPV6 ? PJ_TRUE : PJ_FALSE; }

/* What an account's media uses when its RTP address is IPv6, or IPv4. Before 2.14,
 * PJSUA_IPV6_ENABLED meant IPv6; from 2.14 on it means "no preference", which falls back
 * to IPv4 for an offer (and to PJ_ERESOLVE on a ::1 socket), so ask for IPv6 only. */
static inline pjsua_ipv6_use cpj_ipv6_media_use(pj_bool_t ipv6_address) {
    if (!PJ_HAS_IPV6 || !ipv6_address) return PJSUA_IPV6_DISABLED;
#if CPJ_VERSION_AT_LEAST(2, 14)
    return PJSUA_IPV6_ENABLED_USE_IPV6_ONLY;
#else
    return PJSUA_IPV6_ENABLED;
#endif
}

/* Call settings for an audio-only call: one audio stream, no video and, from 2.16 on,
 * no real-time text (pjsua_call_setting_default offers one text stream there, which adds
 * a socket pair and a clock thread per call and up to 300 ms of teardown). */
static inline void cpj_call_setting_audio_only(pjsua_call_setting *setting) {
    setting->aud_cnt = 1;
    setting->vid_cnt = 0;
#if CPJ_VERSION_AT_LEAST(2, 16)
    setting->txt_cnt = 0;
#endif
}

/* Whether pjmedia's own media worker polls without stalling: before 2.13 its I/O queue
 * worker slept out a whole 500 ms poll timeout when epoll reported a socket with nothing
 * to read (pjproject #3086, #3188), so the engine put RTP on the SIP worker instead. */
static inline pj_bool_t cpj_media_worker_is_reliable(void) {
    return CPJ_VERSION_AT_LEAST(2, 13) ? PJ_TRUE : PJ_FALSE;
}

/* Start each account's RTP port search at a random even port of its range: pjsua has
 * pjsua_transport_config.randomize_port from 2.13; returns PJ_FALSE where it does not
 * (the engine then picks the start itself). */
static inline pj_bool_t cpj_rtp_randomize_port(pjsua_transport_config *cfg) {
#if CPJ_VERSION_AT_LEAST(2, 13)
    cfg->randomize_port = PJ_TRUE;
    return PJ_TRUE;
#else
    (void)cfg;
    return PJ_FALSE;
#endif
}

/* RFC 4733 digits still queued for sending on a call's audio stream, or -1 when this
 * pjproject cannot tell (pjsua_call_get_queued_dtmf_digits arrived in 2.17). */
static inline int cpj_call_queued_dtmf_digits(pjsua_call_id call_id) {
#if CPJ_VERSION_AT_LEAST(2, 17)
    unsigned digits = 0;
    if (pjsua_call_get_queued_dtmf_digits(call_id, &digits) != PJ_SUCCESS) return 0;
    return (int)digits;
#else
    (void)call_id;
    return -1;
#endif
}

/* ---- Players and recorders: closed for real before their destroy call returns. ----
 *
 * From 2.15 on the conference bridge removes ports on its clock thread: pjsua_recorder_destroy
 * and pjsua_player_destroy queue the removal and return, and the WAV file is closed on a
 * later clock tick, when the port's group lock is destroyed. These wait for that (a
 * handler on the group lock, which runs after the port's own on_destroy has closed the
 * file), up to timeout_ms. When nothing clocks the bridge (no sound device attached) the
 * removal would wait forever, so the waiting thread runs bridge ticks itself: each mixes
 * one frame (one RTP packet per connected call). Before 2.15 the destroy is synchronous. */

#if CPJ_VERSION_AT_LEAST(2, 15)
typedef struct cpj_port_closing {
    int closed;
    int refs; /* the waiter and the handler; the last one out frees it */
} cpj_port_closing;

static inline void cpj_port_closing_release(cpj_port_closing *closing) {
    if (__atomic_sub_fetch(&closing->refs, 1, __ATOMIC_ACQ_REL) == 0) free(closing);
}

static inline void cpj_port_closing_on_destroy(void *member) {
    cpj_port_closing *closing = (cpj_port_closing *)member;
    __atomic_store_n(&closing->closed, 1, __ATOMIC_RELEASE);
    cpj_port_closing_release(closing);
}

/* One tick of the bridge when no sound device or null device clocks it. */
static inline void cpj_conf_tick_if_unclocked(void) {
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

static inline pj_status_t cpj_destroy_port_and_wait(pjmedia_port *port, pj_status_t (*destroy)(int), int id,
                                                    unsigned timeout_ms) {
    cpj_port_closing *closing = NULL;
    pj_status_t status;
    pj_time_val start, now;
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
    status = destroy(id);
    if (closing == NULL) return status;
    if (status != PJ_SUCCESS) {
        if (pj_grp_lock_del_handler(port->grp_lock, closing, &cpj_port_closing_on_destroy) == PJ_SUCCESS)
            free(closing);
        else
            cpj_port_closing_release(closing);
        return status;
    }
    pj_gettickcount(&start);
    for (;;) {
        if (__atomic_load_n(&closing->closed, __ATOMIC_ACQUIRE)) break;
        pj_gettickcount(&now);
        PJ_TIME_VAL_SUB(now, start);
        if (PJ_TIME_VAL_MSEC(now) >= (long)timeout_ms) break;
        cpj_conf_tick_if_unclocked();
        pj_thread_sleep(2);
    }
    status = __atomic_load_n(&closing->closed, __ATOMIC_ACQUIRE) ? PJ_SUCCESS : PJ_ETIMEDOUT;
    cpj_port_closing_release(closing);
    return status;
}
#endif

static inline pj_status_t cpj_recorder_destroy_and_wait(pjsua_recorder_id id, unsigned timeout_ms) {
#if CPJ_VERSION_AT_LEAST(2, 15)
    pjmedia_port *port = NULL;
    if (pjsua_recorder_get_port(id, &port) != PJ_SUCCESS) port = NULL;
    return cpj_destroy_port_and_wait(port, &pjsua_recorder_destroy, id, timeout_ms);
#else
    (void)timeout_ms;
    return pjsua_recorder_destroy(id);
#endif
}

static inline pj_status_t cpj_player_destroy_and_wait(pjsua_player_id id, unsigned timeout_ms) {
#if CPJ_VERSION_AT_LEAST(2, 15)
    pjmedia_port *port = NULL;
    if (pjsua_player_get_port(id, &port) != PJ_SUCCESS) port = NULL;
    return cpj_destroy_port_and_wait(port, &pjsua_player_destroy, id, timeout_ms);
#else
    (void)timeout_ms;
    return pjsua_player_destroy(id);
#endif
}

/* ---- Audio frame ports: PCM between a call and the app, as Swift values ----
 * A conference-bridge port of our own. Its callbacks run on pjmedia's clock thread and do
 * nothing but copy between the bridge and two fixed rings allocated up front: frames the
 * bridge hands the port (put_frame, what a call receives) for the app to read, and frames
 * the app queued (get_frame) for the bridge to send into a call. No lock, no allocation,
 * no blocking on the clock thread. Both rings have one producer and one consumer; the
 * receive ring drops its oldest frame when full (the reader fell behind), counted. */

#define CPJ_FRAME_MAX_SAMPLES 960 /* 20 ms at 48 kHz, the largest frame offered */

typedef struct cpj_frame_slot {
    uint64_t sequence;
    uint32_t samples;
    int16_t pcm[CPJ_FRAME_MAX_SAMPLES];
} cpj_frame_slot;

typedef struct cpj_frame_ring {
    cpj_frame_slot *slots;
    uint64_t capacity;
    uint64_t head; /* next to write: written by the producer only */
    uint64_t tail; /* next to read: advanced by the consumer, and by a full receive ring's producer */
} cpj_frame_ring;

typedef struct cpj_frame_port {
    pjmedia_port base; /* first: the bridge's callbacks get this pointer */
    unsigned samples_per_frame;
    int refs;          /* the app's reference, and the bridge's while the port is in it */
    int closed;        /* removed from the bridge: the reader drains the ring and ends */
    int tx_started;    /* the app has queued a frame: from then on an empty ring is an underflow */
    uint64_t rx_sequence, rx_dropped, tx_underflows;
    cpj_frame_ring rx, tx;
    pj_pool_t *pool;   /* handed to the bridge with the port (older bridges allocate from it) */
} cpj_frame_port;

static inline void cpj_frame_port_release(cpj_frame_port *port) {
    /* Plain free only: the last reference may go on any thread, pjlib's or not. */
    if (__atomic_sub_fetch(&port->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    free(port->rx.slots);
    free(port->tx.slots);
    free(port);
}

/* One frame of `samples` samples (NULL or short: the rest is silence) into the receive
 * ring, making room by dropping the oldest frame. Clock thread: no lock, no allocation. */
static inline void cpj_frame_port_push(cpj_frame_port *port, const int16_t *pcm, unsigned samples) {
    cpj_frame_ring *ring = &port->rx;
    uint64_t head, tail;
    cpj_frame_slot *slot;
    if (ring->capacity == 0) return;
    head = ring->head;
    tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
    while (head - tail >= ring->capacity) {
        if (__atomic_compare_exchange_n(&ring->tail, &tail, tail + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            __atomic_add_fetch(&port->rx_dropped, 1, __ATOMIC_RELAXED);
            break;
        }
    }
    slot = &ring->slots[head % ring->capacity];
    slot->sequence = port->rx_sequence++;
    if (pcm == NULL) samples = 0;
    if (samples > port->samples_per_frame) samples = port->samples_per_frame;
    if (samples) pj_memcpy(slot->pcm, pcm, samples * sizeof(int16_t));
    if (samples < port->samples_per_frame)
        pj_bzero(slot->pcm + samples, (port->samples_per_frame - samples) * sizeof(int16_t));
    slot->samples = port->samples_per_frame;
    __atomic_store_n(&ring->head, head + 1, __ATOMIC_RELEASE);
}

/* What the call receives, from the bridge's clock thread: into the receive ring. A frame
 * the bridge marks as no audio is silence. */
static inline pj_status_t cpj_frame_port_put_frame(pjmedia_port *base, pjmedia_frame *frame) {
    cpj_frame_port *port = (cpj_frame_port *)base;
    int audio = frame->type == PJMEDIA_FRAME_TYPE_AUDIO && frame->buf;
    cpj_frame_port_push(port, audio ? (const int16_t *)frame->buf : NULL,
                        audio ? (unsigned)(frame->size / sizeof(int16_t)) : 0);
    return PJ_SUCCESS;
}

/* What the call sends, from the bridge's clock thread: the app's next queued frame, or
 * no audio (silence) when none is queued. */
static inline pj_status_t cpj_frame_port_get_frame(pjmedia_port *base, pjmedia_frame *frame) {
    cpj_frame_port *port = (cpj_frame_port *)base;
    cpj_frame_ring *ring = &port->tx;
    uint64_t tail, head;
    cpj_frame_slot *slot;
    pj_size_t bytes;
    frame->type = PJMEDIA_FRAME_TYPE_NONE;
    if (ring->capacity == 0) { frame->size = 0; return PJ_SUCCESS; }
    tail = ring->tail;
    head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
    if (head == tail) {
        if (__atomic_load_n(&port->tx_started, __ATOMIC_RELAXED))
            __atomic_add_fetch(&port->tx_underflows, 1, __ATOMIC_RELAXED);
        frame->size = 0;
        return PJ_SUCCESS;
    }
    slot = &ring->slots[tail % ring->capacity];
    bytes = slot->samples * sizeof(int16_t);
    if (bytes > frame->size) bytes = frame->size;
    pj_memcpy(frame->buf, slot->pcm, bytes);
    frame->size = bytes;
    frame->type = PJMEDIA_FRAME_TYPE_AUDIO;
    __atomic_store_n(&ring->tail, tail + 1, __ATOMIC_RELEASE);
    return PJ_SUCCESS;
}

/* A port of `clock_rate` Hz and `samples_per_frame` samples, mono, 16-bit, with a receive
 * ring of `rx_frames` and a send ring of `tx_frames` (either may be 0). The bridge
 * resamples and re-frames between it and the calls. NULL when memory runs out. */
static inline cpj_frame_port *cpj_frame_port_alloc(
    size_t size, unsigned clock_rate, unsigned samples_per_frame, unsigned rx_frames, unsigned tx_frames) {
    static char name[] = "swiftpjsua-frames";
    pj_str_t port_name = pj_str(name);
    cpj_frame_port *port;
    if (samples_per_frame == 0 || samples_per_frame > CPJ_FRAME_MAX_SAMPLES) return NULL;
    if (size < sizeof(*port)) return NULL;
    port = (cpj_frame_port *)calloc(1, size); /* a larger struct starting with a frame port */
    if (!port) return NULL;
    port->rx.slots = rx_frames ? (cpj_frame_slot *)calloc(rx_frames, sizeof(cpj_frame_slot)) : NULL;
    port->tx.slots = tx_frames ? (cpj_frame_slot *)calloc(tx_frames, sizeof(cpj_frame_slot)) : NULL;
    if ((rx_frames && !port->rx.slots) || (tx_frames && !port->tx.slots)) {
        free(port->rx.slots);
        free(port->tx.slots);
        free(port);
        return NULL;
    }
    port->rx.capacity = rx_frames;
    port->tx.capacity = tx_frames;
    port->samples_per_frame = samples_per_frame;
    port->refs = 1;
    pjmedia_port_info_init(&port->base.info, &port_name, PJMEDIA_SIGNATURE('S', 'P', 'F', 'R'),
                           clock_rate, 1, 16, samples_per_frame);
    port->base.put_frame = &cpj_frame_port_put_frame;
    port->base.get_frame = &cpj_frame_port_get_frame;
    return port;
}

static inline cpj_frame_port *cpj_frame_port_create(
    unsigned clock_rate, unsigned samples_per_frame, unsigned rx_frames, unsigned tx_frames) {
    return cpj_frame_port_alloc(sizeof(cpj_frame_port), clock_rate, samples_per_frame, rx_frames, tx_frames);
}

/* pjmedia_port_destroy's end for our port: the bridge has let go of it (before 2.15 at
 * once; from 2.15 on when the bridge drops its group-lock reference, after its last
 * callback on the clock thread). */
static inline pj_status_t cpj_frame_port_on_destroy(pjmedia_port *base) {
    cpj_frame_port *port = (cpj_frame_port *)base;
    pj_pool_t *pool = port->pool;
    port->pool = NULL;
    if (pool) pj_pool_release(pool); /* on a pjlib thread: the clock's or the engine's */
    cpj_frame_port_release(port);
    return PJ_SUCCESS;
}

/* Adds the port to pjsua's conference bridge, which then holds a reference to it. */
static inline pj_status_t cpj_frame_port_add(cpj_frame_port *port, pjsua_conf_port_id *slot) {
    pj_pool_t *pool = pjsua_pool_create("swiftpjsua-frames", 512, 512);
    pj_status_t status;
    if (!pool) return PJ_ENOMEM;
    port->base.on_destroy = &cpj_frame_port_on_destroy;
    status = pjsua_conf_add_port(pool, &port->base, slot);
    if (status != PJ_SUCCESS) {
        pj_pool_release(pool);
        return status;
    }
    port->pool = pool;
    __atomic_add_fetch(&port->refs, 1, __ATOMIC_ACQ_REL);
    return PJ_SUCCESS;
}

/* Takes the port out of the bridge; the reader sees the end once the ring is drained. */
static inline void cpj_frame_port_remove(cpj_frame_port *port, pjsua_conf_port_id slot) {
    __atomic_store_n(&port->closed, 1, __ATOMIC_RELEASE);
    pjsua_conf_remove_port(slot);
    /* Drops the port's own reference; cpj_frame_port_on_destroy runs when the bridge's
     * is gone too. */
    pjmedia_port_destroy(&port->base);
}

/* The next received frame: its samples into `out` (room for `capacity`), its sequence
 * number into `sequence`. Returns the sample count, 0 when none is waiting, -1 when the
 * port was removed and every frame has been read. Called by one reader at a time. */
static inline int cpj_frame_port_read(cpj_frame_port *port, int16_t *out, unsigned capacity, uint64_t *sequence) {
    cpj_frame_ring *ring = &port->rx;
    for (;;) {
        uint64_t tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
        uint64_t head = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
        cpj_frame_slot *slot;
        unsigned samples;
        if (head == tail) return __atomic_load_n(&port->closed, __ATOMIC_ACQUIRE) ? -1 : 0;
        slot = &ring->slots[tail % ring->capacity];
        samples = slot->samples < capacity ? slot->samples : capacity;
        *sequence = slot->sequence;
        pj_memcpy(out, slot->pcm, samples * sizeof(int16_t));
        /* The writer may have dropped this frame (and reused its slot) while it was copied:
         * then the tail moved and the copy is thrown away. */
        if (__atomic_compare_exchange_n(&ring->tail, &tail, tail + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return (int)samples;
    }
}

/* Queues one frame of `count` samples (at most a frame; the rest is silence) to send.
 * Returns 0, or 1 when the send ring is full. Called by one writer at a time. */
static inline int cpj_frame_port_write(cpj_frame_port *port, const int16_t *samples, unsigned count) {
    cpj_frame_ring *ring = &port->tx;
    uint64_t head = ring->head;
    uint64_t tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
    cpj_frame_slot *slot;
    if (ring->capacity == 0 || head - tail >= ring->capacity) return 1;
    slot = &ring->slots[head % ring->capacity];
    if (count > port->samples_per_frame) count = port->samples_per_frame;
    pj_memcpy(slot->pcm, samples, count * sizeof(int16_t));
    if (count < port->samples_per_frame)
        pj_bzero(slot->pcm + count, (port->samples_per_frame - count) * sizeof(int16_t));
    slot->samples = port->samples_per_frame;
    __atomic_store_n(&ring->head, head + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&port->tx_started, 1, __ATOMIC_RELAXED);
    return 0;
}

static inline uint64_t cpj_frame_port_dropped(const cpj_frame_port *port) {
    return __atomic_load_n(&port->rx_dropped, __ATOMIC_RELAXED);
}
static inline uint64_t cpj_frame_port_underflows(const cpj_frame_port *port) {
    return __atomic_load_n(&port->tx_underflows, __ATOMIC_RELAXED);
}
/* Frames queued to send and not yet taken by the bridge. */
static inline uint64_t cpj_frame_port_queued(const cpj_frame_port *port) {
    return __atomic_load_n(&port->tx.head, __ATOMIC_ACQUIRE) - __atomic_load_n(&port->tx.tail, __ATOMIC_ACQUIRE);
}
static inline int cpj_frame_port_is_closed(const cpj_frame_port *port) {
    return __atomic_load_n(&port->closed, __ATOMIC_ACQUIRE);
}

/* ---- What the sound device plays: a tap in the null sound device ----
 * pjsua's null sound device is a master port that clocks the bridge: each tick it hands
 * slot 0 silence from a null port (the "microphone") and hands the mix the bridge made for
 * slot 0 (what a speaker would play) to that null port, which discards it. A tap is a frame
 * port put in the null port's place (pjmedia_master_port_set_uport, which waits for the
 * tick in progress, so a tap taken out is no longer touched once that returns): the mix
 * goes into its receive ring, resampled to the app's rate and cut into the app's frames;
 * slot 0 still gets silence. Only with the null device (pjsua_var.null_snd): a real sound
 * device is clocked by its own driver. */
typedef struct cpj_snd_tap {
    cpj_frame_port frames;      /* first: the master port sees its base; the ring is in the app's format */
    pjmedia_resample *resample; /* the bridge's rate to the app's; NULL when they are equal */
    unsigned out_samples;       /* samples one bridge frame makes at the app's rate */
    unsigned pending;           /* samples of the next app frame collected so far */
    int16_t scratch[CPJ_FRAME_MAX_SAMPLES];
    int16_t partial[CPJ_FRAME_MAX_SAMPLES];
} cpj_snd_tap;

/* Slot 0's mix for one tick, from the master port's clock thread. */
static inline pj_status_t cpj_snd_tap_put_frame(pjmedia_port *base, pjmedia_frame *frame) {
    cpj_snd_tap *tap = (cpj_snd_tap *)base;
    unsigned in = PJMEDIA_PIA_SPF(&base->info), spf = tap->frames.samples_per_frame, i = 0;
    const int16_t *pcm = tap->scratch;
    if (frame->type == PJMEDIA_FRAME_TYPE_AUDIO && frame->buf && frame->size >= in * sizeof(int16_t)) {
        if (tap->resample) pjmedia_resample_run(tap->resample, (const pj_int16_t *)frame->buf, tap->scratch);
        else pcm = (const int16_t *)frame->buf;
    } else {
        pj_bzero(tap->scratch, tap->out_samples * sizeof(int16_t));
    }
    while (i < tap->out_samples) {
        unsigned take = spf - tap->pending;
        if (take > tap->out_samples - i) take = tap->out_samples - i;
        pj_memcpy(tap->partial + tap->pending, pcm + i, take * sizeof(int16_t));
        tap->pending += take;
        i += take;
        if (tap->pending == spf) {
            cpj_frame_port_push(&tap->frames, tap->partial, spf);
            tap->pending = 0;
        }
    }
    return PJ_SUCCESS;
}

/* The "microphone": silence, as from pjsua's null port. */
static inline pj_status_t cpj_snd_tap_get_frame(pjmedia_port *base, pjmedia_frame *frame) {
    (void)base;
    frame->type = PJMEDIA_FRAME_TYPE_AUDIO;
    if (frame->buf && frame->size) pj_bzero(frame->buf, frame->size);
    return PJ_SUCCESS;
}

/* A tap whose ring holds `rx_frames` frames of `samples_per_frame` at `clock_rate`, fed
 * from the bridge's master port format. NULL when memory runs out or a format is beyond
 * the frames offered. Engine thread (the resampler's pool). */
static inline cpj_snd_tap *cpj_snd_tap_create(unsigned clock_rate, unsigned samples_per_frame, unsigned rx_frames) {
    static char name[] = "swiftpjsua-sound-device";
    pj_str_t port_name = pj_str(name);
    pjmedia_port *conf = pjsua_var.mconf ? pjmedia_conf_get_master_port(pjsua_var.mconf) : NULL;
    unsigned bridge_rate, bridge_spf;
    cpj_snd_tap *tap;
    if (conf == NULL || PJMEDIA_PIA_CCNT(&conf->info) != 1) return NULL;
    bridge_rate = PJMEDIA_PIA_SRATE(&conf->info);
    bridge_spf = PJMEDIA_PIA_SPF(&conf->info);
    if (bridge_spf == 0 || bridge_spf > CPJ_FRAME_MAX_SAMPLES) return NULL;
    tap = (cpj_snd_tap *)cpj_frame_port_alloc(sizeof(cpj_snd_tap), clock_rate, samples_per_frame, rx_frames, 0);
    if (tap == NULL) return NULL;
    tap->out_samples = (unsigned)((pj_uint64_t)bridge_spf * clock_rate / bridge_rate);
    if (tap->out_samples == 0 || tap->out_samples > CPJ_FRAME_MAX_SAMPLES) {
        cpj_frame_port_release(&tap->frames);
        return NULL;
    }
    pjmedia_port_info_init(&tap->frames.base.info, &port_name, PJMEDIA_SIGNATURE('S', 'P', 'S', 'D'),
                           bridge_rate, 1, 16, bridge_spf);
    tap->frames.base.put_frame = &cpj_snd_tap_put_frame;
    tap->frames.base.get_frame = &cpj_snd_tap_get_frame;
    if (bridge_rate != clock_rate) {
        pj_pool_t *pool = pjsua_pool_create("swiftpjsua-sound-device", 1024, 1024);
        if (pool == NULL || pjmedia_resample_create(pool, PJ_TRUE, PJ_FALSE, 1, bridge_rate, clock_rate, bridge_spf,
                                                    &tap->resample) != PJ_SUCCESS) {
            if (pool) pj_pool_release(pool);
            cpj_frame_port_release(&tap->frames);
            return NULL;
        }
        tap->frames.pool = pool;
    }
    return tap;
}

/* Puts the tap in the null sound device's place. PJ_ENOTFOUND when no null device is open
 * (none attached, or a real one). Engine thread, which is where pjsua opens and closes
 * devices (the engine turns the null device's idle auto-close off). */
static inline pj_status_t cpj_snd_tap_install(cpj_snd_tap *tap) {
    pjmedia_port *upstream;
    if (pjsua_var.null_snd == NULL) return PJ_ENOTFOUND;
    upstream = pjmedia_master_port_get_uport(pjsua_var.null_snd);
    if (upstream == &tap->frames.base) return PJ_SUCCESS;
    if (upstream != pjsua_var.null_port) return PJ_EBUSY; /* not the layout this was written for */
    return pjmedia_master_port_set_uport(pjsua_var.null_snd, &tap->frames.base);
}

/* Takes the tap out (pjsua's null port back in its place, if the device is still open)
 * and ends it: the reader drains the ring and sees the end. Engine thread, once. */
static inline void cpj_snd_tap_remove(cpj_snd_tap *tap) {
    pj_pool_t *pool;
    if (pjsua_var.null_snd != NULL && pjsua_var.null_port != NULL &&
        pjmedia_master_port_get_uport(pjsua_var.null_snd) == &tap->frames.base)
        pjmedia_master_port_set_uport(pjsua_var.null_snd, pjsua_var.null_port);
    __atomic_store_n(&tap->frames.closed, 1, __ATOMIC_RELEASE);
    pool = tap->frames.pool;
    tap->frames.pool = NULL;
    tap->resample = NULL;
    if (pool) pj_pool_release(pool);
}

static inline cpj_frame_port *cpj_snd_tap_frames(cpj_snd_tap *tap) { return &tap->frames; }

/* ---- End of a non-looping player's file ----
 * pjmedia calls `callback` (from its event manager's thread) when the player reaches the
 * end of its file; Swift cannot take the player's port out of pjsua itself. */
static inline pj_status_t cpj_player_set_eof_callback(
    pjsua_player_id id, void *token, void (*callback)(pjmedia_port *port, void *token)) {
    pjmedia_port *port = NULL;
    pj_status_t status = pjsua_player_get_port(id, &port);
    if (status != PJ_SUCCESS) return status;
    return pjmedia_wav_player_set_eof_cb2(port, token, callback);
}

/* ---- Tone generators on the conference bridge ----
 * A pjmedia tone generator (16 kHz, 20 ms frames; the bridge resamples) playing `count`
 * tones once or in a loop, added to the bridge. The pool is ours; from 2.15 on the
 * generator and the bridge's record of it live in pools of their own. */
static inline unsigned cpj_tonegen_max_tones(void) { return PJMEDIA_TONEGEN_MAX_DIGITS; }

static inline pj_status_t cpj_tonegen_start(
    const pjmedia_tone_desc *tones, unsigned count, int loop,
    pjmedia_port **out_port, pj_pool_t **out_pool, pjsua_conf_port_id *slot, const char **failed) {
    pj_pool_t *pool;
    pjmedia_port *port = NULL;
    pj_status_t status;
    if (!tones || count == 0 || count > PJMEDIA_TONEGEN_MAX_DIGITS) return PJ_EINVAL;
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
static inline void cpj_tonegen_remove(pjmedia_port *port, pj_pool_t *pool, pjsua_conf_port_id slot) {
    pjsua_conf_remove_port(slot);
    pjmedia_port_destroy(port);
    pj_pool_release(pool);
}

/* ---- Status codes: pj_status_t bases differ between versions; never hard-code them. ---- */

/* PJ_SUCCESS is a plain macro, but spelled here so every status check reads the same. */
static inline pj_status_t cpj_success(void) { return PJ_SUCCESS; }
/* Expression macros (PJ_ERRNO_START_STATUS + n) are not imported by Swift. */
static inline pj_status_t cpj_status_einval(void) { return PJ_EINVAL; }
static inline pj_status_t cpj_status_enotfound(void) { return PJ_ENOTFOUND; }
static inline pj_status_t cpj_status_etoomany(void) { return PJ_ETOOMANY; }
static inline pj_status_t cpj_status_ebusy(void) { return PJ_EBUSY; }
static inline pj_status_t cpj_status_einvalidop(void) { return PJ_EINVALIDOP; }
static inline pj_status_t cpj_status_etimedout(void) { return PJ_ETIMEDOUT; }
static inline pj_status_t cpj_status_eexists(void) { return PJ_EEXISTS; }
static inline pj_status_t cpj_status_eafnotsup(void) { return PJ_EAFNOTSUP; }
static inline pj_status_t cpj_status_auth_stale_count(void) { return PJSIP_EAUTHSTALECOUNT; }
static inline pj_status_t cpj_status_enomem(void) { return PJ_ENOMEM; }
static inline pj_status_t cpj_status_einvaliduri(void) { return PJSIP_EINVALIDURI; }
static inline pj_status_t cpj_status_esessionterminated(void) { return PJSIP_ESESSIONTERMINATED; }
static inline pj_status_t cpj_status_esessionstate(void) { return PJSIP_ESESSIONSTATE; }
/* No default sound device (PJMEDIA_EAUD_NODEFDEV): a machine without audio hardware. */
static inline pj_status_t cpj_status_aud_nodefdev(void) { return PJMEDIA_EAUD_NODEFDEV; }

/* PJSIP_ERRNO_FROM_SIP_STATUS / PJSIP_ERRNO_TO_SIP_STATUS are function-like macros. */
static inline pj_status_t cpj_status_from_sip(int code) { return PJSIP_ERRNO_FROM_SIP_STATUS(code); }
static inline int cpj_sip_code_from_status(pj_status_t status) {
    if (status >= PJSIP_ERRNO_FROM_SIP_STATUS(100) && status < PJSIP_ERRNO_FROM_SIP_STATUS(800))
        return PJSIP_ERRNO_TO_SIP_STATUS(status);
    return 0;
}

/* ---- Build-time limits (expression macros in config_site.h). ---- */

static inline unsigned cpj_max_calls(void) { return PJSUA_MAX_CALLS; }
static inline unsigned cpj_max_accounts(void) { return PJSUA_MAX_ACC; }
static inline unsigned cpj_max_sdp_media(void) { return PJMEDIA_MAX_SDP_MEDIA; }
static inline int cpj_invalid_id(void) { return PJSUA_INVALID_ID; }

/* ---- Accounts that may have been deleted: pjsua_acc_get_user_data asserts (aborts the
 * process) on a deleted account, and pjsua still hands out the account id of a call whose
 * account was removed (its callbacks, pjsua_call_get_info). This reads the same field
 * without the assertion: the user data of a valid account in range, else NULL. No lock:
 * pjsua_var.acc is a static array, and a removal racing the read only makes the handle
 * stale a moment sooner. ---- */

static inline void *cpj_acc_user_data_if_valid(pjsua_acc_id acc_id) {
    if (acc_id < 0 || acc_id >= (pjsua_acc_id)PJ_ARRAY_SIZE(pjsua_var.acc)) return NULL;
    if (!pjsua_var.acc[acc_id].valid) return NULL;
    return pjsua_var.acc[acc_id].cfg.user_data;
}

/* PJSIP_EXPIRES_NOT_SPECIFIED is a cast expression macro: the "no Expires" lifetime. */
static inline pj_uint32_t cpj_expires_not_specified(void) { return PJSIP_EXPIRES_NOT_SPECIFIED; }

/* ---- Fixed-size arrays inside info structs: Swift sees them as tuples. ---- */

static inline const pjsua_call_media_info *
cpj_call_info_media(const pjsua_call_info *info, unsigned index) {
    return index < info->media_cnt ? &info->media[index] : NULL;
}

/* The audio arm of an anonymous union inside pjsua_call_media_info. */
static inline pjsua_conf_port_id cpj_call_media_conf_slot(const pjsua_call_media_info *m) {
    return m->stream.aud.conf_slot;
}

/* ---- Name-address URIs: the vtable call that tells a name-addr from a bare URI. ---- */

/* The display-name of a From/To/Contact URI, or an empty string for a bare URI.
 * pjsip keeps the display-name without its surrounding quotes, escapes intact. */
static inline pj_str_t cpj_uri_display(const pjsip_uri *uri) {
    pj_str_t empty = { NULL, 0 };
    if (uri == NULL) return empty;
    if ((const void *)pjsip_uri_get_uri(uri) == (const void *)uri) return empty;
    return ((const pjsip_name_addr *)uri)->display;
}

/* ---- SIP message headers: pjlib's intrusive list has a sentinel, not NULL. ---- */

static inline const pjsip_msg *cpj_rdata_msg(const pjsip_rx_data *rdata) {
    return rdata ? rdata->msg_info.msg : NULL;
}

static inline const pjsip_hdr *cpj_msg_first_header(const pjsip_msg *msg) {
    if (msg == NULL || msg->hdr.next == &msg->hdr) return NULL;
    return msg->hdr.next;
}

static inline const pjsip_hdr *cpj_msg_next_header(const pjsip_msg *msg, const pjsip_hdr *hdr) {
    if (msg == NULL || hdr == NULL || hdr->next == &msg->hdr) return NULL;
    return hdr->next;
}

/* Prints "Name: value" into buf; returns the length or -1 when it does not fit. */
static inline int cpj_header_print(const pjsip_hdr *hdr, char *buf, pj_size_t size) {
    return pjsip_hdr_print_on((void *)hdr, buf, size);
}

/* The From header's URI of a received request. */
static inline const pjsip_uri *cpj_rdata_from_uri(const pjsip_rx_data *rdata) {
    return (rdata && rdata->msg_info.from) ? rdata->msg_info.from->uri : NULL;
}

/* The request's Call-ID in full (pjsua_call_info keeps only its first 127 bytes). */
static inline pj_str_t cpj_rdata_call_id(const pjsip_rx_data *rdata) {
    pj_str_t empty = { NULL, 0 };
    return (rdata && rdata->msg_info.cid) ? rdata->msg_info.cid->id : empty;
}

/* ---- Account configuration: fixed-size arrays and pjlib lists inside pjsua_acc_config. ---- */

static inline unsigned cpj_acc_max_credentials(void) { return PJSUA_ACC_MAX_PROXIES; }
static inline unsigned cpj_acc_max_proxies(void) { return PJSUA_ACC_MAX_PROXIES; }

static inline pjsip_cred_info *cpj_acc_credential(pjsua_acc_config *cfg, unsigned index) {
    return index < PJSUA_ACC_MAX_PROXIES ? &cfg->cred_info[index] : NULL;
}

static inline void cpj_acc_set_proxy(pjsua_acc_config *cfg, unsigned index, pj_str_t uri) {
    if (index < PJSUA_ACC_MAX_PROXIES) cfg->proxy[index] = uri;
}

/* pj_list_push_back may be an inline function or a macro depending on PJ_FUNCTIONS_ARE_INLINED. */
static inline void cpj_acc_add_register_header(pjsua_acc_config *cfg, pj_pool_t *pool, pj_str_t name, pj_str_t value) {
    pjsip_generic_string_hdr *hdr = pjsip_generic_string_hdr_create(pool, &name, &value);
    if (hdr) pj_list_push_back(&cfg->reg_hdr_list, hdr);
}

static inline pj_uint32_t cpj_cred_plain_password(void) { return PJSIP_CRED_DATA_PLAIN_PASSWD; }
static inline pj_uint32_t cpj_cred_digest(void) { return PJSIP_CRED_DATA_DIGEST; }

/* ---- Media streams: pjsua hands a call's stream to pjmedia without a NULL check. ---- */

/* pjsua_call_get_stream_info and pjsua_call_get_stream_stat pass the call's audio stream
 * straight to pjmedia, which asserts (aborts, in a debug pjproject) when it is NULL. The
 * stream is torn down on pjsua's threads when the call ends or its media is removed, so a
 * caller that saw active media a moment earlier can race it. These check the stream under
 * pjsua's lock (recursive; the wrapped functions take it again) and return PJ_ENOTFOUND
 * when there is none. */
static inline pj_bool_t cpj_call_has_audio_stream(pjsua_call_id call_id, unsigned med_idx) {
    const pjsua_call *call = &pjsua_var.calls[call_id];
    return med_idx < call->med_cnt && call->media[med_idx].type == PJMEDIA_TYPE_AUDIO &&
           call->media[med_idx].strm.a.stream != NULL;
}

static inline pj_status_t cpj_call_get_stream_info(pjsua_call_id call_id, unsigned med_idx,
                                                   pjsua_stream_info *info) {
    pj_status_t status;
    if (call_id < 0 || call_id >= (int)pjsua_call_get_max_count()) return PJ_EINVAL;
    PJSUA_LOCK();
    status = cpj_call_has_audio_stream(call_id, med_idx)
                 ? pjsua_call_get_stream_info(call_id, med_idx, info) : PJ_ENOTFOUND;
    PJSUA_UNLOCK();
    return status;
}

static inline pj_status_t cpj_call_get_stream_stat(pjsua_call_id call_id, unsigned med_idx,
                                                   pjsua_stream_stat *stat) {
    pj_status_t status;
    if (call_id < 0 || call_id >= (int)pjsua_call_get_max_count()) return PJ_EINVAL;
    PJSUA_LOCK();
    status = cpj_call_has_audio_stream(call_id, med_idx)
                 ? pjsua_call_get_stream_stat(call_id, med_idx, stat) : PJ_ENOTFOUND;
    PJSUA_UNLOCK();
    return status;
}

/* ---- Threads: pj_thread_desc is an array typedef, awkward to allocate from Swift. ---- */

static inline pj_size_t cpj_thread_desc_size(void) { return sizeof(pj_thread_desc); }

static inline pj_status_t cpj_thread_register(const char *name, void *desc, pj_thread_t **thread) {
    return pj_thread_register(name, (long *)desc, thread);
}

/* pjsua_schedule_timer2 is a macro when PJ_TIMER_DEBUG is set; this is callable either way. */
static inline pj_status_t cpj_schedule_timer(void (*cb)(void *user_data), void *user_data, unsigned msec_delay) {
    return pjsua_schedule_timer2(cb, user_data, msec_delay);
}

/* ---- Call features: message data headers, DTMF constants. ---- */

/* Adds "name: value" to a pjsua_msg_data's header list; pj_list_push_back may be a macro.
 * pjsip_generic_string_hdr_create copies both strings into the pool. */
static inline pj_bool_t cpj_msg_data_add_header(pjsua_msg_data *data, pj_pool_t *pool, pj_str_t name, pj_str_t value) {
    pjsip_generic_string_hdr *hdr = pjsip_generic_string_hdr_create(pool, &name, &value);
    if (hdr == NULL) return PJ_FALSE;
    pj_list_push_back(&data->hdr_list, hdr);
    return PJ_TRUE;
}

/* An enum constant used as a bit in an unsigned flags field: spell it as unsigned. */
static inline unsigned cpj_dtmf_flag_is_end(void) { return PJMEDIA_STREAM_DTMF_IS_END; }
/* PJSUA_UNKNOWN_DTMF_DURATION is a cast expression macro. */
static inline unsigned cpj_dtmf_unknown_duration(void) { return PJSUA_UNKNOWN_DTMF_DURATION; }

/* ---- Network changes: pjsua_handle_ip_change's steps, by name, for every version (2.17
 * added PJSUA_IP_CHANGE_OP_SHUTDOWN_TP in the middle of the enum, shifting the later
 * values), and a NETLINK_ROUTE socket for the Linux network monitor. ---- */

enum { CPJ_IP_CHANGE_SHUTDOWN_TP = 1, CPJ_IP_CHANGE_RESTART_LIS, CPJ_IP_CHANGE_ACC_SHUTDOWN_TP,
       CPJ_IP_CHANGE_ACC_UPDATE_CONTACT, CPJ_IP_CHANGE_ACC_HANGUP_CALLS, CPJ_IP_CHANGE_ACC_REINVITE_CALLS,
       CPJ_IP_CHANGE_COMPLETED, CPJ_IP_CHANGE_OTHER };

/* pjsua's operation as one of the CPJ_IP_CHANGE_ values above. */
static inline int cpj_ip_change_step(pjsua_ip_change_op op) {
    switch (op) {
#if CPJ_VERSION_AT_LEAST(2, 17)
    case PJSUA_IP_CHANGE_OP_SHUTDOWN_TP: return CPJ_IP_CHANGE_SHUTDOWN_TP;
#endif
    case PJSUA_IP_CHANGE_OP_RESTART_LIS: return CPJ_IP_CHANGE_RESTART_LIS;
    case PJSUA_IP_CHANGE_OP_ACC_SHUTDOWN_TP: return CPJ_IP_CHANGE_ACC_SHUTDOWN_TP;
    case PJSUA_IP_CHANGE_OP_ACC_UPDATE_CONTACT: return CPJ_IP_CHANGE_ACC_UPDATE_CONTACT;
    case PJSUA_IP_CHANGE_OP_ACC_HANGUP_CALLS: return CPJ_IP_CHANGE_ACC_HANGUP_CALLS;
    case PJSUA_IP_CHANGE_OP_ACC_REINVITE_CALLS: return CPJ_IP_CHANGE_ACC_REINVITE_CALLS;
    case PJSUA_IP_CHANGE_OP_COMPLETED: return CPJ_IP_CHANGE_COMPLETED;
    default: return CPJ_IP_CHANGE_OTHER;
    }
}

/* pjsua_ip_change_param.shutdown_transport arrived in 2.14 or 2.15 (pjproject#3781):
 * used from 2.15 on; before, only the account's own registration transport is shut down
 * (ip_change_cfg.shutdown_tp). */
static inline void cpj_ip_change_param_set_shutdown_transport(pjsua_ip_change_param *param, pj_bool_t value) {
#if CPJ_VERSION_AT_LEAST(2, 15)
    param->shutdown_transport = value;
#else
    (void)param; (void)value;
#endif
}

/* ip_change_cfg.reinv_use_update arrived in 2.13 (pjproject#3146); before, re-INVITE. */
static inline void cpj_ip_change_cfg_set_use_update(pjsua_ip_change_acc_cfg *config, pj_bool_t value) {
#if CPJ_VERSION_AT_LEAST(2, 13)
    config->reinv_use_update = value;
#else
    (void)config; (void)value;
#endif
}

/* The re-INVITE flags pjsua's default uses (enum constants, spelled as unsigned). */
static inline unsigned cpj_ip_change_reinvite_flags(void) {
    return PJSUA_CALL_REINIT_MEDIA | PJSUA_CALL_UPDATE_CONTACT | PJSUA_CALL_UPDATE_VIA;
}

/* Before a final 2xx to an incoming call that is still early: when the account's Contact
 * changed since the INVITE arrived (a network change moved it), make it the dialog's local
 * Contact, so the 2xx names the address the host has now (RFC 3261 §12.1.1: the
 * 2xx's Contact is the UAC's remote target). pjsua updates the Contact of confirmed calls by
 * re-INVITE, but leaves an early dialog on the address it was created with, where the ACK
 * then goes. Returns 1 when it changed the Contact, 0 when not, -1 on failure. */
static inline int cpj_call_refresh_early_contact(pjsua_call_id call_id) {
    if (call_id < 0 || call_id >= (int)pjsua_var.ua_cfg.max_calls) return -1;
    pjsua_call *call = &pjsua_var.calls[call_id];
    pjsip_inv_session *inv = call->inv;
    if (inv == NULL || inv->role != PJSIP_ROLE_UAS || inv->state >= PJSIP_INV_STATE_CONNECTING) return 0;
    if (!pjsua_acc_is_valid(call->acc_id)) return 0;
    pjsua_acc *acc = &pjsua_var.acc[call->acc_id];
    const pj_str_t *wanted = acc->cfg.force_contact.slen ? &acc->cfg.force_contact : &acc->contact;
    if (wanted->slen == 0) return 0;
    pjsip_dialog *dlg = inv->dlg;
    int result = 0;
    pjsip_dlg_inc_lock(dlg);
    char current[PJSIP_MAX_URL_SIZE];
    int length = dlg->local.contact ? pjsip_uri_print(PJSIP_URI_IN_CONTACT_HDR, dlg->local.contact->uri,
                                                      current, sizeof current) : -1;
    /* acc->contact is "<uri>" with parameters after it; compare the URI inside. */
    pj_str_t inside = *wanted;
    if (inside.slen > 1 && inside.ptr[0] == '<') {
        const char *end = pj_memchr(inside.ptr, '>', inside.slen);
        if (end) { inside.ptr += 1; inside.slen = end - inside.ptr; }
    }
    if (length < 0 || length != inside.slen || pj_memcmp(current, inside.ptr, length) != 0) {
        const pj_str_t name = { (char *)"Contact", 7 };
        pj_str_t copy;
        pj_strdup_with_null(dlg->pool, &copy, wanted);
        pjsip_contact_hdr *contact = (pjsip_contact_hdr *)pjsip_parse_hdr(dlg->pool, &name, copy.ptr, copy.slen, NULL);
        if (contact == NULL) {
            result = -1;
        } else {
            dlg->local.contact = contact;
            result = 1;
        }
    }
    pjsip_dlg_dec_lock(dlg);
    return result;
}

#if defined(__linux__)
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

/* A NETLINK_ROUTE socket subscribed to link, address and route changes (IPv4 and IPv6).
 * Returns the descriptor, or -errno when the system refuses one (a sandbox). */
static inline int cpj_netlink_route_open(void) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
    if (fd < 0) return -errno;
    struct sockaddr_nl addr;
    memset(&addr, 0, sizeof addr);
    addr.nl_family = AF_NETLINK;
    addr.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    return fd;
}

/* Waits up to timeout_ms for messages and reads what is there. Returns how many of them are
 * changes that can move SIP traffic (0 when none or on a timeout), or -errno: a link going
 * up or down, a global address added or removed, a route of the main table other than the
 * kernel's own; never the loopback interface. A kernel that dropped messages (ENOBUFS) counts as one change. */
static inline int cpj_netlink_route_read(int fd, int timeout_ms) {
    struct pollfd pfd = { fd, POLLIN, 0 };
    int ready = poll(&pfd, 1, timeout_ms);
    if (ready < 0) return errno == EINTR ? 0 : -errno;
    if (ready == 0) return 0;
    unsigned loopback = if_nametoindex("lo");
    int changes = 0;
    for (;;) {
        char buffer[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
        ssize_t length = recv(fd, buffer, sizeof buffer, 0);
        if (length < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
            if (errno == ENOBUFS) { changes++; continue; }
            return -errno;
        }
        int remaining = (int)length;
        for (struct nlmsghdr *message = (struct nlmsghdr *)buffer; NLMSG_OK(message, remaining);
             message = NLMSG_NEXT(message, remaining)) {
            unsigned index = 0;
            switch (message->nlmsg_type) {
            case RTM_NEWADDR: case RTM_DELADDR: {
                struct ifaddrmsg *address = (struct ifaddrmsg *)NLMSG_DATA(message);
                /* Global addresses only (not IPv6 link-local), and a new one once it is
                 * usable: its duplicate-address detection over, not while tentative. */
                if (address->ifa_scope != RT_SCOPE_UNIVERSE) continue;
                if (message->nlmsg_type == RTM_NEWADDR && (address->ifa_flags & IFA_F_TENTATIVE)) continue;
                index = address->ifa_index; break;
            }
            case RTM_NEWLINK: case RTM_DELLINK:
                index = (unsigned)((struct ifinfomsg *)NLMSG_DATA(message))->ifi_index; break;
            case RTM_NEWROUTE: case RTM_DELROUTE: {
                struct rtmsg *route = (struct rtmsg *)NLMSG_DATA(message);
                /* Routes of the main table that the kernel did not derive from an address
                 * (a prefix route, fe80::/64): a default route moved, a route added. */
                if (route->rtm_table != RT_TABLE_MAIN || route->rtm_protocol == RTPROT_KERNEL) continue;
                index = 0; break;
            }
            default: continue;
            }
            if (index != 0 && index == loopback) continue;
            changes++;
        }
    }
    return changes;
}
#endif

/* ---- Requests nothing handles: pjsua leaves them unanswered (its sample app, not the
 * library, adds a default handler), so a peer would retransmit into silence until its
 * transaction times out. This last-priority module gives each a final response: 481 for a
 * request aimed at a dialog or transaction that does not exist (a To tag, BYE, CANCEL,
 * NOTIFY; RFC 3261 §12.2.2, §15.1.2, RFC 6665 §4.1.3), 405 with Allow otherwise. ACK gets
 * none. ---- */

static inline pj_bool_t cpj_unhandled_on_rx_request(pjsip_rx_data *rdata) {
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    const pjsip_method *method = &rdata->msg_info.msg->line.req.method;
    pjsip_tx_data *tdata = NULL;
    pj_str_t notify = pj_str((char *)"NOTIFY");
    int code;
    if (method->id == PJSIP_ACK_METHOD) return PJ_TRUE;
    if ((rdata->msg_info.to && rdata->msg_info.to->tag.slen > 0) || method->id == PJSIP_BYE_METHOD ||
        method->id == PJSIP_CANCEL_METHOD || pj_stricmp(&method->name, &notify) == 0) {
        code = PJSIP_SC_CALL_TSX_DOES_NOT_EXIST;
    } else {
        code = PJSIP_SC_METHOD_NOT_ALLOWED;
    }
    if (pjsip_endpt_create_response(endpt, rdata, code, NULL, &tdata) != PJ_SUCCESS) return PJ_TRUE;
    if (code == PJSIP_SC_METHOD_NOT_ALLOWED) {
        const pjsip_hdr *allow = pjsip_endpt_get_capability(endpt, PJSIP_H_ALLOW, NULL);
        if (allow) pjsip_msg_add_hdr(tdata->msg, (pjsip_hdr *)pjsip_hdr_clone(tdata->pool, allow));
    }
    if (pjsip_endpt_send_response2(endpt, rdata, tdata, NULL, NULL) != PJ_SUCCESS) pjsip_tx_data_dec_ref(tdata);
    return PJ_TRUE;
}

/* Registers the module above with the endpoint pjsua_init just created; call once per
 * pjsua_init. pjsip_endpt_destroy unregisters it again, so it is free to reuse here. */
static inline pj_status_t cpj_register_unhandled_request_responder(void) {
    static pjsip_module module;
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pj_str_t name = pj_str((char *)"mod-swiftpjsua-unhandled");
    if (!endpt) return PJ_EINVALIDOP;
    pj_bzero(&module, sizeof(module));
    module.name = name;
    module.id = -1;
    module.priority = PJSIP_MOD_PRIORITY_APPLICATION + 99;
    module.on_rx_request = &cpj_unhandled_on_rx_request;
    return pjsip_endpt_register_module(endpt, &module);
}

/* ---- An INVITE with Replaces (RFC 3891) for a call the app has hung up: pjsua reports the
 * call DISCONNECTED at once but keeps its dialog (still CONFIRMED) until the BYE is
 * answered, and pjsip only refuses a Replaces for a DISCONNECTED session. In that window
 * pjsua skips its replace callbacks (the call is hanging up), answers the new call 200 on
 * its own and gives it the old call's user data: a call with audio the app never hears of.
 * The dialog has terminated for the app, so this module, just ahead of pjsua's, declines
 * such an INVITE with 603 (RFC 3891 §3). Anything else passes on to pjsua. ---- */

static inline pj_bool_t cpj_replaces_on_rx_request(pjsip_rx_data *rdata) {
    const pj_str_t name = { (char *)"Replaces", 8 };
    pjsip_msg *msg = rdata->msg_info.msg;
    const pjsip_replaces_hdr *replaces;
    pjsip_dialog *dlg;
    pj_bool_t hanging_up = PJ_FALSE;
    if (msg->line.req.method.id != PJSIP_INVITE_METHOD) return PJ_FALSE;
    if (pjsip_rdata_get_dlg(rdata) || pjsip_rdata_get_tsx(rdata)) return PJ_FALSE;
    /* pjsua_init registers pjsip's Replaces parser, so the header is the parsed type. */
    replaces = (const pjsip_replaces_hdr *)pjsip_msg_find_hdr_by_name(msg, &name, NULL);
    if (!replaces) return PJ_FALSE;
    dlg = pjsip_ua_find_dialog(&replaces->call_id, &replaces->to_tag, &replaces->from_tag, PJ_TRUE);
    if (!dlg) return PJ_FALSE;
    {
        const pjsua_call *call = (const pjsua_call *)dlg->mod_data[pjsua_get_var()->mod.id];
        hanging_up = call && call->hanging_up ? PJ_TRUE : PJ_FALSE;
    }
    pjsip_dlg_dec_lock(dlg);
    if (!hanging_up) return PJ_FALSE;
    pjsip_endpt_respond(pjsua_get_pjsip_endpt(), NULL, rdata, PJSIP_SC_DECLINE, NULL, NULL, NULL, NULL);
    return PJ_TRUE;
}

/* Registers the module above (once per pjsua_init, like the unhandled-request responder),
 * one priority step ahead of pjsua's own module. */
static inline pj_status_t cpj_register_replaces_check(void) {
    static pjsip_module module;
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pj_str_t name = pj_str((char *)"mod-swiftpjsua-replaces");
    if (!endpt) return PJ_EINVALIDOP;
    pj_bzero(&module, sizeof(module));
    module.name = name;
    module.id = -1;
    module.priority = PJSIP_MOD_PRIORITY_APPLICATION - 1;
    module.on_rx_request = &cpj_replaces_on_rx_request;
    return pjsip_endpt_register_module(endpt, &module);
}

/* pjsua_verify_sip_url parses in a fixed 1024-byte pool with no growth and no exception
 * handler around the copy: a URI of about 1000 bytes or more makes the pool throw with no
 * PJ_TRY, which asserts (aborts the process). This does the same check in a pool that
 * grows: the text parses as a URI, the whole text, with scheme sip or sips. */
static inline pj_status_t cpj_verify_sip_uri(const char *text, pj_size_t length) {
    pj_pool_t *pool;
    char *copy;
    pjsip_uri *uri;
    pj_status_t status = PJSIP_EINVALIDURI;
    if (!text || length == 0) return PJSIP_EINVALIDURI;
    /* The pool comes from pjsua's factory, which exists only between create and destroy. */
    if (pjsua_get_state() == PJSUA_STATE_NULL) return PJ_EINVALIDOP;
    pool = pjsua_pool_create("verify-uri", length + 1024, 1024);
    if (!pool) return PJ_ENOMEM;
    copy = (char *)pj_pool_alloc(pool, length + 1);
    pj_memcpy(copy, text, length);
    copy[length] = '\0';
    uri = pjsip_parse_uri(pool, copy, length, 0);
    if (uri) {
        const pj_str_t *scheme = pjsip_uri_get_scheme(uri);
        if (pj_stricmp2(scheme, "sip") == 0 || pj_stricmp2(scheme, "sips") == 0) status = PJ_SUCCESS;
    }
    pj_pool_release(pool);
    return status;
}

/* ---- Dead-flow recovery (RFC 5626 §4.4-4.5). A TCP or TLS connection that a NAT or
 * firewall forgot silently stays in pjsip's transport manager, which hands it to every later
 * request to the same address: each retry would time out on it again. Shutting the
 * transport down takes it out of the manager, so the next request opens a new connection;
 * it is destroyed once its last user lets go of it. ---- */

/* The transport a client registration last used (NULL when none). pjsip_regc_get_info
 * returns it together with strings the caller does not need; the regc holds a reference to
 * it for as long as the regc lives (inside the registration callback: all through it). */
static inline pjsip_transport *cpj_regc_last_transport(pjsip_regc *regc) {
    pjsip_regc_info info;
    if (!regc || pjsip_regc_get_info(regc, &info) != PJ_SUCCESS) return NULL;
    return info.transport;
}

/* Shuts down `tp` when it is connection-oriented and not already shutting down; returns
 * PJ_TRUE when it did. A datagram transport has no flow to replace and is left alone. */
static inline pj_bool_t cpj_shutdown_failed_flow(pjsip_transport *tp, const char *why) {
    if (!tp || !(tp->flag & PJSIP_TRANSPORT_RELIABLE) || tp->is_shutdown || tp->is_destroying) return PJ_FALSE;
    PJ_LOG(3, ("swiftpjsua", "%s: %s: shutting the flow down so that the next request opens a new one",
               tp->obj_name, why ? why : "failed"));
    return pjsip_transport_shutdown(tp) == PJ_SUCCESS;
}

/* The transport of a request we sent that timed out with no response at all (a client
 * transaction ended by its timer B or F), else NULL. The transaction holds it while its
 * state callbacks run. A transport error is not a silent death: pjsip's TCP and TLS
 * transports shut themselves down on it. */
static inline pjsip_transport *cpj_tsx_unanswered_transport(const pjsip_transaction *tsx, const pjsip_event *e) {
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
static inline pjsip_transport *cpj_acc_flow_locked(pjsua_acc_id acc_id) {
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
static inline pj_size_t cpj_acc_flow_ping(pjsua_acc_id acc_id, pj_uint64_t *sent_at) {
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
static inline int cpj_acc_flow_check(pjsua_acc_id acc_id, pj_size_t flow, pj_uint64_t sent_at, pj_bool_t may_shut) {
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

/* ---------------------------------------------------------------------------------------
 * Dead-peer detection (media inactivity and lost SIP connections): which connection a
 * call's transactions use, and what pjsip reports when one of them dies.
 * ------------------------------------------------------------------------------------- */

/* The transport an INVITE-session event went over: the transaction's transport, else the
 * transport of the message that caused the event; NULL when there is none (a timer). */
static inline pjsip_transport *cpj_event_transport(const pjsip_event *e) {
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
static inline pj_bool_t cpj_transport_is_reliable(const pjsip_transport *tp) {
    return tp && PJSIP_TRANSPORT_IS_RELIABLE(tp) ? PJ_TRUE : PJ_FALSE;
}

/* Names one connection as "TYPE local->remote" (for example "TCP 127.0.0.1:5060->127.0.0.1:40112"),
 * so a call can remember its connection without holding a reference on the transport. */
static inline int cpj_transport_describe(const pjsip_transport *tp, char *buffer, pj_size_t size) {
    char local[PJ_INET6_ADDRSTRLEN + 10], remote[PJ_INET6_ADDRSTRLEN + 10];
    int length;
    if (!tp || !buffer || size == 0) return -1;
    pj_sockaddr_print(&tp->local_addr, local, sizeof(local), 3);
    pj_sockaddr_print(&tp->key.rem_addr, remote, sizeof(remote), 3);
    length = pj_ansi_snprintf(buffer, size, "%s %s->%s", tp->type_name ? tp->type_name : "?", local, remote);
    return length < 0 || (pj_size_t)length >= size ? -1 : length;
}

/* A reference that keeps a transport's memory valid until cpj_transport_release. */
static inline void cpj_transport_retain(pjsip_transport *tp) { if (tp) pjsip_transport_add_ref(tp); }
static inline void cpj_transport_release(pjsip_transport *tp) { if (tp) pjsip_transport_dec_ref(tp); }

/* Whether pjsip has taken the transport out of use: TCP and TLS report DISCONNECTED before
 * they shut the transport down, and until then a new request could still be sent over it. */
static inline pj_bool_t cpj_transport_is_shut_down(const pjsip_transport *tp) {
    return tp && (tp->is_shutdown || tp->is_destroying) ? PJ_TRUE : PJ_FALSE;
}

/* The pjsip_transport_state values Swift compares against (an enum typedef it imports as a struct). */
static inline pjsip_transport_state cpj_tp_state_disconnected(void) { return PJSIP_TP_STATE_DISCONNECTED; }

/* What a finished client INVITE transaction (a re-INVITE) of a call reports: 0 while it is
 * not finished or not ours, else its final status; *local is set when pjsip made the status
 * up itself (timeout, transport error) rather than receiving a response. */
static inline int cpj_event_reinvite_outcome(pjsip_transaction *tsx, const pjsip_event *e, pj_bool_t *local) {
    if (!tsx || !e || e->type != PJSIP_EVENT_TSX_STATE) return 0;
    if (tsx->role != PJSIP_ROLE_UAC || tsx->method.id != PJSIP_INVITE_METHOD) return 0;
    if (tsx->state != PJSIP_TSX_STATE_COMPLETED && tsx->state != PJSIP_TSX_STATE_TERMINATED) return 0;
    if (tsx->status_code < 200) return 0;
    if (local) *local = e->body.tsx_state.type == PJSIP_EVENT_RX_MSG ? PJ_FALSE : PJ_TRUE;
    return tsx->status_code;
}

/* ---- Callbacks that can outlive their call. pjsua frees a call's slot (clearing its user
 * data) when the call ends, but a dialog that still carries a subscription (a REFER's) lives
 * on, and pjsua's callbacks for it name the slot it had: a freed one, or one a newer call now
 * holds. ---- */

/* Whether pjsua holds a call in the slot now (its INVITE session exists): a callback for a
 * slot without one is about a call that has ended. */
static inline pj_bool_t cpj_call_slot_in_use(pjsua_call_id call_id) {
    if (call_id < 0 || call_id >= (int)pjsua_call_get_max_count()) return PJ_FALSE;
    return pjsua_var.calls[call_id].inv != NULL ? PJ_TRUE : PJ_FALSE;
}

/* Whether the transaction belongs to the dialog of the call now in the slot (pjsua finds the
 * call of an ended dialog through a pointer to the slot, whoever holds it now). */
static inline pj_bool_t cpj_call_owns_tsx(pjsua_call_id call_id, pjsip_transaction *tsx) {
    const pjsip_inv_session *inv;
    if (!tsx || call_id < 0 || call_id >= (int)pjsua_call_get_max_count()) return PJ_FALSE;
    inv = pjsua_var.calls[call_id].inv;
    return inv != NULL && inv->dlg != NULL && pjsip_tsx_get_dlg(tsx) == inv->dlg ? PJ_TRUE : PJ_FALSE;
}

/* Whether the event is a NOTIFY of the refer event package (RFC 3515 §2.4.4) that has just
 * arrived: the first one stops the REFER's Timer N (RFC 6665 §4.1.2.4). */
static inline pj_bool_t cpj_event_is_refer_notify(const pjsip_transaction *tsx, const pjsip_event *e) {
    const pj_str_t name = { "Event", 5 }, short_name = { "o", 1 };
    const pjsip_event_hdr *hdr;
    const pjsip_rx_data *rdata;
    if (!tsx || !e || tsx->role != PJSIP_ROLE_UAS || tsx->state != PJSIP_TSX_STATE_TRYING) return PJ_FALSE;
    if (pjsip_method_cmp(&tsx->method, pjsip_get_notify_method()) != 0) return PJ_FALSE;
    if (e->type != PJSIP_EVENT_TSX_STATE || e->body.tsx_state.type != PJSIP_EVENT_RX_MSG) return PJ_FALSE;
    rdata = e->body.tsx_state.src.rdata;
    if (!rdata || !rdata->msg_info.msg) return PJ_FALSE;
    hdr = (const pjsip_event_hdr *)pjsip_msg_find_hdr_by_names(rdata->msg_info.msg, &name, &short_name, NULL);
    return hdr != NULL && pj_stricmp2(&hdr->event_type, "refer") == 0 ? PJ_TRUE : PJ_FALSE;
}

/* pjsua_call_reinvite with no options: the same offer again, sent over a connection pjsip
 * opens anew when the old one is gone. */
static inline pj_status_t cpj_call_reinvite(pjsua_call_id call_id) {
    if (call_id < 0 || call_id >= (int)pjsua_call_get_max_count()) return PJ_EINVAL;
    return pjsua_call_reinvite(call_id, 0, NULL);
}

/* What an attended transfer's Refer-To names (RFC 3891, RFC 5589 §7): the far end's remote
 * Contact URI (the device in the dialog; pjsua_call_xfer_replaces names the To URI, which a
 * proxy may fork to another device), the Call-ID and both tags of the call's dialog, copied
 * under the dialog lock into `buf` one after another; `lengths` gets the four lengths in
 * that order. Falls back to the dialog's remote target, then the To URI, when the far end
 * sent no Contact. PJ_ETOOSMALL when `buf` is too small; acquire_call's status when the
 * call has no dialog. */
static inline pj_status_t cpj_call_dialog_identity(pjsua_call_id call_id, char *buf, pj_size_t size, int lengths[4]) {
    pjsua_call *call = NULL;
    pjsip_dialog *dlg = NULL;
    pj_status_t status;
    const pjsip_uri *uri;
    const pj_str_t *parts[3];
    pj_size_t used;
    int printed, i;
    if (call_id < 0 || call_id >= (int)pjsua_call_get_max_count() || !buf || size == 0) return PJ_EINVAL;
    status = acquire_call("cpj_call_dialog_identity()", call_id, &call, &dlg);
    if (status != PJ_SUCCESS) return status;
    if (dlg->remote.contact && dlg->remote.contact->uri) uri = dlg->remote.contact->uri;
    else if (dlg->target) uri = dlg->target;
    else uri = dlg->remote.info->uri;
    printed = pjsip_uri_print(PJSIP_URI_IN_REQ_URI, pjsip_uri_get_uri(uri), buf, size);
    if (printed < 0) { pjsip_dlg_dec_lock(dlg); return PJ_ETOOSMALL; }
    lengths[0] = printed;
    used = (pj_size_t)printed;
    parts[0] = &dlg->call_id->id;
    parts[1] = &dlg->local.info->tag;
    parts[2] = &dlg->remote.info->tag;
    for (i = 0; i < 3; ++i) {
        if ((pj_size_t)parts[i]->slen > size - used) { pjsip_dlg_dec_lock(dlg); return PJ_ETOOSMALL; }
        pj_memcpy(buf + used, parts[i]->ptr, parts[i]->slen);
        lengths[i + 1] = (int)parts[i]->slen;
        used += (pj_size_t)parts[i]->slen;
    }
    pjsip_dlg_dec_lock(dlg);
    return PJ_SUCCESS;
}

/* ==== RFC checks: requests pjsip accepts or drops that RFC 3261 and RFC 4566 want
 * answered. One module, registered after pjsua_init by cpj_register_rfc_checks, at a
 * priority after the transaction layer (a retransmission of a transaction in progress is
 * absorbed there and never reaches it) and before the UA layer (dialogs) and pjsua's
 * modules. In the order RFC 3261 §8.2 and §18.3 give them:
 *   513 a UDP request that filled pjsip's receive buffer (sizeof pkt_info.packet, i.e.
 *       PJSIP_MAX_PKT_LEN of the pjproject being built against) and is not complete
 *       there: the kernel cut the datagram, the rest would be parsed as if whole;
 *   400 a UDP request whose Content-Length is larger than the body that arrived (§18.3);
 *   416 a Request-URI scheme other than sip, sips or tel (§8.2.2.1);
 *   482 a request without a To tag whose From tag, Call-ID and CSeq match a server
 *       transaction still in progress that it does not belong to (§8.2.2.2);
 *   420 with Unsupported (and Supported, as pjsip's INVITE check sends) for Require
 *       option tags the endpoint does not list in Supported, on requests other than
 *       INVITE, ACK and CANCEL (§8.2.2.3; pjsip_inv_verify_request does INVITEs);
 *   488 an INVITE whose SDP has a NUL byte or a media port above 65535 (RFC 4566 §5.14;
 *       pjmedia 2.12 truncates the port to 16 bits, 2.17's parser fails and pjsip 400s).
 * Methods the endpoint does not Allow are left alone (405 comes first, §8.2.1); ACK is
 * never answered. A TCP or TLS message too large for the buffer never reaches a module:
 * the transport manager drops it and reports it to the drop-data callback, which answers
 * 513 on the connection from the header lines that did arrive and shuts it down. ==== */

#include <pthread.h>

/* A response to rdata, in a server transaction (retransmitted over UDP, ACK absorbed),
 * or stateless where a transaction must not be created (482: a second UAS transaction
 * would take the merged one's place in pjsip's own merged-request table). */
static inline void cpj_rfc_respond(pjsip_rx_data *rdata, int code, const pjsip_hdr *headers, pj_bool_t stateful) {
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    if (stateful && pjsip_endpt_respond(endpt, NULL, rdata, code, NULL, headers, NULL, NULL) == PJ_SUCCESS) return;
    pjsip_endpt_respond_stateless(endpt, rdata, code, NULL, headers, NULL);
}

/* The bytes of the message after the blank line that ends its headers, or -1 when the
 * datagram has no blank line (it ends inside the header section). */
static inline pj_ssize_t cpj_rfc_body_received(const char *buffer, pj_ssize_t length) {
    pj_ssize_t i;
    for (i = 0; i + 1 < length; ++i) {
        if (buffer[i] != '\n') continue;
        if (buffer[i + 1] == '\n') return length - (i + 2);
        if (i + 2 < length && buffer[i + 1] == '\r' && buffer[i + 2] == '\n') return length - (i + 3);
    }
    return -1;
}

/* Whether an SDP body has a NUL byte or an m= line whose port is no 16-bit number. */
static inline pj_bool_t cpj_rfc_sdp_is_malformed(const char *sdp, pj_size_t length) {
    pj_size_t i = 0;
    if (memchr(sdp, 0, length) != NULL) return PJ_TRUE;
    while (i < length) {
        pj_size_t line = i;
        while (i < length && sdp[i] != '\n') ++i;
        if (i - line > 2 && sdp[line] == 'm' && sdp[line + 1] == '=') {
            pj_size_t j = line + 2;
            unsigned long port = 0;
            pj_size_t digits = 0;
            while (j < i && sdp[j] != ' ') ++j;
            while (j < i && sdp[j] == ' ') ++j;
            while (j < i && sdp[j] >= '0' && sdp[j] <= '9' && digits < 10) {
                port = port * 10 + (unsigned long)(sdp[j] - '0');
                ++j;
                ++digits;
            }
            if (digits == 0 || port > 65535 || (j < i && sdp[j] >= '0' && sdp[j] <= '9')) return PJ_TRUE;
        }
        ++i;
    }
    return PJ_FALSE;
}

/* Merged-request table: a slot per (From tag, Call-ID, CSeq) hash holding the key of the
 * server transaction of the last request seen with it. pjsip 2.12.1 has no merged-request
 * check; 2.17's pjsua has one (pjsip_tsx_detect_merged_requests) for the requests that
 * reach mod-pjsua, which gives the same 482. A collision only forgets a request, it never
 * joins two. */
enum { CPJ_RFC_MERGED_SLOTS = 256, CPJ_RFC_KEY_MAX = 320 };
typedef struct {
    char merge_key[CPJ_RFC_KEY_MAX];
    pj_ssize_t merge_key_length;
    char tsx_key[CPJ_RFC_KEY_MAX];
    pj_ssize_t tsx_key_length;
} cpj_rfc_merged_slot;

static inline cpj_rfc_merged_slot *cpj_rfc_merged_slots(void) {
    static cpj_rfc_merged_slot slots[CPJ_RFC_MERGED_SLOTS];
    return slots;
}
static inline pthread_mutex_t *cpj_rfc_merged_lock(void) {
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    return &lock;
}

/* Whether rdata (no To tag) is a merged request; records it otherwise. */
static inline pj_bool_t cpj_rfc_is_merged(pjsip_rx_data *rdata) {
    pjsip_msg *msg = rdata->msg_info.msg;
    char merge_key[CPJ_RFC_KEY_MAX];
    char earlier[CPJ_RFC_KEY_MAX];
    pj_str_t tsx_key, found = {earlier, 0};
    int length;
    unsigned slot;
    cpj_rfc_merged_slot *entry;
    /* The CSeq method is part of the key: a CANCEL or a PRACK with the INVITE's CSeq
     * number belongs to another transaction. */
    length = pj_ansi_snprintf(merge_key, sizeof(merge_key), "%.*s$%u$%.*s$%.*s",
                              (int)rdata->msg_info.cseq->method.name.slen, rdata->msg_info.cseq->method.name.ptr,
                              (unsigned)rdata->msg_info.cseq->cseq, (int)rdata->msg_info.from->tag.slen,
                              rdata->msg_info.from->tag.ptr, (int)rdata->msg_info.cid->id.slen,
                              rdata->msg_info.cid->id.ptr);
    if (length <= 0 || length >= (int)sizeof(merge_key)) return PJ_FALSE;
    if (pjsip_tsx_create_key(rdata->tp_info.pool, &tsx_key, PJSIP_ROLE_UAS, &msg->line.req.method, rdata) != PJ_SUCCESS ||
        tsx_key.slen >= CPJ_RFC_KEY_MAX)
        return PJ_FALSE;
    slot = pj_hash_calc(0, merge_key, (unsigned)length) % CPJ_RFC_MERGED_SLOTS;
    pthread_mutex_lock(cpj_rfc_merged_lock());
    entry = &cpj_rfc_merged_slots()[slot];
    if (entry->merge_key_length == length && memcmp(entry->merge_key, merge_key, (size_t)length) == 0 &&
        !(entry->tsx_key_length == tsx_key.slen && memcmp(entry->tsx_key, tsx_key.ptr, (size_t)tsx_key.slen) == 0)) {
        memcpy(earlier, entry->tsx_key, (size_t)entry->tsx_key_length);
        found.slen = entry->tsx_key_length;
    }
    pthread_mutex_unlock(cpj_rfc_merged_lock());
    /* In progress: the earlier request's server transaction still exists. */
    if (found.slen > 0 && pjsip_tsx_layer_find_tsx(&found, PJ_FALSE) != NULL) return PJ_TRUE;
    pthread_mutex_lock(cpj_rfc_merged_lock());
    memcpy(entry->merge_key, merge_key, (size_t)length);
    entry->merge_key_length = length;
    memcpy(entry->tsx_key, tsx_key.ptr, (size_t)tsx_key.slen);
    entry->tsx_key_length = tsx_key.slen;
    pthread_mutex_unlock(cpj_rfc_merged_lock());
    return PJ_FALSE;
}

static inline pj_bool_t cpj_rfc_on_rx_request(pjsip_rx_data *rdata) {
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pjsip_msg *msg = rdata->msg_info.msg;
    const pjsip_method *method = &msg->line.req.method;
    pj_bool_t is_ack = method->id == PJSIP_ACK_METHOD;
    pjsip_hdr headers;
    pj_list_init(&headers);

    /* RFC 3261 §18.3: over UDP the datagram is the message; its Content-Length must fit. */
    if (rdata->tp_info.transport->flag & PJSIP_TRANSPORT_DATAGRAM) {
        pj_ssize_t body = cpj_rfc_body_received(rdata->msg_info.msg_buf, rdata->msg_info.len);
        long declared = rdata->msg_info.clen ? (long)rdata->msg_info.clen->len : -1;
        pj_bool_t filled = rdata->pkt_info.len >= (pj_ssize_t)sizeof(rdata->pkt_info.packet);
        /* A full buffer is a cut datagram unless the message provably ends there (a
         * datagram of exactly the buffer's size): headers closed, Content-Length met. */
        if (filled && !(body >= 0 && declared >= 0 && (long)body == declared)) {
            if (!is_ack) cpj_rfc_respond(rdata, PJSIP_SC_MESSAGE_TOO_LARGE, NULL, PJ_FALSE);
            return PJ_TRUE;
        }
        if (declared > 0 && (body < 0 || (long)body < declared)) {
            if (!is_ack) cpj_rfc_respond(rdata, PJSIP_SC_BAD_REQUEST, NULL, PJ_TRUE);
            return PJ_TRUE;
        }
    }
    if (is_ack) return PJ_FALSE;
    /* §8.2.1 first: a method nothing here allows gets its 405 from later modules. */
    if (method->id != PJSIP_INVITE_METHOD && method->id != PJSIP_CANCEL_METHOD &&
        !pjsip_endpt_has_capability(endpt, PJSIP_H_ALLOW, NULL, &method->name))
        return PJ_FALSE;

    /* §8.2.2.1: a scheme we cannot route on: the stand-in the drop-data callback put in
     * place of one (marked by the NUL before it), or any other "other" URI. */
    {
        const pj_str_t *scheme = pjsip_uri_get_scheme(msg->line.req.uri);
        pj_bool_t stand_in = rdata->msg_info.msg_buf > rdata->pkt_info.packet && rdata->msg_info.msg_buf[-1] == '\0' &&
                             PJSIP_URI_SCHEME_IS_SIP(msg->line.req.uri) &&
                             pj_stricmp2(&((pjsip_sip_uri *)pjsip_uri_get_uri(msg->line.req.uri))->host, "x") == 0;
        if (stand_in || !scheme ||
            (pj_stricmp2(scheme, "sip") != 0 && pj_stricmp2(scheme, "sips") != 0 && pj_stricmp2(scheme, "tel") != 0)) {
            cpj_rfc_respond(rdata, PJSIP_SC_UNSUPPORTED_URI_SCHEME, NULL, PJ_TRUE);
            return PJ_TRUE;
        }
    }

    /* §8.2.2.2 */
    if (rdata->msg_info.to->tag.slen == 0 && cpj_rfc_is_merged(rdata)) {
        cpj_rfc_respond(rdata, PJSIP_SC_LOOP_DETECTED, NULL, PJ_FALSE);
        return PJ_TRUE;
    }

    /* §8.2.2.3, for what pjsip_inv_verify_request does not see. */
    if (method->id != PJSIP_INVITE_METHOD && method->id != PJSIP_CANCEL_METHOD) {
        pjsip_unsupported_hdr *unsupported = NULL;
        const pjsip_require_hdr *require = (const pjsip_require_hdr *)pjsip_msg_find_hdr(msg, PJSIP_H_REQUIRE, NULL);
        while (require) {
            unsigned i;
            for (i = 0; i < require->count; ++i) {
                if (pjsip_endpt_has_capability(endpt, PJSIP_H_SUPPORTED, NULL, &require->values[i])) continue;
                if (!unsupported) unsupported = pjsip_unsupported_hdr_create(rdata->tp_info.pool);
                if (unsupported->count < PJSIP_GENERIC_ARRAY_MAX_COUNT)
                    unsupported->values[unsupported->count++] = require->values[i];
            }
            require = (const pjsip_require_hdr *)pjsip_msg_find_hdr(msg, PJSIP_H_REQUIRE, require->next);
        }
        if (unsupported) {
            const pjsip_hdr *supported = pjsip_endpt_get_capability(endpt, PJSIP_H_SUPPORTED, NULL);
            pj_list_push_back(&headers, unsupported);
            if (supported) pj_list_push_back(&headers, pjsip_hdr_clone(rdata->tp_info.pool, supported));
            cpj_rfc_respond(rdata, PJSIP_SC_BAD_EXTENSION, &headers, PJ_TRUE);
            return PJ_TRUE;
        }
    }

    /* RFC 4566 and RFC 3264 §6: an offer we cannot read as sent is not acceptable. */
    if (method->id == PJSIP_INVITE_METHOD && msg->body && msg->body->data &&
        pj_stricmp2(&msg->body->content_type.type, "application") == 0 &&
        pj_stricmp2(&msg->body->content_type.subtype, "sdp") == 0 &&
        cpj_rfc_sdp_is_malformed((const char *)msg->body->data, msg->body->len)) {
        pj_str_t text = pj_str((char *)"Malformed SDP: a NUL byte or a port above 65535");
        pjsip_warning_hdr *warning = pjsip_warning_hdr_create(rdata->tp_info.pool, 399, pjsip_endpt_name(endpt), &text);
        if (warning) pj_list_push_back(&headers, warning);
        cpj_rfc_respond(rdata, PJSIP_SC_NOT_ACCEPTABLE_HERE, &headers, PJ_TRUE);
        return PJ_TRUE;
    }
    return PJ_FALSE;
}

/* The header lines of a stream message too large for the buffer: everything up to the
 * blank line, or up to the last complete line when the headers alone overflowed. */
static inline void cpj_rfc_answer_overflow(pjsip_transport *transport, const char *data, pj_size_t length) {
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pj_pool_t *pool;
    pj_size_t head = 0, i;
    char *text;
    pjsip_msg *request, *response;
    pjsip_tx_data *tdata = NULL;
    pjsip_response_addr address;
    const pjsip_hdr *hdr;
    const pjsip_hdr *required[4];
    unsigned k;
    for (i = 0; i < length; ++i) {
        if (data[i] != '\n') continue;
        head = i + 1;
        if (i + 1 < length && data[i + 1] == '\n') break;
        if (i + 2 < length && data[i + 1] == '\r' && data[i + 2] == '\n') break;
    }
    if (head == 0) return;
    pool = pjsip_endpt_create_pool(endpt, "rfc513", head + 2048, 1024);
    if (!pool) return;
    text = (char *)pj_pool_alloc(pool, head + 3);
    pj_memcpy(text, data, head);
    text[head] = '\r';
    text[head + 1] = '\n';
    text[head + 2] = '\0';
    request = pjsip_parse_msg(pool, text, head + 2, NULL);
    if (!request || request->type != PJSIP_REQUEST_MSG || request->line.req.method.id == PJSIP_ACK_METHOD ||
        !pjsip_msg_find_hdr(request, PJSIP_H_VIA, NULL)) {
        pj_pool_release(pool);
        return;
    }
    required[0] = pjsip_msg_find_hdr(request, PJSIP_H_FROM, NULL);
    required[1] = pjsip_msg_find_hdr(request, PJSIP_H_TO, NULL);
    required[2] = pjsip_msg_find_hdr(request, PJSIP_H_CALL_ID, NULL);
    required[3] = pjsip_msg_find_hdr(request, PJSIP_H_CSEQ, NULL);
    for (k = 0; k < 4; ++k) {
        if (!required[k]) {
            pj_pool_release(pool);
            return;
        }
    }
    if (pjsip_endpt_create_tdata(endpt, &tdata) != PJ_SUCCESS) {
        pj_pool_release(pool);
        return;
    }
    pjsip_tx_data_add_ref(tdata);
    response = pjsip_msg_create(tdata->pool, PJSIP_RESPONSE_MSG);
    response->line.status.code = PJSIP_SC_MESSAGE_TOO_LARGE;
    response->line.status.reason = *pjsip_get_status_text(PJSIP_SC_MESSAGE_TOO_LARGE);
    tdata->msg = response;
    for (hdr = pjsip_msg_find_hdr(request, PJSIP_H_VIA, NULL); hdr;
         hdr = pjsip_msg_find_hdr(request, PJSIP_H_VIA, hdr->next))
        pjsip_msg_add_hdr(response, (pjsip_hdr *)pjsip_hdr_clone(tdata->pool, hdr));
    for (k = 0; k < 4; ++k) pjsip_msg_add_hdr(response, (pjsip_hdr *)pjsip_hdr_clone(tdata->pool, required[k]));
    pj_pool_release(pool);
    pj_bzero(&address, sizeof(address));
    address.transport = transport;
    pj_memcpy(&address.addr, &transport->key.rem_addr, sizeof(address.addr));
    address.addr_len = transport->addr_len;
    if (pjsip_endpt_send_response(endpt, &address, tdata, NULL, NULL) != PJ_SUCCESS) pjsip_tx_data_dec_ref(tdata);
}

/* The Request-URI a request with an unknown scheme is re-read with, after a NUL marker. */
#define CPJ_RFC_SCHEME_STAND_IN "sip:x"

static inline pj_bool_t cpj_rfc_is_header(const char *line, pj_size_t length, const char *name) {
    pj_size_t n = strlen(name), i = n;
    if (length < n || pj_ansi_strnicmp(line, name, n) != 0) return PJ_FALSE;
    while (i < length && (line[i] == ' ' || line[i] == '\t')) ++i;
    return i < length && line[i] == ':';
}

/* pjsip parses a Request-URI of an unknown scheme as an "other" URI but leaves the space
 * after it unread, so the SIP-Version fails and the whole request is dropped as a syntax
 * error before any module sees it. The drop-data callback may hand data back to be read
 * again from an offset (pjsip_tp_dropped_data.len): this rewrites the request in place,
 * one byte on, with CPJ_RFC_SCHEME_STAND_IN as its Request-URI, without Content-Type and
 * with the rest framed as an ignored body, so the RFC-check module gets it (with the
 * source address and transport pjsip recorded) and answers 416. Returns whether it did. */
static inline pj_bool_t cpj_rfc_reframe_unknown_scheme(pjsip_tp_dropped_data *dropped) {
    char *data = (char *)dropped->data;
    pj_size_t length = dropped->len, i = 0, method_end, uri_start, uri_end, colon = 0, line_end, head_end, at;
    pj_size_t used = 0, pad, digits;
    int pass;
    char *copy;
    const char *version = " SIP/2.0";
    pj_bool_t skipping = PJ_FALSE;
    while (i < length && data[i] != ' ' && data[i] != '\r' && data[i] != '\n') ++i;
    method_end = i;
    if (method_end == 0 || i >= length || data[i] != ' ') return PJ_FALSE;
    uri_start = ++i;
    while (i < length && data[i] != ' ' && data[i] != '\r' && data[i] != '\n') {
        if (data[i] == ':' && colon == 0) colon = i;
        ++i;
    }
    uri_end = i;
    if (colon == 0 || colon == uri_start || !pj_isalpha(data[uri_start])) return PJ_FALSE;
    for (at = uri_start; at < colon; ++at)
        if (!pj_isalnum(data[at]) && data[at] != '+' && data[at] != '-' && data[at] != '.') return PJ_FALSE;
    if ((colon - uri_start == 3 && pj_ansi_strnicmp(data + uri_start, "sip", 3) == 0) ||
        (colon - uri_start == 4 && pj_ansi_strnicmp(data + uri_start, "sips", 4) == 0) ||
        (colon - uri_start == 3 && pj_ansi_strnicmp(data + uri_start, "tel", 3) == 0))
        return PJ_FALSE;
    if (length - uri_end < 8 || pj_ansi_strnicmp(data + uri_end, version, 8) != 0) return PJ_FALSE;
    line_end = uri_end + 8;
    if (line_end < length && data[line_end] == '\r') ++line_end;
    if (line_end >= length || data[line_end] != '\n') return PJ_FALSE;
    ++line_end;
    /* The header lines: up to the blank line, or everything when there is none. */
    for (head_end = line_end; head_end < length; ) {
        pj_size_t next = head_end;
        while (next < length && data[next] != '\n') ++next;
        if (next - head_end == 0 || (next - head_end == 1 && data[head_end] == '\r')) break;
        head_end = next < length ? next + 1 : next;
    }
    copy = (char *)malloc(length);
    if (!copy) return PJ_FALSE;
    /* Start line, then every header but the body's (on a second pass, when that does not
     * fit, only those a response copies), then Content-Length over the rest. */
    for (pass = 0; pass < 2; ++pass) {
        used = method_end;
        pj_memcpy(copy, data, method_end);
        pj_memcpy(copy + used, " " CPJ_RFC_SCHEME_STAND_IN " SIP/2.0\r\n", strlen(CPJ_RFC_SCHEME_STAND_IN) + 11);
        used += strlen(CPJ_RFC_SCHEME_STAND_IN) + 11;
        skipping = PJ_FALSE;
        for (at = line_end; at < head_end; ) {
            pj_size_t next = at, size;
            while (next < head_end && data[next] != '\n') ++next;
            size = (next < head_end ? next + 1 : next) - at;
            if (data[at] != ' ' && data[at] != '\t') {
                const char *line = data + at;
                skipping = cpj_rfc_is_header(line, size, "Content-Length") || cpj_rfc_is_header(line, size, "l") ||
                           cpj_rfc_is_header(line, size, "Content-Type") || cpj_rfc_is_header(line, size, "c");
                if (pass == 1 && !skipping)
                    skipping = !(cpj_rfc_is_header(line, size, "Via") || cpj_rfc_is_header(line, size, "v") ||
                                 cpj_rfc_is_header(line, size, "From") || cpj_rfc_is_header(line, size, "f") ||
                                 cpj_rfc_is_header(line, size, "To") || cpj_rfc_is_header(line, size, "t") ||
                                 cpj_rfc_is_header(line, size, "Call-ID") || cpj_rfc_is_header(line, size, "i") ||
                                 cpj_rfc_is_header(line, size, "CSeq"));
            }
            if (!skipping) {
                if (used + size + 2 > length) break;
                pj_memcpy(copy + used, data + at, size);
                used += size;
                if (data[at + size - 1] != '\n') {
                    copy[used++] = '\r';
                    copy[used++] = '\n';
                }
            }
            at += size;
        }
        /* The rewrite fills the original less its first byte exactly: the headers so far,
         * "Content-Length: N" CRLF CRLF, then N spaces, N having `digits` digits. */
        for (digits = 1; digits < 12; ++digits) {
            pj_size_t fixed = used + 20 + digits, count = 1, p;
            if (fixed > length - 1) break;
            pad = length - 1 - fixed;
            for (p = pad; p >= 10; p /= 10) ++count;
            if (count != digits) continue;
            used += (pj_size_t)pj_ansi_snprintf(copy + used, length - used, "Content-Length: %lu\r\n\r\n",
                                                (unsigned long)pad);
            pj_memset(copy + used, ' ', pad);
            pj_memcpy(data + 1, copy, used + pad);
            data[0] = '\0';
            free(copy);
            dropped->len = 1;
            return PJ_TRUE;
        }
    }
    free(copy);
    return PJ_FALSE;
}

static inline void cpj_rfc_on_rx_dropped(pjsip_tp_dropped_data *dropped) {
    if (!dropped || !dropped->tp || !dropped->data) return;
    if (dropped->status == PJSIP_EINVALIDMSG) {
        (void)cpj_rfc_reframe_unknown_scheme(dropped);
        return;
    }
    if (dropped->status != PJSIP_ERXOVERFLOW || (dropped->tp->flag & PJSIP_TRANSPORT_DATAGRAM)) return;
    cpj_rfc_answer_overflow(dropped->tp, (const char *)dropped->data, dropped->len);
    /* The rest of the stream cannot be framed: pjsip shuts a connection down itself only
     * when this was its first message, and would read the remainder as new messages. */
    pjsip_transport_shutdown(dropped->tp);
}

/* Registers the RFC-check module and the drop-data callback with the endpoint pjsua_init
 * just created; call once per pjsua_init (pjsip_endpt_destroy unregisters the module). */
static inline pj_status_t cpj_register_rfc_checks(void) {
    static pjsip_module module;
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pj_str_t name = pj_str((char *)"mod-swiftpjsua-rfc-checks");
    pj_status_t status;
    if (!endpt) return PJ_EINVALIDOP;
    pthread_mutex_lock(cpj_rfc_merged_lock());
    pj_bzero(cpj_rfc_merged_slots(), sizeof(cpj_rfc_merged_slot) * CPJ_RFC_MERGED_SLOTS);
    pthread_mutex_unlock(cpj_rfc_merged_lock());
    pj_bzero(&module, sizeof(module));
    module.name = name;
    module.id = -1;
    module.priority = PJSIP_MOD_PRIORITY_UA_PROXY_LAYER - 1;
    module.on_rx_request = &cpj_rfc_on_rx_request;
    status = pjsip_endpt_register_module(endpt, &module);
    if (status != PJ_SUCCESS) return status;
    return pjsip_tpmgr_set_drop_data_cb(pjsip_endpt_get_tpmgr(endpt), &cpj_rfc_on_rx_dropped);
}
/* ==== End of RFC checks. ==== */

/* ==== RFC 8599 push parameters on the REGISTER Contact only. ====
 * pjsua's own route for this, pjsua_acc_config.reg_contact_uri_params, re-parses a copy of
 * the Contact (update_regc_contact, pjsua_acc.c) with pjsip_parse_hdr over pool memory that
 * is not NUL-terminated: the scanner reads the byte past the end, and when leftover memory
 * holds ';' or ',' there the parse fails and pjsua asserts (seen on 2.12.1; 2.17 has the
 * same code). Instead the account carries the parameters in a private REGISTER header
 * (reg_hdr_list); this module, before the transport layer prints the request, takes that
 * header out and adds its parameters to the Contact URI, parsed by pjsip from a
 * NUL-terminated copy. The header never reaches the wire. Digest retries are made from the
 * already rewritten request, so they carry the parameters too. */

#define CPJ_PUSH_PARAMS_HEADER "X-SwiftPJSUA-Contact-URI-Params"

static inline pj_status_t cpj_push_on_tx_request(pjsip_tx_data *tdata) {
    pj_str_t name = pj_str((char *)CPJ_PUSH_PARAMS_HEADER);
    pjsip_generic_string_hdr *marker;
    pjsip_contact_hdr *contact;
    pjsip_sip_uri *target;
    pjsip_sip_uri *carrier;
    pjsip_param *param;
    char *text;
    const char *prefix = "sip:x@x";
    pj_size_t prefix_len = 7;
    if (tdata->msg->type != PJSIP_REQUEST_MSG || tdata->msg->line.req.method.id != PJSIP_REGISTER_METHOD) return PJ_SUCCESS;
    marker = (pjsip_generic_string_hdr *)pjsip_msg_find_hdr_by_name(tdata->msg, &name, NULL);
    if (!marker) return PJ_SUCCESS;
    pj_list_erase(marker);
    pjsip_tx_data_invalidate_msg(tdata);
    contact = (pjsip_contact_hdr *)pjsip_msg_find_hdr(tdata->msg, PJSIP_H_CONTACT, NULL);
    if (!contact || contact->star || !contact->uri) return PJ_SUCCESS;
    if (!PJSIP_URI_SCHEME_IS_SIP(contact->uri) && !PJSIP_URI_SCHEME_IS_SIPS(contact->uri)) return PJ_SUCCESS;
    target = (pjsip_sip_uri *)pjsip_uri_get_uri(contact->uri);
    /* "sip:x@x;pn-provider=…;…", NUL-terminated, parsed by pjsip into its parameter list. */
    text = (char *)pj_pool_alloc(tdata->pool, prefix_len + marker->hvalue.slen + 1);
    pj_memcpy(text, prefix, prefix_len);
    pj_memcpy(text + prefix_len, marker->hvalue.ptr, marker->hvalue.slen);
    text[prefix_len + marker->hvalue.slen] = '\0';
    carrier = (pjsip_sip_uri *)pjsip_parse_uri(tdata->pool, text, prefix_len + marker->hvalue.slen, 0);
    if (!carrier || !PJSIP_URI_SCHEME_IS_SIP(carrier)) return PJ_SUCCESS;
    carrier = (pjsip_sip_uri *)pjsip_uri_get_uri(carrier);
    /* A refresh reuses pjsua's Contact, which does not have them yet; never add twice. */
    param = carrier->other_param.next;
    while (param != &carrier->other_param) {
        pjsip_param *next = param->next;
        pj_list_erase(param);
        if (!pjsip_param_find(&target->other_param, &param->name)) pj_list_push_back(&target->other_param, param);
        param = next;
    }
    return PJ_SUCCESS;
}

/* Registers the module with the endpoint pjsua_init just created; call once per pjsua_init. */
static inline pj_status_t cpj_register_push_contact_module(void) {
    static pjsip_module module;
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pj_str_t name = pj_str((char *)"mod-swiftpjsua-push-contact");
    if (!endpt) return PJ_EINVALIDOP;
    pj_bzero(&module, sizeof(module));
    module.name = name;
    module.id = -1;
    /* Requests pass modules from the highest priority number down: this one runs before
     * the transaction layer sends (and the transport layer prints) the REGISTER. */
    module.priority = PJSIP_MOD_PRIORITY_APPLICATION;
    module.on_tx_request = &cpj_push_on_tx_request;
    return pjsip_endpt_register_module(endpt, &module);
}

static inline pj_str_t cpj_push_params_header_name(void) { return pj_str((char *)CPJ_PUSH_PARAMS_HEADER); }
/* ==== End of push parameters. ==== */

/* ==== REGISTER responses with pjsip's "not specified" Expires. ====
 * A 2xx to REGISTER whose Expires header is 4294967295 (a valid delta-seconds value, RFC 3261
 * §20.19) is pjsip's own PJSIP_EXPIRES_NOT_SPECIFIED sentinel: sip_reg.c then asserts
 * (expiration != NOEXP), so any registrar, or anyone who can spoof its answers, could abort
 * the process. This module, ahead of the transaction layer, lowers such a value by one
 * second. (A Contact's expires is not affected: sip_reg.c reads the sentinel there as
 * "absent".) */
static inline pj_bool_t cpj_expires_on_rx_response(pjsip_rx_data *rdata) {
    pjsip_msg *msg = rdata->msg_info.msg;
    pjsip_hdr *hdr;
    if (!msg || !rdata->msg_info.cseq || rdata->msg_info.cseq->method.id != PJSIP_REGISTER_METHOD) return PJ_FALSE;
    for (hdr = msg->hdr.next; hdr != &msg->hdr; hdr = hdr->next) {
        if (hdr->type == PJSIP_H_EXPIRES) {
            pjsip_expires_hdr *expires = (pjsip_expires_hdr *)hdr;
            if ((pj_uint32_t)expires->ivalue == (pj_uint32_t)PJSIP_EXPIRES_NOT_SPECIFIED) {
                expires->ivalue = (pj_uint32_t)PJSIP_EXPIRES_NOT_SPECIFIED - 1;
            }
        }
    }
    return PJ_FALSE;
}

/* Registers the module above; call once per pjsua_init. */
static inline pj_status_t cpj_register_expires_guard(void) {
    static pjsip_module module;
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pj_str_t name = pj_str((char *)"mod-swiftpjsua-expires-guard");
    if (!endpt) return PJ_EINVALIDOP;
    pj_bzero(&module, sizeof(module));
    module.name = name;
    module.id = -1;
    module.priority = PJSIP_MOD_PRIORITY_TSX_LAYER - 1;
    module.on_rx_response = &cpj_expires_on_rx_response;
    return pjsip_endpt_register_module(endpt, &module);
}

/* Whether pjsip's parser accepts `value` for a header named `name` (a known header's syntax:
 * Expires, Max-Forwards, Replaces, Require…; any text for an unknown one). An app header
 * pjsip cannot parse would make the far end's pjsip drop the whole request unanswered. The
 * copy is NUL-terminated, as pjsip's scanner needs. PJ_TRUE when pjsua is not created. */
static inline pj_bool_t cpj_header_parses(const char *name, pj_size_t name_len, const char *value, pj_size_t value_len) {
    pj_pool_t *pool;
    char *copy;
    pj_str_t hname;
    void *parsed;
    if (pjsua_get_state() == PJSUA_STATE_NULL) return PJ_TRUE;
    pool = pjsua_pool_create("hdr-check", value_len + name_len + 512, 512);
    if (!pool) return PJ_TRUE;
    copy = (char *)pj_pool_alloc(pool, name_len + value_len + 2);
    pj_memcpy(copy, name, name_len);
    copy[name_len] = '\0';
    hname = pj_str(copy);
    pj_memcpy(copy + name_len + 1, value, value_len);
    copy[name_len + 1 + value_len] = '\0';
    parsed = pjsip_parse_hdr(pool, &hname, copy + name_len + 1, value_len, NULL);
    pj_pool_release(pool);
    return parsed != NULL ? PJ_TRUE : PJ_FALSE;
}

/* PJSIP_EBUSY: pjsua_acc_set_registration while the account's REGISTER is in flight. */
static inline pj_status_t cpj_status_pjsip_ebusy(void) { return PJSIP_EBUSY; }
/* ==== End of the Expires guard. ==== */

/* ==== Offer/answer edge cases (issue 15): 488 for an unacceptable re-INVITE offer, a repeated
 * early answer, an ACK without the answer to our offer. ==== */

/* pjsip answers a re-INVITE whose offer it cannot negotiate (no codec in common) with
 * 500 "SDP negotiation failed": pjsua builds an answer and the negotiation fails after it.
 * RFC 3261 §14.2 asks 488 for an offer that is not acceptable. Rewrites that response on its
 * way out, before the transport layer prints it (the transaction retransmits the same
 * buffer); pjsip uses that reason text for this failure only. */
static inline pj_status_t cpj_offer_on_tx_response(pjsip_tx_data *tdata) {
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
static inline pj_bool_t cpj_same_sdp_origin(const pjmedia_sdp_session *a, const pjmedia_sdp_session *b) {
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
static inline pj_bool_t cpj_offer_on_rx_response(pjsip_rx_data *rdata) {
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
static inline pj_status_t cpj_register_offer_answer_module(void) {
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
static inline int cpj_call_confirmed_without_answer(pjsua_call_id call_id) {
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
static inline pj_status_t cpj_call_hangup_no_answer(pjsua_call_id call_id) {
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
static inline int cpj_tsx_is_initial_invite(pjsip_transaction *tsx) {
    pjsip_dialog *dlg;
    if (!tsx || tsx->method.id != PJSIP_INVITE_METHOD || tsx->role != PJSIP_ROLE_UAC) return 0;
    dlg = pjsip_tsx_get_dlg(tsx);
    return dlg && dlg->role == PJSIP_ROLE_UAC && tsx->cseq == dlg->local.first_cseq;
}
/* ==== End of offer/answer edge cases. ==== */

/* ==== DNS: nameservers with ports, resolver timing, SRV failover (RFC 3263 §4.3). ====
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
 * callback does not say. */
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
    pjsip_module module;            /* first member: found by name from any copy of this header */
    pthread_mutex_t lock;           /* guards everything below */
    pjsip_resolver_t *inner;        /* pjsip's own resolution logic */
    pjsip_ext_resolver ext;
    unsigned hold_down_msec;
    struct { pj_sockaddr addr; pj_uint64_t until; int used; } marked[CPJ_DNS_MAX_MARKED];
    cpj_dns_sent sent[CPJ_DNS_MAX_SENT];
    unsigned next_sent;
} cpj_dns_state;

/* The state of this run of pjsua, or NULL when no nameserver was configured. Like every
 * static here, each object file that calls it has its own copy: call the functions of this
 * block from one Swift file only (Interop/Native+DNS.swift); the resolver and module
 * callbacks run in that file's copy. */
static inline cpj_dns_state **cpj_dns_slot(void) {
    static cpj_dns_state *current;
    return &current;
}
static inline cpj_dns_state *cpj_dns_current(void) { return __atomic_load_n(cpj_dns_slot(), __ATOMIC_ACQUIRE); }

static inline pj_uint64_t cpj_dns_now_msec(void) {
    pj_time_val now;
    pj_gettickcount(&now);
    return (pj_uint64_t)now.sec * 1000 + (pj_uint64_t)now.msec;
}

/* Whether addr is marked unresponsive now; call with the lock held. */
static inline int cpj_dns_is_marked_locked(cpj_dns_state *st, const pj_sockaddr *addr, pj_uint64_t now) {
    unsigned i;
    for (i = 0; i < CPJ_DNS_MAX_MARKED; ++i) {
        if (st->marked[i].used && st->marked[i].until > now && pj_sockaddr_cmp(&st->marked[i].addr, addr) == 0) return 1;
    }
    return 0;
}

typedef struct cpj_dns_job { void *token; pjsip_resolver_callback *cb; } cpj_dns_job;

/* pjsip's answer, with the targets marked unresponsive moved behind the others (their
 * order kept); then on to whoever asked. */
static inline void cpj_dns_resolved(pj_status_t status, void *token, const struct pjsip_server_addresses *addr) {
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
static inline void cpj_dns_resolve(pjsip_resolver_t *resolver, pj_pool_t *pool, const pjsip_host_info *target,
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

static inline void cpj_dns_copy_lower(char *out, pj_size_t size, const pj_str_t *text) {
    pj_size_t i, n = (pj_size_t)text->slen < size - 1 ? (pj_size_t)text->slen : size - 1;
    for (i = 0; i < n; ++i) out[i] = (char)pj_tolower(text->ptr[i]);
    out[n] = '\0';
}

/* Records where each REGISTER went, and the targets its resolution gave, by the AOR in its
 * To (the latest REGISTER of an account replaces its earlier record). */
static inline pj_status_t cpj_dns_on_tx_request(pjsip_tx_data *tdata) {
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
        if (st->sent[slot].used && strcmp(st->sent[slot].user, user) == 0 && strcmp(st->sent[slot].domain, domain) == 0) break;
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
 * nameserver that did not answer is left alone, the hold-down of unresponsive targets, and installs the resolver and module above. Call
 * once after pjsua_init, which created the DNS resolver from pjsua_config.nameserver. */
static inline pj_status_t cpj_dns_setup(const pj_str_t *servers, const pj_uint16_t *ports, unsigned count,
                                        unsigned retransmit_msec, unsigned retransmissions, unsigned bad_ns_sec,
                                        unsigned hold_down_msec) {
    static cpj_dns_state state = { .lock = PTHREAD_MUTEX_INITIALIZER };
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
    pthread_mutex_lock(&state.lock);
    pj_bzero(&state.marked, sizeof(state.marked));
    pj_bzero(&state.sent, sizeof(state.sent));
    state.next_sent = 0;
    state.hold_down_msec = hold_down_msec;
    pthread_mutex_unlock(&state.lock);
    status = pjsip_resolver_create(pool, &state.inner);
    if (status != PJ_SUCCESS) return status;
    pjsip_resolver_set_resolver(state.inner, dns);
    pj_bzero(&state.module, sizeof(state.module));
    state.module.name = pj_str((char *)"mod-swiftpjsua-dns-failover");
    state.module.id = -1;
    state.module.priority = PJSIP_MOD_PRIORITY_TRANSPORT_LAYER + 1;
    state.module.on_tx_request = &cpj_dns_on_tx_request;
    status = pjsip_endpt_register_module(endpt, &state.module);
    if (status != PJ_SUCCESS) return status;
    __atomic_store_n(cpj_dns_slot(), &state, __ATOMIC_RELEASE);
    state.ext.resolve = &cpj_dns_resolve;
    /* Detach the DNS resolver first: setting an external resolver destroys the one set. */
    pjsip_endpt_set_resolver(endpt, NULL);
    return pjsip_endpt_set_ext_resolver(endpt, &state.ext);
}

/* Before pjsua_destroy: gives the endpoint its DNS resolver back, so that pjsip destroys
 * it as it would have, and requests sent while pjsua shuts down resolve as usual. */
static inline void cpj_dns_teardown(void) {
    cpj_dns_state *st = cpj_dns_current();
    pjsip_endpoint *endpt = pjsua_get_pjsip_endpt();
    pj_dns_resolver *dns = pjsua_var.resolver;
    if (!st || !endpt) return;
    pjsip_endpt_set_ext_resolver(endpt, NULL);
    if (dns) pjsip_endpt_set_resolver(endpt, dns);
    /* The module stays registered until pjsua_destroy; with no state it does nothing. */
    __atomic_store_n(cpj_dns_slot(), NULL, __ATOMIC_RELEASE);
}

/* After the account's REGISTER timed out (or failed to send) with no response: marks the
 * address it went to unresponsive for the hold-down time. Returns 1 when its resolution
 * had another target not marked, that a new REGISTER would go to; 0 otherwise (no
 * nameserver, an IP or single-target registrar, or every target marked). */
static inline int cpj_dns_mark_register_unanswered(pjsua_acc_id acc_id) {
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
        if (st->sent[slot].used && strcmp(st->sent[slot].user, user) == 0 && strcmp(st->sent[slot].domain, domain) == 0) break;
    }
    if (slot < CPJ_DNS_MAX_SENT) {
        unsigned free_slot = 0;
        pj_uint64_t oldest = (pj_uint64_t)-1;
        for (i = 0; i < CPJ_DNS_MAX_MARKED; ++i) {
            if (st->marked[i].used && pj_sockaddr_cmp(&st->marked[i].addr, &st->sent[slot].dst) == 0) { free_slot = i; break; }
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
static inline unsigned cpj_max_nameservers(void) { return (unsigned)PJ_ARRAY_SIZE(((pjsua_config *)0)->nameserver); }
/* pjsua_config.nameserver is a fixed-size C array: Swift would copy it as a tuple. */
static inline void cpj_config_set_nameserver(pjsua_config *config, unsigned index, pj_str_t server) {
    if (index < PJ_ARRAY_SIZE(config->nameserver)) {
        config->nameserver[index] = server;
        if (config->nameserver_count <= index) config->nameserver_count = index + 1;
    }
}
/* ==== End of DNS. ==== */
/* ==== STUN, ICE and TURN (media NAT traversal). ==== */

/* The most STUN servers pjsua_config holds (the size of its stun_srv array). */
static inline unsigned cpj_max_stun_servers(void) {
    pjsua_config *cfg = NULL;
    return (unsigned)(sizeof(cfg->stun_srv) / sizeof(cfg->stun_srv[0]));
}

/* Appends a STUN server to pjsua_config.stun_srv: Swift sees the fixed array as a tuple. */
static inline void cpj_config_add_stun_server(pjsua_config *cfg, pj_str_t server) {
    if (cfg->stun_srv_cnt < cpj_max_stun_servers()) cfg->stun_srv[cfg->stun_srv_cnt++] = server;
}

/* A call's media transport of stream `med_idx` and, when it is ICE, its ICE state:
 * pjmedia_transport_info_get_spc_info returns an untyped buffer, which Swift cannot cast
 * safely. Sets *has_ice to 1 when the ICE part was found and copied into *ice. */
static inline pj_status_t cpj_call_media_transport(
    pjsua_call_id call_id, unsigned med_idx, pjmedia_transport_info *info,
    pjmedia_ice_transport_info *ice, int *has_ice)
{
    pjmedia_ice_transport_info *found;
    pj_status_t status = pjsua_call_get_med_transport_info(call_id, med_idx, info);
    *has_ice = 0;
    if (status != PJ_SUCCESS) return status;
    found = (pjmedia_ice_transport_info *)pjmedia_transport_info_get_spc_info(info, PJMEDIA_TRANSPORT_TYPE_ICE);
    if (found) {
        *ice = *found;
        *has_ice = 1;
    }
    return PJ_SUCCESS;
}

/* Component `index` of an ICE transport's info: comp[] is an array of an anonymous struct,
 * which Swift does not import. Returns 0 for an index past comp_cnt. */
static inline int cpj_ice_component(
    const pjmedia_ice_transport_info *ice, unsigned index, pj_ice_cand_type *local_type,
    pj_sockaddr *local_addr, pj_ice_cand_type *remote_type, pj_sockaddr *remote_addr)
{
    if (index >= ice->comp_cnt || index >= PJ_ARRAY_SIZE(ice->comp)) return 0;
    *local_type = ice->comp[index].lcand_type;
    *local_addr = ice->comp[index].lcand_addr;
    *remote_type = ice->comp[index].rcand_type;
    *remote_addr = ice->comp[index].rcand_addr;
    return 1;
}

/* pj_sockaddr_print with the port and IPv6 brackets ("203.0.113.5:49152"); empty for an
 * address of no family (a field pjmedia left unset). */
static inline void cpj_sockaddr_text(const pj_sockaddr *addr, char *buf, int len) {
    buf[0] = '\0';
    if (addr->addr.sa_family == pj_AF_INET() || addr->addr.sa_family == pj_AF_INET6()) {
        if (pj_sockaddr_has_addr(addr)) pj_sockaddr_print(addr, buf, len, 1 | 2);
    }
}
/* ==== End of STUN, ICE and TURN. ==== */
/* ==== SRTP (RFC 3711) with SDES (RFC 4568) or DTLS-SRTP (RFC 5763/5764) keying. ==== */

/* Whether the pjmedia linked in has DTLS-SRTP keying: PJMEDIA_SRTP_HAS_DTLS is a build
 * option (0 by default), and without it pjmedia_srtp_enum_keying lists SDES alone. */
static inline pj_bool_t cpj_srtp_has_keying(pjmedia_srtp_keying_method method) {
    pjmedia_srtp_keying_method keying[PJMEDIA_SRTP_KEYINGS_COUNT];
    unsigned count = PJMEDIA_SRTP_KEYINGS_COUNT, i;
    if (pjmedia_srtp_enum_keying(&count, keying) != PJ_SUCCESS) return PJ_FALSE;
    for (i = 0; i < count; ++i)
        if (keying[i] == method) return PJ_TRUE;
    return PJ_FALSE;
}

/* The crypto suites pjmedia knows, by name (index 0 up to the count); NULL past the end.
 * The names are static strings of libsrtp's table. */
static inline unsigned cpj_srtp_crypto_count(void) {
    pjmedia_srtp_crypto crypto[PJMEDIA_SRTP_MAX_CRYPTOS];
    unsigned count = PJMEDIA_SRTP_MAX_CRYPTOS;
    return pjmedia_srtp_enum_crypto(&count, crypto) == PJ_SUCCESS ? count : 0;
}
static inline pj_str_t cpj_srtp_crypto_name(unsigned index) {
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
static inline void cpj_acc_config_set_srtp(pjsua_acc_config *cfg, pjmedia_srtp_use use, int secure_signaling,
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
static inline int cpj_call_srtp_info(pjsua_call_id call_id, unsigned med_idx, pj_bool_t *active,
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
static inline pj_bool_t cpj_sdp_media_or_session_has(const pjmedia_sdp_session *sdp, const pjmedia_sdp_media *m,
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
static inline int cpj_call_srtp_keying(pjsua_call_id call_id, unsigned med_idx) {
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
/* PJSIP_ESESSIONINSECURE: SRTP asked for with secure signalling on an insecure transport. */
static inline pj_status_t cpj_status_esessioninsecure(void) { return PJSIP_ESESSIONINSECURE; }
/* ==== End of SRTP. ==== */

#endif
