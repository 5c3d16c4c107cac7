/* Where the time goes: the exclusive parts of a thread's wall time
 * (struct ig_time_parts) from the sums the model keeps per slice. */
#include "model/model_int.h"

int model_split_group(int part)
{
	switch (part) {
	case IG_PART_GPU_WAIT:
		return IG_SPLIT_GPU;
	case IG_PART_API:
	case IG_PART_HOST_CPU:
		return IG_SPLIT_CPU;
	case IG_PART_CALL_PREEMPTED:
	case IG_PART_PREEMPTED:
		return IG_SPLIT_PRE;
	default:
		return IG_SPLIT_WAIT;
	}
}

void model_split(const struct ig_time_parts *p, struct ig_split *out)
{
	uint64_t g[IG_SPLIT_MAX] = {0}, sum = 0;
	for (int k = 0; k < IG_SPLIT_MAX; k++)
		out->share[k] = -1;
	out->valid = p && p->wall_ns > 0;
	out->pre_unknown = out->valid && p->split_unknown;
	if (!out->valid)
		return;
	for (int k = 0; k < IG_PART_MAX; k++) {
		g[model_split_group(k)] += p->ns[k];
		sum += p->ns[k];
	}
	/* the parts add up to the wall time; divide by their sum all the same
	 * so that the four add up whatever happens */
	if (sum < p->wall_ns)
		sum = p->wall_ns;
	for (int k = 0; k < IG_SPLIT_MAX; k++)
		out->share[k] = (double)g[k] / (double)sum;
	/* off-CPU time of unknown state may hold preemptions: a PRE share of 0
	 * beside it is not known to be 0 */
	if (!g[IG_SPLIT_PRE] && p->ns[IG_PART_UNKNOWN])
		out->pre_unknown = 1;
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
		uint64_t blk =
		    r->in_blk[k] < r->in_busy[k] - pre ? r->in_blk[k] : r->in_busy[k] - pre;
		p[IG_PART_CALL_PREEMPTED] += pre;
		if (k) {
			p[IG_PART_GPU_WAIT] += r->in_busy[k] - pre;
		} else {
			p[IG_PART_GPU_WAIT] += blk;
			p[IG_PART_API] += r->in_busy[k] - pre - blk;
		}
	}
	/* runnable while the cgroup's quota had run out: the quota's, not
	 * contention (inside calls, out of the calls' preempted time) */
	uint64_t thr_in =
	    r->thr[1] < p[IG_PART_CALL_PREEMPTED] ? r->thr[1] : p[IG_PART_CALL_PREEMPTED];
	uint64_t thr_btw = r->thr[0] < r->off_btw[ST_PRE] ? r->thr[0] : r->off_btw[ST_PRE];
	p[IG_PART_CALL_PREEMPTED] -= thr_in;
	p[IG_PART_THROTTLED] = thr_in + thr_btw;
	p[IG_PART_PREEMPTED] = r->off_btw[ST_PRE] - thr_btw;
	/* stopped inside a call (a sync or a launch that slept): out of the
	 * GPU wait its sleep counted in */
	uint64_t stop_in = r->stop_in < p[IG_PART_GPU_WAIT] ? r->stop_in : p[IG_PART_GPU_WAIT];
	p[IG_PART_GPU_WAIT] -= stop_in;
	p[IG_PART_STOPPED] = stop_in;
	static const int bw_part[BW_N] = {
	    [BW_IO] = IG_PART_IO_WAIT,	      [BW_TASK] = IG_PART_TASK_WAIT,
	    [BW_SLEEP] = IG_PART_SLEEP,	      [BW_FAULT] = IG_PART_FAULT,
	    [BW_OTHER] = IG_PART_UNKNOWN,     [BW_FILE] = IG_PART_FILE_IO,
	    [BW_COLD] = IG_PART_COLD_READ,    [BW_MEM] = IG_PART_MEM_PRESSURE,
	    [BW_LOCK] = IG_PART_LOCK_WAIT,    [BW_GIL] = IG_PART_GIL_WAIT,
	    [BW_FULL] = IG_PART_BACKPRESSURE, [BW_NET] = IG_PART_NET_WAIT,
	    [BW_STOP] = IG_PART_STOPPED,
	};
	for (int k = 0; k < BW_N; k++)
		p[bw_part[k]] += r->bw[k];
	p[IG_PART_UNKNOWN] += r->off_btw[ST_UNK];
	/* kernel CPU between calls, by what it served; other syscalls' stays in
	 * host_cpu (the thread's own work, in the kernel) */
	p[IG_PART_FILE_IO] += r->kt[IG_K_FILE];
	p[IG_PART_COLD_READ] += r->kt[IG_K_MAJ_FILE];
	p[IG_PART_MEM_PRESSURE] += r->kt[IG_K_MAJ_ANON] + r->kt[IG_K_RECLAIM];
	/* minor faults while the thread swaps in: mostly pages reclaim
	 * unmapped but did not free yet (found in the swap cache), memory
	 * pressure's; else fresh memory */
	int swapping = r->kt[IG_K_MAJ_ANON] || r->kt[IG_K_RECLAIM] || r->bw[BW_MEM];
	int fpart = swapping ? IG_PART_MEM_PRESSURE : IG_PART_FAULT;
	p[fpart] += r->kt[IG_K_MINOR] + r->kt[IG_K_COW];
	out->cow_ns = r->kt[IG_K_COW];
	out->ksys_ns = r->kt[IG_K_SYS];
	out->timed_wait_ns = r->timed;
	out->waits_seen = r->waits > 0;

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
		static const int trap_part[2] = {IG_PART_API, IG_PART_GPU_WAIT};
		for (int k = 0; k < 2; k++) {
			uint64_t traps = r->outer[k] * (uint64_t)probe_ns;
			if (traps > p[IG_PART_HOST_CPU])
				traps = p[IG_PART_HOST_CPU];
			p[IG_PART_HOST_CPU] -= traps;
			p[trap_part[k]] += traps;
			if (k)
				out->sync_trap_ns = traps;
		}
		if (out->ksys_ns > p[IG_PART_HOST_CPU])
			out->ksys_ns = p[IG_PART_HOST_CPU];
		if (out->timed_wait_ns > p[IG_PART_SLEEP])
			out->timed_wait_ns = p[IG_PART_SLEEP];
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
	out->ksys_ns = 0; /* host_cpu is 0 */
	if (out->timed_wait_ns > p[IG_PART_SLEEP])
		out->timed_wait_ns = p[IG_PART_SLEEP];
	out->cow_ns = (uint64_t)((double)out->cow_ns * (double)wall_ns / (double)measured);
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
	dst->ksys_ns += src->ksys_ns;
	dst->timed_wait_ns += src->timed_wait_ns;
	dst->cow_ns += src->cow_ns;
	dst->waits_seen |= src->waits_seen;
}
