/* The fleet screen's header and its table: a row per host (and, under a
 * host with several traced processes, a row per process), worst first as
 * fleet_order() says, the straggler's host marked with a character and a
 * colour; a host that is not live says why across its number columns.
 * Columns drop by priority as the terminal narrows (tui_cols_fit2 through
 * table_draw), and every cell is cut by the viewer's rules (at a word,
 * with an ellipsis, never inside a number). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect/detect.h"
#include "fleet_int.h"

/* clang-format off */
enum {
	F_HOST, F_STATE, F_GPU, F_CPU, F_PRE, F_WAIT, F_OP, F_P99, F_CHG, F_UTIL, F_MEM, F_NCCL,
	F_RANK, F_DROPS, F_CHAIN, F_NAME, F_N,
};

const struct tui_col fleet_cols[F_N] = {
	[F_HOST] = { "HOST", 6, 0, 0, 'l', 1,
		"the host as given to --ssh (without the user); under a host with several traced "
		"processes, one row per process; the straggler's host is marked \u25b6 (> in "
		"ASCII) and red" },
	[F_STATE] = { "STATE", 11, 0, 0, 'l', 0,
		"live, connecting, stale (no frame for 3 intervals), unreachable (retried), "
		"refused (host key or authentication), failed (cannot run there), ended; a host "
		"that is not live says why instead of its numbers" },
	[F_GPU] = { "GPU%", 5, 0, 2, 'r', 0,
		"share of the feeding threads' wall time waiting for the GPU (as the viewer's "
		"processes pane; GPU%+CPU%+PRE%+WAIT% = 100%)" },
	[F_CPU] = { "CPU%", 5, 0, 3, 'r', 0,
		"share of the feeding threads' wall time running on the CPU" },
	[F_PRE] = { "PRE%", 5, 0, 2, 'r', 0,
		"share of the feeding threads' wall time preempted (CPU contention); ? when not "
		"known there" },
	[F_WAIT] = { "WAIT%", 5, 0, 3, 'r', 0,
		"share of the feeding threads' wall time asleep between calls (I/O, a loader, a "
		"lock)" },
	[F_OP] = { "TOP OP", 12, 0, 2, 'l', 0,
		"the op with the most time in the host's window (its busiest process's)" },
	[F_P99] = { "P99", 7, 0, 1, 'r', 0, "the top op's p99 over the window" },
	[F_CHG] = { "CHG", 6, 0, 3, 'r', 0,
		"the top op's p99 against the frame before: +12% slower, -8% faster, 12x; - none" },
	[F_UTIL] = { "GPU", 4, 0, 4, 'r', 0,
		"GPU utilisation NVML reports there, the mean of the devices ('-': no NVML)" },
	[F_MEM] = { "MEM", 8, 0, 5, 'r', 0,
		"GPU memory used there, all devices, from NVML ('-': no NVML)" },
	[F_NCCL] = { "NCCL WAIT", 9, 0, 2, 'r', 0,
		"mean wait of an NCCL operation on the host's ranks over the window ('-': no NCCL "
		"rank)" },
	[F_RANK] = { "RANK", 4, 0, 3, 'r', 1,
		"the host's NCCL ranks, rank/nranks; red: the rank the others wait for" },
	[F_DROPS] = { "DROPS", 6, 0, 4, 'r', 0,
		"events the host's collector dropped since it started (kernel and user)" },
	[F_CHAIN] = { "WORST CHAIN", 30, 300, 0, 'l', 0,
		"the host's worst active chain: severity, class, impact (share of the feeding "
		"threads' wall time), culprit; on a process row, that process's chain" },
	/* never shown: what the filter matches a process row by */
	[F_NAME] = { "NAME", 4, 0, 9, 'l', 0, "the host's name" },
};
const int fleet_ncols = F_N;
/* clang-format on */

