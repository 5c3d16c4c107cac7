/* The SQL side of the read-only query module: the authorizer (what a query
 * may do), the views that make several files one, and the shortcuts' SQL
 * (--ops, --chains, --slowest OP, --timeline PID) written for the columns
 * the files have, so the same shortcut works on ingero-top's recordings and
 * Ingero's databases. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/escape.h"
#include "core/event.h"
#include "core/ops.h"
#include "store/query_int.h"
#include "store/recfmt.h"

/* --- the authorizer ------------------------------------------------------------ */

/* Pragmas that only report; those in with_arg take a table or index name. */
static const char *const ro_pragmas[] = {
    "table_info",	"table_xinfo",
    "table_list",	"index_list",
    "index_info",	"index_xinfo",
    "foreign_key_list", "database_list",
    "collation_list",	"function_list",
    "module_list",	"pragma_list",
    "compile_options",	"page_count",
    "page_size",	"freelist_count",
    "encoding",		"user_version",
    "application_id",	"schema_version",
    "data_version",	NULL,
};
static const char *const with_arg[] = {
    "table_info", "table_xinfo", "table_list",	     "index_list",
    "index_info", "index_xinfo", "foreign_key_list", NULL,
};
/* Functions a read-only query must not call. */
static const char *const denied_fns[] = {
    "load_extension", "fts3_tokenizer", "readfile", "writefile", "edit", NULL,
};

static int in_list(const char *const *l, const char *s)
{
	for (; s && *l; l++)
		if (!strcasecmp(*l, s))
			return 1;
	return 0;
}

static const char *what(int action)
{
	switch (action) {
	case SQLITE_INSERT:
		return "INSERT into";
	case SQLITE_UPDATE:
		return "UPDATE of";
	case SQLITE_DELETE:
		return "DELETE from";
	case SQLITE_ATTACH:
		return "ATTACH of";
	case SQLITE_DETACH:
		return "DETACH of";
	case SQLITE_TRANSACTION:
		return "transaction";
	case SQLITE_SAVEPOINT:
		return "SAVEPOINT";
	case SQLITE_ALTER_TABLE:
		return "ALTER TABLE";
	case SQLITE_REINDEX:
		return "REINDEX";
	case SQLITE_ANALYZE:
		return "ANALYZE";
	case SQLITE_CREATE_VTABLE:
		return "CREATE VIRTUAL TABLE";
	case SQLITE_DROP_VTABLE:
		return "DROP VIRTUAL TABLE";
	case SQLITE_CREATE_INDEX:
	case SQLITE_CREATE_TEMP_INDEX:
		return "CREATE INDEX";
	case SQLITE_CREATE_TABLE:
	case SQLITE_CREATE_TEMP_TABLE:
		return "CREATE TABLE";
	case SQLITE_CREATE_TRIGGER:
	case SQLITE_CREATE_TEMP_TRIGGER:
		return "CREATE TRIGGER";
	case SQLITE_CREATE_VIEW:
	case SQLITE_CREATE_TEMP_VIEW:
		return "CREATE VIEW";
	case SQLITE_DROP_INDEX:
	case SQLITE_DROP_TEMP_INDEX:
		return "DROP INDEX";
	case SQLITE_DROP_TABLE:
	case SQLITE_DROP_TEMP_TABLE:
		return "DROP TABLE";
	case SQLITE_DROP_TRIGGER:
	case SQLITE_DROP_TEMP_TRIGGER:
		return "DROP TRIGGER";
	case SQLITE_DROP_VIEW:
	case SQLITE_DROP_TEMP_VIEW:
		return "DROP VIEW";
	}
	return "a statement that is not a read";
}

/* Allows reads, functions (but denied_fns), recursive CTEs and the pragmas
 * that only report; denies the rest and remembers the first denial. */
