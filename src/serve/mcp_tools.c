/* The MCP tools (mcp.h): each reads the session (or a model of a time range
 * built from the recordings or from the live ring of recent events) and
 * answers with a JSON object; a problem the caller can fix is a sentence
 * (an isError result). The server marks untrusted text afterwards. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/slowcalls.h"
#include "collect/check.h"
#include "core/ops.h"
#include "core/status.h"
#include "core/timearg.h"
#include "detect/detect.h"
#include "model/model.h"
#include "report/evfmt.h"
#include "report/explain.h"
#include "report/mcpmark.h"
#include "report/qout.h"
#include "report/report.h"
#include "report/report_stacks.h"
#include "serve/mcp.h"
#include "session/evring.h"
#include "session/range.h"
#include "session/session.h"
#include "stacks/stacks.h"
#include "store/query.h"
#include "store/replay.h"

#define SET(o, k, v) ig_json_set(o, k, v)

/* --- ranges --------------------------------------------------------------------------- */

static int one_time(struct mcp *s, const json_t *v, uint64_t *out, char *err, size_t len)
{
	uint64_t start, end;
	char buf[32];
	const char *txt = json_string_value(v);
	if (!v) {
		*out = 0;
		return 0;
	}
	if (json_is_integer(v)) {
		snprintf(buf, sizeof(buf), "%" PRId64, (int64_t)json_integer_value(v));
		txt = buf;
	}
	ho_span(&s->run, &start, &end);
	return timearg_parse(txt, start, end, out, err, len) ? -1 : 0;
}

int mcp_range_args(struct mcp *s, const json_t *a, uint64_t *since, uint64_t *until, char *err,
		   size_t len)
{
	if (one_time(s, json_object_get(a, "since"), since, err, len) ||
	    one_time(s, json_object_get(a, "until"), until, err, len))
		return -1;
	if (*since && *until && *since >= *until) {
		snprintf(err, len, "since must be before until");
		return -1;
	}
	return 0;
}

/* What a tool reads: the session, or a model of [since, until]. */
struct view {
	struct explain_in in;
	struct range *r;
	uint64_t since, until;
};

static struct ig_source *range_source(struct mcp *s, char *err, size_t len)
{
	const char *why = NULL;
	if (!s->range_src &&
	    !(s->range_src = replay_open(s->target.replay, s->target.nreplay, &why)))
		snprintf(err, len, "cannot read the recordings again: %s",
			 why ? why : "unknown error");
	return s->range_src;
}

/* The ring holds every event completing from since on: nothing of them
 * left it for its cap (a recording bigger than --keep-events) or its age
 * (a live session longer than --keep). */
static int ring_covers(struct mcp *s, uint64_t since)
{
	uint64_t lost = evring_lost_until(s->run.ring);
	return s->run.ring && (!lost || since > lost);
}

/* Live, a range older than the ring: say what is kept. */
static int live_too_old(struct mcp *s, uint64_t since, char *err, size_t len)
{
	char a[40];
	if (!s->run.live || ring_covers(s, since))
		return 0;
	snprintf(err, len,
		 "the live session keeps the events of the last %gs (--keep, --keep-events): give "
		 "since after %s",
		 s->run.ring_s, timearg_iso(a, sizeof(a), evring_lost_until(s->run.ring)));
	return -1;
}

/* The names of the session's processes into a range model: a range that
 * starts after a process's name event still names it. */
static void name_procs(struct mcp *s, struct range *r, uint64_t at)
{
	const struct ig_model *m = session_model(s->run.s);
	struct ig_proc_stats *p = calloc(256, sizeof(*p));
	int n = p ? model_procs(m, p, 256) : 0;
	for (int i = 0; i < n; i++) {
		struct ig_event e = {.kind = IG_EV_COMM,
				     .pid = p[i].pid,
				     .tid = p[i].pid,
				     .ts_ns = at,
				     .arg0 = p[i].ppid};
		memcpy(e.comm, p[i].comm, sizeof(e.comm));
		range_event(r, &e);
	}
	free(p);
}

