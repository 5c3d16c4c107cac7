/* The causal-chain detector: on event time, once per second, it judges the
 * window snapshot the model hands over (model/window.h) and emits or updates
 * chains that name what takes the feeding thread's time (CPU contention,
 * data-loader wait, block I/O, host work, ...) and how much: the impact. Rules, thresholds and their reasoning:
 * docs/detection.md. The rules are functions of the snapshot alone, so a
 * test can build one by hand; the session owns the detector beside the
 * model and hooks it to the model's window (detect_window). */
#ifndef IG_DETECT_H
#define IG_DETECT_H

#include <stdint.h>

#include "core/event.h"
#include "core/waits.h"
#include "model/window.h"

enum ig_sev {
	IG_SEV_INFO = 0, /* worth knowing, not an incident (cold start, GPU-bound, no tail) */
	IG_SEV_LOW = 1,
	IG_SEV_MEDIUM = 2,
	IG_SEV_HIGH = 3,
};

/* The causes the detector names. Time classes are judged on the share of
 * the feeding threads' wall time they take (struct ig_time_parts); tail
 * classes on the excess time of slow calls. docs/detection.md. */
enum ig_chain_class {
	IG_CC_CPU_CONTENTION = 0, /* feeder runnable but not running (named preemptor) */
	IG_CC_LOADER_WAIT,	  /* feeder asleep until another task fed it (named waker) */
	IG_CC_BLOCK_IO,		  /* feeder asleep in D state: disk I/O */
	IG_CC_HOST_WORK,	  /* feeder busy on the CPU between calls: the GPU idles */
	IG_CC_TIMER_SLEEP,	  /* feeder sleeping on timers between calls */
	IG_CC_OFFCPU_WAIT,	  /* feeder off CPU between calls, why not recorded */
	IG_CC_SYNC_STORM,	  /* syncs that cost GPU work: many per unit of GPU work */
	IG_CC_LAUNCH_BOUND,	  /* CUDA API work on the CPU outweighs the GPU work */
	IG_CC_COPY_DOMINATED,	  /* copies take most of the time */
	IG_CC_ALLOC_SPIKES,	  /* allocation outliers (periodic or not) */
	IG_CC_MEMORY_PRESSURE,	  /* page-fault stalls, page allocations, swap */
	IG_CC_GPU_BOUND,	  /* waiting for a busy GPU: the healthy case (INFO) */
	IG_CC_COLD_START,	  /* first calls slow, then settle (INFO) */
	IG_CC_STRAGGLER,	  /* an NCCL rank waits on collectives for a late peer (named) */
	/* from the kernel's evidence of the waits (core/waits.h) */
	IG_CC_CPU_QUOTA,       /* runnable, but its cgroup's CPU quota ran out (the cgroup) */
	IG_CC_FILE_IO,	       /* in file syscalls: kernel CPU and disk waits (the device) */
	IG_CC_COLD_READ,       /* major faults of a file mapping: its pages read from disk */
	IG_CC_LOCK_WAIT,       /* a lock or condition another thread let go (named thread) */
	IG_CC_GIL_WAIT,	       /* CPython's GIL, held by another thread (named thread) */
	IG_CC_BACKPRESSURE,    /* writing to a full pipe or socket: its reader (named) is slow */
	IG_CC_NET_WAIT,	       /* on a network socket (the peer when known) */
	IG_CC_PAGE_FAULTS,     /* page faults of fresh memory (minor faults) */
	IG_CC_SLOW_BURST,      /* a burst of slow calls of one op: when, how many, cost */
	IG_CC_STOPPED,	       /* stopped by a signal, a tracer or the freezer (who let go) */
	IG_CC_LAUNCH_BLOCKING, /* launches wait for their kernels (CUDA_LAUNCH_BLOCKING=1) */
	IG_CC_POLL_WAIT,       /* sleeps again and again between calls: polls for something */
	IG_CC_MAX,
};

#define IG_CHAIN_MAX_EVIDENCE 12
#define IG_CHAIN_MAX_RECS 4
#define IG_CHAIN_MAX_TIMELINE 8
#define IG_CHAIN_MAX 64 /* chains kept at once (active + recently resolved) */

/* One number behind a conclusion, e.g. {"tail_preempt_pct", 71.0, "%"}. */
struct ig_evidence {
	char key[24];
	double value;
	char unit[8]; /* "ns", "%", "x", "/s", "B", "calls", "s", "" */
};

/* A contributing event or state change on the chain's timeline. */
struct ig_tl_entry {
	uint64_t ts_ns; /* event time, Unix ns */
	char text[112];
};

