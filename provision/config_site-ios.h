/*
 * The 2.17-ios profile: pjproject 2.17 with the limits and feature set of the
 * iOS xcframework that Package.swift pins (swift-pjsip 0.2.1, PJSIP 2.17.0),
 * so the engine and the Kit can be tested on Linux against what an app gets.
 *
 * scripts/provision.sh appends this file to provision/config_site.h (whose
 * IPv6 and I/O queue settings stay) when it builds --pjproject 2.17-ios, and
 * builds with --disable-opus --disable-speex-codec --disable-speex-aec
 * --disable-gsm-codec and without --disable-video.
 *
 * Where the values come from:
 * [sample]  the pinned xcframework's pj/config_site.h defines PJ_CONFIG_IPHONE 1
 *           and includes upstream's pj/config_site_sample.h; its
 *           "#if PJ_CONFIG_IPHONE" block (pjproject 2.17, pjlib/include/pj/
 *           config_site_sample.h, lines 303-363) sets these.
 * [site]    set by the pinned xcframework's own pj/config_site.h, after the
 *           sample is included.
 * [codecs]  swift-pjsip's docs/Codec-Coverage.md: the xcframework has no opus,
 *           speex or GSM (configure flags above, not macros).
 * Left out: the sample's CoreAudio device and CoreAudio iLBC (no CoreAudio on
 * Linux; the Linux recipe has no iLBC either), Apple TLS (OpenSSL here) and
 * bcg729 (no Debian development package; G.729 is tested nowhere).
 */
#ifndef SWIFT_PJSUA_CONFIG_SITE_IOS_H
#define SWIFT_PJSUA_CONFIG_SITE_IOS_H

/* [sample] Calls one pjsua instance holds: 4 (the Linux profiles hold 1024). */
#undef PJSUA_MAX_CALLS
#define PJSUA_MAX_CALLS             4

/* [sample] Accounts: 4. */
#undef PJSUA_MAX_ACC
#define PJSUA_MAX_ACC               4

/* [sample] File players and recorders: 4 of each. */
#undef PJSUA_MAX_PLAYERS
#define PJSUA_MAX_PLAYERS           4
#undef PJSUA_MAX_RECORDERS
#define PJSUA_MAX_RECORDERS         4

/* [sample] Conference bridge slots, computed there as calls + 2 x players: 12.
 * The sound device, ringback, tones and frame taps take slots from these too. */
#undef PJSUA_MAX_CONF_PORTS
#define PJSUA_MAX_CONF_PORTS        (PJSUA_MAX_CALLS + 2 * PJSUA_MAX_PLAYERS)

/* [sample] SIP transactions and dialogs alive at once: 31 each. */
#undef PJSIP_MAX_TSX_COUNT
#define PJSIP_MAX_TSX_COUNT         31
#undef PJSIP_MAX_DIALOG_COUNT
#define PJSIP_MAX_DIALOG_COUNT      31

/* [sample] Presence buddies: 32. */
#define PJSUA_MAX_BUDDIES           32

/* [sample] Resampler quality 4 (the small filter), no L16 codec, and no speex
 * echo canceller (the sample leaves echo to CoreAudio's voice processing). */
#define PJSUA_DEFAULT_CODEC_QUALITY 4
#define PJMEDIA_HAS_L16_CODEC       0
#define PJMEDIA_HAS_SPEEX_AEC       0

/* [site] Largest SIP message pjsip sends or accepts: 16000 bytes (default 4000). */
#define PJSIP_MAX_PKT_LEN           16000

/* [site] A request larger than the UDP MTU stays on UDP instead of moving to TCP. */
#define PJSIP_DONT_SWITCH_TO_TCP    1

/* [site] Video compiled in. Here no capture device or video codec library is
 * linked, and the engine answers and offers audio only (vid_cnt 0). */
#undef PJMEDIA_HAS_VIDEO
#define PJMEDIA_HAS_VIDEO           1

/* [site] No DTLS-SRTP keying: the xcframework has no OpenSSL; SDES only. */
#undef PJMEDIA_SRTP_HAS_DTLS
#define PJMEDIA_SRTP_HAS_DTLS       0

#endif
