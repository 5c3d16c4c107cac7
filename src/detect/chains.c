/* The chain store of the detector: one chain per cause (class and process,
 * and op for per-op classes), kept while it fires, held active for hold_s
 * after its last firing, then resolved and dropped after keep_s; names and
 * thresholds; the display order (by impact). */
#include "detect/detect_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[IG_CC_MAX] = {
    [IG_CC_CPU_CONTENTION] = "cpu_contention",
    [IG_CC_LOADER_WAIT] = "loader_wait",
    [IG_CC_BLOCK_IO] = "block_io",
    [IG_CC_HOST_WORK] = "host_work",
    [IG_CC_TIMER_SLEEP] = "timer_sleep",
    [IG_CC_OFFCPU_WAIT] = "offcpu_wait",
    [IG_CC_SYNC_STORM] = "sync_storm",
    [IG_CC_LAUNCH_BOUND] = "launch_bound",
    [IG_CC_COPY_DOMINATED] = "copy_dominated",
    [IG_CC_ALLOC_SPIKES] = "alloc_spikes",
    [IG_CC_MEMORY_PRESSURE] = "memory_pressure",
    [IG_CC_GPU_BOUND] = "gpu_bound",
    [IG_CC_COLD_START] = "cold_start",
    [IG_CC_STRAGGLER] = "nccl_straggler",
    [IG_CC_CPU_QUOTA] = "cpu_quota",
    [IG_CC_FILE_IO] = "file_io",
    [IG_CC_COLD_READ] = "cold_read",
    [IG_CC_LOCK_WAIT] = "lock_wait",
    [IG_CC_GIL_WAIT] = "gil_wait",
    [IG_CC_BACKPRESSURE] = "backpressure",
    [IG_CC_NET_WAIT] = "net_wait",
    [IG_CC_PAGE_FAULTS] = "page_faults",
    [IG_CC_SLOW_BURST] = "slow_burst",
    [IG_CC_STOPPED] = "stopped",
    [IG_CC_LAUNCH_BLOCKING] = "launch_blocking",
    [IG_CC_POLL_WAIT] = "poll_wait",
};
static const char *const class_titles[IG_CC_MAX] = {
    [IG_CC_CPU_CONTENTION] = "CPU contention",
    [IG_CC_LOADER_WAIT] = "data-loader wait",
    [IG_CC_BLOCK_IO] = "block I/O wait",
    [IG_CC_HOST_WORK] = "host work",
    [IG_CC_TIMER_SLEEP] = "paced by a timer",
    [IG_CC_OFFCPU_WAIT] = "off-CPU wait",
    [IG_CC_SYNC_STORM] = "sync storm",
    [IG_CC_LAUNCH_BOUND] = "launch overhead",
    [IG_CC_COPY_DOMINATED] = "copy-dominated",
    [IG_CC_ALLOC_SPIKES] = "allocator spikes",
    [IG_CC_MEMORY_PRESSURE] = "memory pressure",
    [IG_CC_GPU_BOUND] = "GPU-bound",
    [IG_CC_COLD_START] = "cold start",
    [IG_CC_STRAGGLER] = "NCCL straggler",
    [IG_CC_CPU_QUOTA] = "CPU quota",
    [IG_CC_FILE_IO] = "file I/O",
    [IG_CC_COLD_READ] = "cold file reads",
    [IG_CC_LOCK_WAIT] = "lock or condition wait",
    [IG_CC_GIL_WAIT] = "GIL contention",
    [IG_CC_BACKPRESSURE] = "back-pressure",
    [IG_CC_NET_WAIT] = "network wait",
    [IG_CC_PAGE_FAULTS] = "page faults",
    [IG_CC_SLOW_BURST] = "burst of slow calls",
    [IG_CC_STOPPED] = "stopped",
    [IG_CC_LAUNCH_BLOCKING] = "synchronous launches",
    [IG_CC_POLL_WAIT] = "polling wait",
};
static const char *const sev_names[] = {"INFO", "LOW", "MEDIUM", "HIGH"};

const char *detect_class_name(int cls)
{
	return cls >= 0 && cls < IG_CC_MAX ? class_names[cls] : "?";
}

const char *detect_class_title(int cls)
{
	return cls >= 0 && cls < IG_CC_MAX ? class_titles[cls] : "?";
}

const char *detect_sev_name(int sev)
{
	return sev >= 0 && sev <= IG_SEV_HIGH ? sev_names[sev] : "?";
}

