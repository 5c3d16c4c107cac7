/* The Perfetto (Chrome trace-event JSON) export: small growable tables
 * (report/keytab.h) of processes, thread tracks and stacks, the stream of
 * events written one JSON object each as the replay source delivers them
 * (up to max_events, the rest counted), then chains, metadata and the
 * trailer. See perfetto.h. */
#include "report/perfetto.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/ops.h"
#include "core/source.h"
#include "report/keytab.h"
#include "store/recfmt.h"
#include "store/replay.h"

#define NODE_SHIFT 22		   /* pids and tids of node n are n << 22 + id */
#define MAX_NODES 128		   /* so that every id stays below WAKER_BASE */
#define WAKER_BASE 0x40000000u	   /* tid of the wake-ups track of a process: + its id */
#define HOST_BASE 0x7f000000u	   /* pid of the pseudo process of node n: + n */
#define GRID_NS 125		   /* 1/8 us: every timestamp exact in binary */
#define MARGIN_NS 3600000000000ull /* the time base: an hour before the first event */
#define RING 64			   /* slices of a track checked for partial overlaps */

/* --- the state of one export ---------------------------------------------------------------- */

struct span {
	int64_t s, e; /* grid units from the base */
};

struct track {
	uint64_t key;
	uint32_t id, pid; /* real tid (or pid of a wake-ups track) and pid */
	uint8_t node, waker;
	char name[IG_COMM_LEN + 1];
	int n, head;
	struct span ring[RING];
};

struct proc {
	uint64_t key;
	uint32_t pid;
	uint8_t node, used;
	uint8_t named; /* 3 a name event, 2 the main thread's comm, 1 another comm */
	char name[IG_COMM_LEN + 1];
};

struct stk {
	uint64_t key;
	json_t *frames;
};

struct px {
	FILE *out;
	struct ig_source *src;
	struct perfetto_opts o;
	struct perfetto_stats st;
	uint64_t base;
	int multi;
	uint64_t nwritten, flow_id;
	uint64_t kept; /* events written, against max_events */
	struct keytab tracks, procs, stacks;
	uint8_t host_used[MAX_NODES];
	int err;
};

static uint64_t key_of(int kind, unsigned node, uint32_t id)
{
	return (uint64_t)kind << 56 | (uint64_t)node << 32 | id;
}

static uint32_t trace_id(unsigned node, uint32_t id)
{
	return ((uint32_t)node << NODE_SHIFT) + id;
}

static void set_name(char *dst, const char *comm)
{
	size_t n = strnlen(comm, IG_COMM_LEN);
	memcpy(dst, comm, n);
	dst[n] = 0;
}

static struct proc *proc_get(struct px *x, unsigned node, uint32_t pid)
{
	struct proc *p = keytab_get(&x->procs, key_of(0, node, pid), 1);
	if (!p) {
		x->err = -ENOMEM;
		return NULL;
	}
	p->pid = pid;
	p->node = (uint8_t)node;
	return p;
}

/* A better name for a process than the one it has, by rank. */
static void proc_name(struct px *x, unsigned node, uint32_t pid, const char *comm, int rank)
{
	if (!comm[0])
		return;
	struct proc *p = proc_get(x, node, pid);
	if (p && rank >= p->named) {
		set_name(p->name, comm);
		p->named = (uint8_t)rank;
	}
}

/* The track of a thread (waker = 0) or the wake-ups track of a process. */
static struct track *track_get(struct px *x, unsigned node, uint32_t id, uint32_t pid, int waker)
{
	struct track *t = keytab_get(&x->tracks, key_of(1 + waker, node, id), 1);
	if (!t) {
		x->err = -ENOMEM;
		return NULL;
	}
	t->id = id;
	t->pid = pid;
	t->node = (uint8_t)node;
	t->waker = (uint8_t)waker;
	return t;
}

/* --- time ---------------------------------------------------------------------------------- */

static int64_t grid(struct px *x, uint64_t ns, int *clipped)
{
	if (ns < x->base) {
		*clipped = 1;
		return 0;
	}
	return (int64_t)((ns - x->base + GRID_NS / 2) / GRID_NS);
}

