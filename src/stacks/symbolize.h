/* Native symbolisation of user stacks: the executable mappings of a process
 * (/proc/PID/maps, captured while it lives), the ELF symbol tables (.symtab,
 * else .dynsym, plus a separate debug file found by build-id) of each mapped
 * file read with libelf and cached per build-id, so a library shared by many
 * processes (or by many containers) is read once, and C++ names demangled
 * with libiberty; source file:line from DWARF line tables with libdw when the
 * file or its debug file has them. PIE and non-PIE executables and shared
 * libraries are all
 * translated through their PT_LOAD segments. Files are opened through
 * /proc/PID/map_files (deleted or replaced files, containers), then
 * /proc/PID/root/PATH, then PATH when its device and inode still match.
 *
 * Not thread-safe: one thread (the stack resolver) owns a sym_cache and the
 * sym_procs resolved with it. */
#ifndef IG_SYMBOLIZE_H
#define IG_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_cache;
struct sym_proc;

/* max_bytes bounds the memory of loaded symbol tables (least recently used
 * files are dropped above it); 0 = 256 MiB. NULL when out of memory. */
struct sym_cache *sym_cache_new(uint64_t max_bytes);
void sym_cache_free(struct sym_cache *c);

struct sym_cache_stats {
	uint64_t files;		/* distinct files known (by build-id or device/inode) */
	uint64_t loaded;	/* files whose symbols are in memory */
	uint64_t reads;		/* symbol tables read from disk */
	uint64_t bytes;		/* memory held by symbol tables */
	uint64_t evictions;	/* tables dropped to stay under max_bytes */
	uint64_t lookups;	/* sym_resolve calls */
	uint64_t build_id_hits; /* a file found by build-id under another path or inode */
};
void sym_cache_stats(const struct sym_cache *c, struct sym_cache_stats *st);

/* Captures the executable mappings of pid now. The symbols of files that
 * could not be reopened once the process is gone (deleted files, files in
 * another root or mount namespace) are read now too, so that stacks of a
 * process that exits before they are resolved still resolve. Returns NULL
 * with *err = -errno (-ESRCH: no such process). Owned by the caller. */
struct sym_proc *sym_proc_capture(struct sym_cache *c, int pid, int *err);
/* The same from a maps text (tests; files are opened by path only). */
struct sym_proc *sym_proc_from_maps(struct sym_cache *c, int pid, const char *maps_text);
void sym_proc_free(struct sym_proc *p);
int sym_proc_pid(const struct sym_proc *p);
/* Number of executable mappings captured. */
int sym_proc_nmaps(const struct sym_proc *p);
/* True when addr lies in a captured executable mapping. */
bool sym_proc_covers(const struct sym_proc *p, uint64_t addr);

enum sym_flags {
	SYM_F_DELETED = 0x1, /* the mapped file was deleted or replaced */
	SYM_F_NOFILE = 0x2,  /* the file could not be opened or is not ELF */
	SYM_F_DYNSYM = 0x4,  /* only .dynsym: a stripped file */
	SYM_F_ANON = 0x8,    /* not file-backed ([vdso], JIT code, [uprobes]) */
};

struct sym_info {
	const char *name;    /* demangled symbol; NULL when unresolved. Owned by the
			      * cache, valid until the next sym_resolve */
	uint64_t off;	     /* addr - symbol start, bytes */
	const char *path;    /* mapping as /proc/PID/maps names it (without
			      * " (deleted)"); NULL when addr is in no mapping.
			      * Owned by the sym_proc */
	uint64_t file_vaddr; /* addr in the file's own address space (ELF vaddr) */
	unsigned flags;	     /* enum sym_flags */
	/* The source line of addr (of the call, for a return address) when the
	 * file or its debug file has DWARF line tables (libdw): the file as
	 * the compiler named it (owned by the cache, valid until the next
	 * sym_resolve) and the line; NULL and 0 otherwise. */
	const char *src_file;
	int src_line;
};

/* Resolves one address of p. ret_addr: addr is a return address (every
 * frame of a captured stack), so the symbol is looked up at addr - 1 (a call
 * that ends a function belongs to it) while off stays relative to addr.
 * Returns 0 (name set), -ENOENT (mapping known, no symbol covers addr:
 * path and file_vaddr set) or -ESRCH (no mapping). */
int sym_resolve(struct sym_cache *c, struct sym_proc *p, uint64_t addr, bool ret_addr,
		struct sym_info *out);

/* Runtime address of a defined symbol (exact name) in p's mappings: files
 * whose base name contains hint are searched first, then the main
 * executable; others are not read. 0 and *addr (and *path, owned by p),
 * or -ENOENT. */
int sym_find(struct sym_cache *c, struct sym_proc *p, const char *name, const char *hint,
	     uint64_t *addr, const char **path);
/* The same with the symbol's size (ELF st_size, 0 when the file's symbol
 * table has none) in *size when size is not NULL. */
int sym_find_sized(struct sym_cache *c, struct sym_proc *p, const char *name, const char *hint,
		   uint64_t *addr, uint64_t *size, const char **path);
/* The same restricted to the file mapped under path (as returned above). */
int sym_find_in(struct sym_cache *c, struct sym_proc *p, const char *path, const char *name,
		uint64_t *addr);

/* Demangles a C++ (Itanium ABI) name with libiberty. Returns a malloc'd
 * string, or NULL when name is not a mangled name. */
char *sym_demangle(const char *name);

#endif
