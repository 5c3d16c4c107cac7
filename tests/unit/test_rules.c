/* The detector's rules as functions of a window snapshot built by hand, no
 * model involved: each time cause becomes a chain whose impact is its share
 * of the feeder's wall time, named after its culprit; severity follows the
 * thresholds (LOW 5 %, MEDIUM 15 %, HIGH 30 % with a named, confirmed
 * cause); causes under 5 % raise nothing; a busy GPU is INFO; chains are
 * ordered by impact; a chain keeps its id, resolves after hold_s and ages
 * out after keep_s; a quiet feeder is not judged. */
#include "check.h"
#include "core/ops.h"
#include "detect/detect.h"
#include "model/window.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SEC 1000000000ull
#define T0 (1767225600ull * SEC) /* 2026-01-01 */
#define PID 4821

/* One CUDA process with one feeding thread and two ops, whose parts are
 * given as shares of a 10 s window; waiting for the GPU takes the rest. */
struct fixture {
	struct ig_proc_stats p;
	struct ig_win_series ops[2];
	struct ig_win_thread thr[1];
	struct ig_win_proc wp;
	struct ig_window w;
};

static void fixture_init(struct fixture *fx, uint64_t now, const double share[IG_PART_MAX])
{
	memset(fx, 0, sizeof(*fx));
	uint64_t wall = 10 * SEC, sum = 0;
	struct ig_proc_stats *p = &fx->p;
	p->pid = PID;
	snprintf(p->comm, sizeof(p->comm), "train");
	p->cuda = 1;
	p->calls_win = 20000;
	p->first_ns = now - 60 * SEC;
	p->threads = 1;
	p->parts.wall_ns = wall;
	for (int k = 0; k < IG_PART_MAX; k++) {
		if (k == IG_PART_GPU_WAIT)
			continue;
		p->parts.ns[k] = (uint64_t)(share[k] * (double)wall);
		sum += p->parts.ns[k];
	}
	p->parts.ns[IG_PART_GPU_WAIT] = wall - sum;
	p->wall_ns = wall;
	p->feeder_tid = PID;

	struct ig_thread_stats *t = &fx->thr[0].t;
	t->tid = t->pid = PID;
	snprintf(t->comm, sizeof(t->comm), "train");
	t->calls_win = 20000;
	t->last_ns = now;
	t->wall_ns = wall;
	t->parts = p->parts;
	t->main_op = IG_OP_CUDA_LAUNCH_KERNEL;
	t->sync_calls_win = 10000; /* 1000 syncs/s */

	int opv[2] = {IG_OP_CUDA_LAUNCH_KERNEL, IG_OP_CUDA_STREAM_SYNC};
	for (int i = 0; i < 2; i++) {
		struct ig_series_stats *s = &fx->ops[i].s;
		s->op = opv[i];
		s->pid = PID;
		s->calls_win = s->calls_life = 10000;
		s->win.n = 10000;
		s->win.p50 = s->win.p99 = 10000;
		s->life = s->win;
		s->tail_ratio = 1;
		s->first_ns = p->first_ns;
		s->tail_preempt_share = s->tail_blocked_share = -1;
	}
	fx->wp.p = p;
	fx->wp.nops = 2;
	fx->wp.ops = fx->ops;
	fx->wp.nthr = 1;
	fx->wp.thr = fx->thr;
	fx->w.now_ns = now;
	fx->w.tot.win_start_ns = now - 10 * SEC;
	fx->w.tot.win_span_ns = 10 * SEC;
	fx->w.tot.by_kind[IG_EV_OFFCPU] = 1000;
	fx->w.nall = 1;
	fx->w.all = p;
	fx->w.nprocs = 1;
	fx->w.procs = &fx->wp;
}

static void culprit(struct ig_culprit *c, uint32_t pid, const char *comm, double share)
{
	c->pid = pid;
	snprintf(c->comm, sizeof(c->comm), "%s", comm);
	c->share = share;
}

static const struct ig_chain *active(const struct ig_detect *d, int cls)
{
	for (int i = 0; i < detect_count(d); i++) {
		const struct ig_chain *c = detect_chain(d, i);
		if (c->cls == cls && c->active)
			return c;
	}
	return NULL;
}

static int worst(const struct ig_detect *d)
{
	int w = -1;
	for (int i = 0; i < detect_count(d); i++)
		if (detect_chain(d, i)->active && detect_chain(d, i)->severity > w)
			w = detect_chain(d, i)->severity;
	return w;
}

static void dump(const struct ig_detect *d)
{
	for (int i = 0; i < detect_count(d); i++) {
		const struct ig_chain *c = detect_chain(d, i);
		fprintf(stderr, "   [%s%s] %s %.1f%% %s\n", detect_sev_name(c->severity),
			c->active ? "" : " resolved", detect_class_name(c->cls), c->impact * 100,
			c->summary);
	}
}

/* One window of the fixture judged by a fresh detector. */
static struct ig_detect *judge(struct fixture *fx)
{
	struct ig_detect *d = detect_new(NULL);
	detect_run(d, &fx->w);
	return d;
}

struct time_case {
	const char *name;
	int part; /* the cause's part */
	double share;
	int cls, sev;
	uint32_t culprit; /* 0: the process itself */
};

