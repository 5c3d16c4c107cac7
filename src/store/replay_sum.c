/* The calls a recording made with --record-rate summarised
 * (ingero_top_summaries, store/recfmt.h), laid out again as events: each
 * kind of unit gets its count exactly, durations spread over its quantiles
 * (a low-discrepancy sequence through the piecewise-linear distribution
 * they draw), stretched above the shortest to the kind's exact sum; the kinds are interleaved
 * evenly in the order the run met them (a storm's launch, copy, sync come
 * back in that order); the time the run's calls did not cover is spread
 * evenly between them; the calls inside a unit's outer call keep their
 * share of its duration and their place in it. So counts, op mixes, sums
 * and the run's span are those of the live run; single durations and gaps
 * are estimates. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "store/db.h"
#include "store/replay_int.h"

/* The duration at quantile u (0..1) of the line through the unit's
 * quantiles. */
static double at_quantile(const struct rec_sum_unit *u, double x)
{
	int k = 1;
	while (k < REC_SUM_Q - 1 && x > recfmt_sum_q[k])
		k++;
	double a = recfmt_sum_q[k - 1], b = recfmt_sum_q[k];
	double w = b > a ? (x - a) / (b - a) : 0;
	return (double)u->q[k - 1] + w * ((double)u->q[k] - (double)u->q[k - 1]);
}

/* Durations of kind u's units in d[0..n): quantiles, then the exact sum,
 * by stretching what lies above the shortest (which stays as it was). */
static void kind_durations(const struct rec_sum_unit *u, double *d)
{
	double sum = 0, lo = (double)u->q[0];
	for (uint32_t i = 0; i < u->n; i++) {
		double x = fmod((i + 0.5) * 0.6180339887498949, 1.0);
		d[i] = at_quantile(u, x);
		sum += d[i] - lo;
	}
	double want = (double)u->c[0].dur_sum - lo * u->n; /* >= 0: recfmt_summary_read */
	for (uint32_t i = 0; i < u->n; i++)
		d[i] = sum > 0 ? lo + (d[i] - lo) * (want / sum) : (double)u->c[0].dur_sum / u->n;
}

/* The kind whose next unit is most overdue: unit c of n is due at
 * (c + 0.5) / n of the run; ties go to the kind met first. */
static int next_kind(const struct rec_summary *s, const uint32_t *used)
{
	int best = -1;
	double due = 2;
	for (unsigned k = 0; k < s->nunits; k++) {
		if (used[k] == s->u[k].n)
			continue;
		double x = (used[k] + 0.5) / s->u[k].n;
		if (x < due) {
			due = x;
			best = (int)k;
		}
	}
	return best;
}

