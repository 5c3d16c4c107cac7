/* The synthetic source: deterministic event streams that show one root
 * cause each (or none), for the detector tests, the benches and demos
 * without a GPU or root. A stream is a function of its config: same config,
 * same events. Events come out in completion order, like the live source
 * (or in entry order with IG_F_NO_SPLIT, like an Ingero recording). */
#ifndef IG_SYNTH_H
#define IG_SYNTH_H

#include <stdint.h>

#include "core/event.h"
#include "core/source.h"

enum synth_scenario {
	SYNTH_HEALTHY = 0,     /* GPU-fed training loop, short syncs, no tail */
	SYNTH_CPU_CONTENTION,  /* stress-ng[2231] preempts syncs and launches */
	SYNTH_GPU_BOUND,       /* long blocked syncs with a GPU-side tail */
	SYNTH_HOST_STARVATION, /* feeder blocked on 4 data-loader worker children */
	SYNTH_SYNC_STORM,      /* 2 tiny synchronous D2H copies per 0.7 ms step */
	SYNTH_COPY_DOMINATED,  /* 8 MiB pageable H2D copies take most of the time */
	SYNTH_ALLOC_SPIKES,    /* cudaMalloc every 50 ms, an 80 ms one every 2 s */
	SYNTH_MEMORY_PRESSURE, /* 300 MiB/s page allocs, swap, 97 % memory, launch tail */
	SYNTH_BLOCK_IO,	       /* 40 checkpoint writes/s up to 70 ms, launch tail */
	SYNTH_COLD_START,      /* first launches take 100-300 ms, then healthy */
	SYNTH_NO_SPLIT,	       /* CPU contention as an Ingero recording shows it */
	SYNTH_BENCH,	       /* high-rate mix: 8 processes x 4 threads, all kinds */
	SYNTH_MAX,
};

struct synth_cfg {
	int scenario;	   /* enum synth_scenario */
	uint64_t seed;	   /* 0 = fixed default */
	uint64_t start_ns; /* event time of the start, 0 = 2026-01-01T00:00:00Z */
	double seconds;	   /* event-time length of the stream (default 20) */
	uint32_t pid;	   /* main process (default 4821) */
};

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

const char *synth_name(int scenario);
/* Scenario by name ("cpu_contention"), -1 when unknown. */
int synth_by_name(const char *name);

/* The same stream as an event source (source.h); fd is -1, peek_ts given.
 * NULL when out of memory. */
struct ig_source *synth_source_new(const struct synth_cfg *cfg);

#endif
