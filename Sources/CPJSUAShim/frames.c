/*
 * Audio frame ports: PCM between a call and the app, as Swift values.
 *
 * A conference-bridge port of our own (cpj_frame_port, declared in the header so Swift
 * holds typed pointers). Its callbacks run on pjmedia's clock thread and do nothing but
 * copy between the bridge and two fixed rings allocated up front: frames the bridge hands
 * the port (put_frame, what a call receives) for the app to read, and frames the app queued
 * (get_frame) for the bridge to send into a call. No lock, no allocation, no blocking on
 * the clock thread. Both rings have one producer and one consumer; the receive ring drops
 * its oldest frame when full (the reader fell behind), counted.
 *
 * What the sound device plays, through the same rings: a tap in the null sound device.
 * pjsua's null sound device is a master port that clocks the bridge: each tick it hands
 * slot 0 silence from a null port (the "microphone") and hands the mix the bridge made for
 * slot 0 (what a speaker would play) to that null port, which discards it. A tap
 * (cpj_snd_tap) is a frame port put in the null port's place
 * (pjmedia_master_port_set_uport, which waits for the tick in progress, so a tap taken out
 * is no longer touched once that returns): the mix goes into its receive ring, resampled
 * to the app's rate and cut into the app's frames; slot 0 still gets silence. Only with
 * the null device (pjsua_var.null_snd): a real sound device is clocked by its own driver.
 */
#include "CPJSUAShim.h"
#include <pjsua-lib/pjsua_internal.h>
#include <stdlib.h>

