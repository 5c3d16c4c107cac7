/* The model's figures as plain data: the statistics the read API of
 * model/model.h fills and the window snapshot (model/window.h) carries,
 * with the constants that size them and the pure helpers on them. No
 * function here reads a model, so a layer that may see only the window
 * (the detector: docs/architecture.md) includes this, never model.h. */
#ifndef IG_MODEL_STATS_H
#define IG_MODEL_STATS_H

#include <stdint.h>

#include "core/event.h"
#include "core/hist.h"

#define IG_WIN_MAX 60	/* longest rolling window, s */
#define IG_SLOW_MAX 10	/* slowest calls kept per op per 1-s slice */
#define IG_CULPRITS 8	/* preemptors / wakers tracked per process */
#define IG_TL_MAX 32	/* off-CPU intervals kept per thread for the timeline */
#define IG_CALLEV_TL 16 /* off-CPU intervals kept with one of the slowest calls */
#define IG_OUTLIERS 16	/* allocation outliers kept per series */

/* --- reading -------------------------------------------------------------
 * Every number below is in ns unless said; "win" = the rolling window
 * ending at the clock, "life" = since start or the last reset. Shares are
 * fractions 0..1; a share that could not be computed is negative (-1). */

struct ig_model_totals {
	uint64_t now_ns;       /* the clock */
	uint64_t first_ns;     /* first event time, 0 before any */
	uint64_t win_start_ns; /* start of the rolling window */
	uint64_t win_span_ns;  /* length of the window actually covered by data */
	uint64_t events;       /* events ingested, all kinds */
	uint64_t by_kind[IG_EV_KIND_MAX];
	uint64_t calls;	  /* IG_EV_CALL */
	uint64_t late;	  /* events older than the window (lifetime only) */
	uint64_t ignored; /* malformed events (bad kind/op, ts 0) */
	uint64_t evicted_procs, evicted_threads, evicted_series;
	unsigned procs, threads, op_procs, op_threads; /* table occupancy */
	uint64_t windows;			       /* window snapshots handed to the hook */
	int no_split_seen; /* some calls came without a preempted/blocked split */
};

/* Where a thread's wall time went: exclusive parts that add up to the wall
 * time. Inside CUDA calls, a call that synchronises (syncs, synchronous
 * copies) is waiting for the GPU unless preempted; any other call is API
 * work on the CPU where it ran and a wait for the device where it slept
 * (a full launch queue). Between calls, off-CPU intervals say why the thread was not
 * running (docs/detection.md has the rules). */
enum ig_part {
	IG_PART_GPU_WAIT = 0,	/* inside CUDA calls, waiting for the GPU */
	IG_PART_API,		/* inside CUDA calls, running: API work on the CPU */
	IG_PART_CALL_PREEMPTED, /* inside CUDA calls, runnable but not running */
	IG_PART_HOST_CPU,	/* between calls, running: the host's own work */
	IG_PART_PREEMPTED,	/* between calls, runnable but not running */
	IG_PART_IO_WAIT,	/* between calls, asleep in D state (block I/O) */
	IG_PART_TASK_WAIT,	/* between calls, asleep until another task woke it */
	IG_PART_SLEEP,		/* between calls, asleep until a timer woke it */
	IG_PART_FAULT,		/* between calls, in page faults of fresh memory (minor faults
				 * on the CPU; asleep in a fault of unrecorded kind) */
	IG_PART_UNKNOWN,	/* between calls, off CPU for an unrecorded reason */
	/* The kernel's evidence (core/waits.h) splits the rest by mechanism: */
	IG_PART_THROTTLED,    /* runnable, but its cgroup's CPU quota had run out (in
			       * calls or between) */
	IG_PART_FILE_IO,      /* between calls, in file syscalls (read, write, fsync...):
			       * on the CPU in the kernel, or waiting for the disk */
	IG_PART_COLD_READ,    /* between calls, in major faults of file mappings: the
			       * file's pages read from the disk */
	IG_PART_MEM_PRESSURE, /* between calls, in direct reclaim and swap-in */
	IG_PART_LOCK_WAIT,    /* between calls, on a lock or condition (futex, file lock,
			       * semaphore, a kernel lock) until another thread let go */
	IG_PART_GIL_WAIT,     /* between calls, waiting for CPython's GIL */
	IG_PART_BACKPRESSURE, /* between calls, writing to a full pipe or socket: its
			       * reader does not keep up */
	IG_PART_NET_WAIT,     /* between calls, on a network socket (or poll woken by
			       * an interrupt: the network, a device) */
	IG_PART_STOPPED,      /* stopped, in calls or between: by a signal (SIGSTOP), a
			       * tracer (ptrace) or its cgroup's freezer, until another
			       * task let it go on */
	IG_PART_MAX,
};
/* How a thread was stopped (IG_PART_STOPPED): a job-control signal, a
 * tracer's ptrace stops, its cgroup's freezer. */
