/* Synthetic event streams: a simulated training loop per scenario, one step
 * at a time from the scenario's recipe, each step's events sorted by
 * completion time (entry time for the Ingero-like scenario) before they are
 * handed out. The recipe's phase durations are exact: calls within a phase
 * vary but add up to the phase, and a jittered phase varies antithetically
 * over consecutive base steps, so the shares synth_truth() states hold over
 * any pair of steps. */
#include "synth.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/ops.h"

#define US 1000ull
#define MS 1000000ull
#define SEC 1000000000ull
#define BUF 1024
#define MAXPH 8
#define MAXCALLS 128
#define IO_DEV ((259u << 20) | 1u) /* nvme0n1p1 */

static const char *const names[SYNTH_MAX] = {
    "healthy",	      "cpu_contention", "gpu_bound",	   "loader_wait",  "sync_storm",
    "copy_dominated", "alloc_spikes",	"memory_pressure", "block_io",	   "cold_start",
    "no_split",	      "host_work",	"timer_sleep",	   "launch_bound", "healthy_fast",
    "mixed",	      "nccl_straggler", "bench",
};

/* --- recipes ----------------------------------------------------------------- */

enum ph_kind {
	PH_END = 0,
	PH_HOST,      /* on CPU between calls */
	PH_LAUNCH,    /* n cudaLaunchKernel back to back: API work */
	PH_COPY,      /* n cudaMemcpyAsync H2D of bytes each: API work */
	PH_MALLOC,    /* cudaMalloc of bytes: API work, sub of it asleep (GPU wait) */
	PH_SYNC,      /* cudaStreamSynchronize: GPU wait, sub of it preempted by stress-ng */
	PH_SYNC_PAIR, /* the same with the cuStreamSynchronize it makes inside */
	PH_D2H,	      /* cudaMemcpy D2H of bytes with its cuMemcpyDtoH_v2 inside: GPU wait */
	PH_PREEMPT,   /* runnable between calls, preempted by stress-ng */
	PH_TASK,      /* asleep until a data-loader worker woke it */
	PH_IO,	      /* asleep in D state (fdatasync), with its block request */
	PH_TIMER,     /* asleep until a timer (sleep, poll timeout) */
	PH_FAULT,     /* asleep in a page fault */
	PH_OFF,	      /* off CPU, state not recorded (Ingero) */
	PH_NCCL,      /* an ncclAllReduce of bytes (float32, rank 0 of 2): API work */
};

struct phase {
	uint8_t kind;
	uint8_t jit;	/* % of ns, antithetic over consecutive base steps */
	uint16_t n;	/* calls in the phase (launches, copies); 0 = 1 */
	uint32_t bytes; /* per copy or allocation */
	uint64_t ns;	/* the phase's time, all its calls together */
	uint64_t sub;	/* sync: preempted part; malloc: asleep part */
};

struct recipe {
	struct phase base[MAXPH];  /* one step */
	struct phase extra[MAXPH]; /* replaces a base step once per period */
	uint64_t period;	   /* 0: no extra step */
	uint8_t no_split;	   /* Ingero-like: no off-CPU split, entry order */
	uint8_t workers;	   /* data-loader worker processes exist */
	uint8_t cold;		   /* the first launches are slow */
	uint32_t page_mib;	   /* page allocations per 100 ms, MiB */
	double cpu, mem, load;	   /* host snapshot */
	uint64_t avail_mb, swap_mb;
	uint64_t peer_host; /* an NCCL peer rank (SYNTH_PEER) that works this long on
			     * the CPU before its AllReduce, every step */
	const char *cause, *cause2;
	uint32_t culprit;
	const char *culprit_comm;
	uint8_t healthy;
};

