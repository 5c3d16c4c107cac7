/* The stream's objects (stream.h, docs/json.md "Stream"). The chains, the
 * top op of a process and the GPUs are taken member by member from the
 * objects of the JSON frame (report.h, report_gpu.h), the four-way split
 * of a process's time is the model's (model_split, the processes pane's
 * numbers), the arrivals are the model's NCCL arrivals. */
#include "report/stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/status.h"
#include "detect/detect.h"
#include "model/model.h"
#include "report/json_build.h"
#include "report/report.h"
#include "report/report_gpu.h"

#define MAX_PROCS 256
#define MAX_RANKS 64

/* The last arrival written of one rank. */
struct rank_mark {
	uint32_t pid, key, rank;
	uint64_t seq;
	uint64_t used; /* frame that last wrote it (the oldest makes room) */
};

struct stream_writer {
	uint64_t seq; /* frames written */
	struct rank_mark r[MAX_RANKS];
	int nr;
};

uint64_t stream_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A new object of the stream: {"type":type,"stream":1}. */
static json_t *head(const char *type, int *bad)
{
	json_t *o = json_object();
	*bad = !o;
	*bad |= JS(o, "type", type);
	*bad |= JI(o, "stream", STREAM_VERSION);
	return o;
}

/* dst[key] = src[key] for each key (absent: null). */
static int pick(json_t *dst, const json_t *src, const char *const *keys)
{
	int bad = 0;
	for (; *keys; keys++) {
		json_t *v = src ? json_object_get(src, *keys) : NULL;
		bad |= ig_json_set(dst, *keys, v ? json_incref(v) : json_null());
	}
	return bad;
}

json_t *stream_hello_json(const struct stream_hello *h)
{
	int bad;
	json_t *o = head("hello", &bad);
	bad |= JS(o, "version", h->version);
	bad |= JS(o, "host", h->host);
	bad |= JU(o, "pid", h->pid);
	bad |= JU(o, "realtime_ns", h->realtime_ns);
	bad |= JD(o, "interval_s", h->interval_s);
	bad |= JD(o, "window_s", h->window_s);
	bad |= JS(o, "target", h->target);
	return built(o, bad);
}

json_t *stream_end_json(const char *reason, int code)
{
	int bad;
	json_t *o = head("end", &bad);
	bad |= JS(o, "reason", reason);
	bad |= JI(o, "exit", code);
	return built(o, bad);
}

json_t *stream_error_json(const char *msg)
{
	int bad;
	json_t *o = head("error", &bad);
	bad |= JS(o, "message", msg);
	return built(o, bad);
}

json_t *stream_answer(const char *line, uint64_t realtime_ns)
{
	json_t *in = ig_json_parse(line), *id = in ? json_object_get(in, "id") : NULL;
	json_t *o = NULL;
	if (id && !strcmp(ig_json_get_str(in, "type", ""), "ping")) {
		int bad;
		o = head("pong", &bad);
		bad |= ig_json_set(o, "id", json_incref(id));
		bad |= JU(o, "realtime_ns", realtime_ns);
		o = built(o, bad);
	}
	json_decref(in);
	return o;
}

int stream_put(FILE *f, json_t *o)
{
	if (!o)
		return -ENOMEM;
	int r = ig_json_write_line(f, o);
	json_decref(o);
	if (!r && fflush(f))
		r = -EIO;
	if (r)
		return errno == EPIPE ? -EPIPE : -EIO;
	return 0;
}

/* --- the frame -------------------------------------------------------------------- */

static json_t *json_status(const struct ig_model *m, const struct ig_status *st, bool done)
{
	static const char *const nv[] = {"starting", "ok", "absent", "failed"};
	struct ig_model_totals t;
	model_totals(m, &t);
	json_t *o = json_object();
	int bad = !o;
	bad |= JU(o, "events_total", st->events_total ? st->events_total : t.events);
	bad |= JD(o, "events_per_s", st->events_per_s);
	bad |= JU(o, "drops_kernel", st->drops_kernel);
	bad |= JU(o, "drops_user", st->drops_user);
	bad |= JI(o, "probes_attached", st->probes_attached);
	bad |= JI(o, "probes_failed", st->probes_failed);
	bad |=
	    JS(o, "nvml",
	       st->mode == IG_MODE_LIVE && st->nvml_state >= 0 ? nv[st->nvml_state & 3] : "none");
	bad |= JS(o, "message", st->message);
	bad |= ig_json_set(o, "done", json_boolean(done));
	return built(o, bad);
}

