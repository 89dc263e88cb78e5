/* Resize tap tables as source text (plugin_resize.h). */
#include "plugin_resize.h"

#include <stdio.h>
#include <string.h>

#include "hetc/kit/resize.h"

/* Values a line of a table holds, to keep the generated source readable. */
#define PER_LINE 16
/* Taps computed at a time, on the stack. */
#define CHUNK 256

static int narrow_index(int64_t n) { return n <= 65536; }

static int is_linear(const hetc_plugin_workload_t *wl) {
  return wl->params.resize.mode == HETC_PLUGIN_RESIZE_LINEAR;
}

uint64_t hpc_resize_table_bytes(const hetc_plugin_workload_t *wl) {
  uint64_t bytes = 0;
  for (int32_t dim = 2; dim < 4; ++dim) {
    const uint64_t m = (uint64_t)wl->output.shape[dim];
    bytes += m * (narrow_index(wl->inputs[0].shape[dim]) ? 2u : 4u);
    if (is_linear(wl)) bytes += m * 4u;
  }
  return bytes;
}

/* A float literal that reads back as exactly `v`: nine significant digits
 * identify every float, and the compilers round a literal with the f
 * suffix to the nearest float. A ".0" keeps an integral value a floating
 * literal ("0f" is not one). */
static void float_literal(char *buf, size_t size, float v) {
  snprintf(buf, size, "%.9g", (double)v);
  if (!strpbrk(buf, ".e")) strncat(buf, ".0", size - strlen(buf) - 1);
  strncat(buf, "f", size - strlen(buf) - 1);
}

/* One table of dim `dim`: its lo indices, or (weights) its weights. */
static void emit_table(hpc_strbuf_t *sb, const hetc_plugin_workload_t *wl, const char *qualifier, int32_t dim,
                       int weights) {
  const int64_t m = wl->output.shape[dim];
  const char *type = weights ? "float" : narrow_index(wl->inputs[0].shape[dim]) ? "unsigned short" : "int";
  hpc_strbuf_printf(sb, "%s %s resize_%s_%s[%lld] = {", qualifier, type, dim == 2 ? "row" : "col",
                    weights ? "weight" : "lo", (long long)m);
  hetc_kit_resize_tap_t taps[CHUNK];
  for (int64_t first = 0; first < m; first += CHUNK) {
    const int64_t count = m - first < CHUNK ? m - first : CHUNK;
    hetc_kit_resize_taps(wl, dim, first, count, taps);
    for (int64_t k = 0; k < count; ++k) {
      const int64_t j = first + k;
      hpc_strbuf_printf(sb, "%s", j == 0 ? "\n    " : j % PER_LINE == 0 ? ",\n    " : ", ");
      if (weights) {
        char literal[40];
        float_literal(literal, sizeof(literal), taps[k].weight);
        hpc_strbuf_printf(sb, "%s", literal);
      } else {
        hpc_strbuf_printf(sb, "%d", (int)taps[k].lo);
      }
    }
  }
  hpc_strbuf_printf(sb, "};\n");
}

void hpc_resize_emit_tables(hpc_strbuf_t *sb, const hetc_plugin_workload_t *wl, const char *qualifier) {
  for (int32_t dim = 2; dim < 4; ++dim) {
    emit_table(sb, wl, qualifier, dim, 0);
    if (is_linear(wl)) emit_table(sb, wl, qualifier, dim, 1);
  }
}

void hpc_resize_hi_expr(char *buf, size_t size, const char *lo, int64_t n) {
  if (n <= 1)
    snprintf(buf, size, "%s", lo);
  else
    snprintf(buf, size, "(%s < %lld ? %s + 1 : %s)", lo, (long long)(n - 1), lo, lo);
}