enum { IG_STOP_SIGNAL = 0, IG_STOP_TRACED, IG_STOP_FROZEN };

struct ig_time_parts {
	uint64_t wall_ns;	  /* the denominator: the threads' wall time */
	uint64_t ns[IG_PART_MAX]; /* sum(ns) == wall_ns */
	int split_unknown;	  /* some calls had no preempted/blocked split */
	/* Not a part: the time inside calls (api, gpu_wait) during which the GPU
	 * had nothing queued by this thread, so idled for the round trip: the
	 * first launch after a synchronisation (until it is queued), and a
	 * synchronisation with nothing launched since the last one, each with
	 * its probe traps. What a sync storm costs (docs/detection.md). */
	uint64_t rt_idle_ns;
	/* Of rt_idle_ns, the synchronisations (not copies: a copy moves data)
	 * with nothing launched since the last one: their time is in gpu_wait,
	 * yet the GPU had nothing of this thread's to do, not GPU-bound time */
	uint64_t rt_sync_ns;
	/* Not a part: the probe traps of the synchronising calls, inside
	 * gpu_wait (one pair per outer sync); the return half runs after the
	 * GPU finished, idle time of a storm's round trip */
	uint64_t sync_trap_ns;
	/* Not a part: the kernel CPU of syscalls other than file I/O between
	 * calls (pipes, sockets, futexes, mmap...), inside host_cpu */
	uint64_t ksys_ns;
	/* Not a part: the time of sleep that was timed waits on a futex, an
	 * epoll or a poll that nobody ended (a wait with a timeout: a loop
	 * paced by its own timer, a queue polled with a timeout) */
	uint64_t timed_wait_ns;
	/* Not a part: the kernel CPU of minor faults that wrote to a present
	 * page (copy on write: of pages shared with a forked process, or of the
	 * zero page), inside fault (mem_pressure while the thread swaps in) */
	uint64_t cow_ns;
	int waits_seen; /* some blocked intervals came with the kernel's evidence */
};

/* "gpu_wait", "api", ... (the JSON keys); "?" when out of range. */
static inline const char *ig_part_name(int part)
{
	static const char *const part_names[IG_PART_MAX] = {
	    [IG_PART_GPU_WAIT] = "gpu_wait",
	    [IG_PART_API] = "api",
	    [IG_PART_CALL_PREEMPTED] = "call_preempted",
	    [IG_PART_HOST_CPU] = "host_cpu",
	    [IG_PART_PREEMPTED] = "preempted",
	    [IG_PART_IO_WAIT] = "io_wait",
	    [IG_PART_TASK_WAIT] = "task_wait",
	    [IG_PART_SLEEP] = "sleep",
	    [IG_PART_FAULT] = "fault",
	    [IG_PART_UNKNOWN] = "unknown",
	    [IG_PART_THROTTLED] = "throttled",
	    [IG_PART_FILE_IO] = "file_io",
	    [IG_PART_COLD_READ] = "cold_read",
	    [IG_PART_MEM_PRESSURE] = "mem_pressure",
	    [IG_PART_LOCK_WAIT] = "lock_wait",
	    [IG_PART_GIL_WAIT] = "gil_wait",
	    [IG_PART_BACKPRESSURE] = "backpressure",
	    [IG_PART_NET_WAIT] = "net_wait",
	    [IG_PART_STOPPED] = "stopped",
	};
	return part >= 0 && part < IG_PART_MAX ? part_names[part] : "?";
}

/* A share of the wall time, 0..1 (0 when wall_ns is 0). */
static inline double ig_part_share(const struct ig_time_parts *t, int part)
{
	if (!t->wall_ns || part < 0 || part >= IG_PART_MAX)
		return 0;
	return (double)t->ns[part] / (double)t->wall_ns;
}
/* The wall time in four groups, fractions of the parts' sum that add up to
 * 1 (the processes pane's GPU% CPU% PRE% WAIT%, the stream's split):
 * waiting for the GPU (gpu_wait), running on the CPU (api + host_cpu),
 * runnable but not running (call_preempted + preempted), everything else
 * (asleep or off CPU between calls). One computation for every view. */
