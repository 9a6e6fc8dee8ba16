/*
 * Which pjproject this is: the version compiled against and the one loaded, the build
 * options the engine adapts to, and the build-time limits (config_site.h's expression
 * macros, which Swift does not import).
 */
#include "CPJSUAShim.h"

#define CPJ_STRINGIFY_(x) #x
#define CPJ_STRINGIFY(x) CPJ_STRINGIFY_(x)

/* The version of the headers this target was compiled against, spelled as pjlib spells
 * PJ_VERSION ("2.17", "2.12.1", with PJ_VERSION_NUM_EXTRA appended). */
const char *cpj_compiled_version(void) {
#if PJ_VERSION_NUM_REV
    return CPJ_STRINGIFY(PJ_VERSION_NUM_MAJOR) "." CPJ_STRINGIFY(PJ_VERSION_NUM_MINOR) "."
           CPJ_STRINGIFY(PJ_VERSION_NUM_REV) PJ_VERSION_NUM_EXTRA;
#else
    return CPJ_STRINGIFY(PJ_VERSION_NUM_MAJOR) "." CPJ_STRINGIFY(PJ_VERSION_NUM_MINOR) PJ_VERSION_NUM_EXTRA;
#endif
}

/* The version of the pjlib loaded at run time (PJ_VERSION is data inside libpj). */
const char *cpj_runtime_version(void) { return pj_get_version(); }

/* Whether the build has IPv6 (PJ_HAS_IPV6, 0 by pjlib's default). From 2.15 on
 * pjsua_acc_add asserts, aborting the process, when an account asks for IPv6 in a
 * build without it. */
pj_bool_t cpj_has_ipv6(void) { return PJ_HAS_IPV6 ? PJ_TRUE : PJ_FALSE; }

/* Whether pjmedia's own media worker polls without stalling: before 2.13 its I/O queue
 * worker slept out a whole 500 ms poll timeout when epoll reported a socket with nothing
 * to read (pjproject #3086, #3188), so the engine put RTP on the SIP worker instead. */
pj_bool_t cpj_media_worker_is_reliable(void) {
    return CPJ_VERSION_AT_LEAST(2, 13) ? PJ_TRUE : PJ_FALSE;
}

/* ---- Build-time limits (expression macros in config_site.h). ---- */

/* PJSUA_MAX_CALLS: the most calls pjsua_config.max_calls may ask for. */
unsigned cpj_max_calls(void) { return PJSUA_MAX_CALLS; }
/* PJSUA_MAX_ACC: the most accounts pjsua holds at once. */
unsigned cpj_max_accounts(void) { return PJSUA_MAX_ACC; }
/* PJSUA_MAX_PLAYERS and PJSUA_MAX_RECORDERS: the file players and recorders pjsua holds. */
unsigned cpj_max_players(void) { return PJSUA_MAX_PLAYERS; }
unsigned cpj_max_recorders(void) { return PJSUA_MAX_RECORDERS; }
/* PJSUA_MAX_CONF_PORTS: the default size of pjsua's conference bridge, and the length of
 * the listener arrays of pjsua_conf_port_info, so no bridge may be larger. */
unsigned cpj_max_conf_ports(void) { return PJSUA_MAX_CONF_PORTS; }
/* PJSIP_MAX_TSX_COUNT and PJSIP_MAX_DIALOG_COUNT: the sizes of pjsip's transaction and
 * dialog tables (pjsip grows neither). */
unsigned cpj_max_transactions(void) { return PJSIP_MAX_TSX_COUNT; }
unsigned cpj_max_dialogs(void) { return PJSIP_MAX_DIALOG_COUNT; }
/* PJSIP_MAX_PKT_LEN: the largest SIP message, in bytes, pjsip prints or receives. */
unsigned cpj_max_packet_length(void) { return PJSIP_MAX_PKT_LEN; }
/* PJSUA_INVALID_ID is a cast expression macro: the id of no call, account, player or slot. */
int cpj_invalid_id(void) { return PJSUA_INVALID_ID; }