int qy_authorize(void *ctx, int action, const char *a1, const char *a2, const char *db,
		 const char *trigger)
{
	struct qy_auth *au = ctx;
	int ok = 0;
	if (au->tail) { /* a second statement: nothing of it is allowed */
		au->tail_seen = 1;
		return SQLITE_DENY;
	}
	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_RECURSIVE:
		ok = 1;
		break;
	case SQLITE_FUNCTION:
		ok = !in_list(denied_fns, a2);
		break;
	case SQLITE_PRAGMA:
		ok = in_list(ro_pragmas, a1) && (!a2 || in_list(with_arg, a1));
		break;
	}
	if (ok)
		return SQLITE_OK;
	if (action == SQLITE_ALTER_TABLE) /* (database, table) */
		a1 = a2;
	/* A DROP or CREATE also asks to change sqlite_master: name the
	 * statement, not that consequence. */
	int prio =
	    !((action == SQLITE_INSERT || action == SQLITE_UPDATE || action == SQLITE_DELETE) &&
	      a1 && !strncmp(a1, "sqlite_", 7));
	if (au->denied[0] && prio <= au->prio)
		return SQLITE_DENY;
	au->prio = prio;
	if (action == SQLITE_FUNCTION)
		snprintf(au->denied, sizeof(au->denied), "function %.60s()", a2 ? a2 : "?");
	else if (action == SQLITE_PRAGMA)
		snprintf(au->denied, sizeof(au->denied), "PRAGMA %.60s%s%.40s", a1 ? a1 : "?",
			 a2 ? " = " : "", a2 ? a2 : "");
	else if (action == SQLITE_TRANSACTION || action == SQLITE_SAVEPOINT)
		snprintf(au->denied, sizeof(au->denied), "%s %.60s", a1 ? a1 : "", what(action));
	else
		snprintf(au->denied, sizeof(au->denied), "%s%s%.60s", what(action), a1 ? " " : "",
			 a1 ? a1 : "");
	return SQLITE_DENY;
}

/* --- one view over several files ------------------------------------------------- */

#define MAX_TABLES 64
#define MAX_COLS 96

struct names {
	int n;
	char v[MAX_COLS][64];
};

static int names_add(struct names *l, const char *s, int max)
{
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return 0;
	if (l->n >= max || strlen(s) >= sizeof(l->v[0]))
		return -1;
	snprintf(l->v[l->n++], sizeof(l->v[0]), "%s", s);
	return 0;
}

/* Rows of sql (one text column) into l. */
static int names_of(sqlite3 *db, const char *sql, const char *arg, struct names *l, int max)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc == SQLITE_OK && arg)
		sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
	while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		if (sqlite3_column_text(st, 0) &&
		    names_add(l, (const char *)sqlite3_column_text(st, 0), max))
			rc = SQLITE_FULL;
	sqlite3_finalize(st);
	return rc;
}

static int has(const struct names *l, const char *s)
{
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return 1;
	return 0;
}

static void view_union(struct query *q, const char *table, const struct names *cols,
		       const struct names *all, FILE *f);

/* The view of one table: every file that has it, its columns or NULL, the
 * node of each row and the file index. */
static int view_sql(struct query *q, const char *table, FILE *f)
{
	struct names *cols = calloc(QUERY_MAX_FILES + 1, sizeof(*cols)),
		     *all = cols + QUERY_MAX_FILES;
	char sch[16], sql[128];
	int rc = cols ? 0 : -1;
	for (int i = 0; !rc && i < q->n; i++) {
		cols[i].n = 0;
		snprintf(sql, sizeof(sql), "SELECT name FROM pragma_table_info(?1, '%s')",
			 qy_schema(sch, sizeof(sch), i));
		if (names_of(q->db, sql, table, &cols[i], MAX_COLS))
			rc = -1;
		for (int c = 0; !rc && c < cols[i].n; c++)
			if (strcmp(cols[i].v[c], "_file") && names_add(all, cols[i].v[c], MAX_COLS))
				rc = -1;
	}
	if (!rc)
		view_union(q, table, cols, all, f);
	free(cols);
	return rc;
}

/* CREATE TEMP VIEW table AS SELECT ... UNION ALL ... of the files' tables. */
static void view_union(struct query *q, const char *table, const struct names *cols,
		       const struct names *all, FILE *f)
{
	char sch[16];
	fputs("CREATE TEMP VIEW ", f);
	fput_quoted(f, '"', table);
	fputs(" AS ", f);
	int first = 1;
	for (int i = 0; i < q->n; i++) {
		if (!cols[i].n)
			continue;
		fputs(first ? "SELECT " : " UNION ALL SELECT ", f);
		first = 0;
		for (int c = 0; c < all->n; c++) {
			const char *cn = all->v[c];
			if (!strcmp(cn, "node")) {
				fputs(has(&cols[i], "node") ? "COALESCE(NULLIF(\"node\", ''), "
							    : "(",
				      f);
				fput_quoted(f, '\'', q->node[i]);
				fputs(")", f);
			} else if (has(&cols[i], cn)) {
				fput_quoted(f, '"', cn);
			} else {
				fputs("NULL", f);
			}
			fputs(" AS ", f);
			fput_quoted(f, '"', cn);
			fputs(", ", f);
		}
		if (!has(all, "node")) {
			fput_quoted(f, '\'', q->node[i]);
			fputs(" AS \"node\", ", f);
		}
		fprintf(f, "%d AS \"_file\" FROM %s.", i, qy_schema(sch, sizeof(sch), i));
		fput_quoted(f, '"', table);
	}
}

