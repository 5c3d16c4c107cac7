/* The processes pane: pid, name, container, CUDA calls/s, off-CPU share of
 * the feeding threads' wall time split preempted / blocked, off-CPU time
 * between calls, and the top preemptor. Enter opens the process. */
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

/* clang-format off */
enum {
	C_PID, C_NAME, C_CONT, C_RATE, C_OFF, C_PRE, C_BLK, C_BETWEEN, C_PREEMPTOR, C_THREADS,
	C_GPUMEM, C_N,
};
/* clang-format on */

/* clang-format off */
static const struct tui_col cols[C_N] = {
	[C_PID] = { "PID", 7, 0, 0, 'r' },
	[C_NAME] = { "PROCESS", 12, 8, 0, 'l' },
	[C_CONT] = { "CONTAINER", 10, 10, 2, 'l' },
	[C_RATE] = { "CALLS/S", 7, 0, 0, 'r' },
	[C_OFF] = { "OFF%", 5, 0, 4, 'r' },
	[C_PRE] = { "PRE%", 5, 0, 1, 'r' },
	[C_BLK] = { "BLK%", 5, 0, 1, 'r' },
	[C_BETWEEN] = { "BETWEEN", 7, 0, 1, 'r' },
	[C_PREEMPTOR] = { "TOP PREEMPTOR", 17, 10, 2, 'l' },
	[C_THREADS] = { "THR", 4, 0, 5, 'r' },
	[C_GPUMEM] = { "GPU MEM", 8, 0, 3, 'r' },
};
/* clang-format on */

struct procs_ctx {
	struct tui *t;
	const struct ig_proc_stats *rows;
	struct tui_table *tb;
};

static uint64_t procs_key(void *ctx, int row)
{
	const struct procs_ctx *c = ctx;
	return c->rows[row].pid;
}

static void pct_cell(char *buf, size_t n, double pct)
{
	fmt_pct(buf, n, pct < 0 ? -1 : pct / 100.0);
}

static void cell_cb(void *ctx, int row, int col, char *buf, size_t n, int *slot)
{
	struct procs_ctx *c = ctx;
	const struct ig_proc_stats *p = &c->rows[row];
	char b[64];
	switch (col) {
	case C_PID:
		snprintf(buf, n, "%u", p->pid);
		break;
	case C_NAME:
		snprintf(buf, n, "%.*s", IG_COMM_LEN, p->comm[0] ? p->comm : "?");
		int sev = snap_severity(c->t->snap, 0, p->pid);
		if (p->exited)
			*slot = TH_DIM;
		else if (sev >= 0)
			*slot = sev_slot(sev);
		break;
	case C_CONT:
		snprintf(buf, n, "%s", tui_container(c->t, p->pid, p->cgroup_id));
		break;
	case C_RATE:
		fmt_rate(buf, n, p->calls_per_s);
		if (!p->cuda)
			*slot = TH_DIM;
		break;
	case C_OFF:
		pct_cell(buf, n, p->wall_ns ? p->off_pct : -1);
		break;
	case C_PRE:
		pct_cell(buf, n, p->wall_ns ? p->off_preempt_pct : -1);
		if (p->off_preempt_pct >= 10)
			*slot = TH_PREEMPTED;
		break;
	case C_BLK:
		pct_cell(buf, n, p->wall_ns ? p->off_blocked_pct : -1);
		if (p->off_blocked_pct >= 50)
			*slot = TH_BLOCKED;
		break;
	case C_BETWEEN:
		pct_cell(buf, n, p->wall_ns && p->cuda ? p->between_pct : -1);
		if (p->between_pct >= 50)
			*slot = TH_P99_WARN;
		break;
	case C_PREEMPTOR:
		if (p->npreemptors > 0) {
			const struct ig_culprit *cu = &p->preemptors[0];
			snprintf(buf, n, "%s %.0f%%", fmt_proc(b, sizeof(b), cu->comm, cu->pid),
				 cu->share * 100.0);
			/* narrow column: the name and the share matter more than the pid */
			if (c->tb->cell_w && tui_text_cols(buf) > c->tb->cell_w)
				snprintf(buf, n, "%.*s %.0f%%", IG_COMM_LEN, cu->comm,
					 cu->share * 100.0);
		} else {
			snprintf(buf, n, "-");
			*slot = TH_DIM;
		}
		break;
	case C_THREADS:
		snprintf(buf, n, "%u", p->threads);
		break;
	case C_GPUMEM: /* NVML's, "-" when it does not list the process */
		if (p->gpu_mem_known)
			fmt_bytes(buf, n, p->gpu_mem_bytes);
		else
			snprintf(buf, n, "-"), *slot = TH_DIM;
		break;
	}
}

static double num_cb(void *ctx, int row, int col, int *ok)
{
	struct procs_ctx *c = ctx;
	const struct ig_proc_stats *p = &c->rows[row];
	*ok = 1;
	switch (col) {
	case C_PID:
		return -(double)p->pid; /* smallest first */
	case C_RATE:
		return p->calls_per_s + (p->cuda ? 1e-9 : 0);
	case C_OFF:
		return p->off_pct;
	case C_PRE:
		return p->off_preempt_pct;
	case C_BLK:
		return p->off_blocked_pct;
	case C_BETWEEN:
		return p->between_pct;
	case C_PREEMPTOR:
		return p->npreemptors ? p->preemptors[0].share : -1;
	case C_THREADS:
		return p->threads;
	case C_GPUMEM:
		return p->gpu_mem_known ? (double)p->gpu_mem_bytes : -1;
	}
	*ok = 0;
	return 0;
}

static void procs_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r, int focused)
{
	struct procs_ctx c = {t, t->snap->procs, NULL};
	struct tui_table tb = {
	    .cols = cols,
	    .ncols = C_N,
	    .ctx = &c,
	    .nrows = t->snap->nprocs,
	    .key = procs_key,
	    .cell = cell_cb,
	    .num = num_cb,
	    .empty = "no traced process yet",
	};
	c.tb = &tb;
	table_draw(t, v, &tb, &v->lists[1], r, focused, "off-CPU: % of wall time");
}

static int procs_want(struct tui *t)
{
	return t->snap->nprocs + 1;
}

static int procs_key_cb(struct tui *t, struct tui_view *v, int action, int key)
{
	if (action != ACT_ENTER)
		return 0;
	uint64_t pid = list_selected(&v->lists[1]);
	if (!pid)
		return 0;
	struct tui_view nv = {.screen = SCR_PROC, .pid = (uint32_t)pid};
	return tui_push(t, &nv);
}

const struct tui_pane pane_procs = {
    .name = "processes",
    .area = AREA_PROCS,
    .min_w = PROCS_MIN_W,
    .min_h = PROCS_MIN_H,
    .want = procs_want,
    .draw = procs_draw,
    .key = procs_key_cb,
};
