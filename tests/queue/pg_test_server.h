/* The tests' PostgreSQL server (pg_server.sh, the hetc_pg fixture), as the
 * C tests find it: its folder is $HETC_PG_SERVER_DIR. */
#ifndef HETC_TESTS_QUEUE_PG_TEST_SERVER_H_
#define HETC_TESTS_QUEUE_PG_TEST_SERVER_H_

#include <stddef.h>

/* The server's URI (postgresql://USER@HOST:PORT/postgres) in out: 1. 0
 * after printing the SKIP line when there is no server: the test then
 * exits 77 (skipped). */
int pg_test_server_uri(char *out, size_t size);

#endif /* HETC_TESTS_QUEUE_PG_TEST_SERVER_H_ */
