/* The synthetic streams' recipes (synth_int.h) and what each says is true
 * of its main process (synth_truth), derived from the recipe alone. */
#include "synth_int.h"

#include <errno.h>
#include <math.h>
#include <string.h>

const char *const synth_names[SYNTH_MAX] = {
    "healthy",	      "cpu_contention",	 "gpu_bound",	    "loader_wait",  "sync_storm",
    "copy_dominated", "alloc_spikes",	 "memory_pressure", "block_io",	    "cold_start",
    "no_split",	      "host_work",	 "timer_sleep",	    "launch_bound", "healthy_fast",
    "mixed",	      "nccl_straggler",	 "lock_wait",	    "gil_wait",	    "backpressure",
    "net_wait",	      "cpu_quota",	 "file_io",	    "cold_read",    "page_faults",
    "stopped",	      "launch_blocking", "poll_wait",	    "bench",
};

/* clang-format off */
const struct recipe synth_recipes[SYNTH_MAX] = {
    [SYNTH_HEALTHY] = {.base = {HEALTHY_STEP}, IDLE, .cause = "gpu_bound", .healthy = 1},
    [SYNTH_CPU_CONTENTION] = {
	.base = {HOST(300 * US), OFF(PH_PREEMPT, 2500 * US), LAUNCH(20, 250 * US),
		 COPY(1, 20 * US, K256), SYNC(6930 * US, 0, 5)},
	.extra = {HOST(300 * US), OFF(PH_PREEMPT, 2500 * US), LAUNCH(20, 250 * US),
		  COPY(1, 20 * US, K256), SYNC(46930 * US, 40 * MS, 0)},
	.period = 250 * MS, SNAP(98, 40, 9.5, 40000, 0), .cause = "cpu_contention",
	.culprit = SYNTH_STRESS, .culprit_comm = "stress-ng"},
    [SYNTH_GPU_BOUND] = {
	.base = {HOST(800 * US), LAUNCH(20, 250 * US), SYNC(30 * MS, 0, 10)},
	.extra = {HOST(800 * US), LAUNCH(20, 250 * US), SYNC(150 * MS, 0, 0)},
	.period = SEC, IDLE, .cause = "gpu_bound", .healthy = 1},
    [SYNTH_LOADER_WAIT] = {
	.base = {OFF(PH_TASK, 10 * MS), HOST(300 * US), LAUNCH(20, 200 * US),
		 COPY(1, 200 * US, M1), SYNC(9300 * US, 0, 5)},
	.workers = 1, SNAP(99, 40, 5.2, 40000, 0), .cause = "loader_wait",
	.culprit = SYNTH_WORKER0, .culprit_comm = "pt_data_worker"},
    [SYNTH_SYNC_STORM] = {
	.base = {HOST(20 * US), LAUNCH(5, 140 * US), D2H(40 * US, 4, 10)},
	IDLE, .cause = "sync_storm", .culprit = SYNTH_PID, .culprit_comm = "python3"},
    [SYNTH_COPY_DOMINATED] = {
	.base = {HOST(300 * US), COPY(4, 10 * MS, 8 * M1), LAUNCH(10, 120 * US),
		 SYNC(1000 * US, 0, 5)},
	IDLE, .cause = "copy_dominated"},
    [SYNTH_ALLOC_SPIKES] = {
	.base = {HOST(300 * US), LAUNCH(20, 200 * US), MALLOC(20 * US, 0, M1),
		 SYNC(9480 * US, 0, 5)},
	.extra = {HOST(300 * US), LAUNCH(20, 200 * US), MALLOC(100 * MS, 30 * MS, 256 * M1),
		  SYNC(9480 * US, 0, 0)},
	.period = 500 * MS, IDLE, .cause = "alloc_spikes"},
    [SYNTH_MEMORY_PRESSURE] = {
	.base = {HOST(300 * US), LAUNCH(20, 200 * US), COPY(1, 20 * US, K256),
		 OFF(PH_RECLAIM, 5400 * US), SYNC(9480 * US, 0, 5)},
	.page_mib = 30, SNAP(60, 97, 3.0, 900, 2048), .cause = "memory_pressure",
	.culprit = SYNTH_PID, .culprit_comm = "python3"},
    [SYNTH_BLOCK_IO] = {
	.base = {HOST(300 * US), LAUNCH(20, 200 * US), COPY(1, 20 * US, K256),
		 SYNC(5380 * US, 0, 5), HOST(100 * US), OFF(PH_IO, 4 * MS)},
	IDLE, .cause = "block_io", .culprit = SYNTH_PID, .culprit_comm = "python3"},
    [SYNTH_COLD_START] = {.base = {HEALTHY_STEP}, .cold = 1, IDLE, .cause = "cold_start",
			  .healthy = 1},
    [SYNTH_NO_SPLIT] = {
	.base = {HOST(300 * US), LAUNCH(20, 200 * US), COPY(1, 20 * US, K256),
		 OFF(PH_OFF, 3 * MS), SYNC(6480 * US, 0, 5)},
	.no_split = 1, SNAP(98, 40, 9.5, 40000, 0), .cause = "offcpu_wait"},
    [SYNTH_HOST_WORK] = {
	.base = {HOST(4 * MS), LAUNCH(20, 200 * US), COPY(1, 20 * US, K256),
		 SYNC(5780 * US, 0, 5)},
	IDLE, .cause = "host_work", .culprit = SYNTH_PID, .culprit_comm = "python3"},
    [SYNTH_TIMER_SLEEP] = {
	.base = {HOST(300 * US), LAUNCH(20, 200 * US), SYNC(7 * MS, 0, 5),
		 OFF(PH_TIMER, 2500 * US)},
	IDLE, .cause = "timer_sleep", .culprit = SYNTH_PID, .culprit_comm = "python3"},
    [SYNTH_LAUNCH_BOUND] = {
	.base = {HOST(200 * US), LAUNCH(100, 2400 * US), SYNC(2400 * US, 0, 5)},
	IDLE, .cause = "launch_bound", .culprit = SYNTH_PID, .culprit_comm = "python3"},
    [SYNTH_HEALTHY_FAST] = {
	.base = {HOST(30 * US), LAUNCH(4, 40 * US), SYNC2(930 * US, 5)},
	IDLE, .cause = "gpu_bound", .healthy = 1},
    [SYNTH_MIXED] = {
	.base = {OFF(PH_TASK, 5 * MS), OFF(PH_PREEMPT, 2400 * US), HOST(300 * US),
		 LAUNCH(20, 200 * US), COPY(1, 200 * US, M1), SYNC(11900 * US, 0, 5)},
	.workers = 1, SNAP(99, 40, 6.0, 40000, 0), .cause = "loader_wait",
	.culprit = SYNTH_WORKER0, .culprit_comm = "pt_data_worker",
	.cause2 = "cpu_contention"},
    [SYNTH_NCCL_STRAGGLER] = {
	.base = {HOST(300 * US), LAUNCH(20, 200 * US), NCCL(10 * US, 4 * M1), SYNC(9490 * US, 0, 0)},
	.peer_host = 8 * MS, IDLE, .cause = "nccl_straggler", .culprit = SYNTH_PEER,
	.culprit_comm = "python3"},
    [SYNTH_LOCK_WAIT] = {
	.base = {HOST(300 * US), OFF(PH_LOCK, 3 * MS), LAUNCH(20, 200 * US),
		 SYNC(6480 * US, 0, 5)},
	IDLE, .cause = "lock_wait", .culprit = SYNTH_PID, .culprit_tid = SYNTH_HOLDER,
	.culprit_comm = "holder"},
    [SYNTH_GIL_WAIT] = {
	.base = {HOST(300 * US), OFF(PH_GIL, 12 * MS), LAUNCH(20, 200 * US),
		 SYNC(17480 * US, 0, 5)},
	IDLE, .cause = "gil_wait", .culprit = SYNTH_PID, .culprit_tid = SYNTH_PYBUSY,
	.culprit_comm = "pybusy"},
    [SYNTH_BACKPRESSURE] = {
	.base = {HOST(300 * US), LAUNCH(20, 200 * US), SYNC(6480 * US, 0, 5),
		 OFF(PH_FULL, 3 * MS)},
	IDLE, .cause = "backpressure", .culprit = SYNTH_CONSUMER, .culprit_comm = "consumer"},
    [SYNTH_NET_WAIT] = {
	.base = {OFF(PH_NET, 3 * MS), HOST(300 * US), LAUNCH(20, 200 * US),
		 SYNC(6480 * US, 0, 5)},
	IDLE, .cause = "net_wait"},
    [SYNTH_CPU_QUOTA] = {
	.base = {HOST(300 * US), OFF(PH_THROTTLE, 3500 * US), LAUNCH(20, 200 * US),
		 SYNC(5980 * US, 0, 5)},
	SNAP(45, 40, 1.5, 40000, 0), .quota_pct = 50, .cause = "cpu_quota"},
    [SYNTH_FILE_IO] = {
	.base = {HOST(300 * US), LAUNCH(20, 200 * US), SYNC(5480 * US, 0, 5),
		 OFF(PH_FILE, 4 * MS)},
	IDLE, .cause = "file_io", .culprit = SYNTH_PID, .culprit_comm = "python3"},
    [SYNTH_COLD_READ] = {
	.base = {OFF(PH_COLD, 3 * MS), HOST(300 * US), LAUNCH(20, 200 * US),
		 SYNC(6480 * US, 0, 5)},
	IDLE, .cause = "cold_read", .culprit = SYNTH_PID, .culprit_comm = "python3"},
    [SYNTH_PAGE_FAULTS] = {
	.base = {HOST(300 * US), OFF(PH_FRESH, 3 * MS), LAUNCH(20, 200 * US),
		 SYNC(6480 * US, 0, 5)},
	IDLE, .cause = "page_faults", .culprit = SYNTH_PID, .culprit_comm = "python3"},
    [SYNTH_STOPPED] = {
	.base = {HOST(300 * US), OFF(PH_STOP, 3 * MS), LAUNCH(20, 200 * US),
		 SYNC(6480 * US, 0, 5)},
	IDLE, .cause = "stopped", .culprit = SYNTH_LIMITER, .culprit_comm = "cpulimit"},
    [SYNTH_LAUNCH_BLOCKING] = {
	.base = {HOST(3500 * US), LAUNCH(20, 6 * MS), SYNC(30 * US, 0, 5)},
	IDLE, .env = IG_ENV_LAUNCH_BLOCKING, .cause = "launch_blocking", .culprit = SYNTH_PID,
	.culprit_comm = "python3"},
    [SYNTH_POLL_WAIT] = {
	.base = {HOST(300 * US), OFF(PH_TIMER, 800 * US), HOST(20 * US), OFF(PH_TIMER, 800 * US),
		 HOST(20 * US), OFF(PH_TIMER, 800 * US), LAUNCH(20, 200 * US), SYNC(5060 * US, 0, 5)},
	IDLE, .cause = "poll_wait", .culprit = SYNTH_PID, .culprit_comm = "python3"},
    [SYNTH_BENCH] = {IDLE},
};
/* clang-format on */