static void test_each_time_cause(void)
{
	static const struct time_case cases[] = {
	    {"preempted between calls", IG_PART_PREEMPTED, 0.40, IG_CC_CPU_CONTENTION, IG_SEV_HIGH,
	     2231},
	    {"preempted in calls", IG_PART_CALL_PREEMPTED, 0.20, IG_CC_CPU_CONTENTION,
	     IG_SEV_MEDIUM, 2231},
	    {"task waits", IG_PART_TASK_WAIT, 0.50, IG_CC_LOADER_WAIT, IG_SEV_HIGH, 2003},
	    {"disk waits", IG_PART_IO_WAIT, 0.40, IG_CC_BLOCK_IO, IG_SEV_HIGH, PID},
	    /* a loop paced by its own timer: said, never an alarm */
	    {"timer sleeps", IG_PART_SLEEP, 0.40, IG_CC_TIMER_SLEEP, IG_SEV_INFO, PID},
	    /* a fault of unrecorded kind (no wait evidence): page faults, unconfirmed */
	    {"page faults", IG_PART_FAULT, 0.36, IG_CC_PAGE_FAULTS, IG_SEV_MEDIUM, PID},
	    {"unknown off-CPU", IG_PART_UNKNOWN, 0.60, IG_CC_OFFCPU_WAIT, IG_SEV_MEDIUM, 0},
	    /* the kernel's evidence (waits_seen): each part its class */
	    {"throttled", IG_PART_THROTTLED, 0.35, IG_CC_CPU_QUOTA, IG_SEV_HIGH, 0},
	    {"file I/O", IG_PART_FILE_IO, 0.45, IG_CC_FILE_IO, IG_SEV_HIGH, PID},
	    {"cold reads", IG_PART_COLD_READ, 0.31, IG_CC_COLD_READ, IG_SEV_HIGH, PID},
	    {"reclaim", IG_PART_MEM_PRESSURE, 0.33, IG_CC_MEMORY_PRESSURE, IG_SEV_HIGH, PID},
	    {"fresh memory", IG_PART_FAULT, 0.34, IG_CC_PAGE_FAULTS, IG_SEV_HIGH, PID},
	    {"lock waits", IG_PART_LOCK_WAIT, 0.42, IG_CC_LOCK_WAIT, IG_SEV_HIGH, PID},
	    {"GIL waits", IG_PART_GIL_WAIT, 0.38, IG_CC_GIL_WAIT, IG_SEV_HIGH, PID},
	    {"full pipe", IG_PART_BACKPRESSURE, 0.37, IG_CC_BACKPRESSURE, IG_SEV_HIGH, 7700},
	    {"network", IG_PART_NET_WAIT, 0.32, IG_CC_NET_WAIT, IG_SEV_HIGH, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct time_case *k = &cases[i];
		double share[IG_PART_MAX] = {0};
		share[k->part] = k->share;
		struct fixture fx;
		fixture_init(&fx, T0, share);
		culprit(&fx.p.preemptors[0], 2231, "stress-ng", 0.9);
		fx.p.npreemptors = 1;
		culprit(&fx.p.wakers[0], 2003, "pt_data_worker", 0.8);
		fx.p.nwakers = 1;
		/* threads: tid 4830 of this process, the reader 7700 of another */
		culprit(&fx.p.lockers[0], 4830, "holder", 0.9);
		fx.p.lockers[0].aux = PID;
		fx.p.nlockers = 1;
		fx.p.gil_holders[0] = fx.p.lockers[0];
		fx.p.ngil = 1;
		culprit(&fx.p.drainers[0], 7700, "reader", 0.9);
		fx.p.drainers[0].aux = 7700;
		fx.p.ndrainers = 1;
		culprit(&fx.p.peers[0], 0x0a000005, "", 1);
		fx.p.peers[0].aux = 5555;
		fx.p.npeers = 1;
		fx.p.parts.waits_seen = i >= 8; /* from "throttled" on */
		struct ig_detect *d = judge(&fx);
		const struct ig_chain *c = active(d, k->cls);
		CHECKF(c != NULL, "%s: no %s chain", k->name, detect_class_name(k->cls));
		if (!c) {
			dump(d);
			detect_free(d);
			continue;
		}
		CHECKF(fabs(c->impact - k->share) < 0.002, "%s: impact %.3f, want %.3f", k->name,
		       c->impact, k->share);
		CHECKF(c->severity == k->sev, "%s: severity %s, want %s", k->name,
		       detect_sev_name(c->severity), detect_sev_name(k->sev));
		if (k->culprit)
			CHECKF(c->culprit_pid == k->culprit, "%s: culprit %u, want %u", k->name,
			       c->culprit_pid, k->culprit);
		/* the top actionable chain is the cause: chains are by impact */
		const struct ig_chain *top = detect_chain(d, 0);
		CHECKF(top->cls == k->cls || k->sev == IG_SEV_INFO, "%s: top chain %s", k->name,
		       detect_class_name(top->cls));
		const char *named = k->culprit == 2231	 ? "stress-ng[2231]"
				    : k->culprit == 2003 ? "pt_data_worker[2003]"
				    : k->culprit == 7700 ? "reader[7700]"
				    : k->part == IG_PART_LOCK_WAIT || k->part == IG_PART_GIL_WAIT
					? "holder (tid 4830)"
				    : k->part == IG_PART_NET_WAIT  ? "10.0.0.5:5555"
				    : k->part == IG_PART_THROTTLED ? "cgroup's CPU limit"
								   : "train[4821]";
		CHECKF(strstr(c->summary, named) != NULL, "%s: summary names the culprit: %s",
		       k->name, c->summary);
		CHECK(detect_evidence(c, "impact_pct", -1) > 0);
		detect_free(d);
	}
}

/* Severity follows impact: the thresholds, the cap without a named cause. */
static void test_thresholds(void)
{
	static const struct {
		double share;
		int sev; /* -1: no chain */
	} rows[] = {{0.02, -1},		 {0.049, -1},		{0.05, IG_SEV_LOW},
		    {0.149, IG_SEV_LOW}, {0.15, IG_SEV_MEDIUM}, {0.299, IG_SEV_MEDIUM},
		    {0.30, IG_SEV_HIGH}, {0.65, IG_SEV_HIGH}};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		for (int named = 0; named < 2; named++) {
			double share[IG_PART_MAX] = {0};
			share[IG_PART_TASK_WAIT] = rows[i].share;
			struct fixture fx;
			fixture_init(&fx, T0, share);
			if (named) {
				culprit(&fx.p.wakers[0], 2003, "loader", 1);
				fx.p.nwakers = 1;
			}
			struct ig_detect *d = judge(&fx);
			const struct ig_chain *c = active(d, IG_CC_LOADER_WAIT);
			int want = rows[i].sev;
			if (!named && want > IG_SEV_MEDIUM)
				want = IG_SEV_MEDIUM;
			int got = c ? c->severity : -1;
			CHECKF(got == want, "task wait %.3f %s: %s, want %s", rows[i].share,
			       named ? "named" : "unnamed", c ? detect_sev_name(got) : "none",
			       want < 0 ? "none" : detect_sev_name(want));
			detect_free(d);
		}
	}
}

/* Healthy loops: a busy GPU is INFO, whatever the sync rate; small host
 * work at most LOW; no cause under 5 %. */
static void test_healthy(void)
{
	static const double rates[] = {1, 10, 100, 1000};
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		double share[IG_PART_MAX] = {0}; /* GPU wait: the rest, 85 % */
		share[IG_PART_API] = 0.04;
		share[IG_PART_HOST_CPU] = 0.06;
		share[IG_PART_PREEMPTED] = 0.02;
		share[IG_PART_TASK_WAIT] = 0.02;
		share[IG_PART_SLEEP] = 0.01;
		struct fixture fx;
		fixture_init(&fx, T0, share);
		fx.thr[0].t.sync_calls_win = (uint64_t)(rates[i] * 10);
		struct ig_detect *d = judge(&fx);
		CHECKF(worst(d) <= IG_SEV_LOW, "healthy at %.0f syncs/s: worst %s", rates[i],
		       detect_sev_name(worst(d)));
		const struct ig_chain *g = active(d, IG_CC_GPU_BOUND);
		CHECKF(g && g->severity == IG_SEV_INFO, "healthy at %.0f syncs/s: GPU-bound INFO",
		       rates[i]);
		/* the host keeps up unless another cause fired (here the host
		 * work, LOW at 6 %) */
		CHECKF(g && strstr(g->summary, worst(d) == IG_SEV_INFO
						   ? "(the host keeps up)"
						   : "(the rest: 1 other alert)"),
		       "healthy at %.0f syncs/s: %s", rates[i], g ? g->summary : "-");
		CHECK(!active(d, IG_CC_SYNC_STORM));
		CHECK(!active(d, IG_CC_CPU_CONTENTION) && !active(d, IG_CC_LOADER_WAIT));
		if (worst(d) > IG_SEV_LOW)
			dump(d);
		detect_free(d);
	}
}

/* 2000 syncs/s, the parts of share, and rt_pct % of the time in calls made
 * with nothing queued on the GPU; judged by a fresh detector. */