/* A share 0..1 as a percentage, null when not known. */
static json_t *pct(const struct ig_split *sp, int k)
{
	if (!sp->valid || (k == IG_SPLIT_PRE && sp->pre_unknown))
		return json_null();
	return ig_json_num(sp->share[k] * 100.0);
}

/* The op with the most time in the window of pid (the first row of its op
 * table, report_json_ops), or null. */
static json_t *top_op(const struct ig_model *m, const struct ig_detect *d, uint32_t pid)
{
	static const char *const keys[] = {"op", "p99_ns", "rate", "calls_win", NULL};
	json_t *ops = report_json_ops(m, d, 0, pid);
	json_t *first = ops ? json_array_get(ops, 0) : NULL;
	json_t *o = first ? json_object() : json_null();
	int bad = !o || (first && pick(o, first, keys));
	json_decref(ops);
	return built(o, bad);
}

static json_t *json_proc(const struct ig_model *m, const struct ig_detect *d,
			 const struct ig_proc_stats *p)
{
	struct ig_split sp;
	model_split(&p->parts, &sp);
	json_t *o = json_object();
	int bad = !o;
	bad |= JU(o, "pid", p->pid);
	bad |= JC(o, "comm", p->comm);
	bad |= ig_json_set(o, "exited", json_boolean(p->exited));
	bad |= JD(o, "calls_per_s", p->calls_per_s);
	bad |= ig_json_set(o, "gpu_pct", pct(&sp, IG_SPLIT_GPU));
	bad |= ig_json_set(o, "cpu_pct", pct(&sp, IG_SPLIT_CPU));
	bad |= ig_json_set(o, "pre_pct", pct(&sp, IG_SPLIT_PRE));
	bad |= ig_json_set(o, "wait_pct", pct(&sp, IG_SPLIT_WAIT));
	bad |= ig_json_set(o, "top_op", top_op(m, d, p->pid));
	return built(o, bad);
}

