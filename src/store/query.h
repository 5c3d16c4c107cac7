/* Read-only SQL over recordings, for `ingero-top query` and the MCP tool
 * run_sql. Read-only by construction, not by keyword filters:
 *
 *   - every file is opened SQLITE_OPEN_READONLY with immutable=1 (nothing is
 *     ever written beside it) and the connection is set query_only;
 *   - an authorizer allows reading tables and columns, calling functions
 *     (but load_extension and fts3_tokenizer), recursive CTEs and the
 *     informational pragmas; it denies everything else: ATTACH, DETACH,
 *     writes, CREATE, DROP, ALTER, transactions, pragmas that set a value;
 *   - exactly one statement: anything but blanks and comments after it is
 *     refused;
 *   - a time limit (SQLite's progress handler), a row cap and a byte cap, a
 *     length limit per value.
 *
 * Several files are one view: each is attached read-only and every table
 * becomes a temporary view that UNION ALLs the files' tables (missing
 * columns as NULL) with a `node` column (the row's node, else the file's
 * node name: the session's host or the file name). With one file the
 * tables are its own and `node` is what the file holds.
 *
 * The store layer: includes core only. Not thread-safe: one query at a
 * time per handle. docs/recording.md has the schema and examples. */
#ifndef IG_QUERY_H
#define IG_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "store/recfmt.h"

struct query;

/* Limits of one run; 0 = the default. */
struct query_limits {
	double timeout_s;   /* wall time of the statement (10 s) */
	uint64_t max_rows;  /* rows kept before the result is cut (100 000) */
	uint64_t max_bytes; /* memory the kept rows take before the result is cut (64 MiB):
			     * sizeof(struct query_cell) a value plus the bytes of its
			     * text or blob and a NUL */
};

#define QUERY_DEFAULT_TIMEOUT_S 10.0
#define QUERY_DEFAULT_MAX_ROWS 100000
#define QUERY_DEFAULT_MAX_BYTES (64ull << 20)
#define QUERY_MAX_VALUE_BYTES (16 << 20) /* SQLITE_LIMIT_LENGTH: one string or blob */

enum query_type { QV_NULL = 0, QV_INT, QV_REAL, QV_TEXT, QV_BLOB };

/* One value: 16 bytes, so that a result of small values stays small. */
struct query_cell {
	union {
		int64_t i;     /* QV_INT */
		double r;      /* QV_REAL */
		const char *s; /* QV_TEXT (NUL-terminated, may hold any byte) or QV_BLOB;
				* owned by the result */
	};
	uint32_t n;   /* bytes of s (at most QUERY_MAX_VALUE_BYTES) */
	int32_t type; /* enum query_type */
};

/* Why a result is short: the rows beyond the cap were not read. */
enum query_cut { QUERY_CUT_NONE = 0, QUERY_CUT_ROWS, QUERY_CUT_BYTES };

/* A result, owned by the caller (query_result_free). Its memory is the
 * cells plus the text and blob bytes, in large blocks: bytes is what it
 * holds, below max_bytes. */
struct query_text;
struct query_result {
	int ncol;
	char **cols; /* column names */
	uint64_t nrows;
	struct query_cell *cells;     /* nrows * ncol, row-major */
	uint64_t bytes;		      /* memory of the rows kept (see max_bytes) */
	int cut;		      /* enum query_cut */
	uint64_t max_rows, max_bytes; /* the caps that applied */
	struct query_text *text;      /* the blocks the values' bytes are in (query.c) */
};

/* Errors of query_open and query_run: -EINVAL (bad file, SQL error), -EPERM
 * (refused by the guard: a write, ATTACH, a pragma that sets, a denied
 * function, several statements), -ETIMEDOUT (time limit), -ENOMEM. err
 * gets one line that says what to change. */

/* Opens n recordings (1..QUERY_MAX_FILES) read-only. A file with a hot WAL
 * or journal beside it (a recording still being written) is refused: its
 * newest rows are not in the file itself. NULL on failure, with err. */
#define QUERY_MAX_FILES 16
struct query *query_open(const char *const *paths, int n, char *err, size_t errlen);
void query_free(struct query *q);

/* Runs one statement; param (may be NULL) is bound as text to ?1. On
 * success *out is the result (query_result_free) and the return is 0; a
 * result cut by a cap is still 0 with out->cut set. */
int query_run(struct query *q, const char *sql, const char *param, const struct query_limits *lim,
	      struct query_result **out, char *err, size_t errlen);
void query_result_free(struct query_result *r);

/* The number of files, and 1 when table has column in any of them. */
int query_nfiles(const struct query *q);
int query_has_column(struct query *q, const char *table, const char *column);
/* The path of the first file whose table lacks column (or has no such
 * table), NULL when every file has it; owned by q. */
const char *query_file_without(struct query *q, const char *table, const char *column);
/* The node name of file i (the session's host, else the file name
 * without .db); owned by q. */
const char *query_node(const struct query *q, int i);

/* The sessions rows of every file, in file order, as owned copies (node:
 * the row's, else the file's node); free with query_sessions_free. Files
 * without a sessions table give none. 0, or -ENOMEM. */
int query_sessions(struct query *q, struct rec_session **out, size_t *n);
void query_sessions_free(struct rec_session *v, size_t n);

/* The rows of every file's events and system_snapshots tables (what a
 * replay of the files delivers, about): 0 with *rows, or -EINVAL. */
int query_event_rows(struct query *q, uint64_t *rows);

/* The shortcuts' SQL for this handle (columns present, one file or
 * several), malloc'd; NULL when out of memory. arg is the shortcut's
 * argument, bound to ?1 by the caller (query_run's param): --slowest the op
 * name (ingero-top's or Ingero's), --timeline the pid. */
enum query_shortcut { QS_OPS = 1, QS_CHAINS, QS_SLOWEST, QS_TIMELINE };
char *query_shortcut_sql(struct query *q, int which, const char *arg);

#endif