const char *fleet_sort_name(int sort)
{
	static const char *const names[FSORT_N] = {"worst first", "by name", "by p99"};
	return sort >= 0 && sort < FSORT_N ? names[sort] : "?";
}

/* --- the rows ------------------------------------------------------------------ */

static struct fleet_ui *cmp_u;

static int cmp_name(const void *a, const void *b)
{
	const struct fleet_host *x = fleet_host(cmp_u->f, *(const int *)a);
	const struct fleet_host *y = fleet_host(cmp_u->f, *(const int *)b);
	int c = strcmp(x->name, y->name);
	return c ? c : *(const int *)a - *(const int *)b;
}

/* The largest p99 of a live host's processes, 0 none. */
static uint64_t host_p99(const struct fleet_host *h)
{
	uint64_t m = 0;
	for (int i = 0; h->state == FLEET_LIVE && i < h->nprocs; i++)
		if (h->procs[i].p99_ns > m)
			m = h->procs[i].p99_ns;
	return m;
}

static int cmp_p99(const void *a, const void *b)
{
	uint64_t x = host_p99(fleet_host(cmp_u->f, *(const int *)a));
	uint64_t y = host_p99(fleet_host(cmp_u->f, *(const int *)b));
	if (x != y)
		return x > y ? -1 : 1;
	return cmp_name(a, b);
}

/* The process rows under a host: one per traced process of a live host
 * with several. */
static int proc_rows(const struct fleet_host *h)
{
	return h->state == FLEET_LIVE && h->nprocs > 1 ? h->nprocs : 0;
}

void fleet_ui_rows(struct fleet_ui *u)
{
	static int idx[FLEET_MAX_HOSTS];
	int n = fleet_nhosts(u->f);
	if (n > FLEET_MAX_HOSTS)
		n = FLEET_MAX_HOSTS;
	if (u->sort == FSORT_WORST) {
		static unsigned char seen[FLEET_MAX_HOSTS];
		int k = fleet_order(u->f, idx, n);
		k = k < 0 ? 0 : k > n ? n : k;
		memset(seen, 0, sizeof(seen));
		for (int j = 0; j < k; j++)
			if (idx[j] >= 0 && idx[j] < n)
				seen[idx[j]] = 1;
		for (int i = 0; i < n && k < n; i++) /* a host it left out: after, in order */
			if (!seen[i])
				idx[k++] = i;
	} else {
		for (int i = 0; i < n; i++)
			idx[i] = i;
		cmp_u = u;
		qsort(idx, (size_t)n, sizeof(idx[0]), u->sort == FSORT_NAME ? cmp_name : cmp_p99);
	}
	for (int i = 0; i < n; i++)
		u->rank[idx[i]] = i;
	/* the process rows only while every row fits in a table (TUI_MAX_ROWS):
	 * else the hosts alone, none of them left out */
	int all = n;
	for (int i = 0; i < n; i++)
		all += proc_rows(fleet_host(u->f, i));
	u->nrows = 0;
	for (int i = 0; i < n; i++) {
		int k = all <= TUI_MAX_ROWS ? proc_rows(fleet_host(u->f, i)) : 0;
		u->rows[u->nrows++] = (struct fleet_row){i, -1};
		for (int p = 0; p < k; p++)
			u->rows[u->nrows++] = (struct fleet_row){i, p};
	}
	fleet_straggler(u->f, &u->sg);
}

/* --- cells --------------------------------------------------------------------- */

static int sev_of(const char *s)
{
	if (!strcmp(s, "HIGH"))
		return IG_SEV_HIGH;
	if (!strcmp(s, "MEDIUM"))
		return IG_SEV_MEDIUM;
	if (!strcmp(s, "LOW"))
		return IG_SEV_LOW;
	if (!strcmp(s, "INFO"))
		return IG_SEV_INFO;
	return -1;
}

