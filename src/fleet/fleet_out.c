/* The fleet's two outputs (docs/fleet.md, docs/json.md "Fleet"): the text
 * table of --batch (a header, the straggler line, a row per host and per
 * process, worst first) and the one-line JSON object of --json. Text from
 * the hosts is escaped on its way out (core/escape.h). */
#include "fleet/fleet_int.h"

#include "core/escape.h"
#include "core/fmt.h"
#include "core/json.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int count_live(const struct fleet *f)
{
	int n = 0;
	for (int i = 0; i < f->n; i++)
		n += f->hosts[i].state == FLEET_LIVE;
	return n;
}

/* "rank 3 of comm 0x1a2b3c on gpu4 (pid 812): last in 47 of 50
 * collectives, 12.3ms after the median (clock ±0.2ms)" */
static void straggler_words(const struct fleet *f, char *buf, size_t len)
{
	const struct fleet_straggler *s = &f->strag;
	char late[32], unc[32], name[FLEET_NAME_LEN * 2];
	if (!s->found) {
		if (s->collectives)
			snprintf(buf, len,
				 "none (no rank last in most of %" PRIu64 " collectives joined)",
				 s->collectives);
		else
			snprintf(buf, len, "none (no NCCL collective seen on two ranks)");
		return;
	}
	esc_str(name, sizeof(name), f->hosts[s->host].name, 0);
	fmt_ns(late, sizeof(late), s->late_mean_ns);
	if (s->unc_ns)
		fmt_ns(unc, sizeof(unc), s->unc_ns);
	snprintf(buf, len,
		 "rank %u of comm 0x%x on %s (pid %u): last in %" PRIu64 " of %" PRIu64
		 " collectives, %s after the others' median (clock %s%s)",
		 s->rank, s->key, name, s->pid, s->last_count, s->collectives, late,
		 s->unc_ns ? "\u00b1" : "", s->unc_ns ? unc : "not measured");
}

static const char *pct(char *b, size_t n, double v)
{
	return fmt_pct(b, n, v < 0 ? -1 : v / 100);
}

/* The process columns: GPU% CPU% PRE% WAIT% OP P99 (change). */
static void proc_cols(const struct fleet_proc *p, char *buf, size_t len)
{
	char g[16], c[16], pr[16], w[16], op[40], p99[24], ch[24] = "";
	if (!p) {
		snprintf(buf, len, "%5s %5s %5s %5s %-24s %8s %-8s", "", "", "", "", "", "", "");
		return;
	}
	esc_str(op, sizeof(op), p->top_op[0] ? p->top_op : "-", ESC_FIELD);
	if (p->p99_ns)
		fmt_ns(p99, sizeof(p99), p->p99_ns);
	else
		snprintf(p99, sizeof(p99), "-");
	if (p->p99_ns && p->p99_prev_ns) {
		double d =
		    ((double)p->p99_ns - (double)p->p99_prev_ns) * 100 / (double)p->p99_prev_ns;
		snprintf(ch, sizeof(ch), "(%+.0f%%)", d);
	} else if (p->p99_ns) {
		snprintf(ch, sizeof(ch), "(new)");
	}
	snprintf(buf, len, "%5s %5s %5s %5s %-24.24s %8s %-8s", pct(g, sizeof(g), p->gpu_pct),
		 pct(c, sizeof(c), p->cpu_pct), pct(pr, sizeof(pr), p->pre_pct),
		 pct(w, sizeof(w), p->wait_pct), op, p99, ch);
}

/* CHAIN: "HIGH cpu_contention 71% by stress-ng[2231]", "-" none. */
static void chain_words(const struct fleet_chain *c, char *buf, size_t len)
{
	char imp[16], cul[40] = "", cc[40];
	if (!c->cls[0]) {
		snprintf(buf, len, "-");
		return;
	}
	if (c->culprit_pid || c->culprit_comm[0])
		snprintf(
		    cul, sizeof(cul), " by %s[%u]",
		    esc_str(cc, sizeof(cc), c->culprit_comm[0] ? c->culprit_comm : "?", ESC_FIELD),
		    c->culprit_pid);
	char sev[16], cls[48];
	snprintf(buf, len, "%s %s %s%s", esc_str(sev, sizeof(sev), c->severity, ESC_FIELD),
		 esc_str(cls, sizeof(cls), c->cls, ESC_FIELD), fmt_pct(imp, sizeof(imp), c->impact),
		 cul);
}

