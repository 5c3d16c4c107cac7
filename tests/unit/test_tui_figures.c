/* The numbers the viewer shows add up, on every frame (each second of event
 * time) of every shipped recording (the .db files of tests/scenarios and
 * tests/fixtures/ingero) and of any recording given as an argument
 * (tests/tui/test_tui_invariants.sh records live runs with exiting
 * processes and threads): shares of a stated denominator never above
 * 100 %, parts that add up to their whole (the time parts, the four
 * columns of the processes pane, the bar's columns), rates with one
 * denominator (a process's rate is the sum of its ops', an op's the sum of
 * its processes'), percentiles in order, culprits' shares within their
 * whole, and no alert raised by a process's exit. Uses the functions the
 * panes draw with (tui/figures.c, tui/text.c) on the model and detector the
 * frames are drawn from. Also: every evidence key the detector writes has a
 * one-line explanation (tui/glossary.c). */
#include "check.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tui/figures.c"
#include "../../tui/glossary.c"
#include "../../tui/text.c"
#include "core/ops.h"
#include "detect/detect.h"
#include "model/model.h"
#include "session/cli.h"
#include "session/session.h"
#include "synth.h"

#define EPS 1e-9
#define SEC 1000000000ull

static struct ig_proc_stats procs[256];
static struct ig_thread_stats threads[1024];
static struct ig_series_stats rows[256];
static int frames, checked_procs, checked_ops;

static int share_ok(double f)
{
	return f >= -EPS && f <= 1 + EPS;
}

/* A part's share, the four columns and the bar's columns of a wall time. */
static void check_parts(const char *what, uint32_t id, const struct ig_time_parts *p)
{
	uint64_t sum = 0;
	for (int k = 0; k < IG_PART_MAX; k++) {
		sum += p->ns[k];
		CHECKF(share_ok(ig_part_share(p, k)), "%s %u part %s %f", what, id, ig_part_name(k),
		       ig_part_share(p, k));
	}
	CHECKF(!p->wall_ns || sum == p->wall_ns, "%s %u: parts %llu of wall %llu", what, id,
	       (unsigned long long)sum, (unsigned long long)p->wall_ns);
	struct fig_split sp;
	fig_split(p, &sp);
	if (!sp.valid)
		return;
	double s = 0;
	for (int k = 0; k < FIG_NSPLIT; k++) {
		CHECKF(share_ok(sp.share[k]), "%s %u column %d %f", what, id, k, sp.share[k]);
		s += sp.share[k];
	}
	CHECKF(fabs(s - 1) < 1e-6, "%s %u: GPU%%+CPU%%+PRE%%+WAIT%% = %f", what, id, s * 100);
	signed char own[80];
	CHECK(tui_parts_cols(p->ns, IG_PART_MAX, p->wall_ns, 80, own) == 80);
}

static void check_culprits(uint32_t pid, const struct ig_culprit *c, int n)
{
	double sum = 0;
	for (int i = 0; i < n; i++) {
		CHECKF(share_ok(c[i].share), "pid %u culprit %u share %f", pid, c[i].pid,
		       c[i].share);
		sum += c[i].share;
	}
	CHECKF(sum <= 1 + 1e-6, "pid %u: culprits' shares add up to %f", pid, sum);
}

static void check_pcts(const char *what, int op, const struct ig_pcts *pc)
{
	if (!pc->n)
		return;
	CHECKF(pc->p50 <= pc->p95 && pc->p95 <= pc->p99 && pc->p99 <= pc->max,
	       "%s op %d pcts %llu %llu %llu max %llu", what, op, (unsigned long long)pc->p50,
	       (unsigned long long)pc->p95, (unsigned long long)pc->p99,
	       (unsigned long long)pc->max);
}

static void check_series(const struct ig_series_stats *s, const char *what)
{
	check_pcts(what, s->op, &s->win);
	check_pcts(what, s->op, &s->life);
	CHECKF(s->wall_share < 0 || share_ok(s->wall_share), "%s op %d wall %f", what, s->op,
	       s->wall_share);
	if (s->tail_calls && s->tail_preempt_share >= 0) {
		CHECKF(share_ok(s->tail_preempt_share) && share_ok(s->tail_blocked_share) &&
			   s->tail_preempt_share + s->tail_blocked_share <= 1 + 1e-6,
		       "%s op %d tail preempted %f + blocked %f", what, s->op,
		       s->tail_preempt_share, s->tail_blocked_share);
	}
	CHECKF(s->top_preemptor_share <= 1 + EPS, "%s op %d preemptor share %f", what, s->op,
	       s->top_preemptor_share);
	CHECK(s->calls_win <= s->calls_life);
}

/* Rates with one denominator: a process is the sum of its ops, an op the
 * sum of its processes (while no series was evicted). */