/* --- the ground truth ------------------------------------------------------- */

struct sums {
	double part[IG_PART_MAX];
	double copy, acopy, syncs, malloc_ns;
};

/* The part of a phase of the kernel's evidence. */
static int ph_part(int kind)
{
	switch (kind) {
	case PH_LOCK:
		return IG_PART_LOCK_WAIT;
	case PH_GIL:
		return IG_PART_GIL_WAIT;
	case PH_FULL:
		return IG_PART_BACKPRESSURE;
	case PH_NET:
		return IG_PART_NET_WAIT;
	case PH_THROTTLE:
		return IG_PART_THROTTLED;
	case PH_FILE:
		return IG_PART_FILE_IO;
	case PH_COLD:
		return IG_PART_COLD_READ;
	case PH_FRESH:
		return IG_PART_FAULT;
	case PH_STOP:
		return IG_PART_STOPPED;
	default: /* PH_RECLAIM */
		return IG_PART_MEM_PRESSURE;
	}
}

/* Total time of a step program, its parts, copies and outer syncs. */
static double prog_sums(const struct phase *prog, struct sums *s)
{
	double total = 0;
	memset(s, 0, sizeof(*s));
	for (int k = 0; k < MAXPH && prog[k].kind; k++) {
		const struct phase *ph = &prog[k];
		double ns = (double)ph->ns, sub = (double)ph->sub;
		total += ns;
		switch (ph->kind) {
		case PH_HOST:
			s->part[IG_PART_HOST_CPU] += ns;
			break;
		case PH_LAUNCH:
		case PH_NCCL:
			s->part[IG_PART_API] += ns;
			break;
		case PH_COPY:
			s->part[IG_PART_API] += ns;
			s->copy += ns;
			s->acopy += ns;
			break;
		case PH_MALLOC:
			s->part[IG_PART_API] += ns - sub;
			s->part[IG_PART_GPU_WAIT] += sub;
			s->malloc_ns += ns;
			break;
		case PH_D2H:
			s->copy += ns;
			/* fall through */
		case PH_SYNC:
		case PH_SYNC_PAIR:
			s->part[IG_PART_CALL_PREEMPTED] += sub;
			s->part[IG_PART_GPU_WAIT] += ns - sub;
			s->syncs++;
			break;
		case PH_PREEMPT:
			s->part[IG_PART_PREEMPTED] += ns;
			break;
		case PH_TASK:
			s->part[IG_PART_TASK_WAIT] += ns;
			break;
		case PH_IO:
			s->part[IG_PART_IO_WAIT] += ns;
			break;
		case PH_TIMER:
			s->part[IG_PART_SLEEP] += ns;
			break;
		case PH_FAULT:
			s->part[IG_PART_FAULT] += ns;
			break;
		case PH_OFF:
			s->part[IG_PART_UNKNOWN] += ns;
			break;
		default: /* the mechanisms of the kernel's evidence: one part each */
			s->part[ph_part(ph->kind)] += ns;
			break;
		}
	}
	return total;
}

