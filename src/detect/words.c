/* What a chain says: its summary (the cause and the culprit first, then the
 * numbers), explanation, evidence and recommendations, from the decision
 * rules.c took. Durations and sizes are spelt as everywhere (core/fmt.h). */
#include "detect/detect_int.h"

#include <stdio.h>
#include <string.h>

#include "core/fmt.h"
#include "core/ops.h"

/* snprintf without the compiler's truncation warnings: summaries are
 * deliberately cut at their buffer size. */
int detect_put(char *dst, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vsnprintf(dst, n, fmt, ap);
	va_end(ap);
	return r;
}

char *detect_who(char *b, size_t n, const char *comm, uint32_t pid)
{
	if (!pid)
		detect_put(b, n, "%s", comm && comm[0] ? comm : "?");
	else
		detect_put(b, n, "%s[%u]", comm && comm[0] ? comm : "?", pid);
	return b;
}

void detect_finding_init(struct finding *f, int cls, int sev, int op, const struct ig_proc_stats *p)
{
	memset(f, 0, sizeof(*f));
	f->c.cls = cls;
	f->c.severity = sev;
	f->c.op = op;
	f->c.pid = p ? p->pid : 0;
	if (p)
		memcpy(f->c.comm, p->comm, IG_COMM_LEN);
}

void detect_ev(struct finding *f, const char *key, double v, const char *unit)
{
	if (f->c.nevidence >= IG_CHAIN_MAX_EVIDENCE)
		return;
	struct ig_evidence *e = &f->c.ev[f->c.nevidence++];
	detect_put(e->key, sizeof(e->key), "%s", key);
	e->value = v;
	detect_put(e->unit, sizeof(e->unit), "%s", unit);
}

void detect_rec(struct finding *f, const char *fmt, ...)
{
	if (f->c.nrecs >= IG_CHAIN_MAX_RECS)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->c.recs[f->c.nrecs++], sizeof(f->c.recs[0]), fmt, ap);
	va_end(ap);
}

int detect_rec_cmd(struct finding *f, const char *cmd, const char *fmt, ...)
{
	char *r = f->c.recs[f->c.nrecs < IG_CHAIN_MAX_RECS ? f->c.nrecs : 0];
	size_t n = sizeof(f->c.recs[0]), k = strlen(cmd);
	if (k + 12 > n) /* a command that does not fit whole is no command */
		return -1;
	if (f->c.nrecs >= IG_CHAIN_MAX_RECS)
		return 0;
	va_list ap;
	va_start(ap, fmt);
	size_t t = (size_t)vsnprintf(r, n, fmt, ap);
	va_end(ap);
	if (t + 2 + k >= n) { /* cut the text, never the command */
		size_t keep = n - 1 - k - 5;
		memcpy(r + keep, "...", 4);
		t = keep + 3;
	}
	snprintf(r + t, n - t, ": %s", cmd);
	f->c.nrecs++;
	return 0;
}

void detect_step(struct finding *f, uint64_t ts, const char *fmt, ...)
{
	if (f->nsteps >= IG_CHAIN_MAX_TIMELINE)
		return;
	struct ig_tl_entry *t = &f->steps[f->nsteps++];
	t->ts_ns = ts;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->text, sizeof(t->text), fmt, ap);
	va_end(ap);
}

/* Adds the slowest calls of a series in the window as timeline steps. */
void detect_slow_steps(struct finding *f, const struct ig_win_series *ws, int op, uint64_t min_dur,
		       int max)
{
	const struct ig_call_rec *r = ws ? ws->slow : NULL;
	int n = ws ? (ws->nslow < max ? ws->nslow : max) : 0;
	for (int i = 0; i < n; i++) {
		if (r[i].dur_ns < min_dur)
			break;
		char d[24], pre[24], blk[24], w[40];
		fmt_ns(d, sizeof(d), r[i].dur_ns);
		if (r[i].flags & IG_F_NO_SPLIT)
			detect_step(f, r[i].ts_ns, "%s %s (tid %u), off-CPU split unknown",
				    ig_op_name(op), d, r[i].tid);
		else if (r[i].preempt_ns && r[i].other_pid)
			detect_step(f, r[i].ts_ns, "%s %s (tid %u): %s preempted by %s, %s blocked",
				    ig_op_name(op), d, r[i].tid,
				    fmt_ns(pre, sizeof(pre), r[i].preempt_ns),
				    detect_who(w, sizeof(w), r[i].other_comm, r[i].other_pid),
				    fmt_ns(blk, sizeof(blk), r[i].blocked_ns));
		else
			detect_step(f, r[i].ts_ns, "%s %s (tid %u): %s preempted, %s blocked",
				    ig_op_name(op), d, r[i].tid,
				    fmt_ns(pre, sizeof(pre), r[i].preempt_ns),
				    fmt_ns(blk, sizeof(blk), r[i].blocked_ns));
	}
}

/* --- shared pieces of the time classes ------------------------------------- */

/* "workload[4835]", or "workload[4835] tid 4838 (wl-worker-0)" when the
 * feeding thread is not the main thread and has a name of its own. */
const char *detect_feeder_name(const struct ctx *x, char *b, size_t n)
{
	char p[40];
	detect_who(p, sizeof(p), x->p->comm, x->p->pid);
	const struct ig_thread_stats *t = x->feeder;
	if (t && t->tid != x->p->pid && t->comm[0] && strncmp(t->comm, x->p->comm, IG_COMM_LEN))
		detect_put(b, n, "%s tid %u (%.*s)", p, t->tid, IG_COMM_LEN, t->comm);
	else if (t && t->tid != x->p->pid)
		detect_put(b, n, "%s tid %u", p, t->tid);
	else
		detect_put(b, n, "%s", p);
	return b;
}