/* The events of one summary into the heap; 0, ROW_REFUSE or -ENOMEM. */
static int lay_out(struct replay *r, struct stream *s, const struct rec_summary *sum,
		   const uint16_t ops[REC_SUM_TYPES][REC_SUM_CALLS], unsigned node)
{
	double *d[REC_SUM_TYPES] = {0}, total = 0;
	uint32_t used[REC_SUM_TYPES] = {0}, units = 0;
	int rc = 0;
	for (unsigned k = 0; k < sum->nunits && !rc; k++) {
		if (!(d[k] = malloc(sum->u[k].n * sizeof(double))))
			rc = -ENOMEM;
		else
			kind_durations(&sum->u[k], d[k]);
		total += (double)sum->u[k].c[0].dur_sum;
		units += sum->u[k].n;
	}
	double span = (double)(sum->to_ns - sum->from_ns);
	double scale = total > span ? span / total : 1;
	double gap = units > 1 && total < span ? (span - total) / (units - 1) : 0;
	double t = 0; /* from from_ns: a double holds Unix ns only to 256 ns */
	int k;
	while (!rc && (k = next_kind(sum, used)) >= 0) {
		const struct rec_sum_unit *u = &sum->u[k];
		double dur = d[k][used[k]++] * scale;
		uint64_t a = sum->from_ns + (uint64_t)llround(t);
		uint64_t b = sum->from_ns + (uint64_t)llround(t + dur);
		if (b > sum->to_ns)
			b = sum->to_ns;
		if (a > b)
			a = b;
		for (unsigned j = 0; j < u->ncalls && !rc; j++) {
			const struct rec_sum_call *c = &u->c[j];
			struct ig_event e = {.kind = IG_EV_CALL,
					     .pid = sum->pid,
					     .tid = sum->tid,
					     .op = ops[k][j],
					     .ret = c->ret,
					     .flags = c->flags,
					     .cpu = c->cpu,
					     .arg0 = c->arg0,
					     .arg1 = c->arg1,
					     .arg2 = c->arg2,
					     .stream = c->stream,
					     .cgroup_id = sum->cgroup_id,
					     .stack_id = c->stack_id,
					     .node = (uint8_t)node};
			e.ts_ns = a;
			e.dur_ns = b - a;
			if (j) { /* inside the outer call, in its place */
				double share =
				    u->c[0].dur_sum ? (double)(b - a) / (double)u->c[0].dur_sum : 0;
				uint64_t off = (uint64_t)llround((double)c->off_sum * share);
				uint64_t len = (uint64_t)llround((double)c->dur_sum * share);
				e.ts_ns = a + (off < b - a ? off : b - a);
				e.dur_ns = e.ts_ns + len <= b ? len : b - e.ts_ns;
			}
			if (e.ts_ns + e.dur_ns >= r->seek_ts) /* a seek skips what ends before */
				rc = rp_heap_push(s, &e, s->seq++);
		}
		t += dur + gap;
	}
	for (unsigned i = 0; i < REC_SUM_TYPES; i++)
		free(d[i]);
	if (!rc)
		r->st.summarised += sum->calls;
	return rc;
}

/* Calls waiting in the heap at most: the runs of 64 threads at once (the
 * recorder follows no more), each as long as a run may be. A file whose
 * runs overlap more was not written by a recorder: its extra rows are
 * refused, and memory stays bounded (~130 MB). */
#define HEAP_MAX ((size_t)64 * REC_SUM_MAX_UNITS * REC_SUM_CALLS)

/* Reads the row at the cursor and lays its calls out: 0, or ROW_REFUSE,
 * or -ENOMEM. */
static int sum_row(struct replay *r, struct rfile *f, struct stream *s)
{
	struct rec_summary sum;
	const char *node = NULL;
	if (recfmt_summary_read(s->st, &sum, &node, f->dur_max))
		return ROW_REFUSE;
	if ((int64_t)sum.from_ns < s->last_stamp) /* the heap needs rows by first call */
		return rp_fail_order(r, f, "ingero_top_summaries");
	if (s->hlen + sum.calls > HEAP_MAX)
		return ROW_REFUSE;
	uint16_t ops[REC_SUM_TYPES][REC_SUM_CALLS];
	for (unsigned k = 0; k < sum.nunits; k++)
		for (unsigned j = 0; j < sum.u[k].ncalls; j++) {
			const struct rec_sum_call *c = &sum.u[k].c[j];
			const struct opmap *m = rp_op_lookup(f, c->src, c->op_id);
			if (!m || m->kind != IG_EV_CALL)
				return ROW_REFUSE;
			ops[k][j] = (uint16_t)m->op;
		}
	return lay_out(r, s, &sum, ops, rp_node_for(r, f, node));
}

int rp_sum_next(struct replay *r, struct stream *s)
{
	struct rfile *f = s->f;
	for (;;) {
		/* every row not read yet starts at or after last_stamp */
		int rc = rp_heap_step(r, s, "reading ingero_top_summaries");
		if (rc)
			return rc > 0 ? 0 : rc;
		int64_t from = sqlite3_column_int64(s->st, 2);
		rc = sum_row(r, f, s);
		if (rc < 0)
			return rc;
		if (rc == ROW_REFUSE) {
			r->st.refused++;
			continue;
		}
		s->last_stamp = from;
	}
}
