/* The adapter for Ingero's trace databases (schema 0.8 to 0.10): op ids by
 * name from the file's ops table, rows stamped at their start or their end
 * reordered by completion time, sched_switch as off-CPU intervals of
 * unknown state, block I/O in bytes, fork's child pid moved, names from
 * process_names, page allocations spread from the per-minute sums of
 * event_aggregates. See replay.h for the conversions. */
#include "store/replay_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/recfmt.h"

static void names_put(struct rfile *f, uint32_t pid, const char *name)
{
	unsigned slot = (pid * 2654435761u) % RP_NAME_SLOTS;
	f->names[slot].pid = pid;
	snprintf(f->names[slot].comm, IG_COMM_LEN, "%s", name ? name : "");
}

static const char *names_get(const struct rfile *f, uint32_t pid)
{
	if (!f->names)
		return NULL;
	unsigned slot = (pid * 2654435761u) % RP_NAME_SLOTS;
	return f->names[slot].pid == pid ? f->names[slot].comm : NULL;
}

/* Columns of an Ingero row (rp_ingero_events_sql): rowid, timestamp, pid,
 * tid, source, op, duration, arg0, arg1, ret_code, stack_hash, cgroup_id,
 * then node? and comm? (text). */
enum { IC_STAMP = 1, IC_PID, IC_TID, IC_SRC, IC_OP, IC_DUR, IC_ARG0, IC_ARG1, IC_RET, IC_NUM = 12 };

static int in(int64_t v, int64_t lo, int64_t hi)
{
	return v >= lo && v <= hi;
}

/* Are the values of an Ingero row in range (recfmt.h's bounds)? The
 * interval it describes must lie within them too. */
static int ingero_row_ok(const struct rfile *f, const int64_t *v, int kind)
{
	int64_t stamp = v[IC_STAMP], dur = v[IC_DUR];
	if (!in(stamp, 1, RECFMT_TS_MAX_NS) || !in(dur, 0, f->dur_max) ||
	    !in(v[IC_PID], 1, RECFMT_PID_MAX) || !in(v[IC_TID], 0, RECFMT_PID_MAX) ||
	    !in(v[IC_RET], INT32_MIN, INT32_MAX))
		return 0;
	if (recfmt_end_stamped(kind) ? !recfmt_ts_ok(stamp - dur) : !recfmt_ts_ok(stamp + dur))
		return 0;
	if (kind == IG_EV_FORK && !in(v[IC_ARG1], 1, RECFMT_PID_MAX))
		return 0;
	if (kind == IG_EV_BLOCK_IO && !in(v[IC_ARG0], 0, RECFMT_BYTES_MAX / 512))
		return 0;
	if (kind == IG_EV_PAGE_ALLOC && !in(v[IC_ARG0], 0, RECFMT_BYTES_MAX))
		return 0;
	return 1;
}

/* Ingero row: returns enum rp_row; e is set for ROW_OK. Each numeric
 * column is read once, and must be an integer. */
static int ingero_row(struct replay *r, struct rfile *f, sqlite3_stmt *st, struct ig_event *e,
		      int node_col, int comm_col)
{
	int64_t v[IC_NUM];
	if (recfmt_row_has_null(st))
		return ROW_REFUSE;
	for (int c = 0; c < IC_NUM; c++) {
		sqlite3_value *x = sqlite3_column_value(st, c);
		if (sqlite3_value_type(x) != SQLITE_INTEGER)
			return ROW_REFUSE;
		v[c] = sqlite3_value_int64(x);
	}
	const struct opmap *m = rp_op_lookup(f, v[IC_SRC], v[IC_OP]);
	if (!m)
		return ROW_REFUSE; /* an op the file's own ops table does not name */
	if (!m->kind)
		return ROW_SKIP;
	if (!ingero_row_ok(f, v, m->kind))
		return ROW_REFUSE;
	memset(e, 0, sizeof(*e));
	int64_t stamp = v[IC_STAMP], dur = v[IC_DUR];
	e->kind = (uint16_t)m->kind;
	e->op = (uint16_t)m->op;
	e->pid = (uint32_t)v[IC_PID];
	e->tid = (uint32_t)v[IC_TID];
	e->dur_ns = (uint64_t)dur;
	e->ts_ns = (uint64_t)(recfmt_end_stamped(m->kind) ? stamp - dur : stamp);
	e->arg0 = (uint64_t)v[IC_ARG0];
	e->arg1 = (uint64_t)v[IC_ARG1];
	e->ret = (int32_t)v[IC_RET];
	e->stack_id = (uint64_t)v[10];
	e->cgroup_id = (uint64_t)v[11];
	switch (m->kind) {
	case IG_EV_CALL:
		e->flags = IG_F_NO_SPLIT;
		break;
	case IG_EV_OFFCPU:
		e->state = IG_OFF_UNKNOWN;
		e->arg0 = e->arg1 = 0;
		break;
	case IG_EV_BLOCK_IO:
		e->arg0 *= 512; /* Ingero stores sectors */
		break;
	case IG_EV_FORK:
		e->arg0 = e->arg1; /* Ingero: child pid in arg1 */
		e->arg1 = 0;
		break;
	}
	e->node = (uint8_t)rp_node_for(
	    r, f, node_col >= 0 ? (const char *)sqlite3_column_text(st, node_col) : NULL);
	if (comm_col >= 0)
		recfmt_column_comm(e->comm, st, comm_col);
	if (!e->comm[0]) {
		const char *n = names_get(f, e->pid);
		if (n)
			memcpy(e->comm, n, IG_COMM_LEN);
	}
	return ROW_OK;
}