static void check_rates(const struct ig_model *m)
{
	struct ig_model_totals tot;
	model_totals(m, &tot);
	int np = model_procs(m, procs, 256);
	for (int i = 0; i < np; i++) {
		int n = model_proc_ops(m, procs[i].pid, rows, 256);
		uint64_t calls = 0;
		for (int k = 0; k < n; k++)
			calls += rows[k].calls_win;
		if (!tot.evicted_series)
			CHECKF(calls == procs[i].calls_win &&
				   fabs(fig_rate(calls, tot.win_span_ns) -
					fig_rate(procs[i].calls_win, tot.win_span_ns)) < 1e-9,
			       "pid %u: ops %llu calls, process %llu", procs[i].pid,
			       (unsigned long long)calls, (unsigned long long)procs[i].calls_win);
	}
	int ops[IG_OP_MAX], no = model_ops(m, ops, IG_OP_MAX);
	for (int i = 0; i < no; i++) {
		struct ig_series_stats all;
		if (model_op_stats(m, ops[i], &all))
			continue;
		check_series(&all, "op");
		checked_ops++;
		int n = model_op_procs(m, ops[i], rows, 256);
		uint64_t calls = 0;
		for (int k = 0; k < n; k++) {
			calls += rows[k].calls_win;
			check_series(&rows[k], "op-proc");
		}
		if (!tot.evicted_series)
			CHECKF(calls == all.calls_win, "op %d: processes %llu calls, op %llu",
			       ops[i], (unsigned long long)calls,
			       (unsigned long long)all.calls_win);
	}
}

/* An exit raises no alert: no chain on a process first seen after its
 * last event. */
static void check_exits(const struct ig_model *m, const struct ig_detect *d)
{
	int np = model_procs(m, procs, 256);
	for (int i = 0; i < np; i++) {
		if (!procs[i].exited)
			continue;
		for (int k = 0; k < detect_count(d); k++) {
			const struct ig_chain *c = detect_chain(d, k);
			if (c->pid != procs[i].pid || c->cls == IG_CC_GPU_BOUND)
				continue;
			CHECKF(
			    c->first_seen_ns <= procs[i].last_ns + SEC,
			    "%s on %s[%u] first seen %llu ms after its last event",
			    detect_class_name(c->cls), procs[i].comm, procs[i].pid,
			    (unsigned long long)((c->first_seen_ns - procs[i].last_ns) / 1000000));
		}
	}
}

static void check_chains(const struct ig_detect *d)
{
	for (int k = 0; k < detect_count(d); k++) {
		const struct ig_chain *c = detect_chain(d, k);
		CHECKF(share_ok(c->impact), "%s impact %f", c->id_str, c->impact);
		for (int e = 0; e < c->nevidence; e++) {
			if (!strcmp(c->ev[e].unit, "%"))
				CHECKF(c->ev[e].value >= -EPS && c->ev[e].value <= 100 + 1e-6,
				       "%s %s = %f%%", c->id_str, c->ev[e].key, c->ev[e].value);
			CHECKF(gloss_evidence(c->ev[e].key) != NULL,
			       "evidence key %s has no explanation", c->ev[e].key);
		}
	}
}

static void check_frame(const struct ig_model *m, const struct ig_detect *d)
{
	int np = model_procs(m, procs, 256);
	frames++;
	for (int i = 0; i < np; i++) {
		const struct ig_proc_stats *p = &procs[i];
		check_parts("proc", p->pid, &p->parts);
		check_parts("proc life", p->pid, &p->life_parts);
		check_culprits(p->pid, p->preemptors, p->npreemptors);
		check_culprits(p->pid, p->wakers, p->nwakers);
		CHECK(p->calls_win <= p->calls_life);
		checked_procs++;
	}
	int nt = model_threads(m, 0, threads, 1024);
	for (int i = 0; i < nt; i++) {
		check_parts("thread", threads[i].tid, &threads[i].parts);
		check_parts("thread life", threads[i].tid, &threads[i].life_parts);
	}
	check_rates(m);
	check_chains(d);
	check_exits(m, d);
}

static void replay(const char *path)
{
	char *argv[] = {"ingero-top", "-b", "--replay", (char *)path, "--no-stacks", NULL};
	struct cli cli;
	char err[512];
	int before = check_fail_;
	optind = 1;
	if (cli_parse(&cli, 5, argv)) {
		CHECKF(0, "%s: options", path);
		return;
	}
	struct session *s = session_new(&cli, err, sizeof(err));
	if (!s) {
		CHECKF(0, "%s: %s", path, err);
		return;
	}
	const struct ig_status *st = session_status(s);
	uint64_t next = st->replay_start_ns + SEC;
	int more = 1, n = 0;
	while (more > 0) {
		more = session_replay_to(s, next);
		check_frame(session_model(s), session_detect(s));
		next += SEC;
		n++;
	}
	session_finish(s);
	check_frame(session_model(s), session_detect(s));
	printf("%s: %d frames%s\n", path, n + 1, check_fail_ > before ? " FAILED" : "");
	session_free(s);
}

/* Every recording of a directory. */
static int replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	if (!d)
		return 0;
	char *names[64];
	for (struct dirent *e; (e = readdir(d)) && n < 64;) {
		size_t l = strlen(e->d_name);
		if (l > 3 && !strcmp(e->d_name + l - 3, ".db"))
			names[n++] = strdup(e->d_name);
	}
	closedir(d);
	for (int i = 0; i < n; i++) {
		char p[1024];
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		replay(p);
		free(names[i]);
	}
	return n;
}