static int view_open(struct mcp *s, const json_t *a, struct view *v, char *err, size_t len)
{
	uint64_t start, end;
	memset(v, 0, sizeof(*v));
	if (mcp_range_args(s, a, &v->since, &v->until, err, len))
		return -1;
	ho_explain_in(&s->run, &v->in);
	ho_span(&s->run, &start, &end);
	if (v->since <= start && (!v->until || v->until >= end))
		v->since = v->until = 0; /* all of it: the session's own model */
	if (!v->since && !v->until)
		return 0;
	if (live_too_old(s, v->since, err, len))
		return -1;
	v->r = range_new(model_cfg(session_model(s->run.s))->window_s, v->since, v->until);
	if (!v->r) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	name_procs(s, v->r, v->since ? v->since : start);
	if (ring_covers(s, v->since)) {
		evring_each(s->run.ring, v->since, v->until, range_event, v->r);
	} else {
		struct ig_source *src = range_source(s, err, len);
		int rc = src ? range_from_replay(v->r, src) : -EIO;
		if (rc) {
			if (src)
				snprintf(err, len, "reading the recordings failed: %s",
					 strerror(-rc));
			range_free(v->r);
			return -1;
		}
	}
	int rc = range_finish(v->r);
	if (rc) {
		snprintf(err, len, "reading the recordings failed: %s", strerror(-rc));
		range_free(v->r);
		return -1;
	}
	if (!v->r->events) {
		uint64_t st, en;
		char a1[40], a2[40];
		ho_span(&s->run, &st, &en);
		if (s->run.live)
			evring_span(s->run.ring, &st, &en);
		snprintf(err, len,
			 "no events in that range: the %s holds %s .. %s; choose since/until in it",
			 s->run.live ? "live session's memory" : "data",
			 timearg_iso(a1, sizeof(a1), st), timearg_iso(a2, sizeof(a2), en));
		range_free(v->r);
		return -1;
	}
	v->in.m = session_model(v->r->s);
	v->in.d = session_detect(v->r->s);
	v->in.slow = session_slowcalls(v->r->s);
	v->in.first_ns = v->r->first_ns;
	v->in.last_ns = v->r->last_ns;
	v->in.since_ns = v->since;
	v->in.until_ns = v->until;
	return 0;
}

static void view_close(struct view *v)
{
	range_free(v->r);
	v->r = NULL;
}

/* The explain object of a view, or NULL with err. */
static json_t *report_of(struct view *v, uint32_t pid, const char *chain, int max_chains,
			 int max_slow, char *err, size_t len)
{
	struct explain_opts o = {
	    .pid = pid, .chain = chain, .max_chains = max_chains, .max_slow = max_slow};
	return explain_build(&v->in, &o, err, len);
}

static json_t *take(json_t *from, const char *key)
{
	json_t *v = json_object_get(from, key);
	return v ? json_incref(v) : json_null();
}

static uint32_t arg_pid(const json_t *a)
{
	return (uint32_t)ig_json_get_int(a, "pid", 0);
}

/* An op argument as an op id (ingero-top's or Ingero's name), or -1 with err. */
static int arg_op(const struct ig_model *m, const json_t *a, char *err, size_t len)
{
	const char *name = ig_json_get_str(a, "op", NULL);
	if (!name)
		return 0;
	int op = ig_op_by_name(name);
	if (op > 0)
		return op;
	int ops[IG_OP_MAX], n = model_ops(m, ops, IG_OP_MAX);
	size_t l = (size_t)snprintf(err, len, "no op '%.40s'; ops with calls:", name);
	for (int i = 0; i < n && l < len; i++)
		l += (size_t)snprintf(err + l, len - l, " %s", ig_op_name(ops[i]));
	return -1;
}

static int check_pid(const struct ig_model *m, uint32_t pid, char *err, size_t len)
{
	struct ig_proc_stats p;
	if (!pid || !model_proc(m, pid, &p))
		return 0;
	struct ig_proc_stats *v = calloc(64, sizeof(*v));
	int n = v ? model_procs(m, v, 64) : 0;
	size_t l = (size_t)snprintf(err, len,
				    "no process %u in the data; processes with CUDA calls:", pid);
	int k = 0;
	for (int i = 0; i < n && l < len; i++)
		if (v[i].cuda)
			l += (size_t)snprintf(err + l, len - l, "%s %u", k++ ? "," : "", v[i].pid);
	if (!k && l < len)
		snprintf(err + l, len - l, " none");
	free(v);
	return -1;
}

/* The view, and its pid and op arguments checked against it: 0, or -1
 * with err and the view closed. */