static json_t *us(int64_t g)
{
	return json_real((double)g / 8.0);
}

/* Moves s so that [s, e] is nested in or disjoint from the last slices of
 * the track (a partial overlap can only come from clock skew between two
 * sources of a recording). Returns 1 when it moved s. */
static int fit(struct track *t, int64_t *s, int64_t e)
{
	int moved = 0;
	for (int iter = 0; iter < RING; iter++) {
		int changed = 0;
		for (int i = 0; i < t->n; i++) {
			const struct span *p = &t->ring[i];
			if (p->s < *s && *s < p->e && p->e < e) {
				*s = p->e;
				changed = moved = 1;
			}
		}
		if (!changed)
			break;
	}
	return moved;
}

/* 1 when [s, e] overlaps a slice of the track partially. */
static int crosses(const struct track *t, int64_t s, int64_t e)
{
	for (int i = 0; i < t->n; i++) {
		const struct span *p = &t->ring[i];
		if ((p->s < s && s < p->e && p->e < e) || (s < p->s && p->s < e && e < p->e))
			return 1;
	}
	return 0;
}

static void remember(struct track *t, int64_t s, int64_t e)
{
	t->ring[t->head] = (struct span){s, e};
	t->head = (t->head + 1) % RING;
	if (t->n < RING)
		t->n++;
}

/* --- writing ---------------------------------------------------------------------------------- */

static void put(struct px *x, json_t *o)
{
	char *s = o ? ig_json_dumps_exact(o) : NULL;
	json_decref(o);
	if (!s) {
		x->err = -ENOMEM;
		return;
	}
	if (fputs(x->nwritten++ ? ",\n" : "\n", x->out) == EOF || fputs(s, x->out) == EOF)
		x->err = -EIO;
	free(s);
}

