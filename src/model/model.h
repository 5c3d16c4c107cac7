/* The model: everything the views know about the traced workload. Every
 * source (live, replay, synthetic) feeds struct ig_event into model_ingest();
 * the model keeps per-op, per-(op, process) and per-(op, thread) latency
 * histograms (lifetime and a rolling window of 1-second slices), per-process
 * and per-thread off-CPU accounting and host snapshots. Once per second of
 * event time it hands a snapshot of the window to a hook (model/window.h):
 * the detector listens there; the model knows nothing of it.
 *
 * Time: only event time. The clock is the largest observed completion time
 * (ts_ns + dur_ns); a call, off-CPU interval or I/O is counted in the 1-second
 * slice of its completion. Events older than the window count in lifetime
 * totals only. The same event sequence gives the same state whatever the
 * chunking or the wall-clock speed; model_advance() must not move the clock
 * past the next event a replay will deliver (use the source's peek_ts).
 *
 * Memory: fixed-size histograms, capped tables with least-recently-active
 * eviction, no allocation per event. Not thread-safe: one thread ingests and
 * reads. */
#ifndef IG_MODEL_H
#define IG_MODEL_H

#include <stdint.h>

#include "core/event.h"
#include "core/hist.h"
#include "model/stats.h"

struct ig_model_cfg {
	unsigned window_s;	 /* rolling window, s: 2..IG_WIN_MAX (10) */
	unsigned max_procs;	 /* process table cap (256) */
	unsigned max_threads;	 /* thread table cap (1024) */
	unsigned max_op_procs;	 /* (op, process) series cap (256) */
	unsigned max_op_threads; /* (op, thread) series cap (256) */
	unsigned cold_calls;	 /* first calls of a series kept for cold start (5) */
	double outlier_x;	 /* allocation outlier: this many times the window p50 (5) */
};

void model_cfg_default(struct ig_model_cfg *cfg);
struct ig_model;

/* cfg is copied; NULL = defaults; out-of-range values are clamped. Returns
 * NULL when out of memory. */
struct ig_model *model_new(const struct ig_model_cfg *cfg);
void model_free(struct ig_model *m);
const struct ig_model_cfg *model_cfg(const struct ig_model *m);

/* A deep copy of src to read from (a view that stays still while src moves
 * on): every read gives what it gives on src at the time of the copy. The
 * copy has no window hook and must not ingest. dst (NULL: a new model) is
 * overwritten and its memory reused when it has src's cfg. Returns dst, or
 * NULL when out of memory (dst is then freed). Owned by the caller:
 * model_free(). */
struct ig_model *model_copy(struct ig_model *dst, const struct ig_model *src);

/* A new copy of src that holds only the memory src uses (zero blocks are
 * not written into the fresh tables): a replay's checkpoint. NULL when out
 * of memory. Owned by the caller: model_free(). */
struct ig_model *model_clone(const struct ig_model *src);

/* The one ingest function. e is read, not kept. */
void model_ingest(struct ig_model *m, const struct ig_event *e);

/* Moves the clock to now_ns (Unix ns) when no event arrives (live idle,
 * paused replay at a later position); never backwards. Rotates the window
 * and calls the window hook for each second boundary crossed. */
void model_advance(struct ig_model *m, uint64_t now_ns);

/* Forgets all statistics (the user pressed r). Keeps the clock, the names
 * of known processes and the window hook. */
void model_reset(struct ig_model *m);

/* The cost of tracing one call on the machine that made the events (the
 * probe traps run just outside the time a call measures): each call that is
 * not inside another counts that much API time instead of host work. 0 (the
 * default) = no correction. */
void model_set_probe_ns(struct ig_model *m, uint32_t ns);

/* --- reading: the figures are the plain data of model/stats.h ----------- */

void model_totals(const struct ig_model *m, struct ig_model_totals *t);
uint64_t model_now(const struct ig_model *m);



/* The split of p (struct ig_split in model/stats.h). */
void model_split(const struct ig_time_parts *p, struct ig_split *out);

/* The group (IG_SPLIT_*) of a part (enum ig_part). */
int model_split_group(int part);

/* Ops that saw at least one call since the start/reset, in enum order.
 * Returns how many were written (at most max). */
int model_ops(const struct ig_model *m, int *ops, int max);

/* Whole-op row (all processes). 0, or -ENOENT when the op has no calls. */
int model_op_stats(const struct ig_model *m, int op, struct ig_series_stats *out);

