/*
 * swift-pjsua's build-time configuration for pjproject.
 *
 * Copied to pjlib/include/pj/config_site.h before configure by
 * scripts/provision.sh, for every pjproject version it builds (2.12.1 to 2.17).
 * The stock limits (4 calls, 254 conference ports) are far below what a
 * server-side user agent or a benchmark needs.
 */
#ifndef SWIFT_PJSUA_CONFIG_SITE_H
#define SWIFT_PJSUA_CONFIG_SITE_H

/* Concurrent calls one pjsua instance can hold. 1024: on pjproject 2.17, with RTP on
 * pjmedia's own worker, 2 cores hold 500 calls with media and more (docs/BENCHMARKS.md). */
#define PJSUA_MAX_CALLS             1024

/* Each call with audio uses one conference port; players, recorders and
 * the sound device take a few more. */
#define PJSUA_MAX_CONF_PORTS        (PJSUA_MAX_CALLS * 2 + 64)

/* Sockets the I/O queue can watch: SIP transports plus RTP and RTCP for
 * every call, with headroom for TCP/TLS connections. */
#define PJ_IOQUEUE_MAX_HANDLES      8192

/* Accounts per instance. */
#define PJSUA_MAX_ACC               32

/* Players and recorders: one or two per call at most. */
#define PJSUA_MAX_PLAYERS           (PJSUA_MAX_CALLS + 32)
#define PJSUA_MAX_RECORDERS         (PJSUA_MAX_CALLS + 32)

/* Enough pending SIP transactions and dialogs for the call limit above. */
#define PJSIP_MAX_TSX_COUNT         ((PJSUA_MAX_CALLS * 8) - 1)
#define PJSIP_MAX_DIALOG_COUNT      ((PJSUA_MAX_CALLS * 4) - 1)

/* IPv6 transports, accounts and media. pjlib's default is 0, and from 2.15 on
 * pjsua_acc_add asserts when an account asks for IPv6 in such a build. */
#define PJ_HAS_IPV6                 1

/* DTLS-SRTP keying (RFC 5763/5764) beside SDES: pjmedia's default is 0, which leaves
 * pjmedia_srtp_keying DTLS-SRTP a stub that refuses every DTLS offer. Uses OpenSSL,
 * which the build already links for TLS. */
#define PJMEDIA_SRTP_HAS_DTLS       1

/* No video in this build. */
#define PJMEDIA_HAS_VIDEO           0

#endif