/* --- the events stream ------------------------------------------------------------- */

int rp_ingero_next(struct replay *r, struct stream *s)
{
	struct rfile *f = s->f;
	int node_col = f->has_node ? 12 : -1;
	int comm_col = f->has_comm ? (f->has_node ? 13 : 12) : -1;
	for (;;) {
		/* every row not read yet completes at or after last_stamp */
		int rc = rp_heap_step(r, s, "reading events");
		if (rc)
			return rc > 0 ? 0 : rc;
		r->st.rows++;
		struct ig_event e;
		int row = ingero_row(r, f, s->st, &e, node_col, comm_col);
		if (row != ROW_OK) {
			if (row == ROW_SKIP)
				r->st.skipped++;
			else
				r->st.refused++;
			continue;
		}
		int64_t stamp = sqlite3_column_int64(s->st, 1);
		if (stamp < s->last_stamp) /* the heap needs rows by timestamp */
			return rp_fail_order(r, f, "events");
		s->last_stamp = stamp;
		if (rp_heap_push(s, &e, s->seq++))
			return -ENOMEM;
	}
}

void rp_ingero_events_sql(struct rfile *f, char *buf, size_t len)
{
	snprintf(buf, len,
		 "SELECT rowid, timestamp, pid, tid, source, op, duration, "
		 "arg0, arg1, ret_code, %s, %s%s%s, nullif(gpu_id IS NULL%s, 1) FROM events WHERE "
		 "timestamp >= ?1 ORDER BY timestamp, rowid",
		 db_has_column(f->db, "events", "stack_hash") ? "stack_hash" : "0",
		 db_has_column(f->db, "events", "cgroup_id") ? "cgroup_id" : "0",
		 f->has_node ? ", node" : "", f->has_comm ? ", comm" : "",
		 db_has_column(f->db, "events", "stack_ips") ? " OR stack_ips IS NULL" : "");
}

/* --- span and arrays -------------------------------------------------------------- */

/* Ingero: the exact first and last completion times of deliverable rows,
 * looking only at rows within w_ns of the first and last timestamps. */
static const char *ingero_span(struct replay *r, struct rfile *f, int64_t lo, int64_t hi)
{
	if (lo == INT64_MIN)
		return NULL;
	char sql[256];
	snprintf(sql, sizeof(sql),
		 "SELECT rowid, timestamp, pid, tid, source, op, duration, 0, 0, 0, 0, 0 FROM "
		 "events WHERE timestamp <= %" PRId64 " OR timestamp >= %" PRId64,
		 lo + (int64_t)f->w_ns, hi - (int64_t)f->w_ns);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(f->db, sql, -1, &st, NULL) != SQLITE_OK)
		return rp_err("cannot replay %s: %s", f->path, sqlite3_errmsg(f->db));
	int rc;
	while ((rc = db_step(st)) == SQLITE_ROW) {
		struct ig_event e;
		if (ingero_row(r, f, st, &e, -1, -1) == ROW_OK)
			rp_span_add(f, rp_key(&e));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return rp_err("cannot replay %s: corrupt events table: %s", f->path,
			      db_errmsg(f->db, rc));
	return NULL;
}