/* Drops one reference; the last one frees the port and its rings. */
void cpj_frame_port_release(cpj_frame_port *port) {
    /* Plain free only: the last reference may go on any thread, pjlib's or not. */
    if (__atomic_sub_fetch(&port->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    free(port->rx.slots);
    free(port->tx.slots);
    free(port);
}

/* One frame of `samples` samples (NULL or short: the rest is silence) into the receive
 * ring, making room by dropping the oldest frame. Clock thread: no lock, no allocation. */
static void cpj_frame_port_push(cpj_frame_port *port, const int16_t *pcm, unsigned samples) {
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
static pj_status_t cpj_frame_port_put_frame(pjmedia_port *base, pjmedia_frame *frame) {
    cpj_frame_port *port = (cpj_frame_port *)base;
    int audio = frame->type == PJMEDIA_FRAME_TYPE_AUDIO && frame->buf;
    cpj_frame_port_push(port, audio ? (const int16_t *)frame->buf : NULL,
                        audio ? (unsigned)(frame->size / sizeof(int16_t)) : 0);
    return PJ_SUCCESS;
}

/* What the call sends, from the bridge's clock thread: the app's next queued frame, or
 * no audio (silence) when none is queued. */
static pj_status_t cpj_frame_port_get_frame(pjmedia_port *base, pjmedia_frame *frame) {
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
static cpj_frame_port *cpj_frame_port_alloc(
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

/* A frame port for a call (the sound-device tap allocates a larger struct starting with one). */
cpj_frame_port *cpj_frame_port_create(
    unsigned clock_rate, unsigned samples_per_frame, unsigned rx_frames, unsigned tx_frames) {
    return cpj_frame_port_alloc(sizeof(cpj_frame_port), clock_rate, samples_per_frame, rx_frames, tx_frames);
}

/* pjmedia_port_destroy's end for our port: the bridge has let go of it (before 2.15 at
 * once; from 2.15 on when the bridge drops its group-lock reference, after its last
 * callback on the clock thread). */
static pj_status_t cpj_frame_port_on_destroy(pjmedia_port *base) {
    cpj_frame_port *port = (cpj_frame_port *)base;
    pj_pool_t *pool = port->pool;
    port->pool = NULL;
    if (pool) pj_pool_release(pool); /* on a pjlib thread: the clock's or the engine's */
    cpj_frame_port_release(port);
    return PJ_SUCCESS;
}

/* Adds the port to pjsua's conference bridge, which then holds a reference to it. */
pj_status_t cpj_frame_port_add(cpj_frame_port *port, pjsua_conf_port_id *slot) {
    pj_pool_t *pool;
    pj_status_t status;
    if (cpj_conf_is_full()) return PJ_ETOOMANY;
    pool = pjsua_pool_create("swiftpjsua-frames", 512, 512);
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
void cpj_frame_port_remove(cpj_frame_port *port, pjsua_conf_port_id slot) {
    __atomic_store_n(&port->closed, 1, __ATOMIC_RELEASE);
    pjsua_conf_remove_port(slot);
    /* Drops the port's own reference; cpj_frame_port_on_destroy runs when the bridge's
     * is gone too. */
    pjmedia_port_destroy(&port->base);
}

/* The next received frame: its samples into `out` (room for `capacity`), its sequence
 * number into `sequence`. Returns the sample count, 0 when none is waiting, -1 when the
 * port was removed and every frame has been read. Called by one reader at a time. */
int cpj_frame_port_read(cpj_frame_port *port, int16_t *out, unsigned capacity, uint64_t *sequence) {
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
int cpj_frame_port_write(cpj_frame_port *port, const int16_t *samples, unsigned count) {
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

/* Received frames dropped because the reader fell behind. */
uint64_t cpj_frame_port_dropped(const cpj_frame_port *port) {
    return __atomic_load_n(&port->rx_dropped, __ATOMIC_RELAXED);
}
/* Bridge ticks that found the send ring empty after the app had started sending. */
uint64_t cpj_frame_port_underflows(const cpj_frame_port *port) {
    return __atomic_load_n(&port->tx_underflows, __ATOMIC_RELAXED);
}
/* Frames queued to send and not yet taken by the bridge. */
uint64_t cpj_frame_port_queued(const cpj_frame_port *port) {
    return __atomic_load_n(&port->tx.head, __ATOMIC_ACQUIRE) - __atomic_load_n(&port->tx.tail, __ATOMIC_ACQUIRE);
}
/* Whether the port was taken out of the bridge (or the tap out of the device). */
int cpj_frame_port_is_closed(const cpj_frame_port *port) {
    return __atomic_load_n(&port->closed, __ATOMIC_ACQUIRE);
}

/* ---- The sound-device tap ---- */

/* Slot 0's mix for one tick, from the master port's clock thread. */
static pj_status_t cpj_snd_tap_put_frame(pjmedia_port *base, pjmedia_frame *frame) {
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
static pj_status_t cpj_snd_tap_get_frame(pjmedia_port *base, pjmedia_frame *frame) {
    (void)base;
    frame->type = PJMEDIA_FRAME_TYPE_AUDIO;
    if (frame->buf && frame->size) pj_bzero(frame->buf, frame->size);
    return PJ_SUCCESS;
}

/* A tap whose ring holds `rx_frames` frames of `samples_per_frame` at `clock_rate`, fed
 * from the bridge's master port format. NULL when memory runs out or a format is beyond
 * the frames offered. Engine thread (the resampler's pool). */
cpj_snd_tap *cpj_snd_tap_create(unsigned clock_rate, unsigned samples_per_frame, unsigned rx_frames) {
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
pj_status_t cpj_snd_tap_install(cpj_snd_tap *tap) {
    pjmedia_port *upstream;
    if (pjsua_var.null_snd == NULL) return PJ_ENOTFOUND;
    upstream = pjmedia_master_port_get_uport(pjsua_var.null_snd);
    if (upstream == &tap->frames.base) return PJ_SUCCESS;
    if (upstream != pjsua_var.null_port) return PJ_EBUSY; /* not the layout this was written for */
    return pjmedia_master_port_set_uport(pjsua_var.null_snd, &tap->frames.base);
}

/* Takes the tap out (pjsua's null port back in its place, if the device is still open)
 * and ends it: the reader drains the ring and sees the end. Engine thread, once. */
void cpj_snd_tap_remove(cpj_snd_tap *tap) {
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

/* The tap's frame port, which the engine reads as it reads a call's. */
cpj_frame_port *cpj_snd_tap_frames(cpj_snd_tap *tap) { return &tap->frames; }
