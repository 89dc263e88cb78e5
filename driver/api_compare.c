/* The public API's comparison of devices (hetc/hetc.h): compare/'s result,
 * plain data inside libhetc, handed out opaque, and its renderers chosen by
 * format. */
#include <stdlib.h>

#include "compare/compare.h"

hetc_status_t hetc_compare_model(hetc_context_t *context, const hetc_model_t *model,
                                 const hetc_compare_options_t *options, hetc_compare_result_t **out_result) {
  hetc_compare_result_t *result = calloc(1, sizeof(*result));
  if (!result) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compare");
  hetc_status_t status = hetc_compare_run(context, model, options, result);
  if (status) {
    hetc_compare_result_destroy(result);
    return status;
  }
  *out_result = result;
  return NULL;
}

void hetc_compare_result_destroy(hetc_compare_result_t *result) {
  if (!result) return;
  hetc_compare_result_free(result);
  free(result);
}

typedef hetc_status_t (*renderer_t)(const hetc_compare_result_t *, FILE *);

static renderer_t renderer(hetc_compare_format_t format) {
  switch (format) {
    case HETC_COMPARE_TEXT: return hetc_compare_write_text;
    case HETC_COMPARE_CSV: return hetc_compare_write_csv;
    case HETC_COMPARE_JSON: return hetc_compare_write_json;
    case HETC_COMPARE_HTML: return hetc_compare_write_html;
  }
  return NULL;
}

hetc_status_t hetc_compare_write(const hetc_compare_result_t *result, hetc_compare_format_t format, FILE *out) {
  const renderer_t write = renderer(format);
  if (!write) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "compare: no report format %d", (int)format);
  return write(result, out);
}

hetc_status_t hetc_compare_write_file(const hetc_compare_result_t *result, hetc_compare_format_t format,
                                      const char *path) {
  const renderer_t write = renderer(format);
  if (!write) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "compare: no report format %d", (int)format);
  return hetc_compare_save(result, write, path);
}