static json_t *ev(const char *ph, const char *name, const char *cat, int64_t ts, uint32_t pid,
		  uint32_t tid)
{
	json_t *o = json_object();
	int r = ig_json_set(o, "ph", json_string(ph));
	r |= ig_json_set(o, "name", ig_json_str(name));
	if (cat)
		r |= ig_json_set(o, "cat", json_string(cat));
	r |= ig_json_set(o, "ts", us(ts));
	r |= ig_json_set(o, "pid", json_integer(pid));
	r |= ig_json_set(o, "tid", json_integer(tid));
	if (r) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* "comm[pid]" of another task, untrusted. */
static json_t *who(const char *comm, uint32_t pid)
{
	char b[IG_COMM_LEN + 16];
	snprintf(b, sizeof(b), "%.*s[%u]", IG_COMM_LEN, comm, pid);
	return ig_json_str(b);
}

static json_t *jcomm(const char *comm)
{
	return ig_json_strn(comm, strnlen(comm, IG_COMM_LEN));
}

static const char *dir_name(uint64_t d)
{
	static const char *const n[] = {"HtoH", "HtoD", "DtoH", "DtoD", "default"};
	return d < 5 ? n[d] : "?";
}

static json_t *call_args(struct px *x, const struct ig_event *e)
{
	json_t *a = json_object();
	const struct ig_op_info *oi = ig_op_info(e->op);
	int r = ig_json_set(a, "dur_ns", ig_json_u64(e->dur_ns));
	r |= ig_json_set(a, "ret", json_integer(e->ret));
	if (oi && (oi->kind & (IG_OPK_ALLOC | IG_OPK_COPY)))
		r |= ig_json_set(a, "bytes", ig_json_u64(e->arg0));
	if (oi && (oi->kind & IG_OPK_COPY))
		r |= ig_json_set(a, "direction", json_string(dir_name(e->arg1)));
	if (e->stream) {
		char h[24];
		snprintf(h, sizeof(h), "0x%" PRIx64, e->stream);
		r |= ig_json_set(a, "stream", json_string(h));
	}
	if (!(e->flags & IG_F_NO_SPLIT)) {
		r |= ig_json_set(a, "preempted_ns", ig_json_u64(e->preempt_ns));
		r |= ig_json_set(a, "blocked_ns", ig_json_u64(e->blocked_ns));
		r |= ig_json_set(a, "switches", json_integer(e->switches));
	}
	if (e->other_pid)
		r |= ig_json_set(a, "preempted_by", who(e->other_comm, e->other_pid));
	r |= ig_json_set(a, "cpu", json_integer(e->cpu));
	struct stk *k = e->stack_id ? keytab_get(&x->stacks, e->stack_id, 0) : NULL;
	if (k && k->frames)
		r |= ig_json_set(a, "stack", json_incref(k->frames));
	else if (e->stack_id) {
		char h[24];
		snprintf(h, sizeof(h), "0x%016" PRIx64, e->stack_id);
		r |= ig_json_set(a, "stack_id", json_string(h));
	}
	if (r) {
		json_decref(a);
		return NULL;
	}
	return a;
}

static const char *off_name(const struct ig_event *e, const char **cname)
{
	if (e->state == IG_OFF_PREEMPTED) {
		*cname = "thread_state_runnable";
		return "preempted";
	}
	if (e->state != IG_OFF_BLOCKED) {
		*cname = "thread_state_unknown";
		return "off-CPU";
	}
	if (e->flags & IG_F_DSTATE) {
		*cname = "thread_state_iowait";
		return "blocked: I/O";
	}
	if (e->flags & IG_F_FAULT) {
		*cname = "thread_state_uninterruptible";
		return "blocked: page fault";
	}
	*cname = "thread_state_sleeping";
	return e->flags & IG_F_TIMER ? "blocked: timer" : "blocked";
}

static json_t *off_args(const struct ig_event *e)
{
	json_t *a = json_object();
	static const char *const states[] = {"unknown", "preempted", "blocked"};
	int r = ig_json_set(a, "dur_ns", ig_json_u64(e->dur_ns));
	r |= ig_json_set(a, "state", json_string(states[e->state <= 2 ? e->state : 0]));
	r |= ig_json_set(a, "in_call", json_boolean(e->flags & IG_F_IN_CALL));
	r |= ig_json_set(a, "cpu", json_integer(e->cpu));
	if (e->other_pid)
		r |= ig_json_set(a, e->state == IG_OFF_BLOCKED ? "woken_by" : "preempted_by",
				 who(e->other_comm, e->other_pid));
	if (e->state == IG_OFF_BLOCKED && e->preempt_ns)
		r |= ig_json_set(a, "runnable_ns", ig_json_u64(e->preempt_ns));
	if (r) {
		json_decref(a);
		return NULL;
	}
	return a;
}

/* --- events -------------------------------------------------------------------------------------
 */

static int in_range(const struct px *x, uint64_t ts, uint64_t dur)
{
	return !(x->o.until_ns && ts > x->o.until_ns) &&
	       !(x->o.since_ns && ts + dur < x->o.since_ns);
}

static int keep(const struct px *x, const struct ig_event *e)
{
	if (!in_range(x, e->ts_ns, e->dur_ns))
		return 0;
	if (!x->o.npids)
		return 1;
	for (int i = 0; i < x->o.npids; i++)
		if (x->o.pids[i] == e->pid)
			return 1;
	return 0;
}

/* A complete slice on the thread of e, fitted into its track. */
static struct track *slice(struct px *x, const struct ig_event *e, int64_t *s, int64_t *en)
{
	struct track *t = track_get(x, e->node, e->tid, e->pid, 0);
	if (!t)
		return NULL;
	if (e->comm[0])
		set_name(t->name, e->comm);
	int clipped = 0;
	*s = grid(x, e->ts_ns, &clipped);
	*en = grid(x, e->ts_ns + e->dur_ns, &clipped);
	x->st.clipped += (uint64_t)clipped;
	x->st.trimmed += (uint64_t)fit(t, s, *en);
	remember(t, *s, *en);
	proc_name(x, e->node, e->pid, e->comm, e->tid == e->pid ? 2 : 1);
	struct proc *p = proc_get(x, e->node, e->pid);
	if (p)
		p->used = 1;
	return t;
}

static void on_call(struct px *x, const struct ig_event *e)
{
	int64_t s, en;
	if (!slice(x, e, &s, &en))
		return;
	json_t *o = ev("X", ig_op_name(e->op), "cuda", s, trace_id(e->node, e->pid),
		       trace_id(e->node, e->tid));
	if (o && (ig_json_set(o, "dur", us(en - s)) || ig_json_set(o, "args", call_args(x, e)))) {
		json_decref(o);
		o = NULL;
	}
	put(x, o);
	x->st.calls++;
}

/* The arrow from the waker to the blocked interval [s, en] of e: a short
 * wake-up slice on the waker's process, a flow start inside it and a flow
 * end inside the interval, in that order of time. */
static void wake_flow(struct px *x, const struct ig_event *e, int64_t s, int64_t en)
{
	int clipped = 0;
	uint64_t woke = e->ts_ns + e->dur_ns - (e->preempt_ns < e->dur_ns ? e->preempt_ns : 0);
	int64_t f = grid(x, woke, &clipped) + 1;
	if (f >= en)
		f = en - 1;
	if (f - 1 < s || f - 2 < 0) {
		x->st.flows_skipped++;
		return;
	}
	int64_t at = f - 1;
	struct track *w = track_get(x, e->node, e->other_pid, e->other_pid, 1);
	if (!w)
		return;
	if (crosses(w, at - 1, at + 1)) {
		x->st.flows_skipped++;
		return;
	}
	remember(w, at - 1, at + 1);
	proc_name(x, e->node, e->other_pid, e->other_comm, 1);
	struct proc *p = proc_get(x, e->node, e->other_pid);
	if (p)
		p->used = 1;
	uint32_t wpid = trace_id(e->node, e->other_pid), wtid = WAKER_BASE + wpid;
	uint64_t id = ++x->flow_id;
	json_t *m = ev("X", "wake-up", "wakeup", at - 1, wpid, wtid);
	json_t *a = json_object();
	int r = !m || ig_json_set(m, "dur", us(2));
	r |= ig_json_set(a, "woke", who(e->comm, e->tid));
	r |= ig_json_set(m, "args", a);
	put(x, r ? (json_decref(m), NULL) : m);
	json_t *fs = ev("s", "wakeup", "wakeup", at, wpid, wtid);
	if (fs && ig_json_set(fs, "id", json_integer((json_int_t)id))) {
		json_decref(fs);
		fs = NULL;
	}
	put(x, fs);
	json_t *fe =
	    ev("f", "wakeup", "wakeup", f, trace_id(e->node, e->pid), trace_id(e->node, e->tid));
	if (fe && (ig_json_set(fe, "id", json_integer((json_int_t)id)) ||
		   ig_json_set(fe, "bp", json_string("e")))) {
		json_decref(fe);
		fe = NULL;
	}
	put(x, fe);
	x->st.flows++;
}

static void on_offcpu(struct px *x, const struct ig_event *e)
{
	int64_t s, en;
	if (!slice(x, e, &s, &en))
		return;
	const char *cname;
	const char *name = off_name(e, &cname);
	json_t *o =
	    ev("X", name, "offcpu", s, trace_id(e->node, e->pid), trace_id(e->node, e->tid));
	if (o &&
	    (ig_json_set(o, "dur", us(en - s)) || ig_json_set(o, "cname", json_string(cname)) ||
	     ig_json_set(o, "args", off_args(e)))) {
		json_decref(o);
		o = NULL;
	}
	put(x, o);
	x->st.offcpu++;
	if (e->state == IG_OFF_BLOCKED && e->other_pid && !(e->flags & IG_F_TIMER))
		wake_flow(x, e, s, en);
}

static void on_process(struct px *x, const struct ig_event *e)
{
	static const char *const what[IG_EV_KIND_MAX] = {
	    [IG_EV_FORK] = "fork", [IG_EV_EXEC] = "exec", [IG_EV_EXIT] = "exit"};
	if (e->kind == IG_EV_EXEC)
		proc_name(x, e->node, e->pid, e->comm, 3);
	int clipped = 0;
	json_t *o = ev("i", what[e->kind], "process", grid(x, e->ts_ns, &clipped),
		       trace_id(e->node, e->pid), trace_id(e->node, e->tid ? e->tid : e->pid));
	json_t *a = json_object();
	int r = !o || ig_json_set(o, "s", json_string("p"));
	if (e->kind == IG_EV_FORK)
		r |= ig_json_set(a, "child", ig_json_u64(e->arg0));
	if (e->comm[0])
		r |= ig_json_set(a, "comm", jcomm(e->comm));
	r |= ig_json_set(o, "args", a);
	put(x, r ? (json_decref(o), NULL) : o);
	struct proc *p = proc_get(x, e->node, e->pid);
	if (p)
		p->used = 1;
	x->st.instants++;
	x->st.clipped += (uint64_t)clipped;
}

static void on_snapshot(struct px *x, const struct ig_event *e)
{
	int clipped = 0;
	uint32_t h = HOST_BASE + e->node;
	json_t *o = ev("C", "host", "host", grid(x, e->ts_ns, &clipped), h, h);
	json_t *a = json_object();
	int r = ig_json_set(a, "cpu_pct", json_real((double)e->arg0 / 10.0));
	r |= ig_json_set(a, "mem_pct", json_real((double)e->arg1 / 10.0));
	r |= ig_json_set(a, "load1", json_real((double)e->blocked_ns / 100.0));
	r |= ig_json_set(o, "args", a);
	put(x, r ? (json_decref(o), NULL) : o);
	x->host_used[e->node] = 1;
	x->st.counters++;
}

static void on_event(void *ctx, const struct ig_event *e)
{
	struct px *x = ctx;
	x->st.read++;
	if (x->err)
		return;
	if (e->node >= MAX_NODES) {
		x->err = -E2BIG;
		return;
	}
	if (e->kind == IG_EV_COMM) {
		proc_name(x, e->node, e->pid, e->comm, 3);
		x->st.other++;
		return;
	}
	int known = e->kind == IG_EV_CALL || e->kind == IG_EV_OFFCPU || e->kind == IG_EV_FORK ||
		    e->kind == IG_EV_EXEC || e->kind == IG_EV_EXIT || e->kind == IG_EV_SNAPSHOT;
	if (!known) {
		x->st.other++;
		return;
	}
	/* host snapshots are context: kept whatever the pids */
	if (e->kind == IG_EV_SNAPSHOT ? !in_range(x, e->ts_ns, 0) : !keep(x, e)) {
		x->st.filtered++;
		return;
	}
	if (x->o.max_events && x->kept == x->o.max_events) {
		if (!x->st.left_out++)
			x->st.cut_ns = e->ts_ns ? e->ts_ns : 1;
		return;
	}
	x->kept++;
	if (e->kind == IG_EV_SNAPSHOT)
		on_snapshot(x, e);
	else if (e->kind == IG_EV_CALL)
		on_call(x, e);
	else if (e->kind == IG_EV_OFFCPU)
		on_offcpu(x, e);
	else
		on_process(x, e);
}

/* --- tables read before the stream ------------------------------------------------------------ */

static void name_row(void *ctx, uint32_t pid, const char *name, uint64_t seen_at_ns, unsigned node)
{
	struct px *x = ctx;
	if (node < MAX_NODES)
		proc_name(x, node, pid, name, 3);
}

/* One frame as text: "sym+0x1a (libfoo.so)", "step (train.py:42)", "[note]". */
static int frame_text(void *ctx, const struct rec_frame *f)
{
	json_t *arr = ctx;
	char b[512];
	switch (f->kind) {
	case REC_FRAME_NATIVE:
		if (f->sym && *f->sym)
			snprintf(b, sizeof(b), "%s+0x%" PRIx64 " (%s)", f->sym, f->off,
				 f->file ? f->file : "?");
		else if (f->file && *f->file && f->off)
			snprintf(b, sizeof(b), "%s+0x%" PRIx64, f->file, f->off);
		else
			snprintf(b, sizeof(b), "0x%" PRIx64 " (%s)", f->ip,
				 f->file ? f->file : "?");
		break;
	case REC_FRAME_PY:
		snprintf(b, sizeof(b), "%s (%s:%d)", f->sym ? f->sym : "?", f->file ? f->file : "?",
			 f->line);
		break;
	default:
		snprintf(b, sizeof(b), "[%s]", f->note ? f->note : "");
	}
	return ig_json_push(arr, ig_json_str(b)) ? -ENOMEM : 0;
}

static int stack_row(void *ctx, uint64_t hash, const char *ips, const char *frames)
{
	struct px *x = ctx;
	if (!frames || !*frames || keytab_get(&x->stacks, hash, 0))
		return 0;
	json_t *arr = json_array();
	if (!arr || recfmt_frames_parse(frames, frame_text, arr) || !json_array_size(arr)) {
		json_decref(arr);
		return 0;
	}
	struct stk *k = keytab_get(&x->stacks, hash, 1);
	if (!k) {
		json_decref(arr);
		return -ENOMEM;
	}
	k->frames = arr;
	return 0;
}

/* --- what follows the stream
 * ---------------------------------------------------------------------- */

static const char *node_name(struct px *x, unsigned node, char *b, size_t n)
{
	const char *s = replay_node_name(x->src, node);
	if (!s || !*s) {
		snprintf(b, n, "node%u", node);
		return b;
	}
	return s;
}

static int node_of(struct px *x, const char *name)
{
	int n = replay_node_count(x->src);
	for (int i = 0; name && *name && i < n && i < MAX_NODES; i++) {
		const char *s = replay_node_name(x->src, (unsigned)i);
		if (s && !strcmp(s, name))
			return i;
	}
	return 0;
}

/* Text from a recording as a top-level string of an event: printable
 * ASCII without quotes or backslashes, anything else '?'. Perfetto's JSON
 * tokenizer reads the keys before "ts" itself and gives up on the whole
 * file at an escape sequence; the full text goes in args. */
static void plain(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e || *s == '"' || *s == '\\')
			*s = '?';
}

