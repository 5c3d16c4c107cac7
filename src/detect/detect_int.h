/* Internals of the detector shared by its files: chains.c (the chain store:
 * identity, life cycle, order), rules.c (what the window shows: causes and
 * their impact, severity, culprit) and words.c (what a chain says: summary,
 * explanation, evidence, recommendations). */
#ifndef IG_DETECT_INT_H
#define IG_DETECT_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "detect/detect.h"
#include "model/window.h"

#define NS 1000000000ull

struct detect_id {
	uint64_t key, first_ns;
	uint32_t id;
};

struct ig_detect {
	struct ig_detect_cfg cfg;
	struct ig_chain c[IG_CHAIN_MAX];
	int n;
	int order[IG_CHAIN_MAX];
	uint8_t fired_now[IG_CHAIN_MAX];
	uint32_t next_id;
	/* the ids given, by (key, first detection): a chain detected again at
	 * the same event time after a reset (a seek back rebuilds the model)
	 * gets its id again, so ids follow the order of first detection over
	 * the whole stream whatever the seeks (chains.c chain_id) */
	struct detect_id *ids;
	size_t nids, capids;
	uint64_t gen;
	int end;	      /* detect_set_end */
	ig_lock_kind_fn lock_kind; /* detect_set_lock_kind */
	void *lock_kind_ctx;
	ig_sched_group_fn sched_group; /* detect_set_sched_group */
	void *sched_group_ctx;
	char why_none[160];   /* detect_why_none */
};

/* What one rule concluded in one window: the content of a chain. */
struct finding {
	struct ig_chain c; /* content fields only */
	int nsteps;	   /* contributing events to add to the timeline */
	struct ig_tl_entry steps[IG_CHAIN_MAX_TIMELINE];
};

/* A cause found in the window of one process: the decision, before words. */
struct cause {
	int cls;
	double impact; /* share of the feeders' wall time, 0..1 */
	int sev;
	uint32_t culprit_pid; /* 0: none named */
	char culprit_comm[16];
	uint32_t culprit_tid; /* a thread named (its process in culprit_pid), 0 none */
	uint32_t culprit_policy; /* a preemptor's scheduling policy (IG_POLICY_*), 0 unknown */
	double culprit_share;	/* of the cause's time that the culprit explains */
	int culprit_self;	/* the culprit is the process itself (its other threads) */
	int unconfirmed;	/* the source lacks what would confirm it */
	const struct ig_series_stats *tail; /* a latency tail the cause explains, or NULL */
	const struct ig_win_series *tail_ws;
};

/* Severity of an impact: LOW, MEDIUM, HIGH at the configured shares; HIGH
 * needs a named culprit and a confirmed split, else it stops at MEDIUM. */
static inline int sev_of(const struct ig_detect_cfg *cfg, double impact, int named, int confirmed)
{
	int s = impact >= cfg->sev_high	    ? IG_SEV_HIGH
		: impact >= cfg->sev_medium ? IG_SEV_MEDIUM
		: impact >= cfg->sev_low    ? IG_SEV_LOW
					    : IG_SEV_INFO;
	if ((!named || !confirmed) && s > IG_SEV_MEDIUM)
		s = IG_SEV_MEDIUM;
	return s;
}

/* An op called mostly from inside another traced call of the same thread: a
 * driver call made by the runtime (cuLaunchKernel in cudaLaunchKernel). Its
 * calls are the outer op's calls: rules leave it to the outer op. */
static inline int nested(const struct ig_series_stats *s)
{
	return s->nested_life * 2 > s->calls_life;
}

/* The time of an op's calls in the window that was not spent preempted:
 * what a chain about the op can claim of the feeding thread's wall time
 * (its preempted part is CPU contention's). */
static inline uint64_t op_own_ns(const struct ig_series_stats *s)
{
	return s->time_win_ns > s->preempt_ns_win ? s->time_win_ns - s->preempt_ns_win : 0;
}