static int state_slot(enum fleet_state s)
{
	switch (s) {
	case FLEET_LIVE:
		return TH_METER_OK;
	case FLEET_STALE:
		return TH_ALERT_MEDIUM;
	case FLEET_RETRY:
	case FLEET_REFUSED:
	case FLEET_FAILED:
		return TH_ERROR;
	default:
		return TH_DIM;
	}
}

/* Why a host is not live, one line. */
static void why_cell(const struct fleet_host *h, char *buf, size_t n)
{
	uint64_t now = tui_now_ms();
	const char *why = h->why;
	if (!why[0])
		why = h->state == FLEET_CONNECTING ? "connecting: waiting for its hello"
		      : h->state == FLEET_ENDED	   ? "the remote session ended"
		      : h->state == FLEET_STALE	   ? "no frame lately"
						   : fleet_state_name(h->state);
	size_t o = (size_t)snprintf(buf, n, "%s", why);
	if ((h->state == FLEET_RETRY || h->state == FLEET_REFUSED) && h->next_try_ms > now &&
	    o < n) {
		char age[32];
		snprintf(
		    buf + o, n - o, " (again in %s)",
		    fmt_age(age, sizeof(age), (h->next_try_ms - now + 999) / 1000 * 1000000000ull));
	}
}

/* "HIGH cpu_contention 42% stress-ng[4711]". */
static void chain_cell(const struct fleet_chain *c, char *buf, size_t n, int *slot)
{
	char pct[16];
	if (!c->cls[0]) {
		snprintf(buf, n, "-");
		*slot = TH_DIM;
		return;
	}
	size_t o = (size_t)snprintf(buf, n, "%s %s %s", c->severity, c->cls,
				    fmt_pct(pct, sizeof(pct), c->impact));
	if (c->culprit_pid && c->culprit_pid == c->pid && o < n)
		snprintf(buf + o, n - o, " own threads");
	else if (c->culprit_pid && o < n)
		snprintf(buf + o, n - o, " %.16s[%u]", c->culprit_comm[0] ? c->culprit_comm : "?",
			 c->culprit_pid);
	int sev = sev_of(c->severity);
	*slot = sev >= 0 ? sev_slot(sev) : TH_NORMAL;
}

/* The chain of process p of h (its pid's first), NULL when none. */
static const struct fleet_chain *proc_chain(const struct fleet_host *h, const struct fleet_proc *p)
{
	for (int i = 0; i < h->nchains && i < FLEET_MAX_CHAINS; i++)
		if (h->chains[i].pid == p->pid && h->chains[i].cls[0])
			return &h->chains[i];
	return NULL;
}

static void share_cell(double pct, int col, char *buf, size_t n, int *slot)
{
	if (pct < 0) {
		snprintf(buf, n, "?");
		*slot = TH_DIM;
		return;
	}
	fmt_pct(buf, n, pct > 100 ? 1.0 : pct / 100.0);
	if (col == F_PRE && pct >= 10)
		*slot = TH_PREEMPTED;
	else if (col == F_WAIT && pct >= 25)
		*slot = TH_BLOCKED;
}

static void change_cell(const struct fleet_proc *p, char *buf, size_t n, int *slot)
{
	if (!p->p99_ns || !p->p99_prev_ns) {
		snprintf(buf, n, "-");
		*slot = TH_DIM;
		return;
	}
	double r = (double)p->p99_ns / (double)p->p99_prev_ns;
	if (r >= 10)
		snprintf(buf, n, "%.0fx", r);
	else
		snprintf(buf, n, "%+.0f%%", (r - 1) * 100);
	*slot = r >= 1.5 ? TH_P99_CRIT : r >= 1.2 ? TH_P99_WARN : TH_NORMAL;
}