static void write_chains(struct px *x)
{
	struct rec_chain *c = NULL;
	size_t n = 0;
	if (replay_chains(x->src, &c, &n))
		return;
	for (size_t i = 0; i < n && !x->err; i++) {
		uint64_t t = c[i].detected_at_ns;
		if ((x->o.since_ns && t < x->o.since_ns) || (x->o.until_ns && t > x->o.until_ns)) {
			x->st.filtered++;
			continue;
		}
		if (x->st.cut_ns && t >= x->st.cut_ns) {
			x->st.left_out++;
			continue;
		}
		int node = node_of(x, c[i].node), clipped = 0;
		char name[160];
		snprintf(name, sizeof(name), "[%s] %s%s", c[i].severity ? c[i].severity : "?",
			 c[i].root_cause ? c[i].root_cause : "chain",
			 c[i].by_ingero ? " (Ingero's)" : "");
		plain(name);
		uint32_t h = HOST_BASE + (uint32_t)node;
		json_t *o = ev("i", name, "chain", grid(x, t, &clipped), h, h);
		json_t *a = json_object();
		int r = !o || ig_json_set(o, "s", json_string("p"));
		r |= ig_json_set(a, "id", ig_json_str(c[i].id));
		r |= ig_json_set(a, "severity", ig_json_str(c[i].severity));
		r |= ig_json_set(a, "summary", ig_json_str(c[i].summary));
		r |= ig_json_set(a, "explanation", ig_json_str(c[i].explanation));
		if (c[i].cuda_op && *c[i].cuda_op)
			r |= ig_json_set(a, "op", ig_json_str(c[i].cuda_op));
		json_t *recs = json_array();
		for (size_t k = 0; k < c[i].nrecs; k++)
			r |= ig_json_push(recs, ig_json_str(c[i].recs[k]));
		r |= ig_json_set(a, "recommendations", recs);
		r |= ig_json_set(a, "detected_at_unix_ns", ig_json_u64(t));
		/* a file Ingero wrote holds Ingero's chains; the viewer and
		 * explain show ingero-top's own analysis of its events */
		r |= ig_json_set(a, "detected_by",
				 json_string(c[i].by_ingero ? "Ingero (recorded in the file)"
							    : "ingero-top (recorded live)"));
		r |= ig_json_set(o, "args", a);
		put(x, r ? (json_decref(o), NULL) : o);
		x->host_used[node] = 1;
		x->st.chains++;
		x->st.chains_ingero += c[i].by_ingero != 0;
	}
	replay_chains_free(c, n);
}

