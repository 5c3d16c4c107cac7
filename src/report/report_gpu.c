/* The GPU device and NCCL parts of the batch frames: text sections and
 * JSON members, written only when the model has device samples or NCCL
 * operations (report.h). */
#include "report/report_gpu.h"

#include <stdio.h>
#include <string.h>

#include "core/escape.h"
#include "core/fmt.h"
#include "core/json.h"
#include "report/json_build.h"
#include "core/ops.h"
#include "model/model.h"

/* A device name or comm as one text column: escaped, blanks as '_'. */
static const char *column(char *b, size_t n, const char *name)
{
	char t[IG_COMM_LEN + 1];
	size_t l = strnlen(name, IG_COMM_LEN);
	memcpy(t, name, l);
	t[l] = 0;
	esc_str(b, n, l ? t : "-", ESC_FIELD);
	for (char *p = b; *p; p++)
		if (*p == ' ')
			*p = '_';
	return b;
}

/* "87%", or "-" without a value. */
static const char *pct_or(char *b, size_t n, int valid, unsigned v)
{
	if (valid)
		snprintf(b, n, "%u%%", v);
	else
		snprintf(b, n, "-");
	return b;
}

void report_gpu_text(FILE *f, const struct ig_model *m, int summary)
{
	struct ig_gpu_stats g[IG_GPU_MAX_DEVS];
	int n = model_gpus(m, g, IG_GPU_MAX_DEVS);
	char a[32], b[32], c[32], d[72], e[72], nm[IG_COMM_LEN * 4 + 1];
	if (n) {
		fprintf(f, "\n%-10s %-16s %-9s %-9s %-24s %-18s %-6s %s\n", "GPU", "NAME", "UTIL",
			"MEM-UTIL", "MEM-USED/TOTAL", "POWER/LIMIT", "TEMP", "SM");
		for (int i = 0; i < n; i++) {
			const struct ig_gpu_dev *v = &g[i].last;
			int mem = (v->valid & IG_GPU_V_MEM) != 0;
			if (mem)
				snprintf(d, sizeof(d), "%s/%s",
					 fmt_bytes(a, sizeof(a), v->mem_used),
					 fmt_bytes(b, sizeof(b), v->mem_total));
			else
				snprintf(d, sizeof(d), "-");
			snprintf(
			    e, sizeof(e), "%s/%s",
			    v->valid & IG_GPU_V_POWER
				? (snprintf(a, sizeof(a), "%.0fW", v->power_mw / 1000.0), a)
				: "-",
			    v->valid & IG_GPU_V_LIMIT
				? (snprintf(b, sizeof(b), "%.0fW", v->power_limit_mw / 1000.0), b)
				: "-");
			fprintf(f, "gpu %-6u %-16s util %-4s mem %-5s used %-19s power %-12s ",
				v->index, column(nm, sizeof(nm), v->name),
				pct_or(a, sizeof(a), v->valid & IG_GPU_V_UTIL, v->util_gpu_pct),
				pct_or(b, sizeof(b), v->valid & IG_GPU_V_UTIL, v->util_mem_pct), d,
				e);
			if (v->valid & IG_GPU_V_TEMP)
				fprintf(f, "temp %uC ", v->temp_c);
			else
				fprintf(f, "temp - ");
			if (v->valid & IG_GPU_V_CLOCK)
				fprintf(f, "sm %uMHz", v->sm_mhz);
			else
				fprintf(f, "sm -");
			if (g[i].util_gpu_win >= 0)
				fprintf(f, "  util_win %.0f%%", g[i].util_gpu_win);
			fprintf(f, "  age %s\n", fmt_age(c, sizeof(c), g[i].age_ns));
		}
	}
	struct ig_nccl_stats ops[IG_OP_MAX];
	int no = model_nccl_ops(m, ops, IG_OP_MAX);
	if (!no)
		return;
	fprintf(f, "\n%-34s %9s %12s %12s %10s %12s %s\n", "NCCL", "OPS", "BYTES", "BYTES/S",
		"DONE", "WAIT-MEAN", "WAIT-MAX");
	for (int i = 0; i < no; i++) {
		const struct ig_nccl_stats *s = &ops[i];
		uint64_t nops = summary ? s->ops_life : s->ops_win;
		uint64_t bytes = summary ? s->bytes_life : s->bytes_win;
		uint64_t done = summary ? s->done_life : s->done_win;
		uint64_t mean = summary ? s->wait_life.mean : s->wait_mean_win_ns;
		uint64_t max = summary ? s->wait_life.max : s->wait_max_win_ns;
		fprintf(f,
			"nccl %-29s ops %-8lu bytes %-9s %-10s done %-6lu wait mean %-8s max %s\n",
			s->name, (unsigned long)nops, fmt_bytes(a, sizeof(a), bytes),
			(snprintf(b, sizeof(b), "%s/s",
				  fmt_bytes(c, sizeof(c), (uint64_t)s->bytes_per_s)),
			 b),
			(unsigned long)done, done ? fmt_ns(d, sizeof(d), mean) : "-",
			done ? fmt_ns(e, sizeof(e), max) : "-");
	}
	struct ig_nccl_rank r[64];
	int nr = model_nccl_ranks(m, r, 64);
	for (int i = 0; i < nr; i++) {
		char rk[32];
		if (r[i].known)
			snprintf(rk, sizeof(rk), "%u/%u comm %06x", r[i].rank, r[i].nranks,
				 r[i].key);
		else
			snprintf(rk, sizeof(rk), "?");
		fprintf(f,
			"rank %-24s pid %-7u %-16s ops %-8lu done %-6lu wait mean %-8s sync %s\n",
			rk, r[i].pid, column(nm, sizeof(nm), r[i].comm),
			(unsigned long)r[i].ops_win, (unsigned long)r[i].done_win,
			r[i].done_win ? fmt_ns(a, sizeof(a), r[i].wait_mean_ns) : "-",
			fmt_ns(b, sizeof(b), r[i].sync_ns_win));
	}
}