static int view_open_pid_op(struct mcp *s, const json_t *a, struct view *v, uint32_t *pid,
			    int *op, char *err, size_t len)
{
	if (view_open(s, a, v, err, len))
		return -1;
	*pid = arg_pid(a);
	*op = arg_op(v->in.m, a, err, len);
	if (*op < 0 || check_pid(v->in.m, *pid, err, len)) {
		view_close(v);
		return -1;
	}
	return 0;
}

/* --- get_check, get_overview ------------------------------------------------------------ */

/* check_run's lines: "PASS name      detail", continuation lines indented. */
static json_t *parse_checks(char *text, int *ready)
{
	json_t *a = json_array(), *last = NULL;
	*ready = 1;
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == ' ' && last) {
			json_t *more = json_object_get(last, "more");
			if (!more) {
				more = json_array();
				SET(last, "more", more);
			}
			ig_json_push(more, ig_json_str(line + strspn(line, " ")));
			continue;
		}
		char st[8] = "", *p = line + strcspn(line, " ");
		snprintf(st, sizeof(st), "%.*s", (int)(p - line), line);
		p += strspn(p, " ");
		char *gap = strstr(p, "  ");
		size_t nl = gap ? (size_t)(gap - p) : strlen(p);
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)nl, p);
		last = json_object();
		SET(last, "status", json_string(st));
		SET(last, "name", ig_json_str(name));
		SET(last, "detail", ig_json_str(gap ? gap + strspn(gap, " ") : ""));
		ig_json_push(a, last);
		if (!strcmp(st, "FAIL"))
			*ready = 0;
	}
	return a;
}

json_t *tool_get_check(struct mcp *s, const json_t *a, char *err, size_t len)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	if (!f)
		return NULL;
	check_run(f);
	fclose(f);
	int ready;
	json_t *o = json_object(), *ss = json_object();
	SET(o, "checks", parse_checks(text, &ready));
	free(text);
	SET(o, "host_can_trace", json_boolean(ready));
	const struct ig_status *st = session_status(s->run.s);
	SET(ss, "mode", json_string(s->run.live ? "live" : "replay"));
	SET(ss, "events", ig_json_u64(st->events_total));
	SET(ss, "drops_kernel", ig_json_u64(st->drops_kernel));
	SET(ss, "drops_user", ig_json_u64(st->drops_user));
	SET(ss, "probes_attached", json_integer(st->probes_attached));
	SET(ss, "probes_failed", json_integer(st->probes_failed));
	SET(ss, "probes_missing", json_integer(st->probes_missing));
	SET(ss, "libs", json_integer(st->libs));
	SET(ss, "targets", json_integer(st->targets));
	SET(ss, "stacks", json_boolean(session_stacks(s->run.s) != NULL));
	SET(ss, "done", json_boolean(session_done(s->run.s)));
	int cs = session_cmd_status(s->run.s);
	SET(ss, "command_exit_status", cs >= 0 ? json_integer(cs) : json_null());
	SET(ss, "message", ig_json_str(st->message));
	if (s->run.live) {
		SET(ss, "kept_events", ig_json_u64(evring_count(s->run.ring)));
		SET(ss, "kept_dropped_for_cap", ig_json_u64(evring_capped(s->run.ring)));
	}
	SET(o, "session", ss);
	SET(o, "healthy",
	    json_boolean(!st->drops_kernel && !st->drops_user &&
			 (!s->run.live || st->probes_attached > 0)));
	return o;
}

/* A chain in a few fields, for the overview. */
static json_t *chain_brief(const json_t *c)
{
	static const char *const keep[] = {
	    "id",   "severity",	   "class",	   "title", "impact",  "range_share", "pid",
	    "comm", "culprit_pid", "culprit_comm", "op",    "summary", "active",      NULL};
	json_t *o = json_object();
	for (int i = 0; keep[i]; i++)
		if (json_object_get(c, keep[i]))
			SET(o, keep[i], json_incref(json_object_get(c, keep[i])));
	return o;
}