static struct ig_detect *judge_round_trips(struct fixture *fx, const double share[IG_PART_MAX],
					   unsigned rt_pct)
{
	fixture_init(fx, T0, share);
	fx->thr[0].t.sync_calls_win = 20000;
	fx->p.parts.rt_idle_ns = fx->p.parts.wall_ns * rt_pct / 100;
	fx->thr[0].t.parts.rt_idle_ns = fx->p.parts.rt_idle_ns;
	return judge(fx);
}

/* Syncs that find the GPU idle, many per second: a sync storm; the same
 * rate with GPU work behind each sync is not. */
static void test_sync_storm(void)
{
	double share[IG_PART_MAX] = {0};
	share[IG_PART_API] = 0.55;
	share[IG_PART_HOST_CPU] = 0.40; /* GPU wait: 5 % */
	struct fixture fx;
	fixture_init(&fx, T0, share);
	fx.thr[0].t.sync_calls_win = 20000; /* 2000/s, 25 us of GPU wait each */
	struct ig_detect *d = judge(&fx);
	const struct ig_chain *c = active(d, IG_CC_SYNC_STORM);
	CHECKF(c && fabs(c->impact - 0.55) < 0.002, "sync storm at 55%% API work");
	CHECK(!active(d, IG_CC_LAUNCH_BOUND));
	detect_free(d);

	share[IG_PART_API] = 0.30;
	share[IG_PART_HOST_CPU] = 0.02; /* GPU wait: 68 %, 2.1 x the rest per sync */
	fixture_init(&fx, T0, share);
	fx.thr[0].t.sync_calls_win = 20000; /* 300 us of GPU wait each, 100 us between */
	d = judge(&fx);
	CHECK(!active(d, IG_CC_SYNC_STORM));
	c = active(d, IG_CC_LAUNCH_BOUND);
	CHECKF(c && c->severity == IG_SEV_HIGH, "30%% API with GPU work behind each sync: launch");
	detect_free(d);

	/* the same, but 15 % of the time in calls made with nothing queued (the
	 * first launch after each sync): the GPU idled through those round
	 * trips, a storm of that impact; the rest of the API work overlapped
	 * GPU work */
	d = judge_round_trips(&fx, share, 15);
	c = active(d, IG_CC_SYNC_STORM);
	CHECKF(c && fabs(c->impact - 0.15) < 0.002 && c->severity == IG_SEV_MEDIUM,
	       "GPU-bound round trips idle 15%%: a MEDIUM storm of 15%%");
	CHECK(!active(d, IG_CC_LAUNCH_BOUND));
	detect_free(d);

	/* 3 % of round-trip idle: below LOW, no storm (a healthy 1000 Hz loop) */
	d = judge_round_trips(&fx, share, 3);
	CHECK(!active(d, IG_CC_SYNC_STORM));
	detect_free(d);

	/* API work under LOW, the first launches after each sync among it, and
	 * the syncs with nothing launched since the last: the GPU idled 8 %
	 * through the round trips, a LOW storm */
	share[IG_PART_API] = 0.04;
	d = judge_round_trips(&fx, share, 8);
	c = active(d, IG_CC_SYNC_STORM);
	CHECKF(c && fabs(c->impact - 0.08) < 0.002 && c->severity == IG_SEV_LOW,
	       "API work 4 %%, round trips idle 8 %%: a LOW storm of 8 %%");
	detect_free(d);
}

/* A storm of syncs after a D2H copy (hidden-sync: launch, copy, sync): the
 * second sync of each step waits for nothing, so its time, in gpu_wait, is
 * not GPU-bound time; the GPU-bound chain is the rest of the wait, and the
 * two chains add up to at most the whole. */
static void test_storm_gpu_bound(void)
{
	double share[IG_PART_MAX] = {0};
	share[IG_PART_API] = 0.30;
	share[IG_PART_HOST_CPU] = 0.02; /* GPU wait: 68 % */
	struct fixture fx;
	struct ig_detect *d = judge_round_trips(&fx, share, 40);
	fx.p.parts.rt_sync_ns = fx.p.parts.wall_ns * 25 / 100; /* of the 40 % */
	fx.thr[0].t.parts.rt_sync_ns = fx.p.parts.rt_sync_ns;
	detect_free(d);
	d = judge(&fx);
	const struct ig_chain *s = active(d, IG_CC_SYNC_STORM);
	const struct ig_chain *g = active(d, IG_CC_GPU_BOUND);
	CHECKF(s && fabs(s->impact - 0.40) < 0.002, "storm of 40 %% round-trip idle: %.3f",
	       s ? s->impact : -1);
	CHECKF(g && fabs(g->impact - 0.43) < 0.002, "GPU-bound 68 %% - 25 %% of idle syncs: %.3f",
	       g ? g->impact : -1);
	CHECK(s && g && s->impact + g->impact <= 1.0);
	CHECK(!active(d, IG_CC_HOST_WORK)); /* 2 %: the storm is the one other alert */
	/* the host does not keep up: GPU-bound says the rest is the storm's */
	CHECKF(g && strstr(g->summary, "(the rest: 1 other alert)") &&
		   !strstr(g->explanation, "host is not the limit"),
	       "GPU-bound beside a storm: %s", g ? g->summary : "-");
	detect_free(d);

	/* without round-trip syncs the GPU-bound chain is the whole wait */
	d = judge_round_trips(&fx, share, 40);
	g = active(d, IG_CC_GPU_BOUND);
	CHECKF(g && fabs(g->impact - 0.68) < 0.002, "GPU-bound: all of the 68 %% wait");
	detect_free(d);
}

/* Allocator spikes every 500 ms, and two calls stretched a little (a
 * preemption, a fresh page) that are outliers of the p50 too: the period is
 * that of the spikes, not broken by the small ones. */
static void test_alloc_period(void)
{
	double share[IG_PART_MAX] = {0};
	share[IG_PART_API] = 0.10;
	share[IG_PART_HOST_CPU] = 0.20;
	struct fixture fx;
	fixture_init(&fx, T0, share);
	struct ig_series_stats *s = &fx.ops[1].s;
	s->op = IG_OP_CUDA_MALLOC;
	s->calls_win = s->calls_life = 1000;
	s->win.n = 1000;
	s->win.p50 = 20000;		   /* 20 us */
	s->win.p99 = 40000000;		   /* 40 ms */
	s->time_win_ns = 12 * 40000000ull; /* 4.8 % of the window */
	s->life = s->win;
	s->tail_ratio = 2000;
	uint64_t ws = T0 - 10 * SEC;
	for (int i = 0; i < 12; i++) {
		s->outlier_ts[s->noutliers] = ws + SEC / 4 + (uint64_t)i * SEC / 2;
		s->outlier_dur[s->noutliers++] = 40000000;
		if (i == 3 || i == 7) { /* 150 us, 100 ms after a spike */
			s->outlier_ts[s->noutliers] =
			    ws + SEC / 4 + (uint64_t)i * SEC / 2 + SEC / 10;
			s->outlier_dur[s->noutliers++] = 150000;
		}
	}
	struct ig_detect *d = judge(&fx);
	const struct ig_chain *c = active(d, IG_CC_ALLOC_SPIKES);
	CHECKF(c && fabs(detect_evidence(c, "period_ns", 0) - 5e8) < 1e6,
	       "period of the spikes with two small outliers among them: %g",
	       c ? detect_evidence(c, "period_ns", 0) : -1);
	CHECKF(c && strstr(c->summary, "every ~500ms"), "%s", c ? c->summary : "no chain");
	if (!c)
		dump(d);
	detect_free(d);

	/* spikes at irregular times: no period, whatever the small ones do */
	s->outlier_ts[5] += SEC / 5;
	d = judge(&fx);
	c = active(d, IG_CC_ALLOC_SPIKES);
	CHECKF(c && detect_evidence(c, "period_ns", 0) == 0 &&
		   strstr(c->summary, "no regular period"),
	       "%s", c ? c->summary : "no chain");
	detect_free(d);
}