static json_t *json_dev(const struct ig_gpu_stats *g)
{
	const struct ig_gpu_dev *v = &g->last;
	json_t *o = json_object();
	int bad = !o;
	bad |= JU(o, "index", v->index);
	bad |= JC(o, "name", v->name);
	bad |= JU(o, "ts_ns", v->ts_ns);
	bad |= JU(o, "age_ns", g->age_ns);
#define OPT(bit, key, val)                                                                         \
	bad |= ig_json_set(o, key, (v->valid & (bit)) ? ig_json_u64(val) : json_null())
	OPT(IG_GPU_V_UTIL, "util_gpu_pct", v->util_gpu_pct);
	OPT(IG_GPU_V_UTIL, "util_mem_pct", v->util_mem_pct);
	OPT(IG_GPU_V_MEM, "mem_used", v->mem_used);
	OPT(IG_GPU_V_MEM, "mem_total", v->mem_total);
	OPT(IG_GPU_V_POWER, "power_mw", v->power_mw);
	OPT(IG_GPU_V_LIMIT, "power_limit_mw", v->power_limit_mw);
	OPT(IG_GPU_V_TEMP, "temp_c", v->temp_c);
	OPT(IG_GPU_V_CLOCK, "sm_mhz", v->sm_mhz);
#undef OPT
	bad |= JI(o, "nvml_error", v->err);
	bad |= JU(o, "samples_win", g->samples_win);
	bad |= ig_json_set(o, "util_gpu_win",
			   g->util_gpu_win >= 0 ? ig_json_num(g->util_gpu_win) : json_null());
	bad |= ig_json_set(o, "util_mem_win",
			   g->util_mem_win >= 0 ? ig_json_num(g->util_mem_win) : json_null());
	bad |= ig_json_set(o, "power_win_mw",
			   g->power_win_mw >= 0 ? ig_json_num(g->power_win_mw) : json_null());
	bad |= JU(o, "mem_used_max_win", g->mem_used_max_win);
	bad |= ig_json_set(o, "temp_max_win",
			   g->temp_max_win >= 0 ? json_integer(g->temp_max_win) : json_null());
	bad |= JU(o, "procs", g->nprocs);
	return built(o, bad);
}