json_t *tool_get_overview(struct mcp *s, const json_t *a, char *err, size_t len)
{
	struct view v;
	if (view_open(s, a, &v, err, len))
		return NULL;
	json_t *rep = report_of(&v, 0, NULL, 0, -1, err, len);
	view_close(&v);
	if (!rep)
		return NULL;
	json_t *o = json_object(), *chains = json_array(), *ops = json_array(), *c;
	static const char *const copy[] = {
	    "mode",	    "sources",	  "hosts",   "range",	  "events",	  "drops_kernel",
	    "drops_user", "summarised", "no_split", "verdict", "processes", "chains_total",
	    NULL};
	for (int i = 0; copy[i]; i++)
		SET(o, copy[i], take(rep, copy[i]));
	size_t i;
	json_array_foreach(json_object_get(rep, "chains"), i, c) if (i < 5)
	    ig_json_push(chains, chain_brief(c));
	json_array_foreach(json_object_get(rep, "ops"), i, c) if (i < 5)
	{
		ig_json_push(ops, json_pack("{s:O,s:O,s:O,s:O,s:O}", "op", json_object_get(c, "op"),
					    "calls", json_object_get(c, "calls"), "p50_ns",
					    json_object_get(c, "p50_ns"), "p99_ns",
					    json_object_get(c, "p99_ns"), "time_ns",
					    json_object_get(c, "time_ns")));
	}
	SET(o, "top_chains", chains);
	SET(o, "top_ops", ops);
	if (s->run.live) {
		int cs = session_cmd_status(s->run.s);
		SET(o, "command_exit_status", cs >= 0 ? json_integer(cs) : json_null());
		SET(o, "done", json_boolean(session_done(s->run.s)));
	}
	json_decref(rep);
	return o;
}

/* --- statistics, chains, processes -------------------------------------------------------- */

json_t *tool_get_trace_stats(struct mcp *s, const json_t *a, char *err, size_t len)
{
	struct view v;
	const char *scope = ig_json_get_str(a, "scope", "all");
	int window = !strcmp(scope, "window");
	if (window && (json_object_get(a, "since") || json_object_get(a, "until"))) {
		snprintf(err, len, "give since/until or scope window, not both");
		return NULL;
	}
	uint32_t pid;
	int op;
	if (view_open_pid_op(s, a, &v, &pid, &op, err, len))
		return NULL;
	json_t *ops = report_json_ops(v.in.m, v.in.d, !window, pid), *o = json_object(),
	       *rg = json_object();
	if (op > 0) { /* only that op */
		json_t *keep = json_array(), *x;
		size_t i;
		json_array_foreach(ops, i,
				   x) if (!strcmp(ig_json_get_str(x, "op", ""), ig_op_name(op)))
		    ig_json_push(keep, json_incref(x));
		json_decref(ops);
		ops = keep;
	}
	struct ig_model_totals t;
	model_totals(v.in.m, &t);
	char b1[40], b2[40];
	uint64_t first = v.r ? v.r->first_ns : window ? t.win_start_ns : s->run.first_ns;
	uint64_t last = v.r ? v.r->last_ns : window ? t.now_ns : s->run.last_ns;
	SET(rg, "since_ns", v.since ? ig_json_u64(v.since) : json_null());
	SET(rg, "until_ns", v.until ? ig_json_u64(v.until) : json_null());
	SET(rg, "first_ns", ig_json_u64(first));
	SET(rg, "last_ns", ig_json_u64(last));
	SET(rg, "start", json_string(timearg_iso(b1, sizeof(b1), first)));
	SET(rg, "end", json_string(timearg_iso(b2, sizeof(b2), last)));
	SET(o, "scope", json_string(v.r ? "range" : window ? "window" : "all"));
	SET(o, "window_s", json_integer(model_cfg(v.in.m)->window_s));
	SET(o, "pid", pid ? ig_json_u64(pid) : json_null());
	SET(o, "range", rg);
	SET(o, "ops", ops);
	view_close(&v);
	return o;
}

static int sev_rank(const char *s)
{
	return !strcmp(s, "HIGH") ? 3 : !strcmp(s, "MEDIUM") ? 2 : !strcmp(s, "LOW") ? 1 : 0;
}