/* The window of one process as the rules see it. */
struct ctx {
	struct ig_detect *d;
	const struct ig_detect_cfg *cfg;
	const struct ig_window *w;
	const struct ig_win_proc *wp;
	const struct ig_proc_stats *p;
	const struct ig_thread_stats *feeder; /* busiest feeding thread, or NULL */
	const struct ig_time_parts *parts;    /* the feeders' parts in the window */
	uint64_t now, ws;		      /* evaluation time, window start */
	double win_s;
	int host_causes; /* the process's chains at LOW or above fired this round
			  * (rule_gpu_bound: the host does not keep up) */
	double paced;	 /* and the share of its timer sleep (INFO) when >= sev_low */
	const struct launch_waits *lw; /* its launches (rules_launch.c) */
	int launch_sync;	       /* the synchronous launches chain fired */
};

/* rules_launch.c: the outer launches of the window, and whether they wait
 * for their kernels */
struct launch_waits {
	uint64_t own_ns, calls;	 /* in launch calls, not preempted, warm-up left out */
	uint64_t blk_ns;	 /* of which asleep */
	uint64_t sync_ns, syncs; /* in explicit synchronisations */
	double mean_ns, sync_per_ns;
	uint64_t top_ns, top_p50; /* the launch op with the most time, its p50 */
	int top_op;
	int env;      /* CUDA_LAUNCH_BLOCKING=1 in its environment */
	int longer;   /* launches take launch_wait_ns or more: their CPU work is a small part */
	int waits;    /* and are asleep most of it: not CPU work */
	int blocking; /* and return once their kernels end: env, or the syncs find
		       * less than a launch's time to wait for */
};
void detect_launch_waits(const struct ctx *x, struct launch_waits *lw);
/* 1 when it fired */
int detect_rule_launch_blocking(struct ctx *x, const struct launch_waits *lw);
/* words_launch.c; in: the share of the wall time in launches */
void detect_words_launch_blocking(struct ctx *x, const struct cause *c, struct finding *f,
				  const struct launch_waits *lw, double in);
/* The allocation chains' first advice when the environment sets
 * PYTORCH_NO_CUDA_MEMORY_CACHING=1; 1 when given. */
int detect_words_env_alloc(struct ctx *x, struct finding *f);

/* words_fault.c: fresh memory, or copy on write after a fork */
void detect_words_faults(struct ctx *x, const struct cause *c, struct finding *f);

/* chains.c */
void detect_fire(struct ig_detect *d, struct finding *f, uint64_t now);
void detect_age_and_sort(struct ig_detect *d, uint64_t now);
/* Whether the chain of (class, op, process) is active (op matters for the
 * per-op classes only). */
int detect_active(const struct ig_detect *d, int cls, int op, uint32_t pid);

/* words.c: the finding of a cause (summary, explanation, evidence, advice) */
void detect_words_time_cause(struct ctx *x, const struct cause *c, struct finding *f);
/* words_wait.c: the classes of the kernel's evidence (lock, GIL, full
 * pipe, network, CPU quota, file I/O, cold reads, page faults, memory
 * pressure) and the ones it words anew (input waits, paced loops). */
void detect_words_wait(struct ctx *x, const struct cause *c, struct finding *f);
/* A thread culprit: "holder (tid 4312)" of the process, or "holder (tid
 * 4312) of other[900]" of another; helpers of words.c. */
const char *detect_thread_name(const struct ctx *x, const struct cause *c, char *b, size_t n);
const char *detect_feeder_name(const struct ctx *x, char *b, size_t n);
/* words_wait.c: the culprit's share (and thread) as evidence */
void detect_culprit_ev(struct finding *f, const struct cause *c);
/* words_cpu.c: CPU contention's advice by priority and scheduling group:
 * the feeder's own priority lowered (own: its IG_POLICY word), a culprit in
 * another group (1 when so advised), a real-time culprit */
void detect_words_cpu_low(struct ctx *x, struct finding *f, uint32_t own);
void detect_rec_pin(struct ctx *x, struct finding *f, const char *cn);
/* 1 when the process may run on fewer CPUs than the host has: said, and
 * the first advice widens it */