static json_t *json_nccl(const struct ig_model *m, int nops)
{
	struct ig_nccl_stats ops[IG_OP_MAX];
	struct ig_nccl_rank r[64];
	struct ig_nccl_totals t;
	json_t *o = json_object(), *a = json_array(), *ra = json_array();
	int bad = !o || !a || !ra;
	int n = model_nccl_ops(m, ops, nops < IG_OP_MAX ? nops : IG_OP_MAX);
	for (int i = 0; i < n; i++) {
		const struct ig_nccl_stats *s = &ops[i];
		json_t *x = json_object(), *w = json_object();
		bad |= !x || !w;
		bad |= JS(x, "op", ig_op_name(s->op));
		bad |= JS(x, "name", s->name);
		bad |= ig_json_set(x, "group", json_boolean(s->op == IG_OP_NCCL_GROUP_END));
		bad |= JU(x, "ops_life", s->ops_life);
		bad |= JU(x, "ops_win", s->ops_win);
		bad |= JU(x, "bytes_life", s->bytes_life);
		bad |= JU(x, "bytes_win", s->bytes_win);
		bad |= JD(x, "bytes_per_s", s->bytes_per_s);
		bad |= JU(x, "done_life", s->done_life);
		bad |= JU(x, "done_win", s->done_win);
		bad |= JU(x, "wait_mean_win_ns", s->wait_mean_win_ns);
		bad |= JU(x, "wait_max_win_ns", s->wait_max_win_ns);
		bad |= JU(w, "n", s->wait_life.n);
		bad |= JU(w, "p50_ns", s->wait_life.p50);
		bad |= JU(w, "p99_ns", s->wait_life.p99);
		bad |= JU(w, "max_ns", s->wait_life.max);
		bad |= JU(w, "mean_ns", s->wait_life.mean);
		bad |= ig_json_set(x, "wait_life", w);
		bad |= ig_json_push(a, x);
	}
	int nr = model_nccl_ranks(m, r, 64);
	for (int i = 0; i < nr; i++) {
		json_t *x = json_object();
		bad |= !x;
		bad |= JU(x, "pid", r[i].pid);
		bad |= JC(x, "comm", r[i].comm);
		if (r[i].known) {
			char key[16];
			snprintf(key, sizeof(key), "%06x", r[i].key);
			bad |= JS(x, "communicator", key);
			bad |= JU(x, "rank", r[i].rank);
			bad |= JU(x, "nranks", r[i].nranks);
		} else {
			bad |= ig_json_set(x, "communicator", json_null());
		}
		bad |= JU(x, "ops_win", r[i].ops_win);
		bad |= JU(x, "bytes_win", r[i].bytes_win);
		bad |= JU(x, "done_win", r[i].done_win);
		bad |= JU(x, "wait_mean_ns", r[i].wait_mean_ns);
		bad |= JU(x, "wait_ns_win", r[i].wait_ns_win);
		bad |= JU(x, "sync_ns_win", r[i].sync_ns_win);
		bad |= ig_json_push(ra, x);
	}
	model_nccl_totals(m, &t);
	bad |= ig_json_set(o, "ops", a);
	bad |= ig_json_set(o, "ranks", ra);
	bad |= JU(o, "pending", t.pending);
	bad |= JU(o, "dropped", t.dropped);
	return built(o, bad);
}

int report_gpu_json(json_t *o, const struct ig_model *m)
{
	struct ig_gpu_stats g[IG_GPU_MAX_DEVS];
	struct ig_nccl_stats one;
	int bad = 0;
	int n = model_gpus(m, g, IG_GPU_MAX_DEVS);
	if (n) {
		json_t *a = json_array(), *pa = json_array();
		bad |= !a || !pa;
		for (int i = 0; i < n; i++)
			bad |= ig_json_push(a, json_dev(&g[i]));
		struct ig_gpu_proc p[256];
		int np = model_gpu_procs(m, p, 256);
		for (int i = 0; i < np; i++) {
			json_t *x = json_object();
			bad |= !x;
			bad |= JU(x, "pid", p[i].pid);
			bad |= JU(x, "dev", p[i].dev);
			bad |= JC(x, "comm", p[i].comm);
			bad |= ig_json_set(x, "mem_used",
					   p[i].known ? ig_json_u64(p[i].bytes) : json_null());
			bad |= ig_json_push(pa, x);
		}
		bad |= ig_json_set(o, "gpus", a);
		bad |= ig_json_set(o, "gpu_procs", pa);
	}
	if (model_nccl_ops(m, &one, 1))
		bad |= ig_json_set(o, "nccl", json_nccl(m, IG_OP_MAX));
	return bad;
}
