/* The synthetic source: deterministic event streams of a simulated training
 * loop, for the model and detector tests, the benches and demos without a
 * GPU or root. Each scenario is a recipe: the phases of one step of the
 * feeding thread with their durations (host work, launches, syncs, waits
 * between calls and who ends them), and optionally a second step that
 * replaces a base step once per period (a preempted sync, an allocation
 * spike). The share of each part of the feeder's wall time therefore
 * follows from the recipe alone: synth_truth() states it, and the model
 * must measure it from the events. A stream is a function of its config:
 * same config, same events. Events come out in completion order, like the
 * live source (or in entry order without the off-CPU split, like an Ingero
 * recording). */
#ifndef IG_SYNTH_H
#define IG_SYNTH_H

#include <stdint.h>

#include "core/event.h"
#include "core/source.h"
#include "model/model.h"

enum synth_scenario {
	SYNTH_HEALTHY = 0,     /* 100 steps/s, GPU wait 94.8 %, host 3 %: nothing to act on */
	SYNTH_CPU_CONTENTION,  /* preempted by stress-ng[2231] between calls and in a sync: 37 % */
	SYNTH_GPU_BOUND,       /* 30 ms syncs, a 150 ms one each second: GPU wait 97 % */
	SYNTH_LOADER_WAIT,     /* asleep on 4 data-loader workers (pt_data_worker): 50 % */
	SYNTH_SYNC_STORM,      /* 5000 .item() copies/s finding the GPU idle: API 70 % */
	SYNTH_COPY_DOMINATED,  /* 8 MiB pageable H2D copies: 87.6 % of the wall time */
	SYNTH_ALLOC_SPIKES,    /* a 100 ms cudaMalloc every 500 ms: 20 % excess */
	SYNTH_MEMORY_PRESSURE, /* page-fault stalls 35 %, 300 MiB/s of pages, swap, 97 % mem */
	SYNTH_BLOCK_IO,	       /* a write + fdatasync per step: D state 40 % */
	SYNTH_COLD_START,      /* first 5 launches 100-300 ms, then healthy */
	SYNTH_NO_SPLIT,	       /* Ingero-like: off CPU between calls 30 %, state not recorded */
	SYNTH_HOST_WORK,       /* CPU work between calls: 40 % */
	SYNTH_TIMER_SLEEP,     /* a timer sleep per step: 25 % */
	SYNTH_LAUNCH_BOUND,    /* 100 launches per 5 ms step: API 48 % */
	SYNTH_HEALTHY_FAST,    /* 1000 sync pairs/s with GPU work behind each: GPU wait 93 % */
	SYNTH_MIXED,	       /* loader wait 25 % and CPU contention 12 % in one loop */
	SYNTH_NCCL_STRAGGLER,  /* rank 0 waits 9.5 ms per AllReduce for rank 1 (python3[4822],
				* 8 ms of host work per step): 77 % */
	/* one per class of the kernel's wait evidence (core/waits.h) */
	SYNTH_LOCK_WAIT,       /* a futex its sibling thread holder[4830] releases, after a
				* timed try on it that ran out: 30 % */
	SYNTH_GIL_WAIT,	       /* CPython's GIL, asked for every 5 ms, given back by
				* pybusy[4831]: 40 % */
	SYNTH_BACKPRESSURE,    /* writes to a full pipe drained by consumer[2100]: 30 % */
	SYNTH_NET_WAIT,	       /* recv on a socket to 10.0.0.5:5555, woken by interrupts: 30 % */
	SYNTH_CPU_QUOTA,       /* runnable but its cgroup throttled: 35 % */
	SYNTH_FILE_IO,	       /* write + fsync of a file: kernel CPU 1.5 ms, disk 2.5 ms: 40 % */
	SYNTH_COLD_READ,       /* page faults reading a mapped file from disk: 30 % */
	SYNTH_PAGE_FAULTS,     /* minor faults of fresh memory, on the CPU: 30 % */
	SYNTH_STOPPED,	       /* stopped by SIGSTOP until cpulimit[2200] sent SIGCONT: 30 % */
	SYNTH_LAUNCH_BLOCKING, /* CUDA_LAUNCH_BLOCKING=1 in its environment: each launch waits
				* for its kernel (300 us), host work 37 % cannot overlap */
	SYNTH_POLL_WAIT,       /* three 800 us sleeps between its calls, checking between them:
				* it polls, 30 % */
	SYNTH_BENCH,	       /* high-rate mix: 8 processes x 4 threads, all kinds */
	SYNTH_MAX,
};

