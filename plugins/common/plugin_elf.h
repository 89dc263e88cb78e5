/* plugins/common/plugin_elf.h -- is a file a whole shared object of this
 * machine, before dlopen maps it? (Or another kind of ELF file, before
 * `hetc verify` calls it one.)
 *
 * dlopen maps a shared object's segments straight from the file: a copy cut
 * short makes the first touch of a missing page kill the process with
 * SIGBUS, and a FIFO makes open() wait forever. The plugin registry and the
 * vec backend (its kernels are shared objects in packages and caches) check
 * every file with this first, so a bad file is refused with a reason. */
#ifndef HETC_PLUGINS_COMMON_PLUGIN_ELF_H_
#define HETC_PLUGINS_COMMON_PLUGIN_ELF_H_

#include <stddef.h>

/* 0 when `path` is a regular file holding a complete ELF shared object for
 * this machine (every program segment and the section table inside the
 * file). Otherwise 1, with why not in `why` ("PATH: ..."). Never blocks on
 * a FIFO or device. */
int hpc_elf_problem(const char *path, char *why, size_t why_size);

/* hpc_elf_problem for other kinds of ELF file: `type` is the e_type wanted
 * (ET_REL, ...; ET_NONE: any) and `machine` the e_machine (EM_CUDA, ...;
 * EM_NONE: any; HPC_ELF_HOST: this machine's). Program segments, where the
 * file has any, and the section table must lie inside the file. */
#define HPC_ELF_HOST (-1)
int hpc_elf_kind_problem(const char *path, int type, int machine, char *why, size_t why_size);

#endif /* HETC_PLUGINS_COMMON_PLUGIN_ELF_H_ */
