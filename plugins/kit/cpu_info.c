/* The host machine from /proc/cpuinfo, sysfs and sysconf (hetc/kit/cpu_info.h). */
#define _POSIX_C_SOURCE 200809L /* sysconf */
#include "hetc/kit/cpu_info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The value of the first of `keys` that /proc/cpuinfo names, preferring
 * earlier keys (x86 says "model name"; other machines use the others). */
void hetc_kit_cpu_model(char *buf, size_t size) {
  static const char *const keys[] = {"model name", "Model", "cpu model", "uarch", "cpu"};
  enum { NUM_KEYS = sizeof(keys) / sizeof(keys[0]) };
  char best[256] = "unknown CPU", line[1024];
  size_t best_key = NUM_KEYS;
  FILE *f = fopen("/proc/cpuinfo", "r");
  while (f && best_key > 0 && fgets(line, sizeof(line), f)) {
    char *colon = strchr(line, ':');
    if (!colon) continue;
    for (size_t k = 0; k < best_key; ++k) {
      const size_t n = strlen(keys[k]);
      if (strncmp(line, keys[k], n) != 0) continue;
      /* The key ends at blanks before the colon. */
      const char *p = line + n;
      while (*p == ' ' || *p == '\t') ++p;
      if (p != colon) continue;
      char *v = colon + 1;
      while (*v == ' ' || *v == '\t') ++v;
      v[strcspn(v, "\r\n")] = '\0';
      if (!*v) continue;
      snprintf(best, sizeof(best), "%s", v);
      best_key = k;
      break;
    }
  }
  if (f) fclose(f);
  snprintf(buf, size, "%s", best);
}

static int read_line(const char *path, char *buf, size_t size) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int ok = fgets(buf, (int)size, f) != NULL;
  fclose(f);
  if (ok) buf[strcspn(buf, "\r\n")] = '\0';
  return ok;
}

/* Total bytes of each cache level over the device: every distinct cache
 * instance (by its shared_cpu_list) counted once. */
void hetc_kit_cpu_caches(uint64_t out[3]) {
  out[0] = out[1] = out[2] = 0;
  long cpus = sysconf(_SC_NPROCESSORS_CONF);
  if (cpus < 1 || cpus > 4096) cpus = 1;
  enum { MAX_SEEN = 512 };
  char(*seen)[MAX_SEEN][64] = malloc(sizeof(char[3][MAX_SEEN][64]));
  if (!seen) return;
  int num_seen[3] = {0, 0, 0};
  for (long cpu = 0; cpu < cpus; ++cpu) {
    for (int index = 0; index < 16; ++index) {
      char path[256], value[256], shared[64];
      snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%ld/cache/index%d/level",
               cpu, index);
      if (!read_line(path, value, sizeof(value))) break;
      int level = atoi(value);
      if (level < 1 || level > 3) continue;
      snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%ld/cache/index%d/type",
               cpu, index);
      if (!read_line(path, value, sizeof(value)) || strcmp(value, "Instruction") == 0)
        continue;
      snprintf(path, sizeof(path),
               "/sys/devices/system/cpu/cpu%ld/cache/index%d/shared_cpu_list", cpu, index);
      if (!read_line(path, shared, sizeof(shared))) snprintf(shared, sizeof(shared), "%ld", cpu);
      int dup = 0;
      for (int i = 0; i < num_seen[level - 1]; ++i)
        if (strcmp(seen[level - 1][i], shared) == 0) dup = 1;
      if (dup || num_seen[level - 1] >= MAX_SEEN) continue;
      snprintf(seen[level - 1][num_seen[level - 1]++], 64, "%s", shared);
      snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%ld/cache/index%d/size",
               cpu, index);
      if (!read_line(path, value, sizeof(value))) continue;
      char *end = NULL;
      uint64_t size = strtoull(value, &end, 10);
      if (end && (*end == 'K' || *end == 'k')) size <<= 10;
      else if (end && *end == 'M') size <<= 20;
      else if (end && *end == 'G') size <<= 30;
      out[level - 1] += size;
    }
  }
  free(seen);
}

uint64_t hetc_kit_memory_bytes(void) {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}
