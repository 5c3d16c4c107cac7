/* The incident report as a JSON object (explain.h): hosts, range,
 * processes, chains with their proof, slowest calls with stacks, actions,
 * the per-op table and where the time went. The text and Markdown forms
 * are written from it in explain_out.c. */
#include "report/explain.h"

#include "core/waits.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/slowcalls.h"
#include "core/fmt.h"
#include "core/ops.h"
#include "core/status.h"
#include "core/timearg.h"
#include "detect/detect.h"
#include "model/model.h"
#include "report/json_build.h"
#include "report/report.h"
#include "report/report_stacks.h"

#define MAX_PROCS 256
#define MAX_PROOF 12
#define MAX_ACTIONS 8

double explain_class_share(int cls, const struct ig_time_parts *t)
{
	return detect_class_share(cls, t);
}

/* --- where and when ------------------------------------------------------------ */

static json_t *hosts_json(const struct explain_in *in)
{
	json_t *a = json_array();
	int bad = !a;
	for (int i = 0; i < in->nhosts; i++) {
		const struct explain_host *h = &in->hosts[i];
		json_t *o = json_object();
		bad |= JS(o, "node", h->node);
		bad |= JS(o, "kernel", h->kernel);
		bad |= JS(o, "os", h->os);
		bad |= JS(o, "cpu_model", h->cpu_model);
		bad |= JU(o, "cpu_cores", h->cpu_cores);
		bad |= JU(o, "mem_total_mb", h->mem_total_mb);
		bad |= JS(o, "writer", h->writer);
		bad |= JS(o, "command", h->command);
		bad |= ig_json_set(o, "started_ns",
				   h->started_ns ? ig_json_u64(h->started_ns) : json_null());
		bad |= ig_json_set(o, "stopped_ns",
				   h->stopped_ns ? ig_json_u64(h->stopped_ns) : json_null());
		bad |= ig_json_push(a, o);
	}
	return built(a, bad);
}

static json_t *range_json(const struct explain_in *in, const struct ig_model_totals *t)
{
	json_t *o = json_object();
	char a[40], b[40];
	uint64_t first = in->first_ns ? in->first_ns : t->first_ns;
	uint64_t last = in->last_ns ? in->last_ns : t->now_ns;
	if (in->since_ns > first) /* a call that began before the range: the range */
		first = in->since_ns;
	if (in->until_ns && in->until_ns < last)
		last = in->until_ns;
	int bad = !o;
	bad |= JU(o, "first_ns", first);
	bad |= JU(o, "last_ns", last);
	bad |= JS(o, "start", timearg_iso(a, sizeof(a), first));
	bad |= JS(o, "end", timearg_iso(b, sizeof(b), last));
	bad |= JU(o, "duration_ns", last > first ? last - first : 0);
	bad |= ig_json_set(o, "since_ns", in->since_ns ? ig_json_u64(in->since_ns) : json_null());
	bad |= ig_json_set(o, "until_ns", in->until_ns ? ig_json_u64(in->until_ns) : json_null());
	return built(o, bad);
}

static int proc_listed(const struct ig_proc_stats *p, uint32_t pid)
{
	return pid ? p->pid == pid : p->cuda || p->calls_life;
}

static json_t *processes_json(const struct explain_in *in, const struct explain_opts *o,
			      const struct ig_proc_stats *procs, int np)
{
	json_t *a = json_array();
	int bad = !a;
	for (int i = 0; i < np; i++) {
		const struct ig_proc_stats *p = &procs[i];
		if (!proc_listed(p, o->pid))
			continue;
		json_t *j = json_object();
		const char *cl = in->cmdline ? in->cmdline(in->cmdline_ctx, p->pid) : NULL;
		bad |= JU(j, "pid", p->pid);
		bad |= JU(j, "ppid", p->ppid);
		bad |= JC(j, "comm", p->comm);
		bad |= ig_json_set(j, "cmdline", cl && *cl ? ig_json_str(cl) : json_null());
		bad |= ig_json_set(j, "cuda", json_boolean(p->cuda));
		bad |= ig_json_set(j, "exited", json_boolean(p->exited));
		bad |= JU(j, "threads", p->threads);
		bad |= JU(j, "calls", p->calls_life);
		bad |= JU(j, "first_ns", p->first_ns);
		bad |= JU(j, "last_ns", p->last_ns);
		bad |= ig_json_push(a, j);
	}
	return built(a, bad);
}

/* --- chains --------------------------------------------------------------------- */

