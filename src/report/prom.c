/* Prometheus metrics in the text exposition format: the families, their
 * labels (bounded: the top processes by calls, the rest under pid="other"),
 * the label escaping and the latency buckets. See prom.h and
 * docs/prometheus.md. */
#include "report/prom.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/escape.h"
#include "core/ops.h"
#include "core/status.h"
#include "detect/detect.h"
#include "model/model.h"

#define P "ingero_top_"
#define LBL_LEN 256 /* one escaped label value: a comm is 15 bytes, 6 per byte at most */

const uint64_t prom_bounds_ns[PROM_NBOUNDS] = {
    1000ull,	   2500ull,	  5000ull,	 10000ull,	 25000ull,     50000ull,
    100000ull,	   250000ull,	  500000ull,	 1000000ull,	 2500000ull,   5000000ull,
    10000000ull,   25000000ull,	  50000000ull,	 100000000ull,	 250000000ull, 500000000ull,
    1000000000ull, 2500000000ull, 5000000000ull, 10000000000ull,
};
/* The same bounds as `le` values, in seconds. */
static const char *const bound_le[PROM_NBOUNDS] = {
    "1e-06",  "2.5e-06", "5e-06",  "1e-05", "2.5e-05", "5e-05", "0.0001", "0.00025",
    "0.0005", "0.001",	 "0.0025", "0.005", "0.01",    "0.025", "0.05",	  "0.1",
    "0.25",   "0.5",	 "1",	   "2.5",   "5",       "10",
};

static const char *const refusal_names[PROM_REF_MAX] = {
    [PROM_REF_BUSY] = "busy",
    [PROM_REF_READ_TIMEOUT] = "read_timeout",
    [PROM_REF_WRITE_TIMEOUT] = "write_timeout",
    [PROM_REF_TOO_LARGE] = "too_large",
    [PROM_REF_BAD_REQUEST] = "bad_request",
};

const char *prom_refusal_name(int r)
{
	return r >= 0 && r < PROM_REF_MAX ? refusal_names[r] : "?";
}

/* --- label values ------------------------------------------------------------------- */

/* Appends n bytes when they fit whole (with room for the NUL). */
static int put(char *dst, size_t cap, size_t *o, const char *s, size_t n)
{
	if (*o + n + 1 > cap)
		return -1;
	memcpy(dst + *o, s, n);
	*o += n;
	return 0;
}

size_t prom_label(char *dst, size_t cap, const char *s, int untrusted)
{
	size_t o = 0;
	if (!cap)
		return 0;
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	while (*p) {
		int len = esc_utf8_len(p);
		int r = 0;
		if (!len) { /* not UTF-8 */
			r = untrusted ? put(dst, cap, &o, "\xef\xbf\xbd", 3)
				      : put(dst, cap, &o, (const char *)p, 1);
			len = 1;
		} else if (untrusted &&
			   (*p < 0x20 || *p == 0x7f || (len == 2 && p[0] == 0xc2 && p[1] < 0xa0))) {
			/* a control byte or a C1 control: dropped */
		} else if (*p == '\\') {
			r = put(dst, cap, &o, "\\\\", 2);
		} else if (*p == '"') {
			r = put(dst, cap, &o, "\\\"", 2);
		} else if (*p == '\n') {
			r = put(dst, cap, &o, "\\n", 2);
		} else {
			r = put(dst, cap, &o, (const char *)p, (size_t)len);
		}
		if (r)
			break;
		p += len;
	}
	dst[o] = 0;
	return o;
}

/* A comm (not necessarily NUL-terminated within IG_COMM_LEN) as a label. */
static const char *comm_label(char *b, const char *comm)
{
	char t[IG_COMM_LEN + 1];
	size_t n = strnlen(comm, IG_COMM_LEN);
	memcpy(t, comm, n);
	t[n] = 0;
	prom_label(b, LBL_LEN, t, 1);
	return b;
}

/* --- buckets -------------------------------------------------------------------------- */

