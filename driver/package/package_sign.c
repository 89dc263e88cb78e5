#include "package/package_sign.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "package/package_files.h"

#define SIGNATURE_HEADER "hetc-signature 1\n"
#define KEY_BYTES 32 /* an ed25519 public key, and the seed of a secret one */
/* A key file is two short lines; anything much longer is not one. */
#define MAX_KEY_FILE_BYTES 4096

static hetc_status_t sodium_ready(void) {
  return sodium_init() < 0 ? hetc_status_new(HETC_STATUS_INTERNAL, "libsodium cannot be initialised") : NULL;
}

/* 1 when `text` is exactly 2 * `bytes` hex digits, decoded into `out`. */
static int parse_hex(const char *text, size_t length, unsigned char *out, size_t bytes) {
  size_t decoded = 0;
  const char *end = NULL;
  return length == 2 * bytes && sodium_hex2bin(out, bytes, text, length, NULL, &decoded, &end) == 0 &&
         decoded == bytes && end == text + length;
}

/* The key in a key file of `kind` ("public" or "secret"), whose first line
 * is "hetc-KIND-key 1"; one of the other kind gets a message of its own. */
static hetc_status_t read_key(const char *path, const char *kind, const char *other_kind,
                              unsigned char out[KEY_BYTES]) {
  char header[32], other[32];
  snprintf(header, sizeof(header), "hetc-%s-key 1", kind);
  snprintf(other, sizeof(other), "hetc-%s-key 1", other_kind);
  char *text = NULL;
  size_t length = 0;
  HETC_RETURN_IF_ERROR(hetc_file_read_all(path, MAX_KEY_FILE_BYTES, &text, &length));
  const char *end = text + length;
  const char *newline = memchr(text, '\n', length);
  const size_t first = newline ? (size_t)(newline - text) : length;
  const char *key = newline ? newline + 1 : end;
  const char *key_end = memchr(key, '\n', (size_t)(end - key));
  hetc_status_t status = NULL;
  if (first == strlen(other) && !memcmp(text, other, first))
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: line 1: a %s key, where a %s key is expected", path,
                             other_kind, kind);
  else if (first != strlen(header) || memcmp(text, header, first) != 0)
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: line 1: expected \"%s\": not a hetc %s key file", path,
                             header, kind);
  else if (!parse_hex(key, (size_t)((key_end ? key_end : end) - key), out, KEY_BYTES))
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: line 2: expected 64 hex digits, the ed25519 %s key", path,
                             kind);
  else if (key_end && key_end + 1 < end)
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: line 3: unexpected text after the key", path);
  sodium_memzero(text, length);
  free(text);
  return status;
}

hetc_status_t hetc_key_read_secret(const char *path, unsigned char out_secret[HETC_SECRET_KEY_BYTES]) {
  HETC_RETURN_IF_ERROR(sodium_ready());
  unsigned char seed[KEY_BYTES], public_key[KEY_BYTES];
  hetc_status_t status = read_key(path, "secret", "public", seed);
  if (!status) crypto_sign_seed_keypair(public_key, out_secret, seed);
  sodium_memzero(seed, sizeof(seed));
  return status;
}

/* Creates a key file of `kind` at `path`; an existing file (or link) is
 * never replaced, and a failed write leaves no file. */
static hetc_status_t write_key(const char *path, const char *kind, const unsigned char key[KEY_BYTES], mode_t mode) {
  char text[64 + 2 * KEY_BYTES], hex[2 * KEY_BYTES + 1];
  const int length = snprintf(text, sizeof(text), "hetc-%s-key 1\n%s\n", kind,
                              sodium_bin2hex(hex, sizeof(hex), key, KEY_BYTES));
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  int error = fd < 0 ? errno : 0;
  for (int done = 0; !error && done < length;) {
    ssize_t n = write(fd, text + done, (size_t)(length - done));
    if (n < 0 && errno != EINTR) error = errno;
    if (n > 0) done += (int)n;
  }
  sodium_memzero(text, sizeof(text));
  sodium_memzero(hex, sizeof(hex));
  if (fd < 0)
    return error == EEXIST ? hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: exists; not writing over it", path)
                           : hetc_file_write_failure(path, "cannot create", error);
  if (close(fd) != 0 && !error) error = errno;
  if (!error) return NULL;
  unlink(path);
  return hetc_file_write_failure(path, "write failed", error);
}

hetc_status_t hetc_keys_write(const char *secret_path, const char *public_path) {
  HETC_RETURN_IF_ERROR(sodium_ready());
  /* Both names are checked first, so that a clash leaves no half pair. */
  struct stat info;
  const char *taken = lstat(secret_path, &info) == 0   ? secret_path
                      : lstat(public_path, &info) == 0 ? public_path
                                                       : NULL;
  if (taken) return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: exists; not writing over it", taken);
  unsigned char seed[KEY_BYTES], public_key[KEY_BYTES], secret[HETC_SECRET_KEY_BYTES];
  randombytes_buf(seed, sizeof(seed));
  crypto_sign_seed_keypair(public_key, secret, seed);
  hetc_status_t status = write_key(secret_path, "secret", seed, 0600);
  sodium_memzero(seed, sizeof(seed));
  sodium_memzero(secret, sizeof(secret));
  if (status) return status;
  status = write_key(public_path, "public", public_key, 0644);
  if (status) unlink(secret_path);
  return status;
}