/* The culprit as the summary names it. */
static const char *culprit_name(const struct ctx *x, const struct cause *c, char *b, size_t n)
{
	char w[40];
	detect_who(w, sizeof(w), c->culprit_comm, c->culprit_pid);
	if (c->culprit_pid && c->culprit_pid == x->cfg->self_pid && x->w->host.self_cpu_pct >= 0)
		detect_put(b, n, "%s (ingero-top itself: the tracer used %.0f%% of a CPU)", w,
			   x->w->host.self_cpu_pct);
	else if (c->culprit_pid && c->culprit_pid == x->cfg->self_pid)
		detect_put(b, n, "%s (ingero-top itself: the tracer)", w);
	else if (c->culprit_self && c->cls != IG_CC_BLOCK_IO && c->cls != IG_CC_HOST_WORK &&
		 c->cls != IG_CC_TIMER_SLEEP && c->cls != IG_CC_MEMORY_PRESSURE)
		detect_put(b, n, "%s's own threads", w);
	else
		detect_put(b, n, "%s", w);
	return b;
}

/* Every part of the feeders' time as evidence, then the denominator. */
static void parts_evidence(const struct ctx *x, struct finding *f)
{
	const struct ig_time_parts *P = x->parts;
	char key[24];
	detect_ev(f, "impact_pct", f->c.impact * 100, "%");
	for (int k = 0; k < IG_PART_MAX; k++) {
		if (!P->ns[k])
			continue;
		detect_put(key, sizeof(key), "%s_pct", ig_part_name(k));
		detect_ev(f, key, ig_part_share(P, k) * 100, "%");
	}
	detect_ev(f, "feeder_wall_ns", (double)P->wall_ns, "ns");
}

static void tail_words(const struct cause *c, char *b, size_t n)
{
	char p99[24], r[24];
	b[0] = 0;
	if (c->tail)
		detect_put(b, n, "; %s p99 %s (%s p50, %.0f%% of its tail preempted)",
			   ig_op_name(c->tail->op), fmt_ns(p99, sizeof(p99), c->tail->win.p99),
			   fmt_ratio(r, sizeof(r), c->tail->tail_ratio),
			   c->tail->tail_preempt_share * 100);
}

/* --- CPU contention and data-loader waits: a named other task ------------- */

static void detect_words_cpu(struct ctx *x, const struct cause *c, struct finding *f)
{
	char fn[64], cn[112], tw[128], pct[16], rt[40] = "";
	detect_feeder_name(x, fn, sizeof(fn));
	culprit_name(x, c, cn, sizeof(cn));
	tail_words(c, tw, sizeof(tw));
	fmt_pct(pct, sizeof(pct), c->impact);
	int is_rt = c->culprit_pid && IG_POLICY_RT(c->culprit_policy);
	if (is_rt)
		detect_put(rt, sizeof(rt), " (real-time: %s %d)",
			   IG_POLICY_OF(c->culprit_policy) == 1 ? "SCHED_FIFO" : "SCHED_RR",
			   IG_POLICY_RTPRIO(c->culprit_policy));
	/* the feeder's own priority lowered: nice above 0, or SCHED_IDLE */
	char low[32] = "";
	uint32_t own = x->p->feeder_sched;
	if (IG_POLICY_KNOWN(own) && IG_POLICY_OF(own) == 5)
		detect_put(low, sizeof(low), " (at SCHED_IDLE)");
	else if (IG_POLICY_KNOWN(own) && !IG_POLICY_RT(own) && IG_POLICY_NICE(own) > 0)
		detect_put(low, sizeof(low), " (at nice %d)", IG_POLICY_NICE(own));
	if (c->culprit_pid)
		detect_put(f->c.summary, sizeof(f->c.summary),
			   "CPU contention by %s%s: %s%s runnable but not running %s of its time%s",
			   cn, rt, fn, low, pct, tw);
	else
		detect_put(f->c.summary, sizeof(f->c.summary),
			   "CPU contention: %s runnable but not running %s of its time%s", fn, pct,
			   tw);
	detect_put(
	    f->c.explanation, sizeof(f->c.explanation),
	    "The thread that feeds the GPU was ready to run but had no core for %s of its wall "
	    "time (%.0f%% between CUDA calls, %.0f%% inside them)%s%s. Every such moment delays "
	    "the next launch, so the GPU waits for the host.",
	    pct, ig_part_share(x->parts, IG_PART_PREEMPTED) * 100,
	    ig_part_share(x->parts, IG_PART_CALL_PREEMPTED) * 100,
	    c->culprit_pid ? "; the task that held the CPU most was " : "",
	    c->culprit_pid ? cn : "");
	if (c->culprit_pid)
		detect_ev(f, "culprit_share_pct", c->culprit_share * 100, "%");
	if (low[0])
		detect_words_cpu_low(x, f, own);
	if (is_rt && !c->culprit_self) {
		detect_words_cpu_rt(x, c, f, cn);
	} else if (c->culprit_pid && !c->culprit_self && !detect_words_cpu_group(x, c, f, cn)) {
		/* every thread: renice -p and taskset -p without -a change one
		 * task (the pid's own), not the threads that do the work */
		char cmd[96];
		detect_put(cmd, sizeof(cmd), "renice 19 -p $(ls /proc/%u/task)", c->culprit_pid);
		detect_rec_cmd(f, cmd, "Lower the priority of %s, all its threads", cn);
		detect_put(cmd, sizeof(cmd), "chrt -a --idle -p 0 %u", c->culprit_pid);
		detect_rec_cmd(
		    f, cmd, "Or let it run only when a CPU is idle (SCHED_IDLE, all its threads)");
		detect_rec_pin(x, f, cn);
		detect_rec(
		    f,
		    "Or cap %s with a cgroup CPU quota, or give the job a dedicated cpuset; keep "
		    "a core free per GPU-feeding thread",
		    cn);
	} else if (!c->culprit_pid || c->culprit_self) {
		detect_rec(f,
			   "Give the feeding thread a core of its own: fewer worker threads than "
			   "cores (torch.set_num_threads, OMP_NUM_THREADS), or a dedicated cpuset");
		detect_rec(f, "Keep at least one core free per GPU-feeding thread: count the busy "
			      "threads on this host (ingero-top process pane) against the cores");
	}
	detect_words_cpu_confined(x, f); /* after the culprit's: its advice comes first */
	if (c->tail)
		detect_slow_steps(f, c->tail_ws, c->tail->op, c->tail->win.p99, 3);
}

