/* The ingero_top_summaries rows of the recording format: the calls a
 * recording made with --record-rate did not keep, told per run (see
 * recfmt.h). Their units column is plain text, one unit kind after another,
 * separated by ';':
 *
 *     n q0 .. q8 ncalls (src op_id ret flags cpu arg0 arg1 arg2 stream stack dur_sum off_sum) x
 * ncalls
 *
 * all decimal integers (64-bit values as signed, like the events table's
 * stack_hash). docs/recording.md describes it. */
#include "store/recfmt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const double recfmt_sum_q[REC_SUM_Q] = {0, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.99, 1};

/* Fields of one call in the text. */
#define CALL_FIELDS 12

const char recfmt_summary_insert_sql[] =
    "INSERT INTO ingero_top_summaries (pid, tid, from_ns, to_ns, calls, cgroup_id, node, units) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

/* from_ns >= ?1 - the longest run (a run never spans more: read refuses
 * it), by the index; to_ns >= ?1: a run that ends before it is not read */
const char recfmt_summary_select_sql[] =
    "SELECT pid, tid, from_ns, to_ns, calls, cgroup_id, node, units FROM ingero_top_summaries "
    "WHERE from_ns >= ?1 - 1000000000 AND to_ns >= ?1 ORDER BY from_ns";

/* Appends printf output to a growing text; 0 or -ENOMEM. */
struct text {
	char *p;
	size_t len, cap;
};

static int add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int add(struct text *t, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		size_t room = t->cap - t->len;
		int n = t->p ? vsnprintf(t->p + t->len, room, fmt, ap) : -1;
		va_end(ap);
		if (n >= 0 && (size_t)n < room) {
			t->len += (size_t)n;
			return 0;
		}
		size_t cap = t->cap ? t->cap * 2 : 1024;
		char *p = realloc(t->p, cap);
		if (!p)
			return -ENOMEM;
		t->p = p;
		t->cap = cap;
	}
}

static char *units_text(const struct rec_summary *s)
{
	struct text t = {0};
	int rc = 0;
	for (unsigned i = 0; !rc && i < s->nunits; i++) {
		const struct rec_sum_unit *u = &s->u[i];
		rc = add(&t, "%s%" PRIu32, i ? ";" : "", u->n);
		for (int k = 0; !rc && k < REC_SUM_Q; k++)
			rc = add(&t, " %" PRIu64, u->q[k]);
		rc = rc ? rc : add(&t, " %u", u->ncalls);
		for (unsigned j = 0; !rc && j < u->ncalls; j++) {
			const struct rec_sum_call *c = &u->c[j];
			int op_id = 0;
			int src = recfmt_ingero_op(IG_EV_CALL, c->op, NULL, &op_id);
			rc = add(&t,
				 " %d %d %" PRId32 " %" PRIu32 " %" PRIu32 " %" PRId64 " %" PRId64
				 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRIu64 " %" PRIu64,
				 src, op_id, c->ret, c->flags, c->cpu, (int64_t)c->arg0,
				 (int64_t)c->arg1, (int64_t)c->arg2, (int64_t)c->stream,
				 (int64_t)c->stack_id, c->dur_sum, c->off_sum);
		}
	}
	if (!rc && !t.p)
		rc = add(&t, "%s", "");
	if (rc) {
		free(t.p);
		return NULL;
	}
	return t.p;
}

int recfmt_summary_bind(sqlite3_stmt *st, const struct rec_summary *s, const char *node)
{
	char *units = units_text(s);
	if (!units)
		return -ENOMEM;
	sqlite3_bind_int64(st, 1, s->pid);
	sqlite3_bind_int64(st, 2, s->tid);
	sqlite3_bind_int64(st, 3, (int64_t)s->from_ns);
	sqlite3_bind_int64(st, 4, (int64_t)s->to_ns);
	sqlite3_bind_int64(st, 5, (int64_t)s->calls);
	sqlite3_bind_int64(st, 6, (int64_t)s->cgroup_id);
	sqlite3_bind_text(st, 7, node ? node : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 8, units, -1, free);
	return 0;
}

/* --- reading ---------------------------------------------------------------------- */

