/* Files for the replay tests: the shipped recordings found from any
 * working directory, copies, and SQL run on a copy. */
#ifndef IG_TESTDB_H
#define IG_TESTDB_H

#include <stddef.h>
#include <stdint.h>

/* rel (e.g. "tests/scenarios/x.db") from here or up to three levels up,
 * into out: 0, or -1 when not found. */
int testdb_find(char *out, size_t len, const char *rel);
/* cp from to: 0 or non-zero. */
int testdb_copy(const char *from, const char *to);
/* Runs sql on path (read-write): an SQLite result code, the error said on
 * stderr. */
int testdb_run(const char *path, const char *sql);
/* The first column of the first row of sql on path, read-only; -1 when
 * it fails. */
int64_t testdb_int(const char *path, const char *sql);

#endif