int detect_class_by_name(const char *name)
{
	for (int i = 0; i < IG_CC_MAX; i++)
		if (!strcmp(name, class_names[i]) || !strcmp(name, class_titles[i]))
			return i;
	/* the class names of recordings made before 0.2 */
	if (!strcmp(name, "host_starvation") || !strcmp(name, "host starvation"))
		return IG_CC_HOST_WORK;
	if (!strcmp(name, "GPU-bound wait"))
		return IG_CC_GPU_BOUND;
	if (!strcmp(name, "sleeping")) /* the title before 0.3 */
		return IG_CC_TIMER_SLEEP;
	return -1;
}

/* The part each time class is (one part; CPU contention two). */
static const int8_t class_part[IG_CC_MAX] = {
    [IG_CC_CPU_CONTENTION] = IG_PART_PREEMPTED,
    [IG_CC_LOADER_WAIT] = IG_PART_TASK_WAIT,
    [IG_CC_BLOCK_IO] = IG_PART_IO_WAIT,
    [IG_CC_HOST_WORK] = IG_PART_HOST_CPU,
    [IG_CC_TIMER_SLEEP] = IG_PART_SLEEP,
    [IG_CC_OFFCPU_WAIT] = IG_PART_UNKNOWN,
    [IG_CC_SYNC_STORM] = -1,
    [IG_CC_LAUNCH_BOUND] = -1,
    [IG_CC_COPY_DOMINATED] = -1,
    [IG_CC_ALLOC_SPIKES] = -1,
    [IG_CC_MEMORY_PRESSURE] = IG_PART_MEM_PRESSURE,
    [IG_CC_GPU_BOUND] = -1,
    [IG_CC_COLD_START] = -1,
    [IG_CC_STRAGGLER] = -1,
    [IG_CC_CPU_QUOTA] = IG_PART_THROTTLED,
    [IG_CC_FILE_IO] = IG_PART_FILE_IO,
    [IG_CC_COLD_READ] = IG_PART_COLD_READ,
    [IG_CC_LOCK_WAIT] = IG_PART_LOCK_WAIT,
    [IG_CC_GIL_WAIT] = IG_PART_GIL_WAIT,
    [IG_CC_BACKPRESSURE] = IG_PART_BACKPRESSURE,
    [IG_CC_NET_WAIT] = IG_PART_NET_WAIT,
    [IG_CC_PAGE_FAULTS] = IG_PART_FAULT,
    [IG_CC_SLOW_BURST] = -1,
    [IG_CC_STOPPED] = IG_PART_STOPPED,
    [IG_CC_LAUNCH_BLOCKING] = -1,
    [IG_CC_POLL_WAIT] = IG_PART_SLEEP,
};

int detect_class_part(int cls)
{
	return cls >= 0 && cls < IG_CC_MAX ? class_part[cls] : -1;
}

double detect_class_share(int cls, const struct ig_time_parts *t)
{
	if (!t || !t->wall_ns)
		return -1;
	switch (cls) {
	case IG_CC_CPU_CONTENTION:
		return ig_part_share(t, IG_PART_PREEMPTED) +
		       ig_part_share(t, IG_PART_CALL_PREEMPTED);
	case IG_CC_SYNC_STORM:
	case IG_CC_LAUNCH_BOUND:
		return ig_part_share(t, IG_PART_API);
	case IG_CC_GPU_BOUND:
		return ig_part_share(t, IG_PART_GPU_WAIT);
	}
	int k = detect_class_part(cls);
	return k >= 0 ? ig_part_share(t, k) : -1;
}

double detect_evidence(const struct ig_chain *c, const char *key, double def)
{
	for (int i = 0; i < c->nevidence; i++)
		if (!strcmp(c->ev[i].key, key))
			return c->ev[i].value;
	return def;
}

