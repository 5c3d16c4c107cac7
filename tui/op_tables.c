/* The tables of the op screen: the per-process (or per-thread) breakdown,
 * the slowest calls with the time they spent preempted and blocked, and the
 * op's top user stacks by tail time. Over the window, or since the start
 * (z) where the model keeps it. */
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

/* --- breakdown: one row per process (or per thread) ---------------------------- */

/* clang-format off */
enum { B_ID, B_NAME, B_RATE, B_P50, B_P99, B_MAX, B_RATIO, B_TAILPRE, B_PREEMPTOR, B_N };

static const struct tui_col bcols_proc[B_N] = {
	[B_ID] = { "PID", 7, 0, 0, 'r', 0, "process id" },
	[B_NAME] = { "PROCESS", 7, 0, 0, 'l', 1, "process name" },
	[B_RATE] = { "CALLS/S", 7, 0, 0, 'r', 0, "calls of this op per second in the process" },
	[B_P50] = { "P50", 6, 0, 1, 'r', 0, "median latency of the op in the process" },
	[B_P99] = { "P99", 6, 0, 0, 'r', 0, "99th percentile latency of the op in the process" },
	[B_MAX] = { "MAX", 6, 0, 2, 'r', 0, "slowest call" },
	[B_RATIO] = { "P99/P50", 7, 0, 1, 'r', 0, "the tail ratio" },
	[B_TAILPRE] = { "TAILPRE", 7, 0, 1, 'r', 0,
		"share of the tail calls' time (at or above p95) spent preempted (window only)" },
	[B_PREEMPTOR] = { "TOP PREEMPTOR", 13, 0, 2, 'l', 1,
		"who preempted the calls most, with its share of their preempted time (window only)" },
};

static const struct tui_col bcols_thread[B_N] = {
	[B_ID] = { "TID", 7, 0, 0, 'r', 0, "thread id" },
	[B_NAME] = { "THREAD", 6, 0, 0, 'l', 1, "thread name (its comm, from its latest event)" },
	[B_RATE] = { "CALLS/S", 7, 0, 0, 'r', 0, "calls of this op per second in the thread" },
	[B_P50] = { "P50", 6, 0, 1, 'r', 0, "median latency of the op in the thread" },
	[B_P99] = { "P99", 6, 0, 0, 'r', 0, "99th percentile latency of the op in the thread" },
	[B_MAX] = { "MAX", 6, 0, 2, 'r', 0, "slowest call" },
	[B_RATIO] = { "P99/P50", 7, 0, 1, 'r', 0, "the tail ratio" },
	[B_TAILPRE] = { "PREEMPT", 7, 0, 1, 'r', 0,
		"share of all the thread's calls' time spent preempted (threads keep no tail "
		"accounting; window only)" },
	[B_PREEMPTOR] = { "TOP PREEMPTOR", 13, 0, 2, 'l', 1, "not kept per thread" },
};
/* clang-format on */

/* Per-thread series keep no tail or preemptor accounting (memory): their
 * PREEMPT column is the preempted share of all their calls in the window. */
static double thread_preempt_share(const struct ig_series_stats *s)
{
	return s->time_win_ns ? fig_share((double)s->preempt_ns_win / (double)s->time_win_ns) : -1;
}

struct bctx {
	struct tui *t;
	const struct ig_series_stats *rows;
	int threads;
	int life; /* figures since the start */
};

static const struct ig_pcts *bpcts(const struct bctx *c, const struct ig_series_stats *s)
{
	return c->life ? &s->life : &s->win;
}

static double bratio(const struct bctx *c, const struct ig_series_stats *s)
{
	const struct ig_pcts *pc = bpcts(c, s);
	return c->life ? (pc->p50 ? (double)pc->p99 / (double)pc->p50 : 0) : s->tail_ratio;
}

static uint64_t b_key(void *ctx, int row)
{
	const struct bctx *c = ctx;
	return c->threads ? c->rows[row].tid : c->rows[row].pid;
}

static void b_tail_cell(const struct bctx *c, const struct ig_series_stats *s, char *buf, size_t n,
			int *slot)
{
	double share = -1;
	if (c->life)
		share = -1;
	else if (c->threads)
		share = thread_preempt_share(s);
	else if (s->win.n && s->tail_calls)
		share = fig_share(s->tail_preempt_share);
	fmt_pct(buf, n, share);
	if (share >= 0.25)
		*slot = TH_PREEMPTED;
	else if (share < 0)
		*slot = TH_DIM;
}