/* The cells of a process's own numbers (the host's row when it has one). */
static void proc_cell(const struct fleet_proc *p, int col, char *buf, size_t n, int *slot)
{
	switch (col) {
	case F_GPU:
		share_cell(p->gpu_pct, col, buf, n, slot);
		break;
	case F_CPU:
		share_cell(p->cpu_pct, col, buf, n, slot);
		break;
	case F_PRE:
		share_cell(p->pre_pct, col, buf, n, slot);
		break;
	case F_WAIT:
		share_cell(p->wait_pct, col, buf, n, slot);
		break;
	case F_OP:
		snprintf(buf, n, "%s", p->top_op[0] ? p->top_op : "-");
		if (!p->top_op[0])
			*slot = TH_DIM;
		break;
	case F_P99:
		if (p->p99_ns)
			fmt_ns(buf, n, p->p99_ns);
		else
			snprintf(buf, n, "-"), *slot = TH_DIM;
		break;
	case F_CHG:
		change_cell(p, buf, n, slot);
		break;
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* "3/4", "0-7/64" (a run), "0,2/4"; red when the straggler rank is here. */
static void rank_cell(struct fleet_ui *u, int hi, const struct fleet_host *h, char *buf, size_t n,
		      int *slot)
{
	uint32_t r[FLEET_MAX_RANKS];
	int k = h->nranks < FLEET_MAX_RANKS ? h->nranks : FLEET_MAX_RANKS;
	size_t o = 0;
	buf[0] = 0;
	if (k <= 0) {
		snprintf(buf, n, "-");
		*slot = TH_DIM;
		return;
	}
	for (int i = 0; i < k; i++) {
		r[i] = h->ranks[i].rank;
		if (u->sg.found && u->sg.host == hi && u->sg.rank == r[i])
			*slot = TH_ALERT_HIGH;
	}
	qsort(r, (size_t)k, sizeof(r[0]), cmp_u32);
	for (int i = 0; i < k && o < n;) {
		int j = i;
		while (j + 1 < k && r[j + 1] == r[j] + 1)
			j++;
		if (j > i)
			o += (size_t)snprintf(buf + o, n - o, "%s%u-%u", i ? "," : "", r[i], r[j]);
		else
			o += (size_t)snprintf(buf + o, n - o, "%s%u", i ? "," : "", r[i]);
		i = j + 1;
	}
	if (o < n)
		snprintf(buf + o, n - o, "/%u", h->ranks[0].nranks);
}

/* The host's own cells: the state, the devices, NCCL, drops. */
static void host_cell(struct fleet_ui *u, int hi, const struct fleet_host *h, int col, char *buf,
		      size_t n, int *slot)
{
	char a[32];
	switch (col) {
	case F_STATE:
		snprintf(buf, n, "%s", fleet_state_name(h->state));
		*slot = state_slot(h->state);
		break;
	case F_UTIL:
		if (h->gpu.n)
			snprintf(buf, n, "%.0f%%", h->gpu.util_pct);
		else
			snprintf(buf, n, "-"), *slot = TH_DIM;
		break;
	case F_MEM:
		if (h->gpu.n)
			fmt_bytes(buf, n, h->gpu.mem_used);
		else
			snprintf(buf, n, "-"), *slot = TH_DIM;
		break;
	case F_NCCL: {
		uint64_t sum = 0;
		for (int i = 0; i < h->nranks && i < FLEET_MAX_RANKS; i++)
			sum += h->ranks[i].wait_mean_ns;
		if (h->nranks)
			fmt_ns(buf, n, sum / (uint64_t)h->nranks);
		else
			snprintf(buf, n, "-"), *slot = TH_DIM;
		break;
	}
	case F_RANK:
		rank_cell(u, hi, h, buf, n, slot);
		break;
	case F_DROPS:
		snprintf(buf, n, "%s", fmt_count(a, sizeof(a), h->drops, 6));
		*slot = h->drops ? TH_DROPS_BAD : TH_DROPS_OK;
		break;
	case F_CHAIN:
		chain_cell(&h->worst, buf, n, slot);
		break;
	default: /* a process's numbers: the only one's, or none to show */
		if (h->nprocs == 1)
			proc_cell(&h->procs[0], col, buf, n, slot);
		else if (col == F_OP)
			snprintf(buf, n, h->nprocs ? "%d processes" : "no CUDA process", h->nprocs),
			    *slot = TH_DIM;
		break;
	}
}

static void cell_cb(void *ctx, int row, int col, char *buf, size_t n, int *slot)
{
	struct fleet_ui *u = ctx;
	const struct fleet_row *fr = &u->rows[row];
	const struct fleet_host *h = fleet_host(u->f, fr->host);
	if (col == F_NAME) {
		snprintf(buf, n, "%s", h->name);
		return;
	}
	if (fr->proc < 0 && col == F_HOST) {
		int mark = u->sg.found && u->sg.host == fr->host;
		snprintf(buf, n, "%s %s", mark ? (u->t->ascii ? ">" : "\u25b6") : " ", h->name);
		if (mark)
			*slot = TH_ALERT_HIGH;
		return;
	}
	if (fr->proc < 0 && h->state != FLEET_LIVE && col >= F_GPU) {
		if (col == F_GPU) /* the span (span_cb): why, not the numbers */
			why_cell(h, buf, n);
		*slot = state_slot(h->state) == TH_METER_OK ? TH_NORMAL : state_slot(h->state);
		return;
	}
	if (fr->proc < 0) {
		host_cell(u, fr->host, h, col, buf, n, slot);
		return;
	}
	const struct fleet_proc *p = &h->procs[fr->proc];
	const struct fleet_chain *c;
	switch (col) {
	case F_HOST:
		snprintf(buf, n, "  %s%.16s[%u]", u->t->ascii ? "`-" : "\u2514\u2500",
			 p->comm[0] ? p->comm : "?", p->pid);
		if (p->exited)
			*slot = TH_DIM;
		break;
	case F_STATE:
		snprintf(buf, n, "%s", p->exited ? "exited" : "");
		*slot = TH_DIM;
		break;
	case F_CHAIN:
		if ((c = proc_chain(h, p)))
			chain_cell(c, buf, n, slot);
		break;
	default:
		proc_cell(p, col, buf, n, slot);
		break;
	}
}

static double num_cb(void *ctx, int row, int col, int *ok)
{
	struct fleet_ui *u = ctx;
	const struct fleet_row *fr = &u->rows[row];
	const struct fleet_host *h = fleet_host(u->f, fr->host);
	const struct fleet_proc *p = fr->proc >= 0    ? &h->procs[fr->proc]
				     : h->nprocs == 1 ? &h->procs[0]
						      : NULL;
	*ok = 1;
	if (col == F_HOST) /* the sort's order; a host's processes in the host's order */
		return fr->proc < 0 ? -(double)u->rank[fr->host] : -(double)fr->proc;
	if (h->state != FLEET_LIVE && col >= F_GPU && col != F_NAME)
		return -2;
	switch (col) {
	case F_GPU:
		return p ? p->gpu_pct : -1;
	case F_CPU:
		return p ? p->cpu_pct : -1;
	case F_PRE:
		return p ? p->pre_pct : -1;
	case F_WAIT:
		return p ? p->wait_pct : -1;
	case F_P99:
		return p ? (double)p->p99_ns : -1;
	case F_CHG:
		return p && p->p99_prev_ns ? (double)p->p99_ns / (double)p->p99_prev_ns : -1;
	case F_UTIL:
		return h->gpu.n ? h->gpu.util_pct : -1;
	case F_MEM:
		return h->gpu.n ? (double)h->gpu.mem_used : -1;
	case F_DROPS:
		return (double)h->drops;
	case F_CHAIN:
		return h->worst.cls[0] ? h->worst.impact : -1;
	}
	*ok = 0;
	return 0;
}

static uint64_t key_cb(void *ctx, int row)
{
	const struct fleet_ui *u = ctx;
	return FLEET_ROW_KEY(u->rows[row].host, u->rows[row].proc);
}

static int parent_cb(void *ctx, int row)
{
	const struct fleet_ui *u = ctx;
	if (u->rows[row].proc < 0)
		return -1;
	int r = row;
	while (r > 0 && u->rows[r].proc >= 0)
		r--;
	return r;
}

/* A host that is not live is one cell from its first number on: why. */
static int span_cb(void *ctx, int row)
{
	const struct fleet_ui *u = ctx;
	const struct fleet_row *fr = &u->rows[row];
	return fr->proc < 0 && fleet_host(u->f, fr->host)->state != FLEET_LIVE ? F_GPU : -1;
}

/* The widest cell of column col over the rows, within [lo, hi]. */
static int widest(struct fleet_ui *u, int col, int lo, int hi)
{
	int w = lo;
	for (int i = 0; i < u->nrows && w < hi; i++) {
		char buf[256], clean[256];
		int slot = TH_NORMAL;
		buf[0] = 0;
		if (span_cb(u, i) >= 0)
			continue;
		cell_cb(u, i, col, buf, sizeof(buf), &slot);
		int cw = tui_text_clean(clean, sizeof(clean), buf, -1, u->t->ascii);
		if (cw > w)
			w = cw;
	}
	return w < hi ? w : hi;
}

void fleet_ui_table(struct fleet_ui *u, const struct tui_rect *r)
{
	static struct tui_col cols[F_N];
	struct tui *t = u->t;
	/* the op and the chain as wide as what they say now (a culprit whole
	 * where it fits), before the columns of less priority take the room */
	memcpy(cols, fleet_cols, sizeof(cols));
	cols[F_OP].width = (short)widest(u, F_OP, (int)strlen(fleet_cols[F_OP].title), 22);
	cols[F_CHAIN].width = (short)widest(u, F_CHAIN, (int)strlen(fleet_cols[F_CHAIN].title), 48);
	struct tui_view *v = &t->stack[0];
	struct tui_list *l = &v->lists[0];
	struct tui_table tb = {
	    .cols = cols,
	    .ncols = F_N,
	    .ctx = u,
	    .nrows = u->nrows,
	    .key = key_cb,
	    .cell = cell_cb,
	    .num = num_cb,
	    .parent = parent_cb,
	    .span = span_cb,
	    .hide = 1u << F_NAME,
	    .empty = "no host",
	};
	if (!l->moved) /* until the user moves it, the selection is the worst host */
		l->sel = l->top = 0, l->sel_key = 0;
	const struct tui_table_box box =
	    table_draw(t, v, &tb, l, r, 1,
		       l->sort_col == F_HOST && !l->sort_inv ? fleet_sort_name(u->sort) : "");
	tui_hit_table(t, v, l, &box);
	/* the straggler's marker keeps its colour on the selected row too */
	for (int d = l->top; u->sg.found && d < l->n && d - l->top < l->page; d++)
		if (l->keys[d] == FLEET_ROW_KEY(u->sg.host, -1))
			draw_text(t, r, 1 + d - l->top, 0, 1, TH_ALERT_HIGH,
				  t->ascii ? ">" : "\u25b6");
}

/* --- the header ------------------------------------------------------------------- */

struct piece {
	char text[160];
	int slot;
};

/* "fleet: 6 hosts, 4 live, 1 unreachable, 1 refused", a piece a count. */
static int count_pieces(struct fleet_ui *u, struct piece *p, int max)
{
	static const enum fleet_state order[] = {FLEET_LIVE,  FLEET_CONNECTING, FLEET_STALE,
						 FLEET_RETRY, FLEET_REFUSED,	FLEET_FAILED,
						 FLEET_ENDED};
	int count[8] = {0}, n = fleet_nhosts(u->f), k = 0, last = -1;
	for (int i = 0; i < n; i++) {
		int s = (int)fleet_host(u->f, i)->state;
		if (s >= 0 && s < 8)
			count[s]++;
	}
	snprintf(p[k].text, sizeof(p[k].text), "fleet: %d host%s", n, n == 1 ? "" : "s");
	p[k++].slot = TH_HEADER_LABEL;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]) && k < max; i++) {
		if (!count[order[i]])
			continue;
		snprintf(p[k].text, sizeof(p[k].text), "%d %s", count[order[i]],
			 fleet_state_name(order[i]));
		p[k].slot = state_slot(order[i]) == TH_DIM ? TH_HEADER : state_slot(order[i]);
		last = k++;
	}
	/* the commas: after every piece but the last count */
	for (int i = 0; i < k; i++)
		if (i < last)
			strncat(p[i].text, ",", sizeof(p[i].text) - strlen(p[i].text) - 1);
	return k;
}

