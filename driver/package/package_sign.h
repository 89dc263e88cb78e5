/* driver/package/package_sign.h -- signed packages: ed25519 key files and
 * a package's signature (api/package-format.md, "Signed packages").
 *
 * The manifest's FNV-1a checksums catch damage, not tampering: anyone can
 * make a file that matches one, and rewrite the manifest besides. A
 * signature lists the BLAKE2b-256 digest of manifest.json, weights.bin and
 * every file under kernels/, signed with an ed25519 secret key; a package
 * is trusted only when the signature verifies with the public key the user
 * names and every file is there, matches its digest, and is listed. */
#ifndef HETC_DRIVER_PACKAGE_PACKAGE_SIGN_H_
#define HETC_DRIVER_PACKAGE_PACKAGE_SIGN_H_

#include "package/plan.h"

#define HETC_PACKAGE_SIGNATURE "signature"
#define HETC_SECRET_KEY_BYTES 64 /* libsodium's crypto_sign_SECRETKEYBYTES */

/* Writes a new key pair: the secret key to secret_path (mode 0600) and the
 * public key to public_path. Neither may exist yet (BAD_INPUT); nothing is
 * left behind on failure. */
hetc_status_t hetc_keys_write(const char *secret_path, const char *public_path);

/* Reads a secret key file into out_secret (the caller's buffer, which it
 * should wipe after use). A malformed file is BAD_INPUT naming it and the
 * line. */
hetc_status_t hetc_key_read_secret(const char *path, unsigned char out_secret[HETC_SECRET_KEY_BYTES]);

/* Writes dir/signature for the package in `dir`, whose manifest is written
 * and whose plan->files were filled by hetc_package_files_describe. */
hetc_status_t hetc_signature_write(const hetc_plan_t *plan, const char *dir,
                                   const unsigned char secret[HETC_SECRET_KEY_BYTES]);

/* NULL when dir/signature was made with the secret key of the public key
 * in `public_key_path` and the package's files are exactly the ones it
 * lists, with the same digests. Otherwise BAD_INPUT naming the package's
 * file and the key file: the first problem found. */
hetc_status_t hetc_signature_check(const char *dir, const char *public_key_path);

#endif /* HETC_DRIVER_PACKAGE_PACKAGE_SIGN_H_ */
