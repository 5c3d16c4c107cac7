/* Words for the numbers (see glossary.h). The part and evidence meanings
 * follow docs/detection.md. */
#include "glossary.h"

#include <stdio.h>
#include <string.h>

#include "model/model.h"

/* clang-format off */
static const struct {
	const char *label, *shrt;
	char letter;
	const char *help;
} parts[IG_PART_MAX] = {
	[IG_PART_GPU_WAIT] = { "GPU wait", "gpu", 'G',
		"inside syncs and synchronous copies, waiting for the GPU" },
	[IG_PART_API] = { "API", "api", 'A',
		"inside CUDA calls, running: launches, allocations, async copies" },
	[IG_PART_CALL_PREEMPTED] = { "preempted in calls", "pre(call)", 'p',
		"inside CUDA calls, runnable but not running: CPU contention" },
	[IG_PART_HOST_CPU] = { "host CPU", "host", 'H',
		"between calls, running the program's own code: the GPU waits" },
	[IG_PART_PREEMPTED] = { "preempted", "pre", 'P',
		"between calls, runnable but not running: CPU contention" },
	[IG_PART_IO_WAIT] = { "I/O wait", "io", 'I',
		"between calls, asleep in D state: block I/O" },
	[IG_PART_TASK_WAIT] = { "input wait", "wait", 'W',
		"between calls, asleep until another task sent it input: a data loader, a pipe, a queue" },
	[IG_PART_SLEEP] = { "sleep", "sleep", 'S',
		"between calls, asleep until its own timer: sleep(), waits with a timeout nobody ended" },
	[IG_PART_FAULT] = { "page faults", "fault", 'F',
		"between calls, faulting in fresh memory or copying pages on write (minor faults), or in faults of unrecorded kind" },
	/* "unknown" at every width: "unk" was read as a number's unit */
	[IG_PART_UNKNOWN] = { "unknown", "unknown", '?',
		"between calls, off CPU for a reason the source did not record" },
	[IG_PART_THROTTLED] = { "CPU quota", "quota", 'Q',
		"runnable, but its cgroup's CPU quota had run out: throttled" },
	[IG_PART_FILE_IO] = { "file I/O", "file", 'D',
		"between calls, in file syscalls: the kernel's copies and writeback, waits for the disk" },
	[IG_PART_COLD_READ] = { "cold reads", "cold", 'C',
		"between calls, in page faults reading a mapped file from disk" },
	[IG_PART_MEM_PRESSURE] = { "memory pressure", "mem", 'M',
		"between calls, in direct reclaim or swap-in: short of memory" },
	[IG_PART_LOCK_WAIT] = { "lock wait", "lock", 'L',
		"between calls, on a lock or condition until another thread let go" },
	[IG_PART_GIL_WAIT] = { "GIL wait", "gil", 'Y',
		"between calls, waiting for CPython's GIL held by another thread" },
	[IG_PART_BACKPRESSURE] = { "back-pressure", "full", 'B',
		"between calls, writing to a full pipe or socket until its reader drained it" },
	[IG_PART_NET_WAIT] = { "network wait", "net", 'N',
		"between calls, waiting on a network socket (or poll/epoll woken by an interrupt)" },
	/* T: the state ps shows for a stopped or traced task */
	[IG_PART_STOPPED] = { "stopped", "stop", 'T',
		"stopped by a signal (SIGSTOP), a tracer (ptrace) or its cgroup's freezer, in calls or between" },
};

