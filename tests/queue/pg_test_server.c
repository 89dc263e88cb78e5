/* The tests' PostgreSQL server (pg_test_server.h). */
#include "pg_test_server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pg_test_server_uri(char *out, size_t size) {
  const char *dir = getenv("HETC_PG_SERVER_DIR");
  char path[1024];
  snprintf(path, sizeof(path), "%s/uri", dir ? dir : ".");
  FILE *f = fopen(path, "r");
  const int found = f && fgets(out, (int)size, f);
  if (f) fclose(f);
  if (!found) {
    printf("SKIP: no PostgreSQL server for the tests (%s)\n", path);
    return 0;
  }
  out[strcspn(out, "\n")] = '\0';
  return 1;
}