enum { IG_SPLIT_GPU = 0, IG_SPLIT_CPU, IG_SPLIT_PRE, IG_SPLIT_WAIT, IG_SPLIT_MAX };
struct ig_split {
	int valid; /* 0: no wall time (no value; shares -1) */
	double share[IG_SPLIT_MAX];
	/* the PRE share is not known: calls came without their
	 * preempted/blocked split, or off-CPU time of unknown state (an Ingero
	 * recording) with no preemption known; never to be shown as 0 */
	int pre_unknown;
};

/* Percentiles of one histogram. */
struct ig_pcts {
	uint64_t n;
	uint64_t p50, p90, p95, p99, p999, max, min, mean;
};

/* Stats of an op, of an (op, process) or of an (op, thread). */
struct ig_series_stats {
	int op;
	uint32_t pid;		 /* 0 for the all-process op row */
	uint32_t tid;		 /* 0 unless an (op, thread) row */
	char comm[IG_COMM_LEN];	 /* process name when pid != 0 */
	char tcomm[IG_COMM_LEN]; /* thread name of an (op, thread) row, "" otherwise */
	uint64_t calls_life;
	uint64_t calls_win;
	double calls_per_s; /* calls_win / rate span: the window span, at least 1 s */
	/* Calls made inside another traced call of the same thread (lifetime):
	 * a driver op called by the runtime (cuLaunchKernel inside
	 * cudaLaunchKernel). Mostly nested means the outer op speaks for it. */
	uint64_t nested_life;
	struct ig_pcts win, life;
	double tail_ratio;    /* win p99 / p50, 0 when no calls */
	uint64_t time_win_ns; /* sum of call durations in the window */
	uint64_t bytes_win;   /* bytes moved or allocated (copies, allocs) */
	double bytes_per_s;   /* bytes_win over the rate span, as calls_per_s */
	double wall_share;    /* time in this op / wall time of the threads that called it */
	/* Tail = calls whose duration is at or above the p95 (quarter-octave
	 * granularity, see docs/detection.md). */
	uint64_t tail_calls, tail_ns, tail_preempt_ns, tail_blocked_ns;
	double tail_preempt_share; /* -1 when the tail calls had no split (IG_F_NO_SPLIT) */
	double tail_blocked_share;
	uint64_t preempt_ns_win, blocked_ns_win; /* over all calls in the window */
	uint32_t switches_win;
	uint64_t no_split_calls_win;
	uint32_t top_preemptor_pid; /* weighted by preempt_ns of the calls */
	char top_preemptor_comm[IG_COMM_LEN];
	double top_preemptor_share;	/* of the calls' preempted time */
	uint64_t spark_p99[IG_WIN_MAX]; /* p99 of each 1-s slice, oldest first, 0 = no calls */
	int spark_n;
	/* Cold start: the first calls of this series (lifetime). */
	uint64_t first_ns; /* entry time of the first call */
	unsigned cold_n;   /* first calls recorded (up to cfg cold_calls) */
	uint64_t cold_max_ns, cold_mean_ns;
	uint64_t cold_end_ns; /* completion time of the last of them */
	/* Cold start as its rule judges it: the first calls of one key, a copy
	 * direction for copies (a slow device-to-host copy is no cold
	 * host-to-device one), the key whose longest first call, less its
	 * preempted time (and a synchronising call's sleep: a wait for the GPU),
	 * is the most times its key's p50 (lifetime). */
	int cold_dir;		   /* IG_DIR_* of that key; -1 for ops that are not copies */
	unsigned cold_key_n;	   /* its first calls recorded (up to cfg cold_calls) */
	uint64_t cold_key_max_ns;  /* the longest of them */
	uint64_t cold_key_net_ns;  /* the longest less its preempted (sync: blocked) time */
	uint64_t cold_key_mean_ns; /* their mean */
	uint64_t cold_key_calls;   /* all calls of the key */
	uint64_t cold_key_p50_ns;  /* p50 of all calls of the key (the settled value) */
	/* Outliers (calls >= cfg outlier_x * window p50 of the previous second)
	 * of allocation ops, lifetime, oldest first: for the period estimate. */
	int noutliers;
	uint64_t outlier_ts[IG_OUTLIERS];
	uint64_t outlier_dur[IG_OUTLIERS];
};

