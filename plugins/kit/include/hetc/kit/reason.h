/* hetc/kit/reason.h -- checks that explain a refusal without creating a
 * status.
 *
 * supports() answers 0 or 1 and must not leave a status behind, while
 * supports_why(), define_space and build need the same check's reason as a
 * status: the kit's checks therefore write their reason into a caller's
 * buffer and return a status code, and each caller decides what to make of
 * it. */
#ifndef HETC_KIT_REASON_H_
#define HETC_KIT_REASON_H_

#include <stddef.h>
#include <stdint.h>

#include <hetc/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a check writes why it refused: `size` bytes at `text`, owned by the
 * caller. A NULL reason, or size 0, asks for the code only. */
typedef struct hetc_kit_reason_t {
  char *text;
  size_t size;
} hetc_kit_reason_t;

/* Writes the formatted reason (cut to fit, always terminated) and returns
 * `code`, so that a check can `return hetc_kit_refuse(r, code, ...)`. */
int32_t hetc_kit_refuse(hetc_kit_reason_t *reason, int32_t code, const char *format, ...)
    HETC_PLUGIN_PRINTF(3, 4);

#ifdef __cplusplus
}
#endif

#endif /* HETC_KIT_REASON_H_ */
