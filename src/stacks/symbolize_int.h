/* Internals of the symbolizer shared by its files (symbolize.c: the cache,
 * processes and address resolution; symfind.c: symbols by name). Nothing
 * outside src/stacks/symbolize*.c and symfind.c includes this. */
#ifndef IG_SYMBOLIZE_INT_H
#define IG_SYMBOLIZE_INT_H

#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "stacks/symbolize.h"

#define MAX_SEGS 16
#define DEFAULT_MAX_BYTES (256ull << 20)
#define DEBUG_DIR "/usr/lib/debug/.build-id"
#define MAX_DWARF 16 /* line tables kept open at once (srcline.h) */

struct symbol {
	uint64_t addr;
	uint32_t size;
	uint32_t name; /* offset in names */
};

struct seg {
	uint64_t vaddr, off, filesz;
};

enum elf_state { ELF_NEW = 0, ELF_LOADED = 1, ELF_FAILED = -1 };

/* One distinct file: identity, segments, and (when loaded) its symbols. */
struct elf_ent {
	char build_id[41]; /* hex, "" when the file has none */
	uint64_t dev, ino; /* identity of the file it was first read from */
	char path[PATH_MAX];
	struct seg segs[MAX_SEGS];
	int nsegs;
	int state;   /* enum elf_state */
	bool dynsym; /* only .dynsym was found */
	struct symbol *syms;
	size_t nsyms;
	char *names;
	uint64_t bytes;
	uint64_t last_use;
};

/* (device, inode) -> elf_ent, so that the same file in many processes is
 * identified without opening it again. */
struct ino_ent {
	uint64_t dev, ino;
	int elf;
};

struct sym_cache {
	struct elf_ent **elfs;
	int nelfs, capelfs;
	struct ino_ent *inos;
	int ninos, capinos;
	uint64_t clock;
	uint64_t max_bytes;
	struct srclines *lines; /* source lines (libdw), by elf index */
	struct sym_cache_stats st;
	char *demangled; /* last sym_resolve result, owned */
};

struct sym_map {
	uint64_t start, end, pgoff, dev, ino;
	char *path;
	bool deleted, anon;
	int elf; /* index in cache->elfs; -1 = not identified yet, -2 = unreadable */
};

struct sym_proc {
	int pid;
	bool live;	   /* captured from /proc (files may be reopened there) */
	bool foreign_root; /* /proc/PID/root is not our root */
	struct sym_map *maps;
	int nmaps;
	char *exe; /* main executable path, for sym_find */
};

/* Opens an ELF file from fd (libelf); 0 or -ENOEXEC. */
int open_elf(int fd, Elf **elf);
/* Opens the file of mapping m (map_files, the process's root, the path);
 * root gets "/proc/PID/root" when the process has another root. fd or -errno. */
int open_mapped(const struct sym_proc *p, const struct sym_map *m, char *root, size_t rlen);
/* The cache index of m's file (reading its identity, and its symbols with
 * load), or -errno. */
int identify(struct sym_cache *c, struct sym_proc *p, struct sym_map *m, bool load);
/* A file offset of e as an ELF address; false when no segment maps it. */
bool to_vaddr(const struct elf_ent *e, uint64_t foff, uint64_t *vaddr);

#endif
