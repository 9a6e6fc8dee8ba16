/* SwiftPM needs one source file in a C target; the shim is header-only. */
#include "CPJSIP.h"
