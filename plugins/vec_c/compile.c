/* The host C compiler: invoking it, caching objects by source hash (in
 * process and on disk), loading them with dlopen.
 *
 * Compiler: HETC_VEC_CC (default "cc", may carry arguments, e.g.
 * "ccache gcc"); flags: HETC_VEC_CFLAGS (default "-O3 -march=native
 * -fopenmp-simd": the kernels' `#pragma omp simd` hints without an OpenMP
 * runtime, since their parallel loops run on the host's pool, emit.c),
 * always followed by -shared -fPIC -nostdlib and, at link, -lm: a kernel
 * calls nothing of libc's that the process it is loaded into lacks
 * (memset, memcpy at most, bound when it is loaded), and leaving out the
 * start files and libc halved the link (18 ms to 9 of a small kernel's
 * 58 ms; the suite builds thousands).
 * Disk cache: ${XDG_CACHE_HOME:-$HOME/.cache}/hetc/vec/<key>.so where key is
 * the FNV-1a 64 hash of the source seeded with a hash of the compiler
 * command, its version and the CPU model (-march=native code is only valid
 * on the CPU that made it). Files are written under a temp name and
 * renamed, so concurrent processes never see a partial object. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plugin_elf.h"
#include "plugin_files.h"
#include "vec.h"

extern char **environ;

#define DEFAULT_CFLAGS "-O3 -march=native -fopenmp-simd"
/* Zero-reference objects kept loaded beyond this many are unloaded. */
#define MAX_OBJECTS 256
/* Compiler output kept in a BUILD_FAILED message. */
#define MAX_LOG 16384

static char *dup_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static char *join_path(const char *a, const char *b) {
  size_t na = strlen(a), nb = strlen(b);
  char *p = malloc(na + nb + 2);
  if (!p) return NULL;
  memcpy(p, a, na);
  p[na] = '/';
  memcpy(p + na + 1, b, nb + 1);
  return p;
}

/* Splits on blanks into a NULL-terminated argv with `extra` free slots
 * at the end. */
static char **split_words(const char *text, int32_t extra, int32_t *out_count) {
  int32_t count = 0;
  for (const char *p = text; *p;) {
    while (*p == ' ' || *p == '\t') ++p;
    if (!*p) break;
    ++count;
    while (*p && *p != ' ' && *p != '\t') ++p;
  }
  char **argv = calloc((size_t)(count + extra + 1), sizeof(char *));
  if (!argv) return NULL;
  int32_t i = 0;
  for (const char *p = text; *p;) {
    while (*p == ' ' || *p == '\t') ++p;
    if (!*p) break;
    const char *start = p;
    while (*p && *p != ' ' && *p != '\t') ++p;
    argv[i] = malloc((size_t)(p - start) + 1);
    if (!argv[i]) {
      for (int32_t j = 0; j < i; ++j) free(argv[j]);
      free(argv);
      return NULL;
    }
    memcpy(argv[i], start, (size_t)(p - start));
    argv[i][p - start] = '\0';
    ++i;
  }
  *out_count = count;
  return argv;
}

static const char *compiler_text(void) {
  const char *cc = getenv("HETC_VEC_CC");
  return cc && *cc ? cc : "cc";
}

/* 1 when `name` is an executable file (a path) or found on PATH. */
static int find_executable(const char *name) {
  if (strchr(name, '/')) return access(name, X_OK) == 0;
  const char *path = getenv("PATH");
  if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
  char buf[4096];
  for (const char *p = path; *p;) {
    const char *end = strchr(p, ':');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n == 0) {
      snprintf(buf, sizeof(buf), "./%s", name);
    } else {
      snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, p, name);
    }
    struct stat st;
    if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0) return 1;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}

hetc_plugin_status_t vec_toolchain_probe(void) {
  const char *cc = compiler_text();
  int32_t count = 0;
  char **argv = split_words(cc, 0, &count);
  if (!argv)
    return vec_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "vec: out of memory");
  int found = count > 0 && find_executable(argv[0]);
  hetc_plugin_status_t s = NULL;
  if (!found)
    s = vec_status(HETC_PLUGIN_STATUS_UNAVAILABLE,
                   "vec: C compiler '%s' (HETC_VEC_CC, default cc) not found "
                   "on PATH",
                   count > 0 ? argv[0] : cc);
  for (int32_t i = 0; i < count; ++i) free(argv[i]);
  free(argv);
  return s;
}

/* Runs argv with stdout and stderr into log_path; returns the exit status
 * (-1 when it could not start, with errno text in the log). */