/* --- the feeder's own time: disk, CPU work, sleeps, unknown ---------------- */

static void detect_words_self(struct ctx *x, const struct cause *c, struct finding *f)
{
	char fn[64], pct[16], dev[32] = "";
	detect_feeder_name(x, fn, sizeof(fn));
	fmt_pct(pct, sizeof(pct), c->impact);
	switch (c->cls) {
	case IG_CC_BLOCK_IO:
		if (x->p->io_dev)
			detect_put(dev, sizeof(dev), " (device %u:%u)", x->p->io_dev >> 20,
				   x->p->io_dev & 0xfffff);
		detect_put(f->c.summary, sizeof(f->c.summary),
			   "block I/O wait in %s: asleep on the disk %s of its time%s", fn, pct,
			   dev);
		detect_put(
		    f->c.explanation, sizeof(f->c.explanation),
		    "Between CUDA calls the feeding thread sleeps uninterruptibly (D state) for %s "
		    "of its wall time: it waits for the disk (writes it syncs, reads of files not "
		    "in the page cache). The GPU idles meanwhile.",
		    pct);
		if (x->p->io_dev)
			detect_ev(f, "io_dev", (double)x->p->io_dev, "");
		detect_rec(
		    f, "Move checkpoint and log writes off the training path: write asynchronously "
		       "from a separate process or thread, without fsync per step");
		detect_rec(
		    f, "Stage the dataset in RAM or on local NVMe before the run so reads do not "
		       "wait on the disk");
		break;
	case IG_CC_HOST_WORK:
		if (x->launch_sync) /* the impact is what queued launches leave */
			fmt_pct(pct, sizeof(pct), ig_part_share(x->parts, IG_PART_HOST_CPU));
		detect_put(f->c.summary, sizeof(f->c.summary),
			   "host work in %s: busy on the CPU %s of its time between CUDA calls%s",
			   fn, pct, c->unconfirmed ? " (off-CPU state not recorded)" : "");
		detect_put(
		    f->c.explanation, sizeof(f->c.explanation),
		    "The thread that feeds the GPU runs its own code between CUDA calls for %s of "
		    "its wall time (decoding, augmentation, Python, logging); the GPU has nothing "
		    "queued while it does.",
		    pct);
		double rate = x->feeder ? (double)x->feeder->sync_calls_win * 1e9 /
					      (double)(x->parts->wall_ns ? x->parts->wall_ns : 1)
					: 0;
		if (x->launch_sync) {
			detect_put(f->c.explanation + strlen(f->c.explanation),
				   sizeof(f->c.explanation) - strlen(f->c.explanation),
				   " Its launches wait for their kernels (synchronous launches): "
				   "once they are queued, the GPU's work hides part of this; the "
				   "impact is the rest.");
			detect_rec(f, "Make the launches asynchronous first (the synchronous "
				      "launches alert): this work then overlaps the GPU's");
		} else if (rate >= 5 && x->parts->ns[IG_PART_GPU_WAIT]) {
			detect_put(
			    f->c.explanation + strlen(f->c.explanation),
			    sizeof(f->c.explanation) - strlen(f->c.explanation),
			    " It synchronises %.0f times a second, so this work cannot overlap "
			    "the GPU's: each sync drains the queue before the host starts.",
			    rate);
			detect_rec(
			    f, "Let host work overlap GPU work: queue the next step before reading "
			       "results (no .item()/.cpu() per step; read every N steps)");
		}
		if (detect_words_server(x))
			detect_rec(
			    f,
			    "Batch more requests per engine step, so scheduling, sampling and "
			    "detokenising cost per batch, not per token; ask for fewer per-token "
			    "extras (logprobs); keep CUDA graphs on");
		else
			detect_rec(
			    f,
			    "Move the per-step CPU work off the feeding thread: a DataLoader with "
			    "num_workers > 0, or a producer thread with a queue");
		f->c.stack_id = x->p->host_stack; /* where it runs most: shown with the chain */
		if (f->c.stack_id) {
			detect_ev(f, "call_site_pct",
				  100.0 * (double)x->p->host_stack_ns /
				      (double)(x->p->host_sampled_ns ? x->p->host_sampled_ns : 1),
				  "%");
			detect_rec(f, "Where it runs most, from the stacks sampled 100 times a "
				      "second, is under \"call site\": the code to look at first");
		}
		detect_rec(
		    f,
		    "Profile the feeding thread's CPU time (py-spy, perf top -p %u) and queue "
		    "the next batch's work before waiting on the current one",
		    x->p->pid);
		break;
	default: /* IG_CC_OFFCPU_WAIT */
		detect_put(f->c.summary, sizeof(f->c.summary),
			   "off-CPU wait in %s: %s of its time off CPU between CUDA calls, why not "
			   "recorded",
			   fn, pct);
		detect_put(
		    f->c.explanation, sizeof(f->c.explanation),
		    "The feeding thread is off CPU between CUDA calls for %s of its wall time, "
		    "but the source did not record whether it was preempted or slept, nor who woke "
		    "it.",
		    pct);
		detect_rec(
		    f, "Re-record with ingero-top: it tells preempted from blocked time and names "
		       "the waker");
		break;
	}
}