/* The next integer of *p within [lo, hi]; 0 or -ERANGE. */
static int next_int(const char **p, int64_t lo, int64_t hi, int64_t *v)
{
	const char *s = *p;
	while (*s == ' ')
		s++;
	if (!((*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9')))
		return -ERANGE;
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (errno || x < lo || x > hi || (*end && *end != ' ' && *end != ';'))
		return -ERANGE;
	*v = x;
	*p = end;
	return 0;
}

static int read_call(const char **p, struct rec_sum_call *c)
{
	int64_t v[CALL_FIELDS];
	static const int64_t lim[CALL_FIELDS][2] = {{0, 255},
						    {0, 1 << 20},
						    {INT32_MIN, INT32_MAX},
						    {0, UINT32_MAX},
						    {0, 65535},
						    {INT64_MIN, INT64_MAX},
						    {INT64_MIN, INT64_MAX},
						    {INT64_MIN, INT64_MAX},
						    {INT64_MIN, INT64_MAX},
						    {INT64_MIN, INT64_MAX},
						    {0, INT64_MAX},
						    {0, INT64_MAX}};
	for (int i = 0; i < CALL_FIELDS; i++)
		if (next_int(p, lim[i][0], lim[i][1], &v[i]))
			return -ERANGE;
	*c = (struct rec_sum_call){.src = v[0],
				   .op_id = v[1],
				   .ret = (int32_t)v[2],
				   .flags = (uint32_t)v[3],
				   .cpu = (uint32_t)v[4],
				   .arg0 = (uint64_t)v[5],
				   .arg1 = (uint64_t)v[6],
				   .arg2 = (uint64_t)v[7],
				   .stream = (uint64_t)v[8],
				   .stack_id = (uint64_t)v[9],
				   .dur_sum = (uint64_t)v[10],
				   .off_sum = (uint64_t)v[11]};
	return 0;
}

/* A unit kind's numbers hold together: quantiles ascending within the run's
 * span, the outer calls' sum within n times their range, the calls inside
 * within the outer ones. */
static int unit_ok(const struct rec_sum_unit *u, uint64_t span)
{
	for (int k = 1; k < REC_SUM_Q; k++)
		if (u->q[k] < u->q[k - 1])
			return 0;
	if (u->q[REC_SUM_Q - 1] > span)
		return 0;
	const struct rec_sum_call *o = &u->c[0];
	if (o->off_sum || o->dur_sum < u->q[0] * u->n || o->dur_sum > u->q[REC_SUM_Q - 1] * u->n)
		return 0;
	for (unsigned j = 1; j < u->ncalls; j++)
		if (u->c[j].dur_sum > o->dur_sum || u->c[j].off_sum > o->dur_sum - u->c[j].dur_sum)
			return 0;
	return 1;
}

static int read_units(const char *p, struct rec_summary *s)
{
	uint64_t units = 0, calls = 0;
	s->nunits = 0;
	for (;;) {
		if (s->nunits == REC_SUM_TYPES)
			return -ERANGE;
		struct rec_sum_unit *u = &s->u[s->nunits];
		int64_t v;
		if (next_int(&p, 1, REC_SUM_MAX_UNITS, &v))
			return -ERANGE;
		u->n = (uint32_t)v;
		for (int k = 0; k < REC_SUM_Q; k++) {
			if (next_int(&p, 0, REC_SUM_MAX_SPAN_NS, &v))
				return -ERANGE;
			u->q[k] = (uint64_t)v;
		}
		if (next_int(&p, 1, REC_SUM_CALLS, &v))
			return -ERANGE;
		u->ncalls = (unsigned)v;
		for (unsigned j = 0; j < u->ncalls; j++)
			if (read_call(&p, &u->c[j]))
				return -ERANGE;
		if (!unit_ok(u, s->to_ns - s->from_ns))
			return -ERANGE;
		units += u->n;
		calls += (uint64_t)u->n * u->ncalls;
		s->nunits++;
		if (!*p)
			break;
		if (*p++ != ';')
			return -ERANGE;
	}
	return units <= REC_SUM_MAX_UNITS && calls == s->calls ? 0 : -ERANGE;
}

int recfmt_summary_read(sqlite3_stmt *st, struct rec_summary *s, const char **node, int64_t dur_max)
{
	*s = (struct rec_summary){0};
	if (recfmt_row_has_null(st) || !recfmt_col_in(st, 0, 1, RECFMT_PID_MAX) ||
	    !recfmt_col_in(st, 1, 0, RECFMT_PID_MAX) ||
	    !recfmt_col_in(st, 2, 1, RECFMT_TS_MAX_NS) ||
	    !recfmt_col_in(st, 3, 1, RECFMT_TS_MAX_NS) ||
	    !recfmt_col_in(st, 4, 1, (int64_t)REC_SUM_MAX_UNITS * REC_SUM_CALLS) ||
	    !recfmt_col_in(st, 5, INT64_MIN, INT64_MAX) ||
	    sqlite3_column_type(st, 7) != SQLITE_TEXT)
		return -ERANGE;
	s->pid = (uint32_t)sqlite3_column_int64(st, 0);
	s->tid = (uint32_t)sqlite3_column_int64(st, 1);
	s->from_ns = (uint64_t)sqlite3_column_int64(st, 2);
	s->to_ns = (uint64_t)sqlite3_column_int64(st, 3);
	s->calls = (uint64_t)sqlite3_column_int64(st, 4);
	s->cgroup_id = (uint64_t)sqlite3_column_int64(st, 5);
	int64_t span = (int64_t)(s->to_ns - s->from_ns);
	if (s->to_ns < s->from_ns || span > REC_SUM_MAX_SPAN_NS || span > dur_max)
		return -ERANGE;
	*node = (const char *)sqlite3_column_text(st, 6);
	const char *units = (const char *)sqlite3_column_text(st, 7);
	return units ? read_units(units, s) : -ERANGE;
}