static void b_cell(void *ctx, int row, int col, char *buf, size_t n, int *slot)
{
	const struct bctx *c = ctx;
	const struct ig_series_stats *s = &c->rows[row];
	const struct ig_pcts *pc = bpcts(c, s);
	char b[64];
	switch (col) {
	case B_ID:
		snprintf(buf, n, "%u", c->threads ? s->tid : s->pid);
		break;
	case B_NAME: {
		const char *name = c->threads && s->tcomm[0] ? s->tcomm : s->comm;
		snprintf(buf, n, "%.*s", IG_COMM_LEN, name[0] ? name : "?");
		int sev = snap_severity(c->t->snap, s->op, s->pid);
		if (sev >= 0)
			*slot = sev_slot(sev);
		break;
	}
	case B_RATE:
		fmt_rate(buf, n,
			 c->life ? fig_rate(s->calls_life, c->t->span_life_ns)
				 : fig_rate(s->calls_win, c->t->span_win_ns));
		break;
	case B_P50:
	case B_P99:
	case B_MAX:
		if (!pc->n) {
			snprintf(buf, n, "-");
			*slot = TH_DIM;
			break;
		}
		fmt_ns(buf, n, col == B_P50 ? pc->p50 : col == B_P99 ? pc->p99 : pc->max);
		if (col == B_P99)
			*slot = p99_slot(bratio(c, s));
		break;
	case B_RATIO:
		fmt_ratio(buf, n, pc->n ? bratio(c, s) : 0);
		*slot = p99_slot(bratio(c, s));
		break;
	case B_TAILPRE:
		b_tail_cell(c, s, buf, n, slot);
		break;
	case B_PREEMPTOR:
		if (s->top_preemptor_pid && !c->life) {
			char pct[16];
			snprintf(buf, n, "%s %s",
				 tui_fmt_culprit(b, sizeof(b), s->top_preemptor_comm,
						 s->top_preemptor_pid, s->pid),
				 fmt_pct(pct, sizeof(pct), fig_share(s->top_preemptor_share)));
		} else {
			snprintf(buf, n, "-");
			*slot = TH_DIM;
		}
		break;
	}
}

static double b_num(void *ctx, int row, int col, int *ok)
{
	const struct bctx *c = ctx;
	const struct ig_series_stats *s = &c->rows[row];
	const struct ig_pcts *pc = bpcts(c, s);
	*ok = 1;
	switch (col) {
	case B_ID:
		return -(double)(c->threads ? s->tid : s->pid);
	case B_RATE:
		return c->life ? (double)s->calls_life : (double)s->calls_win;
	case B_P50:
		return (double)pc->p50;
	case B_P99:
		return (double)pc->p99;
	case B_MAX:
		return (double)pc->max;
	case B_RATIO:
		return bratio(c, s);
	case B_TAILPRE:
		return c->threads ? thread_preempt_share(s) : s->tail_preempt_share;
	case B_PREEMPTOR:
		return s->top_preemptor_share;
	}
	*ok = 0;
	return 0;
}

void op_breakdown_table(struct tui *t, struct tui_view *v, struct tui_list *l,
			const struct ig_series_stats *rows, int n, int threads, int life,
			const struct tui_rect *r, int focused)
{
	struct bctx bc = {t, rows, threads, life};
	struct tui_table tb = {
	    .cols = threads ? bcols_thread : bcols_proc,
	    .ncols = B_N,
	    .ctx = &bc,
	    .nrows = n,
	    .key = b_key,
	    .cell = b_cell,
	    .num = b_num,
	    .empty = life ? "no calls since the start" : "no calls in the window",
	};
	const struct tui_table_box box = table_draw(t, v, &tb, l, r, focused, NULL);
	tui_hit_table(t, v, l, &box);
}

/* --- slowest calls ------------------------------------------------------------ */

/* clang-format off */
enum { S_TIME, S_PID, S_TID, S_DUR, S_PRE, S_BLK, S_SW, S_BY, S_BYTES, S_RET, S_N };