static int chain_matches(const struct ig_chain *c, const struct explain_opts *o)
{
	if (o->pid && c->pid != o->pid && c->culprit_pid != o->pid)
		return 0;
	if (!o->chain)
		return 1;
	if (!strcmp(o->chain, c->id_str))
		return 1;
	const char *num = o->chain + (strncmp(o->chain, "chain-", 6) ? 0 : 6);
	return *num && !num[strspn(num, "0123456789")] && strtoul(num, NULL, 10) == c->id;
}

/* Actionable first, then by impact, then first seen, then id. */
static int cmp_chain(const void *a, const void *b)
{
	const struct ig_chain *x = *(const struct ig_chain *const *)a;
	const struct ig_chain *y = *(const struct ig_chain *const *)b;
	int xi = x->severity == IG_SEV_INFO, yi = y->severity == IG_SEV_INFO;
	if (xi != yi)
		return xi - yi;
	if (x->impact != y->impact)
		return x->impact > y->impact ? -1 : 1;
	if (x->first_seen_ns != y->first_seen_ns)
		return x->first_seen_ns < y->first_seen_ns ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int select_chains(const struct explain_in *in, const struct explain_opts *o,
			 const struct ig_chain **out)
{
	int n = 0;
	for (int i = 0; i < detect_count(in->d) && n < IG_CHAIN_MAX; i++) {
		const struct ig_chain *c = detect_chain(in->d, i);
		if (chain_matches(c, o))
			out[n++] = c;
	}
	qsort(out, (size_t)n, sizeof(*out), cmp_chain);
	return n;
}

struct proof {
	uint64_t ts;
	char text[200];
};

static int cmp_proof(const void *a, const void *b)
{
	const struct proof *x = a, *y = b;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Whether an off-CPU interval of the chain's thread proves its class: a
 * preemption for CPU contention (in a call or between), a stop (in a call
 * or between), else an interval between calls counted in the class's part. */
static int proves(int cls, const struct ig_offcpu_rec *r)
{
	if (cls == IG_CC_CPU_CONTENTION)
		return r->state == IG_OFF_PREEMPTED && !(r->flags & IG_F_THROTTLED);
	int part = detect_class_part(cls);
	return part >= 0 && (!r->in_call || part == IG_PART_STOPPED) && r->part == part;
}

static int cmp_off(const void *a, const void *b)
{
	const struct ig_offcpu_rec *x = a, *y = b;
	return x->dur_ns > y->dur_ns ? -1 : x->dur_ns < y->dur_ns;
}

/* snprintf, cut at the buffer without the compiler's truncation warning */
__attribute__((format(printf, 3, 4))) static void put_text(char *b, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b, n, fmt, ap);
	va_end(ap);
}

/* The longest off-CPU intervals of the chain's thread that prove it. */
static int proof_offcpu(const struct explain_in *in, const struct ig_chain *c, struct proof *p)
{
	struct ig_offcpu_rec r[IG_TL_MAX];
	int n = 0;
	if (!c->tid || (c->cls != IG_CC_CPU_CONTENTION && detect_class_part(c->cls) < 0))
		return 0;
	int k = model_thread_offcpu(in->m, c->tid, r, IG_TL_MAX), m = 0;
	for (int i = 0; i < k; i++)
		if (proves(c->cls, &r[i]))
			r[m++] = r[i];
	qsort(r, (size_t)m, sizeof(*r), cmp_off);
	for (int i = 0; i < m && n < 3; i++, n++) {
		char d[24], who[64] = "", why[128];
		fmt_ns(d, sizeof(d), r[i].dur_ns);
		int stop = r[i].part == IG_PART_STOPPED;
		if (r[i].other_pid)
			snprintf(who, sizeof(who), " %s %.16s[%u]",
				 r[i].state == IG_OFF_PREEMPTED ? "by"
				 : stop				? "let go on by"
								: "woken by",
				 r[i].other_comm, r[i].other_pid);
		ig_wait_text(why, sizeof(why), r[i].flags, r[i].wait);
		p[n].ts = r[i].ts_ns;
		if (r[i].state == IG_OFF_PREEMPTED)
			put_text(p[n].text, sizeof(p[n].text),
				 "tid %u off CPU %s while runnable (%s) on CPU %u%s%s%s", c->tid, d,
				 r[i].in_call ? "inside a CUDA call" : "between calls", r[i].cpu,
				 who, why[0] ? ": " : "", why);
		else if (r[i].state == IG_OFF_BLOCKED)
			put_text(p[n].text, sizeof(p[n].text), "tid %u %s %s %s%s%s%s", c->tid,
				 stop ? "stopped" : "asleep", d,
				 r[i].in_call ? "inside a CUDA call" : "between calls", who,
				 why[0] ? ": " : "", why);
		else
			snprintf(p[n].text, sizeof(p[n].text),
				 "tid %u off CPU %s between calls (why not recorded)", c->tid, d);
	}
	return n;
}

static void call_text(char *b, size_t n, const struct ig_event *e)
{
	char d[24], pre[24], blk[24];
	fmt_ns(d, sizeof(d), e->dur_ns);
	if (e->flags & IG_F_NO_SPLIT)
		snprintf(b, n, "%s took %s (tid %u; no preempted/blocked split)", ig_op_name(e->op),
			 d, e->tid);
	else
		snprintf(b, n, "%s took %s (tid %u; preempted %s, asleep %s, context switches %u)",
			 ig_op_name(e->op), d, e->tid, fmt_ns(pre, sizeof(pre), e->preempt_ns),
			 fmt_ns(blk, sizeof(blk), e->blocked_ns), e->switches);
}

static json_t *proof_json(const struct explain_in *in, const struct ig_chain *c)
{
	struct proof p[IG_CHAIN_MAX_TIMELINE + 6];
	int n = 0;
	for (int k = 0; k < c->ntimeline && k < IG_CHAIN_MAX_TIMELINE; k++, n++) {
		p[n].ts = c->timeline[k].ts_ns;
		snprintf(p[n].text, sizeof(p[n].text), "%s", c->timeline[k].text);
	}
	n += proof_offcpu(in, c, p + n);
	if (c->op && in->slow) {
		struct ig_event e[3];
		int k = slowcalls_get(in->slow, c->op, c->pid, in->since_ns, in->until_ns, e, 3);
		for (int i = 0; i < k; i++) {
			int dup = 0; /* the detector's timeline names it already */
			for (int j = 0; j < c->ntimeline && j < IG_CHAIN_MAX_TIMELINE; j++)
				dup |= c->timeline[j].ts_ns == e[i].ts_ns;
			if (dup)
				continue;
			p[n].ts = e[i].ts_ns;
			call_text(p[n].text, sizeof(p[n].text), &e[i]);
			n++;
		}
	}
	qsort(p, (size_t)n, sizeof(*p), cmp_proof);
	json_t *a = json_array();
	int bad = !a;
	for (int i = n > MAX_PROOF ? n - MAX_PROOF : 0; i < n; i++) {
		json_t *o = json_object();
		char t[40];
		bad |= JU(o, "ts_ns", p[i].ts);
		bad |= JS(o, "time", timearg_iso(t, sizeof(t), p[i].ts));
		bad |= JS(o, "text", p[i].text);
		bad |= ig_json_push(a, o);
	}
	return built(a, bad);
}

static json_t *chain_json(const struct explain_in *in, const struct ig_chain *c, int rank)
{
	json_t *o = report_json_chain(c, in->st), *evt = json_object();
	struct ig_proc_stats ps;
	int bad = !o || !evt;
	double share = -1;
	if (!model_proc(in->m, c->pid, &ps))
		share = explain_class_share(c->cls, &ps.life_parts);
	bad |= ig_json_set(o, "rank", json_integer(rank));
	bad |= ig_json_set(o, "title", json_string(detect_class_title(c->cls)));
	bad |= ig_json_set(o, "range_share", share >= 0 ? ig_json_num(share) : json_null());
	for (int k = 0; k < c->nevidence; k++) {
		char v[48];
		bad |= JS(evt, c->ev[k].key, report_fmt_evidence(v, sizeof(v), &c->ev[k]));
	}
	bad |= ig_json_set(o, "evidence_text", evt);
	bad |= ig_json_set(o, "proof", proof_json(in, c));
	return built(o, bad);
}

/* --- slowest calls, actions ------------------------------------------------------ */

json_t *explain_slow_call_json(const struct explain_in *in, const struct ig_event *e, int frames)
{
	json_t *o = json_object();
	char t[40], id[24];
	const char *state = "unknown";
	int bad = !o;
	const char *comm = model_comm(in->m, e->pid);
	bad |= JS(o, "op", ig_op_name(e->op));
	bad |= JU(o, "ts_ns", e->ts_ns);
	bad |= JS(o, "time", timearg_iso(t, sizeof(t), e->ts_ns));
	bad |= JU(o, "dur_ns", e->dur_ns);
	bad |= JU(o, "pid", e->pid);
	bad |= JU(o, "tid", e->tid);
	bad |= comm && *comm ? JS(o, "comm", comm) : JC(o, "comm", e->comm);
	bad |= JC(o, "thread_comm", e->comm);
	int split = !(e->flags & IG_F_NO_SPLIT);
	bad |= ig_json_set(o, "preempt_ns", split ? ig_json_u64(e->preempt_ns) : json_null());
	bad |= ig_json_set(o, "blocked_ns", split ? ig_json_u64(e->blocked_ns) : json_null());
	bad |= JU(o, "switches", e->switches);
	bad |= JU(o, "other_pid", e->other_pid);
	bad |= JC(o, "other_comm", e->other_comm);
	snprintf(id, sizeof(id), "0x%016" PRIx64, e->stack_id);
	bad |= ig_json_set(o, "stack_id", e->stack_id ? json_string(id) : json_null());
	json_t *fr = in->st && e->stack_id
			 ? report_stacks_frames_json(in->st, e->stack_id, frames, &state)
			 : json_array();
	bad |= ig_json_set(o, "stack_state", json_string(e->stack_id ? state : "none"));
	bad |= ig_json_set(o, "frames", fr);
	return built(o, bad);
}

static json_t *slow_calls_json(const struct explain_in *in, const struct explain_opts *o)
{
	int max = o->max_slow > 0 ? o->max_slow : o->max_slow < 0 ? 0 : 5;
	struct ig_event *e = calloc((size_t)max + 1, sizeof(*e));
	json_t *a = json_array();
	int bad = !a || !e;
	int n = e && in->slow
		    ? slowcalls_get(in->slow, -1, o->pid, in->since_ns, in->until_ns, e, max)
		    : 0;
	for (int i = 0; i < n; i++)
		bad |= ig_json_push(
		    a, explain_slow_call_json(in, &e[i], o->frames > 0 ? o->frames : 8));
	free(e);
	return built(a, bad);
}

/* The recommendations of the actionable chains, in their order, once each. */
static json_t *actions_json(const struct ig_chain *const *ch, int n)
{
	json_t *a = json_array();
	int bad = !a, k = 0;
	for (int i = 0; i < n && k < MAX_ACTIONS; i++) {
		if (ch[i]->severity == IG_SEV_INFO)
			continue;
		for (int r = 0; r < ch[i]->nrecs && k < MAX_ACTIONS; r++) {
			int seen = 0;
			for (int j = 0; j < i && !seen; j++)
				for (int q = 0; q < ch[j]->nrecs; q++)
					seen |= !strcmp(ch[j]->recs[q], ch[i]->recs[r]);
			if (seen)
				continue;
			json_t *o = json_object();
			bad |= JS(o, "chain", ch[i]->id_str);
			bad |= JS(o, "text", ch[i]->recs[r]);
			bad |= ig_json_push(a, o);
			k++;
		}
	}
	return built(a, bad);
}

static const char *verdict(const struct ig_chain *const *ch, int n, char *b, size_t len)
{
	if (n && ch[0]->severity != IG_SEV_INFO)
		snprintf(b, len, "%s", ch[0]->summary);
	else if (n)
		snprintf(b, len, "Nothing to act on: %s", ch[0]->summary);
	else
		snprintf(b, len,
			 "No cause takes 5%% or more of the feeding threads' time: nothing to "
			 "act on in this range");
	return b;
}

/* --- the report -------------------------------------------------------------------- */

static int check_filters(const struct explain_in *in, const struct explain_opts *o,
			 const struct ig_proc_stats *procs, int np, int nchains, char *err,
			 size_t len)
{
	size_t l = 0;
	if (o->pid) {
		int found = 0; /* a traced process, or the culprit of a chain */
		for (int i = 0; i < np; i++)
			found |= procs[i].pid == o->pid;
		for (int i = 0; i < detect_count(in->d); i++)
			found |= detect_chain(in->d, i)->culprit_pid == o->pid;
		if (!found) {
			l = (size_t)snprintf(
			    err, len,
			    "no process %u in the data; processes with CUDA calls:", o->pid);
			for (int i = 0, k = 0; i < np && k < 8 && l < len; i++)
				if (procs[i].cuda)
					l += (size_t)snprintf(err + l, len - l, "%s %u %.16s",
							      k++ ? "," : "", procs[i].pid,
							      procs[i].comm);
			return -ENOENT;
		}
	}
	if (o->chain && !nchains) {
		l = (size_t)snprintf(err, len, "no chain '%.40s' in the data%s; chains:", o->chain,
				     o->pid ? " of that process" : "");
		int n = detect_count(in->d);
		for (int i = 0; i < n && i < 16 && l < len; i++)
			l += (size_t)snprintf(err + l, len - l, " %s",
					      detect_chain(in->d, i)->id_str);
		if (!n && l < len)
			snprintf(err + l, len - l, " none");
		return -ENOENT;
	}
	return 0;
}

static int add_lists(json_t *r, const struct explain_in *in, const struct explain_opts *o,
		     const struct ig_proc_stats *procs, int np, const struct ig_chain **ch, int nc)
{
	int bad = 0;
	json_t *chains = json_array(), *pl = json_array();
	int max = o->max_chains > 0 && o->max_chains < nc ? o->max_chains : nc;
	char v[320];
	for (int i = 0; i < max; i++)
		bad |= ig_json_push(chains, chain_json(in, ch[i], i + 1));
	bad |= ig_json_set(r, "verdict", ig_json_str(verdict(ch, nc, v, sizeof(v))));
	bad |= ig_json_set(r, "chains", chains);
	bad |= ig_json_set(r, "chains_total", json_integer(nc));
	if (!nc && detect_why_none(in->d)[0])
		bad |= ig_json_set(r, "no_chains_why", ig_json_str(detect_why_none(in->d)));
	bad |= ig_json_set(r, "slow_calls", slow_calls_json(in, o));
	bad |= ig_json_set(r, "actions", actions_json(ch, max));
	bad |= ig_json_set(r, "ops", report_json_ops(in->m, in->d, 1, o->pid));
	for (int i = 0; i < np; i++)
		if (procs[i].cuda && (!o->pid || procs[i].pid == o->pid))
			bad |= ig_json_push(pl, report_json_proc(in->m, &procs[i], 1));
	bad |= ig_json_set(r, "procs", pl);
	return bad;
}

json_t *explain_build(const struct explain_in *in, const struct explain_opts *oo, char *err,
		      size_t errlen)
{
	static const struct explain_opts none;
	const struct explain_opts *o = oo ? oo : &none;
	struct ig_proc_stats *procs = calloc(MAX_PROCS, sizeof(*procs));
	const struct ig_chain **ch = calloc(IG_CHAIN_MAX, sizeof(*ch));
	json_t *r = json_object(), *files = NULL, *filter = NULL;
	int bad = !procs || !ch || !r;
	struct ig_model_totals t;
	if (bad) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	model_totals(in->m, &t);
	int np = model_procs(in->m, procs, MAX_PROCS), nc = select_chains(in, o, ch);
	if (check_filters(in, o, procs, np, nc, err, errlen)) {
		bad = 1;
		goto out;
	}
	files = json_array();
	filter = json_object();
	const struct ig_status *st = in->status;
	bad |= JS(r, "type", "explain");
	bad |= ig_json_set(r, "version", json_integer(1));
	bad |= JS(r, "mode", st && st->mode == IG_MODE_REPLAY ? "replay" : "live");
	for (int i = 0; i < in->nfiles; i++)
		bad |= ig_json_push(files, ig_json_str(in->files[i]));
	bad |= ig_json_set(r, "sources", files);
	bad |= ig_json_set(r, "hosts", hosts_json(in));
	bad |= ig_json_set(r, "range", range_json(in, &t));
	bad |= ig_json_set(filter, "pid", o->pid ? ig_json_u64(o->pid) : json_null());
	bad |= ig_json_set(filter, "chain", o->chain ? ig_json_str(o->chain) : json_null());
	bad |= ig_json_set(r, "filter", filter);
	bad |= JU(r, "events", t.events);
	bad |= JU(r, "drops_kernel", st ? st->drops_kernel : 0);
	bad |= JU(r, "drops_user", st ? st->drops_user : 0);
	bad |= JU(r, "summarised", st ? st->replay_summarised : 0);
	bad |= JU(r, "rows_refused", st ? st->rows_refused : 0);
	bad |= ig_json_set(r, "no_split", json_boolean(t.no_split_seen));
	bad |= ig_json_set(r, "processes", processes_json(in, o, procs, np));
	bad |= add_lists(r, in, o, procs, np, ch, nc);
	if (bad)
		snprintf(err, errlen, "out of memory");
out:
	free(procs);
	free(ch);
	if (bad) {
		json_decref(r);
		return NULL;
	}
	return r;
}
