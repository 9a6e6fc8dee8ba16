/*
 * The module CPJSIP on the pkg-config route: pjproject's public headers, nothing of ours.
 * CPJSUAShim (Sources/CPJSUAShim) includes this file, so clang imports it as this module
 * there and Swift sees each pjproject type once. The xcframework route has the same list in
 * Sources/CPJSIPBinary/include/CPJSIP.h.
 */
#ifndef SWIFT_PJSUA_CPJSIP_H
#define SWIFT_PJSUA_CPJSIP_H

/* pjproject's pkg-config file passes this as a -D flag, which SwiftPM filters out of
 * system-library targets; pjproject's headers need it to pick the autoconf'd config. */
#ifndef PJ_AUTOCONF
#define PJ_AUTOCONF 1
#endif

#include <pjsua-lib/pjsua.h>
#include <pjsip/sip_errno.h>
#include <pjlib-util/sha1.h>

#endif
