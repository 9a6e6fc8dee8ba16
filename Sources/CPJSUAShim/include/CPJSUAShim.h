/* CPJSUAShim: the C the engine needs around pjsua, over the module CPJSIP (pjproject's public headers).
 * Declarations only, grouped by the .c file that defines them; each definition there says why it exists.
 * Swift imports this module alone; every name starts with cpj_ or CPJ_; pjsua internals stay in the .c files. */
#ifndef SWIFT_PJSUA_CPJSUASHIM_H
#define SWIFT_PJSUA_CPJSUASHIM_H

/* pjproject as the module CPJSIP, so Swift sees each type once: on the xcframework route a C target on the
 * search path; on the pkg-config route the system library next to this target, found by this header's path. */
#if __has_include(<CPJSIP.h>)
#include <CPJSIP.h>
#else
#include "../../CPJSIP/CPJSIP.h"
#endif
#include <stdint.h>

/* Whether the pjproject headers are at least major.minor (2.12.1 through 2.17 supported). */
#define CPJ_VERSION_AT_LEAST(major, minor) (PJ_VERSION_NUM >= (((major) << 24) | ((minor) << 16)))

/* version.c: versions, build options, build-time limits */
const char *cpj_compiled_version(void);
const char *cpj_runtime_version(void);
pj_bool_t cpj_has_ipv6(void);
pj_bool_t cpj_media_worker_is_reliable(void);
unsigned cpj_max_calls(void);
unsigned cpj_max_accounts(void);
unsigned cpj_max_players(void);
unsigned cpj_max_recorders(void);
unsigned cpj_max_conf_ports(void);
unsigned cpj_max_transactions(void);
unsigned cpj_max_dialogs(void);
unsigned cpj_max_packet_length(void);
int cpj_invalid_id(void);

/* status.c: pj_status_t values, never hard-coded */
pj_status_t cpj_success(void);
pj_status_t cpj_status_einval(void);
pj_status_t cpj_status_enotfound(void);
pj_status_t cpj_status_etoomany(void);
/* Whether the conference bridge has no free slot (players.c). */
pj_bool_t cpj_conf_is_full(void);
pj_status_t cpj_status_ebusy(void);
pj_status_t cpj_status_einvalidop(void);
pj_status_t cpj_status_etimedout(void);
pj_status_t cpj_status_eexists(void);
pj_status_t cpj_status_emsgtoolong(void);
pj_status_t cpj_status_eafnotsup(void);
pj_status_t cpj_status_auth_stale_count(void);
pj_status_t cpj_status_enomem(void);
pj_status_t cpj_status_einvaliduri(void);
pj_status_t cpj_status_esessionterminated(void);
pj_status_t cpj_status_esessionstate(void);
pj_status_t cpj_status_aud_nodefdev(void);
pj_status_t cpj_status_pjsip_ebusy(void);
pj_status_t cpj_status_esessioninsecure(void);
pj_status_t cpj_status_from_sip(int code);
int cpj_sip_code_from_status(pj_status_t status);

/* threads.c: the engine thread's registration, timers */
pj_size_t cpj_thread_desc_size(void);
pj_status_t cpj_thread_register(const char *name, void *desc, pj_thread_t **thread);
pj_status_t cpj_schedule_timer(void (*cb)(void *user_data), void *user_data, unsigned msec_delay);

/* messages.c: URIs, header lists, parse checks */
pj_str_t cpj_uri_display(const pjsip_uri *uri);
const pjsip_msg *cpj_rdata_msg(const pjsip_rx_data *rdata);
pj_str_t cpj_rdata_body(const pjsip_rx_data *rdata);
const pjsip_hdr *cpj_msg_first_header(const pjsip_msg *msg);
const pjsip_hdr *cpj_msg_next_header(const pjsip_msg *msg, const pjsip_hdr *hdr);
int cpj_header_print(const pjsip_hdr *hdr, char *buf, pj_size_t size);
const pjsip_uri *cpj_rdata_from_uri(const pjsip_rx_data *rdata);
pj_str_t cpj_rdata_call_id(const pjsip_rx_data *rdata);
pj_bool_t cpj_msg_data_add_header(pjsua_msg_data *data, pj_pool_t *pool, pj_str_t name, pj_str_t value);
pj_status_t cpj_verify_sip_uri(const char *text, pj_size_t length);
pj_bool_t cpj_header_parses(const char *name, pj_size_t name_len, const char *value, pj_size_t value_len);