void detect_cfg_default(struct ig_detect_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->sev_low = 0.05;
	c->sev_medium = 0.15;
	c->sev_high = 0.30;
	c->gpu_info = 0.25;
	c->min_calls = 10;
	c->tail_ratio = 3.0;
	c->min_wall_ns = 2 * NS;
	c->min_wall_end_ns = NS / 4;
	c->quiet_s = 2;
	c->storm_rate = 100;
	c->storm_gpu_ratio = 2.0;
	c->storm_gpu_max_ns = 500000;
	c->storm_host_max_ns = 500000;
	c->launch_api = 0.30;
	c->launch_wait_ns = 100000;
	c->poll_sleeps = 2.0;
	c->copy_min_bytes = 65536;
	c->alloc_min_outliers = 3;
	c->alloc_period_tol = 0.25;
	c->page_bytes = 1ull << 30;
	c->mem_pct = 95;
	c->cold_x = 10;
	c->cold_calls = 5;
	c->cold_s = 60;
	c->burst_x = 10;
	c->burst_calls = 3;
	c->burst_span_ms = 1000;
	c->burst_min_ns = 10000000;
	c->burst_share = 0.75;
	c->hold_s = 3;
	c->keep_s = 120;
	c->straggler_ratio = 2.0;
	c->straggler_min_ns = 500000;
}

struct ig_detect *detect_new(const struct ig_detect_cfg *cfg)
{
	struct ig_detect *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	if (cfg && cfg->sev_high > 0)
		d->cfg = *cfg;
	else
		detect_cfg_default(&d->cfg);
	return d;
}

void detect_free(struct ig_detect *d)
{
	if (d)
		free(d->ids);
	free(d);
}

void detect_reset(struct ig_detect *d)
{
	d->n = 0;
	d->gen++;
}

struct detect_state {
	struct ig_chain c[IG_CHAIN_MAX];
	int n;
	int order[IG_CHAIN_MAX];
	uint8_t fired_now[IG_CHAIN_MAX];
	int end;
	char why_none[160];
};

struct detect_state *detect_save(const struct ig_detect *d)
{
	struct detect_state *s = malloc(sizeof(*s));
	if (!s)
		return NULL;
	memcpy(s->c, d->c, (size_t)d->n * sizeof(d->c[0]));
	s->n = d->n;
	memcpy(s->order, d->order, sizeof(s->order));
	memcpy(s->fired_now, d->fired_now, sizeof(s->fired_now));
	s->end = d->end;
	memcpy(s->why_none, d->why_none, sizeof(s->why_none));
	return s;
}

void detect_restore(struct ig_detect *d, const struct detect_state *s)
{
	memcpy(d->c, s->c, (size_t)s->n * sizeof(d->c[0]));
	d->n = s->n;
	memcpy(d->order, s->order, sizeof(d->order));
	memcpy(d->fired_now, s->fired_now, sizeof(d->fired_now));
	d->end = s->end;
	memcpy(d->why_none, s->why_none, sizeof(d->why_none));
	d->gen++;
}

void detect_state_free(struct detect_state *s)
{
	free(s);
}

int detect_count(const struct ig_detect *d)
{
	return d ? d->n : 0;
}

const struct ig_chain *detect_chain(const struct ig_detect *d, int i)
{
	return d && i >= 0 && i < d->n ? &d->c[d->order[i]] : NULL;
}

const struct ig_chain *detect_find(const struct ig_detect *d, uint32_t id)
{
	for (int i = 0; d && i < d->n; i++)
		if (d->c[i].id == id)
			return &d->c[i];
	return NULL;
}

uint64_t detect_generation(const struct ig_detect *d)
{
	return d ? d->gen : 0;
}

/* The id of the chain with this key first detected at now: the one it had
 * before a reset, else the next. Remembered up to IDS_MAX chains (then new
 * ids stay unique, no longer the same after a seek back). */
#define IDS_MAX 65536
static uint32_t chain_id(struct ig_detect *d, uint64_t key, uint64_t now)
{
	for (size_t i = d->nids; i-- > 0;)
		if (d->ids[i].key == key && d->ids[i].first_ns == now)
			return d->ids[i].id;
	uint32_t id = ++d->next_id;
	if (d->nids == d->capids && d->capids < IDS_MAX) {
		size_t cap = d->capids ? d->capids * 2 : 64;
		struct detect_id *v = realloc(d->ids, cap * sizeof(*v));
		if (v) {
			d->ids = v;
			d->capids = cap;
		}
	}
	if (d->nids < d->capids)
		d->ids[d->nids++] = (struct detect_id){.key = key, .first_ns = now, .id = id};
	return id;
}

/* Per-op classes (allocator spikes, cold start, slow bursts) are one chain
 * per (class, op, process); the time classes one per (class, process), whichever op
 * their summary names: the tail a cause explains may move from op to op
 * while the cause stays the same, and must not open a second chain. */
