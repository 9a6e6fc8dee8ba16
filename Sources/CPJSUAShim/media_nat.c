/*
 * STUN, ICE and TURN (media NAT traversal): pjsua_config's STUN server array, and a call's
 * media transport with its ICE state, which pjmedia returns as an untyped buffer and
 * arrays of anonymous structs that Swift cannot read.
 */
#include "CPJSUAShim.h"

/* The most STUN servers pjsua_config holds (the size of its stun_srv array). */
unsigned cpj_max_stun_servers(void) {
    pjsua_config *cfg = NULL;
    return (unsigned)(sizeof(cfg->stun_srv) / sizeof(cfg->stun_srv[0]));
}

/* Appends a STUN server to pjsua_config.stun_srv: Swift sees the fixed array as a tuple. */
void cpj_config_add_stun_server(pjsua_config *cfg, pj_str_t server) {
    if (cfg->stun_srv_cnt < cpj_max_stun_servers()) cfg->stun_srv[cfg->stun_srv_cnt++] = server;
}

/* A call's media transport of stream `med_idx` and, when it is ICE, its ICE state:
 * pjmedia_transport_info_get_spc_info returns an untyped buffer, which Swift cannot cast
 * safely. Sets *has_ice to 1 when the ICE part was found and copied into *ice. */
pj_status_t cpj_call_media_transport(
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
int cpj_ice_component(
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
void cpj_sockaddr_text(const pj_sockaddr *addr, char *buf, int len) {
    buf[0] = '\0';
    if (addr->addr.sa_family == pj_AF_INET() || addr->addr.sa_family == pj_AF_INET6()) {
        if (pj_sockaddr_has_addr(addr)) pj_sockaddr_print(addr, buf, len, 1 | 2);
    }
}