/* One row, without the spaces a blank last column leaves. */
static void put_row(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put_row(FILE *out, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	size_t n = strlen(line);
	while (n && line[n - 1] == ' ')
		line[--n] = 0;
	fprintf(out, "%s\n", line);
}

static void host_row(FILE *out, const struct fleet_host *h)
{
	char name[FLEET_NAME_LEN * 2 + 2], cols[160], util[16], mem[40], chain[160], drops[16];
	char u[16], t[16];
	snprintf(name, sizeof(name), "%s%s", h->straggler ? "*" : "", h->name);
	bool data = h->state == FLEET_LIVE || h->state == FLEET_STALE ||
		    (h->state == FLEET_ENDED && h->frames);
	if (!data) {
		put_row(out, "%-20s %-11s %s", name, fleet_state_name(h->state), h->why);
		return;
	}
	proc_cols(h->nprocs == 1 ? &h->procs[0] : NULL, cols, sizeof(cols));
	if (h->gpu.n)
		snprintf(util, sizeof(util), "%.0f%%", h->gpu.util_pct);
	else
		snprintf(util, sizeof(util), "-");
	if (h->gpu.n)
		snprintf(mem, sizeof(mem), "%s/%s", fmt_bytes(u, sizeof(u), h->gpu.mem_used),
			 fmt_bytes(t, sizeof(t), h->gpu.mem_total));
	else
		snprintf(mem, sizeof(mem), "-");
	chain_words(&h->worst, chain, sizeof(chain));
	fmt_count(drops, sizeof(drops), h->drops, 6);
	put_row(out, "%-20s %-11s %s %8s %-17s %-40s %6s", name, fleet_state_name(h->state), cols,
		util, mem, chain, drops);
	for (int k = 0; h->nprocs > 1 && k < h->nprocs; k++) {
		char pn[64], cm[40];
		snprintf(pn, sizeof(pn), "  %u/%s", h->procs[k].pid,
			 esc_str(cm, sizeof(cm), h->procs[k].comm, ESC_FIELD));
		proc_cols(&h->procs[k], cols, sizeof(cols));
		put_row(out, "%-20.20s %-11s %s", pn, h->procs[k].exited ? "exited" : "", cols);
	}
	if (h->state != FLEET_LIVE && h->why[0])
		put_row(out, "%-20s %-11s %s", "", "", h->why);
}

int fleet_print_text(FILE *out, const struct fleet *f)
{
	char s[400], clk[16];
	int *idx = malloc(sizeof(int) * (size_t)(f->n ? f->n : 1));
	if (!idx)
		return -1;
	int n = fleet_order(f, idx, f->n);
	straggler_words(f, s, sizeof(s));
	fprintf(out, "ingero-top fleet %s: %d of %d hosts live\n",
		fmt_clock(clk, sizeof(clk), fleet_now_ns()), count_live(f), f->n);
	fprintf(out, "straggler: %s\n", s);
	fprintf(out, "%-20s %-11s %5s %5s %5s %5s %-24s %8s %-8s %8s %-17s %-40s %6s\n", "HOST",
		"STATE", "GPU%", "CPU%", "PRE%", "WAIT%", "OP", "P99", "(change)", "GPU-UTIL",
		"MEM", "CHAIN", "DROPS");
	for (int k = 0; k < n; k++)
		host_row(out, &f->hosts[idx[k]]);
	fputc('\n', out);
	free(idx);
	return ferror(out) ? -1 : 0;
}

static json_t *pct_json(double v)
{
	return v < 0 ? json_null() : ig_json_num(v);
}

static json_t *procs_json(const struct fleet_host *h)
{
	json_t *a = json_array();
	int bad = !a;
	for (int k = 0; k < h->nprocs; k++) {
		const struct fleet_proc *p = &h->procs[k];
		json_t *o = json_object();
		bad |=
		    ig_json_set(o, "pid", json_integer(p->pid)) |
		    ig_json_set(o, "comm", ig_json_str(p->comm)) |
		    ig_json_set(o, "exited", json_boolean(p->exited)) |
		    ig_json_set(o, "calls_per_s", ig_json_num(p->calls_per_s)) |
		    ig_json_set(o, "gpu_pct", pct_json(p->gpu_pct)) |
		    ig_json_set(o, "cpu_pct", pct_json(p->cpu_pct)) |
		    ig_json_set(o, "pre_pct", pct_json(p->pre_pct)) |
		    ig_json_set(o, "wait_pct", pct_json(p->wait_pct)) |
		    ig_json_set(o, "top_op", p->top_op[0] ? ig_json_str(p->top_op) : json_null()) |
		    ig_json_set(o, "p99_ns", ig_json_u64(p->p99_ns)) |
		    ig_json_set(o, "p99_prev_ns", ig_json_u64(p->p99_prev_ns)) | ig_json_push(a, o);
	}
	if (bad) {
		json_decref(a);
		return NULL;
	}
	return a;
}

static json_t *chain_json(const struct fleet_chain *c)
{
	json_t *o = json_object();
	int bad = ig_json_set(o, "id", ig_json_str(c->id)) |
		  ig_json_set(o, "severity", ig_json_str(c->severity)) |
		  ig_json_set(o, "class", ig_json_str(c->cls)) |
		  ig_json_set(o, "op", ig_json_str(c->op)) |
		  ig_json_set(o, "pid", json_integer(c->pid)) |
		  ig_json_set(o, "comm", ig_json_str(c->comm)) |
		  ig_json_set(o, "culprit_pid", json_integer(c->culprit_pid)) |
		  ig_json_set(o, "culprit_comm", ig_json_str(c->culprit_comm)) |
		  ig_json_set(o, "impact", ig_json_num(c->impact)) |
		  ig_json_set(o, "summary", ig_json_str(c->summary)) |
		  ig_json_set(o, "advice", ig_json_str(c->advice));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *ranks_json(const struct fleet_host *h)
{
	json_t *a = json_array();
	int bad = !a;
	for (int k = 0; k < h->nranks; k++) {
		const struct fleet_rank *r = &h->ranks[k];
		json_t *o = json_object();
		bad |= ig_json_set(o, "pid", json_integer(r->pid)) |
		       ig_json_set(o, "key", json_integer(r->key)) |
		       ig_json_set(o, "rank", json_integer(r->rank)) |
		       ig_json_set(o, "nranks", json_integer(r->nranks)) |
		       ig_json_set(o, "ops_win", ig_json_u64(r->ops_win)) |
		       ig_json_set(o, "wait_mean_ns", ig_json_u64(r->wait_mean_ns)) |
		       ig_json_set(o, "wait_ns_win", ig_json_u64(r->wait_ns_win)) |
		       ig_json_push(a, o);
	}
	return bad ? (json_decref(a), NULL) : a;
}

static json_t *host_json(const struct fleet_host *h)
{
	json_t *o = json_object(), *chains = json_array(), *gpu = json_null(), *clock = json_null();
	int bad = !chains;
	for (int k = 0; k < h->nchains; k++)
		bad |= ig_json_push(chains, chain_json(&h->chains[k]));
	if (h->gpu.n) {
		gpu = json_object();
		bad |= ig_json_set(gpu, "n", json_integer(h->gpu.n)) |
		       ig_json_set(gpu, "util_pct", ig_json_num(h->gpu.util_pct)) |
		       ig_json_set(gpu, "mem_used", ig_json_u64(h->gpu.mem_used)) |
		       ig_json_set(gpu, "mem_total", ig_json_u64(h->gpu.mem_total));
	}
	if (h->unc_ns) {
		clock = json_object();
		bad |= ig_json_set(clock, "offset_ns", json_integer(h->offset_ns)) |
		       ig_json_set(clock, "unc_ns", ig_json_u64(h->unc_ns));
	}
	bad |= ig_json_set(o, "host", ig_json_str(h->name)) |
	       ig_json_set(o, "spec", ig_json_str(h->spec)) |
	       ig_json_set(o, "state", json_string(fleet_state_name(h->state))) |
	       ig_json_set(o, "why", ig_json_str(h->why)) |
	       ig_json_set(o, "version", ig_json_str(h->version)) |
	       ig_json_set(o, "hostname", ig_json_str(h->hostname)) |
	       ig_json_set(o, "straggler", json_boolean(h->straggler)) |
	       ig_json_set(o, "order", json_integer(h->score_rank)) |
	       ig_json_set(o, "frames", ig_json_u64(h->frames)) |
	       ig_json_set(o, "connects", ig_json_u64(h->connects)) |
	       ig_json_set(o, "events_per_s", ig_json_num(h->events_per_s)) |
	       ig_json_set(o, "drops", ig_json_u64(h->drops)) |
	       ig_json_set(o, "lines_dropped", ig_json_u64(h->lines_dropped)) |
	       ig_json_set(o, "arrivals_lost", ig_json_u64(h->arrivals_lost)) |
	       ig_json_set(o, "done", json_boolean(h->done)) | ig_json_set(o, "clock", clock) |
	       ig_json_set(o, "gpu", gpu) | ig_json_set(o, "procs", procs_json(h)) |
	       ig_json_set(o, "chains", chains) | ig_json_set(o, "ranks", ranks_json(h));
	return bad ? (json_decref(o), NULL) : o;
}

static json_t *straggler_json(const struct fleet *f)
{
	const struct fleet_straggler *s = &f->strag;
	if (!s->found)
		return json_null();
	json_t *o = json_object();
	int bad = ig_json_set(o, "key", json_integer(s->key)) |
		  ig_json_set(o, "rank", json_integer(s->rank)) |
		  ig_json_set(o, "nranks", json_integer(s->nranks)) |
		  ig_json_set(o, "host", ig_json_str(f->hosts[s->host].name)) |
		  ig_json_set(o, "pid", json_integer(s->pid)) |
		  ig_json_set(o, "collectives", ig_json_u64(s->collectives)) |
		  ig_json_set(o, "last_count", ig_json_u64(s->last_count)) |
		  ig_json_set(o, "late_mean_ns", ig_json_u64(s->late_mean_ns)) |
		  ig_json_set(o, "late_max_ns", ig_json_u64(s->late_max_ns)) |
		  ig_json_set(o, "unc_ns", ig_json_u64(s->unc_ns));
	return bad ? (json_decref(o), NULL) : o;
}

json_t *fout_json(const struct fleet *f)
{
	int *idx = malloc(sizeof(int) * (size_t)(f->n ? f->n : 1));
	json_t *o = json_object(), *hosts = json_array();
	int bad = !idx || !hosts;
	int n = idx ? fleet_order(f, idx, f->n) : 0;
	for (int k = 0; k < n; k++)
		bad |= ig_json_push(hosts, host_json(&f->hosts[idx[k]]));
	free(idx);
	bad |= ig_json_set(o, "type", json_string("fleet")) |
	       ig_json_set(o, "stream", json_integer(FLEET_STREAM_VERSION)) |
	       ig_json_set(o, "time_ns", ig_json_u64(fleet_now_ns())) |
	       ig_json_set(o, "live", json_integer(count_live(f))) |
	       ig_json_set(o, "total", json_integer(f->n)) | ig_json_set(o, "hosts", hosts) |
	       ig_json_set(o, "straggler", straggler_json(f));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *fout_chain_json(const struct fleet_chain *c)
{
	return chain_json(c);
}

void fout_straggler_words(const struct fleet *f, char *buf, size_t len)
{
	straggler_words(f, buf, len);
}

void fout_chain_words(const struct fleet_chain *c, char *buf, size_t len)
{
	chain_words(c, buf, len);
}

void fout_proc_cols(const struct fleet_proc *p, char *buf, size_t len)
{
	proc_cols(p, buf, len);
}

int fleet_print_json(FILE *out, const struct fleet *f)
{
	json_t *o = fout_json(f);
	int r = o ? ig_json_write_line(out, o) : -1;
	json_decref(o);
	return r;
}