static uint64_t chain_key(int cls, int op, uint32_t pid)
{
	int per_op =
	    cls == IG_CC_ALLOC_SPIKES || cls == IG_CC_COLD_START || cls == IG_CC_SLOW_BURST;
	return ((uint64_t)(unsigned)cls << 48) | ((uint64_t)(unsigned)(per_op ? op : 0) << 32) |
	       pid;
}

int detect_active(const struct ig_detect *d, int cls, int op, uint32_t pid)
{
	uint64_t key = chain_key(cls, op, pid);
	for (int i = 0; i < d->n; i++)
		if (d->c[i].key == key)
			return d->c[i].active;
	return 0;
}

static void tl_add(struct ig_chain *c, uint64_t ts, const char *text)
{
	/* same event twice (it stays the slowest call for several runs): once */
	for (int i = 0; i < c->ntimeline; i++)
		if (c->timeline[i].ts_ns == ts && !strcmp(c->timeline[i].text, text))
			return;
	if (c->ntimeline == IG_CHAIN_MAX_TIMELINE) {
		memmove(&c->timeline[0], &c->timeline[1],
			sizeof(c->timeline[0]) * (IG_CHAIN_MAX_TIMELINE - 1));
		c->ntimeline--;
	}
	/* keep the timeline in time order */
	int i = c->ntimeline;
	while (i > 0 && c->timeline[i - 1].ts_ns > ts) {
		c->timeline[i] = c->timeline[i - 1];
		i--;
	}
	c->timeline[i].ts_ns = ts;
	detect_put(c->timeline[i].text, sizeof(c->timeline[i].text), "%s", text);
	c->ntimeline++;
}

static int content_differs(const struct ig_chain *a, const struct ig_chain *b)
{
	return a->severity != b->severity || a->impact != b->impact ||
	       strcmp(a->summary, b->summary) || a->culprit_pid != b->culprit_pid ||
	       a->culprit_tid != b->culprit_tid || a->tid != b->tid ||
	       strcmp(a->lacking, b->lacking) || a->stack_id != b->stack_id ||
	       a->wake_stack_id != b->wake_stack_id;
}

void detect_fire(struct ig_detect *d, struct finding *f, uint64_t now)
{
	uint64_t key = chain_key(f->c.cls, f->c.op, f->c.pid);
	int i;
	for (i = 0; i < d->n; i++)
		if (d->c[i].key == key)
			break;
	struct ig_chain *c;
	if (i == d->n) {
		if (d->n == IG_CHAIN_MAX) { /* replace the least important, oldest */
			int v = 0;
			for (int k = 1; k < d->n; k++) {
				const struct ig_chain *x = &d->c[k], *y = &d->c[v];
				if (x->active != y->active   ? !x->active
				    : x->impact != y->impact ? x->impact < y->impact
							     : x->last_seen_ns < y->last_seen_ns)
					v = k;
			}
			i = v;
		} else {
			d->n++;
		}
		c = &d->c[i];
		memset(c, 0, sizeof(*c));
		c->id = chain_id(d, key, now);
		detect_put(c->id_str, sizeof(c->id_str), "chain-%04u", c->id);
		c->key = key;
		c->first_seen_ns = now;
		c->updated_ns = now;
		d->gen++;
	} else {
		c = &d->c[i];
	}
	struct ig_chain old = *c;
	int was_active = c->active || !c->fired;
	/* copy content, keep identity and history */
	c->cls = f->c.cls;
	c->severity = f->c.severity;
	c->op = f->c.op;
	c->pid = f->c.pid;
	c->tid = f->c.tid;
	memcpy(c->comm, f->c.comm, IG_COMM_LEN);
	c->culprit_pid = f->c.culprit_pid;
	c->culprit_tid = f->c.culprit_tid;
	memcpy(c->culprit_comm, f->c.culprit_comm, IG_COMM_LEN);
	c->p50_ns = f->c.p50_ns;
	c->p99_ns = f->c.p99_ns;
	c->tail_ratio = f->c.tail_ratio;
	c->impact = f->c.impact;
	c->nevidence = f->c.nevidence;
	memcpy(c->ev, f->c.ev, sizeof(c->ev));
	memcpy(c->summary, f->c.summary, sizeof(c->summary));
	memcpy(c->explanation, f->c.explanation, sizeof(c->explanation));
	c->nrecs = f->c.nrecs;
	memcpy(c->recs, f->c.recs, sizeof(c->recs));
	memcpy(c->lacking, f->c.lacking, sizeof(c->lacking));
	c->stack_id = f->c.stack_id;
	c->wake_stack_id = f->c.wake_stack_id;
	if (!old.fired || c->severity > c->max_severity)
		c->max_severity = c->severity;
	char t[112];
	if (!c->fired) {
		detect_put(t, sizeof(t), "%s %s detected", detect_sev_name(c->severity),
			   detect_class_name(c->cls));
		tl_add(c, now, t);
	} else if (!was_active) {
		detect_put(t, sizeof(t), "%s again (%s)", detect_class_name(c->cls),
			   detect_sev_name(c->severity));
		tl_add(c, now, t);
	} else if (c->severity != old.severity) {
		detect_put(t, sizeof(t), "severity %s -> %s", detect_sev_name(old.severity),
			   detect_sev_name(c->severity));
		tl_add(c, now, t);
	}
	for (int k = 0; k < f->nsteps; k++)
		tl_add(c, f->steps[k].ts_ns, f->steps[k].text);
	c->last_seen_ns = now;
	c->active = 1;
	c->fired++;
	if (old.fired == 0 || content_differs(&old, c) || old.ntimeline != c->ntimeline ||
	    !was_active) {
		c->updated_ns = now;
		d->gen++;
	}
	d->fired_now[i] = 1;
}

