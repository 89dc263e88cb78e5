/* driver/package/package_files.h -- the files of a package, their sizes
 * and checksums.
 *
 * compile lists weights.bin and every artifact under kernels/ in the
 * manifest (version 3) with its size and FNV-1a checksum; opening a package
 * checks what is cheap (each file is a regular file of its size, and the
 * kernels' checksums: they are small, and a damaged shared object or object
 * file must not reach dlopen or the JIT), `hetc verify` checks everything
 * that can be told from the bytes, without loading any. */
#ifndef HETC_DRIVER_PACKAGE_PACKAGE_FILES_H_
#define HETC_DRIVER_PACKAGE_PACKAGE_FILES_H_

#include "package/plan.h"

/* Fills plan->files from package directory `dir` (weights.bin, then the
 * files under kernels/ by name), with their BLAKE2b digests when
 * `with_digests` (only a signature reads them; a second pass over the
 * weights would cost every unsigned compile). */
hetc_status_t hetc_package_files_describe(hetc_plan_t *plan, const char *dir, int with_digests);

/* The BLAKE2b-256 digest of the regular file at `path`. */
hetc_status_t hetc_package_file_digest(const char *path, unsigned char out_blake2b[32]);

/* 1 when `path` is a name the manifest may list: "weights.bin" or
 * "kernels/NAME" with NAME of letters, digits, '.', '_' and '-', not
 * starting with '.'. */
int hetc_package_file_name_ok(const char *path);

/* Checks package `dir` against plan->files (nothing for a package before
 * version 3). Every file must be a regular file of its size; kernels must
 * match their checksums; with `thorough`, weights.bin must too, each
 * artifact must be of the format its name says (an ELF shared object or
 * relocatable object of this machine, a CUDA binary, text; by suffix) and
 * a file under kernels/ the manifest does not list is a problem. Nothing
 * is loaded or executed. Problems are
 * BAD_INPUT naming the file: the first one, or with `thorough` all of
 * them, one per line. */
hetc_status_t hetc_package_files_check(const hetc_plan_t *plan, const char *dir, int thorough);

#endif /* HETC_DRIVER_PACKAGE_PACKAGE_FILES_H_ */
