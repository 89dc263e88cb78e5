/* hetc/kit/artifact_file.h -- an artifact packaged as one text file that
 * names what it was built from, for plugins whose kernels are compiled into
 * the plugin (rebuilding one costs nothing, so the file only has to prove
 * that the package asks for the same kernel).
 *
 * artifact_emit writes the text; artifact_load builds the artifact from the
 * workload, template and config it is given, renders the same text and
 * compares: a missing, corrupt or stale file is INVALID_ARGUMENT naming the
 * file and the first line that differs, which `hetc run` reports as a bad
 * package. */
#ifndef HETC_KIT_ARTIFACT_FILE_H_
#define HETC_KIT_ARTIFACT_FILE_H_

#include <stddef.h>
#include <stdint.h>

#include <hetc/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes `text` to <dir>/<prefix><suffix> atomically (files.h). */
hetc_plugin_status_t hetc_kit_artifact_file_write(const char *dir, const char *prefix, const char *suffix,
                                                  const char *text);

/* Reads <dir>/<prefix><suffix> (refused unread above max_bytes) and checks
 * that it is exactly `expected`: num_lines lines, each ending in '\n',
 * line i named line_names[i] in messages ("format", "config", ...). The
 * first line is the format: a file whose first line differs is "not a
 * <plugin> artifact of this format"; a later line that differs says the
 * file "was emitted for another <name>", quoting both. */
hetc_plugin_status_t hetc_kit_artifact_file_expect(const char *dir, const char *prefix, const char *suffix,
                                                   const char *expected, const char *const *line_names,
                                                   int32_t num_lines, size_t max_bytes);

#ifdef __cplusplus
}
#endif

#endif /* HETC_KIT_ARTIFACT_FILE_H_ */
