/* frames.h, part of CPJSUAShim (reached through CPJSUAShim.h, which includes CPJSIP first).
 * frames.c: PCM frame ports and the sound-device tap. The structs are here (not opaque) so
 * Swift holds typed pointers to them; only frames.c touches their fields. */
#ifndef SWIFT_PJSUA_CPJSUASHIM_FRAMES_H
#define SWIFT_PJSUA_CPJSUASHIM_FRAMES_H

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
typedef struct cpj_snd_tap {
    cpj_frame_port frames;      /* first: the master port sees its base; the ring is in the app's format */
    pjmedia_resample *resample; /* the bridge's rate to the app's; NULL when they are equal */
    unsigned out_samples;       /* samples one bridge frame makes at the app's rate */
    unsigned pending;           /* samples of the next app frame collected so far */
    int16_t scratch[CPJ_FRAME_MAX_SAMPLES];
    int16_t partial[CPJ_FRAME_MAX_SAMPLES];
} cpj_snd_tap;

void cpj_frame_port_release(cpj_frame_port *port);
cpj_frame_port *cpj_frame_port_create(unsigned clock_rate, unsigned samples_per_frame, unsigned rx_frames,
                                      unsigned tx_frames);
pj_status_t cpj_frame_port_add(cpj_frame_port *port, pjsua_conf_port_id *slot);
void cpj_frame_port_remove(cpj_frame_port *port, pjsua_conf_port_id slot);
int cpj_frame_port_read(cpj_frame_port *port, int16_t *out, unsigned capacity, uint64_t *sequence);
int cpj_frame_port_write(cpj_frame_port *port, const int16_t *samples, unsigned count);
uint64_t cpj_frame_port_dropped(const cpj_frame_port *port);
uint64_t cpj_frame_port_underflows(const cpj_frame_port *port);
uint64_t cpj_frame_port_queued(const cpj_frame_port *port);
int cpj_frame_port_is_closed(const cpj_frame_port *port);
cpj_snd_tap *cpj_snd_tap_create(unsigned clock_rate, unsigned samples_per_frame, unsigned rx_frames);
pj_status_t cpj_snd_tap_install(cpj_snd_tap *tap);
void cpj_snd_tap_remove(cpj_snd_tap *tap);
cpj_frame_port *cpj_snd_tap_frames(cpj_snd_tap *tap);

#endif
