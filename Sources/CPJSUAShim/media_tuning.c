/*
 * Opus settings. pjsua_codec_set_param alone does not reach the encoder: pjmedia's Opus
 * codec opens its encoder with the expected loss and complexity of its module-wide
 * configuration, which only pjmedia_codec_opus_set_default_param changes. That function
 * exists only in builds with Opus, so it is called here behind the build option.
 */
#include "CPJSUAShim.h"

pj_bool_t cpj_opus_available(void) {
#if defined(PJMEDIA_HAS_OPUS_CODEC) && PJMEDIA_HAS_OPUS_CODEC != 0
    return PJ_TRUE;
#else
    return PJ_FALSE;
#endif
}

pj_status_t cpj_opus_configure(unsigned bit_rate, unsigned complexity, unsigned ptime_ms, pj_bool_t dtx,
                               pj_bool_t inband_fec, unsigned packet_loss) {
#if defined(PJMEDIA_HAS_OPUS_CODEC) && PJMEDIA_HAS_OPUS_CODEC != 0
    pjmedia_codec_opus_config config;
    pjmedia_codec_param param;
    const pjmedia_codec_info *info[1];
    unsigned count = 1;
    const pj_str_t opus = {"opus", 4};
    pjmedia_codec_mgr *manager = pjmedia_endpt_get_codec_mgr(pjsua_get_pjmedia_endpt());
    pj_status_t status;

    if (manager == NULL) return PJ_EINVALIDOP;
    status = pjmedia_codec_mgr_find_codecs_by_id(manager, &opus, &count, info, NULL);
    if (status != PJ_SUCCESS) return status;
    status = pjmedia_codec_mgr_get_default_param(manager, info[0], &param);
    if (status != PJ_SUCCESS) return status;
    status = pjmedia_codec_opus_get_config(&config);
    if (status != PJ_SUCCESS) return status;

    config.bit_rate = bit_rate;
    config.complexity = complexity;
    config.frm_ptime = ptime_ms;
    config.packet_loss = packet_loss;
    /* What this end offers in SDP (useinbandfec, usedtx) and its decoder's loss concealment. */
    param.setting.plc = inband_fec ? 1 : 0;
    param.setting.vad = dtx ? 1 : 0;
#if PJ_VERSION_NUM >= 0x020E0000
    /* Newer pjmedia opens the encoder with these per-codec fields (absent in 2.12); older
     * ones read the module configuration above. */
    param.setting.packet_loss = packet_loss;
    param.setting.complexity = complexity;
#endif
    return pjmedia_codec_opus_set_default_param(&config, &param);
#else
    PJ_UNUSED_ARG(bit_rate);
    PJ_UNUSED_ARG(complexity);
    PJ_UNUSED_ARG(ptime_ms);
    PJ_UNUSED_ARG(dtx);
    PJ_UNUSED_ARG(inband_fec);
    PJ_UNUSED_ARG(packet_loss);
    return PJ_ENOTSUP;
#endif
}
