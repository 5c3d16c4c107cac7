/* The numbers the viewer shows that are not read as they are from the
 * model: shares grouped for a column, rates since the start, the parts of
 * a wall time for a bar. Computed here, in one place and without curses,
 * so that tests/unit/test_tui_figures.c can check on every frame of every
 * recording that they add up: shares of a stated denominator, never above
 * 100 %, parts that add up to their whole. */
#ifndef TUI_FIGURES_H
#define TUI_FIGURES_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* A process's (or thread's) wall time in four columns, fractions of
 * parts.wall_ns that add up to 1: waiting for the GPU (gpu_wait), running
 * on the CPU (api + host_cpu), runnable but not running (call_preempted +
 * preempted), asleep between calls (io_wait + task_wait + sleep + fault +
 * unknown). */
enum {
	FIG_GPU = IG_SPLIT_GPU,
	FIG_CPU = IG_SPLIT_CPU,
	FIG_PRE = IG_SPLIT_PRE,
	FIG_WAIT = IG_SPLIT_WAIT,
	FIG_NSPLIT = IG_SPLIT_MAX
};
struct fig_split {
	int valid; /* 0: no wall time (no value, shown as "-") */
	double share[FIG_NSPLIT];
	/* PRE% is not known: calls came without their preempted/blocked split,
	 * or off-CPU time of unknown state (an Ingero recording) with no
	 * preemption known; shown as "?", never 0% */
	int pre_unknown;
};
/* model_split (model/model.h) in the viewer's terms: the same numbers. */
void fig_split(const struct ig_time_parts *p, struct fig_split *out);
/* A cell of the four shares: "12%", "-" without wall time, "?" for an
 * unknown PRE%. Returns buf. */
char *fig_split_cell(char *buf, size_t n, const struct fig_split *sp, int k);
/* The group (FIG_*) of a part (enum ig_part). */
int fig_part_group(int part);

/* Calls per second over span_ns: every rate on a screen has the same
 * denominator (the window the model covers, or the time since the first
 * event), so that a process's rate is the sum of its ops' and an op's the
 * sum of its processes'. A span under a second counts as a second. */
double fig_rate(uint64_t calls, uint64_t span_ns);

/* An op whose lifetime tail (p99/p50 since the start, what z shows in the
 * P99/P50 column) is far above its window's: 10x or more, and at least 3
 * times the window's ratio. The window can look calm after a burst of slow
 * calls has left it (vLLM's warm-up: 3.0x now, 250x since the start); the
 * ops pane marks such a row. 0 when the window has no calls. */
int fig_life_tail_far(const struct ig_series_stats *s);
#define FIG_LIFE_TAIL_X 10.0
#define FIG_LIFE_TAIL_OVER_WIN 3.0

/* The off-CPU intervals of off[n] (oldest first, as the model keeps them)
 * that overlap the call [ts_ns, ts_ns + dur_ns), moved to the front of
 * off[]; their preempted and blocked time in *pre and *blk. Returns how
 * many. When off[0] began after the call began, the thread's intervals
 * during the call may be older than those the model keeps. */
int fig_during_call(struct ig_offcpu_rec *off, int n, uint64_t ts_ns, uint64_t dur_ns,
		    uint64_t *pre, uint64_t *blk);

/* A share for a cell: frac clamped to 0..1 (a negative frac is "no
 * value" and stays negative). */
double fig_share(double frac);

/* Comparing two times (m): the rows of an op table that compares the ops
 * of now[n] with those of a mark, then[m] (both in op order, as the model
 * lists them): every op of either side once, in op order. An op of the
 * mark only gets a row of its own with nothing but its op set (calls_life
 * 0: no value now). Writes at most max rows; returns how many. */
int fig_ops_union(const struct ig_series_stats *now, int n, const struct ig_series_stats *then,
		  int m, struct ig_series_stats *out, int max);
/* The parts (enum ig_part) to show for a comparison of then and now,
 * written to order[]: those not zero on either side, the largest first
 * (by the larger of their two shares; a side without wall time, or NULL,
 * counts as zero). Returns how many. */
int fig_parts_order(const struct ig_time_parts *then, const struct ig_time_parts *now,
		    int order[IG_PART_MAX]);
/* How many times now is then (a p99, a rate): > 1 is more; 0 when either
 * is no value (n == 0 for latencies, a missing side). */
double fig_change(double then, double now);

#endif