/* SQLite checks a change of sqlite_master the first time a connection uses
 * an eponymous virtual table (json_each, pragma_table_info...): the guard
 * would deny it. Preparing each once before the guard is on does that
 * check; nothing runs. */
/* The table-valued functions a query may use are made before the
 * authorizer is installed: making one later asks to change the schema,
 * which the authorizer denies (qy_refused_vtab names it then). */
void qy_warm_vtabs(sqlite3 *db)
{
	static const char *const vt[] = {"json_each", "json_tree"};
	char sql[96];
	for (size_t i = 0; i < 2 + sizeof(ro_pragmas) / sizeof(*ro_pragmas) - 1; i++) {
		sqlite3_stmt *st = NULL;
		if (i < 2)
			snprintf(sql, sizeof(sql), "SELECT * FROM %s", vt[i]);
		else
			snprintf(sql, sizeof(sql), "SELECT * FROM pragma_%s", ro_pragmas[i - 2]);
		sqlite3_prepare_v2(db, sql, -1, &st, NULL);
		sqlite3_finalize(st);
	}
}

/* Past a literal at s ('text' or x'0a', quotes doubled inside). */
static const char *skip_literal(const char *s)
{
	for (s = strchr(s, '\'') + 1; *s; s++)
		if (*s == '\'' && *++s != '\'')
			return s;
	return s;
}

/* The next identifier of sql at *p, lower-cased into b (n bytes): a word,
 * or a quoted name ("x", `x`, [x]); literals, numbers and comments are
 * skipped. 0 at the end. */
static int next_ident(const char **p, char *b, size_t n)
{
	const char *s = *p;
	while (*s) {
		unsigned char c = (unsigned char)*s;
		char close = c == '"' ? '"' : c == '`' ? '`' : c == '[' ? ']' : 0;
		if (s[0] == '-' && s[1] == '-') {
			s += strcspn(s, "\n");
		} else if (s[0] == '/' && s[1] == '*') {
			const char *e = strstr(s + 2, "*"
						      "/");
			s = e ? e + 2 : s + strlen(s);
		} else if (c == '\'' || ((c == 'x' || c == 'X') && s[1] == '\'')) {
			s = skip_literal(s);
		} else if (isdigit(c)) {
			while (isalnum((unsigned char)*s) || *s == '.')
				s++;
		} else if (close || isalpha(c) || c == '_') {
			size_t o = 0;
			for (s += close != 0; *s; s++) {
				if (close && *s == close && *++s != close)
					break; /* the end; a doubled quote is one */
				if (!close && !isalnum((unsigned char)*s) && *s != '_' && *s != '$')
					break;
				if (o + 1 < n)
					b[o++] = (char)tolower((unsigned char)*s);
			}
			b[o] = 0;
			*p = s;
			return 1;
		} else {
			s++;
		}
	}
	*p = s;
	return 0;
}