/* accounts.c: pjsua_acc_config's arrays and lists, deleted accounts */
pjsua_ipv6_use cpj_ipv6_media_use(pj_bool_t ipv6_address);
pj_bool_t cpj_rtp_randomize_port(pjsua_transport_config *cfg);
void *cpj_acc_user_data_if_valid(pjsua_acc_id acc_id);
pj_uint32_t cpj_expires_not_specified(void);
unsigned cpj_acc_max_credentials(void);
unsigned cpj_acc_max_proxies(void);
pjsip_cred_info *cpj_acc_credential(pjsua_acc_config *cfg, unsigned index);
void cpj_acc_set_proxy(pjsua_acc_config *cfg, unsigned index, pj_str_t uri);
void cpj_acc_add_register_header(pjsua_acc_config *cfg, pj_pool_t *pool, pj_str_t name, pj_str_t value);
pj_uint32_t cpj_cred_plain_password(void);
pj_uint32_t cpj_cred_digest(void);
/* The digest algorithm of an HA1 credential, numbered by the shim (pjsip's own enum exists
 * only from 2.15.1). */
typedef enum cpj_digest_algorithm { CPJ_DIGEST_MD5 = 0, CPJ_DIGEST_SHA256 = 1 } cpj_digest_algorithm;
pj_bool_t cpj_digest_algorithm_available(cpj_digest_algorithm algorithm);
pj_bool_t cpj_cred_set_digest_algorithm(pjsip_cred_info *cred, cpj_digest_algorithm algorithm);

/* calls.c: call settings, info arrays, streams, slots */
void cpj_call_setting_audio_only(pjsua_call_setting *setting);
int cpj_call_queued_dtmf_digits(pjsua_call_id call_id);
int cpj_call_offer_pending(pjsua_call_id call_id);
const pjsua_call_media_info *cpj_call_info_media(const pjsua_call_info *info, unsigned index);
pjsua_conf_port_id cpj_call_media_conf_slot(const pjsua_call_media_info *m);
pj_status_t cpj_call_get_stream_info(pjsua_call_id call_id, unsigned med_idx, pjsua_stream_info *info);
pj_status_t cpj_call_get_stream_stat(pjsua_call_id call_id, unsigned med_idx, pjsua_stream_stat *stat);

/* One moment of an audio stream, for StreamStatistics (calls.c). Bitfields of pjmedia's
 * loss_type are copied out as plain flags. */
typedef struct cpj_stream_snapshot {
    pjsua_stream_stat stat;
    char codec[32];
    unsigned clock_rate, packet_time_msec;
    /* The decoder frame the jitter buffer counts in (frm_ptime[/frm_ptime_denum]), in µs. */
    unsigned frame_time_usec;
    pj_bool_t has_levels;
    unsigned sent_level, received_level;
    pj_uint64_t elapsed_msec, since_far_end_report_msec;
    pj_bool_t burst_loss_rx, random_loss_rx, burst_loss_tx, random_loss_tx;
} cpj_stream_snapshot;
pj_status_t cpj_call_stream_snapshot(pjsua_call_id call_id, unsigned med_idx, cpj_stream_snapshot *out);
unsigned cpj_dtmf_flag_is_end(void);
unsigned cpj_dtmf_unknown_duration(void);
pj_bool_t cpj_call_slot_in_use(pjsua_call_id call_id);
pj_bool_t cpj_call_owns_tsx(pjsua_call_id call_id, pjsip_transaction *tsx);
pj_status_t cpj_call_reinvite(pjsua_call_id call_id);

/* transfers.c: Refer-To identity, REFER's NOTIFY, the Replaces check */
pj_status_t cpj_register_replaces_check(void);
pj_bool_t cpj_event_is_refer_notify(const pjsip_transaction *tsx, const pjsip_event *e);
pj_status_t cpj_call_dialog_identity(pjsua_call_id call_id, char *buf, pj_size_t size, int lengths[4]);

/* nat64_sdp.c: RFC 6052/7050 prefix; received SDP's IPv4 media addresses into it for nat64 accounts */
#define CPJ_NAT64_WARNING_TEXT "IPv4 media address and no NAT64 prefix known"
int cpj_nat64_synthesize(const unsigned char *prefix, unsigned length, const unsigned char *ipv4, unsigned char *out);
int cpj_nat64_prefix_from_address(const unsigned char *address, unsigned char *prefix, unsigned *length);
int cpj_nat64_discover(const char *name, unsigned char *prefix, unsigned *length);
void cpj_nat64_set_prefix(const unsigned char *prefix, unsigned length);
int cpj_nat64_prefix(unsigned char *prefix, unsigned *length);
long cpj_nat64_rewrite_sdp(const char *sdp, size_t size, const unsigned char *prefix, unsigned length,
                           int reject_streams, char *out, size_t capacity, int *ipv4_found);
