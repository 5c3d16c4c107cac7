/* Comparing two times (m, tui/mark.c): the pure parts of what the op
 * table and the time split show while a mark is set (tui/figures.c): the
 * rows of an op table over the ops of both times, the parts a mark→now
 * legend lists and their order, the change a p99 or a rate made. */
#include "check.h"

#include <string.h>

#include "../../tui/figures.c"
#include "core/ops.h"

static struct ig_series_stats row(int op, uint64_t calls, uint64_t p99)
{
	struct ig_series_stats s;
	memset(&s, 0, sizeof(s));
	s.op = op;
	s.calls_life = calls;
	s.calls_win = calls;
	s.win.n = calls;
	s.win.p99 = p99;
	return s;
}

/* Every op of either side once, in op order; one of the mark only is a
 * row with nothing but its op (calls_life 0: no value now). */
static void ops_union(void)
{
	struct ig_series_stats now[3] = {row(IG_OP_CUDA_MALLOC, 1, 50000),
					 row(IG_OP_CUDA_LAUNCH_KERNEL, 900, 4000000),
					 row(IG_OP_CU_LAUNCH_KERNEL, 900, 3900000)};
	struct ig_series_stats then[3] = {row(IG_OP_CUDA_FREE, 2, 18000),
					  row(IG_OP_CUDA_LAUNCH_KERNEL, 1000, 500000),
					  row(IG_OP_CU_MEM_FREE, 2, 11000)};
	struct ig_series_stats out[IG_OP_MAX];
	int n = fig_ops_union(now, 3, then, 3, out, IG_OP_MAX);
	CHECKF(n == 5, "5 ops in both times, got %d", n);
	for (int i = 1; i < n; i++)
		CHECKF(out[i - 1].op < out[i].op, "op order at %d", i);
	int seen_launch = 0, seen_free = 0;
	for (int i = 0; i < n; i++) {
		if (out[i].op == IG_OP_CUDA_LAUNCH_KERNEL) {
			seen_launch++;
			CHECK(out[i].calls_life == 900 &&
			      out[i].win.p99 == 4000000); /* now's row */
		}
		if (out[i].op == IG_OP_CUDA_FREE) {
			seen_free++;
			CHECK(out[i].calls_life == 0 && out[i].win.n == 0); /* the mark's only */
		}
	}
	CHECK(seen_launch == 1 && seen_free == 1);
	/* no mark rows, or no rows now (a seek before the first call) */
	CHECK(fig_ops_union(now, 3, NULL, 0, out, IG_OP_MAX) == 3 &&
	      out[1].op == IG_OP_CUDA_LAUNCH_KERNEL);
	n = fig_ops_union(NULL, 0, then, 3, out, IG_OP_MAX);
	CHECK(n == 3 && out[0].op == IG_OP_CUDA_FREE && !out[0].calls_life);
	CHECK(fig_ops_union(now, 3, now, 3, out, IG_OP_MAX) == 3);
	/* capped */
	CHECK(fig_ops_union(now, 3, then, 3, out, 2) == 2);
}

static struct ig_time_parts parts(uint64_t wall)
{
	struct ig_time_parts p;
	memset(&p, 0, sizeof(p));
	p.wall_ns = wall;
	return p;
}

/* The parts of either side, the largest (of its two shares) first. */
static void parts_order(void)
{
	int order[IG_PART_MAX];
	struct ig_time_parts then = parts(1000), now = parts(2000);
	then.ns[IG_PART_API] = 800; /* 80% then */
	then.ns[IG_PART_GPU_WAIT] = 200;
	now.ns[IG_PART_CALL_PREEMPTED] = 1000; /* 50% now, none then */
	now.ns[IG_PART_API] = 600;
	now.ns[IG_PART_GPU_WAIT] = 400; /* 20% now and then */
	int n = fig_parts_order(&then, &now, order);
	CHECKF(n == 3, "three parts, got %d", n);
	CHECK(order[0] == IG_PART_API);		   /* 80% then */
	CHECK(order[1] == IG_PART_CALL_PREEMPTED); /* 50% now */
	CHECK(order[2] == IG_PART_GPU_WAIT);	   /* 20% */
	/* a side without wall time, or none at all, adds nothing */
	struct ig_time_parts empty = parts(0);
	empty.ns[IG_PART_SLEEP] = 5; /* not a share of anything */
	n = fig_parts_order(&empty, &now, order);
	CHECK(n == 3 && order[0] == IG_PART_CALL_PREEMPTED);
	CHECK(fig_parts_order(NULL, &now, order) == 3);
	CHECK(fig_parts_order(&empty, &empty, order) == 0);
	/* equal shares keep the parts' order */
	struct ig_time_parts a = parts(100), b = parts(100);
	a.ns[IG_PART_SLEEP] = 50, a.ns[IG_PART_HOST_CPU] = 50;
	b.ns[IG_PART_SLEEP] = 50, b.ns[IG_PART_HOST_CPU] = 50;
	CHECK(fig_parts_order(&a, &b, order) == 2 && order[0] < order[1]);
}

static void change(void)
{
	CHECK(fig_change(1000, 8000) == 8);
	CHECK(fig_change(1000, 500) == 0.5);
	CHECK(fig_change(0, 500) == 0); /* no value at the mark */
	CHECK(fig_change(1000, 0) == 0);
}

int main(void)
{
	ops_union();
	parts_order();
	change();
	return check_done("test_tui_mark");
}