/* clang-format off */
#define HOST(t) {.kind = PH_HOST, .ns = (t)}
#define LAUNCH(n_, t) {.kind = PH_LAUNCH, .n = (n_), .ns = (t)}
#define COPY(n_, t, b) {.kind = PH_COPY, .n = (n_), .ns = (t), .bytes = (b)}
#define MALLOC(t, blk, b) {.kind = PH_MALLOC, .ns = (t), .sub = (blk), .bytes = (b)}
#define SYNC(t, pre, j) {.kind = PH_SYNC, .ns = (t), .sub = (pre), .jit = (j)}
#define SYNC2(t, j) {.kind = PH_SYNC_PAIR, .ns = (t), .jit = (j)}
#define D2H(t, b, j) {.kind = PH_D2H, .ns = (t), .bytes = (b), .jit = (j)}
#define OFF(k, t) {.kind = (k), .ns = (t)}
#define NCCL(t, b) {.kind = PH_NCCL, .ns = (t), .bytes = (b)}
#define SNAP(c, m, l, a, s) .cpu = (c), .mem = (m), .load = (l), .avail_mb = (a), .swap_mb = (s)
#define IDLE SNAP(35, 40, 2.1, 40000, 0)
#define K256 (256u << 10)
#define M1 (1u << 20)

/* The healthy loop every other recipe departs from: 10 ms per step, 20
 * launches, a small copy and one sync that waits for the GPU's work. */
#define HEALTHY_STEP HOST(300 * US), LAUNCH(20, 200 * US), COPY(1, 20 * US, K256), \
	SYNC(9480 * US, 0, 5)

static const struct recipe recipes[SYNTH_MAX] = {
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
		 OFF(PH_FAULT, 5400 * US), SYNC(9480 * US, 0, 5)},
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
    [SYNTH_BENCH] = {IDLE},
};
/* The peer's step: its host work, then these, then a sync to the step's end. */
#define PEER_LAUNCH (200 * US)
#define PEER_NCCL (10 * US)
/* clang-format on */

/* The data-loader worker that delivers each batch, in turn: the first one
 * twice as often (the slow one the chain must name). */
static const uint32_t wake_order[] = {0, 1, 0, 2, 3};

/* --- the ground truth ------------------------------------------------------- */

struct sums {
	double part[IG_PART_MAX];
	double copy, acopy, syncs, malloc_ns;
};

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
		return p[IG_PART_FAULT];
	if (!strcmp(cls, "gpu_bound"))
		return p[IG_PART_GPU_WAIT];
	if (!strcmp(cls, "sync_storm") || !strcmp(cls, "launch_bound"))
		return p[IG_PART_API] - acopy; /* async copies are the copy rule's */
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
	const struct recipe *r = &recipes[cfg->scenario];
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
	t->settle_s = r->cold ? 2 : 0;
	t->unconfirmed = r->no_split;
	t->healthy = r->healthy;
	return 0;
}

/* --- the generator ------------------------------------------------------------ */

struct synth {
	struct synth_cfg cfg;
	const struct recipe *r;
	uint64_t rng;
	uint64_t t, end_ns;
	uint64_t next_snap, next_page, next_extra;
	unsigned steps, base_steps, wake_i;
	int64_t jd[MAXPH]; /* jitter of the last even base step, per phase */
	struct ig_event buf[BUF];
	uint32_t seq[BUF];
	int n, i;
	int done;
};

const char *synth_name(int sc)
{
	return sc >= 0 && sc < SYNTH_MAX ? names[sc] : "?";
}

