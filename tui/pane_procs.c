/* The processes pane: pid, name, container, CUDA calls/s, where the
 * feeding threads' wall time went in four columns that add up to 100 %
 * (GPU wait, on the CPU, preempted, asleep), who preempted them and who
 * woke them, page allocations, threads; over the window or since the start
 * (z). Helper processes (no CUDA call, named as nobody's culprit, in no
 * alert: a launcher's bash, readlink) fold into one line that Enter
 * unfolds. F5 shows the processes as a tree. Under the table, the selected
 * process's wall time as a bar (while a mark is set, m, its parts as
 * mark→now). Enter opens the process. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tui_int.h"

/* clang-format off */
enum {
	C_PID, C_NAME, C_CONT, C_RATE, C_GPU, C_CPU, C_PRE, C_WAIT, C_PREEMPTOR, C_WAKER, C_MEM,
	C_THREADS, C_GPUMEM, C_N,
};

const struct tui_col procs_cols[C_N] = {
	[C_PID] = { "PID", 7, 0, 0, 'r', 0, "process id" },
	[C_NAME] = { "PROCESS", 7, 0, 0, 'l', 1,
		"process name; (self) is ingero-top itself; dimmed when it exited" },
	[C_CONT] = { "CONTAINER", 10, 10, 3, 'l', 0,
		"container or service: /proc/PID/cgroup live (docker:ID, cri:ID, a service), the "
		"cgroup id in a replay" },
	[C_RATE] = { "CALLS/S", 7, 0, 0, 'r', 0, "CUDA calls per second" },
	[C_GPU] = { "GPU%", 5, 0, 1, 'r', 0,
		"share of the feeding threads' wall time waiting for the GPU (GPU%+CPU%+PRE%+WAIT% "
		"= 100%)" },
	[C_CPU] = { "CPU%", 5, 0, 1, 'r', 0,
		"share of the feeding threads' wall time running on the CPU: CUDA API work and "
		"the program's own work between calls" },
	[C_PRE] = { "PRE%", 5, 0, 1, 'r', 0,
		"share of the feeding threads' wall time preempted: runnable but not running (CPU "
		"contention; TOP PREEMPTOR says who); ? when not known (no scheduler split)" },
	[C_WAIT] = { "WAIT%", 5, 0, 1, 'r', 0,
		"share of the feeding threads' wall time asleep between calls: I/O, another task "
		"(WAKER says who), timers, page faults" },
	[C_PREEMPTOR] = { "TOP PREEMPTOR", 13, 0, 2, 'l', 1,
		"the process that took the CPU from the feeding threads most, with its share of "
		"their preempted time (window only)" },
	[C_WAKER] = { "WAKER", 5, 0, 2, 'l', 1,
		"the task that woke the feeding threads most between calls (a data loader, a "
		"lock holder), with its share of that wait (window only)" },
	/* not MEM: an htop user reads resident memory there; this is the page
	 * allocations the kernel counted (mm_page_alloc), not RSS */
	[C_MEM] = { "PGALLOC", 9, 0, 5, 'r', 0,
		"bytes of pages the process allocated (window, or since the start); not its "
		"resident memory (RSS)" },
	[C_THREADS] = { "THR", 4, 0, 4, 'r', 0, "threads seen" },
	[C_GPUMEM] = { "GPU MEM", 8, 0, 3, 'r', 0,
		"GPU memory NVML reports for the process, all devices ('-': not listed, or no NVML)" },
};
const int procs_ncols = C_N;
/* clang-format on */

#define FOLD_KEY (1ull << 40) /* the folded helpers' row (not a pid) */

struct procs_ctx {
	struct tui *t;
	const struct ig_proc_stats *rows[TUI_MAX_PROCS];
	int helper[TUI_MAX_PROCS]; /* row is a helper (shown unfolded) */
	int n, nfold;		   /* rows; helpers folded into the last row */
	struct tui_table *tb;
};

/* A helper: no CUDA call, named as nobody's culprit, in no alert. */
static int is_helper(const struct tui_snap *sn, const struct ig_proc_stats *p)
{
	if (p->cuda)
		return 0;
	for (int i = 0; i < sn->nchains; i++)
		if (sn->chains[i].pid == p->pid || sn->chains[i].culprit_pid == p->pid)
			return 0;
	for (int i = 0; i < sn->nprocs; i++) {
		const struct ig_proc_stats *q = &sn->procs[i];
		if (!q->cuda)
			continue;
		for (int k = 0; k < q->npreemptors; k++)
			if (q->preemptors[k].pid == p->pid)
				return 0;
		for (int k = 0; k < q->nwakers; k++)
			if (q->wakers[k].pid == p->pid)
				return 0;
	}
	return 1;
}

/* The rows: every process but the helpers, which fold into one row (or
 * are listed, dimmed, above a row that folds them again). */