void prom_hist_cumulative(const struct hist *h, uint64_t out[PROM_NBOUNDS + 1])
{
	uint64_t at[PROM_NBOUNDS + 1] = {0};
	if (h && h->n) {
		int b = 0;
		for (unsigned i = h->lo; i <= h->hi && i < HIST_BUCKETS; i++) {
			if (!h->b[i])
				continue;
			uint64_t v = hist_bucket_mid(i);
			while (b < PROM_NBOUNDS && v > prom_bounds_ns[b])
				b++;
			at[b] += h->b[i];
		}
	}
	uint64_t c = 0;
	for (int i = 0; i < PROM_NBOUNDS; i++) {
		c += at[i];
		out[i] = c;
	}
	out[PROM_NBOUNDS] = h ? h->n : 0;
}

/* --- writing ---------------------------------------------------------------------------- */

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP " P "%s %s\n# TYPE " P "%s %s\n", name, help, name, type);
}

/* A duration in ns as seconds, exactly. */
static void put_secs(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%09" PRIu64 "\n", ns / UINT64_C(1000000000),
		ns % UINT64_C(1000000000));
}

static void sample_u(FILE *f, const char *name, const char *labels, uint64_t v)
{
	fprintf(f, P "%s%s%s%s %" PRIu64 "\n", name, labels ? "{" : "", labels ? labels : "",
		labels ? "}" : "", v);
}

static void sample_s(FILE *f, const char *name, const char *labels, uint64_t ns)
{
	fprintf(f, P "%s%s%s%s ", name, labels ? "{" : "", labels ? labels : "", labels ? "}" : "");
	put_secs(f, ns);
}

static void sample_d(FILE *f, const char *name, const char *labels, double v)
{
	fprintf(f, P "%s%s%s%s %.6g\n", name, labels ? "{" : "", labels ? labels : "",
		labels ? "}" : "", v);
}

/* The processes with a label of their own and the sums of the others. */
struct procset {
	struct ig_proc_stats *p; /* the table, the labelled ones first */
	int n, top;
	struct ig_proc_stats other;
	char (*labels)[2 * LBL_LEN]; /* pid="..",comm=".." of each labelled one */
};

