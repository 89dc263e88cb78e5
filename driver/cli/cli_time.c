/* Times as the hetc command prints them (cli.h). */
#include <stdio.h>
#include <time.h>

#include "cli/cli.h"

void hetc_cli_format_time(int64_t seconds, char *out, size_t size) {
  const time_t t = (time_t)seconds;
  struct tm utc;
  if (!gmtime_r(&t, &utc) || !strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &utc))
    snprintf(out, size, "%lld", (long long)seconds);
}