/* The impact of a class as the detector measures it, from the shares. */
static double impact_of(const char *cls, const struct synth_truth *t, double acopy, double spike)
{
	const double *p = t->part;
	if (!cls || !cls[0])
		return 0;
	if (!strcmp(cls, "cpu_contention"))
		return p[IG_PART_PREEMPTED] + p[IG_PART_CALL_PREEMPTED];
	if (!strcmp(cls, "loader_wait"))
		return p[IG_PART_TASK_WAIT];
	if (!strcmp(cls, "block_io"))
		return p[IG_PART_IO_WAIT];
	if (!strcmp(cls, "host_work"))
		return p[IG_PART_HOST_CPU];
	if (!strcmp(cls, "timer_sleep"))
		return p[IG_PART_SLEEP];
	if (!strcmp(cls, "offcpu_wait"))
		return p[IG_PART_UNKNOWN];
	if (!strcmp(cls, "memory_pressure"))
		return p[IG_PART_MEM_PRESSURE];
	static const struct {
		const char *cls;
		int part;
	} one[] = {{"lock_wait", IG_PART_LOCK_WAIT},	   {"gil_wait", IG_PART_GIL_WAIT},
		   {"backpressure", IG_PART_BACKPRESSURE}, {"net_wait", IG_PART_NET_WAIT},
		   {"cpu_quota", IG_PART_THROTTLED},	   {"file_io", IG_PART_FILE_IO},
		   {"cold_read", IG_PART_COLD_READ},	   {"page_faults", IG_PART_FAULT},
		   {"stopped", IG_PART_STOPPED},	   {"poll_wait", IG_PART_SLEEP}};
	for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++)
		if (!strcmp(cls, one[i].cls))
			return p[one[i].part];
	if (!strcmp(cls, "gpu_bound"))
		return p[IG_PART_GPU_WAIT];
	if (!strcmp(cls, "sync_storm") || !strcmp(cls, "launch_bound"))
		return p[IG_PART_API] - acopy; /* async copies are the copy rule's */
	if (!strcmp(cls, "launch_blocking"))   /* what overlap gives back */
		return fmin(p[IG_PART_API] - acopy, 1 - (p[IG_PART_API] - acopy));
	if (!strcmp(cls, "copy_dominated"))
		return t->copy;
	if (!strcmp(cls, "alloc_spikes"))
		return spike;
	return -1; /* cold start: a transient, not a share of the steady state */
}

