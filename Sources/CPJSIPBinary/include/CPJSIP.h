/*
 * The module CPJSIP on the xcframework route (Apple platforms): pjproject's public headers,
 * as the PJSIP xcframework ships them, nothing of ours. The same list as
 * Sources/CPJSIP/CPJSIP.h, the pkg-config route's header.
 */
#ifndef SWIFT_PJSUA_CPJSIP_H
#define SWIFT_PJSUA_CPJSIP_H

/* The xcframework's headers were configured by autoconf; they pick that config with this. */
#ifndef PJ_AUTOCONF
#define PJ_AUTOCONF 1
#endif

#include <pjsua-lib/pjsua.h>
#include <pjsip/sip_errno.h>
#include <pjlib-util/sha1.h>

#endif
