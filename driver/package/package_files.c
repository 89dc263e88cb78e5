#include "package/package_files.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/name_map.h"
#include "plugin_elf.h"

/* Size, checksum and (when out_blake2b is not NULL) BLAKE2b-256 digest of
 * a regular file, read in chunks. */
static hetc_status_t hash_file(const char *path, uint64_t *out_bytes, uint64_t *out_hash, unsigned char *out_blake2b) {
  int fd;
  uint64_t size;
  HETC_RETURN_IF_ERROR(hetc_file_open_regular(path, &fd, &size));
  enum { CHUNK = 1 << 20 };
  unsigned char *buffer = malloc(CHUNK);
  if (!buffer) {
    close(fd);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "%s: checksum", path);
  }
  crypto_generichash_state digest;
  /* libsodium picks its implementations in sodium_init (idempotent). */
  if (out_blake2b && (sodium_init() < 0 || crypto_generichash_init(&digest, NULL, 0, 32) != 0)) {
    free(buffer);
    close(fd);
    return hetc_status_new(HETC_STATUS_INTERNAL, "%s: libsodium cannot hash", path);
  }
  uint64_t hash = HETC_FNV1A64_OFFSET, total = 0;
  ssize_t n;
  while ((n = read(fd, buffer, CHUNK)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    hash = hetc_fnv1a64(buffer, (uint64_t)n, hash);
    if (out_blake2b) crypto_generichash_update(&digest, buffer, (unsigned long long)n);
    total += (uint64_t)n;
  }
  int error = n < 0 ? errno : 0;
  free(buffer);
  close(fd);
  if (error) return hetc_status_new(HETC_STATUS_IO_ERROR, "%s: read failed: %s", path, strerror(error));
  if (out_blake2b) crypto_generichash_final(&digest, out_blake2b, 32);
  *out_bytes = total;
  *out_hash = hash;
  return NULL;
}

hetc_status_t hetc_package_file_digest(const char *path, unsigned char out_blake2b[32]) {
  uint64_t bytes, hash;
  return hash_file(path, &bytes, &hash, out_blake2b);
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in `dir` (not "." and ".."), sorted; the caller frees them
 * with free_names. */
static hetc_status_t list_dir(const char *dir, char ***out_names, int32_t *out_count) {
  *out_names = NULL;
  *out_count = 0;
  DIR *handle = opendir(dir);
  if (!handle) return hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot list: %s", dir, strerror(errno));
  char **names = NULL;
  int32_t count = 0, capacity = 0;
  hetc_status_t status = NULL;
  struct dirent *entry;
  while (!status && (entry = readdir(handle))) {
    if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, "..")) continue;
    if (count == capacity) {
      capacity = capacity ? capacity * 2 : 64;
      char **grown = realloc(names, (size_t)capacity * sizeof(char *));
      if (!grown) {
        status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "%s: listing", dir);
        break;
      }
      names = grown;
    }
    if (!(names[count] = strdup(entry->d_name)))
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "%s: listing", dir);
    else
      ++count;
  }
  closedir(handle);
  if (count) qsort(names, (size_t)count, sizeof(char *), by_name);
  *out_names = names;
  *out_count = count;
  return status;
}

static void free_names(char **names, int32_t count) {
  for (int32_t i = 0; i < count; ++i) free(names[i]);
  free(names);
}

static hetc_status_t add_file(hetc_plan_t *plan, const char *dir, const char *relative, int with_digests) {
  hetc_plan_file_t *grown = realloc(plan->files, (size_t)(plan->num_files + 1) * sizeof(*grown));
  if (!grown) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "package files");
  plan->files = grown;
  hetc_plan_file_t *file = &plan->files[plan->num_files];
  memset(file, 0, sizeof(*file));
  char *path = hetc_path_join(dir, relative);
  hetc_status_t status = path ? hash_file(path, &file->bytes, &file->fnv1a64, with_digests ? file->blake2b : NULL)
                              : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "package files");
  free(path);
  if (!status && !(file->path = strdup(relative)))
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "package files");
  if (!status) ++plan->num_files;
  return status;
}

hetc_status_t hetc_package_files_describe(hetc_plan_t *plan, const char *dir, int with_digests) {
  HETC_RETURN_IF_ERROR(add_file(plan, dir, HETC_PACKAGE_WEIGHTS, with_digests));
  char *kernels = hetc_path_join(dir, HETC_PACKAGE_KERNEL_DIR);
  if (!kernels) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "package files");
  char **names;
  int32_t count;
  hetc_status_t status = list_dir(kernels, &names, &count);
  for (int32_t i = 0; !status && i < count; ++i) {
    char relative[512];
    snprintf(relative, sizeof(relative), "%s/%s", HETC_PACKAGE_KERNEL_DIR, names[i]);
    if (!hetc_package_file_name_ok(relative))
      status = hetc_status_new(HETC_STATUS_INTERNAL,
                               "%s/%s: a file whose name a package cannot hold", kernels, names[i]);
    if (!status) status = add_file(plan, dir, relative, with_digests);
  }
  free_names(names, count);
  free(kernels);
  return status;
}

int hetc_package_file_name_ok(const char *path) {
  if (!strcmp(path, HETC_PACKAGE_WEIGHTS)) return 1;
  const size_t prefix = strlen(HETC_PACKAGE_KERNEL_DIR);
  if (strncmp(path, HETC_PACKAGE_KERNEL_DIR, prefix) != 0 || path[prefix] != '/') return 0;
  const char *name = path + prefix + 1;
  if (!name[0] || name[0] == '.' || strlen(name) > 255) return 0;
  for (const char *c = name; *c; ++c) {
    int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
             *c == '_' || *c == '-';
    if (!ok) return 0;
  }
  return 1;
}