static void meta(struct px *x, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
	json_t *o = json_object();
	json_t *a = json_object();
	int r = ig_json_set(o, "ph", json_string("M"));
	r |= ig_json_set(o, "name", json_string(what));
	r |= ig_json_set(o, "pid", json_integer(pid));
	r |= ig_json_set(o, "tid", json_integer(tid));
	r |= ig_json_set(a, "name", ig_json_str(name));
	r |= ig_json_set(o, "args", a);
	put(x, r ? (json_decref(o), NULL) : o);
}

static void write_metadata(struct px *x)
{
	char b[160], nb[40];
	for (size_t i = 0; i < x->procs.n; i++) {
		const struct proc *p = keytab_at(&x->procs, i);
		if (!p->used)
			continue;
		const char *nm = p->name[0] ? p->name : "?";
		if (x->multi)
			snprintf(b, sizeof(b), "%s [%u] on %s", nm, p->pid,
				 node_name(x, p->node, nb, sizeof(nb)));
		else
			snprintf(b, sizeof(b), "%s", nm);
		meta(x, "process_name", trace_id(p->node, p->pid), trace_id(p->node, p->pid), b);
		x->st.processes++;
	}
	for (size_t i = 0; i < x->tracks.n; i++) {
		const struct track *t = keytab_at(&x->tracks, i);
		uint32_t pid = trace_id(t->node, t->pid);
		if (t->waker) {
			meta(x, "thread_name", pid, WAKER_BASE + pid,
			     "wake-ups (thread not recorded)");
			continue;
		}
		if (x->multi)
			snprintf(b, sizeof(b), "%s [%u]", t->name[0] ? t->name : "?", t->id);
		else
			snprintf(b, sizeof(b), "%s", t->name[0] ? t->name : "?");
		meta(x, "thread_name", pid, trace_id(t->node, t->id), b);
		x->st.threads++;
	}
	for (unsigned n = 0; n < MAX_NODES; n++) {
		if (!x->host_used[n])
			continue;
		snprintf(b, sizeof(b), "node %s", node_name(x, n, nb, sizeof(nb)));
		meta(x, "process_name", HOST_BASE + n, HOST_BASE + n, b);
	}
}