int synth_by_name(const char *name)
{
	for (int i = 0; i < SYNTH_MAX; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

static uint64_t rnd(struct synth *s)
{
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545f4914f6cdd1dull;
}

static double urand(struct synth *s)
{
	return (double)(rnd(s) >> 11) / 9007199254740992.0;
}

/* uniform in [lo, hi] */
static uint64_t uni(struct synth *s, uint64_t lo, uint64_t hi)
{
	return lo + (uint64_t)(urand(s) * (double)(hi - lo));
}

/* median * exp(sigma * N(0,1)) */
static uint64_t lognorm(struct synth *s, double median, double sigma)
{
	double u1 = urand(s) + 1e-12, u2 = urand(s);
	double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
	return (uint64_t)(median * exp(sigma * z));
}

static void set_comm(char *dst, const char *src)
{
	memset(dst, 0, IG_COMM_LEN);
	strncpy(dst, src, IG_COMM_LEN - 1);
}

static struct ig_event *push(struct synth *s, int kind, uint64_t ts, uint64_t dur)
{
	if (s->n >= BUF)
		return NULL;
	struct ig_event *e = &s->buf[s->n];
	memset(e, 0, sizeof(*e));
	e->kind = (uint16_t)kind;
	e->ts_ns = ts;
	e->dur_ns = dur;
	e->pid = s->cfg.pid;
	e->tid = s->cfg.pid;
	set_comm(e->comm, "python3");
	s->seq[s->n] = (uint32_t)s->n;
	s->n++;
	return e;
}

static int is_worker(uint32_t pid)
{
	return pid >= SYNTH_WORKER0 && pid < SYNTH_WORKER0 + SYNTH_NWORKERS;
}

/* An off-CPU interval; an Ingero-like stream records neither its state nor
 * why it ended, nor whether it was inside a call. */
static void offcpu(struct synth *s, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t dur,
		   int state, uint32_t flags, uint32_t other, const char *other_comm)
{
	struct ig_event *e = push(s, IG_EV_OFFCPU, ts, dur);
	if (!e)
		return;
	e->pid = pid;
	e->tid = tid;
	e->cpu = tid % 4;
	if (is_worker(pid))
		set_comm(e->comm, "pt_data_worker");
	if (s->r->no_split)
		return; /* IG_OFF_UNKNOWN, no flags, no waker */
	e->state = (uint8_t)state;
	e->flags = flags;
	e->other_pid = other;
	if (other_comm)
		set_comm(e->other_comm, other_comm);
}

/* A call on the main thread with its preempted and blocked time. */
static struct ig_event *call(struct synth *s, int op, uint64_t ts, uint64_t dur, uint64_t pre,
			     uint64_t blk)
{
	struct ig_event *e = push(s, IG_EV_CALL, ts, dur);
	if (!e)
		return NULL;
	e->op = (uint16_t)op;
	e->stack_id = 0x1000 + (uint64_t)op;
	if (s->r->no_split) {
		e->flags = IG_F_NO_SPLIT;
		return e;
	}
	e->preempt_ns = pre;
	e->blocked_ns = blk;
	e->switches = (pre ? 1u : 0u) + (blk ? 1u : 0u);
	if (pre) {
		e->other_pid = SYNTH_STRESS;
		set_comm(e->other_comm, "stress-ng");
	}
	return e;
}

/* The off-CPU intervals inside a call whose inner part is [a, b): preempted
 * at its start, asleep at its end. */
static void in_call_off(struct synth *s, uint64_t a, uint64_t b, uint64_t pre, uint64_t blk)
{
	uint32_t pid = s->cfg.pid;
	if (pre)
		offcpu(s, pid, pid, a, pre, IG_OFF_PREEMPTED, IG_F_IN_CALL, SYNTH_STRESS,
		       "stress-ng");
	if (blk)
		offcpu(s, pid, pid, b - blk, blk, IG_OFF_BLOCKED, IG_F_IN_CALL, 0, NULL);
}

/* n calls of op back to back, of random lengths adding up to total. */
static void ph_calls(struct synth *s, int op, const struct phase *ph, uint64_t total)
{
	unsigned n = ph->n ? ph->n : 1;
	double w[MAXCALLS], sum = 0;
	if (n > MAXCALLS)
		n = MAXCALLS;
	for (unsigned i = 0; i < n; i++)
		sum += w[i] = 0.5 + urand(s);
	uint64_t left = total;
	for (unsigned i = 0; i < n; i++) {
		uint64_t d = i + 1 == n ? left : (uint64_t)((double)total * w[i] / sum);
		if (d > left)
			d = left;
		left -= d;
		struct ig_event *e = call(s, op, s->t, d, 0, 0);
		if (e && op == IG_OP_CUDA_LAUNCH_KERNEL) {
			e->arg0 = 0x7f0000401000ull + (i % 4) * 0x100;
		} else if (e) {
			e->arg0 = ph->bytes;
			e->arg1 = IG_DIR_H2D;
		}
		s->t += d;
	}
}

/* A synchronising call of d ns: GPU wait, ph->sub of it preempted; with the
 * driver call it makes inside for the pair kinds. */
static void ph_sync(struct synth *s, const struct phase *ph, uint64_t d)
{
	uint64_t t = s->t, pre = ph->sub;
	uint64_t room = d > pre + 8 * US ? d - pre - 8 * US : 0;
	uint64_t blk = room * 9 / 10;
	int outer = IG_OP_CUDA_STREAM_SYNC, inner = 0;
	if (ph->kind == PH_SYNC_PAIR)
		inner = IG_OP_CU_STREAM_SYNC;
	if (ph->kind == PH_D2H) {
		outer = IG_OP_CUDA_MEMCPY;
		inner = IG_OP_CU_MEMCPY_DTOH;
	}
	in_call_off(s, t + 2 * US, t + d - 2 * US, pre, blk);
	struct ig_event *e = call(s, outer, t, d, pre, blk);
	if (e && ph->kind == PH_D2H) {
		e->arg0 = ph->bytes;
		e->arg1 = IG_DIR_D2H;
	}
	if (inner && (e = call(s, inner, t + US, d - 2 * US, pre, blk)))
		e->arg0 = ph->bytes;
	s->t += d;
}

static void ph_malloc(struct synth *s, const struct phase *ph, uint64_t d)
{
	uint64_t blk = ph->sub < d ? ph->sub : 0;
	in_call_off(s, s->t + 2 * US, s->t + d - 2 * US, 0, blk);
	struct ig_event *e = call(s, IG_OP_CUDA_MALLOC, s->t, d, 0, blk);
	if (e)
		e->arg0 = ph->bytes;
	s->t += d;
}

/* The workers that produce the batch the feeder waits for, more of them
 * than free cores: they preempt each other meanwhile. */
static void workers_busy(struct synth *s, uint64_t t, uint64_t wait)
{
	for (uint32_t k = 0; k < SYNTH_NWORKERS; k++) {
		uint32_t me = SYNTH_WORKER0 + k, by = SYNTH_WORKER0 + (k + 1) % SYNTH_NWORKERS;
		offcpu(s, me, me, t + uni(s, 0, wait / 2), wait / 4, IG_OFF_PREEMPTED, 0, by,
		       "pt_data_worker");
	}
}

/* Off CPU between calls for d ns, for the phase's reason. */
static void ph_off(struct synth *s, const struct phase *ph, uint64_t d)
{
	uint32_t pid = s->cfg.pid, w;
	uint64_t t = s->t;
	struct ig_event *e;
	switch (ph->kind) {
	case PH_PREEMPT:
		offcpu(s, pid, pid, t, d, IG_OFF_PREEMPTED, 0, SYNTH_STRESS, "stress-ng");
		break;
	case PH_TASK:
		w = SYNTH_WORKER0 +
		    wake_order[s->wake_i++ % (sizeof(wake_order) / sizeof(wake_order[0]))];
		offcpu(s, pid, pid, t, d, IG_OFF_BLOCKED, 0, w, "pt_data_worker");
		workers_busy(s, t, d);
		break;
	case PH_IO: /* fdatasync: the write goes to the disk meanwhile */
		offcpu(s, pid, pid, t, d, IG_OFF_BLOCKED, IG_F_DSTATE, 0, NULL);
		e = push(s, IG_EV_BLOCK_IO, t + 20 * US, d > 60 * US ? d - 60 * US : d / 2);
		if (e) {
			e->op = IG_IO_WRITE;
			e->arg0 = M1;
			e->arg1 = IO_DEV;
		}
		break;
	case PH_TIMER:
		offcpu(s, pid, pid, t, d, IG_OFF_BLOCKED, IG_F_TIMER, 0, NULL);
		break;
	case PH_FAULT:
		offcpu(s, pid, pid, t, d, IG_OFF_BLOCKED, IG_F_FAULT, 0, NULL);
		break;
	default: /* PH_OFF */
		offcpu(s, pid, pid, t, d, IG_OFF_UNKNOWN, 0, 0, NULL);
		break;
	}
	s->t += d;
}

/* A float32 AllReduce of 4 MiB on stream 0x1000 by rank of 2. */
static void nccl_args(struct ig_event *e, unsigned rank)
{
	e->arg0 = 4 * M1;
	e->arg1 = IG_NCCL_ARG1(7, 0, IG_NCCL_NONE32);
	e->arg2 = IG_NCCL_COMM(SYNTH_NCCL_KEY, rank, 2);
	e->stream = 0x1000;
}

static struct ig_event *peer_call(struct synth *s, int op, uint64_t t, uint64_t d)
{
	struct ig_event *e = push(s, IG_EV_CALL, t, d);
	if (e) {
		e->pid = e->tid = SYNTH_PEER;
		e->op = (uint16_t)op;
		e->stream = 0x1000;
	}
	return e;
}

/* The NCCL peer's step of d ns from t: host work, launches, its AllReduce,
 * and a sync that ends with the step (when the main rank's does: the
 * collective completes once both have enqueued it). */
static void peer_step(struct synth *s, uint64_t t, uint64_t d)
{
	t += s->r->peer_host;
	for (int i = 0; i < 20; i++, t += PEER_LAUNCH / 20)
		peer_call(s, IG_OP_CUDA_LAUNCH_KERNEL, t, PEER_LAUNCH / 20);
	struct ig_event *e = peer_call(s, IG_OP_NCCL_ALL_REDUCE, t, PEER_NCCL);
	if (e)
		nccl_args(e, 1);
	t += PEER_NCCL;
	uint64_t end = s->t + d > t ? s->t + d : t, blk = (end - t) * 9 / 10;
	if ((e = peer_call(s, IG_OP_CUDA_STREAM_SYNC, t, end - t)))
		e->blocked_ns = blk, e->switches = 1;
	offcpu(s, SYNTH_PEER, SYNTH_PEER, t + (end - t) / 20, blk, IG_OFF_BLOCKED, IG_F_IN_CALL, 0,
	       NULL);
}

/* One step of a program; base steps jitter antithetically, extras not. */
static void run_step(struct synth *s, const struct phase *prog, int base)
{
	if (s->r->peer_host) {
		uint64_t d = 0;
		for (int k = 0; k < MAXPH && prog[k].kind; k++)
			d += prog[k].ns;
		peer_step(s, s->t, d);
	}
	for (int k = 0; k < MAXPH && prog[k].kind; k++) {
		const struct phase *ph = &prog[k];
		uint64_t d = ph->ns;
		if (base && ph->jit) {
			if (!(s->base_steps & 1))
				s->jd[k] = (int64_t)((double)ph->ns * ph->jit / 100.0 *
						     (2 * urand(s) - 1));
			d = (uint64_t)((int64_t)ph->ns +
				       ((s->base_steps & 1) ? -s->jd[k] : s->jd[k]));
		}
		switch (ph->kind) {
		case PH_HOST:
			s->t += d;
			break;
		case PH_LAUNCH:
			ph_calls(s, IG_OP_CUDA_LAUNCH_KERNEL, ph, d);
			break;
		case PH_COPY:
			ph_calls(s, IG_OP_CUDA_MEMCPY_ASYNC, ph, d);
			break;
		case PH_NCCL: {
			struct ig_event *e = call(s, IG_OP_NCCL_ALL_REDUCE, s->t, d, 0, 0);
			if (e)
				nccl_args(e, 0);
			s->t += d;
			break;
		}
		case PH_MALLOC:
			ph_malloc(s, ph, d);
			break;
		case PH_SYNC:
		case PH_SYNC_PAIR:
		case PH_D2H:
			ph_sync(s, ph, d);
			break;
		default:
			ph_off(s, ph, d);
			break;
		}
	}
	if (base)
		s->base_steps++;
}

/* The first launches of a process: context creation, module loading. */
static void cold_launches(struct synth *s)
{
	for (int i = 0; i < 5; i++) {
		uint64_t d = (uint64_t)(100 + 50 * i) * MS;
		struct ig_event *e = call(s, IG_OP_CUDA_LAUNCH_KERNEL, s->t, d, 0, 0);
		if (e)
			e->arg0 = 0x7f0000401000ull;
		s->t += d;
	}
}

static void snapshot(struct synth *s, uint64_t ts)
{
	const struct recipe *r = s->r;
	struct ig_event *e = push(s, IG_EV_SNAPSHOT, ts, 0);
	if (!e)
		return;
	uint32_t pid = e->pid;
	ig_snapshot_fill(e, ts, r->cpu, r->mem, r->avail_mb, r->swap_mb, r->load);
	e->pid = pid;
	e->tid = pid;
}

static void periodic(struct synth *s, uint64_t to)
{
	while (s->next_snap < to) {
		snapshot(s, s->next_snap);
		s->next_snap += SEC;
	}
	while (s->r->page_mib && s->next_page < to) {
		struct ig_event *e = push(s, IG_EV_PAGE_ALLOC, s->next_page, 0);
		if (e)
			e->arg0 = (uint64_t)s->r->page_mib << 20;
		s->next_page += 100 * MS;
	}
}

/* 8 processes x 4 threads taking turns, every kind of event. */
static void step_bench(struct synth *s)
{
	uint32_t k = s->steps % 32, pid = 5000 + (k / 4) * 100, tid = pid + k % 4;
	uint64_t t = s->t;
	for (int i = 0; i < 4; i++) {
		struct ig_event *e = push(s, IG_EV_CALL, t, uni(s, 5 * US, 15 * US));
		if (!e)
			return;
		e->pid = pid;
		e->tid = tid;
		e->op = IG_OP_CUDA_LAUNCH_KERNEL;
		e->preempt_ns = (rnd(s) & 63) ? 0 : 3 * US;
		e->other_pid = e->preempt_ns ? SYNTH_STRESS : 0;
		t += e->dur_ns + 2 * US;
	}
	struct ig_event *e = push(s, IG_EV_CALL, t, uni(s, 10 * US, 30 * US));
	if (!e)
		return;
	e->pid = pid;
	e->tid = tid;
	e->op = (uint16_t)((s->steps & 1) ? IG_OP_CUDA_MEMCPY_ASYNC : IG_OP_CU_LAUNCH_KERNEL);
	e->arg0 = 65536;
	e->arg1 = IG_DIR_H2D;
	t += e->dur_ns + 2 * US;
	uint64_t d = lognorm(s, 100.0 * US, 0.3);
	e = push(s, IG_EV_CALL, t, d);
	if (!e)
		return;
	e->pid = pid;
	e->tid = tid;
	e->op = IG_OP_CUDA_STREAM_SYNC;
	e->blocked_ns = d * 9 / 10;
	e->switches = 1;
	offcpu(s, pid, tid, t + d / 10, d * 9 / 10, IG_OFF_BLOCKED, IG_F_IN_CALL, 0, NULL);
	t += d + 2 * US;
	/* between calls: preempted, then now and then each kind of sleep */
	static const uint32_t why[4] = {0, IG_F_DSTATE, IG_F_TIMER, IG_F_FAULT};
	uint64_t gap = uni(s, 10 * US, 50 * US);
	if ((s->steps & 7) == 0)
		offcpu(s, pid, tid, t, gap, IG_OFF_PREEMPTED, 0, SYNTH_STRESS, "stress-ng");
	else if ((s->steps & 7) == 4)
		offcpu(s, pid, tid, t, gap, IG_OFF_BLOCKED, why[(s->steps >> 3) & 3],
		       (s->steps >> 3) & 3 ? 0 : pid + 50, "bench-producer");
	if ((s->steps & 63) == 0) {
		e = push(s, IG_EV_PAGE_ALLOC, t, 0);
		if (e) {
			e->pid = pid;
			e->arg0 = 1 << 20;
		}
		e = push(s, IG_EV_BLOCK_IO, t, uni(s, 100 * US, 2 * MS));
		if (e) {
			e->pid = pid;
			e->op = IG_IO_READ;
			e->arg0 = 131072;
		}
	}
	s->t = t + 20 * US;
}

static void step(struct synth *s)
{
	const struct recipe *r = s->r;
	if (s->cfg.scenario == SYNTH_BENCH) {
		step_bench(s);
		return;
	}
	if (!s->steps && r->cold)
		cold_launches(s);
	if (r->period && s->t >= s->next_extra) {
		run_step(s, r->extra, 0);
		s->next_extra += r->period;
	} else {
		run_step(s, r->base, 1);
	}
}

static uint64_t end_of(const struct ig_event *e)
{
	int dur = e->kind == IG_EV_CALL || e->kind == IG_EV_OFFCPU || e->kind == IG_EV_BLOCK_IO;
	return e->ts_ns + (dur ? e->dur_ns : 0);
}

static void sort_buf(struct synth *s)
{
	int entry = s->r->no_split;
	/* insertion sort on (key, seq): small batches, nearly sorted */
	for (int i = 1; i < s->n; i++) {
		struct ig_event e = s->buf[i];
		uint32_t q = s->seq[i];
		uint64_t k = entry ? e.ts_ns : end_of(&e);
		int j = i;
		while (j > 0) {
			uint64_t kj = entry ? s->buf[j - 1].ts_ns : end_of(&s->buf[j - 1]);
			if (kj < k || (kj == k && s->seq[j - 1] < q))
				break;
			s->buf[j] = s->buf[j - 1];
			s->seq[j] = s->seq[j - 1];
			j--;
		}
		s->buf[j] = e;
		s->seq[j] = q;
	}
}

static void start(struct synth *s)
{
	struct ig_event *e = push(s, IG_EV_COMM, s->t, 0);
	(void)e;
	if (s->r->workers)
		for (uint32_t k = 0; k < SYNTH_NWORKERS; k++) {
			e = push(s, IG_EV_FORK, s->t, 0);
			if (e)
				e->arg0 = SYNTH_WORKER0 + k;
			e = push(s, IG_EV_COMM, s->t, 0);
			if (e) {
				e->pid = e->tid = SYNTH_WORKER0 + k;
				set_comm(e->comm, "pt_data_worker");
			}
		}
	if (s->r->peer_host) {
		e = push(s, IG_EV_COMM, s->t, 0);
		if (e)
			e->pid = e->tid = SYNTH_PEER;
	}
	if (s->cfg.scenario == SYNTH_BENCH)
		for (uint32_t k = 0; k < 8; k++) {
			e = push(s, IG_EV_COMM, s->t, 0);
			if (e) {
				e->pid = e->tid = 5000 + k * 100;
				set_comm(e->comm, k & 1 ? "python3" : "vllm-worker");
			}
		}
}

static void refill(struct synth *s)
{
	s->n = s->i = 0;
	while (!s->n) {
		if (s->t >= s->end_ns) {
			s->done = 1;
			return;
		}
		if (!s->steps)
			start(s);
		step(s);
		s->steps++;
		periodic(s, s->t);
	}
	sort_buf(s);
}

struct synth *synth_new(const struct synth_cfg *cfg)
{
	if (!cfg || cfg->scenario < 0 || cfg->scenario >= SYNTH_MAX)
		return NULL;
	struct synth *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->cfg = *cfg;
	s->r = &recipes[cfg->scenario];
	if (!s->cfg.start_ns)
		s->cfg.start_ns = 1767225600ull * SEC; /* 2026-01-01T00:00:00Z */
	if (s->cfg.seconds <= 0)
		s->cfg.seconds = 20;
	if (!s->cfg.pid)
		s->cfg.pid = SYNTH_PID;
	s->rng = (s->cfg.seed ? s->cfg.seed : 0x5eed) * 0x9e3779b97f4a7c15ull | 1;
	s->t = s->cfg.start_ns;
	s->end_ns = s->cfg.start_ns + (uint64_t)(s->cfg.seconds * 1e9);
	s->next_snap = s->cfg.start_ns + SEC / 2;
	s->next_page = s->cfg.start_ns + 10 * MS;
	s->next_extra =
	    s->cfg.start_ns; /* phase-locked to the seconds: each window holds as many */
	return s;
}

void synth_free(struct synth *s)
{
	free(s);
}

int synth_next(struct synth *s, struct ig_event *e)
{
	if (s->i >= s->n && !s->done)
		refill(s);
	if (s->done && s->i >= s->n)
		return 0;
	*e = s->buf[s->i++];
	return 1;
}

const struct synth_cfg *synth_config(const struct synth *s)
{
	return &s->cfg;
}

int synth_peek_ts(struct synth *s, uint64_t *ts)
{
	if (s->i >= s->n && !s->done)
		refill(s);
	if (s->done && s->i >= s->n)
		return -ENODATA;
	*ts = s->buf[s->i].ts_ns;
	return 0;
}