/* Two causes mixed: both reported, the larger first, each with its share. */
static void test_mixed(void)
{
	double share[IG_PART_MAX] = {0};
	share[IG_PART_TASK_WAIT] = 0.25;
	share[IG_PART_PREEMPTED] = 0.12;
	struct fixture fx;
	fixture_init(&fx, T0, share);
	culprit(&fx.p.preemptors[0], 2231, "stress-ng", 1);
	fx.p.npreemptors = 1;
	culprit(&fx.p.wakers[0], 2003, "loader", 1);
	fx.p.nwakers = 1;
	struct ig_detect *d = judge(&fx);
	CHECKF(detect_count(d) >= 2, "two chains");
	const struct ig_chain *a = detect_chain(d, 0), *b = detect_chain(d, 1);
	CHECKF(a->cls == IG_CC_LOADER_WAIT && fabs(a->impact - 0.25) < 0.002, "first: loader 25%%");
	CHECKF(b->cls == IG_CC_CPU_CONTENTION && fabs(b->impact - 0.12) < 0.002,
	       "second: CPU 12%%");
	CHECK(a->severity == IG_SEV_MEDIUM && b->severity == IG_SEV_LOW);
	/* INFO after every actionable chain, however large */
	int seen_info = 0;
	for (int i = 0; i < detect_count(d); i++) {
		const struct ig_chain *c = detect_chain(d, i);
		if (c->severity == IG_SEV_INFO)
			seen_info = 1;
		else
			CHECKF(!seen_info, "%s after an INFO chain", detect_class_name(c->cls));
	}
	detect_free(d);
}

/* A chain keeps its id while its cause lasts, then resolves and ages out;
 * a feeder that stopped calling is not judged. */
static void test_life_cycle(void)
{
	double share[IG_PART_MAX] = {0};
	share[IG_PART_IO_WAIT] = 0.40;
	struct fixture fx;
	struct ig_detect *d = detect_new(NULL);
	uint32_t id = 0;
	for (int s = 0; s < 5; s++) {
		fixture_init(&fx, T0 + (uint64_t)s * SEC, share);
		detect_run(d, &fx.w);
		const struct ig_chain *c = active(d, IG_CC_BLOCK_IO);
		CHECK(c != NULL);
		if (c && !id)
			id = c->id;
		CHECK(c && c->id == id);
	}
	/* the feeder goes quiet: its last call 10 s before the window ends */
	for (int s = 5; s < 12; s++) {
		fixture_init(&fx, T0 + (uint64_t)s * SEC, share);
		fx.thr[0].t.last_ns = T0 + 4 * SEC;
		detect_run(d, &fx.w);
	}
	const struct ig_chain *c = detect_find(d, id);
	CHECKF(c && !c->active, "resolved once the feeder is quiet");
	fixture_init(&fx, T0 + 200 * SEC, share);
	fx.thr[0].t.last_ns = T0;
	detect_run(d, &fx.w);
	CHECKF(detect_find(d, id) == NULL, "aged out after keep_s");
	detect_free(d);
}

/* A culprit that has exited: its evidence stays in the window for up to
 * 10 s, but a chain naming it opens only while it runs (or at the end,
 * where the run is judged whole); a chain it had keeps firing. */
static void test_exited_culprit(void)
{
	double share[IG_PART_MAX] = {0};
	share[IG_PART_PREEMPTED] = 0.20;
	struct ig_proc_stats hog;
	memset(&hog, 0, sizeof(hog));
	hog.pid = 2231;
	snprintf(hog.comm, sizeof(hog.comm), "stress-ng");
	for (int mode = 0; mode < 4; mode++) { /* alive; exited; exited at the end; exits later */
		struct ig_detect *d = detect_new(NULL);
		struct fixture fx;
		struct ig_win_proc wps[2];
		int n = mode == 3 ? 3 : 1;
		for (int s = 0; s < n; s++) {
			fixture_init(&fx, T0 + (uint64_t)s * SEC, share);
			culprit(&fx.p.preemptors[0], 2231, "stress-ng", 0.9);
			fx.p.npreemptors = 1;
			hog.exited = mode == 1 || mode == 2 || (mode == 3 && s == 2);
			wps[0] = fx.wp;
			wps[1] = (struct ig_win_proc){.p = &hog}; /* not judged: no calls */
			fx.w.procs = wps;
			fx.w.nprocs = 2;
			detect_set_end(d, mode == 2);
			detect_run(d, &fx.w);
		}
		const struct ig_chain *c = active(d, IG_CC_CPU_CONTENTION);
		static const char *const what[] = {"running culprit: a chain",
						   "exited culprit: no new chain",
						   "exited culprit at the end: a chain",
						   "culprit exits: its chain keeps firing"};
		CHECKF(mode == 1 ? c == NULL : c != NULL && c->culprit_pid == 2231, "%s", what[mode]);
		if (mode == 3)
			CHECKF(c && c->last_seen_ns == T0 + 2 * SEC, "fired after the exit too");
		detect_free(d);
	}
}

/* Ingero recordings: no split, off-CPU state unknown: the parts are still
 * measured, the cause is marked unconfirmed and stops at MEDIUM. */
static void test_unconfirmed(void)
{
	double share[IG_PART_MAX] = {0};
	share[IG_PART_HOST_CPU] = 0.25;
	share[IG_PART_UNKNOWN] = 0.10;
	struct fixture fx;
	fixture_init(&fx, T0, share);
	fx.p.parts.split_unknown = 1;
	fx.p.off_unknown_ns = 1;
	struct ig_detect *d = judge(&fx);
	const struct ig_chain *h = active(d, IG_CC_HOST_WORK);
	CHECKF(h && h->severity == IG_SEV_MEDIUM && h->lacking[0], "host work unconfirmed");
	const struct ig_chain *u = active(d, IG_CC_OFFCPU_WAIT);
	CHECKF(u && u->severity <= IG_SEV_MEDIUM && u->lacking[0], "off-CPU wait unconfirmed");
	detect_free(d);
}

/* Any of the chain's recommendations containing text. */
static const char *rec_with(const struct ig_chain *c, const char *text)
{
	for (int i = 0; i < c->nrecs; i++)
		if (strstr(c->recs[i], text))
			return c->recs[i];
	return NULL;
}