json_t *tool_get_causal_chains(struct mcp *s, const json_t *a, char *err, size_t len)
{
	struct view v;
	if (view_open(s, a, &v, err, len))
		return NULL;
	uint32_t pid = arg_pid(a);
	if (check_pid(v.in.m, pid, err, len)) {
		view_close(&v);
		return NULL;
	}
	json_t *rep = report_of(&v, pid, NULL, 0, -1, err, len);
	view_close(&v);
	if (!rep)
		return NULL;
	int min = sev_rank(ig_json_get_str(a, "min_severity", "INFO"));
	json_t *res = json_object_get(a, "include_resolved");
	int resolved = !res || json_is_true(res);
	int limit = (int)ig_json_get_int(a, "limit", 10), total = 0;
	json_t *o = json_object(), *list = json_array(), *c;
	size_t i;
	json_array_foreach(json_object_get(rep, "chains"), i, c)
	{
		if (sev_rank(ig_json_get_str(c, "severity", "")) < min ||
		    (!resolved && !json_is_true(json_object_get(c, "active"))))
			continue;
		if (total++ < limit)
			ig_json_push(list, json_incref(c));
	}
	SET(o, "chains", list);
	SET(o, "matched", json_integer(total));
	SET(o, "returned", json_integer(total < limit ? total : limit));
	SET(o, "range", take(rep, "range"));
	json_decref(rep);
	return o;
}

static json_t *thread_json(const struct ig_thread_stats *t)
{
	json_t *o = json_object(), *parts = json_object();
	SET(o, "tid", ig_json_u64(t->tid));
	SET(o, "comm", ig_json_strn(t->comm, strnlen(t->comm, IG_COMM_LEN)));
	SET(o, "calls", ig_json_u64(t->calls_life));
	SET(o, "calls_win", ig_json_u64(t->calls_win));
	SET(o, "main_op", json_string(t->main_op > 0 ? ig_op_name(t->main_op) : ""));
	SET(o, "wall_ns", ig_json_u64(t->life_parts.wall_ns));
	for (int k = 0; k < IG_PART_MAX; k++)
		SET(parts, ig_part_name(k), ig_json_u64(t->life_parts.ns[k]));
	SET(o, "parts", parts);
	SET(o, "switches_win", ig_json_u64(t->switches));
	SET(o, "last_preemptor_pid", ig_json_u64(t->last_preemptor_pid));
	SET(o, "last_preemptor_comm",
	    ig_json_strn(t->last_preemptor_comm, strnlen(t->last_preemptor_comm, IG_COMM_LEN)));
	return o;
}

json_t *tool_get_process(struct mcp *s, const json_t *a, char *err, size_t len)
{
	struct view v;
	uint32_t pid = arg_pid(a);
	struct ig_proc_stats p;
	if (view_open(s, a, &v, err, len))
		return NULL;
	if (check_pid(v.in.m, pid, err, len) || model_proc(v.in.m, pid, &p)) {
		view_close(&v);
		return NULL;
	}
	json_t *rep = report_of(&v, pid, NULL, 0, -1, err, len);
	if (!rep) {
		view_close(&v);
		return NULL;
	}
	json_t *o = json_object(), *shares = json_object(), *th = json_array();
	SET(o, "process", json_incref(json_array_get(json_object_get(rep, "processes"), 0)));
	SET(o, "stats", report_json_proc(v.in.m, &p, 1));
	for (int k = 0; k < IG_PART_MAX; k++)
		SET(shares, ig_part_name(k), ig_json_num(ig_part_share(&p.life_parts, k)));
	SET(o, "time_shares", shares);
	int max = (int)ig_json_get_int(a, "threads", 16);
	struct ig_thread_stats *ts = calloc((size_t)max, sizeof(*ts));
	int n = ts ? model_threads(v.in.m, pid, ts, max) : 0;
	for (int i = 0; i < n; i++)
		ig_json_push(th, thread_json(&ts[i]));
	free(ts);
	SET(o, "threads", th);
	SET(o, "threads_total", json_integer(p.threads));
	SET(o, "ops", take(rep, "ops"));
	SET(o, "chains", take(rep, "chains"));
	SET(o, "range", take(rep, "range"));
	json_decref(rep);
	view_close(&v);
	return o;
}

/* --- stacks, slow calls, timeline ---------------------------------------------------------- */