static const struct tui_col scols[S_N] = {
	[S_TIME] = { "SLOWEST AT", 12, 0, 1, 'l', 0, "when the call began (local time)" },
	[S_PID] = { "PID", 7, 0, 2, 'r', 0, "process id" },
	[S_TID] = { "TID", 7, 0, 0, 'r', 0, "thread id (o: its off-CPU intervals during the call)" },
	[S_DUR] = { "DURATION", 8, 0, 0, 'r', 0, "how long the call took" },
	[S_PRE] = { "PREEMPTED", 9, 0, 0, 'r', 0,
		"time inside the call runnable but not running: CPU contention" },
	[S_BLK] = { "BLOCKED", 8, 0, 0, 'r', 0, "time inside the call asleep: the GPU, a lock" },
	[S_SW] = { "SW", 4, 0, 3, 'r', 0, "context switches inside the call" },
	[S_BY] = { "PREEMPTED BY", 12, 0, 1, 'l', 1, "who ran while the call was preempted (the last)" },
	[S_BYTES] = { "BYTES", 8, 0, 4, 'r', 0, "bytes copied or allocated by the call" },
	[S_RET] = { "RET", 4, 0, 5, 'r', 0, "the call's return code (red when not 0)" },
};
/* clang-format on */

uint64_t op_slow_key(const struct ig_call_rec *c)
{
	return (c->ts_ns ^ ((uint64_t)c->tid << 40)) & ~ROW_GROUP;
}

static uint64_t s_key(void *ctx, int row)
{
	return op_slow_key(&((const struct ig_call_rec *)ctx)[row]);
}

/* "12:03:04.123" */
char *fmt_clock_ms(char *buf, size_t n, uint64_t ts_ns)
{
	char b[32];
	fmt_clock(b, sizeof(b), ts_ns);
	snprintf(buf, n, "%s.%03llu", b, (unsigned long long)(ts_ns % 1000000000ull / 1000000ull));
	return buf;
}

static void split_cell(const struct ig_call_rec *c, uint64_t ns, int bad, int slot_bad, char *buf,
		       size_t n, int *slot)
{
	if (c->flags & IG_F_NO_SPLIT) {
		snprintf(buf, n, "?");
		*slot = TH_DIM;
		return;
	}
	fmt_ns(buf, n, ns);
	if (bad && ns)
		*slot = slot_bad;
}

static void s_cell(void *ctx, int row, int col, char *buf, size_t n, int *slot)
{
	const struct ig_call_rec *c = &((const struct ig_call_rec *)ctx)[row];
	const struct ig_op_info *oi = ig_op_info(c->op);
	switch (col) {
	case S_TIME:
		fmt_clock_ms(buf, n, c->ts_ns);
		break;
	case S_PID:
		snprintf(buf, n, "%u", c->pid);
		break;
	case S_TID:
		snprintf(buf, n, "%u", c->tid);
		break;
	case S_DUR:
		fmt_ns(buf, n, c->dur_ns);
		break;
	case S_PRE:
		split_cell(c, c->preempt_ns, c->preempt_ns * 4 >= c->dur_ns, TH_PREEMPTED, buf, n,
			   slot);
		break;
	case S_BLK:
		split_cell(c, c->blocked_ns, c->blocked_ns * 2 >= c->dur_ns, TH_BLOCKED, buf, n,
			   slot);
		break;
	case S_SW:
		snprintf(buf, n, "%u", c->switches);
		break;
	case S_BY:
		if (c->other_pid)
			tui_fmt_culprit(buf, n, c->other_comm, c->other_pid, c->pid);
		else
			snprintf(buf, n, "-");
		break;
	case S_BYTES:
		if (c->arg0 && oi && (oi->kind & (IG_OPK_COPY | IG_OPK_ALLOC)))
			fmt_bytes(buf, n, c->arg0);
		else
			snprintf(buf, n, "-");
		break;
	case S_RET:
		snprintf(buf, n, "%d", c->ret);
		if (c->ret)
			*slot = TH_ERROR;
		break;
	}
}

static double s_num(void *ctx, int row, int col, int *ok)
{
	const struct ig_call_rec *c = &((const struct ig_call_rec *)ctx)[row];
	*ok = 1;
	switch (col) {
	case S_TIME:
		return -(double)c->ts_ns;
	case S_PID:
		return -(double)c->pid;
	case S_TID:
		return -(double)c->tid;
	case S_DUR:
		return (double)c->dur_ns;
	case S_PRE:
		return (double)c->preempt_ns;
	case S_BLK:
		return (double)c->blocked_ns;
	case S_SW:
		return c->switches;
	case S_BYTES:
		return (double)c->arg0;
	case S_RET:
		return c->ret;
	}
	*ok = 0;
	return 0;
}

