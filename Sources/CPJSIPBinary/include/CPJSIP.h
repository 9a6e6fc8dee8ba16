/* Apple platforms: the same shim, over the headers of the PJSIP xcframework. */
#include "../../CPJSIP/shim.h"
