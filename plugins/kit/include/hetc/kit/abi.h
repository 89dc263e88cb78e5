/* hetc/kit/abi.h -- which ABI the header compiled against speaks, for
 * sources that build against several (the kit, the sample plugin).
 *
 * Major 2 keeps everything of 1.7, so "at least 1.N" holds for every 2.x
 * header; a bare `HETC_PLUGIN_ABI_MINOR >= N` would not (2.0's minor is 0). */
#ifndef HETC_KIT_ABI_H_
#define HETC_KIT_ABI_H_

#include <hetc/plugin.h>

#define HETC_KIT_ABI_AT_LEAST(major, minor)                                    \
  (HETC_PLUGIN_ABI_MAJOR > (major) ||                                          \
   (HETC_PLUGIN_ABI_MAJOR == (major) && HETC_PLUGIN_ABI_MINOR >= (minor)))

#endif /* HETC_KIT_ABI_H_ */
