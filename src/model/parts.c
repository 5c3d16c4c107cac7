/* Where the time goes: the exclusive parts of a thread's wall time
 * (struct ig_time_parts) from the sums the model keeps per slice. */
#include "model/model_int.h"

static const char *const part_names[IG_PART_MAX] = {
    [IG_PART_GPU_WAIT] = "gpu_wait",   [IG_PART_API] = "api",
    [IG_PART_CALL_PREEMPTED] = "call_preempted", [IG_PART_HOST_CPU] = "host_cpu",
    [IG_PART_PREEMPTED] = "preempted", [IG_PART_IO_WAIT] = "io_wait",
    [IG_PART_TASK_WAIT] = "task_wait", [IG_PART_SLEEP] = "sleep",
    [IG_PART_FAULT] = "fault",	       [IG_PART_UNKNOWN] = "unknown",
};

const char *ig_part_name(int part)
{
	return part >= 0 && part < IG_PART_MAX ? part_names[part] : "?";
}

double ig_part_share(const struct ig_time_parts *t, int part)
{
	if (!t->wall_ns || part < 0 || part >= IG_PART_MAX)
		return 0;
	return (double)t->ns[part] / (double)t->wall_ns;
}

/* Why a blocked interval between calls slept: the kernel's flags first,
 * then who woke it (a task, or an interrupt that was not a timer). */
int blocked_reason(uint32_t flags, uint32_t waker_pid)
{
	if (flags & IG_F_FAULT)
		return BW_FAULT;
	if (flags & IG_F_DSTATE)
		return BW_IO;
	if (flags & IG_F_TIMER)
		return BW_SLEEP;
	return waker_pid ? BW_TASK : BW_OTHER;
}

/* Fills out from the raw sums over wall_ns. The parts are measured
 * independently (calls by their own clocks, off-CPU intervals by the
 * scheduler) and counted in the slice where they end, so at the edges of a
 * window they can exceed it: then the measured parts shrink in proportion
 * and the host's own work (what is left) is 0. */
void parts_of(const struct tparts_raw *r, uint64_t wall_ns, uint32_t probe_ns,
	      struct ig_time_parts *out)
{
	uint64_t *p = out->ns;

	memset(out, 0, sizeof(*out));
	out->wall_ns = wall_ns;
	out->split_unknown = r->nosplit > 0;
	out->rt_idle_ns = r->rt_idle + r->rt_idle_n * (uint64_t)probe_ns;
	out->rt_sync_ns = r->rt_sync + r->rt_sync_n * (uint64_t)probe_ns;
	/* a call that synchronises waits for the GPU whether it sleeps or
	 * spins; any other call is API work on the CPU, except where it slept
	 * (a full launch queue, the driver waiting for the device) */
	for (int k = 0; k < 2; k++) {
		uint64_t pre = r->in_pre[k] < r->in_busy[k] ? r->in_pre[k] : r->in_busy[k];
		uint64_t blk = r->in_blk[k] < r->in_busy[k] - pre ? r->in_blk[k] : r->in_busy[k] - pre;
		p[IG_PART_CALL_PREEMPTED] += pre;
		if (k) {
			p[IG_PART_GPU_WAIT] += r->in_busy[k] - pre;
		} else {
			p[IG_PART_GPU_WAIT] += blk;
			p[IG_PART_API] += r->in_busy[k] - pre - blk;
		}
	}
	p[IG_PART_PREEMPTED] = r->off_btw[ST_PRE];
	p[IG_PART_IO_WAIT] = r->bw[BW_IO];
	p[IG_PART_TASK_WAIT] = r->bw[BW_TASK];
	p[IG_PART_SLEEP] = r->bw[BW_SLEEP];
	p[IG_PART_FAULT] = r->bw[BW_FAULT];
	p[IG_PART_UNKNOWN] = r->bw[BW_OTHER] + r->off_btw[ST_UNK];

	uint64_t measured = 0;
	for (int k = 0; k < IG_PART_MAX; k++)
		measured += p[k];
	if (measured <= wall_ns) {
		p[IG_PART_HOST_CPU] = wall_ns - measured;
		/* the probe traps run outside the measured call time: at tens of
		 * thousands of calls a second they are a share of their own; they
		 * are the calls' cost, not the host's work, and the caller's clock
		 * has them inside the call: a synchronising call's are part of its
		 * wait (its entry trap runs while the GPU works), the others' are
		 * API work */
		static const int trap_part[2] = { IG_PART_API, IG_PART_GPU_WAIT };
		for (int k = 0; k < 2; k++) {
			uint64_t traps = r->outer[k] * (uint64_t)probe_ns;
			if (traps > p[IG_PART_HOST_CPU])
				traps = p[IG_PART_HOST_CPU];
			p[IG_PART_HOST_CPU] -= traps;
			p[trap_part[k]] += traps;
			if (k)
				out->sync_trap_ns = traps;
		}
		return;
	}
	/* scale down, then give the rounding remainder to the largest part */
	uint64_t sum = 0;
	int big = 0;
	for (int k = 0; k < IG_PART_MAX; k++) {
		p[k] = (uint64_t)((double)p[k] * (double)wall_ns / (double)measured);
		sum += p[k];
		if (p[k] > p[big])
			big = k;
	}
	if (sum < wall_ns)
		p[big] += wall_ns - sum;
	else if (sum > wall_ns)
		p[big] -= sum - wall_ns < p[big] ? sum - wall_ns : p[big];
}

void parts_add(struct ig_time_parts *dst, const struct ig_time_parts *src)
{
	dst->wall_ns += src->wall_ns;
	for (int k = 0; k < IG_PART_MAX; k++)
		dst->ns[k] += src->ns[k];
	dst->split_unknown |= src->split_unknown;
	dst->rt_idle_ns += src->rt_idle_ns;
	dst->rt_sync_ns += src->rt_sync_ns;
	dst->sync_trap_ns += src->sync_trap_ns;
}