/* The signed part of a signature: the signer's public key and the digest of
 * every file, manifest.json first, then as hetc_package_files_describe
 * lists them. *out_text is the caller's to free. */
static hetc_status_t statement(const hetc_plan_t *plan, const char *dir, const unsigned char public_key[KEY_BYTES],
                               char **out_text, size_t *out_length) {
  unsigned char digest[32];
  char *manifest = hetc_path_join(dir, HETC_PACKAGE_MANIFEST);
  hetc_status_t status = manifest ? hetc_package_file_digest(manifest, digest)
                                  : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "signature");
  free(manifest);
  if (status) return status;
  char *text = NULL;
  size_t length = 0;
  FILE *out = open_memstream(&text, &length);
  if (!out) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "signature");
  char hex[2 * KEY_BYTES + 1];
  fprintf(out, SIGNATURE_HEADER "key %s\n", sodium_bin2hex(hex, sizeof(hex), public_key, KEY_BYTES));
  fprintf(out, "blake2b-256 %s %s\n", sodium_bin2hex(hex, sizeof(hex), digest, sizeof(digest)),
          HETC_PACKAGE_MANIFEST);
  for (int32_t i = 0; i < plan->num_files; ++i)
    fprintf(out, "blake2b-256 %s %s\n", sodium_bin2hex(hex, sizeof(hex), plan->files[i].blake2b, 32),
            plan->files[i].path);
  if (fclose(out) != 0 || !text) {
    free(text);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "signature");
  }
  *out_text = text;
  *out_length = length;
  return NULL;
}

hetc_status_t hetc_signature_write(const hetc_plan_t *plan, const char *dir,
                                   const unsigned char secret[HETC_SECRET_KEY_BYTES]) {
  HETC_RETURN_IF_ERROR(sodium_ready());
  unsigned char public_key[KEY_BYTES], signature[crypto_sign_BYTES];
  crypto_sign_ed25519_sk_to_pk(public_key, secret);
  char *text = NULL;
  size_t length = 0;
  HETC_RETURN_IF_ERROR(statement(plan, dir, public_key, &text, &length));
  crypto_sign_detached(signature, NULL, (const unsigned char *)text, length, secret);
  char hex[2 * crypto_sign_BYTES + 1];
  char *whole = NULL, *path = hetc_path_join(dir, HETC_PACKAGE_SIGNATURE);
  hetc_status_t status = NULL;
  sodium_bin2hex(hex, sizeof(hex), signature, sizeof(signature));
  if (!path || asprintf(&whole, "%sed25519 %s\n", text, hex) < 0) {
    whole = NULL; /* asprintf leaves it undefined when it fails */
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "signature");
  }
  if (!status) status = hetc_file_write_all(path, whole, strlen(whole));
  free(whole);
  free(path);
  free(text);
  return status;
}

/* A package the trusted key refuses: BAD_INPUT, the key named last. */
static hetc_status_t untrusted(const char *key_path, const char *format, ...) HETC_PLUGIN_PRINTF(2, 3);
static hetc_status_t untrusted(const char *key_path, const char *format, ...) {
  va_list args;
  va_start(args, format);
  char message[1024];
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s (trusted key: %s)", message, key_path);
}

/* Statement lines are "blake2b-256 DIGEST PATH": the path of the line at
 * `line`, up to its newline; NULL when the line is too short for one. */
static const char *line_path(const char *line, size_t *out_length) {
  const size_t before_path = strlen("blake2b-256 ") + 64 + 1;
  if (strcspn(line, "\n") <= before_path) return NULL;
  *out_length = strcspn(line + before_path, "\n");
  return line + before_path;
}

/* The order statements list files in: manifest.json, weights.bin, then
 * kernels/ by name. */
static int path_rank(const char *path, size_t length) {
  if (length == strlen(HETC_PACKAGE_MANIFEST) && !memcmp(path, HETC_PACKAGE_MANIFEST, length)) return 0;
  if (length == strlen(HETC_PACKAGE_WEIGHTS) && !memcmp(path, HETC_PACKAGE_WEIGHTS, length)) return 1;
  return 2;
}

static int path_order(const char *a, size_t a_length, const char *b, size_t b_length) {
  const int ranks = path_rank(a, a_length) - path_rank(b, b_length);
  if (ranks) return ranks;
  const int bytes = memcmp(a, b, a_length < b_length ? a_length : b_length);
  return bytes ? bytes : (a_length > b_length) - (a_length < b_length);
}

/* Why the package's files (statement `now`) are not the signed ones: the
 * first file that differs, in the statements' order. Both start with the
 * same two lines (header and key). */