json_t *tool_get_stacks(struct mcp *s, const json_t *a, char *err, size_t len)
{
	struct stacks *st = session_stacks(s->run.s);
	if (!st) {
		snprintf(err, len, "no stacks in this session: it runs with --no-stacks");
		return NULL;
	}
	int op = arg_op(session_model(s->run.s), a, err, len);
	if (op < 0)
		return NULL;
	const char *ord = ig_json_get_str(a, "order", "tail");
	int order = !strcmp(ord, "total")   ? STACKS_BY_TOTAL
		    : !strcmp(ord, "calls") ? STACKS_BY_CALLS
					    : STACKS_BY_TAIL;
	int limit = (int)ig_json_get_int(a, "limit", 10),
	    frames = (int)ig_json_get_int(a, "frames", 12);
	uint32_t pid = arg_pid(a);
	struct stacks_stat *top = calloc(4096, sizeof(*top));
	int n = top ? stacks_top(st, op ? op : -1, order, top, 4096) : 0, k = 0;
	json_t *o = json_object(), *list = json_array();
	for (int i = 0; i < n && k < limit; i++) {
		if (pid && top[i].pid != pid)
			continue;
		ig_json_push(list, report_stacks_stack_json(st, &top[i], frames));
		k++;
	}
	free(top);
	SET(o, "order", json_string(ord));
	SET(o, "stacks", list);
	SET(o, "note",
	    json_string(k ? "counts since the start of the session"
			  : "no call with a stack matched"));
	return o;
}

json_t *tool_get_slow_calls(struct mcp *s, const json_t *a, char *err, size_t len)
{
	struct view v;
	uint32_t pid;
	int op;
	if (view_open_pid_op(s, a, &v, &pid, &op, err, len))
		return NULL;
	int limit = (int)ig_json_get_int(a, "limit", 10),
	    frames = (int)ig_json_get_int(a, "frames", 8);
	struct ig_event *e = calloc((size_t)limit, sizeof(*e));
	int n = e ? slowcalls_get(v.in.slow, op ? op : -1, pid, v.since, v.until, e, limit) : 0;
	json_t *o = json_object(), *list = json_array();
	for (int i = 0; i < n; i++) {
		json_t *c = explain_slow_call_json(&v.in, &e[i], frames);
		if (c && !frames)
			SET(c, "frames", json_array());
		ig_json_push(list, c);
	}
	free(e);
	SET(o, "calls", list);
	view_close(&v);
	return o;
}

struct tl {
	uint32_t tid, pid;
	int limit;
	uint64_t matched;
	json_t *list;
};

static void tl_event(void *ctx, const struct ig_event *e)
{
	struct tl *t = ctx;
	if (e->kind == IG_EV_SNAPSHOT || (t->tid && e->tid != t->tid) ||
	    (!t->tid && e->pid != t->pid))
		return;
	if (t->matched++ >= (uint64_t)t->limit)
		return;
	json_t *o = evfmt_json_obj(e);
	char b[40];
	if (o) {
		json_object_del(o, "type");
		SET(o, "time", json_string(timearg_iso(b, sizeof(b), e->ts_ns)));
	}
	ig_json_push(t->list, o);
}

/* Events of a recording completing in [since, until] into tl_event. */
static int timeline_replay(struct mcp *s, struct tl *t, uint64_t since, uint64_t until, char *err,
			   size_t len)
{
	struct ig_source *src = range_source(s, err, len);
	if (!src)
		return -1;
	int rc = replay_each(src, since, until, tl_event, t);
	if (rc) {
		snprintf(err, len, "reading the recordings failed: %s", strerror(-rc));
		return -1;
	}
	return 0;
}

/* Without tid and pid: the feeding thread of the top chain, else the
 * feeding thread of the process with the most CUDA calls; what was chosen
 * goes in why. 0 when the data has no feeding thread. */
static uint32_t default_tid(struct mcp *s, char *why, size_t len)
{
	struct explain_in in;
	ho_explain_in(&s->run, &in);
	for (int i = 0; in.d && i < detect_count(in.d); i++) {
		const struct ig_chain *c = detect_chain(in.d, i);
		if (c && c->tid) {
			snprintf(why, len, "no tid or pid given: the feeding thread of %s, the top chain",
				 c->id_str);
			return c->tid;
		}
	}
	struct ig_proc_stats *p = calloc(256, sizeof(*p));
	int n = p && in.m ? model_procs(in.m, p, 256) : 0, best = -1;
	for (int i = 0; i < n; i++)
		if (p[i].cuda && p[i].feeder_tid &&
		    (best < 0 || p[i].calls_life > p[best].calls_life))
			best = i;
	uint32_t tid = best < 0 ? 0 : p[best].feeder_tid;
	if (tid)
		snprintf(why, len,
			 "no tid or pid given, no chain: the feeding thread of %u, the process "
			 "with the most CUDA calls",
			 p[best].pid);
	free(p);
	return tid;
}

