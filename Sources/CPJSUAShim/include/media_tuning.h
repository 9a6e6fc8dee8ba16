/* media_tuning.c: codec settings pjsua has no API for. Declarations only; included by CPJSUAShim.h. */
#ifndef SWIFT_PJSUA_MEDIA_TUNING_H
#define SWIFT_PJSUA_MEDIA_TUNING_H

/* Whether the pjmedia linked in has the Opus codec (PJMEDIA_HAS_OPUS_CODEC). */
pj_bool_t cpj_opus_available(void);
/* Opus encoder defaults for every later call; bit_rate 0 lets the encoder choose. PJ_ENOTSUP without Opus. */
pj_status_t cpj_opus_configure(unsigned bit_rate, unsigned complexity, unsigned ptime_ms, pj_bool_t dtx,
                               pj_bool_t inband_fec, unsigned packet_loss);

#endif