struct ig_chain {
	uint32_t id;	   /* 1, 2, ... in order of creation; kept while the chain persists */
	char id_str[16];   /* "chain-0001" */
	uint64_t key;	   /* class, op and pid: what makes two firings the same chain */
	int cls;	   /* enum ig_chain_class */
	int severity;	   /* enum ig_sev, current */
	int max_severity;  /* highest severity reached */
	int op;		   /* enum ig_op affected (IG_OP_NONE for process-wide classes) */
	uint32_t pid, tid; /* affected process and its feeding thread (0 = unknown) */
	char comm[IG_COMM_LEN];
	uint32_t culprit_pid; /* top preemptor / worker / I/O issuer, 0 = none */
	char culprit_comm[IG_COMM_LEN];
	uint32_t culprit_tid; /* the culprit thread (a lock's, the GIL's holder), 0 = not a
			       * thread: culprit_pid is its process, culprit_comm its name */
	uint64_t p50_ns, p99_ns; /* of op in pid over the window when the chain last fired */
	double tail_ratio;	 /* p99 / p50 */
	/* The share of the feeding threads' wall time (time classes) or the
	 * excess time of the tail calls over the wall time (tail classes) that
	 * the cause explains, 0..1, at the last firing: what chains are
	 * ranked by. */
	double impact;
	int nevidence;
	struct ig_evidence ev[IG_CHAIN_MAX_EVIDENCE];
	char summary[256];     /* one line: the cause and the culprit first, then numbers */
	char explanation[640]; /* a few sentences: what the evidence means */
	int nrecs;
	char recs[IG_CHAIN_MAX_RECS][192]; /* specific to the class and the culprits */
	char lacking[160]; /* evidence the source did not provide, "" when complete */
	uint64_t stack_id; /* the call site of the cause (the user stack of a timer
			    * sleep, a lock wait or a GIL wait: the stacks module's
			    * id), 0 none */
	uint64_t wake_stack_id; /* lock waits: where the threads that ended them
				 * were (their unlock, signal, put), 0 none */
	int ntimeline;	   /* entries in timeline[], oldest first, last ones kept */
	struct ig_tl_entry timeline[IG_CHAIN_MAX_TIMELINE];
	uint64_t first_seen_ns; /* event time of the first firing */
	uint64_t last_seen_ns;	/* event time of the last firing */
	uint64_t updated_ns;	/* event time of the last change of any field above */
	uint32_t fired;		/* detector ticks on which it fired */
	int active;		/* 1 while firing (or within hold_s of the last firing) */
};

/* Thresholds. detect_cfg_default() gives the values documented in
 * docs/detection.md. Shares are fractions of the feeding threads' wall time. */
struct ig_detect_cfg {
	double sev_low;		     /* impact that makes a chain LOW (0.05) */
	double sev_medium;	     /* MEDIUM (0.15) */
	double sev_high;	     /* HIGH, with a named cause (0.30) */
	double gpu_info;	     /* GPU wait share reported as GPU-bound, INFO (0.25) */
	unsigned min_calls;	     /* calls in the window for a tail (10) */
	double tail_ratio;	     /* p99/p50 that makes a tail (3) */
	uint64_t min_wall_ns;	     /* feeder wall time in the window to judge it (2 s) */
	uint64_t min_wall_end_ns;    /* ... in the last window of a run that ended (250 ms):
				      * a short run is judged as a whole at its end */
	unsigned quiet_s;	     /* a feeder silent this long is not judged (2) */
	double storm_rate;	     /* outer syncs per second for a sync storm (100) */
	double storm_gpu_ratio;	     /* GPU wait per sync below this many times the rest
				      * of the time per sync (2): short kernels, the GPU
				      * idle through all the API work; else only through
				      * the calls made with nothing queued */
	uint64_t storm_gpu_max_ns;   /* and below this much GPU wait per sync (500 us):
				      * one sync per step of real GPU work is no storm */
	uint64_t storm_host_max_ns;  /* and below this much of the rest of the time per
				      * sync (500 us): a storm is short round trips; a host
				      * that works longer between syncs is the bottleneck
				      * itself (launch overhead, host work) */
	double launch_api;	     /* API share beyond GPU wait for launch-bound (0.30) */
	uint64_t launch_wait_ns;     /* launches averaging this long wait for something (100 us) */
	double poll_sleeps;	     /* timer sleeps a gap from which a loop polls (2) */
	uint64_t copy_min_bytes;     /* mean copy size to call it copy-bound (65536) */
	unsigned alloc_min_outliers; /* outliers needed for allocator spikes (3) */
	double alloc_period_tol;     /* gaps within this fraction of the median (0.25) */
	uint64_t page_bytes;	     /* page allocations in the window (1 GiB) */
	double mem_pct;		     /* memory use that counts as pressure (95) */
	double cold_x;		     /* first calls this many times the settled p50 (10) */
	unsigned cold_calls;	     /* first calls of a (op, process) considered (5) */
	unsigned cold_s;	     /* a process is "starting" for this long (60) */
	double burst_x;		     /* a burst's calls: this many times the settled p50 (10) */
	unsigned burst_calls;	     /* at least this many of them (3) */
	unsigned burst_span_ms;	     /* within this span (1000) */
	uint64_t burst_min_ns;	     /* and costing this much beyond the p50 (10 ms) */
	double burst_share;	     /* holding this share of the window's calls as slow
				      * (0.75): a burst, not a steady tail */
	unsigned hold_s;	     /* a chain stays active this long after its last firing (3) */
	unsigned keep_s;	     /* a resolved chain is listed this long (120) */
	uint32_t self_pid;	     /* ingero-top's own pid: named as such when it is a culprit */
	double straggler_ratio;	     /* a rank's mean completion wait this many times the
				      * least of its communicator's ranks (2) */
	uint64_t straggler_min_ns;   /* and this much longer (500 us) */
};

