/* Source file:line of code addresses from DWARF line tables (elfutils'
 * libdw), for the native frames of stacks: one handle per file, opened on
 * its first lookup from the mapped file, else its debug file
 * (/usr/lib/debug/.build-id/xx/yyyy.debug), and at most a few open at once
 * (each holds a file descriptor). Not thread-safe: the symbolizer's thread
 * owns it. */
#ifndef IG_SRCLINE_H
#define IG_SRCLINE_H

#include <stdint.h>

struct srclines;

/* max: handles kept open at once (the least recently used one is closed to
 * open another). NULL when out of memory. srclines_free(NULL) is a no-op. */
struct srclines *srclines_new(int max);
void srclines_free(struct srclines *s);

/* Opens the file the lines are read from; -errno when it cannot. */
typedef int (*srclines_open_fn)(void *ctx);

/* The source file and line of vaddr (an ELF address) in the file known as
 * id (an identity that stays the same for the same file: the symbolizer's
 * cache index). The first lookup of an id opens it through open_fd, else
 * the debug file of build_id ("" none) under root ("" = /). 0 with *file
 * (owned by s, valid until the next call) and *line, or -ENOENT. */
int srclines_lookup(struct srclines *s, int id, srclines_open_fn open_fd, void *ctx,
		    const char *build_id, const char *root, uint64_t vaddr, const char **file,
		    int *line);

#endif