static int run_command(char *const *argv, const char *log_path) {
  posix_spawn_file_actions_t actions;
  if (posix_spawn_file_actions_init(&actions) != 0) return -1;
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log_path,
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    FILE *f = fopen(log_path, "w");
    if (f) {
      fprintf(f, "cannot start %s: %s\n", argv[0], strerror(rc));
      fclose(f);
    }
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static uint64_t next_serial(vec_toolchain_t *tc) {
  pthread_mutex_lock(&tc->lock);
  uint64_t n = tc->counter++;
  pthread_mutex_unlock(&tc->lock);
  return n;
}

/* A private scratch directory under $TMPDIR (or /tmp) into buf; 0 on
 * success. Every user removes its own at once, so nothing is left behind
 * even when an instance is never destroyed. */
static int scratch_dir(char *buf, size_t size) {
  const char *tmp = getenv("TMPDIR");
  snprintf(buf, size, "%s/hetc-vec-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
  return mkdtemp(buf) ? 0 : -1;
}

/* Compiler identity for the fingerprint: "gcc-12.2.0", "clang-16.0.6", or
 * the first line of --version. */
static char *compiler_version(vec_toolchain_t *tc) {
  char dir[4096], log[4200];
  if (scratch_dir(dir, sizeof(dir)) != 0) return NULL;
  snprintf(log, sizeof(log), "%s/version.log", dir);
  char *argv[3] = {tc->argv[0], "--version", NULL};
  int rc = run_command(argv, log);
  char *text = rc == 0 ? hpc_read_file(log, NULL) : NULL;
  unlink(log);
  rmdir(dir);
  if (!text) return NULL;
  char *nl = strchr(text, '\n');
  int is_gcc = strstr(text, "Free Software Foundation") != NULL;
  if (nl) *nl = '\0';
  char *result = NULL;
  char *clang = strstr(text, "clang version ");
  if (clang) {
    char ver[64] = "";
    sscanf(clang + 14, "%63s", ver);
    result = malloc(strlen(ver) + 8);
    if (result) sprintf(result, "clang-%s", ver);
  } else if (is_gcc) {
    /* The last blank-separated token of the first line is the version. */
    char *last = strrchr(text, ' ');
    const char *ver = last ? last + 1 : text;
    result = malloc(strlen(ver) + 8);
    if (result) sprintf(result, "gcc-%s", ver);
  } else {
    result = dup_string(text);
  }
  free(text);
  return result;
}

hetc_plugin_status_t vec_toolchain_init(vec_toolchain_t *tc, const char *cpu_key) {
  memset(tc, 0, sizeof(*tc));
  if (pthread_mutex_init(&tc->lock, NULL) != 0)
    return vec_status(HETC_PLUGIN_STATUS_INTERNAL, "vec: mutex init failed");
  hetc_plugin_status_t s = vec_toolchain_probe();
  if (s) {
    pthread_mutex_destroy(&tc->lock);
    return s;
  }
  const char *flags = getenv("HETC_VEC_CFLAGS");
  if (!flags) flags = DEFAULT_CFLAGS;
  char command[4096];
  snprintf(command, sizeof(command), "%s %s -shared -fPIC -nostdlib", compiler_text(), flags);
  tc->command_text = dup_string(command);
  /* Slots for -o OUT SRC -lm. */
  tc->argv = split_words(command, 4, &tc->argc);
  if (!tc->command_text || !tc->argv) {
    vec_toolchain_fini(tc);
    return vec_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "vec: out of memory");
  }
  tc->version = compiler_version(tc);
  if (!tc->version) {
    vec_toolchain_fini(tc);
    return vec_status(HETC_PLUGIN_STATUS_UNAVAILABLE,
                      "vec: C compiler '%s' did not answer --version", compiler_text());
  }
  tc->cache_dir = hpc_cache_dir("vec");
  if (!tc->cache_dir && vec_host && vec_host->log)
    vec_host->log(HETC_PLUGIN_LOG_INFO, VEC_PLUGIN_NAME,
                  "no writable cache directory; compiled kernels are not kept "
                  "across runs");
  uint64_t seed = HPC_FNV1A64_INIT;
  seed = hpc_fnv1a64(tc->command_text, strlen(tc->command_text) + 1, seed);
  seed = hpc_fnv1a64(tc->version, strlen(tc->version) + 1, seed);
  seed = hpc_fnv1a64(cpu_key, strlen(cpu_key) + 1, seed);
  seed = hpc_fnv1a64(VEC_PLUGIN_VERSION, sizeof(VEC_PLUGIN_VERSION), seed);
  tc->key_seed = seed;
  return NULL;
}

void vec_toolchain_fini(vec_toolchain_t *tc) {
  vec_object_t *o = tc->objects;
  while (o) {
    vec_object_t *next = o->next;
    if (o->handle) dlclose(o->handle);
    free(o->path);
    free(o);
    o = next;
  }
  tc->objects = NULL;
  if (tc->argv) {
    for (int32_t i = 0; i < tc->argc; ++i) free(tc->argv[i]);
    free(tc->argv);
  }
  free(tc->command_text);
  free(tc->version);
  free(tc->cache_dir);
  pthread_mutex_destroy(&tc->lock);
  memset(tc, 0, sizeof(*tc));
}

hetc_plugin_status_t vec_toolchain_compile_to(vec_toolchain_t *tc, const char *source,
                                              size_t length, const char *so_path,
                                              int32_t fail_code) {
  uint64_t n = next_serial(tc);
  char dir[4096], src[4200], log[4200], out[4200];
  if (scratch_dir(dir, sizeof(dir)) != 0) {
    int err = errno;
    return vec_status(fail_code, "vec: cannot create a directory like %s: %s", dir,
                      strerror(err));
  }
  snprintf(src, sizeof(src), "%s/kernel.c", dir);
  snprintf(log, sizeof(log), "%s/compiler.log", dir);
  snprintf(out, sizeof(out), "%s.tmp.%ld.%llu", so_path, (long)getpid(),
           (unsigned long long)n);
  if (hetc_kit_write_file_atomic(src, source, length) != 0) {
    int err = errno;
    unlink(src);
    rmdir(dir);
    return vec_status(fail_code, "vec: writing %s: %s", src, strerror(err));
  }
  /* argv: the command, then -o OUT SRC -lm (slots reserved at init). */
  char *argv[256];
  int32_t argc = tc->argc < 250 ? tc->argc : 250;
  for (int32_t i = 0; i < argc; ++i) argv[i] = tc->argv[i];
  argv[argc] = "-o";
  argv[argc + 1] = out;
  argv[argc + 2] = src;
  argv[argc + 3] = "-lm";
  argv[argc + 4] = NULL;
  int rc = run_command(argv, log);
  hetc_plugin_status_t s = NULL;
  if (rc != 0) {
    size_t log_length = 0;
    char *text = hpc_read_file(log, &log_length);
    const char *shown = text ? text : "(no output)";
    if (log_length > MAX_LOG) shown = text + log_length - MAX_LOG;
    /* The command may be the user's: say where it came from. */
    const char *cc = getenv("HETC_VEC_CC"), *flags = getenv("HETC_VEC_CFLAGS");
    char origin[512] = "";
    if ((cc && *cc) || flags)
      snprintf(origin, sizeof(origin), " (set by%s%s%s%s%s%s)", cc && *cc ? " HETC_VEC_CC='" : "",
               cc && *cc ? cc : "", cc && *cc ? "'" : "", flags ? " HETC_VEC_CFLAGS='" : "", flags ? flags : "",
               flags ? "'" : "");
    s = vec_status(fail_code,
                   "vec: compiling a kernel failed: `%s -o %s %s -lm` exited with %d%s:\n%s",
                   tc->command_text, out, src, rc, origin, shown);
    free(text);
    unlink(out);
  } else if (rename(out, so_path) != 0) {
    int err = errno;
    unlink(out);
    s = vec_status(fail_code, "vec: renaming to %s: %s", so_path, strerror(err));
  }
  unlink(log);
  unlink(src);
  rmdir(dir);
  return s;
}

static hetc_plugin_status_t load(const char *path, const char *symbol, int32_t fail_code,
                                 void **out_handle, void **out_symbol) {
  char problem[512];
  if (hpc_elf_problem(path, problem, sizeof(problem)))
    return vec_status(fail_code, "vec: %s", problem);
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *err = dlerror();
    return vec_status(fail_code, "vec: dlopen %s: %s", path, err ? err : "unknown error");
  }
  void *fn = dlsym(handle, symbol);
  if (!fn) {
    dlclose(handle);
    return vec_status(fail_code, "vec: %s has no symbol %s", path, symbol);
  }
  *out_handle = handle;
  *out_symbol = fn;
  return NULL;
}