json_t *tool_get_timeline(struct mcp *s, const json_t *a, char *err, size_t len)
{
	struct tl t = {.tid = (uint32_t)ig_json_get_int(a, "tid", 0),
		       .pid = arg_pid(a),
		       .limit = (int)ig_json_get_int(a, "limit", 200)};
	uint64_t since, until, start, end;
	char why[160] = "";
	if (!t.tid && !t.pid && !(t.tid = default_tid(s, why, sizeof(why)))) {
		snprintf(err, len,
			 "no feeding thread in the data: give tid (a thread) or pid (a process); "
			 "get_process lists the threads");
		return NULL;
	}
	if (mcp_range_args(s, a, &since, &until, err, len))
		return NULL;
	ho_span(&s->run, &start, &end);
	if (!until)
		until = end;
	if (!since)
		since = until > 10000000000ull ? until - 10000000000ull : 1;
	if (live_too_old(s, since, err, len))
		return NULL;
	t.list = json_array();
	int mem = ring_covers(s, since);
	if (mem)
		evring_each(s->run.ring, since, until, tl_event, &t);
	else if (timeline_replay(s, &t, since, until, err, len)) {
		json_decref(t.list);
		return NULL;
	}
	json_t *o = json_object(), *rg = json_object();
	char b1[40], b2[40];
	SET(rg, "since_ns", ig_json_u64(since));
	SET(rg, "until_ns", ig_json_u64(until));
	SET(rg, "start", json_string(timearg_iso(b1, sizeof(b1), since)));
	SET(rg, "end", json_string(timearg_iso(b2, sizeof(b2), until)));
	SET(o, "tid", t.tid ? ig_json_u64(t.tid) : json_null());
	SET(o, "pid", t.pid ? ig_json_u64(t.pid) : json_null());
	SET(o, "range", rg);
	SET(o, "events", t.list);
	SET(o, "matched", ig_json_u64(t.matched));
	SET(o, "returned", json_integer((int)json_array_size(t.list)));
	SET(o, "truncated", json_boolean(t.matched > (uint64_t)t.limit));
	SET(o, "source", json_string(mem ? "memory" : "recording"));
	if (why[0])
		SET(o, "note", json_string(why)); /* ingero-top's own words */
	return o;
}

/* --- explain, run_sql ------------------------------------------------------------------------- */

json_t *tool_explain(struct mcp *s, const json_t *a, char *err, size_t len)
{
	struct view v;
	if (view_open(s, a, &v, err, len))
		return NULL;
	json_t *rep = report_of(&v, arg_pid(a), ig_json_get_str(a, "chain", NULL), 0, 0, err, len);
	view_close(&v);
	if (!rep || strcmp(ig_json_get_str(a, "format", "json"), "markdown"))
		return rep;
	char *md = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&md, &n);
	if (f) {
		explain_md(f, mcp_mark(rep, MARK_BRACKETS));
		fclose(f);
	}
	json_decref(rep);
	json_t *o = json_pack("{s:s,s:s}", "format", "markdown", "markdown", md ? md : "");
	free(md);
	return o;
}

json_t *tool_run_sql(struct mcp *s, const json_t *a, char *err, size_t len)
{
	if (s->run.live) {
		snprintf(
		    err, len,
		    "run_sql reads recordings, and this server traces live: use the other tools "
		    "here, "
		    "or start ingero-top mcp --replay FILE.db on a recording (record with --record "
		    "FILE)");
		return NULL;
	}
	if (!s->sql && !(s->sql = query_open(s->target.replay, s->target.nreplay, err, len)))
		return NULL;
	struct query_limits lim = {
	    .timeout_s = s->sql_timeout_s,
	    .max_rows = (uint64_t)ig_json_get_int(a, "max_rows", 200),
	    .max_bytes = 1 << 20,
	};
	struct query_result *r = NULL;
	if (query_run(s->sql, ig_json_get_str(a, "sql", ""), NULL, &lim, &r, err, len))
		return NULL;
	json_t *o = qout_json(r, NULL);
	if (o && r->cut) {
		char m[256];
		snprintf(m, sizeof(m),
			 "result cut at %" PRIu64 " rows (the %s cap): add a LIMIT or a WHERE%s",
			 r->nrows, r->cut == QUERY_CUT_ROWS ? "row" : "1 MiB",
			 r->cut == QUERY_CUT_ROWS ? ", or raise max_rows (5000 at most)"
						  : ", or select fewer columns");
		SET(o, "note", json_string(m));
	}
	query_result_free(r);
	return o;
}