/* Where a cut trace stops, on the first node's track. */
static void write_cut(struct px *x)
{
	char name[96];
	int clipped = 0;
	snprintf(name, sizeof(name), "export cut: --max-events %" PRIu64 " reached",
		 x->o.max_events);
	json_t *o = ev("i", name, "export", grid(x, x->st.cut_ns, &clipped), HOST_BASE, HOST_BASE);
	json_t *a = json_object();
	int r = !o || ig_json_set(o, "s", json_string("p"));
	r |= ig_json_set(a, "left_out", ig_json_u64(x->st.left_out));
	r |= ig_json_set(o, "args", a);
	put(x, r ? (json_decref(o), NULL) : o);
	x->host_used[0] = 1;
}

static void write_trailer(struct px *x)
{
	const struct perfetto_stats *s = &x->st;
	json_t *c = json_object(), *od = json_object(), *files = json_array();
	int r = 0;
#define CNT(k) r |= ig_json_set(c, #k, ig_json_u64(s->k))
	CNT(read);
	CNT(calls);
	CNT(offcpu);
	CNT(flows);
	CNT(flows_skipped);
	CNT(chains);
	CNT(instants);
	CNT(counters);
	CNT(trimmed);
	CNT(clipped);
	CNT(filtered);
	CNT(other);
	CNT(processes);
	CNT(threads);
	for (int i = 0; i < replay_file_count(x->src); i++) {
		struct replay_file_info fi;
		if (!replay_file_info(x->src, i, &fi)) {
			r |= ig_json_push(files, ig_json_str(fi.path));
			x->st.summarised += fi.summarised;
		}
	}
	CNT(summarised);
	CNT(left_out);
#undef CNT
	r |= ig_json_set(od, "generator", json_string("ingero-top " IG_VERSION));
	r |= ig_json_set(od, "ts_base_unix_ns", ig_json_u64(x->base));
	r |= ig_json_set(od, "files", files);
	r |= ig_json_set(od, "counts", c);
	if (s->cut_ns) {
		json_t *cut = json_object();
		r |= ig_json_set(cut, "max_events", ig_json_u64(x->o.max_events));
		r |= ig_json_set(cut, "left_out", ig_json_u64(s->left_out));
		r |= ig_json_set(cut, "at_unix_ns", ig_json_u64(s->cut_ns));
		r |= ig_json_set(od, "cut", cut);
	}
	char *t = r ? NULL : ig_json_dumps_exact(od);
	json_decref(od);
	if (!t) {
		x->err = -ENOMEM;
		return;
	}
	/* no displayTimeUnit: some Perfetto versions take it for the unit of ts */
	if (fprintf(x->out, "\n],\n\"otherData\":%s}\n", t) < 0)
		x->err = -EIO;
	free(t);
}