static hetc_status_t first_difference(const char *dir, const char *key_path, const char *signed_text,
                                      const char *now) {
  const char *a = strchr(strchr(signed_text, '\n') + 1, '\n') + 1;
  const char *b = strchr(strchr(now, '\n') + 1, '\n') + 1;
  while (*a || *b) {
    size_t a_length = 0, b_length = 0;
    const char *a_path = *a ? line_path(a, &a_length) : NULL, *b_path = *b ? line_path(b, &b_length) : NULL;
    if ((*a && !a_path) || (*b && !b_path)) break;
    const int order = !a_path ? 1 : !b_path ? -1 : path_order(a_path, a_length, b_path, b_length);
    if (order < 0)
      return untrusted(key_path, "%s/%.*s: signed, but missing", dir, (int)a_length, a_path);
    if (order > 0)
      return untrusted(key_path, "%s/%.*s: not covered by the signature: added since the package was signed", dir,
                       (int)b_length, b_path);
    if (memcmp(a, b, (size_t)(a_path - a)) != 0)
      return untrusted(key_path, "%s/%.*s: changed since the package was signed", dir, (int)a_length, a_path);
    a = a_path + a_length + 1;
    b = b_path + b_length + 1;
  }
  return untrusted(key_path, "%s/%s: lists the package's files otherwise than hetc does", dir,
                   HETC_PACKAGE_SIGNATURE);
}

/* The signature `text` (read from `path`) against the trusted key, then
 * the package's files against it. */
static hetc_status_t check_text(const char *dir, const char *path, const char *key_path,
                                const unsigned char trusted[KEY_BYTES], const char *text, size_t length) {
  const size_t header = strlen(SIGNATURE_HEADER), key_line = strlen("key ") + 2 * KEY_BYTES + 1;
  const size_t last_line = strlen("ed25519 ") + 2 * crypto_sign_BYTES + 1;
  unsigned char signer[KEY_BYTES], signature[crypto_sign_BYTES];
  if (length < header || memcmp(text, SIGNATURE_HEADER, header) != 0)
    return untrusted(key_path, "%s: line 1: expected \"hetc-signature 1\"", path);
  if (length < header + key_line || memcmp(text + header, "key ", 4) != 0 ||
      !parse_hex(text + header + 4, 2 * KEY_BYTES, signer, KEY_BYTES) || text[header + key_line - 1] != '\n')
    return untrusted(key_path, "%s: line 2: expected \"key\" and 64 hex digits", path);
  const char *last = length >= header + key_line + last_line ? text + length - last_line : NULL;
  if (!last || last[-1] != '\n' || memcmp(last, "ed25519 ", 8) != 0 ||
      !parse_hex(last + 8, 2 * crypto_sign_BYTES, signature, crypto_sign_BYTES) || text[length - 1] != '\n')
    return untrusted(key_path, "%s: last line: expected \"ed25519\" and 128 hex digits", path);
  if (sodium_memcmp(signer, trusted, KEY_BYTES) != 0) {
    char hex[2 * KEY_BYTES + 1];
    return untrusted(key_path, "%s: signed with another key, whose public key starts %.16s", path,
                     sodium_bin2hex(hex, sizeof(hex), signer, KEY_BYTES));
  }
  const size_t signed_length = (size_t)(last - text);
  if (crypto_sign_verify_detached(signature, (const unsigned char *)text, signed_length, trusted) != 0)
    return untrusted(key_path, "%s: the signature does not verify: the file was altered", path);
  /* The statement is the signer's from here on; the files must be the
   * ones it lists, now. */
  hetc_plan_t *current = calloc(1, sizeof(*current));
  char *now = NULL;
  size_t now_length = 0;
  hetc_status_t status =
      current ? hetc_package_files_describe(current, dir, 1) : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "signature");
  if (!status) status = statement(current, dir, trusted, &now, &now_length);
  if (status && hetc_status_code(status) != HETC_STATUS_OUT_OF_MEMORY) {
    hetc_status_t refused = untrusted(key_path, "%s", hetc_status_message(status));
    hetc_status_free(status);
    status = refused;
  } else if (!status && (now_length != signed_length || memcmp(now, text, signed_length) != 0)) {
    char *signed_text = strndup(text, signed_length);
    status = signed_text ? first_difference(dir, key_path, signed_text, now)
                         : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "signature");
    free(signed_text);
  }
  free(now);
  hetc_plan_free(current);
  return status;
}

hetc_status_t hetc_signature_check(const char *dir, const char *public_key_path) {
  HETC_RETURN_IF_ERROR(sodium_ready());
  unsigned char trusted[KEY_BYTES];
  HETC_RETURN_IF_ERROR(read_key(public_key_path, "public", "secret", trusted));
  char *path = hetc_path_join(dir, HETC_PACKAGE_SIGNATURE);
  if (!path) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "signature");
  char *text = NULL;
  size_t length = 0;
  struct stat info;
  hetc_status_t status = NULL;
  if (lstat(path, &info) != 0 && errno == ENOENT)
    status = untrusted(public_key_path, "%s: not signed: there is no %s", dir, path);
  else
    status = hetc_file_read_all(path, HETC_PACKAGE_MAX_MANIFEST_BYTES, &text, &length);
  if (!status) status = check_text(dir, path, public_key_path, trusted, text, length);
  free(text);
  free(path);
  return status;
}
