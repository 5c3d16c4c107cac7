/* Finds exported function symbols in ELF files (dynsym and symtab) and turns
 * them into the file offsets that uprobes attach to. */
#ifndef IG_ELFSYM_H
#define IG_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

/* Looks up each of names[0..n) in path. offsets[i] receives the file offset of
 * the function (for a uprobe), or 0 when the symbol is absent or not a
 * defined function. Returns the number found, or -errno when the file cannot
 * be read as ELF (-ENOEXEC for a non-ELF file). */
int elfsym_offsets(const char *path, const char *const *names, int n, uint64_t *offsets);

/* The same for any defined symbol (functions, data): values[i] receives its
 * value (the virtual address in the file's own layout), 0 when absent. */
int elfsym_values(const char *path, const char *const *names, int n, uint64_t *values);

/* The page of the lowest loadable segment's virtual address (what the
 * start of the file's first mapping holds): 0, or -errno / -ENOEXEC. */
int elfsym_load_base(const char *path, uint64_t *vaddr);

/* 1 when path defines any of the names (a quick check for statically linked
 * CUDA runtimes in executables), 0 when not, -errno on error. */
int elfsym_has_any(const char *path, const char *const *names, int n);

/* 1 when the ELF file has a program interpreter (is dynamically linked),
 * 0 when not, -errno when it cannot be read as ELF. */
int elfsym_is_dynamic(const char *path);
/* The same, and the interpreter's path (e.g. /lib64/ld-linux-x86-64.so.2)
 * copied to out[len] when there is one ("" when it does not fit). */
int elfsym_interp(const char *path, char *out, size_t len);

#endif