int cpj_nat64_take_refused(pjsua_call_id call_id);
void cpj_nat64_forget(pjsua_call_id call_id);
pj_status_t cpj_call_hangup_nat64(pjsua_call_id call_id);
pj_status_t cpj_register_nat64_module(void);

/* offer_answer.c: the 488 rewrite, repeated early answers, an ACK without an answer */
pj_status_t cpj_register_offer_answer_module(void);
int cpj_call_confirmed_without_answer(pjsua_call_id call_id);
pj_status_t cpj_call_hangup_no_answer(pjsua_call_id call_id);
int cpj_tsx_is_initial_invite(pjsip_transaction *tsx);

/* players.c: players and recorders closed before their destroy returns */
unsigned cpj_media_ports_destroy_and_wait(const pjsua_player_id *players, unsigned player_count,
                                          const pjsua_recorder_id *recorders, unsigned recorder_count,
                                          unsigned timeout_ms);
pj_status_t cpj_player_set_eof_callback(pjsua_player_id id, void *token, void (*callback)(pjmedia_port *, void *));

/* tones.c: tone generators on the bridge */
unsigned cpj_tonegen_max_tones(void);
pj_status_t cpj_tonegen_start(const pjmedia_tone_desc *tones, unsigned count, int loop, pjmedia_port **out_port,
                              pj_pool_t **out_pool, pjsua_conf_port_id *slot, const char **failed);
void cpj_tonegen_remove(pjmedia_port *port, pj_pool_t *pool, pjsua_conf_port_id slot);

/* frames.c: PCM frame ports and the sound-device tap (their structs and functions) */
#include "frames.h"

/* srtp.c: keyings and suites pjmedia has, an account's SRTP, what a call negotiated */
pj_bool_t cpj_srtp_has_keying(pjmedia_srtp_keying_method method);
unsigned cpj_srtp_crypto_count(void);
pj_str_t cpj_srtp_crypto_name(unsigned index);
void cpj_acc_config_set_srtp(pjsua_acc_config *cfg, pjmedia_srtp_use use, int secure_signaling,
                             const pjmedia_srtp_keying_method *keying, unsigned keying_count,
                             const pj_str_t *crypto, unsigned crypto_count);
int cpj_call_srtp_info(pjsua_call_id call_id, unsigned med_idx, pj_bool_t *active, char *suite, unsigned capacity);
int cpj_call_srtp_keying(pjsua_call_id call_id, unsigned med_idx);

/* media_nat.c: STUN servers, a call's ICE state */
unsigned cpj_max_stun_servers(void);
void cpj_config_add_stun_server(pjsua_config *cfg, pj_str_t server);
pj_status_t cpj_call_media_transport(pjsua_call_id call_id, unsigned med_idx, pjmedia_transport_info *info,
                                     pjmedia_ice_transport_info *ice, int *has_ice);
int cpj_ice_component(const pjmedia_ice_transport_info *ice, unsigned index, pj_ice_cand_type *local_type,
                      pj_sockaddr *local_addr, pj_ice_cand_type *remote_type, pj_sockaddr *remote_addr);
void cpj_sockaddr_text(const pj_sockaddr *addr, char *buf, int len);

/* dns.c: nameservers with ports, resolver timing, SRV failover */
pj_status_t cpj_dns_setup(const pj_str_t *servers, const pj_uint16_t *ports, unsigned count,
                          unsigned retransmit_msec, unsigned retransmissions, unsigned bad_ns_sec,
                          unsigned hold_down_msec);
void cpj_dns_teardown(void);
int cpj_dns_mark_register_unanswered(pjsua_acc_id acc_id);
unsigned cpj_max_nameservers(void);
void cpj_config_set_nameserver(pjsua_config *config, unsigned index, pj_str_t server);

/* dead_flows.c: RFC 5626 flows, keep-alive pings and their verdicts */
#define CPJ_FLOW_FAILED 0 /* nothing arrived since the ping: the flow was shut down */
#define CPJ_FLOW_ALIVE 1  /* something arrived since the ping (last, a message) */
#define CPJ_FLOW_GONE 2   /* the account registers over another flow now, or none */
#define CPJ_FLOW_PONG 3   /* something arrived since the ping, last a bare CRLF: a pong */
#define CPJ_FLOW_SILENT 4 /* nothing arrived, and the caller did not allow a shutdown */
pjsip_transport *cpj_regc_last_transport(pjsip_regc *regc);
pj_bool_t cpj_shutdown_failed_flow(pjsip_transport *tp, const char *why);
pjsip_transport *cpj_tsx_unanswered_transport(const pjsip_transaction *tsx, const pjsip_event *e);
pj_size_t cpj_acc_flow_ping(pjsua_acc_id acc_id, pj_uint64_t *sent_at);
int cpj_acc_flow_check(pjsua_acc_id acc_id, pj_size_t flow, pj_uint64_t sent_at, pj_bool_t may_shut);

