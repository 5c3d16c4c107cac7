/* Replay files: checking and opening a recording read-only (through one
 * descriptor, a hot WAL or journal applied in memory: store/rofile.h),
 * refusing what a hostile file could use (views named like our tables),
 * what kind of file it is, its ops and nodes, and the tables read whole
 * (chains, sessions, process names, stacks). The rows themselves are
 * recfmt's. */
#include "store/replay_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/db.h"
#include "store/recfmt.h"
#include "store/rofile.h"

static __thread char errbuf[768];

/* Errors are printed as one line: SQLite's multi-line reports are folded. */
void rp_one_line(char *s)
{
	for (char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = p[1] ? ' ' : 0;
}

const char *rp_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	rp_one_line(errbuf);
	return errbuf;
}

/* --- opening a file ----------------------------------------------------------- */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Checks the file (as SQLite will see it, recovered pages included) before
 * SQLite does: not empty, SQLite magic, not truncated according to its
 * header. */
static const char *precheck(struct rfile *f)
{
	off_t size = rofile_size(f->ro);
	if (size == 0)
		return rp_err("cannot replay %s: empty file", f->path);
	unsigned char h[100];
	ssize_t n = rofile_read(f->ro, h, sizeof(h), 0);
	if (n < 0)
		return rp_err("cannot replay %s: %s", f->path, strerror((int)-n));
	if (n < 16 || memcmp(h, "SQLite format 3", 16))
		return rp_err("cannot replay %s: not an SQLite database", f->path);
	if (n < 100)
		return rp_err("cannot replay %s: truncated (%zd bytes, shorter than the SQLite "
			      "header)",
			      f->path, n);
	uint32_t page = (uint32_t)h[16] << 8 | h[17];
	if (page == 1)
		page = 65536;
	if (page < 512 || (page & (page - 1)))
		return rp_err("cannot replay %s: corrupt SQLite header (page size %u)", f->path,
			      page);
	uint32_t pages = be32(h + 28);
	if (pages && be32(h + 92) == be32(h + 24) && (uint64_t)pages * page > (uint64_t)size)
		return rp_err("cannot replay %s: truncated (%lld of %llu bytes)", f->path,
			      (long long)size, (unsigned long long)pages * page);
	return NULL;
}

/* Opens the database on the held descriptor (store/rofile.h), read-only
 * and immutable, with what a hostile file could use against us turned
 * off: views and triggers, functions in the schema, huge values; every
 * statement under the guard (store/db.h). */