/* "· straggler rank 3 (comm 0x1a2b3c) on h2: last in 47/50 collectives,
 * +12.3ms (clock ±0.2ms)". */
static int straggler_pieces(struct fleet_ui *u, struct piece *p, int max)
{
	const struct fleet_straggler *sg = &u->sg;
	char a[32], b[32];
	int k = 0, nccl = 0;
	if (max < 3)
		return 0;
	if (!sg->found) {
		for (int i = 0; i < fleet_nhosts(u->f); i++)
			nccl |= fleet_host(u->f, i)->nranks > 0;
		if (!nccl)
			return 0;
		snprintf(p[0].text, sizeof(p[0].text), "\u00b7 no straggler found yet");
		p[0].slot = TH_DIM;
		return 1;
	}
	const struct fleet_host *h = fleet_host(u->f, sg->host);
	snprintf(p[k].text, sizeof(p[k].text),
		 "\u00b7 straggler rank %u (comm 0x%x) on %.64s:", sg->rank, sg->key,
		 h ? h->name : "?");
	p[k++].slot = TH_ALERT_HIGH;
	snprintf(p[k].text, sizeof(p[k].text), "last in %llu/%llu collectives,",
		 (unsigned long long)sg->last_count, (unsigned long long)sg->collectives);
	p[k++].slot = TH_HEADER;
	if (sg->unc_ns)
		snprintf(b, sizeof(b), "\u00b1%s", fmt_ns(a, sizeof(a), sg->unc_ns));
	else
		snprintf(b, sizeof(b), "not measured");
	snprintf(p[k].text, sizeof(p[k].text), "+%s (clock %s)",
		 fmt_ns(a, sizeof(a), sg->late_mean_ns), b);
	p[k++].slot = TH_HEADER;
	return k;
}