/* dead_peers.c: the connection a call's transactions use, and its end */
pjsip_transport *cpj_event_transport(const pjsip_event *e);
pj_bool_t cpj_transport_is_reliable(const pjsip_transport *tp);
int cpj_transport_describe(const pjsip_transport *tp, char *buffer, pj_size_t size);
void cpj_transport_retain(pjsip_transport *tp);
void cpj_transport_release(pjsip_transport *tp);
pj_bool_t cpj_transport_is_shut_down(const pjsip_transport *tp);
pjsip_transport_state cpj_tp_state_disconnected(void);
int cpj_event_reinvite_outcome(pjsip_transaction *tsx, const pjsip_event *e, pj_bool_t *local);

/* network_change.c: pjsua_handle_ip_change's steps by name (stable across versions) */
enum { CPJ_IP_CHANGE_SHUTDOWN_TP = 1, CPJ_IP_CHANGE_RESTART_LIS, CPJ_IP_CHANGE_ACC_SHUTDOWN_TP,
       CPJ_IP_CHANGE_ACC_UPDATE_CONTACT, CPJ_IP_CHANGE_ACC_HANGUP_CALLS, CPJ_IP_CHANGE_ACC_REINVITE_CALLS,
       CPJ_IP_CHANGE_COMPLETED, CPJ_IP_CHANGE_OTHER };
int cpj_ip_change_step(pjsua_ip_change_op op);
void cpj_ip_change_param_set_shutdown_transport(pjsua_ip_change_param *param, pj_bool_t value);
void cpj_ip_change_cfg_set_use_update(pjsua_ip_change_acc_cfg *config, pj_bool_t value);
unsigned cpj_ip_change_reinvite_flags(void);
int cpj_call_refresh_early_contact(pjsua_call_id call_id);

#if defined(__linux__)
/* netlink.c: the kernel's link, address and route changes */
int cpj_netlink_route_open(void);
int cpj_netlink_route_read(int fd, int timeout_ms);
#endif

/* pjsip modules, registered once per pjsua_init: unanswered.c, rfc_checks.c, push_contact.c, expires_guard.c */
pj_status_t cpj_register_unhandled_request_responder(void);
pj_status_t cpj_register_rfc_checks(void);
pj_status_t cpj_register_push_contact_module(void);
pj_str_t cpj_push_params_header_name(void);
pj_status_t cpj_register_expires_guard(void);
/* supported_tags.c: 100rel and timer out of Supported for accounts with them off; session refresh outcomes */
pj_status_t cpj_register_drop_supported_module(void);
pj_str_t cpj_drop_supported_header_name(void);
int cpj_event_refresh_outcome(pjsip_transaction *tsx, const pjsip_event *e, pj_bool_t *local);

/* im_consent.c: MESSAGE (else 480) and unsolicited message-summary NOTIFY (else 481) only with a consumer */
pj_status_t cpj_register_im_consent(void);
void cpj_im_set_consumer_count(int count);
void cpj_mwi_set_consumer_count(int count);
pj_str_t cpj_watcher_refused_reason(void);

/* admission.c: who may call an account, per-source rate limit, ringing cap */
/* Refusals: 403 source not a registrar or proxy, 404 not the Contact user, 503 rate, 486 ringing cap. */
typedef struct cpj_admission_counters {
    pj_uint64_t not_from_server, unknown_user, rate_limited, ringing_cap;
} cpj_admission_counters;
pj_status_t cpj_register_admission(unsigned rate_per_second, unsigned burst, unsigned retry_after_seconds,
                                   unsigned max_ringing);
unsigned cpj_admission_configure_account(pjsua_acc_id acc_id, pj_bool_t only_servers, pj_bool_t contact_user,
                                         const pj_str_t *server_uris, unsigned count);
void cpj_admission_resolve_servers(pjsua_acc_id acc_id, unsigned generation);
unsigned cpj_admission_generation(pjsua_acc_id acc_id);
void cpj_admission_learn_server(pjsua_acc_id acc_id, const pjsip_rx_data *rdata);
void cpj_admission_forget_account(pjsua_acc_id acc_id);
void cpj_admission_get_counters(cpj_admission_counters *out);
#include "media_tuning.h"
#include "presence.h"
#endif
