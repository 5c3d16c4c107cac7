/* The stacks module's life cycle and its ingest-side entry points: calls
 * counted per (op, stack), new stack ids fetched through the kernel
 * interface (struct stacks_kernel) and queued for the resolver, process
 * events turned into resolver jobs. See stacks.h and stacks_int.h. */
#include "stacks/stacks_int.h"

#include <errno.h>
#include <stdlib.h>

struct stacks *stacks_new(const struct stacks_opts *o)
{
	struct stacks *st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	if (o)
		st->o = *o;
	if (!st->o.max_stacks)
		st->o.max_stacks = 4096;
	if (!st->o.max_series)
		st->o.max_series = 8192;
	if (!st->o.max_procs)
		st->o.max_procs = 512;
	if (stk_tab_init(st) || stk_resolver_init(st))
		goto fail;
	pthread_mutex_init(&st->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&st->work, &ca);
	pthread_cond_init(&st->idle, &ca);
	pthread_condattr_destroy(&ca);
	if (!st->o.inline_resolve && stk_resolver_start(st)) {
		pthread_mutex_destroy(&st->mu);
		pthread_cond_destroy(&st->work);
		pthread_cond_destroy(&st->idle);
		goto fail;
	}
	return st;
fail:
	stk_resolver_free(st);
	stk_tab_free(st);
	free(st);
	return NULL;
}

void stacks_free(struct stacks *st)
{
	if (!st)
		return;
	stk_resolver_stop(st);
	stk_resolver_free(st);
	stk_tab_free(st);
	pthread_mutex_destroy(&st->mu);
	pthread_cond_destroy(&st->work);
	pthread_cond_destroy(&st->idle);
	free(st);
}

void stacks_set_kernel(struct stacks *st, const struct stacks_kernel *k)
{
	pthread_mutex_lock(&st->mu);
	if (k)
		st->kern = *k;
	else
		memset(&st->kern, 0, sizeof(st->kern));
	pthread_mutex_unlock(&st->mu);
}

/* A raw stack from outside says how many entries it holds: never more than
 * it has room for. */
static void raw_clamp(struct igb_stack *raw)
{
	if (raw->nips > IGB_STACK_MAX)
		raw->nips = IGB_STACK_MAX;
	if (raw->npy > IGB_PY_MAX)
		raw->npy = IGB_PY_MAX;
}

/* The raw stack of id from the kernel, or NULL. Called with mu held, which
 * is dropped around the fetch (a syscall). */
static struct igb_stack *fetch_raw(struct stacks *st, uint64_t id)
{
	struct stacks_kernel k = st->kern;
	struct igb_stack *raw;

	pthread_mutex_unlock(&st->mu);
	raw = malloc(sizeof(*raw));
	if (raw && k.fetch_stack(k.ctx, id, raw)) {
		free(raw);
		raw = NULL;
	}
	if (raw)
		raw_clamp(raw);
	pthread_mutex_lock(&st->mu);
	return raw;
}

/* Hands raw (ours) to the stack in slot i and queues its resolution. */
static void queue_raw(struct stacks *st, int i, struct igb_stack *raw)
{
	struct stk *s = &st->stks[i];

	s->raw = raw;
	s->state = STACKS_PENDING;
	if (!stk_job_post(st, (struct job){.type = J_STACK, .pid = s->pid, .id = s->id})) {
		st->stats.queue_full++;
		s->state = STACKS_MISSING;
	}
}

/* The text of /proc/PID/maps now (NULL when it cannot be read): the
 * mappings of a process met for the first time, kept with its job in case
 * it exits before the resolver reads them (it reads them again if not). */
#define MAPS_MAX (4u << 20)
static char *maps_text(uint32_t pid)
{
	char path[40];
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	size_t cap = 16384, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - 1 - n, f);
		if (n < cap - 1 || cap >= MAPS_MAX)
			break;
		char *b = realloc(buf, cap * 2);
		if (!b) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = b;
		cap *= 2;
	}
	fclose(f);
	if (buf)
		buf[n] = 0;
	if (buf && !n) { /* a zombie's are empty */
		free(buf);
		buf = NULL;
	}
	return buf;
}

/* A call's stack (counted in its (op, stack) series), or the stack id of
 * an off-CPU wait in process pid (a sleep's or a lock's call site, or the
 * waker's at a lock: kept and resolved, in no series). */
