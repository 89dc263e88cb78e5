/* libFuzzer target for the package manifest reader (api/package-format.md):
 * arbitrary bytes as a package's manifest.json.
 *
 * The reader must never crash, leak or read out of bounds; a rejection must
 * be BAD_INPUT naming manifest.json. A manifest it accepts must describe a
 * plan that computes its outputs (package/plan_order.c says so again), and
 * must survive a round trip: written back and read again, it serialises to
 * the same text. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "package/plan.h"
#include "package/plan_order.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Two package directories under /dev/shm (or the working directory): one
 * for the input, one for the round trip. */
static char input_dir[256], again_dir[256];

static void check(int ok, const char *what, const char *message) {
  if (ok) return;
  fprintf(stderr, "fuzz_package_manifest: %s: %s\n", what, message ? message : "");
  abort();
}

static void make_dirs(void) {
  if (input_dir[0]) return;
  const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : ".";
  snprintf(input_dir, sizeof(input_dir), "%s/fuzz-manifest-%d-in", base, (int)getpid());
  snprintf(again_dir, sizeof(again_dir), "%s/fuzz-manifest-%d-again", base, (int)getpid());
  hetc_dir_remove_tree(input_dir);
  hetc_dir_remove_tree(again_dir);
  check(mkdir(input_dir, 0755) == 0 && mkdir(again_dir, 0755) == 0, "cannot make the package directories", base);
}

static char *read_text(const char *dir) {
  char *path = hetc_path_join(dir, HETC_PACKAGE_MANIFEST), *text = NULL;
  size_t length = 0;
  hetc_status_t status = hetc_file_read_all(path, HETC_PACKAGE_MAX_MANIFEST_BYTES, &text, &length);
  check(status == NULL, "cannot read back a written manifest", hetc_status_message(status));
  free(path);
  return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  make_dirs();
  char *path = hetc_path_join(input_dir, HETC_PACKAGE_MANIFEST);
  hetc_status_t status = hetc_file_write_all(path, data, size);
  check(status == NULL, "cannot write the input", hetc_status_message(status));
  hetc_plan_t *plan = NULL;
  status = hetc_plan_read_manifest(input_dir, &plan);
  if (status) {
    const char *message = hetc_status_message(status);
    check(hetc_status_code(status) == HETC_STATUS_BAD_INPUT, "unexpected status code", message);
    check(strncmp(message, path, strlen(path)) == 0, "message does not name manifest.json", message);
    hetc_status_free(status);
    free(path);
    return 0;
  }
  free(path);
  status = hetc_plan_check_order(plan);
  check(status == NULL, "accepted a plan that does not compute its outputs", hetc_status_message(status));
  status = hetc_plan_write_manifest(plan, again_dir);
  check(status == NULL, "cannot write an accepted plan", hetc_status_message(status));
  hetc_plan_free(plan);
  char *first = read_text(again_dir);
  plan = NULL;
  status = hetc_plan_read_manifest(again_dir, &plan);
  check(status == NULL, "refused a manifest it wrote itself", hetc_status_message(status));
  status = hetc_plan_write_manifest(plan, again_dir);
  check(status == NULL, "cannot write an accepted plan", hetc_status_message(status));
  hetc_plan_free(plan);
  char *second = read_text(again_dir);
  check(strcmp(first, second) == 0, "a round trip changed the manifest", first);
  free(first);
  free(second);
  return 0;
}