/* Problems found so far: the first, or with `thorough` all of them, one
 * per line. */
typedef struct problems_t {
  int thorough;
  hetc_status_t status;
} problems_t;

static void problem(problems_t *p, const char *format, ...) HETC_PLUGIN_PRINTF(2, 3);
static void problem(problems_t *p, const char *format, ...) {
  if (p->status && !p->thorough) return;
  char message[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  if (!p->status) {
    p->status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s", message);
  } else {
    hetc_status_t joined = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s\n%s", hetc_status_message(p->status), message);
    hetc_status_free(p->status);
    p->status = joined;
  }
}

/* What an artifact's name says it is (api/package-format.md, the plugins'
 * files), as far as that can be told from its bytes without loading it:
 * `hetc verify` must not run a package's code to judge it. A name not in
 * the table is checked by its size and checksum only. */
static const struct {
  const char *suffix;
  int elf_type; /* -1: text */
  int elf_machine;
} formats[] = {
    {".so", ET_DYN, HPC_ELF_HOST},  /* vec: the kernel, for dlopen */
    {".o", ET_REL, HPC_ELF_HOST},   /* cpu: the object the JIT links */
    {".cubin", ET_NONE, EM_CUDA},   /* cuda: the device binary */
    {".c", -1, 0}, {".cl", -1, 0}, {".cu", -1, 0}, {".ptx", -1, 0}, {".ir-hash", -1, 0},
};

static void check_format(problems_t *p, const char *path, uint64_t bytes) {
  const size_t length = strlen(path);
  for (size_t f = 0; f < sizeof(formats) / sizeof(formats[0]); ++f) {
    const size_t suffix = strlen(formats[f].suffix);
    if (length <= suffix || strcmp(path + length - suffix, formats[f].suffix) != 0) continue;
    char why[1024];
    if (formats[f].elf_type >= 0) {
      if (hpc_elf_kind_problem(path, formats[f].elf_type, formats[f].elf_machine, why, sizeof(why)))
        problem(p, "%s", why);
      return;
    }
    char *text = NULL;
    size_t got = 0;
    hetc_status_t status = hetc_file_read_all(path, (size_t)bytes, &text, &got);
    const char *nul = status ? NULL : memchr(text, '\0', got);
    if (status) problem(p, "%s", hetc_status_message(status));
    else if (nul)
      problem(p, "%s: a %s file that is not text (a NUL byte at offset %llu)", path, formats[f].suffix,
              (unsigned long long)(nul - text));
    hetc_status_free(status);
    free(text);
    return;
  }
}

static void check_file(problems_t *p, const hetc_plan_file_t *file, const char *dir) {
  char *path = hetc_path_join(dir, file->path);
  if (!path) {
    problem(p, "out of memory");
    return;
  }
  /* weights.bin is read whole when the package opens, so only its size is
   * checked there; the kernels are small and go to dlopen or the JIT. */
  const int hashed = p->thorough || strcmp(file->path, HETC_PACKAGE_WEIGHTS) != 0;
  uint64_t bytes = 0, hash = 0;
  hetc_status_t status = NULL;
  if (hashed) {
    status = hash_file(path, &bytes, &hash, NULL);
  } else {
    int fd;
    status = hetc_file_open_regular(path, &fd, &bytes);
    if (!status) close(fd);
  }
  if (status) {
    problem(p, "%s", hetc_status_message(status));
    hetc_status_free(status);
  } else if (bytes != file->bytes) {
    problem(p, "%s: %llu bytes, the manifest says %llu: the package is damaged; recompile it", path,
            (unsigned long long)bytes, (unsigned long long)file->bytes);
  } else if (hashed && hash != file->fnv1a64) {
    problem(p, "%s: its checksum is %016llx, the manifest says %016llx: the package is damaged; recompile it",
            path, (unsigned long long)hash, (unsigned long long)file->fnv1a64);
  } else if (p->thorough) {
    check_format(p, path, bytes);
  }
  free(path);
}

/* Files under kernels/ that the manifest does not list. */
static void check_unlisted(problems_t *p, const hetc_plan_t *plan, const char *dir) {
  char *kernels = hetc_path_join(dir, HETC_PACKAGE_KERNEL_DIR);
  char **names = NULL;
  int32_t count = 0;
  hetc_status_t status =
      kernels ? list_dir(kernels, &names, &count) : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "package files");
  if (status) {
    problem(p, "%s", hetc_status_message(status));
    hetc_status_free(status);
  }
  const size_t prefix = strlen(HETC_PACKAGE_KERNEL_DIR) + 1;
  for (int32_t n = 0; n < count; ++n) {
    int listed = 0;
    for (int32_t i = 0; i < plan->num_files && !listed; ++i)
      listed = strlen(plan->files[i].path) > prefix && !strcmp(plan->files[i].path + prefix, names[n]);
    if (!listed) problem(p, "%s/%s: not listed in the manifest", kernels, names[n]);
  }
  free_names(names, count);
  free(kernels);
}

hetc_status_t hetc_package_files_check(const hetc_plan_t *plan, const char *dir, int thorough) {
  problems_t p = {thorough, NULL};
  for (int32_t i = 0; i < plan->num_files && (thorough || !p.status); ++i) check_file(&p, &plan->files[i], dir);
  if (thorough && plan->num_files) check_unlisted(&p, plan, dir);
  return p.status;
}