static void procs_rows(struct tui *t, struct procs_ctx *c)
{
	const struct tui_snap *sn = t->snap;
	c->n = c->nfold = 0;
	for (int i = 0; i < sn->nprocs && c->n < TUI_MAX_PROCS - 1; i++) {
		int h = is_helper(sn, &sn->procs[i]);
		c->nfold += h;
		if (h && !t->unfold)
			continue;
		c->helper[c->n] = h;
		c->rows[c->n++] = &sn->procs[i];
	}
	if (c->nfold) {
		c->helper[c->n] = 1;
		c->rows[c->n++] = NULL; /* the fold row */
	}
}

static const struct ig_time_parts *shown_parts(struct tui *t, const struct ig_proc_stats *p)
{
	return t->life ? &p->life_parts : &p->parts;
}

static uint64_t procs_key(void *ctx, int row)
{
	const struct procs_ctx *c = ctx;
	return c->rows[row] ? c->rows[row]->pid : FOLD_KEY;
}

static int procs_parent(void *ctx, int row)
{
	const struct procs_ctx *c = ctx;
	if (!c->rows[row])
		return -1;
	for (int i = 0; i < c->n; i++)
		if (c->rows[i] && c->rows[i]->pid == c->rows[row]->ppid && i != row)
			return i;
	return -1;
}

static void culprit_cell(struct procs_ctx *c, const struct ig_proc_stats *p, int col, char *buf,
			 size_t n, int *slot)
{
	char b[64];
	const struct ig_culprit *cu = NULL;
	if (col == C_PREEMPTOR && p->npreemptors > 0)
		cu = &p->preemptors[0];
	if (col == C_WAKER && p->nwakers > 0)
		cu = &p->wakers[0];
	if (!cu || c->t->life) {
		snprintf(buf, n, "-");
		*slot = TH_DIM;
		return;
	}
	char pct[16];
	snprintf(buf, n, "%s %s", tui_fmt_culprit(b, sizeof(b), cu->comm, cu->pid, p->pid),
		 fmt_pct(pct, sizeof(pct), fig_share(cu->share)));
	if (col == C_PREEMPTOR && cu->share >= 0.25)
		*slot = TH_PREEMPTED;
}

static void fold_cell(struct procs_ctx *c, int col, char *buf, size_t n, int *slot)
{
	*slot = TH_DIM;
	if (col == C_PID)
		snprintf(buf, n, "%c%d", c->t->unfold ? '-' : '+', c->nfold);
	else if (col == C_NAME)
		snprintf(buf, n, "%s", c->nfold == 1 ? "helper" : "helpers");
	else if (col == C_RATE)
		snprintf(buf, n, "0");
}

static void split_cell(struct procs_ctx *c, const struct ig_proc_stats *p, int col, char *buf,
		       size_t n, int *slot)
{
	struct fig_split sp;
	fig_split(shown_parts(c->t, p), &sp);
	int k = col == C_GPU ? FIG_GPU : col == C_CPU ? FIG_CPU : col == C_PRE ? FIG_PRE : FIG_WAIT;
	fig_split_cell(buf, n, &sp, k);
	if (!sp.valid || (k == FIG_PRE && sp.pre_unknown))
		*slot = TH_DIM;
	else if (k == FIG_PRE && sp.share[k] >= 0.10)
		*slot = TH_PREEMPTED;
	else if (k == FIG_WAIT && sp.share[k] >= 0.25)
		*slot = TH_BLOCKED;
}