void detect_cfg_default(struct ig_detect_cfg *c);

struct ig_detect;

/* cfg is copied; NULL = defaults. detect_free(NULL) is a no-op. */
struct ig_detect *detect_new(const struct ig_detect_cfg *cfg);
void detect_free(struct ig_detect *d);
/* Forgets every chain (the r key, a new model after a backward seek). The
 * ids stay given: a chain detected again with the same key at the same
 * event time gets the id it had (a straight run's), a new one the next. */
void detect_reset(struct ig_detect *d);
/* The chains and their order at a replay checkpoint: detect_restore puts
 * them back (as detect_reset, the generation moves on); the ids given so
 * far stay the detector's, so a chain keeps its id. Owned by the caller:
 * detect_state_free(NULL) is a no-op. NULL when out of memory. */
struct detect_state;
struct detect_state *detect_save(const struct ig_detect *d);
void detect_restore(struct ig_detect *d, const struct detect_state *s);
void detect_state_free(struct detect_state *s);
/* Judges one window and updates the chains; w->now_ns is the event time of
 * the evaluation (a second boundary). */
void detect_run(struct ig_detect *d, const struct ig_window *w);
/* The next windows are the last of a run that ended (1) or not (0): a
 * process whose feeder ran less than min_wall_ns in all is judged on what
 * it did, from min_wall_end_ns of wall time. */
void detect_set_end(struct ig_detect *d, int end);
/* What a lock wait's call site waited on (a mutex, a read-write lock, a
 * condition, a queue's get or put: enum ig_lock_kind), asked of fn with
 * the chain's stack id and the stack id of the threads that ended its
 * waits; without it (NULL), lock waits are worded as a lock or condition. */
void detect_set_lock_kind(struct ig_detect *d, ig_lock_kind_fn fn, void *ctx);
/* The CPU scheduling group of a process (core/waits.h), asked of fn live:
 * a culprit of CPU contention in another group than the feeder's is not
 * held by renice or SCHED_IDLE, its group's weight is (docs/detection.md,
 * "Advice you can paste"). Not set: the advice assumes one group. */
void detect_set_sched_group(struct ig_detect *d, ig_sched_group_fn fn, void *ctx);
/* Why no process was judged in the last window, "" when one was or none
 * made CUDA calls: "causegen[4821]'s feeding thread ran 0.12 s in the
 * window (judged from 0.25 s)". Owned by d. */
const char *detect_why_none(const struct ig_detect *d);
/* The same as a window hook: model_set_window_hook(m, detect_window, d). */
void detect_window(void *d, const struct ig_window *w);

/* Chains in display order: active before resolved, INFO (healthy states)
 * after the others, then impact (largest first), then severity, then first_seen, then id. Pointers stay valid
 * until the next window is judged or detect_reset. */
int detect_count(const struct ig_detect *d);
const struct ig_chain *detect_chain(const struct ig_detect *d, int i);
const struct ig_chain *detect_find(const struct ig_detect *d, uint32_t id);
/* Bumped whenever any chain is created, changed or removed. */
uint64_t detect_generation(const struct ig_detect *d);
/* Highest severity (enum ig_sev) of the active chains on op (0 = any) in
 * pid (0 = any); -1 when none. What the views mark op and process rows with. */
int detect_severity(const struct ig_detect *d, int op, uint32_t pid);

/* The share of a time class (cpu_contention: preempted in and between
 * calls, host_work: host_cpu...) in the parts, -1 for the other classes;
 * the part whose off-CPU intervals prove it (enum ig_part), -1 none. */
double detect_class_share(int cls, const struct ig_time_parts *t);
int detect_class_part(int cls);

/* "CPU contention", "cpu_contention"; "HIGH"; "?" when out of range. */
const char *detect_class_title(int cls);
const char *detect_class_name(int cls);
const char *detect_sev_name(int sev);
/* Class by name ("cpu_contention" or "CPU contention"), -1 when unknown. */
int detect_class_by_name(const char *name);
/* Value of the evidence named key, or def when absent. */
double detect_evidence(const struct ig_chain *c, const char *key, double def);

#endif