static void detect_words_gpu(struct ctx *x, const struct cause *c, struct finding *f)
{
	char fn[64], pct[16];
	detect_feeder_name(x, fn, sizeof(fn));
	fmt_pct(pct, sizeof(pct), c->impact);
	if (x->host_causes) {
		/* other causes fired: the host does not keep up all the time */
		detect_put(
		    f->c.summary, sizeof(f->c.summary),
		    "GPU-bound: %s waits for the GPU %s of its time (the rest: %d other alert%s)",
		    fn, pct, x->host_causes, x->host_causes == 1 ? "" : "s");
		detect_put(
		    f->c.explanation, sizeof(f->c.explanation),
		    "The feeding thread spends %s of its wall time inside %s to finish. The rest "
		    "of its time goes to what the other alerts of this "
		    "process name, and through it the GPU waits for the host: those come first.",
		    pct,
		    x->launch_sync ? "its launches, each waiting for its kernel"
				   : "synchronising CUDA calls waiting for queued GPU work");
		detect_rec(
		    f,
		    "Fix the other alerts of this process first; then, to go faster, look at the "
		    "GPU work itself (Nsight Systems, then Nsight Compute on the longest kernels)");
		return;
	}
	if (x->paced > 0) {
		/* not "the host keeps up": it sleeps on its own timers */
		char sl[16];
		fmt_pct(sl, sizeof(sl), x->paced);
		detect_put(f->c.summary, sizeof(f->c.summary),
			   "GPU-bound: %s waits for the GPU %s of its time (and sleeps %s on its own "
			   "timers)",
			   fn, pct, sl);
		detect_put(f->c.explanation, sizeof(f->c.explanation),
			   "The feeding thread spends %s of its wall time inside synchronising CUDA "
			   "calls waiting for queued GPU work to finish, and %s asleep on its own "
			   "timers between calls (the paced-by-a-timer alert), while the GPU idles: "
			   "by design if the loop paces itself, not if it polls for its data with "
			   "sleeps.",
			   pct, sl);
		detect_rec(f, "If the loop should not sleep, find the sleep (the paced alert's "
			      "call site) and wait on what it polls instead (queue.get(), an "
			      "event): its wait then names who it waits for");
		return;
	}
	detect_put(f->c.summary, sizeof(f->c.summary),
		   "GPU-bound: %s waits for the GPU %s of its time (the host keeps up)", fn, pct);
	detect_put(f->c.explanation, sizeof(f->c.explanation),
		   "The feeding thread spends %s of its wall time inside synchronising CUDA calls "
		   "waiting for queued GPU work to finish. The host is not the limit: this is the "
		   "healthy state of a loop that keeps its GPU busy.",
		   pct);
	detect_rec(
	    f, "To go faster, look at the GPU work itself (Nsight Systems, then Nsight Compute on "
	       "the longest kernels)");
}

static void detect_words_launch(struct ctx *x, const struct cause *c, struct finding *f)
{
	char fn[64], pct[16];
	detect_feeder_name(x, fn, sizeof(fn));
	fmt_pct(pct, sizeof(pct), c->impact);
	detect_put(f->c.summary, sizeof(f->c.summary),
		   "launch overhead in %s: %s of its time in CUDA API work on the CPU", fn, pct);
	detect_put(
	    f->c.explanation, sizeof(f->c.explanation),
	    "The feeding thread spends %s of its wall time inside CUDA calls that do not wait "
	    "for the GPU (launches, allocations, async copies): the CPU side of the API is the "
	    "limit, typically many small kernels.",
	    pct);
	detect_rec(
	    f, "Launch fewer, larger kernels: CUDA graphs (torch.cuda.graphs, cudaGraphLaunch) or "
	       "torch.compile to fuse small operations");
}

/* GPU utilisation (NVML) of the devices the process uses over the window:
 * the mean percent, -1 without samples. dev: the device, or -1 for several. */
static double gpu_util(const struct ctx *x, int *dev)
{
	double sum = 0;
	int n = 0;
	*dev = -1;
	for (int i = 0; i < x->w->ngpus; i++) {
		const struct ig_gpu_stats *g = &x->w->gpus[i];
		if (g->util_gpu_win < 0 ||
		    (x->p->gpu_devs && !(x->p->gpu_devs & (1u << g->last.index))))
			continue;
		sum += g->util_gpu_win;
		*dev = n ? -1 : (int)g->last.index;
		n++;
	}
	return n ? sum / n : -1;
}

/* "GPU idle while the feeder waits": with NVML samples, how busy the GPU was
 * while the cause took the feeder's time. */
