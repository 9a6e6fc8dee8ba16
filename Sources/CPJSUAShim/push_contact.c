/*
 * RFC 8599 push parameters on the REGISTER Contact only. pjsua's own route for this,
 * pjsua_acc_config.reg_contact_uri_params, re-parses a copy of the Contact
 * (update_regc_contact, pjsua_acc.c) with pjsip_parse_hdr over pool memory that is not
 * NUL-terminated: the scanner reads the byte past the end, and when leftover memory holds
 * ';' or ',' there the parse fails and pjsua asserts (seen on 2.12.1; 2.17 has the same
 * code). Instead the account carries the parameters in a private REGISTER header
 * (reg_hdr_list); this module, before the transport layer prints the request, takes that
 * header out and adds its parameters to the Contact URI, parsed by pjsip from a
 * NUL-terminated copy. The header never reaches the wire. Digest retries are made from the
 * already rewritten request, so they carry the parameters too.
 */
#include "CPJSUAShim.h"

#define CPJ_PUSH_PARAMS_HEADER "X-SwiftPJSUA-Contact-URI-Params"

/* The module's on_tx_request: moves the marker header's parameters into the Contact URI. */
static pj_status_t cpj_push_on_tx_request(pjsip_tx_data *tdata) {
    pj_str_t name = pj_str((char *)CPJ_PUSH_PARAMS_HEADER);
    pjsip_generic_string_hdr *marker;
    pjsip_contact_hdr *contact;
    pjsip_sip_uri *target;
    pjsip_sip_uri *carrier;
    pjsip_param *param;
    char *text;
    const char *prefix = "sip:x@x";
    pj_size_t prefix_len = 7;
    if (tdata->msg->type != PJSIP_REQUEST_MSG || tdata->msg->line.req.method.id != PJSIP_REGISTER_METHOD)
        return PJ_SUCCESS;
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
pj_status_t cpj_register_push_contact_module(void) {
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

/* The marker header's name, which the engine adds to the account's reg_hdr_list. */
pj_str_t cpj_push_params_header_name(void) { return pj_str((char *)CPJ_PUSH_PARAMS_HEADER); }
