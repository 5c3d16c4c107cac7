/* Inside the read-only query module: the handle, shared by query.c (opening,
 * running, caps) and query_sql.c (the views over several files, the
 * authorizer, the shortcuts' SQL). Not for other modules. */
#ifndef IG_QUERY_INT_H
#define IG_QUERY_INT_H

#include <sqlite3.h>
#include <stddef.h>

#include "store/query.h"

#define QUERY_NODE_LEN 64

struct qy_auth {
	int tail;	  /* preparing what follows the statement: deny all */
	int tail_seen;	  /* ... and it asked for something */
	char denied[160]; /* the first action denied, for the message */
	int prio;	  /* 0: a change of sqlite_master, 1: a statement */
};

struct query {
	sqlite3 *db;
	int n;
	const char *paths[QUERY_MAX_FILES];
	char node[QUERY_MAX_FILES][QUERY_NODE_LEN];
	struct qy_auth auth;
	double deadline; /* CLOCK_MONOTONIC seconds */
	int timed_out;
};

int qy_err(char *err, size_t len, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
const char *qy_schema(char *b, size_t n, int i);
void qy_warm_vtabs(sqlite3 *db);
int qy_make_views(struct query *q, char *err, size_t len);
int qy_authorize(void *ctx, int action, const char *a1, const char *a2, const char *db,
		 const char *trigger);
/* After a denied change of the schema while preparing sql, which is what
 * opening a virtual table not made beforehand asks: the table-valued
 * function or virtual table of sql that was refused and why, into out (n
 * bytes); NULL when sql names none. */
const char *qy_refused_vtab(struct query *q, const char *sql, char *out, size_t n);

#endif
