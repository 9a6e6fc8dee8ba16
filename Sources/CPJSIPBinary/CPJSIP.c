/* SwiftPM needs one source file in a C target; this one only lists pjproject's headers. */
#include "CPJSIP.h"