static void gpu_words(const struct ctx *x, const struct cause *c, struct finding *f)
{
	int dev;
	double u = gpu_util(x, &dev);
	if (u < 0)
		return;
	char which[24];
	if (dev >= 0)
		detect_put(which, sizeof(which), "GPU %d", dev);
	else
		detect_put(which, sizeof(which), "its GPUs");
	size_t l = strlen(f->c.explanation);
	if (c->cls == IG_CC_GPU_BOUND)
		detect_put(f->c.explanation + l, sizeof(f->c.explanation) - l,
			   " NVML: %s was busy %.0f%% of the window.", which, u);
	else
		detect_put(
		    f->c.explanation + l, sizeof(f->c.explanation) - l,
		    " NVML: %s was busy only %.0f%% of the window: it idles while the feeder "
		    "waits.",
		    which, u);
	detect_ev(f, "gpu_util_pct", u, "%");
}

void detect_words_time_cause(struct ctx *x, const struct cause *c, struct finding *f)
{
	switch (c->cls) {
	case IG_CC_CPU_CONTENTION:
		detect_words_cpu(x, c, f);
		break;
	case IG_CC_GPU_BOUND:
		detect_words_gpu(x, c, f);
		break;
	case IG_CC_LAUNCH_BOUND:
		detect_words_launch(x, c, f);
		break;
	case IG_CC_BLOCK_IO:
	case IG_CC_HOST_WORK:
	case IG_CC_OFFCPU_WAIT:
		detect_words_self(x, c, f);
		break;
	default: /* the classes of the kernel's evidence, input waits, paced loops */
		detect_words_wait(x, c, f);
		break;
	}
	if (c->unconfirmed && c->cls == IG_CC_PAGE_FAULTS)
		detect_put(
		    f->c.lacking, sizeof(f->c.lacking),
		    "the kind of the page faults (recorded without the kernel's wait evidence): "
		    "file or anonymous, major or minor, is not known");
	else if (c->unconfirmed)
		detect_put(f->c.lacking, sizeof(f->c.lacking),
			   "off-CPU states, preempted/blocked split or wakers (recorded without "
			   "scheduler state): the share is measured, the cause is inferred");
	parts_evidence(x, f);
	gpu_words(x, c, f);
}

/* --- NCCL ------------------------------------------------------------------ */

/* The part of the straggler's own wall time that is not waiting for the GPU
 * and is largest: what made it late, as far as the host shows. */
static int late_part(const struct ig_win_proc *sp, double *share)
{
	int best = -1;
	*share = 0;
	for (int k = 0; sp && k < IG_PART_MAX; k++) {
		if (k == IG_PART_GPU_WAIT)
			continue;
		double v = ig_part_share(&sp->p->parts, k);
		if (v > *share) {
			*share = v;
			best = k;
		}
	}
	return best;
}

void detect_words_straggler(struct ctx *x, const struct cause *c, struct finding *f,
			    const struct ig_nccl_rank *v, const struct ig_nccl_rank *s,
			    const struct ig_win_proc *sp)
{
	char vn[40], sn[40], vw[24], sw[24], pct[16], why[160] = "";
	detect_who(vn, sizeof(vn), x->p->comm, x->p->pid);
	detect_who(sn, sizeof(sn), s->comm, s->pid);
	fmt_ns(vw, sizeof(vw), v->wait_mean_ns);
	fmt_ns(sw, sizeof(sw), s->wait_mean_ns);
	fmt_pct(pct, sizeof(pct), c->impact);
	detect_put(
	    f->c.summary, sizeof(f->c.summary),
	    "NCCL straggler: rank %u of %u, %s, is late; rank %u, %s, waits %s per collective "
	    "(rank %u: %s), %s of its time",
	    s->rank, s->nranks, sn, v->rank, vn, vw, s->rank, sw, pct);
	double share;
	int part = late_part(sp, &share);
	if (part >= 0 && share >= 0.05)
		detect_put(
		    why, sizeof(why),
		    " On the host, %s spends %.0f%% of its time %s: that is where it falls behind.",
		    sn, share * 100,
		    part == IG_PART_HOST_CPU	? "busy on the CPU between CUDA calls"
		    : part == IG_PART_TASK_WAIT ? "waiting for another task (data)"
		    : part == IG_PART_IO_WAIT	? "waiting for the disk"
		    : part == IG_PART_PREEMPTED || part == IG_PART_CALL_PREEMPTED
			? "preempted by other tasks"
		    : part == IG_PART_API ? "in CUDA API work on the CPU"
					  : "off CPU");
	else
		detect_put(
		    why, sizeof(why),
		    " The host shows no reason: its GPU may be the slow one (compare the devices' "
		    "utilisation).");
	detect_put(
	    f->c.explanation, sizeof(f->c.explanation),
	    "A collective completes only when every rank has reached it. In communicator %06x "
	    "(%u ranks), the operations of rank %u complete %s after they are enqueued, those of "
	    "rank %u after %s: rank %u arrives last, and rank %u waits for it in its stream "
	    "synchronisations, %s of its wall time.%s",
	    v->key, v->nranks, v->rank, vw, s->rank, sw, s->rank, v->rank, pct, why);
	detect_ev(f, "impact_pct", c->impact * 100, "%");
	detect_ev(f, "wait_per_op_ns", (double)v->wait_mean_ns, "ns");
	detect_ev(f, "peer_wait_per_op_ns", (double)s->wait_mean_ns, "ns");
	detect_ev(f, "rank", v->rank, "");
	detect_ev(f, "straggler_rank", s->rank, "");
	detect_ev(f, "nranks", v->nranks, "");
	detect_ev(f, "collectives", (double)v->done_win, "");
	detect_ev(f, "sync_wait_ns", (double)v->sync_ns_win, "ns");
	if (part >= 0)
		detect_ev(f, "peer_late_part_pct", share * 100, "%");
	detect_ev(f, "feeder_wall_ns", (double)x->parts->wall_ns, "ns");
	detect_rec(
	    f,
	    "Find why rank %u (%s) is late: open its process screen; its time between "
	    "collectives (host work, data loading, preemption) is the delay every other rank "
	    "waits for",
	    s->rank, sn);
	detect_rec(f,
		   "Balance the work per rank: equal batch and shard sizes, the same data-loader "
		   "settings and CPU cores (taskset, cpusets) for every rank");
	detect_rec(f,
		   "Overlap communication with computation (gradient bucketing, async collectives) "
		   "so one late rank costs less");
	detect_step(f, x->now, "rank %u %s waits %s per collective; rank %u %s %s", v->rank, vn, vw,
		    s->rank, sn, sw);
}