void op_slow_table(struct tui *t, struct tui_view *v, struct tui_list *l,
		   const struct ig_call_rec *calls, int n, int life, const struct tui_rect *r,
		   int focused)
{
	struct tui_table tb = {
	    .cols = scols,
	    .ncols = S_N,
	    .ctx = (void *)calls,
	    .nrows = n,
	    .key = s_key,
	    .cell = s_cell,
	    .num = s_num,
	    .empty = life ? "no calls since the start" : "no calls in the window",
	};
	const struct tui_table_box box = table_draw(t, v, &tb, l, r, focused, NULL);
	tui_hit_table(t, v, l, &box);
}

/* --- top stacks by tail time ------------------------------------------------- */

/* clang-format off */
enum { K_TAILNS, K_TAIL, K_CALLS, K_MAX, K_ID, K_FRAME, K_N };

static const struct tui_col kcols[K_N] = {
	[K_TAILNS] = { "TAIL TIME", 9, 0, 0, 'r', 0,
		"time in the op's tail calls (at or above its p95) from this stack" },
	[K_TAIL] = { "TAIL", 6, 0, 1, 'r', 0, "tail calls from this stack" },
	[K_CALLS] = { "CALLS", 7, 0, 0, 'r', 0, "calls from this stack" },
	[K_MAX] = { "MAX", 7, 0, 1, 'r', 0, "the slowest call from this stack" },
	[K_ID] = { "STACK", 18, 0, 3, 'l', 0, "the stack's id" },
	[K_FRAME] = { "HEADLINE FRAME", 30, 200, 0, 'l', 0,
		"the innermost Python frame, else the innermost native frame outside the CUDA "
		"libraries" },
};
/* clang-format on */

uint64_t op_stack_key(const struct stacks_stat *k)
{
	uint64_t id = k->id & ~ROW_GROUP;
	return id ? id : 1;
}

static uint64_t k_key(void *ctx, int row)
{
	return op_stack_key(&((const struct stacks_stat *)ctx)[row]);
}

static void k_cell(void *ctx, int row, int col, char *buf, size_t n, int *slot)
{
	const struct stacks_stat *k = &((const struct stacks_stat *)ctx)[row];
	switch (col) {
	case K_TAILNS:
		fmt_ns(buf, n, k->tail_ns);
		if (!k->tail_calls)
			*slot = TH_DIM;
		break;
	case K_TAIL:
		snprintf(buf, n, "%llu", (unsigned long long)k->tail_calls);
		break;
	case K_CALLS:
		snprintf(buf, n, "%llu", (unsigned long long)k->calls);
		break;
	case K_MAX:
		fmt_ns(buf, n, k->max_ns);
		break;
	case K_ID:
		snprintf(buf, n, "0x%llx", (unsigned long long)k->id);
		*slot = TH_DIM;
		break;
	case K_FRAME:
		if (k->headline[0])
			snprintf(buf, n, "%s", k->headline);
		else if (k->state == STACKS_PENDING)
			snprintf(buf, n, "(resolving)"), *slot = TH_DIM;
		else
			snprintf(buf, n, "(frames not available)"), *slot = TH_DIM;
		break;
	}
}

static double k_num(void *ctx, int row, int col, int *ok)
{
	const struct stacks_stat *k = &((const struct stacks_stat *)ctx)[row];
	*ok = 1;
	switch (col) {
	case K_TAILNS:
		return (double)k->tail_ns;
	case K_TAIL:
		return (double)k->tail_calls;
	case K_CALLS:
		return (double)k->calls;
	case K_MAX:
		return (double)k->max_ns;
	}
	*ok = 0;
	return 0;
}

void op_stacks_table(struct tui *t, struct tui_view *v, struct tui_list *l,
		     const struct stacks_stat *stk, int n, int stacks_on, const struct tui_rect *r,
		     int focused)
{
	struct tui_table tb = {
	    .cols = kcols,
	    .ncols = K_N,
	    .ctx = (void *)stk,
	    .nrows = n,
	    .key = k_key,
	    .cell = k_cell,
	    .num = k_num,
	    .empty = stacks_on ? "no stacks of this op yet"
			       : "stacks are off (--no-stacks, or none in the recording)",
	};
	const struct tui_table_box box = table_draw(t, v, &tb, l, r, focused, NULL);
	tui_hit_table(t, v, l, &box);
}
