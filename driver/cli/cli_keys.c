/* `hetc keys new NAME`: an ed25519 key pair for signed packages, NAME.secret
 * (for `hetc compile --sign`) and NAME.public (for `--trust`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char usage[] =
    "usage: hetc keys new NAME\n"
    "  writes NAME.secret, the secret key for `hetc compile --sign` (keep it private), and\n"
    "  NAME.public, the public key for `hetc run|bench|verify --trust`; neither may exist\n";

int hetc_cli_keys(int argc, char **argv) {
  const char *subcommand = NULL, *name = NULL;
  hetc_cli_args_t args;
  hetc_cli_args_init(&args, "keys", usage, argc, argv);
  while (hetc_cli_args_next(&args))
    (void)(hetc_cli_positional(&args, "new", &subcommand) || hetc_cli_positional(&args, "NAME", &name));
  if (!args.failed && !subcommand) hetc_cli_error(&args, "no subcommand given (new)");
  if (!args.failed && strcmp(subcommand, "new") != 0)
    hetc_cli_error(&args, "unknown subcommand '%s' (new)", subcommand);
  if (!args.failed && !name) hetc_cli_error(&args, "no NAME given");
  if (args.failed) return HETC_EXIT_USAGE;
  char *secret = NULL, *public_key = NULL;
  hetc_status_t status = NULL;
  if (asprintf(&secret, "%s.secret", name) < 0 || asprintf(&public_key, "%s.public", name) < 0)
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "keys");
  if (!status) status = hetc_signing_keys_create(secret, public_key);
  if (!status) printf("wrote %s (keep it private) and %s\n", secret, public_key);
  free(secret);
  free(public_key);
  return hetc_cli_report(status);
}