/* --- the evidence-gated and tail classes ----------------------------------- */

void detect_words_sync_storm(struct ctx *x, const struct cause *c, struct finding *f,
			     const struct storm_words *w)
{
	char fn[64], pct[16], g[24], o[24], why[200];
	detect_feeder_name(x, fn, sizeof(fn));
	fmt_pct(pct, sizeof(pct), c->impact);
	fmt_ns(g, sizeof(g), (uint64_t)w->gpu_per_sync_ns);
	detect_put(
	    f->c.summary, sizeof(f->c.summary),
	    "sync storm in %s: %.0f synchronisations/s, the GPU idle through the round trips "
	    "%s of its time (%s GPU wait per sync)",
	    fn, w->rate, pct, g);
	if (w->by_api)
		detect_put(
		    why, sizeof(why),
		    ". Each sync finds so little GPU work that the GPU idles through every launch "
		    "too: the CUDA API work on the CPU (%s of the thread's time) is what it waits "
		    "for",
		    pct);
	else
		detect_put(why, sizeof(why),
			   ": %s of the thread's time is spent in calls made with nothing queued",
			   pct);
	detect_put(
	    f->c.explanation, sizeof(f->c.explanation),
	    "The feeding thread synchronises %.0f times a second (%s of GPU wait and %s of "
	    "everything else per sync). Each synchronisation (explicit, or hidden in a "
	    "synchronous device-to-host copy such as tensor.item(), .cpu() or .numpy()) drains "
	    "the queue, so the GPU idles until the next launch is queued%s, host and GPU "
	    "taking turns instead of overlapping.",
	    w->rate, g, fmt_ns(o, sizeof(o), (uint64_t)w->work_per_sync_ns), why);
	detect_ev(f, "syncs_per_s", w->rate, "/s");
	detect_ev(f, "syncs", (double)w->syncs, "");
	detect_ev(f, "gpu_wait_per_sync_ns", w->gpu_per_sync_ns, "ns");
	detect_ev(f, "rt_idle_pct", 100.0 * w->rt_idle, "%");
	detect_ev(f, "host_per_sync_ns", w->work_per_sync_ns, "ns");
	detect_rec(
	    f, "Remove per-step host round-trips: no .item(), .cpu(), .numpy() or printing of "
	       "GPU tensors inside the loop; accumulate on the GPU and read once every N steps");
	detect_rec(
	    f, "Replace synchronous device-to-host copies with cudaMemcpyAsync into pinned memory "
	       "(non_blocking=True) and one event or stream sync where the value is needed");
	detect_rec(f,
		   "Find the call sites: open the sync op in the op view and look at the stacks of "
		   "its calls");
	parts_evidence(x, f);
}

void detect_words_copy(struct ctx *x, const struct cause *c, struct finding *f, int top_op,
		       double share, double mean_bytes, double bps, uint64_t calls)
{
	char fn[64], b[24], bw[24], pct[16];
	detect_feeder_name(x, fn, sizeof(fn));
	fmt_pct(pct, sizeof(pct), c->impact);
	fmt_bytes(b, sizeof(b), (uint64_t)mean_bytes);
	fmt_bytes(bw, sizeof(bw), (uint64_t)bps);
	detect_put(
	    f->c.summary, sizeof(f->c.summary),
	    "copy-dominated %s: copies take %s of its time and %.0f%% of its CUDA time (%s, %s "
	    "avg, %s/s while copying)",
	    fn, pct, share * 100, ig_op_name(top_op), b, bw);
	detect_put(
	    f->c.explanation, sizeof(f->c.explanation),
	    "Moving data between host and device takes %s of the feeding thread's wall time "
	    "(%.0f%% of its time in CUDA calls). At %s/s the copies run well below what PCIe "
	    "can do when host buffers are pageable, and while the thread copies it does not "
	    "launch work.%s",
	    pct, share * 100, bw,
	    x->p->first_ns >= x->ws ? " The process started inside the window: this may be the "
				      "initial load of weights and data, hence the low severity."
				    : "");
	detect_ev(f, "impact_pct", c->impact * 100, "%");
	detect_ev(f, "copy_share_pct", share * 100, "%");
	detect_ev(f, "mean_copy_bytes", mean_bytes, "B");
	detect_ev(f, "copy_bytes_per_s", bps, "B/s");
	detect_ev(f, "copy_calls", (double)calls, "");
	if (detect_words_server(x))
		detect_rec(f,
			   "Use pinned (page-locked) host buffers (cudaHostAlloc, or the server's "
			   "pinned-memory option), so copies run at full PCIe bandwidth");
	else
		detect_rec(
		    f,
		    "Use pinned (page-locked) host buffers: pin_memory=True in the DataLoader or "
		    "cudaHostAlloc, so copies run at full PCIe bandwidth");
	detect_rec(f,
		   "Overlap copies with compute: non_blocking=True / cudaMemcpyAsync on a separate "
		   "stream, double-buffering the next batch");
	detect_rec(f,
		   "Move less data per step: keep tensors on the GPU between steps, send compact "
		   "dtypes (uint8/fp16) and convert on the GPU");
}