/* One call as kept in the slowest-calls lists. */
struct ig_call_rec {
	uint64_t ts_ns, dur_ns;
	uint32_t pid, tid;
	uint64_t preempt_ns, blocked_ns;
	uint32_t switches;
	uint32_t other_pid;
	char other_comm[IG_COMM_LEN];
	uint64_t stack_id;
	uint64_t arg0;	/* bytes for copies and allocs */
	uint32_t flags; /* IG_F_* */
	int32_t ret;
	uint16_t op;
};

/* A preemptor or a waker with its share. In the tables of threads
 * (wakers, lockers, gil_holders, drainers) pid is the thread's tid and aux
 * its process (the same when a source did not record the thread); in the table of network peers pid
 * is the IPv4 address and aux the port. */
struct ig_culprit {
	uint32_t pid;
	uint32_t aux;
	char comm[IG_COMM_LEN];
	uint64_t ns;  /* window: time it preempted us / time we waited for it */
	double share; /* of the process's preempted (or blocked-between) time */
};

/* The CPU quota of a process's cgroup as the collector read it once a second
 * (IG_EV_CGROUP): quota_us 0 when none was seen. The cgroup's own counts
 * (cpu.stat) cover all its tasks, not only the feeding threads. */
struct ig_quota {
	uint64_t quota_us, period_us;	 /* the latest: quota_us of CPU per period_us */
	int v2;				 /* cgroup v2 (cpu.max), else v1 (cpu.cfs_*) */
	char dir[IG_DETAIL_LEN];	 /* the limiting cgroup's directory, "" unknown */
	uint64_t thr_ns, nr_thr, nr_per; /* window: throttled ns, periods throttled of periods */
	uint64_t life_thr_ns, life_nr_thr, life_nr_per; /* the same since the start */
};
struct ig_proc_stats {
	uint32_t pid, ppid;
	char comm[IG_COMM_LEN];
	/* Its container or service as the collector named it ("docker:<id>",
	 * "k8s:<pod uid>/<id>", "<unit>.service", "-" the host;
	 * collect/container.h), "" when unknown (a recording made before
	 * containers were recorded, an Ingero file, a process never named). */
	char container[IG_CONTAINER_LEN];
	uint64_t cgroup_id;
	uint64_t first_ns, last_ns; /* first and last event time */
	int exited;
	int cuda;	  /* made CUDA calls (since start/reset) */
	unsigned threads; /* known threads */
	uint64_t calls_life, calls_win;
	double calls_per_s;
	/* Wall time of the feeding threads (those with CUDA calls in the window;
	 * all active threads when none) and where it went. */
	uint64_t wall_ns;
	uint64_t cuda_ns; /* inside CUDA calls (nested calls counted once) */
	uint64_t off_preempt_ns, off_blocked_ns, off_unknown_ns; /* all off-CPU */
	uint64_t off_in_call_ns, off_between_ns;
	uint64_t between_on_cpu_ns; /* neither in a call nor off CPU */
	double off_pct, off_preempt_pct, off_blocked_pct, off_unknown_pct; /* % of wall_ns */
	double between_pct; /* off-CPU between calls, % of wall_ns */
	uint32_t switches;
	uint64_t page_bytes_win, page_bytes_life;
	uint64_t io_ops_win, io_bytes_win, io_lat_ns_win, io_max_ns_win;
	/* Where the feeding threads' time went in the window (and since the
	 * start), and the busiest of them (most calls, then CUDA time). */
	struct ig_time_parts parts, life_parts;
	uint32_t feeder_tid;
	uint32_t
	    feeder_sched; /* the feeding threads' own policy and nice (IG_POLICY_*), 0 unknown */
	uint32_t io_dev; /* device (major << 20 | minor) of its last block I/O, 0 none */
	/* What its environment says (IG_ENV_*, core/event.h), where it was
	 * read (IG_ENV_SRC_*, 0: never: an older recording, or not live), and
	 * what the environment it was started with said */
	uint32_t env, env_src, env_initial;
	/* The CPUs it may run on (its affinity), those online, those its
	 * cgroup's cpuset allows; 0 not known */
	uint32_t cpus_allowed, cpus_online, cpus_cpuset;
	/* The processes it forked that share its memory (none has run a
	 * program since; since its own last exec), and the last one: its pid
	 * (0: it ran a program) and name */
	uint32_t forks, fork_pid;
	char fork_comm[IG_COMM_LEN];
	/* The same since start/reset (threads evicted meanwhile are lost), for
	 * --summary: feeding threads = those with CUDA calls since the start. */
	uint64_t life_wall_ns, life_cuda_ns;
	uint64_t life_off_preempt_ns, life_off_blocked_ns, life_off_unknown_ns;
	uint64_t life_off_between_ns;
	int npreemptors;
	struct ig_culprit preemptors[4]; /* by preempted time, largest first */
	int nwakers;
	struct ig_culprit wakers[4]; /* who woke the feeding threads between calls */
	/* The threads that ended the feeding threads' waits on a lock or
	 * condition, on the GIL, on a full pipe or socket (its reader), and
	 * the network peers it waited on, by waited time (docs/detection.md) */
	int nlockers, ngil, ndrainers, npeers, nstoppers;
	struct ig_culprit lockers[4], gil_holders[4], drainers[4], peers[4];
	struct ig_culprit stoppers[4]; /* who let its stopped threads go on */
	int stop_kind;		       /* how its feeders were stopped most: IG_STOP_* */
	/* the device (major << 20 | minor) of the file its file I/O and cold
	 * reads were most on, 0 none */
	uint32_t file_dev;
	/* GPU memory NVML lists for it, all devices, at the latest samples
	 * (bytes; valid only when gpu_mem_known) */
	int gpu_mem_known;
	uint64_t gpu_mem_bytes;
	uint32_t gpu_devs; /* bit i: device i lists it (with or without a value) */
	struct ig_quota quota;
	/* The user stack (the stacks module's id) where its feeding threads
	 * slept longest on a timer between calls since the start: the call site
	 * of its pacing (docs/detection.md); 0 none recorded */
	uint64_t sleep_stack;
	/* the same for its waits on a lock or condition (futex, semaphore,
	 * file lock), and on the GIL: where they wait most */
	uint64_t lock_stack, gil_stack;
	/* the user stack of the threads that ended those lock waits (their
	 * unlock, signal or post), where they ended the most: 0 none */
	uint64_t lock_wake_stack;
	/* where its threads that make CUDA calls ran their own code between
	 * calls most (the sampling tick's stacks, IG_EV_SAMPLE): the call
	 * site of its host work; 0 none sampled */
	uint64_t host_stack;
	uint64_t host_stack_ns, host_sampled_ns; /* the time its samples and all stand for */
};
struct ig_thread_stats {
	uint32_t tid, pid;
	char comm[IG_COMM_LEN]; /* the thread's name ("" when no event carried one) */
	uint64_t first_ns, last_ns;
	uint64_t calls_win, calls_life;
	double calls_per_s;
	int main_op; /* op with the most time in the window */
	uint64_t wall_ns, cuda_ns;
	uint64_t off_preempt_ns, off_blocked_ns, off_unknown_ns;
	uint64_t off_in_call_ns, off_between_ns, between_on_cpu_ns;
	uint64_t between_preempt_ns, between_blocked_ns,
	    between_unknown_ns; /* off_between_ns split */
	double cuda_pct, off_pct, between_pct;
	uint32_t switches;
	uint64_t sync_calls_win, sync_ns_win; /* syncs and synchronous copies */
	/* Of those, the calls made inside another such call (a runtime sync and
	 * its driver sync are one synchronisation) and their time. */
	uint64_t sync_nested_win, sync_nested_ns_win;
	/* Gaps between its calls in which it slept on its own timers, and
	 * those sleeps (a loop that polls sleeps many times a gap) */
	uint32_t slept_gaps_win, gap_sleeps_win;
	uint32_t last_preemptor_pid;
	char last_preemptor_comm[IG_COMM_LEN];
	struct ig_time_parts parts, life_parts; /* window, since the start */
};