/* (op, process) rows for op (pid order). Returns the count written. */
int model_op_procs(const struct ig_model *m, int op, struct ig_series_stats *out, int max);

/* (op, thread) rows for op and pid (pid 0 = any). */
int model_op_threads(const struct ig_model *m, int op, uint32_t pid, struct ig_series_stats *out,
		     int max);

/* (op, process) rows of one process, in op order. */
int model_proc_ops(const struct ig_model *m, uint32_t pid, struct ig_series_stats *out, int max);

/* One (op, process) row; 0 or -ENOENT. */
int model_op_proc_stats(const struct ig_model *m, int op, uint32_t pid,
			struct ig_series_stats *out);

/* The histogram of an op (pid 0) or of an (op, process): the window
 * (lifetime = 0) or lifetime one. Owned by the model, valid until the next
 * ingest/advance/reset; NULL when unknown. */
const struct hist *model_op_hist(const struct ig_model *m, int op, uint32_t pid, int lifetime);

/* The slowest calls of op in the window (pid 0 = any process), slowest
 * first. Exact for the first IG_SLOW_MAX. Returns the count written. */
int model_slow_calls(const struct ig_model *m, int op, uint32_t pid, struct ig_call_rec *out,
		     int max);

/* The same since the start or the reset: the IG_SLOW_MAX slowest calls of
 * op, of which those of pid (0 = any). */
int model_slow_calls_life(const struct ig_model *m, int op, uint32_t pid, struct ig_call_rec *out,
			  int max);

/* Processes (those with CUDA calls first, then by calls in the window, then
 * pid). Returns the count written. */
int model_procs(const struct ig_model *m, struct ig_proc_stats *out, int max);
int model_proc(const struct ig_model *m, uint32_t pid, struct ig_proc_stats *out);

/* Threads of pid (0 = all), busiest first. */
int model_threads(const struct ig_model *m, uint32_t pid, struct ig_thread_stats *out, int max);

/* The last IG_TL_MAX off-CPU intervals of tid, oldest first. */
int model_thread_offcpu(const struct ig_model *m, uint32_t tid, struct ig_offcpu_rec *out, int max);

/* The off-CPU intervals during the call of tid that began at ts_ns, kept
 * with it when it entered a slowest-calls list (model/callev.c), oldest
 * first, at most IG_CALLEV_TL (the last ones; *cut set when earlier ones
 * were not kept). -1 when none are kept for that call (it never left the
 * CPU, was not among the slowest, or its entry was reused). */
int model_call_offcpu(const struct ig_model *m, uint32_t tid, uint64_t ts_ns,
		      struct ig_offcpu_rec *out, int max, int *cut);
void model_host(const struct ig_model *m, struct ig_host *out);

/* Name of a known process ("" when unknown). */
const char *model_comm(const struct ig_model *m, uint32_t pid);

/* Devices sampled since the start, by index. Returns the count written. */
int model_gpus(const struct ig_model *m, struct ig_gpu_stats *out, int max);

/* The processes the latest samples list, by device then pid. */
int model_gpu_procs(const struct ig_model *m, struct ig_gpu_proc *out, int max);

/* Sum of pid's GPU memory over the devices' latest samples: 0 with *bytes,
 * or -ENOENT when no device lists pid with a value. */
int model_proc_gpu_mem(const struct ig_model *m, uint32_t pid, uint64_t *bytes);

/* Data ops first (enum order), then groups; only those with operations.
 * Returns the count written. */
int model_nccl_ops(const struct ig_model *m, struct ig_nccl_stats *out, int max);

/* Ranks with operations in the window, by communicator key then rank. */
int model_nccl_ranks(const struct ig_model *m, struct ig_nccl_rank *out, int max);

/* The rank (pid, communicator key, rank)'s operations numbered after
 * after_seq into out[i] = {seq, entry_ns}, oldest first, at most max (the
 * newest when there are more); *lost (may be NULL): those after after_seq
 * not written (no longer kept, or over max). An after_seq past the rank's
 * count (a rank record made again) counts from 0. Returns the count
 * written, or -ENOENT when the model has no such rank. */
int model_nccl_arrivals(const struct ig_model *m, uint32_t pid, uint32_t key, uint32_t rank,
			uint64_t after_seq, uint64_t (*out)[2], int max, uint64_t *lost);
void model_nccl_totals(const struct ig_model *m, struct ig_nccl_totals *out);

#endif
