/* The window snapshot: once per second of event time, when the clock enters
 * second k, the model describes the rolling window of the W complete
 * seconds before k as plain data and hands it to one hook (the detector,
 * or anything else that judges windows: a second detector, a what-if
 * replay, a test). The model knows nothing of who listens.
 *
 * Everything is read with the window ending at now_ns = k s; the figures
 * are those the read API of model.h would have returned at that instant.
 * The snapshot and everything it points to belong to the model and are
 * valid only during the hook call; copy what must outlive it. */
#ifndef IG_WINDOW_H
#define IG_WINDOW_H

#include <stdint.h>

#include "core/hist.h"
#include "model/stats.h"

struct ig_model;

#define IG_WIN_PROCS 64	  /* processes described, in model_procs() order */
#define IG_WIN_THREADS 16 /* threads described per process, busiest first */

/* An (op, process) series with what rules look at beyond its statistics. */
struct ig_win_series {
	struct ig_series_stats s;
	const struct hist *win; /* the window histogram of the series */
	int nslow;		/* its slowest calls in the window, slowest first */
	struct ig_call_rec slow[IG_SLOW_MAX];
};

struct ig_win_thread {
	struct ig_thread_stats t;
	int ntl; /* its last off-CPU intervals, oldest first */
	struct ig_offcpu_rec tl[IG_TL_MAX];
};

struct ig_win_proc {
	const struct ig_proc_stats *p; /* in ig_window.all */
	int nops;		       /* (op, process) series, in op order */
	struct ig_win_series *ops;
	int nthr; /* threads, busiest first (calls in the window, then CUDA time) */
	struct ig_win_thread *thr;
};

struct ig_window {
	uint64_t now_ns;	     /* the second boundary the window ends at */
	struct ig_model_totals tot;  /* win_start_ns, win_span_ns: the window */
	struct ig_host host;
	/* The first IG_WIN_PROCS processes in model_procs() order (CUDA
	 * processes first, then by calls in the window). */
	int nall;
	const struct ig_proc_stats *all;
	/* Those of all[] with CUDA calls in the window, with their series
	 * and threads. */
	int nprocs;
	struct ig_win_proc *procs;
	/* NCCL ranks with operations in the window (model_nccl_ranks). */
	int nnccl;
	const struct ig_nccl_rank *nccl;
	/* GPU devices sampled (model_gpus); none without NVML. */
	int ngpus;
	const struct ig_gpu_stats *gpus;
};

typedef void (*ig_window_fn)(void *ctx, const struct ig_window *w);

/* Sets the one hook (NULL: none, and the model builds no snapshot). */
void model_set_window_hook(struct ig_model *m, ig_window_fn fn, void *ctx);

#endif