/* Loads without creating a status when it fails (for probing the disk
 * cache, where a failure only means "recompile"). */
static int try_load(const char *path, const char *symbol, void **out_handle,
                    void **out_symbol) {
  char problem[512];
  if (access(path, R_OK) != 0 || hpc_elf_problem(path, problem, sizeof(problem))) return 0;
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) return 0;
  void *fn = dlsym(handle, symbol);
  if (!fn) {
    dlclose(handle);
    return 0;
  }
  *out_handle = handle;
  *out_symbol = fn;
  return 1;
}

static vec_object_t *find_locked(vec_toolchain_t *tc, uint64_t key) {
  for (vec_object_t *o = tc->objects; o; o = o->next)
    if (o->key == key && key != 0) return o;
  return NULL;
}

static hetc_plugin_status_t add_object(vec_toolchain_t *tc, uint64_t key, const char *path,
                                       void *handle, void *symbol,
                                       vec_object_t **out_object) {
  vec_object_t *o = calloc(1, sizeof(*o));
  char *p = path ? dup_string(path) : NULL;
  if (!o || (path && !p)) {
    free(o);
    free(p);
    dlclose(handle);
    return vec_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "vec: out of memory");
  }
  o->key = key;
  o->path = p;
  o->handle = handle;
  o->symbol = symbol;
  o->refs = 1;
  pthread_mutex_lock(&tc->lock);
  vec_object_t *existing = key ? find_locked(tc, key) : NULL;
  if (existing) {
    /* Another thread loaded the same source meanwhile: share its object. */
    existing->refs++;
    pthread_mutex_unlock(&tc->lock);
    dlclose(handle);
    free(p);
    free(o);
    *out_object = existing;
    return NULL;
  }
  o->next = tc->objects;
  tc->objects = o;
  pthread_mutex_unlock(&tc->lock);
  *out_object = o;
  return NULL;
}