int synth_truth(const struct synth_cfg *cfg, struct synth_truth *t)
{
	if (!cfg || cfg->scenario < 0 || cfg->scenario >= SYNTH_MAX || cfg->scenario == SYNTH_BENCH)
		return -EINVAL;
	const struct recipe *r = &synth_recipes[cfg->scenario];
	struct sums b, x;
	double tb = prog_sums(r->base, &b), te = prog_sums(r->extra, &x);
	/* per ns of wall time: base steps fill what the extra step leaves */
	double wb = 1.0 / tb, we = 0;
	if (r->period) {
		we = 1.0 / (double)r->period;
		wb = ((double)r->period - te) / tb / (double)r->period;
	}
	memset(t, 0, sizeof(*t));
	for (int k = 0; k < IG_PART_MAX; k++)
		t->part[k] = wb * b.part[k] + we * x.part[k];
	t->copy = wb * b.copy + we * x.copy;
	t->syncs_per_s = (wb * b.syncs + we * x.syncs) * 1e9;
	double acopy = wb * b.acopy + we * x.acopy;
	/* allocation outliers: their excess over the usual allocation */
	double spike = we * (x.malloc_ns - b.malloc_ns);
	t->cause = r->cause ? r->cause : "";
	t->cause2 = r->cause2 ? r->cause2 : "";
	t->impact = impact_of(t->cause, t, acopy, spike);
	if (r->peer_host) {
		/* the rank's sync beyond the peer's, over the step */
		double sync = 0;
		for (int k = 0; k < MAXPH && r->base[k].kind; k++)
			if (r->base[k].kind == PH_SYNC)
				sync += (double)r->base[k].ns;
		double peer_sync = tb - (double)(r->peer_host + PEER_LAUNCH + PEER_NCCL);
		t->impact = (sync - peer_sync) / tb;
	}
	t->impact2 = impact_of(t->cause2, t, acopy, spike);
	t->culprit_pid = r->culprit == SYNTH_PID && cfg->pid ? cfg->pid : r->culprit;
	t->culprit_comm = r->culprit_comm ? r->culprit_comm : "";
	t->culprit_tid = r->culprit_tid;
	t->settle_s = r->cold ? 2 : 0;
	t->unconfirmed = r->no_split;
	t->healthy = r->healthy;
	return 0;
}