/* One off-CPU interval of a thread, for the timeline. */
struct ig_offcpu_rec {
	uint64_t ts_ns, dur_ns;
	uint8_t state; /* enum ig_offcpu_state */
	uint8_t in_call;
	uint16_t cpu;
	uint32_t other_pid;
	char other_comm[IG_COMM_LEN];
	int8_t part;	/* the part of the time it counts in (enum ig_part), -1 in a call */
	uint8_t child;	/* a wait for a program the process ran (model/waits.c ran_child) */
	uint32_t flags; /* IG_F_* of the event */
	uint64_t wait;	/* its evidence (ig_event.arg1, core/waits.h), 0 none */
	uint64_t obj;	/* ig_event.arg2 */
};
struct ig_host {
	int valid; /* a snapshot was seen */
	uint64_t ts_ns;
	double cpu_pct, mem_pct, load1;
	uint64_t mem_avail_mb, swap_mb;
	double cpu_max_win, mem_max_win; /* highest in the window */
	uint64_t swap_max_win;
	double self_cpu_pct;	 /* ingero-top's own CPU, % of one CPU (latest live
				  * snapshot), -1 unknown (replay) */
	uint64_t page_bytes_win; /* all processes */
	uint64_t io_ops_win, io_bytes_win, io_lat_ns_win, io_max_ns_win;
};