/* Chains that did not fire: active for hold_s after the last firing, then
 * resolved, then dropped after keep_s. Functions of last_seen only, so the
 * result does not depend on how often the detector ran in between. */
static void age(struct ig_detect *d, uint64_t now)
{
	uint64_t hold = (uint64_t)d->cfg.hold_s * NS, keep = (uint64_t)d->cfg.keep_s * NS;
	for (int i = 0; i < d->n;) {
		struct ig_chain *c = &d->c[i];
		if (!d->fired_now[i] && now > c->last_seen_ns + keep) {
			d->c[i] = d->c[d->n - 1];
			d->fired_now[i] = d->fired_now[d->n - 1];
			d->n--;
			d->gen++;
			continue;
		}
		if (!d->fired_now[i] && c->active && now > c->last_seen_ns + hold) {
			c->active = 0;
			c->updated_ns = c->last_seen_ns + hold;
			tl_add(c, c->last_seen_ns + hold, "resolved: stopped firing");
			d->gen++;
		}
		i++;
	}
}

static int cmp_order(const void *a, const void *b, void *arg)
{
	const struct ig_detect *d = arg;
	const struct ig_chain *x = &d->c[*(const int *)a], *y = &d->c[*(const int *)b];
	if (x->active != y->active)
		return y->active - x->active;
	/* what to act on first: INFO chains (healthy states) after the others */
	if ((x->severity > IG_SEV_INFO) != (y->severity > IG_SEV_INFO))
		return x->severity > IG_SEV_INFO ? -1 : 1;
	if (x->impact != y->impact)
		return x->impact > y->impact ? -1 : 1;
	if (x->severity != y->severity)
		return y->severity - x->severity;
	if (x->first_seen_ns != y->first_seen_ns)
		return x->first_seen_ns < y->first_seen_ns ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void sort_chains(struct ig_detect *d)
{
	for (int i = 0; i < d->n; i++)
		d->order[i] = i;
	qsort_r(d->order, (size_t)d->n, sizeof(d->order[0]), cmp_order, d);
}

void detect_age_and_sort(struct ig_detect *d, uint64_t now)
{
	age(d, now);
	sort_chains(d);
}

int detect_severity(const struct ig_detect *d, int op, uint32_t pid)
{
	int sev = -1;
	for (int i = 0; d && i < d->n; i++) {
		const struct ig_chain *c = &d->c[i];
		if (!c->active)
			continue;
		if ((op && c->op != op) || (pid && c->pid != pid))
			continue;
		if (c->severity > sev)
			sev = c->severity;
	}
	return sev;
}

void detect_set_lock_kind(struct ig_detect *d, ig_lock_kind_fn fn, void *ctx)
{
	d->lock_kind = fn;
	d->lock_kind_ctx = ctx;
}

void detect_set_sched_group(struct ig_detect *d, ig_sched_group_fn fn, void *ctx)
{
	d->sched_group = fn;
	d->sched_group_ctx = ctx;
}