/* The glossary knows every key the detector writes on the synthetic streams. */
static void glossary_complete(void)
{
	for (int sc = 0; sc < SYNTH_MAX; sc++) {
		struct synth_cfg cfg = {.scenario = sc, .seconds = 20};
		struct ig_model *m = model_new(NULL);
		struct ig_detect *d = detect_new(NULL);
		struct synth *s = synth_new(&cfg);
		struct ig_event e;
		model_set_window_hook(m, detect_window, d);
		while (synth_next(s, &e) == 1)
			model_ingest(m, &e);
		for (int k = 0; k < detect_count(d); k++) {
			const struct ig_chain *c = detect_chain(d, k);
			for (int i = 0; i < c->nevidence; i++)
				CHECKF(gloss_evidence(c->ev[i].key) != NULL, "%s: evidence %s",
				       synth_name(sc), c->ev[i].key);
		}
		synth_free(s);
		detect_free(d);
		model_free(m);
	}
	for (int k = 0; k < IG_PART_MAX; k++)
		CHECK(gloss_part_label(k) && gloss_part_short(k) && gloss_part_help(k) &&
		      gloss_part_letter(k));
}

/* o on a slow call: the thread's intervals during the call, and what they
 * add up to; on a model fed by hand. */
static void during_call(void)
{
	const uint64_t t0 = 1767225600ull * SEC, MS = 1000000;
	struct ig_model *m = model_new(NULL);
	struct ig_event e = {0};
	e.kind = IG_EV_CALL, e.pid = e.tid = 42, e.op = IG_OP_CUDA_STREAM_SYNC;
	e.ts_ns = t0 + 100 * MS, e.dur_ns = 50 * MS;
	e.preempt_ns = 10 * MS, e.blocked_ns = 30 * MS;
	strcpy(e.comm, "py");
	/* intervals: one before the call, two inside, one ending inside, one after */
	const uint64_t at[5] = {50, 110, 125, 95, 170}, len[5] = {10, 10, 20, 10, 5};
	const int state[5] = {IG_OFF_BLOCKED, IG_OFF_PREEMPTED, IG_OFF_BLOCKED, IG_OFF_BLOCKED,
			      IG_OFF_PREEMPTED};
	for (int i = 0; i < 5; i++) {
		struct ig_event o = {0};
		o.kind = IG_EV_OFFCPU, o.pid = o.tid = 42, o.state = (uint8_t)state[i];
		o.ts_ns = t0 + at[i] * MS, o.dur_ns = len[i] * MS;
		model_ingest(m, &o);
	}
	model_ingest(m, &e);
	struct ig_offcpu_rec off[IG_TL_MAX];
	int n = model_thread_offcpu(m, 42, off, IG_TL_MAX);
	uint64_t pre, blk;
	int k = fig_during_call(off, n, e.ts_ns, e.dur_ns, &pre, &blk);
	CHECKF(n == 5 && k == 3, "kept %d, during the call %d", n, k);
	CHECKF(pre == 10 * MS && blk == 30 * MS, "during the call: preempted %llu blocked %llu",
	       (unsigned long long)pre, (unsigned long long)blk);
	for (int i = 0; i < k; i++)
		CHECK(off[i].ts_ns < e.ts_ns + e.dur_ns && off[i].ts_ns + off[i].dur_ns > e.ts_ns);
	/* a call older than every kept interval: none of them */
	n = model_thread_offcpu(m, 42, off, IG_TL_MAX);
	CHECK(fig_during_call(off, n, t0, 20 * MS, &pre, &blk) == 0 && !pre && !blk);
	model_free(m);
}

/* The ops pane's mark of a lifetime tail far above the window's (vLLM's
 * warm-up burst: 3.0x in the window, 250x since the start). */
static void life_tail_far(void)
{
	struct ig_series_stats s = {0};
	s.win.n = 80;
	s.tail_ratio = 3.0;
	s.life.p50 = 20000;
	s.life.p99 = 5000000; /* 250x */
	CHECK(fig_life_tail_far(&s));
	s.tail_ratio = 100; /* the window shows it: no mark */
	CHECK(!fig_life_tail_far(&s));
	s.tail_ratio = 1.0;
	s.life.p99 = 180000; /* 9x: not far enough */
	CHECK(!fig_life_tail_far(&s));
	s.life.p99 = 5000000;
	s.win.n = 0; /* no call in the window: nothing to compare */
	CHECK(!fig_life_tail_far(&s));
}

int main(int argc, char **argv)
{
	during_call();
	life_tail_far();
	glossary_complete();
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			replay(argv[i]);
	} else {
		int n = replay_dir("tests/scenarios") + replay_dir("tests/fixtures/ingero") +
			replay_dir("tests/fixtures/vllm");
		CHECKF(n >= 14, "%d recordings found (run from the checkout)", n);
	}
	printf("%d frames, %d process rows, %d op rows\n", frames, checked_procs, checked_ops);
	return check_done("test_tui_figures");
}