int fleet_ui_header(struct fleet_ui *u, const struct tui_rect *r, int draw)
{
	struct piece p[16];
	int n = count_pieces(u, p, 12);
	n += straggler_pieces(u, p + n, 16 - n);
	int x = 0, y = 0;
	if (draw)
		draw_fill(u->t, r, 0, TH_HEADER);
	for (int i = 0; i < n; i++) {
		char clean[256];
		int w = tui_text_clean(clean, sizeof(clean), p[i].text, -1, u->t->ascii);
		if (x > 0 && x + 1 + w > r->w) {     /* the piece goes whole on the next row */
			if (draw && y + 1 >= r->h) { /* no next row: a mark says there is more */
				int mw = u->t->ascii ? 3 : 1;
				draw_text(u->t, r, y, x + 1 + mw <= r->w ? x + 1 : r->w - mw, -1,
					  TH_DIM, u->t->ascii ? "..." : "\u2026");
				break;
			}
			y++, x = 2;
			if (draw)
				draw_fill(u->t, r, y, TH_HEADER);
		} else if (x > 0) {
			x++;
		}
		/* a piece wider than the row is cut at a word (draw_text) */
		if (draw)
			draw_text(u->t, r, y, x, -1, p[i].slot, clean);
		x += w < r->w - x ? w : r->w - x;
	}
	return y + 1;
}
