/* Read-only SQL over recordings: opening files read-only (several as one
 * view with a node column), the authorizer, one statement, the time limit
 * and the caps (query.h). The shortcuts' SQL is in query_sql.c. */
#include "store/query.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/query_int.h"
#include "core/clock.h"

/* --- errors ---------------------------------------------------------------- */

/* One line into err: newlines and tabs of SQLite's messages become spaces. */
int qy_err(char *err, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;
	if (!err || !len)
		return rc;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	for (char *p = err; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	return rc;
}

/* --- opening ------------------------------------------------------------------ */

static int sidecar(const char *path, const char *suffix)
{
	char p[4200];
	struct stat sb;
	snprintf(p, sizeof(p), "%s%s", path, suffix);
	return !stat(p, &sb) && S_ISREG(sb.st_mode) && sb.st_size > 0;
}

/* Exists, regular, SQLite, no hot WAL or journal beside it. */
static int precheck(const char *path, char *err, size_t len)
{
	struct stat sb;
	if (stat(path, &sb))
		return qy_err(err, len, -EINVAL, "cannot query %s: %s", path, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return qy_err(err, len, -EINVAL, "cannot query %s: not a regular file", path);
	if (!sb.st_size) /* as replay says it */
		return qy_err(err, len, -EINVAL, "cannot query %s: empty file", path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return qy_err(err, len, -EINVAL, "cannot query %s: %s", path, strerror(errno));
	char h[16] = "";
	ssize_t n = read(fd, h, sizeof(h));
	close(fd);
	if (n < 16 || memcmp(h, "SQLite format 3", 16))
		return qy_err(err, len, -EINVAL, "cannot query %s: not an SQLite database", path);
	if (sidecar(path, "-wal") || sidecar(path, "-journal"))
		return qy_err(
		    err, len, -EINVAL,
		    "cannot query %s: it has an unfinished WAL or journal beside it (a "
		    "recording still being written, or a recorder that was killed); query "
		    "a copy: sqlite3 %s \".backup copy.db\"",
		    path, path);
	return 0;
}

/* "file:PATH?mode=ro&immutable=1" with the path percent-escaped. */
static char *ro_uri(const char *path)
{
	size_t n = strlen(path);
	char *u = malloc(n * 3 + 40);
	if (!u)
		return NULL;
	char *p = u + sprintf(u, "file:");
	for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
		if (*c == '%' || *c == '?' || *c == '#' || *c < 0x21 || *c >= 0x7f)
			p += sprintf(p, "%%%02X", *c);
		else
			*p++ = (char)*c;
	}
	strcpy(p, "?mode=ro&immutable=1");
	return u;
}

/* The schema name of file i: main, then f1, f2... */
const char *qy_schema(char *b, size_t n, int i)
{
	if (i == 0)
		snprintf(b, n, "main");
	else
		snprintf(b, n, "f%d", i);
	return b;
}

/* The file's node: ingero_top_nodes idx 0, else the sessions' node, else
 * the file name without .db (the replay reader's rule). */
static void file_node(struct query *q, int i)
{
	char sch[16], sql[256];
	sqlite3_stmt *st = NULL;
	char *node = q->node[i];
	node[0] = 0;
	qy_schema(sch, sizeof(sch), i);
	snprintf(sql, sizeof(sql), "SELECT name FROM %s.ingero_top_nodes WHERE idx = 0", sch);
	if (sqlite3_prepare_v2(q->db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(node, QUERY_NODE_LEN, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	st = NULL;
	snprintf(sql, sizeof(sql), "SELECT node FROM %s.sessions WHERE node != '' ORDER BY id",
		 sch);
	if (!node[0] && sqlite3_prepare_v2(q->db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(node, QUERY_NODE_LEN, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (!node[0]) {
		const char *b = strrchr(q->paths[i], '/');
		snprintf(node, QUERY_NODE_LEN, "%s", b ? b + 1 : q->paths[i]);
		size_t l = strlen(node);
		if (l > 3 && !strcmp(node + l - 3, ".db"))
			node[l - 3] = 0;
	}
}

static void harden(sqlite3 *db)
{
	int v;
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, &v);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, &v);
	sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, &v);
#ifdef SQLITE_DBCONFIG_TRUSTED_SCHEMA
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, &v);
#endif
	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, QUERY_MAX_VALUE_BYTES);
	sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
}

struct query *query_open(const char *const *paths, int n, char *err, size_t errlen)
{
	if (n < 1 || n > QUERY_MAX_FILES) {
		qy_err(err, errlen, -EINVAL, "query takes 1 to %d files", QUERY_MAX_FILES);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		if (precheck(paths[i], err, errlen))
			return NULL;
	struct query *q = calloc(1, sizeof(*q));
	if (!q) {
		qy_err(err, errlen, -ENOMEM, "out of memory");
		return NULL;
	}
	q->n = n;
	for (int i = 0; i < n; i++)
		q->paths[i] = paths[i];
	char *uri = ro_uri(paths[0]);
	int rc = uri ? sqlite3_open_v2(uri, &q->db,
				       SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
				       NULL)
		     : SQLITE_NOMEM;
	free(uri);
	if (rc != SQLITE_OK) {
		qy_err(err, errlen, -EINVAL, "cannot query %s: %s", paths[0],
		       q->db ? sqlite3_errmsg(q->db) : "out of memory");
		query_free(q);
		return NULL;
	}
	harden(q->db);
	/* The header is not enough: a damaged file fails here, not mid-query. */
	if (sqlite3_exec(q->db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL)) {
		qy_err(err, errlen, -EINVAL, "cannot query %s: %s", paths[0],
		       sqlite3_errmsg(q->db));
		query_free(q);
		return NULL;
	}
	for (int i = 1; i < n; i++) {
		char sql[64], sch[16];
		sqlite3_stmt *st = NULL;
		snprintf(sql, sizeof(sql), "ATTACH DATABASE ?1 AS %s",
			 qy_schema(sch, sizeof(sch), i));
		uri = ro_uri(paths[i]);
		rc = uri ? sqlite3_prepare_v2(q->db, sql, -1, &st, NULL) : SQLITE_NOMEM;
		if (rc == SQLITE_OK) {
			sqlite3_bind_text(st, 1, uri, -1, SQLITE_TRANSIENT);
			rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(q->db);
		}
		sqlite3_finalize(st);
		free(uri);
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s.sqlite_master", sch);
		if (rc != SQLITE_OK || sqlite3_exec(q->db, sql, NULL, NULL, NULL)) {
			qy_err(err, errlen, -EINVAL, "cannot query %s: %s", paths[i],
			       sqlite3_errmsg(q->db));
			query_free(q);
			return NULL;
		}
	}
	for (int i = 0; i < n; i++)
		file_node(q, i);
	if (n > 1 && qy_make_views(q, err, errlen)) {
		query_free(q);
		return NULL;
	}
	sqlite3_limit(q->db, SQLITE_LIMIT_ATTACHED, n - 1);
	if (sqlite3_exec(q->db, "PRAGMA query_only = 1", NULL, NULL, NULL)) {
		qy_err(err, errlen, -EINVAL, "cannot query %s: %s", paths[0],
		       sqlite3_errmsg(q->db));
		query_free(q);
		return NULL;
	}
	qy_warm_vtabs(q->db);
	sqlite3_set_authorizer(q->db, qy_authorize, &q->auth);
	return q;
}

void query_free(struct query *q)
{
	if (!q)
		return;
	sqlite3_close_v2(q->db);
	free(q);
}

int query_nfiles(const struct query *q)
{
	return q ? q->n : 0;
}

const char *query_node(const struct query *q, int i)
{
	return q && i >= 0 && i < q->n ? q->node[i] : NULL;
}

static int file_has_column(struct query *q, int i, const char *table, const char *column);

int query_has_column(struct query *q, const char *table, const char *column)
{
	int found = 0;
	/* the guard is off while the handle itself looks at the schema */
	sqlite3_set_authorizer(q->db, NULL, NULL);
	for (int i = 0; i < q->n && !found; i++)
		found = file_has_column(q, i, table, column);
	sqlite3_set_authorizer(q->db, qy_authorize, &q->auth);
	return found;
}

const char *query_file_without(struct query *q, const char *table, const char *column)
{
	const char *path = NULL;
	sqlite3_set_authorizer(q->db, NULL, NULL);
	for (int i = 0; i < q->n && !path; i++)
		if (!file_has_column(q, i, table, column))
			path = q->paths[i];
	sqlite3_set_authorizer(q->db, qy_authorize, &q->auth);
	return path;
}

/* --- running ------------------------------------------------------------------ */

static double mono_s(void)
{
	return (double)ig_mono_ns() / 1e9;
}

static int progress(void *ctx)
{
	struct query *q = ctx;
	if (mono_s() < q->deadline)
		return 0;
	q->timed_out = 1;
	return 1;
}

/* The text and blob bytes of a result, in blocks of TEXT_BLOCK (a value
 * above a quarter of that gets a block of its own): no allocation per
 * value, and a block is filled in order, so the pages of its unused tail
 * are never touched. */
#define TEXT_BLOCK (256u << 10)

struct query_text {
	struct query_text *next;
	size_t used, cap;
	char b[];
};

void query_result_free(struct query_result *r)
{
	if (!r)
		return;
	for (int c = 0; c < r->ncol && r->cols; c++)
		free(r->cols[c]);
	free(r->cols);
	free(r->cells);
	for (struct query_text *t = r->text, *next; t; t = next) {
		next = t->next;
		free(t);
	}
	free(r);
}

/* A copy of n bytes and a NUL in r's blocks; NULL when out of memory. */
static const char *text_put(struct query_result *r, const void *p, size_t n)
{
	struct query_text *t = r->text;
	if (!t || t->cap - t->used < n + 1) {
		size_t cap = n + 1 > TEXT_BLOCK / 4 ? n + 1 : TEXT_BLOCK;
		if (!(t = malloc(sizeof(*t) + cap)))
			return NULL;
		t->cap = cap;
		t->used = 0;
		if (cap == TEXT_BLOCK || !r->text) {
			t->next = r->text;
			r->text = t;
		} else { /* behind the current block, which keeps filling */
			t->next = r->text->next;
			r->text->next = t;
		}
	}
	char *d = t->b + t->used;
	if (n)
		memcpy(d, p, n);
	d[n] = 0;
	t->used += n + 1;
	return d;
}

/* One row of st appended to r; 1 when a cap stops it (not appended). */
static int take_row(sqlite3_stmt *st, struct query_result *r, uint64_t *cap)
{
	int nc = r->ncol;
	uint64_t bytes = (uint64_t)nc * sizeof(struct query_cell);
	for (int c = 0; c < nc; c++) {
		int t = sqlite3_column_type(st, c);
		if (t == SQLITE_TEXT || t == SQLITE_BLOB)
			bytes += (uint64_t)sqlite3_column_bytes(st, c) + 1;
	}
	if (r->nrows >= r->max_rows) {
		r->cut = QUERY_CUT_ROWS;
		return 1;
	}
	if (r->bytes + bytes > r->max_bytes) {
		r->cut = QUERY_CUT_BYTES;
		return 1;
	}
	if ((r->nrows + 1) * (uint64_t)nc > *cap) {
		uint64_t ncap = *cap ? *cap * 2 : (uint64_t)nc * 64;
		struct query_cell *v = realloc(r->cells, ncap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		r->cells = v;
		*cap = ncap;
	}
	struct query_cell *row = &r->cells[r->nrows * (uint64_t)nc];
	memset(row, 0, sizeof(*row) * (size_t)nc);
	r->nrows++; /* counted now so that a failure below frees what was taken */
	for (int c = 0; c < nc; c++) {
		struct query_cell *v = &row[c];
		switch (sqlite3_column_type(st, c)) {
		case SQLITE_INTEGER:
			v->type = QV_INT;
			v->i = sqlite3_column_int64(st, c);
			break;
		case SQLITE_FLOAT:
			v->type = QV_REAL;
			v->r = sqlite3_column_double(st, c);
			break;
		case SQLITE_TEXT:
		case SQLITE_BLOB: {
			int blob = sqlite3_column_type(st, c) == SQLITE_BLOB;
			const void *p = blob ? sqlite3_column_blob(st, c)
					     : (const void *)sqlite3_column_text(st, c);
			v->n = (uint32_t)sqlite3_column_bytes(st, c);
			v->type = blob ? QV_BLOB : QV_TEXT;
			if (!(v->s = text_put(r, p, v->n)))
				return -ENOMEM;
			break;
		}
		default:
			v->type = QV_NULL;
		}
	}
	r->bytes += bytes;
	return 0;
}

/* The first words of sql (blanks and comments skipped), at most 3 and 60
 * bytes, into b: what a statement that changes the schema says it does. */
static const char *first_words(char *b, size_t n, const char *sql)
{
	size_t o = 0;
	int words = 0;
	while (*sql && words < 3) {
		if (*sql == '-' && sql[1] == '-') {
			sql += strcspn(sql, "\n");
		} else if (*sql == '/' && sql[1] == '*') {
			const char *e = strstr(sql + 2, "*"
							"/");
			sql = e ? e + 2 : sql + strlen(sql);
		} else if (strchr(" \t\r\n;", *sql)) {
			sql++;
		} else {
			size_t l = strcspn(sql, " \t\r\n;(");
			if (!l)
				l = 1;
			if (o + l + 2 > n || o + l > 60)
				break;
			o += (size_t)snprintf(b + o, n - o, "%s%.*s", o ? " " : "", (int)l, sql);
			sql += l;
			words++;
		}
	}
	if (n)
		b[o < n ? o : n - 1] = 0;
	return b;
}

/* Prepares exactly one statement of sql: 0 with *st, or an error. */
static int prepare_one(struct query *q, const char *sql, sqlite3_stmt **st, char *err, size_t len)
{
	const char *tail = NULL;
	q->auth.denied[0] = 0;
	q->auth.prio = 0;
	q->auth.tail = 0;
	int rc = sqlite3_prepare_v2(q->db, sql, -1, st, &tail);
	if (q->auth.denied[0]) {
		char w[80], vt[300];
		sqlite3_finalize(*st);
		*st = NULL;
		if (!q->auth.prio && qy_refused_vtab(q, sql, vt, sizeof(vt)))
			return qy_err(err, len, -EPERM, "refused: %s", vt);
		return qy_err(err, len, -EPERM,
			      "refused: %s: queries are read-only (one SELECT, or WITH ... SELECT)",
			      q->auth.prio ? q->auth.denied : first_words(w, sizeof(w), sql));
	}
	if (rc == SQLITE_INTERRUPT || q->timed_out)
		return qy_err(err, len, -ETIMEDOUT, "query stopped: the time limit passed");
	if (rc != SQLITE_OK)
		return qy_err(err, len, -EINVAL, "SQL error: %s", sqlite3_errmsg(q->db));
	if (!*st)
		return qy_err(err, len, -EINVAL,
			      "no SQL statement given (only blanks or comments)");
	/* Anything after it but blanks and comments is a second statement. The
	 * guard denies every action of the tail, so nothing of it can run. */
	if (tail && *tail) {
		sqlite3_stmt *more = NULL;
		q->auth.tail = 1;
		int r2 = sqlite3_prepare_v2(q->db, tail, -1, &more, NULL);
		q->auth.tail = 0;
		int several = r2 != SQLITE_OK || more || q->auth.tail_seen;
		sqlite3_finalize(more);
		q->auth.tail_seen = 0;
		q->auth.denied[0] = 0;
		if (several) {
			sqlite3_finalize(*st);
			*st = NULL;
			return qy_err(err, len, -EPERM,
				      "refused: several statements: give exactly one SELECT");
		}
	}
	if (!sqlite3_stmt_readonly(*st)) { /* VACUUM: the authorizer is not asked */
		sqlite3_finalize(*st);
		*st = NULL;
		return qy_err(
		    err, len, -EPERM,
		    "refused: the statement would write (VACUUM or the like): queries are "
		    "read-only (one SELECT, or WITH ... SELECT)");
	}
	return 0;
}

static struct query_result *result_new(sqlite3_stmt *st, const struct query_limits *lim)
{
	struct query_result *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->ncol = sqlite3_column_count(st);
	r->max_rows = lim && lim->max_rows ? lim->max_rows : QUERY_DEFAULT_MAX_ROWS;
	r->max_bytes = lim && lim->max_bytes ? lim->max_bytes : QUERY_DEFAULT_MAX_BYTES;
	r->cols = calloc((size_t)(r->ncol ? r->ncol : 1), sizeof(*r->cols));
	if (!r->cols) {
		free(r);
		return NULL;
	}
	for (int c = 0; c < r->ncol; c++) {
		const char *nm = sqlite3_column_name(st, c);
		if (!(r->cols[c] = strdup(nm ? nm : ""))) {
			query_result_free(r);
			return NULL;
		}
	}
	return r;
}

int query_run(struct query *q, const char *sql, const char *param, const struct query_limits *lim,
	      struct query_result **out, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	double tmo = lim && lim->timeout_s > 0 ? lim->timeout_s : QUERY_DEFAULT_TIMEOUT_S;
	*out = NULL;
	q->timed_out = 0;
	q->deadline = mono_s() + tmo;
	sqlite3_progress_handler(q->db, 1000, progress, q);
	int rc = prepare_one(q, sql ? sql : "", &st, err, errlen);
	if (rc) {
		sqlite3_progress_handler(q->db, 0, NULL, NULL);
		return rc;
	}
	if (param && sqlite3_bind_parameter_count(st) >= 1)
		sqlite3_bind_text(st, 1, param, -1, SQLITE_TRANSIENT);
	struct query_result *r = result_new(st, lim);
	uint64_t cap = 0;
	rc = r ? 0 : -ENOMEM;
	while (!rc) {
		int s = sqlite3_step(st);
		if (s == SQLITE_DONE)
			break;
		if (s != SQLITE_ROW) {
			if (s == SQLITE_INTERRUPT || q->timed_out)
				rc = qy_err(
				    err, errlen, -ETIMEDOUT,
				    "query stopped after %gs: the time limit (give a narrower "
				    "query, a LIMIT, or a longer timeout)",
				    tmo);
			else
				rc = qy_err(err, errlen, -EINVAL, "SQL error: %s",
					    sqlite3_errmsg(q->db));
			break;
		}
		int t = take_row(st, r, &cap);
		if (t < 0)
			rc = qy_err(err, errlen, -ENOMEM, "out of memory reading the result");
		if (t)
			break;
	}
	sqlite3_finalize(st);
	sqlite3_progress_handler(q->db, 0, NULL, NULL);
	if (rc) {
		query_result_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

/* --- sessions ---------------------------------------------------------------- */

static int file_has_column(struct query *q, int i, const char *table, const char *column)
{
	char sch[16], sql[160];
	sqlite3_stmt *st = NULL;
	int found = 0;
	snprintf(sql, sizeof(sql), "SELECT name FROM pragma_table_info(?1, '%s')",
		 qy_schema(sch, sizeof(sch), i));
	if (sqlite3_prepare_v2(q->db, sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
		while (!found && sqlite3_step(st) == SQLITE_ROW)
			found = !strcmp((const char *)sqlite3_column_text(st, 0), column);
	}
	sqlite3_finalize(st);
	return found;
}

int query_sessions(struct query *q, struct rec_session **out, size_t *n)
{
	size_t cap = 0;
	int rc = 0;
	*out = NULL;
	*n = 0;
	for (int i = 0; i < q->n && !rc; i++) {
		if (!file_has_column(q, i, "sessions", "started_at"))
			continue;
		int has_node = file_has_column(q, i, "sessions", "node");
		const char *base = recfmt_session_select_sql(has_node),
			   *from = strstr(base, "FROM sessions");
		char sch[16], sql[512];
		sqlite3_stmt *st = NULL;
		if (!from)
			continue;
		/* the file's own table, not the view over all files */
		snprintf(sql, sizeof(sql), "%.*sFROM %s.%s", (int)(from - base), base,
			 qy_schema(sch, sizeof(sch), i), from + 5);
		if (sqlite3_prepare_v2(q->db, sql, -1, &st, NULL) != SQLITE_OK)
			continue;
		while (!rc && sqlite3_step(st) == SQLITE_ROW) {
			if (*n == cap) {
				size_t nc = cap ? cap * 2 : 4;
				struct rec_session *v = realloc(*out, nc * sizeof(*v));
				if (!v) {
					rc = -ENOMEM;
					break;
				}
				*out = v;
				cap = nc;
			}
			if (recfmt_session_read(st, has_node, q->node[i], &(*out)[*n]))
				rc = -ENOMEM;
			else
				(*n)++;
		}
		sqlite3_finalize(st);
	}
	if (rc) {
		query_sessions_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int query_event_rows(struct query *q, uint64_t *rows)
{
	static const char *const tables[] = {"events", "system_snapshots"};
	int rc = 0;
	*rows = 0;
	for (int i = 0; i < q->n && !rc; i++)
		for (int t = 0; t < 2 && !rc; t++) {
			char sch[16], sql[96];
			sqlite3_stmt *st = NULL;
			if (!file_has_column(q, i, tables[t], "timestamp"))
				continue;
			snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s.%s",
				 qy_schema(sch, sizeof(sch), i), tables[t]);
			if (sqlite3_prepare_v2(q->db, sql, -1, &st, NULL) == SQLITE_OK &&
			    sqlite3_step(st) == SQLITE_ROW)
				*rows += (uint64_t)sqlite3_column_int64(st, 0);
			else
				rc = -EINVAL;
			sqlite3_finalize(st);
		}
	return rc;
}

void query_sessions_free(struct rec_session *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		rec_session_clear(&v[i]);
	free(v);
}