#define SYNTH_PID 4821	   /* the main process (default), its feeding thread is tid = pid */
#define SYNTH_STRESS 2231  /* the CPU hog: stress-ng */
#define SYNTH_WORKER0 2001 /* data-loader workers 2001..2004: pt_data_worker */
#define SYNTH_NWORKERS 4
#define SYNTH_PEER 4822		/* the other NCCL rank of SYNTH_NCCL_STRAGGLER: python3 */
#define SYNTH_NCCL_KEY 0xc0ffee /* its communicator's key */
#define SYNTH_HOLDER 4830	/* a thread of the main process holding its lock: holder */
#define SYNTH_PYBUSY 4831	/* a thread of the main process running Python: pybusy */
#define SYNTH_CONSUMER 2100	/* the process reading the main process's pipe: consumer */
#define SYNTH_LIMITER 2200	/* the process stopping and continuing it: cpulimit */

struct synth_cfg {
	int scenario;	   /* enum synth_scenario */
	uint64_t seed;	   /* 0 = fixed default */
	uint64_t start_ns; /* event time of the start, 0 = 2026-01-01T00:00:00Z */
	double seconds;	   /* event-time length of the stream (default 20) */
	uint32_t pid;	   /* main process (default SYNTH_PID) */
};

/* What a scenario's recipe says about the main process's feeding thread. */
struct synth_truth {
	/* Share of its wall time in each part (enum ig_part), summing to 1. */
	double part[IG_PART_MAX];
	/* The cause the detector must put first (a class name, "cpu_contention";
	 * "" for the healthy streams), its impact as docs/detection.md defines it
	 * for that class (0..1; < 0 when it is not a share of the steady state:
	 * cold start), and who it must name (pid 0: nobody in particular). */
	const char *cause;
	double impact;
	uint32_t culprit_pid;
	const char *culprit_comm;
	uint32_t culprit_tid; /* a thread culprit (culprit_pid its process), 0 none */
	/* A second, smaller cause mixed in ("" none) and its impact. */
	const char *cause2;
	double impact2;
	double copy;	    /* share of the wall time inside copy calls */
	double syncs_per_s; /* outer synchronisations per second of wall time */
	double settle_s;    /* the shares hold for windows starting this long after the start */
	int unconfirmed;    /* the source lacks the off-CPU split (Ingero-like) */
	int healthy;	    /* nothing above LOW may fire */
};

/* The truth of cfg's scenario. 0, or -EINVAL for an unknown scenario or
 * SYNTH_BENCH (several processes, no single truth). */
int synth_truth(const struct synth_cfg *cfg, struct synth_truth *t);

struct synth;

/* NULL when out of memory or the scenario is unknown. */
struct synth *synth_new(const struct synth_cfg *cfg);
void synth_free(struct synth *s);
/* Fills *e with the next event: 1, or 0 at the end of the stream. */
int synth_next(struct synth *s, struct ig_event *e);
/* ts_ns of the next event without consuming it: 0 and *ts set, or -ENODATA
 * at the end. No later event completes before it, so model_advance() up to
 * it keeps a replay deterministic. */
int synth_peek_ts(struct synth *s, uint64_t *ts);

/* The config in effect (defaults filled in: start, seconds, pid); owned by s. */
const struct synth_cfg *synth_config(const struct synth *s);

const char *synth_name(int scenario);
/* Scenario by name ("cpu_contention"), -1 when unknown. */
int synth_by_name(const char *name);

/* The same stream as an event source (core/source.h, synth_source.c), the
 * whole vtable: fd -1, peek_ts, a status like a replay's (mode, span), paced
 * as fast as possible or held while paused (set_pace), seekable (made again
 * from the start: same config, same events), done at its end, described in
 * a line. NULL when out of memory. */
struct ig_source *synth_source_new(const struct synth_cfg *cfg);

#endif
