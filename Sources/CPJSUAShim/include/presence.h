/* presence.c: buddies (RFC 3856 presence, RFC 4235 dialog state) across the pjproject versions supported.
 * Declarations only; included at the end of CPJSUAShim.h. */
#ifndef SWIFT_PJSUA_PRESENCE_H
#define SWIFT_PJSUA_PRESENCE_H

/* Whether these headers have dialog-event subscriptions for buddies (pjsua_buddy_config.subscribe_dlg_event). */
pj_bool_t cpj_dialog_event_supported(void);
/* Whether pjsua_buddy_config can name the account a buddy's subscriptions use (acc_id). */
pj_bool_t cpj_buddy_account_supported(void);
/* Sets on_buddy_dlg_event_state where the headers have it; a no-op elsewhere. */
void cpj_presence_set_dialog_callback(pjsua_config *cfg, void (*callback)(pjsua_buddy_id buddy_id));
/* pjsua_buddy_add with the generation as user data; acc_id < 0 lets pjsua choose the account.
 * PJ_ENOTSUP for a dialog subscription or an account where the headers lack them. */
pj_status_t cpj_buddy_add(const pj_str_t *uri, pj_bool_t presence, pj_bool_t dialog, pjsua_acc_id acc_id,
                          void *user_data, pjsua_buddy_id *out);
/* pjsua_buddy_subscribe_dlg_event, or PJ_ENOTSUP. */
pj_status_t cpj_buddy_subscribe_dialog(pjsua_buddy_id buddy_id, pj_bool_t subscribe);
/* The user data of a valid buddy slot, NULL for an invalid one (pjsua asserts on those). */
void *cpj_buddy_user_data_if_valid(pjsua_buddy_id buddy_id);
/* The retry-after parameter (seconds) of the Subscription-State of the NOTIFY in an evsub event; -1 without. */
int cpj_evsub_event_retry_after(const pjsip_event *event);

/* One buddy's dialog-event state, copied out of pjsua's info into storage the caller owns. */
typedef struct cpj_dialog_state {
    pj_str_t uri, dialog_id, info_state, state, direction, call_id, remote_identity, remote_display, local_identity;
    int sub_state;
    unsigned term_code;
    pj_str_t term_reason;
    char buffer[2048];
} cpj_dialog_state;
/* Fills out from pjsua_buddy_get_dlg_event_info; PJ_ENOTSUP where the headers lack it. */
pj_status_t cpj_buddy_dialog_state(pjsua_buddy_id buddy_id, cpj_dialog_state *out);

#endif