static void cell_cb(void *ctx, int row, int col, char *buf, size_t n, int *slot)
{
	struct procs_ctx *c = ctx;
	const struct ig_proc_stats *p = c->rows[row];
	if (!p) {
		fold_cell(c, col, buf, n, slot);
		return;
	}
	switch (col) {
	case C_PID:
		snprintf(buf, n, "%u", p->pid);
		break;
	case C_NAME: {
		int depth = c->tb->cell_depth;
		snprintf(buf, n, "%*s%s%.*s%s", depth > 0 ? 2 * (depth - 1) : 0, "",
			 depth > 0 ? (c->t->ascii ? "`-" : "\u2514\u2500") : "", IG_COMM_LEN,
			 p->comm[0] ? p->comm : "?", p->pid == (uint32_t)getpid() ? " (self)" : "");
		int sev = snap_severity(c->t->snap, 0, p->pid);
		if (p->exited || c->helper[row])
			*slot = TH_DIM;
		else if (sev >= 0)
			*slot = sev_slot(sev);
		break;
	}
	case C_CONT:
		snprintf(buf, n, "%s", tui_container(p));
		break;
	case C_RATE:
		fmt_rate(buf, n, tui_rate(c->t, p->calls_win, p->calls_life));
		if (!p->cuda)
			*slot = TH_DIM;
		break;
	case C_GPU:
	case C_CPU:
	case C_PRE:
	case C_WAIT:
		split_cell(c, p, col, buf, n, slot);
		break;
	case C_PREEMPTOR:
	case C_WAKER:
		culprit_cell(c, p, col, buf, n, slot);
		break;
	case C_MEM:
		fmt_bytes(buf, n, c->t->life ? p->page_bytes_life : p->page_bytes_win);
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
	const struct ig_proc_stats *p = c->rows[row];
	struct fig_split sp;
	*ok = 1;
	if (!p)
		return col == C_PID ? -1e12 : -1; /* the fold row last */
	fig_split(shown_parts(c->t, p), &sp);
	switch (col) {
	case C_PID:
		return -(double)p->pid; /* smallest first */
	case C_RATE:
		return tui_rate(c->t, p->calls_win, p->calls_life) + (p->cuda ? 1e-9 : 0);
	case C_GPU:
		return sp.share[FIG_GPU];
	case C_CPU:
		return sp.share[FIG_CPU];
	case C_PRE:
		return sp.pre_unknown ? -1 : sp.share[FIG_PRE];
	case C_WAIT:
		return sp.share[FIG_WAIT];
	case C_PREEMPTOR:
		return p->npreemptors ? p->preemptors[0].share : -1;
	case C_WAKER:
		return p->nwakers ? p->wakers[0].share : -1;
	case C_MEM:
		return (double)(c->t->life ? p->page_bytes_life : p->page_bytes_win);
	case C_THREADS:
		return p->threads;
	case C_GPUMEM:
		return p->gpu_mem_known ? (double)p->gpu_mem_bytes : -1;
	}
	*ok = 0;
	return 0;
}

uint64_t procs_selected_pid(struct tui *t)
{
	uint64_t k = list_selected(&t->stack[0].lists[1]);
	return k == FOLD_KEY ? 0 : k;
}

/* The compact "where the time goes" of the selected process, one row;
 * while a mark is set, a shorter bar (now) and the parts as mark→now. */
static void procs_footer(struct tui *t, const struct tui_rect *r, int y)
{
	char a[64];
	uint64_t pid = procs_selected_pid(t);
	const struct ig_proc_stats *p = NULL;
	for (int i = 0; i < t->snap->nprocs; i++)
		if (t->snap->procs[i].pid == pid)
			p = &t->snap->procs[i];
	/* on the folded helpers: the busiest CUDA process (the model's first) */
	if (!p && t->snap->nprocs && t->snap->procs[0].cuda)
		p = &t->snap->procs[0];
	draw_fill(t, r, y, TH_NORMAL);
	if (!p) {
		draw_text(t, r, y, 1, -1, TH_DIM,
			  "select a process: where its time goes shows here");
		return;
	}
	int x =
	    1 + draw_text(t, r, y, 1, -1, TH_NORMAL, tui_fmt_proc(a, sizeof(a), p->comm, p->pid));
	x += draw_text(t, r, y, x, -1, TH_NORMAL, " ");
	const struct ig_time_parts *then = mark_parts(t, p->pid);
	int bw = then ? r->w / 10 : r->w / 4;
	if (bw > 30)
		bw = 30;
	const struct ig_time_parts *parts = shown_parts(t, p);
	if (then) {
		if (parts->wall_ns)
			timebar_draw(t, r, y, x, bw, parts);
		else
			bw = -1;
		timebar_legend_cmp(t, r, y, x + bw + 1, r->w - x - bw - 1, then, parts, 1);
		return;
	}
	if (!parts->wall_ns) {
		draw_text(t, r, y, x, -1, TH_DIM, "no feeding thread in the window");
		return;
	}
	timebar_draw(t, r, y, x, bw, parts);
	timebar_legend(t, r, y, x + bw + 1, r->w - x - bw - 1, parts, 1);
}

static void procs_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r, int focused)
{
	static struct procs_ctx c;
	struct tui_table tb = {
	    .cols = procs_cols,
	    .ncols = C_N,
	    .ctx = &c,
	    .key = procs_key,
	    .cell = cell_cb,
	    .num = num_cb,
	    .parent = t->tree ? procs_parent : NULL,
	    .hide = t->hidden[TBL_PROCS],
	    .empty = "no traced process yet",
	};
	c.t = t;
	c.tb = &tb;
	procs_rows(t, &c);
	tb.nrows = c.n;
	struct tui_rect tr = *r;
	int footer = r->h >= 4;
	if (footer)
		tr.h--;
	const struct tui_table_box box = table_draw(
	    t, v, &tb, &v->lists[1], &tr, focused,
	    t->tree ? "tree; % of feeding threads' wall time" : "% of feeding threads' wall time");
	tui_hit_table(t, v, &v->lists[1], &box);
	if (footer)
		procs_footer(t, r, r->h - 1);
}

static int procs_want(struct tui *t)
{
	static struct procs_ctx c;
	c.t = t;
	procs_rows(t, &c);
	return c.n + 2;
}

static int procs_key_cb(struct tui *t, struct tui_view *v, int action, int key)
{
	if (action != ACT_ENTER)
		return 0;
	uint64_t pid = list_selected(&v->lists[1]);
	if (pid == FOLD_KEY) {
		t->unfold = !t->unfold;
		tui_message(t, t->unfold
				   ? "helper processes unfolded (Enter on their row folds them)"
				   : "helper processes folded");
		return TF_REDRAW | TF_RELAYOUT;
	}
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