/* --- the export
 * ----------------------------------------------------------------------------------- */

static void px_free(struct px *x)
{
	for (size_t i = 0; x->stacks.v && i < x->stacks.n; i++)
		json_decref(((struct stk *)keytab_at(&x->stacks, i))->frames);
	keytab_free(&x->tracks);
	keytab_free(&x->procs);
	keytab_free(&x->stacks);
}

static int stream(struct px *x, char *err, size_t errlen)
{
	int n;
	while ((n = x->src->ops->poll(x->src, on_event, x, 4096)) > 0 && !x->err)
		;
	if (n < 0 && n != -ENODATA && !x->err) {
		const char *why = replay_error(x->src);
		snprintf(err, errlen, "%s", why ? why : "reading the recording failed");
		return -EIO;
	}
	return 0;
}

int perfetto_export(FILE *out, struct ig_source *src, const struct perfetto_opts *o,
		    struct perfetto_stats *st, char *err, size_t errlen)
{
	struct px x = {.out = out, .src = src};
	if (o)
		x.o = *o;
	if (replay_node_count(src) > MAX_NODES) {
		snprintf(err, errlen, "cannot export %d nodes at once (%d at most)",
			 replay_node_count(src), MAX_NODES);
		return -E2BIG;
	}
	x.multi = replay_node_count(src) > 1;
	uint64_t start = 0, end = 0;
	if (replay_span(src, &start, &end))
		start = end = 0;
	uint64_t from = x.o.since_ns ? x.o.since_ns : start;
	from -= from % 1000000000ull;
	x.base = from > MARGIN_NS ? from - MARGIN_NS : 0;
	int rc = 0;
	if (keytab_init(&x.tracks, sizeof(struct track)) ||
	    keytab_init(&x.procs, sizeof(struct proc)) ||
	    keytab_init(&x.stacks, sizeof(struct stk))) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	if (x.o.since_ns && (rc = replay_seek(src, x.o.since_ns))) {
		snprintf(err, errlen, "cannot seek in the recording: %s", strerror(-rc));
		goto out;
	}
	replay_process_names(src, name_row, &x);
	if (replay_stacks(src, stack_row, &x) < 0) {
		const char *why = replay_error(src);
		snprintf(err, errlen, "%s", why ? why : "cannot read the stack traces");
		rc = -EIO;
		goto out;
	}
	if (fputs("{\"traceEvents\":[", out) == EOF)
		x.err = -EIO;
	if (!x.err && (rc = stream(&x, err, errlen)))
		goto out;
	if (!x.err)
		write_chains(&x);
	if (!x.err && x.st.cut_ns)
		write_cut(&x);
	if (!x.err)
		write_metadata(&x);
	if (!x.err)
		write_trailer(&x);
	if (!x.err && (fflush(out) || ferror(out)))
		x.err = -EIO;
	rc = x.err;
	if (rc == -E2BIG)
		snprintf(err, errlen, "cannot export more than %d nodes at once", MAX_NODES);
	else if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	else if (rc)
		snprintf(err, errlen, "cannot write the trace: %s", strerror(-rc));
out:
	if (st)
		*st = x.st;
	px_free(&x);
	return rc;
}