hetc_plugin_status_t vec_toolchain_get(vec_toolchain_t *tc, const char *source,
                                       size_t length, const char *symbol, int32_t fail_code,
                                       vec_object_t **out_object) {
  uint64_t key = hpc_fnv1a64(source, length, tc->key_seed);
  if (key == 0) key = 1;
  pthread_mutex_lock(&tc->lock);
  vec_object_t *hit = find_locked(tc, key);
  if (hit) {
    hit->refs++;
    pthread_mutex_unlock(&tc->lock);
    *out_object = hit;
    return NULL;
  }
  pthread_mutex_unlock(&tc->lock);

  char name[32];
  snprintf(name, sizeof(name), "%016llx.so", (unsigned long long)key);
  void *handle = NULL, *fn = NULL;
  hetc_plugin_status_t s = NULL;
  if (tc->cache_dir) {
    char *path = join_path(tc->cache_dir, name);
    if (!path) return vec_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "vec: out of memory");
    if (!try_load(path, symbol, &handle, &fn)) {
      s = vec_toolchain_compile_to(tc, source, length, path, fail_code);
      if (!s) s = load(path, symbol, fail_code, &handle, &fn);
    }
    if (!s) s = add_object(tc, key, path, handle, fn, out_object);
    free(path);
    return s;
  }
  /* No disk cache: build in a scratch directory and unlink the object once
   * it is mapped (artifact_emit then compiles it again into the package). */
  char dir[4096], path[4200];
  if (scratch_dir(dir, sizeof(dir)) != 0) {
    int err = errno;
    return vec_status(fail_code, "vec: cannot create a directory like %s: %s", dir,
                      strerror(err));
  }
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  s = vec_toolchain_compile_to(tc, source, length, path, fail_code);
  if (!s) s = load(path, symbol, fail_code, &handle, &fn);
  unlink(path);
  rmdir(dir);
  if (!s) s = add_object(tc, key, NULL, handle, fn, out_object);
  return s;
}

int vec_toolchain_try_open(vec_toolchain_t *tc, const char *path, const char *symbol,
                           vec_object_t **out_object) {
  void *handle = NULL, *fn = NULL;
  if (!try_load(path, symbol, &handle, &fn)) return 0;
  vec_object_t *o = calloc(1, sizeof(*o));
  char *p = dup_string(path);
  if (!o || !p) {
    free(o);
    free(p);
    dlclose(handle);
    return 0;
  }
  o->path = p;
  o->handle = handle;
  o->symbol = fn;
  o->refs = 1;
  pthread_mutex_lock(&tc->lock);
  o->next = tc->objects;
  tc->objects = o;
  pthread_mutex_unlock(&tc->lock);
  *out_object = o;
  return 1;
}

void vec_toolchain_release(vec_toolchain_t *tc, vec_object_t *object) {
  if (!object) return;
  pthread_mutex_lock(&tc->lock);
  if (--object->refs > 0) {
    pthread_mutex_unlock(&tc->lock);
    return;
  }
  /* Keep cached objects for reuse unless there are too many; objects
   * opened from a package are not shared and go at once. */
  int total = 0;
  for (vec_object_t *o = tc->objects; o; o = o->next) ++total;
  int drop = object->key == 0 || total > MAX_OBJECTS;
  if (drop) {
    for (vec_object_t **pp = &tc->objects; *pp; pp = &(*pp)->next)
      if (*pp == object) {
        *pp = object->next;
        break;
      }
  }
  pthread_mutex_unlock(&tc->lock);
  if (drop) {
    dlclose(object->handle);
    free(object->path);
    free(object);
  }
}