void detect_words_alloc(struct ctx *x, const struct cause *c, struct finding *f,
			const struct ig_series_stats *s, int periodic, double period_s, int n,
			uint64_t omax)
{
	char fn[64], p99[24], p50[24], r[16], mx[24], pd[24], per[40] = "";
	detect_feeder_name(x, fn, sizeof(fn));
	fmt_ns(mx, sizeof(mx), omax);
	fmt_ns(pd, sizeof(pd), (uint64_t)(period_s * 1e9));
	if (periodic)
		detect_put(per, sizeof(per), ", every ~%s", pd);
	detect_put(f->c.summary, sizeof(f->c.summary),
		   "allocator spikes in %s: %d %s outliers up to %s%s (p99 %s, %s p50)", fn, n,
		   ig_op_name(s->op), mx, periodic ? per : ", no regular period",
		   fmt_ns(p99, sizeof(p99), s->win.p99), fmt_ratio(r, sizeof(r), s->tail_ratio));
	detect_put(f->c.explanation, sizeof(f->c.explanation),
		   "Most %s calls take %s, but some take up to %s%s. Allocation outliers come from "
		   "the driver mapping new memory (the caching allocator growing, or freeing and "
		   "re-allocating), not from the host being busy: the tail calls were %.0f%% "
		   "preempted.",
		   ig_op_name(s->op), fmt_ns(p50, sizeof(p50), s->win.p50), mx,
		   periodic
		       ? " at a regular interval, so something in the loop allocates periodically"
		       : "",
		   s->tail_preempt_share > 0 ? s->tail_preempt_share * 100 : 0);
	detect_ev(f, "impact_pct", c->impact * 100, "%");
	detect_ev(f, "outliers", n, "");
	if (periodic)
		detect_ev(f, "period_ns", period_s * 1e9, "ns");
	detect_ev(f, "outlier_max_ns", (double)omax, "ns");
	detect_ev(f, "p99_ns", (double)s->win.p99, "ns");
	detect_ev(f, "tail_ratio", s->tail_ratio, "x");
	detect_words_env_alloc(x, f);
	if (periodic)
		detect_rec(
		    f,
		    "Find what runs every ~%s (checkpoint, evaluation, logging, a growing batch) "
		    "and allocate its buffers once, outside the loop",
		    pd);
	detect_rec(
	    f,
	    "Pre-allocate and reuse device buffers instead of %s inside the step; with PyTorch, do "
	    "not call torch.cuda.empty_cache() in the loop",
	    ig_op_name(s->op));
	detect_rec(
	    f, "Tune the caching allocator: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, or a "
	       "CUDA memory pool with a high release threshold (cudaMemPoolAttrReleaseThreshold)");
	for (int i = s->noutliers > 3 ? s->noutliers - 3 : 0; i < s->noutliers; i++) {
		char d[24];
		detect_step(f, s->outlier_ts[i], "%s outlier %s", ig_op_name(s->op),
			    fmt_ns(d, sizeof(d), s->outlier_dur[i]));
	}
}

void detect_words_alloc_steady(struct ctx *x, const struct cause *c, struct finding *f,
			       const struct ig_series_stats *s)
{
	char fn[64], pct[16], p50[24], rate[24];
	detect_feeder_name(x, fn, sizeof(fn));
	fmt_pct(pct, sizeof(pct), c->impact);
	fmt_ns(p50, sizeof(p50), s->win.p50);
	detect_put(rate, sizeof(rate), "%.0f", x->win_s > 0 ? (double)s->calls_win / x->win_s : 0);
	detect_put(f->c.summary, sizeof(f->c.summary),
		   "allocation cost in %s: %s takes %s of its time (%s calls/s, p50 %s)", fn,
		   ig_op_name(s->op), pct, rate, p50);
	detect_put(
	    f->c.explanation, sizeof(f->c.explanation),
	    "The loop allocates device or pinned memory over and over: every %s call costs "
	    "about %s (the driver maps new memory, and may synchronise the device), and "
	    "together they take %s of the feeding thread's wall time. No call stands out: the "
	    "cost is steady, not spikes.",
	    ig_op_name(s->op), p50, pct);
	detect_ev(f, "impact_pct", c->impact * 100, "%");
	detect_ev(f, "calls_per_s", x->win_s > 0 ? (double)s->calls_win / x->win_s : 0, "/s");
	detect_ev(f, "p50_ns", (double)s->win.p50, "ns");
	detect_ev(f, "p99_ns", (double)s->win.p99, "ns");
	detect_words_env_alloc(x, f);
	detect_rec(
	    f,
	    "Allocate once outside the loop and reuse the buffers instead of calling %s every "
	    "step; with PyTorch, let the caching allocator keep its blocks (no "
	    "torch.cuda.empty_cache() in the loop)",
	    ig_op_name(s->op));
	detect_rec(f, "Where sizes vary, use a CUDA memory pool (cudaMallocAsync with a high "
		      "cudaMemPoolAttrReleaseThreshold) so freed memory is reused, not unmapped");
}