static const char *open_db(struct rfile *f)
{
	char why[256];
	if (rofile_open(f->path, &f->ro, why, sizeof(why)))
		return rp_err("cannot replay %s: %s", f->path, why);
	const char *e = precheck(f);
	if (e)
		return e;
	int rc = sqlite3_open_v2(rofile_db_name(f->ro), &f->db,
				 SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, rofile_vfs());
	if (rc != SQLITE_OK)
		return rp_err("cannot replay %s: %s", f->path,
			      f->db ? sqlite3_errmsg(f->db) : "out of memory");
	db_guard(f->db);
	sqlite3_db_config(f->db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
	sqlite3_db_config(f->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
	sqlite3_db_config(f->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_db_config(f->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_limit(f->db, SQLITE_LIMIT_LENGTH, 64 << 20);
	db_exec(f->db, "PRAGMA cell_size_check=ON");
	return NULL;
}

/* The project's tables must be tables: a view (or a virtual table) named
 * like one could make a query run forever or read elsewhere. */
static const char *check_master(struct rfile *f)
{
	sqlite3_stmt *st;
	const char *e = NULL;
	if (sqlite3_prepare_v2(
		f->db,
		"SELECT type, name, sql FROM sqlite_master WHERE lower(name) IN "
		"('events','sources','ops','stack_traces','process_names','sessions',"
		"'system_snapshots','causal_chains','schema_info','event_aggregates',"
		"'ingero_top_nodes','ingero_top_pruned','ingero_top_summaries')",
		-1, &st, NULL) != SQLITE_OK)
		return rp_err("cannot replay %s: corrupt database: %s", f->path,
			      sqlite3_errmsg(f->db));
	int rc;
	while (!e && (rc = db_step(st)) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		const char *sql = (const char *)sqlite3_column_text(st, 2);
		if (!type || strcmp(type, "table"))
			e = rp_err(
			    "cannot replay %s: its %.40s is a %.20s, not a table (refusing it)",
			    f->path, name ? name : "?", type ? type : "?");
		else if (sql && !sqlite3_strnicmp(sql, "CREATE VIRTUAL", 14))
			e = rp_err("cannot replay %s: its %.40s is a virtual table (refusing it)",
				   f->path, name ? name : "?");
	}
	if (!e && rc != SQLITE_DONE)
		e = rp_err("cannot replay %s: corrupt database: %s", f->path, db_errmsg(f->db, rc));
	sqlite3_finalize(st);
	return e;
}

static const char *read_schema_info(struct rfile *f)
{
	if (!db_has_table(f->db, "schema_info") || !db_has_table(f->db, "events"))
		return rp_err("cannot replay %s: not an Ingero or ingero-top trace database (no "
			      "%s table)",
			      f->path, db_has_table(f->db, "events") ? "schema_info" : "events");
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(f->db, "SELECT key, value FROM schema_info", -1, &st, NULL) !=
	    SQLITE_OK)
		return rp_err("cannot replay %s: %s", f->path, sqlite3_errmsg(f->db));
	int rc, own = 0;
	while ((rc = db_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);
		if (!k || !v) { /* the file's identity: no row of it may be lost */
			sqlite3_finalize(st);
			return rp_err("cannot replay %s: its schema_info has a NULL %s", f->path,
				      k ? "value" : "key");
		}
		if (!strcmp(k, "version"))
			snprintf(f->version, sizeof(f->version), "%s", v);
		else if (!strcmp(k, "writer"))
			own = !strcmp(v, "ingero-top") ? 1 : -1;
		else if (!strcmp(k, "ingero_top_schema"))
			f->top_schema = atoi(v);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return rp_err("cannot replay %s: corrupt database: %s", f->path,
			      db_errmsg(f->db, rc));
	if (own < 0)
		return rp_err("cannot replay %s: written by an unknown program (schema_info "
			      "writer is not ingero-top)",
			      f->path);
	if (own) {
		f->writer = W_OWN;
		if (f->top_schema > REC_SCHEMA)
			return rp_err("cannot replay %s: written by a newer ingero-top (schema "
				      "%d; this one reads up to %d)",
				      f->path, f->top_schema, REC_SCHEMA);
		if (f->top_schema < 1)
			return rp_err("cannot replay %s: unknown ingero-top schema", f->path);
		return NULL;
	}
	f->writer = W_INGERO;
	int maj = 0, min = 0;
	if (!f->version[0] || sscanf(f->version, "%d.%d", &maj, &min) != 2)
		return rp_err("cannot replay %s: unknown schema version '%s'", f->path, f->version);
	if (maj > 0 || min > REC_INGERO_MINOR_MAX)
		return rp_err("cannot replay %s: Ingero schema %s is newer than this ingero-top "
			      "reads (0.8 to 0.10)",
			      f->path, f->version);
	if (min < REC_INGERO_MINOR_MIN)
		return rp_err("cannot replay %s: Ingero schema %s is older than this ingero-top "
			      "reads (0.8 to 0.10)",
			      f->path, f->version);
	return NULL;
}

static const char *check_columns(struct rfile *f)
{
	static const char *const need[] = {"timestamp", "pid",	"tid",	"source",   "op",
					   "duration",	"arg0", "arg1", "ret_code", NULL};
	static const char *const own[] = {"kind",     "start_ns",   "cpu",	  "flags",
					  "state",    "stream",	    "preempt_ns", "blocked_ns",
					  "switches", "other_pid",  "other_comm", "comm",
					  "node",     "stack_hash", "cgroup_id",  NULL};
	for (const char *const *c = need; *c; c++)
		if (!db_has_column(f->db, "events", *c))
			return rp_err("cannot replay %s: events table has no %s column", f->path,
				      *c);
	for (const char *const *c = own; f->writer == W_OWN && *c; c++)
		if (!db_has_column(f->db, "events", *c))
			return rp_err("cannot replay %s: ingero-top events table has no %s column",
				      f->path, *c);
	if (!db_has_table(f->db, "ops"))
		return rp_err("cannot replay %s: no ops table", f->path);
	f->has_node = db_has_column(f->db, "events", "node");
	f->has_comm = db_has_column(f->db, "events", "comm");
	f->has_arg2 = db_has_column(f->db, "events", "arg2");
	f->has_detail = db_has_column(f->db, "events", "detail");
	f->has_names_ext = db_has_table(f->db, "process_names") &&
			   db_has_column(f->db, "process_names", "is_event");
	f->has_names_ppid = f->has_names_ext && db_has_column(f->db, "process_names", "ppid");
	f->has_names_container =
	    f->has_names_ext && db_has_column(f->db, "process_names", "container");
	f->has_snap_node = db_has_column(f->db, "system_snapshots", "node");
	f->has_chain_node = db_has_column(f->db, "causal_chains", "node");
	return NULL;
}

static const char *read_ops(struct rfile *f)
{
	memset(f->map, 0xff, sizeof(f->map));
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(f->db, "SELECT source_id, op_id, name, description FROM ops", -1,
			       &st, NULL) != SQLITE_OK)
		return rp_err("cannot replay %s: cannot read ops: %s", f->path,
			      sqlite3_errmsg(f->db));
	size_t cap = 0;
	int rc;
	while ((rc = db_step(st)) == SQLITE_ROW) {
		int kind = 0, op = 0;	       /* kind 0: an op ingero-top has no use for */
		if (recfmt_row_has_null(st)) { /* the dictionary of every row's op */
			sqlite3_finalize(st);
			return rp_err("cannot replay %s: its ops table has a NULL (the ops of its "
				      "rows cannot be told)",
				      f->path);
		}
		if (recfmt_ingero_kind(sqlite3_column_int(st, 0),
				       (const char *)sqlite3_column_text(st, 2), &kind, &op))
			kind = op = 0;
		if (rp_grow((void **)&f->ops, f->nops, &cap, sizeof(*f->ops))) {
			sqlite3_finalize(st);
			return rp_err("cannot replay %s: out of memory", f->path);
		}
		struct opmap *m = &f->ops[f->nops];
		m->src = sqlite3_column_int(st, 0);
		m->id = sqlite3_column_int64(st, 1);
		m->kind = kind;
		m->op = op;
		if (m->src >= 0 && m->src < 8 && m->id >= 0 && m->id < 64)
			f->map[m->src][m->id] = (int)f->nops;
		f->nops++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return rp_err("cannot replay %s: corrupt ops table: %s", f->path,
			      db_errmsg(f->db, rc));
	return NULL;
}

/* Default node (rows without a node name): ingero-top's name for node 0,
 * else the session's node/host, else the file name. A real name is the key,
 * so rows naming the same node share its index; a file name is not (two
 * files may share a base name). */
static void default_node(struct replay *r, struct rfile *f)
{
	sqlite3_stmt *st;
	int own_nodes = f->writer == W_OWN && db_has_table(f->db, "ingero_top_nodes");
	f->default_node[0] = 0;
	if (own_nodes &&
	    sqlite3_prepare_v2(f->db, "SELECT name FROM ingero_top_nodes WHERE idx = 0", -1, &st,
			       NULL) == SQLITE_OK) {
		if (db_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
			snprintf(f->default_node, sizeof(f->default_node), "%s",
				 (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	if (!f->default_node[0] && db_has_column(f->db, "sessions", "node") &&
	    sqlite3_prepare_v2(f->db, "SELECT DISTINCT node FROM sessions WHERE node != ''", -1,
			       &st, NULL) == SQLITE_OK) {
		int n = 0;
		while (db_step(st) == SQLITE_ROW && n < 2) {
			if (!n)
				snprintf(f->default_node, sizeof(f->default_node), "%s",
					 (const char *)sqlite3_column_text(st, 0));
			n++;
		}
		if (n != 1)
			f->default_node[0] = 0;
		sqlite3_finalize(st);
	}
	char key[32];
	const char *k = f->default_node;
	if (!f->default_node[0]) {
		const char *b = strrchr(f->path, '/');
		b = b ? b + 1 : f->path;
		snprintf(f->default_node, sizeof(f->default_node), "%s", b);
		size_t l = strlen(f->default_node);
		if (l > 3 && !strcmp(f->default_node + l - 3, ".db"))
			f->default_node[l - 3] = 0;
		snprintf(key, sizeof(key), "\1%d", f->idx);
		k = key;
	}
	f->default_node_idx =
	    (unsigned)rp_node_register(r, k, f->default_node, f->writer == W_OWN ? 0 : -1);
	/* nodes named by the sessions are known from the start (Ingero 0.9 has
	 * one session per node); others appear as their rows are read */
	if (db_has_column(f->db, "sessions", "node") &&
	    sqlite3_prepare_v2(f->db, "SELECT node FROM sessions WHERE node != '' ORDER BY id", -1,
			       &st, NULL) == SQLITE_OK) {
		while (db_step(st) == SQLITE_ROW) {
			const char *nm = (const char *)sqlite3_column_text(st, 0);
			if (nm && *nm && (!own_nodes))
				rp_node_register(r, nm, nm, -1);
		}
		sqlite3_finalize(st);
	}
	/* ingero-top files: the recorder's node table, at the recorded indexes */
	if (own_nodes && sqlite3_prepare_v2(f->db,
					    "SELECT idx, name FROM ingero_top_nodes "
					    "WHERE idx > 0 ORDER BY idx",
					    -1, &st, NULL) == SQLITE_OK) {
		while (db_step(st) == SQLITE_ROW) {
			const char *nm = (const char *)sqlite3_column_text(st, 1);
			if (nm && *nm) /* a NULL name: counted by count_unread */
				rp_node_register(r, nm, nm, sqlite3_column_int(st, 0));
		}
		sqlite3_finalize(st);
	}
}

const struct opmap *rp_op_lookup(const struct rfile *f, int64_t src, int64_t id)
{
	if (src >= 0 && src < 8 && id >= 0 && id < 64) {
		int i = f->map[src][id];
		return i >= 0 ? &f->ops[i] : NULL;
	}
	for (size_t i = 0; i < f->nops; i++)
		if (f->ops[i].src == src && f->ops[i].id == id)
			return &f->ops[i];
	return NULL;
}

/* ingero-top files: the span of what is delivered (events by their end,
 * snapshots, name events; rows in range only), and with it the longest
 * duration a row may have: a first pass over the rows in range gives the
 * span, the second the span of the rows whose duration fits it. */
static const char *own_span(struct rfile *f)
{
	int ok = 1;
	int64_t lo =
	    db_query_int(f->db, recfmt_event_span_sql(0, RECFMT_TS_MAX_NS), INT64_MIN, &ok);
	int64_t hi =
	    db_query_int(f->db, recfmt_event_span_sql(1, RECFMT_TS_MAX_NS), INT64_MIN, &ok);
	f->dur_max = recfmt_dur_max(lo, hi);
	char names[2][200];
	for (int last = 0; last < 2; last++)
		snprintf(names[last], sizeof(names[last]),
			 "SELECT seen_at FROM process_names WHERE is_event=1 AND seen_at BETWEEN 1 "
			 "AND %lld AND pid BETWEEN 1 AND %d ORDER BY seen_at %s LIMIT 1",
			 RECFMT_TS_MAX_NS, RECFMT_PID_MAX, last ? "DESC" : "ASC");
	for (int q = 0; ok && q < 6; q++) {
		const char *sql = q < 2		     ? recfmt_event_span_sql(q, f->dur_max)
				  : q < 4	     ? recfmt_snapshot_span_sql(q - 2)
				  : f->has_names_ext ? names[q - 4]
						     : NULL;
		int64_t v = sql ? db_query_int(f->db, sql, INT64_MIN, &ok) : INT64_MIN;
		if (v != INT64_MIN)
			rp_span_add(f, (uint64_t)v);
	}
	if (!ok)
		return rp_err("cannot replay %s: corrupt database: %s", f->path,
			      db_errmsg(f->db, sqlite3_errcode(f->db)));
	return NULL;
}

/* A check of the structure, bounded so that big files still open fast:
 * integrity_check (it also finds an index that does not match its table)
 * for small files (replay_opts.full_check_max), quick_check up to 256 MiB,
 * nothing above (corruption is then reported when it is met, through
 * replay_error: a stream that goes back in time is a damaged index). */
static const char *check_structure(struct replay *r, struct rfile *f)
{
	off_t size = rofile_size(f->ro);
	int64_t full = r->o.full_check_max ? r->o.full_check_max : (16 << 20);
	if (size >= (256 << 20))
		return NULL;
	sqlite3_stmt *st;
	const char *sql = size < full ? "PRAGMA integrity_check(1)" : "PRAGMA quick_check(1)";
	if (sqlite3_prepare_v2(f->db, sql, -1, &st, NULL) != SQLITE_OK)
		return rp_err("cannot replay %s: %s", f->path, sqlite3_errmsg(f->db));
	int rc = db_step(st);
	const char *res = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
	const char *e = NULL;
	if (!res || strcmp(res, "ok"))
		e = rp_err("cannot replay %s: corrupt database: %s", f->path,
			   res ? res : db_errmsg(f->db, rc));
	sqlite3_finalize(st);
	return e;
}

/* Rows that no reader will see, refused and counted once when the file
 * opens: a NULL where a stream's query selects (end_ns >= ?1 is never true
 * of a NULL), or anywhere in a table read without a per-row check. Rows
 * with a NULL elsewhere are refused as they are read (recfmt_row_has_null). */
static const char *count_unread(struct replay *r, struct rfile *f)
{
	int own = f->writer == W_OWN;
	const char *names = !own ? NULL
			    : f->has_names_ext
				? "is_event IS NULL OR (is_event = 1 AND seen_at IS "
				  "NULL) OR (is_event != 1 AND (pid IS NULL OR name IS "
				  "NULL OR seen_at IS NULL))"
				: "pid IS NULL OR name IS NULL OR seen_at IS NULL";
	const struct {
		const char *table, *where;
	} q[] = {
	    {"events", own ? "end_ns IS NULL" : "timestamp IS NULL"},
	    {"system_snapshots", "timestamp IS NULL"},
	    {own && !r->o.no_summaries ? "ingero_top_summaries" : NULL,
	     "from_ns IS NULL OR to_ns IS NULL"},
	    {names ? "process_names" : NULL, names},
	    {"stack_traces", "ips IS NULL OR frames IS NULL"},
	    {own ? "ingero_top_nodes" : NULL, "name IS NULL"},
	};
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		if (!q[i].table || !db_has_table(f->db, q[i].table))
			continue;
		char sql[320];
		int ok = 1;
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE %s", q[i].table,
			 q[i].where);
		int64_t n = db_query_int(f->db, sql, 0, &ok);
		if (!ok)
			return rp_err("cannot replay %s: corrupt %s table: %s", f->path, q[i].table,
				      db_errmsg(f->db, sqlite3_errcode(f->db)));
		r->st.refused += n > 0 ? (uint64_t)n : 0;
	}
	return NULL;
}

const char *rp_open_file(struct replay *r, struct rfile *f)
{
	const char *e = open_db(f);
	if (!e)
		e = check_master(f);
	if (!e)
		e = check_structure(r, f);
	if (e)
		return e;
	if ((e = read_schema_info(f)) || (e = check_columns(f)) || (e = read_ops(f)) ||
	    (e = count_unread(r, f)))
		return e;
	default_node(r, f);
	if (f->writer == W_INGERO)
		return rp_ingero_prepare(r, f);
	return own_span(f);
}

void rp_file_free(struct rfile *f)
{
	for (int t = 0; t < S_NTYPES; t++) {
		sqlite3_finalize(f->s[t].st);
		free(f->s[t].heap);
		free(f->s[t].arr);
	}
	/* every statement is finalized: the connection closes now, and only
	 * then may its descriptor go (a zombie connection would keep reading) */
	if (!f->db || sqlite3_close(f->db) == SQLITE_OK)
		rofile_close(f->ro);
	free(f->path);
	free(f->ops);
	free(f->names);
}

/* --- tables read whole ------------------------------------------------------------ */

void replay_chains_free(struct rec_chain *c, size_t n)
{
	for (size_t i = 0; c && i < n; i++)
		rec_chain_clear(&c[i]);
	free(c);
}

static int cmp_chain(const void *a, const void *b)
{
	const struct rec_chain *x = a, *y = b;
	if (x->detected_at_ns != y->detected_at_ns)
		return x->detected_at_ns < y->detected_at_ns ? -1 : 1;
	return strcmp(x->id, y->id);
}

/* Room for one more element of size in *v (n used, *cap allocated). */
int rp_grow(void **v, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 16;
	void *nv = realloc(*v, ncap * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

/* A table read whole into owned rows: chains or sessions. */
struct row_table {
	const char *name;
	size_t size;
	const char *(*sql)(int has_node);
	int (*read)(sqlite3_stmt *st, int has_node, const char *default_node, void *out);
};

static int read_chain(sqlite3_stmt *st, int has_node, const char *dflt, void *out)
{
	return recfmt_chain_read(st, has_node, dflt, out);
}

static int read_session(sqlite3_stmt *st, int has_node, const char *dflt, void *out)
{
	return recfmt_session_read(st, has_node, dflt, out);
}

static const struct row_table chains_table = {"causal_chains", sizeof(struct rec_chain),
					      recfmt_chain_select_sql, read_chain};
static const struct row_table sessions_table = {"sessions", sizeof(struct rec_session),
						recfmt_session_select_sql, read_session};

/* Every row of t in every file, in file order, into *out (n rows). */
static int read_rows(struct replay *r, const struct row_table *t, void **out, size_t *n)
{
	size_t cap = 0;
	int rc = 0;
	*out = NULL;
	*n = 0;
	for (int i = 0; !rc && i < r->nfiles; i++) {
		struct rfile *f = &r->files[i];
		sqlite3_stmt *st;
		if (!db_has_table(f->db, t->name))
			continue;
		int hn = db_has_column(f->db, t->name, "node");
		if (sqlite3_prepare_v2(f->db, t->sql(hn), -1, &st, NULL) != SQLITE_OK)
			continue;
		while (!rc && db_step(st) == SQLITE_ROW) {
			rc = rp_grow(out, *n, &cap, t->size);
			void *row = (char *)*out + *n * t->size;
			if (!rc)
				rc = t->read(st, hn, f->default_node, row);
			if (!rc && t == &chains_table)
				((struct rec_chain *)row)->by_ingero = f->writer == W_INGERO;
			if (!rc)
				(*n)++;
			if (rc == -ERANGE) { /* a row out of range: refused */
				r->st.refused++;
				rc = 0;
			}
		}
		sqlite3_finalize(st);
	}
	return rc;
}

int replay_chains(struct ig_source *src, struct rec_chain **out, size_t *n)
{
	struct replay *r = rp_of(src);
	if (!r || !out || !n)
		return -EINVAL;
	int rc = read_rows(r, &chains_table, (void **)out, n);
	if (*n)
		qsort(*out, *n, sizeof(**out), cmp_chain);
	return rc;
}

void replay_sessions_free(struct rec_session *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		rec_session_clear(&v[i]);
	free(v);
}

int replay_sessions(struct ig_source *src, struct rec_session **out, size_t *n)
{
	struct replay *r = rp_of(src);
	if (!r || !out || !n)
		return -EINVAL;
	return read_rows(r, &sessions_table, (void **)out, n);
}

int replay_process_names(struct ig_source *src, replay_name_fn cb, void *ctx)
{
	struct replay *r = rp_of(src);
	if (!r || !cb)
		return -EINVAL;
	for (int i = 0; i < r->nfiles; i++) {
		struct rfile *f = &r->files[i];
		if (!db_has_table(f->db, "process_names"))
			continue;
		int hn = db_has_column(f->db, "process_names", "node");
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(f->db,
				       hn ? "SELECT pid, name, seen_at, node FROM process_names "
					    "ORDER BY seen_at, rowid"
					  : "SELECT pid, name, seen_at FROM process_names ORDER BY "
					    "seen_at, rowid",
				       -1, &st, NULL) != SQLITE_OK)
			continue;
		while (db_step(st) == SQLITE_ROW) {
			const char *nm = (const char *)sqlite3_column_text(st, 1);
			if (recfmt_row_has_null(st) || !recfmt_col_in(st, 0, 1, RECFMT_PID_MAX) ||
			    !recfmt_col_in(st, 2, 0, RECFMT_TS_MAX_NS))
				continue; /* out of range (the streams or count_unread count such
					     rows) */
			unsigned node =
			    rp_node_for(r, f, hn ? (const char *)sqlite3_column_text(st, 3) : NULL);
			cb(ctx, (uint32_t)sqlite3_column_int64(st, 0), nm ? nm : "",
			   (uint64_t)sqlite3_column_int64(st, 2), node);
		}
		sqlite3_finalize(st);
	}
	return 0;
}

int replay_stacks(struct ig_source *src, replay_stack_fn fn, void *ctx)
{
	struct replay *r = rp_of(src);
	if (!r || !fn)
		return -EINVAL;
	int taken = 0;
	for (int i = 0; i < r->nfiles; i++) {
		struct rfile *f = &r->files[i];
		sqlite3_stmt *st;
		if (!db_has_table(f->db, "stack_traces") ||
		    sqlite3_prepare_v2(f->db, recfmt_stack_select_sql, -1, &st, NULL) != SQLITE_OK)
			continue; /* no stacks in this file */
		int rc;
		while ((rc = db_step(st)) == SQLITE_ROW) {
			if (recfmt_row_has_null(st))
				continue; /* counted by count_unread */
			const char *ips = (const char *)sqlite3_column_text(st, 1);
			const char *frames = (const char *)sqlite3_column_text(st, 2);
			if (!fn(ctx, (uint64_t)sqlite3_column_int64(st, 0), ips ? ips : "",
				frames ? frames : ""))
				taken++;
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return rp_fail_read(r, f, "reading stack_traces");
	}
	return taken;
}

int replay_file_count(struct ig_source *src)
{
	struct replay *r = rp_of(src);
	return r ? r->nfiles : 0;
}

int replay_file_info(struct ig_source *src, int i, struct replay_file_info *fi)
{
	struct replay *r = rp_of(src);
	if (!r || i < 0 || i >= r->nfiles || !fi)
		return -EINVAL;
	struct rfile *f = &r->files[i];
	fi->path = f->path;
	fi->writer = f->writer == W_OWN ? "ingero-top" : "ingero";
	fi->version = f->version;
	fi->ingero_top_schema = f->writer == W_OWN ? f->top_schema : 0;
	fi->recovered = rofile_recovered(f->ro) > 0;
	fi->note = rofile_note(f->ro);
	fi->summarised = 0;
	if (f->writer == W_OWN && db_has_table(f->db, "ingero_top_summaries")) {
		int64_t n =
		    db_query_int(f->db, "SELECT SUM(calls) FROM ingero_top_summaries", 0, NULL);
		fi->summarised = n > 0 ? (uint64_t)n : 0;
	}
	return 0;
}