static int cmp_ev(const void *a, const void *b)
{
	const struct ig_event *x = a, *y = b;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Ingero: process names, delivered at the start of the file (Ingero
 * stamps them when the session ends), as a small sorted array. */
static void ingero_names(struct replay *r, struct rfile *f)
{
	sqlite3_stmt *st;
	struct stream *s = &f->s[S_COMM];
	if (!db_has_table(f->db, "process_names") ||
	    sqlite3_prepare_v2(f->db, "SELECT pid, name, seen_at FROM process_names ORDER BY pid",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	size_t cap = 0;
	while (db_step(st) == SQLITE_ROW &&
	       !rp_grow((void **)&s->arr, s->alen, &cap, sizeof(*s->arr))) {
		if (recfmt_row_has_null(st) || !recfmt_col_in(st, 0, 1, RECFMT_PID_MAX) ||
		    !recfmt_col_in(st, 2, 0, RECFMT_TS_MAX_NS)) {
			r->st.refused++;
			continue;
		}
		struct ig_event *e = &s->arr[s->alen++];
		memset(e, 0, sizeof(*e));
		e->kind = IG_EV_COMM;
		e->pid = e->tid = (uint32_t)sqlite3_column_int64(st, 0);
		recfmt_column_comm(e->comm, st, 1);
		uint64_t seen = (uint64_t)sqlite3_column_int64(st, 2);
		e->ts_ns = f->has_span && (seen > f->start || !seen) ? f->start : seen;
		e->node = (uint8_t)f->default_node_idx;
		names_put(f, e->pid, (const char *)sqlite3_column_text(st, 1));
	}
	sqlite3_finalize(st);
	if (!s->arr)
		s->arr = calloc(1, sizeof(*s->arr)); /* marks an array stream */
	qsort(s->arr, s->alen, sizeof(*s->arr), cmp_ev);
	for (size_t i = 0; i < s->alen; i++)
		rp_span_add(f, s->arr[i].ts_ns);
}

/* One event_aggregates sum spread evenly over the seconds of its minute
 * that the recording covers. 0 or -ENOMEM. */
static int spread_minute(struct rfile *f, struct stream *s, size_t *cap, uint64_t b, uint32_t pid,
			 uint64_t bytes)
{
	const uint64_t sec = 1000000000ull;
	uint64_t lo = b > f->start ? b : f->start;
	uint64_t hi = b + 60 * sec < f->end + 1 ? b + 60 * sec : f->end + 1;
	if (lo >= hi) {
		lo = b + 60 * sec <= f->start ? f->start : f->end;
		hi = lo + 1;
	}
	uint64_t k = (hi - lo + sec - 1) / sec;
	for (uint64_t i = 0; i < k; i++) {
		if (rp_grow((void **)&s->arr, s->alen, cap, sizeof(*s->arr)))
			return -ENOMEM;
		struct ig_event *e = &s->arr[s->alen++];
		memset(e, 0, sizeof(*e));
		e->kind = IG_EV_PAGE_ALLOC;
		e->ts_ns = lo + i * sec;
		e->pid = e->tid = pid;
		e->arg0 = bytes / k + (i == k - 1 ? bytes % k : 0);
		e->node = (uint8_t)f->default_node_idx;
		const char *n = names_get(f, pid);
		if (n)
			memcpy(e->comm, n, IG_COMM_LEN);
	}
	return 0;
}

/* A row of event_aggregates with a NULL: refused, counted once here */
#define AGG_NULL                                                                                   \
	"bucket IS NULL OR source IS NULL OR op IS NULL OR pid IS NULL OR count IS NULL OR "       \
	"stored IS NULL OR sum_dur IS NULL OR min_dur IS NULL OR max_dur IS NULL OR "              \
	"sum_arg0 IS NULL"

/* Ingero: page allocations from the per-minute sums of event_aggregates,
 * as a sorted array (an empty one with replay_opts.no_aggregates). */
static const char *ingero_aggregates(struct replay *r, struct rfile *f)
{
	sqlite3_stmt *st;
	struct stream *s = &f->s[S_AGG];
	s->arr = calloc(1, sizeof(*s->arr));
	if (!s->arr)
		return rp_err("cannot replay %s: out of memory", f->path);
	if (r->o.no_aggregates || !f->has_span || !db_has_table(f->db, "event_aggregates"))
		return NULL;
	int64_t page_op = -1;
	for (size_t i = 0; i < f->nops; i++)
		if (f->ops[i].kind == IG_EV_PAGE_ALLOC)
			page_op = f->ops[i].id;
	if (page_op < 0)
		return NULL;
	char sql[640];
	int ok = 1; /* rows the query below cannot select: a NULL where it selects */
	int64_t nulls =
	    db_query_int(f->db, "SELECT count(*) FROM event_aggregates WHERE " AGG_NULL, 0, &ok);
	r->st.refused += nulls > 0 ? (uint64_t)nulls : 0;
	snprintf(sql, sizeof(sql),
		 "SELECT bucket, pid, sum_arg0 FROM event_aggregates WHERE source = 3 AND op = "
		 "%" PRId64 " AND stored = 0 AND sum_arg0 > 0 AND NOT (" AGG_NULL ") ORDER BY "
		 "bucket, pid",
		 page_op);
	if (sqlite3_prepare_v2(f->db, sql, -1, &st, NULL) != SQLITE_OK)
		return NULL;
	size_t cap = 1;
	int rc = 0;
	while (!rc && db_step(st) == SQLITE_ROW && s->alen < (1u << 20)) {
		if (recfmt_row_has_null(st) ||
		    !recfmt_col_in(st, 0, 1, RECFMT_TS_MAX_NS - 60000000000ll) ||
		    !recfmt_col_in(st, 1, 1, RECFMT_PID_MAX) ||
		    !recfmt_col_in(st, 2, 1, RECFMT_BYTES_MAX)) {
			r->st.refused++;
			continue;
		}
		rc = spread_minute(f, s, &cap, (uint64_t)sqlite3_column_int64(st, 0),
				   (uint32_t)sqlite3_column_int64(st, 1),
				   (uint64_t)sqlite3_column_int64(st, 2));
	}
	sqlite3_finalize(st);
	if (rc)
		return rp_err("cannot replay %s: out of memory", f->path);
	qsort(s->arr, s->alen, sizeof(*s->arr), cmp_ev);
	r->st.synthesized += s->alen;
	return NULL;
}

/* --- opening ---------------------------------------------------------------------- */

const char *rp_ingero_prepare(struct replay *r, struct rfile *f)
{
	const char *e;
	f->names = calloc(RP_NAME_SLOTS, sizeof(*f->names));
	if (!f->names)
		return rp_err("cannot replay %s: out of memory", f->path);
	/* the span of the stamps in range, and so the longest duration allowed */
	char sql[640];
	int ok = 1;
	snprintf(sql, sizeof(sql),
		 "SELECT timestamp FROM events WHERE timestamp BETWEEN 1 AND %lld "
		 "ORDER BY timestamp %s LIMIT 1",
		 RECFMT_TS_MAX_NS, "ASC");
	int64_t lo = db_query_int(f->db, sql, INT64_MIN, &ok);
	snprintf(sql, sizeof(sql),
		 "SELECT timestamp FROM events WHERE timestamp BETWEEN 1 AND %lld "
		 "ORDER BY timestamp %s LIMIT 1",
		 RECFMT_TS_MAX_NS, "DESC");
	int64_t hi = db_query_int(f->db, sql, INT64_MIN, &ok);
	f->dur_max = recfmt_dur_max(lo, hi);
	/* longest call: how far a completion can lie after its row's stamp */
	size_t n = (size_t)snprintf(sql, sizeof(sql),
				    "SELECT MAX(duration) FROM events WHERE duration BETWEEN 0 "
				    "AND %lld AND (0",
				    (long long)f->dur_max);
	for (size_t i = 0; i < f->nops && n < sizeof(sql) - 64; i++)
		if (f->ops[i].kind && !recfmt_end_stamped(f->ops[i].kind))
			n += (size_t)snprintf(sql + n, sizeof(sql) - n,
					      " OR (source = %d AND op = %" PRId64 ")",
					      f->ops[i].src, f->ops[i].id);
	if (n < sizeof(sql) - 2)
		snprintf(sql + n, sizeof(sql) - n, ")");
	int64_t w = db_query_int(f->db, sql, 0, &ok);
	if (!ok)
		return rp_err("cannot replay %s: corrupt events table: %s", f->path,
			      db_errmsg(f->db, sqlite3_errcode(f->db)));
	f->w_ns = w > 0 ? (uint64_t)w : 0;
	if ((e = ingero_span(r, f, lo, hi)))
		return e;
	/* snapshots belong to the span too */
	int64_t a = db_query_int(f->db, recfmt_snapshot_span_sql(0), INT64_MIN, &ok);
	int64_t b = db_query_int(f->db, recfmt_snapshot_span_sql(1), INT64_MIN, &ok);
	if (a != INT64_MIN)
		rp_span_add(f, (uint64_t)a);
	if (b != INT64_MIN)
		rp_span_add(f, (uint64_t)b);
	ingero_names(r, f);
	return ingero_aggregates(r, f);
}
