/* Synthetic event streams: a simulated training loop per scenario, one step
 * at a time from the scenario's recipe, each step's events sorted by
 * completion time (entry time for the Ingero-like scenario) before they are
 * handed out. The recipe's phase durations are exact: calls within a phase
 * vary but add up to the phase, and a jittered phase varies antithetically
 * over consecutive base steps, so the shares synth_truth() states hold over
 * any pair of steps. */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/ops.h"
#include "core/waits.h"

#include "synth_int.h"

/* The data-loader worker that delivers each batch, in turn: the first one
 * twice as often (the slow one the chain must name). */
static const uint32_t wake_order[] = {0, 1, 0, 2, 3};

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
	return sc >= 0 && sc < SYNTH_MAX ? synth_names[sc] : "?";
}

int synth_by_name(const char *name)
{
	for (int i = 0; i < SYNTH_MAX; i++)
		if (!strcmp(name, synth_names[i]))
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

/* A blocked interval of the main thread with the kernel's evidence
 * (core/waits.h); waker tid and its process and name, 0: an interrupt. */
static void wait_ev(struct synth *s, uint64_t t, uint64_t d, uint32_t flags, int sys, int fdk,
		    int flt, int wfn, uint32_t waker, uint32_t waker_pid, const char *waker_comm,
		    uint64_t obj)
{
	uint32_t pid = s->cfg.pid;
	int n = s->n;
	offcpu(s, pid, pid, t, d, IG_OFF_BLOCKED, flags | IG_F_DETAIL, waker_pid,
	       waker_pid ? waker_comm : "[irq]");
	if (s->n == n)
		return;
	struct ig_event *e = &s->buf[n];
	e->arg1 = IG_WAIT_PACK(sys, fdk, flt, wfn) | (uint64_t)waker << 32;
	e->arg2 = obj;
}

/* Kernel CPU of the main thread (IG_EV_KTIME) in category k, counted at t. */
static void ktime(struct synth *s, uint64_t t, int k, uint64_t ns)
{
	struct ig_event *e = push(s, IG_EV_KTIME, t, 0);
	if (!e)
		return;
	struct ig_ktime kt = {.n = 1};
	kt.ns[k] = ns;
	kt.majors = k == IG_K_MAJ_FILE || k == IG_K_MAJ_ANON;
	ig_ktime_pack(e, t, s->cfg.pid, s->cfg.pid, &kt);
	set_comm(e->comm, "python3");
}

#define FUTEX_ADDR 0x7f00dead0040ull
#define GIL_ADDR 0x555500a5b7c0ull
#define FILE_OBJ ((uint64_t)IO_DEV << 32 | 0x62db5)
#define PEER_OBJ ((uint64_t)0x0a000005 << 16 | 5555) /* 10.0.0.5:5555 */

/* The mechanisms of the kernel's evidence (PH_LOCK...). */
static void ph_wait(struct synth *s, const struct phase *ph, uint64_t d)
{
	uint32_t pid = s->cfg.pid;
	uint64_t t = s->t, a;
	switch (ph->kind) {
	case PH_LOCK: /* a timed try that ran out, then the wait holder ended */
		a = d / 3;
		wait_ev(s, t, a, IG_F_TIMER, IG_SYS_FUTEX, 0, 0, IG_WFN_FUTEX, 0, 0, NULL,
			FUTEX_ADDR);
		wait_ev(s, t + a, d - a, 0, IG_SYS_FUTEX, 0, 0, IG_WFN_FUTEX, SYNTH_HOLDER, pid,
			"holder", FUTEX_ADDR + 4);
		break;
	case PH_GIL: /* asked for every 5 ms, given back by pybusy at last */
		for (a = 0; a + 5 * MS < d; a += 5 * MS)
			wait_ev(s, t + a, 5 * MS, IG_F_GIL | IG_F_TIMER, IG_SYS_FUTEX, 0, 0,
				IG_WFN_FUTEX, 0, 0, NULL, GIL_ADDR);
		wait_ev(s, t + a, d - a, IG_F_GIL, IG_SYS_FUTEX, 0, 0, IG_WFN_FUTEX, SYNTH_PYBUSY,
			pid, "pybusy", GIL_ADDR);
		break;
	case PH_FULL:
		wait_ev(s, t, d, 0, IG_SYS_WRITE, IG_FDK_FIFO, 0, IG_WFN_PIPE_WRITE, SYNTH_CONSUMER,
			SYNTH_CONSUMER, "consumer", 5);
		break;
	case PH_NET:
		wait_ev(s, t, d, 0, IG_SYS_RECV, IG_FDK_INET, 0, IG_WFN_SOCK_RECV, 0, 0, NULL,
			PEER_OBJ);
		break;
	case PH_THROTTLE:
		offcpu(s, pid, pid, t, d, IG_OFF_PREEMPTED, IG_F_THROTTLED, 0, NULL);
		break;
	case PH_FILE: /* the write's copy on the CPU, then fsync waits for the disk */
		a = d * 3 / 8;
		ktime(s, t + a, IG_K_FILE, a);
		wait_ev(s, t + a, d - a, IG_F_DSTATE, IG_SYS_FSYNC, IG_FDK_REG, 0, IG_WFN_WRITEBACK,
			0, 0, NULL, FILE_OBJ);
		break;
	case PH_COLD: /* asleep reading the page, then mapping it on the CPU */
		a = d * 4 / 5;
		wait_ev(s, t, a, IG_F_DSTATE | IG_F_FAULT, IG_SYS_NONE, 0, IG_FLT_FILE,
			IG_WFN_PAGE_IO, 0, 0, NULL, FILE_OBJ);
		ktime(s, t + d, IG_K_MAJ_FILE, d - a);
		break;
	case PH_FRESH:
		ktime(s, t + d, IG_K_MINOR, d);
		break;
	case PH_STOP: /* SIGSTOP in its sleep; cpulimit's SIGCONT let it go on */
		wait_ev(s, t, d, 0, IG_SYS_SLEEP, 0, 0, IG_WFN_STOP, SYNTH_LIMITER, SYNTH_LIMITER,
			"cpulimit", 0);
		break;
	default: /* PH_RECLAIM: asleep in reclaim (writeback), then reclaiming on the CPU */
		a = d * 7 / 10;
		wait_ev(s, t, a, IG_F_DSTATE | IG_F_FAULT | IG_F_RECLAIM, IG_SYS_NONE, 0,
			IG_FLT_ANON, IG_WFN_RECLAIM, 0, 0, NULL, 0x7f0012340000ull);
		ktime(s, t + d, IG_K_RECLAIM, d - a);
		break;
	}
	s->t += d;
}

/* Off CPU between calls for d ns, for the phase's reason. */
static void ph_off(struct synth *s, const struct phase *ph, uint64_t d)
{
	if (ph->kind >= PH_LOCK) {
		ph_wait(s, ph, d);
		return;
	}
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
	if (r->env && (e = push(s, IG_EV_ENV, ts, 0))) {
		e->arg0 = r->env;
		e->arg1 = IG_ENV_SRC_LIVE;
		e->arg2 = r->env;
	}
	if (!r->quota_pct || !(e = push(s, IG_EV_CGROUP, ts, 0)))
		return;
	/* the cgroup throttled in 7 of its 10 periods each second, 350 ms */
	e->arg0 = r->quota_pct * 1000ull;
	e->arg1 = 100000;
	e->arg2 = 350 * MS;
	e->stream = (uint64_t)7 << 32 | 10;
	e->flags = 1;
	e->container = "/sys/fs/cgroup/train.slice/job.scope";
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
	s->r = &synth_recipes[cfg->scenario];
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