int detect_words_cpu_confined(struct ctx *x, struct finding *f);
int detect_words_cpu_group(struct ctx *x, const struct cause *c, struct finding *f, const char *cn);
void detect_words_cpu_rt(struct ctx *x, const struct cause *c, struct finding *f, const char *cn);
/* words_stop.c: a feeder stopped by a signal, a tracer or the freezer */
void detect_words_stopped(struct ctx *x, const struct cause *c, struct finding *f);
/* A process's name in the window, "" when it is not in it. */
const char *detect_win_comm(const struct ctx *x, uint32_t pid);

/* What the storm rule measured (rules.c api_causes). */
struct storm_words {
	double rate;		    /* outer syncs per second */
	uint64_t syncs;
	double gpu_per_sync_ns, work_per_sync_ns;
	double rt_idle;		    /* share of the wall time in calls made with nothing queued */
	int by_api;		    /* the impact is the API work: kernels too short to cover it */
};
void detect_words_sync_storm(struct ctx *x, const struct cause *c, struct finding *f,
		      const struct storm_words *w);
void detect_words_copy(struct ctx *x, const struct cause *c, struct finding *f, int top_op,
		double share, double mean_bytes, double bps, uint64_t calls);
void detect_words_alloc(struct ctx *x, const struct cause *c, struct finding *f,
		 const struct ig_series_stats *s, int periodic, double period_s, int n,
		 uint64_t omax);
void detect_words_alloc_steady(struct ctx *x, const struct cause *c, struct finding *f,
			const struct ig_series_stats *s);
void detect_words_memory(struct ctx *x, const struct cause *c, struct finding *f);
void detect_words_cold(struct ctx *x, const struct cause *c, struct finding *f,
		const struct ig_series_stats *s, double ratio);
/* A burst of slow calls of one (op, process) series (rules.c rule_burst). */
struct burst_words {
	const struct ig_series_stats *s;
	int n, more;			/* calls in it; more: the window may hold more */
	int at_start, split;		/* began with the series; the split is known */
	uint64_t first_ns, last_ns;	/* entry of its first call, end of its last */
	uint64_t max_ns, max_ts;	/* its slowest call */
	uint64_t dur_ns, pre_ns, blk_ns; /* sums over its calls */
	uint64_t cost_ns;		/* their time beyond the settled p50 */
};
/* words_burst.c */
void detect_words_burst(struct ctx *x, const struct cause *c, struct finding *f,
		 const struct burst_words *b);
/* The process is an inference server by its name or its feeding thread's
 * (vllm, sglang, tritonserver, text-generation, ...): advice for a server. */
int detect_words_server(const struct ctx *x);
/* v: the rank that waits, s: the late one (sp: its process in the window,
 * NULL when it made no CUDA call in it). */
void detect_words_straggler(struct ctx *x, const struct cause *c, struct finding *f,
		     const struct ig_nccl_rank *v, const struct ig_nccl_rank *s,
		     const struct ig_win_proc *sp);

/* helpers (words.c) */
__attribute__((format(printf, 3, 4))) int detect_put(char *dst, size_t n, const char *fmt, ...);
char *detect_who(char *b, size_t n, const char *comm, uint32_t pid);
void detect_finding_init(struct finding *f, int cls, int sev, int op, const struct ig_proc_stats *p);
void detect_ev(struct finding *f, const char *key, double v, const char *unit);
__attribute__((format(printf, 2, 3))) void detect_rec(struct finding *f, const char *fmt, ...);
/* A recommendation that ends in a command to paste: "TEXT: CMD". The
 * command is never cut; when both do not fit, the text is cut short with
 * "...". -1 (nothing added) when the command alone does not fit. Commands
 * act on every thread of the process they name (docs/detection.md,
 * "Advice you can paste"). */
__attribute__((format(printf, 3, 4))) int detect_rec_cmd(struct finding *f, const char *cmd,
						  const char *fmt, ...);
__attribute__((format(printf, 3, 4))) void detect_step(struct finding *f, uint64_t ts, const char *fmt,
						...);
void detect_slow_steps(struct finding *f, const struct ig_win_series *ws, int op, uint64_t min_dur,
		int max);

#endif