/* CUDA processes first, then by calls since the start, then pid. */
static int cmp_proc(const void *a, const void *b)
{
	const struct ig_proc_stats *x = a, *y = b;
	if (!!x->cuda != !!y->cuda)
		return y->cuda ? 1 : -1;
	if (x->calls_life != y->calls_life)
		return x->calls_life < y->calls_life ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static void other_add(struct ig_proc_stats *o, const struct ig_proc_stats *p)
{
	o->calls_life += p->calls_life;
	o->life_off_preempt_ns += p->life_off_preempt_ns;
	o->life_off_blocked_ns += p->life_off_blocked_ns;
	o->life_off_unknown_ns += p->life_off_unknown_ns;
	o->page_bytes_life += p->page_bytes_life;
	o->life_parts.wall_ns += p->life_parts.wall_ns;
	for (int i = 0; i < IG_PART_MAX; i++)
		o->life_parts.ns[i] += p->life_parts.ns[i];
}

static int procset_make(struct procset *ps, const struct ig_model *m, int max_procs)
{
	memset(ps, 0, sizeof(*ps));
	ps->p = calloc(PROM_PROCS_MAX, sizeof(*ps->p));
	ps->labels = calloc(PROM_PROCS_MAX, sizeof(*ps->labels));
	if (!ps->p || !ps->labels)
		return -ENOMEM;
	ps->n = model_procs(m, ps->p, PROM_PROCS_MAX);
	qsort(ps->p, (size_t)ps->n, sizeof(*ps->p), cmp_proc);
	if (max_procs <= 0)
		max_procs = PROM_PROCS_DEFAULT;
	for (int i = 0; i < ps->n; i++) {
		if (i < max_procs && ps->p[i].cuda) {
			char c[LBL_LEN];
			snprintf(ps->labels[i], sizeof(ps->labels[i]), "pid=\"%u\",comm=\"%s\"",
				 ps->p[i].pid, comm_label(c, ps->p[i].comm));
			ps->top = i + 1;
		} else {
			other_add(&ps->other, &ps->p[i]);
		}
	}
	return 0;
}

static void procset_free(struct procset *ps)
{
	free(ps->p);
	free(ps->labels);
}

#define OTHER_LABELS "pid=\"other\",comm=\"other\""

static void write_status(FILE *f, const struct ig_model *m, const struct ig_status *st)
{
	struct ig_model_totals t;
	model_totals(m, &t);
	family(f, "build_info", "gauge", "The version of ingero-top and its mode; always 1.");
	fprintf(f, P "build_info{version=\"%s\",mode=\"%s\"} 1\n", IG_VERSION,
		st && st->mode == IG_MODE_REPLAY ? "replay" : "live");
	family(f, "event_time_seconds", "gauge",
	       "The model's clock: the latest event completion time seen, Unix seconds.");
	sample_s(f, "event_time_seconds", NULL, t.now_ns);
	family(f, "events_total", "counter", "Events ingested, all kinds.");
	sample_u(f, "events_total", NULL, st ? st->events_total : t.events);
	family(f, "dropped_events_total", "counter",
	       "Events lost: ring-buffer reservation failures in the kernel, or read but not "
	       "processed in user space.");
	sample_u(f, "dropped_events_total", "side=\"kernel\"", st ? st->drops_kernel : 0);
	sample_u(f, "dropped_events_total", "side=\"user\"", st ? st->drops_user : 0);
	family(f, "probes_attached", "gauge", "Uprobe and uretprobe links attached.");
	sample_u(f, "probes_attached", NULL, st ? (uint64_t)st->probes_attached : 0);
	family(f, "probes_failed", "gauge", "Probe attach attempts that failed.");
	sample_u(f, "probes_failed", NULL, st ? (uint64_t)st->probes_failed : 0);
	family(f, "probes_missing", "gauge",
	       "Optional CUDA symbols that no attached library exports.");
	sample_u(f, "probes_missing", NULL, st ? (uint64_t)st->probes_missing : 0);
	family(f, "traced_processes", "gauge", "Processes being traced.");
	sample_u(f, "traced_processes", NULL, st ? (uint64_t)st->targets : 0);
	family(f, "evicted_total", "counter",
	       "Entries dropped from a full table of the model to make room.");
	sample_u(f, "evicted_total", "table=\"process\"", t.evicted_procs);
	sample_u(f, "evicted_total", "table=\"thread\"", t.evicted_threads);
	sample_u(f, "evicted_total", "table=\"series\"", t.evicted_series);
}

static void write_latency(FILE *f, const struct ig_model *m)
{
	int ops[IG_OP_MAX];
	int n = model_ops(m, ops, IG_OP_MAX);
	family(f, "cuda_call_duration_seconds", "histogram",
	       "Duration of CUDA runtime and driver API calls since the start, by op.");
	for (int i = 0; i < n; i++) {
		const struct hist *h = model_op_hist(m, ops[i], 0, 1);
		if (!h)
			continue;
		uint64_t cum[PROM_NBOUNDS + 1];
		prom_hist_cumulative(h, cum);
		const char *op = ig_op_name(ops[i]);
		for (int b = 0; b < PROM_NBOUNDS; b++)
			fprintf(f,
				P "cuda_call_duration_seconds_bucket{op=\"%s\",le=\"%s\"} %" PRIu64
				  "\n",
				op, bound_le[b], cum[b]);
		fprintf(f,
			P "cuda_call_duration_seconds_bucket{op=\"%s\",le=\"+Inf\"} %" PRIu64 "\n",
			op, cum[PROM_NBOUNDS]);
		fprintf(f, P "cuda_call_duration_seconds_sum{op=\"%s\"} ", op);
		put_secs(f, h->sum_ns);
		fprintf(f, P "cuda_call_duration_seconds_count{op=\"%s\"} %" PRIu64 "\n", op, h->n);
	}
}

/* Calls by op and process: the labelled processes, then the rest of the op's
 * calls (other processes, evicted series) under pid="other". */
static int write_calls(FILE *f, const struct ig_model *m, const struct procset *ps)
{
	int ops[IG_OP_MAX];
	int nops = model_ops(m, ops, IG_OP_MAX);
	uint64_t *per = calloc((size_t)IG_OP_MAX * (size_t)(ps->top + 1), sizeof(*per));
	struct ig_series_stats *rows = calloc(IG_OP_MAX, sizeof(*rows));
	if (!per || !rows) {
		free(per);
		free(rows);
		return -ENOMEM;
	}
	for (int i = 0; i < ps->top; i++) {
		int nr = model_proc_ops(m, ps->p[i].pid, rows, IG_OP_MAX);
		for (int r = 0; r < nr; r++)
			if (rows[r].op >= 0 && rows[r].op < IG_OP_MAX)
				per[(size_t)rows[r].op * (size_t)(ps->top + 1) + (size_t)i] =
				    rows[r].calls_life;
	}
	family(f, "cuda_calls_total", "counter",
	       "CUDA runtime and driver API calls since the start, by op and process.");
	for (int k = 0; k < nops; k++) {
		int op = ops[k];
		struct ig_series_stats all;
		if (model_op_stats(m, op, &all))
			continue;
		uint64_t *row = &per[(size_t)op * (size_t)(ps->top + 1)], sum = 0;
		for (int i = 0; i < ps->top; i++) {
			if (!row[i])
				continue;
			fprintf(f, P "cuda_calls_total{op=\"%s\",%s} %" PRIu64 "\n", ig_op_name(op),
				ps->labels[i], row[i]);
			sum += row[i];
		}
		if (all.calls_life > sum)
			fprintf(f, P "cuda_calls_total{op=\"%s\"," OTHER_LABELS "} %" PRIu64 "\n",
				ig_op_name(op), all.calls_life - sum);
	}
	free(per);
	free(rows);
	return 0;
}

static void write_procs(FILE *f, const struct procset *ps)
{
	static const char *const states[3] = {"preempted", "blocked", "unknown"};
	int has_other = ps->n > ps->top;
	char l[2 * LBL_LEN + 64];
	family(f, "offcpu_seconds_total", "counter",
	       "Time the threads of a process spent off CPU since the start, by state: "
	       "preempted (runnable), blocked (asleep), unknown (not recorded).");
	for (int i = 0; i <= ps->top; i++) {
		const struct ig_proc_stats *p = i < ps->top ? &ps->p[i] : &ps->other;
		if (i == ps->top && !has_other)
			break;
		const uint64_t v[3] = {p->life_off_preempt_ns, p->life_off_blocked_ns,
				       p->life_off_unknown_ns};
		for (int s = 0; s < 3; s++) {
			snprintf(l, sizeof(l), "%s,state=\"%s\"",
				 i < ps->top ? ps->labels[i] : OTHER_LABELS, states[s]);
			sample_s(f, "offcpu_seconds_total", l, v[s]);
		}
	}
	family(f, "feeder_seconds_total", "counter",
	       "Where the wall time of a process's feeding threads (those making CUDA calls) "
	       "went since the start, by part (docs/detection.md): the parts add up to "
	       "ingero_top_feeder_wall_seconds_total.");
	for (int i = 0; i <= ps->top; i++) {
		const struct ig_proc_stats *p = i < ps->top ? &ps->p[i] : &ps->other;
		if (i == ps->top && !has_other)
			break;
		for (int k = 0; k < IG_PART_MAX; k++) {
			snprintf(l, sizeof(l), "%s,part=\"%s\"",
				 i < ps->top ? ps->labels[i] : OTHER_LABELS, ig_part_name(k));
			sample_s(f, "feeder_seconds_total", l, p->life_parts.ns[k]);
		}
	}
	family(f, "feeder_wall_seconds_total", "counter",
	       "Wall time of a process's feeding threads since the start: the denominator of "
	       "ingero_top_feeder_seconds_total.");
	for (int i = 0; i < ps->top; i++)
		sample_s(f, "feeder_wall_seconds_total", ps->labels[i],
			 ps->p[i].life_parts.wall_ns);
	if (has_other)
		sample_s(f, "feeder_wall_seconds_total", OTHER_LABELS,
			 ps->other.life_parts.wall_ns);
	family(f, "page_alloc_bytes_total", "counter",
	       "Bytes of pages allocated by a process since the start.");
	for (int i = 0; i < ps->top; i++)
		sample_u(f, "page_alloc_bytes_total", ps->labels[i], ps->p[i].page_bytes_life);
	if (has_other)
		sample_u(f, "page_alloc_bytes_total", OTHER_LABELS, ps->other.page_bytes_life);
}

static void write_chains(FILE *f, const struct ig_detect *d)
{
	unsigned count[IG_CC_MAX][IG_SEV_HIGH + 1];
	memset(count, 0, sizeof(count));
	int n = d ? detect_count(d) : 0;
	for (int i = 0; i < n; i++) {
		const struct ig_chain *c = detect_chain(d, i);
		if (c && c->active && c->cls >= 0 && c->cls < IG_CC_MAX && c->severity >= 0 &&
		    c->severity <= IG_SEV_HIGH)
			count[c->cls][c->severity]++;
	}
	family(f, "chains_active", "gauge",
	       "Active causal chains, by class and severity (every pair listed, 0 when none).");
	for (int c = 0; c < IG_CC_MAX; c++)
		for (int s = 0; s <= IG_SEV_HIGH; s++)
			fprintf(f, P "chains_active{class=\"%s\",severity=\"%s\"} %u\n",
				detect_class_name(c), detect_sev_name(s), count[c][s]);
	family(f, "chain_impact_ratio", "gauge",
	       "Impact of each active chain: the share (0..1) of the feeding threads' wall "
	       "time, or of a tail's excess time, that the cause explains.");
	for (int i = 0; i < n; i++) {
		const struct ig_chain *c = detect_chain(d, i);
		if (!c || !c->active)
			continue;
		char comm[LBL_LEN], cul[LBL_LEN], cc[IG_COMM_LEN + 24];
		cul[0] = 0;
		if (c->culprit_pid) {
			snprintf(cc, sizeof(cc), "%.*s[%u]", IG_COMM_LEN, c->culprit_comm,
				 c->culprit_pid);
			prom_label(cul, sizeof(cul), cc, 1);
		}
		fprintf(f,
			P "chain_impact_ratio{class=\"%s\",severity=\"%s\",op=\"%s\",pid=\"%u\","
			  "comm=\"%s\",culprit=\"%s\"} %.6g\n",
			detect_class_name(c->cls), detect_sev_name(c->severity),
			c->op > 0 ? ig_op_name(c->op) : "", c->pid, comm_label(comm, c->comm), cul,
			c->impact);
	}
}

static void write_host(FILE *f, const struct ig_model *m)
{
	struct ig_host h;
	model_host(m, &h);
	if (!h.valid)
		return;
	family(f, "host_cpu_ratio", "gauge", "CPU busy share of the host, 0..1 (last snapshot).");
	sample_d(f, "host_cpu_ratio", NULL, h.cpu_pct / 100.0);
	family(f, "host_memory_used_ratio", "gauge", "Memory in use, share of the total, 0..1.");
	sample_d(f, "host_memory_used_ratio", NULL, h.mem_pct / 100.0);
	family(f, "host_memory_available_bytes", "gauge", "Memory available (MemAvailable).");
	sample_u(f, "host_memory_available_bytes", NULL, h.mem_avail_mb << 20);
	family(f, "host_swap_used_bytes", "gauge", "Swap in use.");
	sample_u(f, "host_swap_used_bytes", NULL, h.swap_mb << 20);
	family(f, "host_load1", "gauge", "One-minute load average.");
	sample_d(f, "host_load1", NULL, h.load1);
}

static void write_server(FILE *f, const struct prom_server_stats *s)
{
	family(f, "metrics_scrapes_total", "counter", "Complete responses with these metrics.");
	sample_u(f, "metrics_scrapes_total", NULL, s->scrapes);
	family(f, "metrics_refused_total", "counter",
	       "Connections to this endpoint refused or dropped, by reason.");
	for (int r = 0; r < PROM_REF_MAX; r++) {
		char l[48];
		snprintf(l, sizeof(l), "reason=\"%s\"", prom_refusal_name(r));
		sample_u(f, "metrics_refused_total", l, s->refused[r]);
	}
}

int prom_write(FILE *f, const struct ig_model *m, const struct ig_detect *d,
	       const struct ig_status *st, const struct prom_opts *o)
{
	struct prom_opts dflt = {0};
	if (!o)
		o = &dflt;
	int max_procs = o->max_procs > PROM_PROCS_MAX ? PROM_PROCS_MAX : o->max_procs;
	struct procset ps;
	if (procset_make(&ps, m, max_procs)) {
		procset_free(&ps);
		return -ENOMEM;
	}
	write_status(f, m, st);
	write_latency(f, m);
	int r = write_calls(f, m, &ps);
	write_procs(f, &ps);
	write_chains(f, d);
	write_host(f, m);
	if (o->srv)
		write_server(f, o->srv);
	procset_free(&ps);
	if (r)
		return r;
	return ferror(f) ? -EIO : 0;
}
