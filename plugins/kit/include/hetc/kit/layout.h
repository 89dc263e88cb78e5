/* hetc/kit/layout.h -- tensor sizes and the physical layouts of
 * hetc_plugin_layout_t: where an element lies, how many floats a tensor
 * occupies, how a layout is written in messages. Pure functions. */
#ifndef HETC_KIT_LAYOUT_H_
#define HETC_KIT_LAYOUT_H_

#include <stddef.h>
#include <stdint.h>

#include <hetc/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ceil(a / b) for a >= 0, b > 0. */
int64_t hetc_kit_ceil_div(int64_t a, int64_t b);

/* Elements of the logical shape. */
int64_t hetc_kit_logical_count(const hetc_plugin_tensor_t *t);
/* Elements a tensor of t's logical shape occupies in `layout`: NCHWc pads
 * the channels to a whole block. */
int64_t hetc_kit_physical_count(const hetc_plugin_tensor_t *t, hetc_plugin_layout_t layout);

/* Every 4-d layout as a channel block b: element (n, c, h, w) lies at
 * (((n*ceil(C/b) + c/b)*H + h)*W + w)*b + c%b. ROW_MAJOR is b = 1, NHWC is
 * b = C, NCHWC is its block. */
int64_t hetc_kit_layout_block(hetc_plugin_layout_t layout, int64_t channels);
/* Where element `logical_index` (in row-major order of t's logical shape)
 * lies in t, laid out as t->layout says (a layout other than row-major is
 * rank 4). */
int64_t hetc_kit_element_offset(const hetc_plugin_tensor_t *t, int64_t logical_index);

int hetc_kit_layout_equal(hetc_plugin_layout_t a, hetc_plugin_layout_t b);
hetc_plugin_layout_t hetc_kit_layout_row_major(void);
hetc_plugin_layout_t hetc_kit_layout_nchwc(int64_t block);
/* "NCHW" (rank 4) or "row-major", "NCHW16c", "NHWC", into buf. */
void hetc_kit_layout_text(hetc_plugin_layout_t layout, int32_t rank, char *buf, size_t size);

/* Same rank and logical shape (layouts aside). */
int hetc_kit_same_shape(const hetc_plugin_tensor_t *a, const hetc_plugin_tensor_t *b);

#ifdef __cplusplus
}
#endif

#endif /* HETC_KIT_LAYOUT_H_ */