/* 1 when sql (one text column, ?1 bound to arg) gives a row. */
static int any_row(sqlite3 *db, const char *sql, const char *arg)
{
	sqlite3_stmt *st = NULL;
	int found = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
		    sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

const char *qy_refused_vtab(struct query *q, const char *sql, char *out, size_t n)
{
	char id[80];
	const char *p = sql, *found = NULL;
	sqlite3_set_authorizer(q->db, NULL, NULL); /* the handle's own look-ups */
	while (!found && next_ident(&p, id, sizeof(id))) {
		if (!strncmp(id, "pragma_", 7) && !in_list(ro_pragmas, id + 7) &&
		    any_row(q->db, "SELECT 1 FROM pragma_pragma_list WHERE name = ?1", id + 7)) {
			snprintf(out, n,
				 "%s(): %s is not one of the pragmas a query may use (those "
				 "that only report: table_info, index_list, page_count, ...)",
				 id, id + 7);
			found = out;
		} else if (strcmp(id, "json_each") && strcmp(id, "json_tree") &&
			   strncmp(id, "pragma_", 7) &&
			   any_row(q->db, "SELECT 1 FROM pragma_module_list WHERE name = ?1", id)) {
			snprintf(out, n,
				 "the virtual table %s: a query may read the recordings' tables, "
				 "json_each, json_tree and the pragmas that only report",
				 id);
			found = out;
		}
	}
	sqlite3_set_authorizer(q->db, qy_authorize, &q->auth);
	return found;
}

int qy_make_views(struct query *q, char *err, size_t len)
{
	static struct names tables;
	char sch[16], sql[160];
	tables.n = 0;
	for (int i = 0; i < q->n; i++) {
		snprintf(sql, sizeof(sql),
			 "SELECT name FROM %s.sqlite_master WHERE type = 'table' AND name NOT LIKE "
			 "'sqlite_%%' ORDER BY name",
			 qy_schema(sch, sizeof(sch), i));
		if (names_of(q->db, sql, NULL, &tables, MAX_TABLES))
			return qy_err(err, len, -EINVAL,
				      "cannot query %s: cannot read its tables: %s", q->paths[i],
				      sqlite3_errmsg(q->db));
	}
	for (int t = 0; t < tables.n; t++) {
		char *buf = NULL;
		size_t n = 0;
		FILE *f = open_memstream(&buf, &n);
		if (!f)
			return qy_err(err, len, -ENOMEM, "out of memory");
		int r = view_sql(q, tables.v[t], f);
		fclose(f);
		if (r || sqlite3_exec(q->db, buf, NULL, NULL, NULL)) {
			qy_err(err, len, -EINVAL, "cannot join the files' %s tables: %s",
			       tables.v[t], r ? "too many columns" : sqlite3_errmsg(q->db));
			free(buf);
			return -EINVAL;
		}
		free(buf);
	}
	return 0;
}

/* --- shortcuts ----------------------------------------------------------------- */

#define TIME_OF(col) "strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', " col " / 1e9, 'unixepoch')"

/* The pieces that differ between one file and several. */
struct parts {
	const char *node;   /* "e.node AS node, " or "" */
	const char *onfile; /* " AND o._file = e._file" or "" */
	const char *sfile;  /* " AND s._file = e._file" or "" */
};

/* An op's name as ingero-top and explain spell it: Ingero's files store
 * some under a short name (cudaStreamSync for cudaStreamSynchronize). */
static void op_name_sql(FILE *f, const char *col)
{
	fprintf(f, "CASE %s", col);
	for (int op = 1; op < IG_OP_MAX; op++) {
		const char *alias = NULL;
		if (recfmt_ingero_op(IG_EV_CALL, op, &alias, NULL) && alias &&
		    strcmp(alias, ig_op_name(op)))
			fprintf(f, " WHEN '%s' THEN '%s'", alias, ig_op_name(op));
	}
	fprintf(f, " ELSE %s END", col);
}

static void ops_sql(FILE *f, const struct parts *p, int multi)
{
	fprintf(f, "WITH c AS (SELECT %ss.name AS source, ", p->node);
	op_name_sql(f, "o.name");
	fprintf(f,
		" AS op, e.duration AS d, "
		"ROW_NUMBER() OVER w AS r, COUNT(*) OVER p AS n FROM events e "
		"JOIN sources s ON s.id = e.source%s "
		"JOIN ops o ON o.source_id = e.source AND o.op_id = e.op%s "
		"WHERE s.name IN ('CUDA', 'DRIVER') "
		"WINDOW p AS (PARTITION BY %se.source, e.op), w AS (p ORDER BY e.duration)) "
		"SELECT %ssource, op, MAX(n) AS calls, ROUND(SUM(d) / 1e6, 3) AS total_ms, "
		"ROUND(AVG(d) / 1e3, 1) AS mean_us, "
		"ROUND(MIN(CASE WHEN r * 100 >= n * 50 THEN d END) / 1e3, 1) AS p50_us, "
		"ROUND(MIN(CASE WHEN r * 100 >= n * 95 THEN d END) / 1e3, 1) AS p95_us, "
		"ROUND(MIN(CASE WHEN r * 100 >= n * 99 THEN d END) / 1e3, 1) AS p99_us, "
		"ROUND(MAX(d) / 1e3, 1) AS max_us FROM c GROUP BY %ssource, op "
		"ORDER BY SUM(d) DESC, op",
		p->sfile, p->onfile, multi ? "e.node, " : "", multi ? "node, " : "",
		multi ? "node, " : "");
}

static void chains_sql(FILE *f, int multi)
{
	fprintf(
	    f,
	    "SELECT %sid, " TIME_OF(
		"detected_at") " AS detected, severity, root_cause, "
			       "cuda_op AS op, cuda_p99_us AS p99_us, summary FROM causal_chains "
			       "ORDER BY detected_at, id",
	    multi ? "node, " : "");
}

/* The name of a row's process: the row's comm when the file has one, else
 * the latest process_names row of its pid. */
static void comm_join(FILE *f, int multi)
{
	fprintf(f,
		" LEFT JOIN (SELECT pid, name, MAX(seen_at)%s FROM process_names GROUP BY "
		"pid%s) pn ON pn.pid = e.pid%s",
		multi ? ", _file" : "", multi ? ", _file" : "",
		multi ? " AND pn._file = e._file" : "");
}

static void slowest_sql(FILE *f, const struct parts *p, int multi, int comm, int ours,
			const char *op)
{
	/* ingero-top's op name or Ingero's (cudaStreamSynchronize is stored as
	 * cudaStreamSync): both select the op */
	const char *alias = NULL;
	int id = op ? ig_op_by_name(op) : -1;
	if (id > 0)
		recfmt_ingero_op(IG_EV_CALL, id, &alias, NULL);
	fprintf(f, "SELECT %s" TIME_OF("e.timestamp") " AS time, ", p->node);
	op_name_sql(f, "o.name");
	fprintf(f, " AS op, e.pid, e.tid, %s AS comm, ROUND(e.duration / 1e3, 1) AS dur_us, ",
		comm ? "COALESCE(NULLIF(e.comm, ''), pn.name, '')" : "COALESCE(pn.name, '')");
	if (ours)
		fputs("ROUND(e.preempt_ns / 1e3, 1) AS preempted_us, ROUND(e.blocked_ns / 1e3, 1) "
		      "AS blocked_us, e.switches, NULLIF(e.other_comm, '') AS preemptor, ",
		      f);
	fprintf(f,
		"CASE WHEN e.stack_hash != 0 THEN printf('%%016x', e.stack_hash) END AS stack "
		"FROM events e JOIN ops o ON o.source_id = e.source AND o.op_id = e.op%s "
		"JOIN sources s ON s.id = e.source%s",
		p->onfile, p->sfile);
	comm_join(f, multi);
	fputs(" WHERE (o.name = ?1", f);
	if (alias && strcmp(alias, op)) {
		fputs(" OR o.name = ", f);
		fput_quoted(f, '\'', alias);
	}
	fputs(") AND s.name IN ('CUDA', 'DRIVER') ORDER BY e.duration DESC, e.timestamp LIMIT 20",
	      f);
}

static void timeline_sql(FILE *f, const struct parts *p, int multi, int comm, int ours)
{
	fprintf(f,
		"SELECT %s" TIME_OF("e.timestamp") " AS time, e.tid, %s AS comm, s.name AS source, ",
		p->node,
		comm ? "COALESCE(NULLIF(e.comm, ''), pn.name, '')" : "COALESCE(pn.name, '')");
	op_name_sql(f, "o.name");
	fputs(" AS op, ROUND(e.duration / 1e3, 1) AS dur_us, ", f);
	if (ours)
		fputs("CASE WHEN e.kind = 2 THEN CASE e.state WHEN 1 THEN 'preempted' WHEN 2 THEN "
		      "'blocked' ELSE 'unknown' END END AS state, NULLIF(e.other_comm, '') AS "
		      "other, ",
		      f);
	fprintf(f,
		"e.arg0 FROM events e JOIN sources s ON s.id = e.source%s "
		"JOIN ops o ON o.source_id = e.source AND o.op_id = e.op%s",
		p->sfile, p->onfile);
	comm_join(f, multi);
	fputs(" WHERE e.pid = CAST(?1 AS INTEGER) ORDER BY e.timestamp", f);
}

char *query_shortcut_sql(struct query *q, int which, const char *arg)
{
	int multi = q->n > 1;
	int comm = query_has_column(q, "events", "comm");
	int ours = query_has_column(q, "events", "preempt_ns");
	struct parts p = {
	    .node = multi ? "e.node AS node, " : "",
	    .onfile = multi ? " AND o._file = e._file" : "",
	    .sfile = multi ? " AND s._file = e._file" : "",
	};
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f)
		return NULL;
	switch (which) {
	case QS_OPS:
		ops_sql(f, &p, multi);
		break;
	case QS_CHAINS:
		chains_sql(f, multi);
		break;
	case QS_SLOWEST:
		slowest_sql(f, &p, multi, comm, ours, arg);
		break;
	case QS_TIMELINE:
		timeline_sql(f, &p, multi, comm, ours);
		break;
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