static const struct {
	const char *key, *help;
} evidence[] = {
	{ "impact_pct", "share of the feeding threads' wall time the cause takes (what alerts are ranked by)" },
	{ "feeder_wall_ns", "wall time of the feeding threads in the window: the denominator of the *_pct shares" },
	{ "culprit_share_pct", "share of that time the named culprit is responsible for" },
	{ "p50_ns", "p50 latency of the op in the process over the window: the typical call" },
	{ "p99_ns", "p99 latency of the op in the process over the window" },
	{ "calls_per_s", "calls of the op per second in the window" },
	{ "tail_ratio", "p99 / p50 of the op: how far the tail is from the typical call" },
	{ "syncs", "synchronisations (outer syncs and synchronous copies) in the window" },
	{ "syncs_per_s", "synchronisations per second" },
	{ "gpu_wait_per_sync_ns", "GPU wait per synchronisation: little means the GPU was idle at the sync" },
	{ "rt_idle_pct", "time in calls made with nothing queued on the GPU (first launch after a sync, a sync after no launch): the GPU idled" },
	{ "host_per_sync_ns", "the rest of the time per synchronisation: host work between them" },
	{ "copy_share_pct", "share of the CUDA time spent in copies" },
	{ "copy_calls", "copy calls in the window" },
	{ "copy_bytes_per_s", "bytes copied per second" },
	{ "mean_copy_bytes", "mean size of a copy" },
	{ "outliers", "allocation calls at or above 5 x the window p50" },
	{ "outlier_max_ns", "the slowest of those allocations" },
	{ "period_ns", "the interval between outliers when they are periodic" },
	{ "settled_p50_ns", "the op's p50 once warmed up" },
	{ "cold_calls", "first calls of the op that were slow" },
	{ "cold_max_ns", "the slowest of those first calls" },
	{ "cold_own_max_ns", "the slowest first call without the time it was preempted (or, for a sync, asleep)" },
	{ "copy_dir", "the copy direction judged (0 host-to-host, 1 host-to-device, 2 device-to-host, 3 device-to-device, 4 default)" },
	{ "burst_calls", "slow calls in the burst (each at least 10 x the op's settled p50)" },
	{ "burst_span_ns", "from the first to the last call of the burst" },
	{ "burst_max_ns", "the slowest call of the burst" },
	{ "burst_cost_ns", "what the burst's calls took beyond the op's p50, together" },
	{ "after_first_ns", "when the burst began, after the op's first call" },
	{ "burst_preempt_pct", "share of the burst's time its calls were preempted" },
	{ "page_alloc_bytes", "pages the process allocated in the window" },
	{ "swap_bytes", "swap in use on the host" },
	{ "mem_max_pct", "highest memory use of the host in the window" },
	{ "io_dev", "block device of the last request (major << 20 | minor)" },
	{ "ratio", "the ratio the rule compared with its threshold" },
	{ "wait_per_op_ns", "NCCL: mean time from enqueue to completion of this rank's collectives" },
	{ "peer_wait_per_op_ns", "NCCL: the same for the late rank (short: the others were there already)" },
	{ "rank", "NCCL: the waiting rank, in its communicator" },
	{ "straggler_rank", "NCCL: the rank that arrives last" },
	{ "nranks", "NCCL: ranks in the communicator" },
	{ "collectives", "NCCL: collectives of the waiting rank completed in the window" },
	{ "sync_wait_ns", "NCCL: time the waiting rank spent in the synchronisations that completed them" },
	{ "peer_late_part_pct", "NCCL: share of the late rank's time in its largest host part (why it is late)" },
	{ "culprit_tid", "the culprit thread's id: the thread that held the lock or the GIL, or read the pipe" },
	{ "peer_share_pct", "share of the network wait spent on the peer named" },
	{ "peer_port", "the TCP/UDP port of that peer" },
	{ "quota_cpus", "the CPU quota of its cgroup, in CPUs: quota per period (cpu.max, cpu.cfs_quota_us)" },
	{ "periods_throttled_pct", "share of its cgroup's CPU periods in which the quota ran out (cpu.stat)" },
	{ "timed_wait_pct", "sleep that was waits with a timeout nobody ended (futex, poll, epoll), not sleep calls (a poll or select with no fds is one)" },
	{ "launch_pct", "share of its wall time inside kernel launches (not preempted)" },
	{ "launch_mean_ns", "mean time of a launch (not preempted); a launch's own CPU work is a few us" },
	{ "launches", "kernel launches of the feeding threads in the window" },
	{ "wait_per_sync_ns", "mean time of a synchronisation after them: short when the launches already waited" },
	{ "env_launch_blocking", "CUDA_LAUNCH_BLOCKING=1 in its environment: 1 yes, 0 no, -1 not recorded" },
	{ "sleeps_per_gap", "timer sleeps between two CUDA calls, where it slept: 1 a loop paced by its clock, more one that polls" },
	{ "sleep_ns", "mean time of one of those sleeps" },
	{ "kernel_pct", "share of the host work spent in the kernel, in syscalls other than file I/O" },
	{ "call_site_pct", "share of its sampled host work (stacks taken 100 times a second between calls) at the call site shown" },
	{ "cow_fault_pct", "share of the page-fault time in faults that copied a page at its first write (copy on write: after a fork, or of a zero page read first)" },
};
/* clang-format on */

const char *gloss_part_label(int part)
{
	return part >= 0 && part < IG_PART_MAX ? parts[part].label : NULL;
}

const char *gloss_part_short(int part)
{
	return part >= 0 && part < IG_PART_MAX ? parts[part].shrt : NULL;
}

char gloss_part_letter(int part)
{
	return part >= 0 && part < IG_PART_MAX ? parts[part].letter : 0;
}

const char *gloss_part_help(int part)
{
	return part >= 0 && part < IG_PART_MAX ? parts[part].help : NULL;
}

const char *gloss_evidence(const char *key)
{
	static char buf[160];
	for (size_t i = 0; i < sizeof(evidence) / sizeof(evidence[0]); i++)
		if (!strcmp(evidence[i].key, key))
			return evidence[i].help;
	/* "<part>_pct": a part's share of the feeding threads' wall time */
	size_t n = strlen(key);
	if (n > 4 && !strcmp(key + n - 4, "_pct"))
		for (int k = 0; k < IG_PART_MAX; k++)
			if (strlen(ig_part_name(k)) == n - 4 &&
			    !strncmp(key, ig_part_name(k), n - 4)) {
				snprintf(buf, sizeof(buf),
					 "share of the feeding threads' wall time %s",
					 parts[k].help);
				return buf;
			}
	return NULL;
}