static void note_stack(struct stacks *st, const struct ig_event *e, uint64_t id, uint32_t pid)
{
	struct igb_stack *raw = NULL;
	int call = e->kind == IG_EV_CALL;

	if (call && (e->op <= IG_OP_NONE || e->op >= IG_OP_MAX))
		return;
	if (!call && !id)
		return;
	pthread_mutex_lock(&st->mu);
	st->stats.calls += call;
	if (!id) {
		st->stats.calls_no_stack++;
		pthread_mutex_unlock(&st->mu);
		return;
	}
	st->seq++;
	bool live = st->kern.fetch_stack != NULL;
	int i = stk_find(st, id);
	if (i < 0 && live) {
		/* Copy it out of the kernel now, before its LRU map drops it. */
		raw = fetch_raw(st, id);
		i = stk_find(st, id);
	}
	bool fresh = i < 0;
	if (!stk_pid_known(st, pid, true) && live)
		stk_job_post(st, (struct job){.type = J_PROC, .pid = pid, .maps = maps_text(pid)});
	if (fresh) {
		i = stk_insert(st, id, pid);
		if (raw)
			queue_raw(st, i, raw);
		else
			st->stks[i].state = STACKS_MISSING;
		raw = NULL;
	}
	stk_seen(st, i);
	if (call)
		stk_series_count(st, e);
	pthread_mutex_unlock(&st->mu);
	free(raw);
}

void stacks_event(struct stacks *st, const struct ig_event *e)
{
	switch (e->kind) {
	case IG_EV_CALL:
	case IG_EV_SAMPLE:
		note_stack(st, e, e->stack_id, e->pid);
		break;
	case IG_EV_OFFCPU:
		note_stack(st, e, e->stack_id, e->pid);
		if (e->flags & IG_F_DETAIL && e->other_pid)
			note_stack(st, e, e->stream, e->other_pid);
		break;
	case IG_EV_EXEC:
		pthread_mutex_lock(&st->mu);
		if (st->kern.fetch_stack) {
			stk_pid_forget(st, e->pid);
			stk_job_post(st, (struct job){.type = J_EXEC, .pid = e->pid});
		}
		pthread_mutex_unlock(&st->mu);
		break;
	case IG_EV_FORK:
		/* Read the child early: a short-lived worker may be gone by the
		 * time its first stack is resolved. */
		pthread_mutex_lock(&st->mu);
		if (st->kern.fetch_stack && e->arg0 && !stk_pid_known(st, (uint32_t)e->arg0, true))
			stk_job_post(st, (struct job){.type = J_PROC, .pid = (uint32_t)e->arg0});
		pthread_mutex_unlock(&st->mu);
		break;
	case IG_EV_EXIT:
		pthread_mutex_lock(&st->mu);
		if (st->kern.fetch_stack)
			stk_job_post(st, (struct job){.type = J_EXIT, .pid = e->pid});
		pthread_mutex_unlock(&st->mu);
		break;
	default:
		break;
	}
	if (!st->threaded)
		stk_resolver_run_inline(st);
}

void stacks_watch_pid(struct stacks *st, uint32_t pid)
{
	pthread_mutex_lock(&st->mu);
	stk_pid_known(st, pid, true);
	stk_job_post(st, (struct job){.type = J_PROC, .pid = pid});
	pthread_mutex_unlock(&st->mu);
	if (!st->threaded)
		stk_resolver_run_inline(st);
}

int stacks_add_raw(struct stacks *st, uint64_t id, uint32_t pid, const struct igb_stack *raw)
{
	if (!id)
		return -EINVAL;
	struct igb_stack *copy = malloc(sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, raw, sizeof(*copy));
	raw_clamp(copy);
	pthread_mutex_lock(&st->mu);
	if (stk_find(st, id) >= 0) {
		pthread_mutex_unlock(&st->mu);
		free(copy);
		return -EEXIST;
	}
	if (!stk_pid_known(st, pid, true))
		stk_job_post(st, (struct job){.type = J_PROC, .pid = pid});
	queue_raw(st, stk_insert(st, id, pid), copy);
	pthread_mutex_unlock(&st->mu);
	if (!st->threaded)
		stk_resolver_run_inline(st);
	return 0;
}

void stacks_reset(struct stacks *st)
{
	pthread_mutex_lock(&st->mu);
	stk_series_reset(st);
	pthread_mutex_unlock(&st->mu);
}