static int cmp_busy(const void *a, const void *b)
{
	const struct ig_proc_stats *x = a, *y = b;
	if (x->calls_per_s != y->calls_per_s)
		return x->calls_per_s > y->calls_per_s ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The processes that made CUDA calls, busiest first. */
static json_t *json_procs(const struct ig_model *m, const struct ig_detect *d)
{
	struct ig_proc_stats *v = calloc(MAX_PROCS, sizeof(*v));
	json_t *a = json_array();
	int bad = !v || !a, n = 0;
	int np = bad ? 0 : model_procs(m, v, MAX_PROCS);
	for (int i = 0; i < np; i++)
		if (v[i].cuda || v[i].calls_win)
			v[n++] = v[i];
	qsort(v, (size_t)n, sizeof(*v), cmp_busy);
	for (int i = 0; i < n && i < STREAM_PROCS; i++)
		bad |= ig_json_push(a, json_proc(m, d, &v[i]));
	free(v);
	return built(a, bad);
}

/* The active chains in display order, the members the fleet shows (the
 * JSON frame's, report_json_chain) and the first recommendation. */
static json_t *json_chains(const struct ig_detect *d)
{
	static const char *const keys[] = {"id",     "severity", "class",	"op",
					   "pid",    "comm",	 "culprit_pid", "culprit_comm",
					   "impact", "summary",	 NULL};
	json_t *a = json_array();
	int bad = !a, listed = 0;
	for (int i = 0; i < detect_count(d) && listed < STREAM_CHAINS; i++) {
		const struct ig_chain *c = detect_chain(d, i);
		if (!c->active)
			continue;
		listed++;
		json_t *full = report_json_chain(c, NULL), *o = json_object();
		bad |= !full || !o || pick(o, full, keys);
		bad |= JS(o, "advice", c->nrecs ? c->recs[0] : "");
		json_decref(full);
		bad |= ig_json_push(a, o);
	}
	return built(a, bad);
}

/* The devices of the JSON frame's "gpus" (report_gpu_json), fewer members;
 * set only when the model has NVML samples. */
static int json_gpus(json_t *o, const struct ig_model *m)
{
	static const char *const keys[] = {"index",    "name",	    "util_gpu_pct",
					   "mem_used", "mem_total", NULL};
	json_t *full = json_object(), *a = json_array();
	int bad = !full || !a || report_gpu_json(full, m);
	json_t *g = bad ? NULL : json_object_get(full, "gpus");
	for (size_t i = 0; g && i < json_array_size(g); i++) {
		json_t *x = json_object();
		bad |= !x || pick(x, json_array_get(g, i), keys);
		bad |= ig_json_push(a, x);
	}
	json_decref(full);
	if (!g && !bad) {
		json_decref(a);
		return 0;
	}
	return bad | ig_json_set(o, "gpus", a);
}

/* The mark of a rank, made when new (the least recently written makes
 * room). */
static struct rank_mark *mark_of(struct stream_writer *w, const struct ig_nccl_rank *r)
{
	int old = 0;
	for (int i = 0; i < w->nr; i++) {
		struct rank_mark *k = &w->r[i];
		if (k->pid == r->pid && k->key == r->key && k->rank == r->rank)
			return k;
		if (k->used < w->r[old].used)
			old = i;
	}
	struct rank_mark *k = &w->r[w->nr < MAX_RANKS ? w->nr++ : old];
	*k = (struct rank_mark){.pid = r->pid, .key = r->key, .rank = r->rank};
	return k;
}

static json_t *json_rank(struct stream_writer *w, const struct ig_model *m,
			 const struct ig_nccl_rank *r)
{
	static uint64_t arr[STREAM_ARRIVALS][2]; /* one loop thread */
	struct rank_mark *k = mark_of(w, r);
	uint64_t lost = 0;
	int n =
	    model_nccl_arrivals(m, r->pid, r->key, r->rank, k->seq, arr, STREAM_ARRIVALS, &lost);
	json_t *o = json_object(), *a = json_array();
	int bad = !o || !a;
	bad |= JU(o, "pid", r->pid);
	bad |= ig_json_set(o, "known", json_boolean(r->known));
	bad |= JU(o, "key", r->key);
	bad |= JU(o, "rank", r->rank);
	bad |= JU(o, "nranks", r->nranks);
	bad |= JU(o, "ops_win", r->ops_win);
	bad |= JU(o, "wait_mean_ns", r->wait_mean_ns);
	bad |= JU(o, "wait_ns_win", r->wait_ns_win);
	bad |= JU(o, "seq", r->ops_life);
	for (int i = 0; i < n; i++) {
		json_t *p = json_array();
		bad |= !p || ig_json_push(p, ig_json_u64(arr[i][0])) ||
		       ig_json_push(p, ig_json_u64(arr[i][1]));
		bad |= ig_json_push(a, p);
	}
	bad |= ig_json_set(o, "arrivals", a);
	bad |= JU(o, "arrivals_lost", n < 0 ? 0 : lost);
	if (n > 0)
		k->seq = arr[n - 1][0];
	else if (!n)
		k->seq = r->ops_life;
	k->used = w->seq;
	return built(o, bad);
}

/* The NCCL ranks with operations in the window; set only when there are. */
static int json_nccl(json_t *o, struct stream_writer *w, const struct ig_model *m)
{
	struct ig_nccl_rank r[MAX_RANKS];
	int n = model_nccl_ranks(m, r, MAX_RANKS);
	if (n <= 0)
		return 0;
	json_t *a = json_array();
	int bad = !a;
	for (int i = 0; i < n; i++)
		bad |= ig_json_push(a, json_rank(w, m, &r[i]));
	return bad | ig_json_set(o, "nccl", a);
}

json_t *stream_frame_json(struct stream_writer *w, const struct ig_model *m,
			  const struct ig_detect *d, const struct ig_status *st, bool done,
			  uint64_t realtime_ns)
{
	int bad;
	json_t *o = head("frame", &bad);
	bad |= JU(o, "seq", ++w->seq);
	bad |= JU(o, "realtime_ns", realtime_ns);
	bad |= JU(o, "window_s", model_cfg(m)->window_s);
	bad |= ig_json_set(o, "status", json_status(m, st, done));
	bad |= ig_json_set(o, "procs", json_procs(m, d));
	bad |= ig_json_set(o, "chains", json_chains(d));
	bad |= json_gpus(o, m);
	bad |= json_nccl(o, w, m);
	return built(o, bad);
}

struct stream_writer *stream_writer_new(void)
{
	return calloc(1, sizeof(struct stream_writer));
}

void stream_writer_free(struct stream_writer *w)
{
	free(w);
}