/* --- GPU devices (NVML samples, IG_EV_GPU and IG_EV_GPU_PROC) ----------- */

struct ig_gpu_stats {
	struct ig_gpu_dev last; /* the latest sample of the device */
	uint64_t age_ns;	/* the clock minus its time */
	/* the window: samples and their means (-1: no value in the window) */
	unsigned samples_win;
	double util_gpu_win, util_mem_win; /* percent */
	double power_win_mw;
	uint64_t mem_used_max_win; /* bytes, 0 when no value */
	int temp_max_win;	   /* C, -1 when no value */
	unsigned nprocs;	   /* processes with memory on it at the latest sample */
};

/* GPU memory of a process on a device, at the device's latest sample. */
struct ig_gpu_proc {
	uint32_t pid;
	unsigned dev;
	int known; /* NVML gave a value (else NVML_VALUE_NOT_AVAILABLE) */
	uint64_t bytes;
	char comm[IG_COMM_LEN]; /* "" when the model does not know the process */
};

/* --- NCCL ------------------------------------------------------------------
 * An NCCL call returns once the operation is enqueued on its stream; it is
 * complete when a later synchronisation of that stream returns (a stream or
 * event sync of it, a device sync, or a call that synchronises implicitly:
 * a synchronous copy, a free) in the same process. The completion wait of
 * an operation is the time from its enqueue's return to the end of that
 * synchronisation. Calls between ncclGroupStart and ncclGroupEnd of a
 * thread are one operation, enqueued at the outermost ncclGroupEnd. */

#define IG_NCCL_NAME_LEN 96
struct ig_nccl_stats {
	int op;				/* enum ig_op; IG_OP_NCCL_GROUP_END: a group */
	char name[IG_NCCL_NAME_LEN];	/* "ncclAllReduce", "group(ncclSend, ncclRecv)" */
	uint64_t ops_life, ops_win;	/* operations enqueued */
	uint64_t bytes_life, bytes_win; /* bytes of those (core/ops.h) */
	double bytes_per_s;		/* bytes_win over the window span */
	uint64_t done_life, done_win;	/* operations seen complete */
	uint64_t wait_mean_win_ns, wait_max_win_ns; /* completion wait of those */
	struct ig_pcts wait_life;
};

/* One rank of a communicator: a process's share of it. */
struct ig_nccl_rank {
	uint32_t pid;
	char comm[IG_COMM_LEN];
	int known;		     /* the communicator was seen made (rank, nranks, key) */
	uint32_t key, rank, nranks;  /* IG_NCCL_COMM of core/ops.h */
	uint64_t ops_win, bytes_win; /* operations enqueued */
	uint64_t done_win;	     /* seen complete */
	uint64_t wait_ns_win;	     /* sum of their completion waits */
	uint64_t wait_mean_ns;	     /* per operation seen complete, 0 when none */
	uint64_t sync_ns_win;	     /* time in the synchronisations that completed them */
	uint64_t ops_life, last_ns;
};

/* The operations a rank enqueued, for joining one communicator's
 * collectives across hosts (docs/fleet.md): each its sequence number (the
 * rank's count of operations enqueued on that communicator, from 1: the
 * same collective has the same number on every rank) and the wall time of
 * its enqueue call's entry (Unix ns). The last IG_NCCL_ARRIVALS are kept
 * per rank. */
#define IG_NCCL_ARRIVALS 256
struct ig_nccl_totals {
	uint64_t pending; /* operations not yet seen complete */
	uint64_t dropped; /* ... forgotten for want of room (their completion is not known) */
};

#endif
