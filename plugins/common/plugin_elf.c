#define _POSIX_C_SOURCE 200809L
#include "plugin_elf.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#else
#define HOST_MACHINE EM_NONE /* unknown host: the machine field is not checked */
#endif

static int read_at(int fd, void *buffer, size_t bytes, uint64_t offset) {
  size_t got = 0;
  while (got < bytes) {
    ssize_t n = pread(fd, (char *)buffer + got, bytes - got, (off_t)(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    got += (size_t)n;
  }
  return 0;
}

/* end = offset + bytes without wrapping, checked against the file size. */
static int inside(uint64_t offset, uint64_t bytes, uint64_t file_bytes) {
  return offset <= file_bytes && bytes <= file_bytes - offset;
}

static const char *kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

static const char *type_name(int type) {
  switch (type) {
    case ET_DYN: return "a shared object";
    case ET_REL: return "a relocatable object";
    default: return "an ELF file";
  }
}

int hpc_elf_problem(const char *path, char *why, size_t why_size) {
  return hpc_elf_kind_problem(path, ET_DYN, HPC_ELF_HOST, why, why_size);
}

int hpc_elf_kind_problem(const char *path, int type, int machine, char *why, size_t why_size) {
  if (machine == HPC_ELF_HOST) machine = HOST_MACHINE;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    snprintf(why, why_size, "%s: cannot open: %s", path, strerror(errno));
    return 1;
  }
  struct stat info;
  int problem = 1;
  Elf64_Ehdr header;
  Elf64_Phdr *segments = NULL;
  if (fstat(fd, &info) != 0) {
    snprintf(why, why_size, "%s: %s", path, strerror(errno));
    goto done;
  }
  if (!S_ISREG(info.st_mode)) {
    snprintf(why, why_size, "%s: is %s, not %s", path, kind_of(info.st_mode), type_name(type));
    goto done;
  }
  const uint64_t size = (uint64_t)info.st_size;
  if (size < sizeof(header) || read_at(fd, &header, sizeof(header), 0) != 0 ||
      memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    snprintf(why, why_size, "%s: not an ELF file (%llu bytes)", path, (unsigned long long)size);
    goto done;
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB ||
      (machine != EM_NONE && header.e_machine != machine)) {
    snprintf(why, why_size, "%s: an ELF file for another machine (class %d, machine %d)", path,
             header.e_ident[EI_CLASS], header.e_machine);
    goto done;
  }
  if (type != ET_NONE && header.e_type != type) {
    snprintf(why, why_size, "%s: an ELF file but not %s (type %d)", path, type_name(type), header.e_type);
    goto done;
  }
  /* A shared object is mapped by its segments; other kinds may have none. */
  const int segmented = header.e_phnum != 0 || header.e_type == ET_DYN;
  if (segmented && (header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum == 0 ||
      !inside(header.e_phoff, (uint64_t)header.e_phnum * sizeof(Elf64_Phdr), size))) {
    snprintf(why, why_size, "%s: truncated or damaged: its program headers lie outside the file (%llu bytes)",
             path, (unsigned long long)size);
    goto done;
  }
  if (header.e_shnum != 0 &&
      (header.e_shentsize != sizeof(Elf64_Shdr) ||
       !inside(header.e_shoff, (uint64_t)header.e_shnum * sizeof(Elf64_Shdr), size))) {
    snprintf(why, why_size, "%s: truncated or damaged: its section table lies outside the file (%llu bytes)",
             path, (unsigned long long)size);
    goto done;
  }
  segments = malloc((size_t)header.e_phnum * sizeof(Elf64_Phdr) + 1);
  if (!segments || read_at(fd, segments, (size_t)header.e_phnum * sizeof(Elf64_Phdr), header.e_phoff) != 0) {
    snprintf(why, why_size, "%s: cannot read its program headers", path);
    goto done;
  }
  for (int i = 0; i < header.e_phnum; ++i) {
    if (segments[i].p_type == PT_NULL) continue;
    if (!inside(segments[i].p_offset, segments[i].p_filesz, size)) {
      snprintf(why, why_size, "%s: truncated: segment %d ends at byte %llu, the file has %llu", path, i,
               (unsigned long long)(segments[i].p_offset + segments[i].p_filesz), (unsigned long long)size);
      goto done;
    }
  }
  problem = 0;
done:
  free(segments);
  close(fd);
  return problem;
}