/* The CPU quota: the cgroup and its limit named, and the command that
 * raises it fits the cgroup's version and its manager. Throttled 40 % of
 * the time at 0.5 CPU: it would use 0.5 / 0.6 = 0.83 CPU, 1.0 with 20 %
 * headroom in half CPUs. */
static void test_quota_advice(void)
{
	static const struct {
		int v2;
		const char *container, *dir, *want;
	} cases[] = {
	    {1, "-", "/sys/fs/cgroup/job.slice/train.scope",
	     "echo \"100000 100000\" > /sys/fs/cgroup/job.slice/train.scope/cpu.max"},
	    {0, "-", "/sys/fs/cgroup/cpu,cpuacct/sweep/q50",
	     "echo 100000 > /sys/fs/cgroup/cpu,cpuacct/sweep/q50/cpu.cfs_quota_us"},
	    {1, "docker:4f1e2d3c4b5a", "/sys/fs/cgroup/system.slice/docker-4f1e.scope",
	     "docker update --cpus 1.0 4f1e2d3c4b5a"},
	    {1, "train.service", "/sys/fs/cgroup/system.slice/train.service",
	     "systemctl set-property train.service CPUQuota=100%"},
	    {1, "k8s:0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9/4f1e2d3c4b5a", "/sys/fs/cgroup/kubepods",
	     "resources.limits.cpu"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double share[IG_PART_MAX] = {0};
		share[IG_PART_THROTTLED] = 0.40;
		struct fixture fx;
		fixture_init(&fx, T0, share);
		fx.p.parts.waits_seen = 1;
		snprintf(fx.p.container, sizeof(fx.p.container), "%s", cases[i].container);
		fx.p.quota.quota_us = 50000;
		fx.p.quota.period_us = 100000;
		fx.p.quota.v2 = cases[i].v2;
		snprintf(fx.p.quota.dir, sizeof(fx.p.quota.dir), "%s", cases[i].dir);
		fx.p.quota.nr_per = 100;
		fx.p.quota.nr_thr = 64;
		fx.p.quota.thr_ns = 4 * SEC;
		struct ig_detect *d = judge(&fx);
		const struct ig_chain *c = active(d, IG_CC_CPU_QUOTA);
		CHECKF(c && rec_with(c, cases[i].want), "case %zu: no '%s'", i, cases[i].want);
		if (c) {
			CHECKF(strstr(c->summary, "0.50 CPU (50 ms per 100 ms)"), "%s", c->summary);
			CHECKF(strstr(c->explanation, cases[i].dir) &&
				   strstr(c->explanation, "64 of its 100 periods"),
			       "%s", c->explanation);
			CHECK(fabs(detect_evidence(c, "quota_cpus", -1) - 0.5) < 1e-9);
			CHECK(fabs(detect_evidence(c, "periods_throttled_pct", -1) - 64) < 1e-9);
		} else {
			dump(d);
		}
		detect_free(d);
	}
	/* no quota seen (a recording without its events): no number made up */
	double share[IG_PART_MAX] = {0};
	share[IG_PART_THROTTLED] = 0.40;
	struct fixture fx;
	fixture_init(&fx, T0, share);
	fx.p.parts.waits_seen = 1;
	snprintf(fx.p.container, sizeof(fx.p.container), "docker:4f1e2d3c4b5a");
	struct ig_detect *d = judge(&fx);
	const struct ig_chain *c = active(d, IG_CC_CPU_QUOTA);
	CHECK(c && rec_with(c, "docker update --cpus <N> 4f1e2d3c4b5a") &&
	      !strstr(c->summary, "ms per"));
	detect_free(d);
}

/* A command a recommendation carries ends it, after the last ": ", whole
 * (docs/detection.md, "Advice you can paste"). */
static int ends_with_cmd(const char *rec, const char *cmd)
{
	const char *c = strrchr(rec, ':');
	size_t n = strlen(rec), k = strlen(cmd);
	return c && n >= k && !strcmp(rec + n - k, cmd) && c + 2 <= rec + n - k;
}

/* Contention by another process: the commands act on every thread of the
 * culprit (renice by each tid, chrt -a) and of the workload (taskset -a),
 * each the end of its recommendation. */
static void test_contention_advice(void)
{
	double share[IG_PART_MAX] = {0};
	share[IG_PART_PREEMPTED] = 0.40;
	struct fixture fx;
	fixture_init(&fx, T0, share);
	culprit(&fx.p.preemptors[0], 2231, "stress-ng", 0.9);
	fx.p.npreemptors = 1;
	struct ig_detect *d = judge(&fx);
	const struct ig_chain *c = active(d, IG_CC_CPU_CONTENTION);
	char taskset[64];
	snprintf(taskset, sizeof(taskset), "taskset -a -cp <cores> %u", (unsigned)PID);
	const char *want[] = {"renice 19 -p $(ls /proc/2231/task)", "chrt -a --idle -p 0 2231",
			      taskset};
	for (size_t i = 0; c && i < sizeof(want) / sizeof(want[0]); i++) {
		const char *r = rec_with(c, want[i]);
		CHECKF(r && ends_with_cmd(r, want[i]), "no recommendation ending in '%s'", want[i]);
	}
	for (int i = 0; c && i < c->nrecs; i++) /* no command in the middle of a sentence */
		CHECKF(!strstr(c->recs[i], " -p ") || strstr(c->recs[i], "$(ls") ||
			   strstr(c->recs[i], "chrt -a") || strstr(c->recs[i], "taskset -a"),
		       "%s", c->recs[i]);
	CHECK(c != NULL);
	detect_free(d);
	/* a real-time culprit: nice does not lower it, its policy is changed */
	for (int pol = 1; pol <= 2; pol++) {
		fixture_init(&fx, T0, share);
		culprit(&fx.p.preemptors[0], 2231, "rt-hog", 0.9);
		fx.p.preemptors[0].aux = 1u << 16 | 50u << 8 | (unsigned)pol;
		fx.p.npreemptors = 1;
		d = judge(&fx);
		c = active(d, IG_CC_CPU_CONTENTION);
		CHECKF(c && strstr(c->summary, pol == 1 ? "rt-hog[2231] (real-time: SCHED_FIFO 50):"
							: "rt-hog[2231] (real-time: SCHED_RR 50):"),
		       "%s", c ? c->summary : "no chain");
		const char *rt[] = {"chrt -a -o -p 0 2231", "chrt -a --idle -p 0 2231", taskset};
		for (size_t i = 0; c && i < sizeof(rt) / sizeof(rt[0]); i++) {
			const char *r = rec_with(c, rt[i]);
			CHECKF(r && ends_with_cmd(r, rt[i]), "no recommendation ending in '%s'",
			       rt[i]);
		}
		CHECK(c && !rec_with(c, "renice"));
		detect_free(d);
	}
	/* the feeder's own priority lowered (nice 19, SCHED_IDLE): said, and
	 * the command that gives it back comes first */
	for (int idle = 0; idle < 2; idle++) {
		fixture_init(&fx, T0, share);
		culprit(&fx.p.preemptors[0], 2231, "stress-ng", 0.9);
		fx.p.npreemptors = 1;
		fx.p.feeder_sched = idle ? 1u << 16 | 20u << 8 | 5u : 1u << 16 | 39u << 8;
		d = judge(&fx);
		c = active(d, IG_CC_CPU_CONTENTION);
		char own[64];
		snprintf(own, sizeof(own), idle ? "chrt -a -o -p 0 %u" : "renice 0 -p $(ls /proc/%u/task)",
			 (unsigned)PID);
		CHECKF(c && strstr(c->summary, idle ? "train[4821] (at SCHED_IDLE) runnable"
						     : "train[4821] (at nice 19) runnable"),
		       "%s", c ? c->summary : "no chain");
		CHECKF(c && c->nrecs && ends_with_cmd(c->recs[0], own), "first: %s",
		       c && c->nrecs ? c->recs[0] : "none");
		detect_free(d);
	}
	/* a long cgroup path: the text is cut, the command whole */
	fixture_init(&fx, T0, (double[IG_PART_MAX]){[IG_PART_THROTTLED] = 0.40});
	fx.p.parts.waits_seen = 1;
	snprintf(fx.p.container, sizeof(fx.p.container), "-");
	fx.p.quota.quota_us = 50000;
	fx.p.quota.period_us = 100000;
	char dir[160] = "/sys/fs/cgroup/cpu";
	while (strlen(dir) < 140)
		strcat(dir, "/deep");
	snprintf(fx.p.quota.dir, sizeof(fx.p.quota.dir), "%s", dir);
	d = judge(&fx);
	c = active(d, IG_CC_CPU_QUOTA);
	char cmd[200];
	snprintf(cmd, sizeof(cmd), "echo 100000 > %s/cpu.cfs_quota_us", dir);
	const char *r = c ? rec_with(c, "echo 100000") : NULL;
	CHECKF(r && ends_with_cmd(r, cmd) && strstr(r, "...: echo"), "%s", r ? r : "none");
	detect_free(d);
}

/* A paced loop's chain carries the call site it sleeps at most. */
static void test_sleep_site(void)
{
	double share[IG_PART_MAX] = {0};
	share[IG_PART_SLEEP] = 0.40;
	struct fixture fx;
	fixture_init(&fx, T0, share);
	fx.p.sleep_stack = 0x1234abcdull;
	struct ig_detect *d = judge(&fx);
	const struct ig_chain *c = active(d, IG_CC_TIMER_SLEEP);
	CHECK(c && c->stack_id == 0x1234abcdull && c->severity == IG_SEV_INFO);
	CHECK(c && rec_with(c, "call site"));
	detect_free(d);
	fx.p.sleep_stack = 0; /* none known: the way to find it */
	d = judge(&fx);
	c = active(d, IG_CC_TIMER_SLEEP);
	CHECK(c && !c->stack_id && rec_with(c, "py-spy dump --pid"));
	detect_free(d);
}

/* A lock wait's chain and a GIL wait's carry the call site each waits at
 * most, each its own (not the other's, not the sleep's). */
static void test_lock_site(void)
{
	static const struct {
		int part, cls;
	} k[] = {{IG_PART_LOCK_WAIT, IG_CC_LOCK_WAIT}, {IG_PART_GIL_WAIT, IG_CC_GIL_WAIT}};
	for (int i = 0; i < 2; i++) {
		double share[IG_PART_MAX] = {0};
		share[k[i].part] = 0.40;
		struct fixture fx;
		fixture_init(&fx, T0, share);
		culprit(&fx.p.lockers[0], 4830, "holder", 0.9);
		fx.p.lockers[0].aux = PID;
		fx.p.nlockers = 1;
		fx.p.gil_holders[0] = fx.p.lockers[0];
		fx.p.ngil = 1;
		fx.p.parts.waits_seen = 1;
		fx.p.sleep_stack = 0x5151ull;
		fx.p.lock_stack = 0x1010ull;
		fx.p.gil_stack = 0x2020ull;
		struct ig_detect *d = judge(&fx);
		const struct ig_chain *c = active(d, k[i].cls);
		uint64_t want = i ? 0x2020ull : 0x1010ull;
		CHECKF(c && c->stack_id == want && rec_with(c, "call site"), "%s: stack 0x%llx",
		       detect_class_name(k[i].cls), c ? (unsigned long long)c->stack_id : 0ull);
		detect_free(d);
		fx.p.lock_stack = fx.p.gil_stack = 0; /* none known */
		d = judge(&fx);
		c = active(d, k[i].cls);
		CHECK(c && !c->stack_id && !rec_with(c, "call site") && rec_with(c, "py-spy dump"));
		detect_free(d);
	}
}

/* A lock wait worded by what its call site waited on (detect_set_lock_kind):
 * a mutex, a read-write lock, a condition, a queue's get or put, or not
 * said; the kind is asked of the chain's stack with its wakers' stack, and
 * without a stack nothing is asked. */
static int kind_asked;
static uint64_t kind_stack, kind_wake;
static int fake_kind(void *ctx, uint64_t id, uint64_t wake_id)
{
	kind_asked++;
	kind_stack = id;
	kind_wake = wake_id;
	return *(const int *)ctx;
}

static void test_lock_words(void)
{
	static const struct {
		int kind;
		const char *summary, *advice;
	} k[] = {
	    {IG_LOCK_UNKNOWN, "lock contention with holder (tid 4830): ", "If it is a condition"},
	    {IG_LOCK_MUTEX, "on a mutex it held", "Shorten the critical section"},
	    {IG_LOCK_RWLOCK, "on a read-write lock it held", "Shorten the critical section"},
	    {IG_LOCK_COND, "waiting on the producer holder (tid 4830): ", "Produce ahead"},
	    {IG_LOCK_QGET, "in a queue's get until it put the next item", "num_workers > 0"},
	    {IG_LOCK_QPUT, "held up by the consumer holder (tid 4830): ", "Take items faster"},
	};
	for (int i = 0; i < (int)(sizeof(k) / sizeof(k[0])); i++) {
		double share[IG_PART_MAX] = {0};
		share[IG_PART_LOCK_WAIT] = 0.40;
		struct fixture fx;
		fixture_init(&fx, T0, share);
		culprit(&fx.p.lockers[0], 4830, "holder", 0.9);
		fx.p.lockers[0].aux = PID;
		fx.p.nlockers = 1;
		fx.p.parts.waits_seen = 1;
		fx.p.lock_stack = 0x1010ull;
		fx.p.lock_wake_stack = 0x2020ull;
		struct ig_detect *d = detect_new(NULL);
		int kind = k[i].kind;
		kind_asked = 0;
		detect_set_lock_kind(d, fake_kind, &kind);
		detect_run(d, &fx.w);
		const struct ig_chain *c = active(d, IG_CC_LOCK_WAIT);
		CHECKF(c && strstr(c->summary, k[i].summary) && rec_with(c, k[i].advice) &&
			   c->stack_id == 0x1010ull && kind_asked && kind_stack == 0x1010ull &&
			   kind_wake == 0x2020ull,
		       "kind %d: %s", kind, c ? c->summary : "no chain");
		CHECKF(c && (kind == IG_LOCK_UNKNOWN) == !!rec_with(c, "If it is a condition") &&
			   (kind < IG_LOCK_COND) == !!rec_with(c, "Shorten the critical section"),
		       "kind %d: advice for the other kinds", kind);
		detect_free(d);
		/* no call site: nothing to ask, the words of a lock or condition */
		fx.p.lock_stack = 0;
		d = detect_new(NULL);
		kind_asked = 0;
		detect_set_lock_kind(d, fake_kind, &kind);
		detect_run(d, &fx.w);
		c = active(d, IG_CC_LOCK_WAIT);
		CHECK(c && !kind_asked && strstr(c->summary, "a lock or condition it released"));
		detect_free(d);
	}
}

/* Waits for another task: the tracer's own wake-ups (a hold's SIGCONT,
 * from ingero-top or its guardian) never name the producer; most of them
 * for programs the feeder ran (ig_offcpu_rec.child) are a child-process
 * wait naming the last child, not input. */
static void test_task_words(void)
{
	double share[IG_PART_MAX] = {0};
	share[IG_PART_TASK_WAIT] = 0.50;
	static const char *const tracers[] = {"ingero-top", "ingero-top-hold"};
	for (int i = 0; i < 2; i++) {
		struct fixture fx;
		fixture_init(&fx, T0, share);
		culprit(&fx.p.wakers[0], 900 + (uint32_t)i, tracers[i], 0.6);
		culprit(&fx.p.wakers[1], 2003, "producer", 0.3);
		fx.p.nwakers = 2;
		struct ig_detect *d = judge(&fx);
		const struct ig_chain *c = active(d, IG_CC_LOADER_WAIT);
		CHECKF(c && c->culprit_pid == 2003 &&
			   strstr(c->summary, "input wait on producer[2003]"),
		       "%s: %s", tracers[i], c ? c->summary : "no chain");
		detect_free(d);
	}
	for (int child = 0; child < 2; child++) {
		struct fixture fx;
		fixture_init(&fx, T0, share);
		culprit(&fx.p.wakers[0], 2003, "sleep", 0.1);
		fx.p.nwakers = 1;
		struct ig_win_thread *t = &fx.thr[0];
		for (int k = 0; k < 6; k++) {
			struct ig_offcpu_rec *r = &t->tl[t->ntl++];
			r->ts_ns = T0 - SEC + (uint64_t)k * 10000000ull;
			r->dur_ns = 5000000ull;
			r->state = IG_OFF_BLOCKED;
			r->part = IG_PART_TASK_WAIT;
			r->child = (uint8_t)child;
			r->other_pid = 2003 + (uint32_t)k;
			snprintf(r->other_comm, sizeof(r->other_comm), "sleep");
		}
		struct ig_detect *d = judge(&fx);
		const struct ig_chain *c = active(d, IG_CC_LOADER_WAIT);
		const char *want =
		    child ? "child-process wait in train[" : "input wait on sleep[2003]";
		CHECKF(c && strstr(c->summary, want) &&
			   (!child || (strstr(c->summary, "(the last: sleep[2008])") &&
					c->culprit_pid == 2008 && !strcmp(c->culprit_comm, "sleep"))) &&
			   !!rec_with(c, "subprocess.Popen") == child,
		       "child %d: %s", child, c ? c->summary : "no chain");
		detect_free(d);
	}
}

/* Words that follow what the feeder's waits on its timeline were: a
 * network send (its send buffer full) or a receive, a terminal's output or
 * a pipe's, a timer's signal or a sleep. */
static void test_mechanism_words(void)
{
	static const struct {
		int part, cls, sys, fdk;
		const char *want;
	} k[] = {
	    {IG_PART_NET_WAIT, IG_CC_NET_WAIT, IG_SYS_SEND, IG_FDK_INET,
	     "network send wait in train["},
	    {IG_PART_NET_WAIT, IG_CC_NET_WAIT, IG_SYS_WRITE, IG_FDK_INET, "network send wait in"},
	    {IG_PART_NET_WAIT, IG_CC_NET_WAIT, IG_SYS_RECV, IG_FDK_INET, "network wait in train["},
	    {IG_PART_BACKPRESSURE, IG_CC_BACKPRESSURE, IG_SYS_WRITE, IG_FDK_CHR,
	     "terminal back-pressure from"},
	    {IG_PART_BACKPRESSURE, IG_CC_BACKPRESSURE, IG_SYS_WRITE, IG_FDK_FIFO,
	     "writing to a full pipe or socket"},
	    {IG_PART_SLEEP, IG_CC_TIMER_SLEEP, IG_SYS_SIGNAL, 0, "(waits for a timer's signal)"},
	    {IG_PART_SLEEP, IG_CC_TIMER_SLEEP, IG_SYS_READ, IG_FDK_SIGNALFD,
	     "(waits for a timer's signal)"},
	    {IG_PART_SLEEP, IG_CC_TIMER_SLEEP, IG_SYS_SLEEP, 0, "(sleep calls)"},
	};
	for (int i = 0; i < (int)(sizeof(k) / sizeof(k[0])); i++) {
		double share[IG_PART_MAX] = {0};
		share[k[i].part] = 0.40;
		struct fixture fx;
		fixture_init(&fx, T0, share);
		fx.p.parts.waits_seen = 1;
		culprit(&fx.p.drainers[0], 7700, "reader", 0.9);
		fx.p.drainers[0].aux = 7700;
		fx.p.ndrainers = 1;
		struct ig_win_thread *t = &fx.thr[0];
		for (int j = 0; j < 6; j++) {
			struct ig_offcpu_rec *r = &t->tl[t->ntl++];
			r->ts_ns = T0 - SEC + (uint64_t)j * 10000000ull;
			r->dur_ns = 4000000ull;
			r->state = IG_OFF_BLOCKED;
			r->part = (int8_t)k[i].part;
			r->wait = IG_WAIT_PACK(k[i].sys, k[i].fdk, 0, 0);
		}
		struct ig_detect *d = judge(&fx);
		const struct ig_chain *c = active(d, k[i].cls);
		CHECKF(c && strstr(c->summary, k[i].want), "%d: want \"%s\": %s", i, k[i].want,
		       c ? c->summary : "no chain");
		detect_free(d);
	}
}

/* Page faults worded by mechanism: most of their time copies on write and
 * the process forked a child that shares its memory: the fork, its child
 * named, advice to fork less; copies on write without a fork (zero pages
 * read first, a fork before tracing): fresh memory, saying so; a fork but
 * faults of fresh pages: fresh memory. */
static void test_fault_words(void)
{
	static const struct {
		double cow; /* of the fault part */
		uint32_t forks, last;
		const char *want, *rec, *why;
	} k[] = {
	    {0.8, 2, 5150,
	     "copy-on-write faults in train[4821]: 30% of its time copying pages it "
	     "shares with processes it forked (the last: worker[5150])",
	     "Fork less often", "80% of it in faults that copied"},
	    {0.8, 1, 0, "processes it forked", "Fork less often", "(1 fork, no child running"},
	    {0.8, 0, 0, "faulting in fresh memory", "Reuse buffers", "before tracing began"},
	    {0.2, 3, 5150, "faulting in fresh memory", "Reuse buffers", "keeps asking"},
	};
	for (int i = 0; i < (int)(sizeof(k) / sizeof(k[0])); i++) {
		double share[IG_PART_MAX] = {0};
		share[IG_PART_FAULT] = 0.30;
		struct fixture fx;
		fixture_init(&fx, T0, share);
		fx.p.parts.waits_seen = 1;
		fx.p.parts.cow_ns = (uint64_t)(k[i].cow * (double)fx.p.parts.ns[IG_PART_FAULT]);
		fx.p.forks = k[i].forks;
		fx.p.fork_pid = k[i].last;
		snprintf(fx.p.fork_comm, sizeof(fx.p.fork_comm), "worker");
		struct ig_detect *d = judge(&fx);
		const struct ig_chain *c = active(d, IG_CC_PAGE_FAULTS);
		CHECKF(c && strstr(c->summary, k[i].want) &&
			   !strncmp(c->recs[0], k[i].rec, strlen(k[i].rec)) &&
			   strstr(c->explanation, k[i].why),
		       "%d: want \"%s\", \"%s\", \"%s\": %s | %s | %s", i, k[i].want, k[i].rec,
		       k[i].why, c ? c->summary : "no chain", c ? c->recs[0] : "",
		       c ? c->explanation : "");
		if (c && k[i].last)
			CHECK(!strstr(c->summary, "the last") == !(k[i].cow >= 0.5));
		detect_free(d);
	}
}

/* Contention of a process that may run on fewer CPUs than the host has:
 * said, and the advice widens it (its affinity) or names its cpuset; a
 * process that may run on all of them: nothing said. */
static void test_confined_words(void)
{
	static const struct {
		uint32_t allowed, online, cpuset;
		const char *why, *rec;
	} k[] = {
	    {2, 8, 0, "It may run on 2 of the host's 8 CPUs (its CPU affinity",
	     "for p in 4821 $(pgrep -P 4821); do taskset -a -cp 0-7 $p; done"},
	    {2, 8, 2, "It may run on 2 of the host's 8 CPUs (its cgroup's cpuset",
	     "cat /proc/4821/cpuset"},
	    {8, 8, 0, NULL, NULL},
	};
	for (int i = 0; i < 3; i++) {
		double share[IG_PART_MAX] = {0};
		share[IG_PART_PREEMPTED] = 0.40;
		struct fixture fx;
		fixture_init(&fx, T0, share);
		fx.p.cpus_allowed = k[i].allowed;
		fx.p.cpus_online = k[i].online;
		fx.p.cpus_cpuset = k[i].cpuset;
		struct ig_detect *d = judge(&fx);
		const struct ig_chain *c = active(d, IG_CC_CPU_CONTENTION);
		int said = c && strstr(c->explanation, "It may run on");
		int rec = 0;
		for (int j = 0; c && k[i].rec && j < c->nrecs; j++)
			rec |= strstr(c->recs[j], k[i].rec) != NULL;
		CHECKF(c && (k[i].why ? strstr(c->explanation, k[i].why) && rec : !said),
		       "%d: %s | %s", i, c ? c->explanation : "no chain",
		       c && c->nrecs ? c->recs[c->nrecs - 1] : "");
		detect_free(d);
	}
}

/* A stopped feeder: worded by how it was stopped most, its advice fits the
 * stopper (a shell's job control is not a program to end), and ingero-top's
 * own holds are never a culprit. */
static void test_stop_words(void)
{
	static const struct {
		int kind;
		const char *comm, *want, *cmd;
	} k[] = {
	    {IG_STOP_SIGNAL, "cpulimit", "stopped by signals: train[",
	     ": kill 7700; sleep 1; kill -CONT 4821"},
	    {IG_STOP_SIGNAL, "bash", "until bash[7700] continued it", ": kill -CONT 4821"},
	    {IG_STOP_TRACED, "strace", "stopped by a tracer: strace[7700] held train[",
	     ": kill 7700"},
	    {IG_STOP_FROZEN, "dockerd", "frozen by its cgroup: train[", ": cat /proc/4821/cgroup"},
	    {IG_STOP_SIGNAL, "ingero-top-hold", NULL, NULL},
	};
	for (int i = 0; i < (int)(sizeof(k) / sizeof(k[0])); i++) {
		double share[IG_PART_MAX] = {0};
		share[IG_PART_STOPPED] = 0.40;
		struct fixture fx;
		fixture_init(&fx, T0, share);
		culprit(&fx.p.stoppers[0], 7700, k[i].comm, 1.0);
		fx.p.stoppers[0].aux = 7700;
		fx.p.nstoppers = 1;
		fx.p.stop_kind = k[i].kind;
		struct ig_detect *d = judge(&fx);
		const struct ig_chain *c = active(d, IG_CC_STOPPED);
		if (!k[i].want) {
			CHECKF(!c, "%d: a hold of the tracer's is no chain: %s", i,
			       c ? c->summary : "");
			detect_free(d);
			continue;
		}
		CHECKF(c && strstr(c->summary, k[i].want), "%d: want \"%s\": %s", i, k[i].want,
		       c ? c->summary : "no chain");
		int cmd = 0;
		for (int r = 0; c && r < c->nrecs; r++)
			cmd |=
			    strlen(c->recs[r]) > strlen(k[i].cmd) &&
			    !strcmp(c->recs[r] + strlen(c->recs[r]) - strlen(k[i].cmd), k[i].cmd);
		CHECKF(cmd, "%d: a recommendation ends with \"%s\"", i, k[i].cmd);
		CHECK(c && c->culprit_pid == 7700 && c->severity == IG_SEV_HIGH);
		detect_free(d);
	}
}

/* ingero-top as a culprit is named as the tracer, with the CPU it used. */
static void test_tracer_named(void)
{
	for (int known = 0; known < 2; known++) {
		double share[IG_PART_MAX] = {0};
		share[IG_PART_PREEMPTED] = 0.40;
		struct fixture fx;
		fixture_init(&fx, T0, share);
		culprit(&fx.p.preemptors[0], 3333, "ingero-top", 0.9);
		fx.p.npreemptors = 1;
		fx.w.host.self_cpu_pct = known ? 37.0 : -1;
		struct ig_detect_cfg cfg;
		detect_cfg_default(&cfg);
		cfg.self_pid = 3333;
		struct ig_detect *d = detect_new(&cfg);
		detect_run(d, &fx.w);
		const struct ig_chain *c = active(d, IG_CC_CPU_CONTENTION);
		const char *want = known
				       ? "ingero-top[3333] (ingero-top itself: the tracer used 37% "
					 "of a CPU)"
				       : "ingero-top[3333] (ingero-top itself: the tracer)";
		CHECKF(c && strstr(c->summary, want), "%s", c ? c->summary : "no chain");
		detect_free(d);
	}
}

int main(void)
{
	test_each_time_cause();
	test_fault_words();
	test_confined_words();
	test_thresholds();
	test_healthy();
	test_sync_storm();
	test_storm_gpu_bound();
	test_alloc_period();
	test_mixed();
	test_life_cycle();
	test_exited_culprit();
	test_unconfirmed();
	test_quota_advice();
	test_contention_advice();
	test_tracer_named();
	test_sleep_site();
	test_lock_site();
	test_lock_words();
	test_task_words();
	test_mechanism_words();
	test_stop_words();
	return check_done("test_rules");
}
