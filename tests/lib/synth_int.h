/* Internals of the synthetic streams (synth.h) shared by their files:
 * synth.c (the generator) and synth_recipes.c (the recipes and their
 * ground truth). */
#ifndef IG_SYNTH_INT_H
#define IG_SYNTH_INT_H

#include <stdint.h>

#include "synth.h"

#define US 1000ull
#define MS 1000000ull
#define SEC 1000000000ull
#define BUF 1024
#define MAXPH 8
#define MAXCALLS 128
#define IO_DEV ((259u << 20) | 1u) /* nvme0n1p1 */

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
	/* with the kernel's wait evidence (IG_F_DETAIL, core/waits.h) */
	PH_LOCK,     /* a futex: a timed try that ran out (a third), then a wait holder ended */
	PH_GIL,	     /* the GIL: 5 ms timed waits, the last one ended by pybusy */
	PH_FULL,     /* a write on a full pipe, until consumer read */
	PH_NET,	     /* a recv on a TCP socket to 10.0.0.5:5555, an interrupt ends it */
	PH_THROTTLE, /* runnable, its cgroup throttled */
	PH_FILE,     /* a file write on the CPU in the kernel (3/8), then fsync asleep */
	PH_COLD,     /* a fault of a file mapping: asleep reading it (4/5), on the CPU */
	PH_FRESH,    /* minor faults of fresh memory: on the CPU in the kernel */
	PH_RECLAIM,  /* a fault in direct reclaim: asleep (7/10), on the CPU */
	PH_STOP,     /* stopped (SIGSTOP) in a nanosleep, until cpulimit sent SIGCONT */
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
	uint32_t quota_pct; /* its cgroup v2's CPU quota (IG_EV_CGROUP each second), 0 none */
	uint32_t env;	    /* IG_ENV_* of its environment (IG_EV_ENV each second), 0 none */
	const char *cause, *cause2;
	uint32_t culprit, culprit_tid;
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
/* The peer's step: its host work, then these, then a sync to the step's end. */
#define PEER_LAUNCH (200 * US)
#define PEER_NCCL (10 * US)

/* clang-format on */

extern const struct recipe synth_recipes[SYNTH_MAX];
extern const char *const synth_names[SYNTH_MAX];

#endif