void detect_words_memory(struct ctx *x, const struct cause *c, struct finding *f)
{
	const struct ig_host *h = &x->w->host;
	char fn[64], b[24], pct[16], what[160] = "";
	size_t o = 0;
	detect_feeder_name(x, fn, sizeof(fn));
	fmt_pct(pct, sizeof(pct), c->impact);
	if (x->p->page_bytes_win > x->cfg->page_bytes)
		o += (size_t)detect_put(what + o, sizeof(what) - o, ", %s of page allocations",
					fmt_bytes(b, sizeof(b), x->p->page_bytes_win));
	if (h->valid && h->swap_max_win && o < sizeof(what))
		o += (size_t)detect_put(what + o, sizeof(what) - o, ", swap %s",
					fmt_bytes(b, sizeof(b), h->swap_max_win << 20));
	if (h->valid && h->mem_max_win > x->cfg->mem_pct && o < sizeof(what))
		detect_put(what + o, sizeof(what) - o, ", memory %.0f%% used", h->mem_max_win);
	if (c->impact > 0) {
		detect_put(
		    f->c.summary, sizeof(f->c.summary),
		    "memory pressure on %s: %s of its time reclaiming memory or reading it back "
		    "from swap%s",
		    fn, pct, what);
		detect_put(
		    f->c.explanation, sizeof(f->c.explanation),
		    "The host or the job's cgroup is short of memory: the feeding thread frees "
		    "memory for its own allocations (direct reclaim) or waits for its pages "
		    "to come back from swap, %s of its wall time.",
		    pct);
	} else {
		detect_put(f->c.summary, sizeof(f->c.summary),
			   "memory pressure on the host%s: %s does not stall on it (no reclaim or "
			   "swap-in measured)",
			   what, fn);
		detect_put(
		    f->c.explanation, sizeof(f->c.explanation),
		    "The host is short of memory, but the feeding thread spent no measured time in "
		    "reclaim or swap-in: context, not a cause of its slowness yet.");
	}
	detect_ev(f, "impact_pct", c->impact * 100, "%");
	detect_ev(f, "page_alloc_bytes", (double)x->p->page_bytes_win, "B");
	if (h->valid) {
		detect_ev(f, "swap_bytes", (double)(h->swap_max_win << 20), "B");
		detect_ev(f, "mem_max_pct", h->mem_max_win, "%");
	}
	detect_rec(f,
		   "Give the job more memory: raise its cgroup's limit (memory.max on cgroup v2, "
		   "memory.limit_in_bytes on v1), or run fewer jobs on this host");
	detect_rec(f,
		   "Or use less: smaller prefetch and shuffle buffers, fewer data-loader workers "
		   "(each holds batches)");
	if (h->valid && h->swap_max_win)
		detect_rec(
		    f, "If it fits in memory, keep it out of swap: memory.swap.max=0 in its cgroup "
		       "(v2), or vm.swappiness=1");
}

static const char *dir_words(int dir)
{
	static const char *const w[] = {"host-to-host ", "host-to-device ", "device-to-host ",
					"device-to-device ", ""};
	return dir >= 0 && dir < (int)(sizeof(w) / sizeof(w[0])) ? w[dir] : "";
}

void detect_words_cold(struct ctx *x, const struct cause *c, struct finding *f,
		       const struct ig_series_stats *s, double ratio)
{
	char fn[64], mx[24], st[24], r[16];
	detect_feeder_name(x, fn, sizeof(fn));
	const char *dw = dir_words(s->cold_dir);
	detect_put(
	    f->c.summary, sizeof(f->c.summary),
	    "cold start of %s: first %u %s %scalls up to %s (%s the settled p50 %s), then normal",
	    fn, s->cold_key_n, ig_op_name(s->op), dw, fmt_ns(mx, sizeof(mx), s->cold_key_max_ns),
	    fmt_ratio(r, sizeof(r), ratio), fmt_ns(st, sizeof(st), s->cold_key_p50_ns));
	detect_put(
	    f->c.explanation, sizeof(f->c.explanation),
	    "The first calls of a process pay for context creation, module loading and "
	    "allocator warm-up; afterwards %s %ssettles at %s. Not an incident, but it skews "
	    "percentiles taken over a short run.",
	    ig_op_name(s->op), dw, st);
	detect_ev(f, "impact_pct", c->impact * 100, "%");
	detect_ev(f, "cold_calls", s->cold_key_n, "");
	detect_ev(f, "cold_max_ns", (double)s->cold_key_max_ns, "ns");
	if ((s->cold_key_max_ns - s->cold_key_net_ns) * 10 >= s->cold_key_max_ns)
		detect_ev(f, "cold_own_max_ns", (double)s->cold_key_net_ns, "ns");
	detect_ev(f, "settled_p50_ns", (double)s->cold_key_p50_ns, "ns");
	detect_ev(f, "ratio", ratio, "x");
	if (s->cold_dir >= 0)
		detect_ev(f, "copy_dir", s->cold_dir, "");
	detect_rec(f, "Leave the first steps out of latency measurements and benchmarks (warm-up "
		      "iterations)");
	detect_rec(f, "For services, warm up with a dummy request before taking traffic; "
		      "CUDA_MODULE_LOADING=LAZY shortens context start-up");
	detect_step(f, s->first_ns, "first %s call", ig_op_name(s->op));
}
