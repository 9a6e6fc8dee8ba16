import CPJSUAShim

extension MediaStatus {
    init(native: pjsua_call_media_status) {
        switch native {
        case PJSUA_CALL_MEDIA_ACTIVE: self = .active
        case PJSUA_CALL_MEDIA_LOCAL_HOLD: self = .localHold
        case PJSUA_CALL_MEDIA_REMOTE_HOLD: self = .remoteHold
        case PJSUA_CALL_MEDIA_ERROR: self = .error
        default: self = .unused
        }
    }
}

extension MediaDirection {
    init(native: pjmedia_dir) {
        switch native {
        case PJMEDIA_DIR_ENCODING: self = .send
        case PJMEDIA_DIR_DECODING: self = .receive
        case PJMEDIA_DIR_ENCODING_DECODING: self = .sendReceive
        default: self = .inactive
        }
    }
}

extension MediaType {
    init(native: pjmedia_type) {
        switch native {
        case PJMEDIA_TYPE_AUDIO: self = .audio
        case PJMEDIA_TYPE_VIDEO: self = .video
        default: self = .other
        }
    }
}
