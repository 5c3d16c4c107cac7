/* The stacks module's resolver: the job queue, the thread that runs it (or
 * the caller, opts.inline_resolve), the process table with each process's
 * captured mappings, and the turning of a raw stack into frames (native
 * symbols here, Python frames by stacks_python.c). */
#include "stacks/stacks_int.h"

#include "stacks/pyframes.h"
#include "stacks/symbolize.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>

/* ---- jobs (under mu) ------------------------------------------------------- */

bool stk_job_post(struct stacks *st, struct job j)
{
	if (j.due_ns) {
		if (st->ndelayed == DELAY_CAP) {
			free(j.maps);
			return false;
		}
		st->delayed[st->ndelayed++] = j;
	} else {
		if (st->qlen == QUEUE_CAP) {
			free(j.maps);
			return false;
		}
		st->queue[(st->qhead + st->qlen++) % QUEUE_CAP] = j;
	}
	if (st->threaded)
		pthread_cond_signal(&st->work);
	return true;
}

/* Next job due now; false when none. */
static bool job_pop(struct stacks *st, struct job *j, uint64_t now)
{
	for (unsigned i = 0; i < st->ndelayed; i++)
		if (st->delayed[i].due_ns <= now) {
			*j = st->delayed[i];
			st->delayed[i] = st->delayed[--st->ndelayed];
			return true;
		}
	if (!st->qlen)
		return false;
	*j = st->queue[st->qhead];
	st->qhead = (st->qhead + 1) % QUEUE_CAP;
	st->qlen--;
	return true;
}

/* ---- processes (resolver) ----------------------------------------------------- */

static struct rproc *proc_get(struct stacks *st, uint32_t pid, bool create)
{
	for (unsigned i = 0; i < st->nprocs; i++)
		if (st->procs[i].pid == pid) {
			st->procs[i].last_use = ++st->use_clock;
			return &st->procs[i];
		}
	if (!create)
		return NULL;
	unsigned slot = st->nprocs;
	if (slot == st->o.max_procs) {
		/* Evict: an exited process first, the least recently used. */
		slot = 0;
		for (unsigned i = 1; i < st->nprocs; i++) {
			struct rproc *a = &st->procs[i], *v = &st->procs[slot];
			if (a->exited != v->exited ? a->exited : a->last_use < v->last_use)
				slot = i;
		}
		sym_proc_free(st->procs[slot].maps);
		py_proc_free(st->procs[slot].py);
	} else {
		st->nprocs++;
	}
	struct rproc *p = &st->procs[slot];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->last_use = ++st->use_clock;
	return p;
}

/* Reads p's mappings now; a process that is gone is marked exited. */
static void capture(struct stacks *st, struct rproc *p)
{
	int err = 0;
	struct sym_proc *m = sym_proc_capture(st->sym, (int)p->pid, &err);
	if (m && !sym_proc_nmaps(m)) { /* a zombie: its mappings are gone */
		sym_proc_free(m);
		m = NULL;
		err = -ESRCH;
	}
	if (!m) {
		if (err == -ESRCH)
			p->exited = true;
		return;
	}
	sym_proc_free(p->maps);
	p->maps = m;
	p->maps_ns = ig_mono_ns();
}

/* ---- raw stack to frames ------------------------------------------------------ */

static void resolve_native(struct stacks *st, struct rproc *p, uint64_t ip, struct builder *b)
{
	struct sym_info si;
	char text[320];
	int r = p && p->maps ? sym_resolve(st->sym, p->maps, ip, true, &si) : -ESRCH;

	if (r == 0) {
		char src[128] = "";
		if (si.src_file && si.src_line > 0)
			snprintf(src, sizeof(src), " %s:%d", base_name(si.src_file), si.src_line);
		snprintf(text, sizeof(text), "%s+0x%" PRIx64 " (%s%s)%s", si.name, si.off,
			 base_name(si.path), si.flags & SYM_F_DELETED ? ", deleted" : "", src);
		stk_badd_src(b, ip, si.off, si.name, si.path, text, si.src_file, si.src_line);
		st->stats.frames_resolved++;
		return;
	}
	if (r == -ENOENT && si.path && !(si.flags & SYM_F_ANON))
		snprintf(text, sizeof(text), "0x%" PRIx64 " (%s+0x%" PRIx64 ")", ip,
			 base_name(si.path), si.file_vaddr);
	else if (r == -ENOENT && si.path)
		snprintf(text, sizeof(text), "0x%" PRIx64 " (%s)", ip, si.path);
	else
		snprintf(text, sizeof(text), "0x%" PRIx64 " (?)", ip);
	stk_badd(b, STACKS_NATIVE, ip, r == -ENOENT ? si.file_vaddr : 0, 0, NULL,
		 r == -ENOENT ? si.path : NULL, text);
	st->stats.frames_unresolved++;
}

/* The number of raw's native frames worth showing: p's mappings are read
 * (again, when they were read before a library was loaded), and a return
 * address outside every executable mapping is not one: the frame-pointer
 * chain broke in the frame before (code built without frame pointers).
 * Stop there rather than show garbage. *cut: the walk was cut. */
static int usable_ips(struct stacks *st, struct rproc *p, const struct igb_stack *raw, bool *cut)
{
	int nips = raw->nips > IGB_STACK_MAX ? IGB_STACK_MAX : raw->nips;

	*cut = false;
	if (p && !p->exited && p->maps && ig_mono_ns() - p->maps_ns > RECAPTURE_NS) {
		for (int i = 0; i < nips; i++)
			if (!sym_proc_covers(p->maps, raw->ips[i])) {
				capture(st, p);
				break;
			}
	}
	if (p && !p->maps && !p->exited)
		capture(st, p);
	if (p && p->maps)
		for (int i = 0; i < nips; i++)
			if (!sym_proc_covers(p->maps, raw->ips[i])) {
				*cut = true;
				return i;
			}
	return nips;
}

static void resolve_stack(struct stacks *st, struct rproc *p, const struct igb_stack *raw,
			  struct builder *b)
{
	struct py_merge m;
	bool cut;
	int nips = usable_ips(st, p, raw, &cut);

	stk_py_merge_begin(&m, st, p, raw);
	for (int i = 0; i < nips; i++) {
		int before = b->n;
		resolve_native(st, p, raw->ips[i], b);
		stk_py_merge_native(&m, b, before);
	}
	if (cut && nips > 0) {
		char where[256];
		const struct iframe *last = &b->fr[b->n - 1];
		tfmt(where, sizeof(where),
		     "native frames stop here: the frame-pointer chain breaks after %s (built "
		     "without frame pointers?)",
		     last->file ? base_name(b->blob + last->file) : "this frame");
		stk_bnote(b, "[note] %s", where);
	}
	stk_py_merge_end(&m, b);
	if (nips == IGB_STACK_MAX)
		stk_bnote(b, "[note] %s native frames: the outermost may be cut", "64");
	if (!nips && !m.npy)
		stk_bnote(b, "[note] %s", "no user frames (no frame pointers at the call?)");
	if (p && !p->maps && nips)
		stk_bnote(b, "[note] %s", "the process exited before its mappings were read");
}

/* ---- jobs (resolver) ------------------------------------------------------------ */

static void job_stack(struct stacks *st, const struct job *j)
{
	struct igb_stack *raw;
	struct builder b;

	pthread_mutex_lock(&st->mu);
	int i = stk_find(st, j->id);
	raw = i >= 0 ? st->stks[i].raw : NULL;
	if (raw)
		st->stks[i].raw = NULL; /* ours now */
	pthread_mutex_unlock(&st->mu);
	if (!raw)
		return;

	uint64_t t0 = ig_mono_ns();
	struct rproc *p = proc_get(st, j->pid, true);
	stk_binit(&b);
	resolve_stack(st, p, raw, &b);
	uint64_t dt = ig_mono_ns() - t0;

	uint64_t *ips = malloc(sizeof(*ips) * (raw->nips ? raw->nips : 1));
	pthread_mutex_lock(&st->mu);
	st->stats.resolve_ns += dt;
	i = stk_find(st, j->id);
	if (i >= 0) {
		struct stk *s = &st->stks[i];
		if (ips) {
			memcpy(ips, raw->ips, sizeof(*ips) * raw->nips);
			s->ips = ips;
			s->nips = raw->nips;
			ips = NULL;
		}
		stk_publish(s, &b);
		b.blob = NULL;
	}
	pthread_mutex_unlock(&st->mu);
	free(ips);
	free(b.blob);
	free(raw);
}

static void do_job(struct stacks *st, const struct job *j)
{
	struct rproc *p;

	switch (j->type) {
	case J_STACK:
		job_stack(st, j);
		break;
	case J_PROC:
		p = proc_get(st, j->pid, true);
		if (!p->exited)
			capture(st, p);
		if (!p->maps && j->maps) { /* gone already: its mappings as they were */
			p->maps = sym_proc_from_maps(st->sym, (int)j->pid, j->maps);
			p->maps_ns = ig_mono_ns();
		}
		if (p->py_state == PYS_UNKNOWN || p->py_state == PYS_AGAIN)
			stk_py_find(st, p);
		break;
	case J_EXEC:
		/* A new program: stacks queued after this belong to it. */
		p = proc_get(st, j->pid, true);
		sym_proc_free(p->maps);
		p->maps = NULL;
		stk_py_forget(p);
		pthread_mutex_lock(&st->mu);
		stk_job_post(st, (struct job){.type = J_PROC,
					      .pid = j->pid,
					      .due_ns = ig_mono_ns() + EXEC_DELAY_NS});
		pthread_mutex_unlock(&st->mu);
		break;
	case J_EXIT:
		if ((p = proc_get(st, j->pid, false)))
			p->exited = true;
		break;
	}
}

/* ---- the thread ------------------------------------------------------------------ */

int stk_resolver_init(struct stacks *st)
{
	st->queue = calloc(QUEUE_CAP, sizeof(*st->queue));
	st->procs = calloc(st->o.max_procs, sizeof(*st->procs));
	st->sym = sym_cache_new(st->o.max_sym_bytes);
	return st->queue && st->procs && st->sym ? 0 : -ENOMEM;
}

void stk_resolver_free(struct stacks *st)
{
	for (unsigned i = 0; st->procs && i < st->nprocs; i++) {
		sym_proc_free(st->procs[i].maps);
		py_proc_free(st->procs[i].py);
	}
	for (unsigned i = 0; st->queue && i < st->qlen; i++)
		free(st->queue[(st->qhead + i) % QUEUE_CAP].maps);
	for (unsigned i = 0; i < st->ndelayed; i++)
		free(st->delayed[i].maps);
	free(st->queue);
	free(st->procs);
	sym_cache_free(st->sym);
}

static void *resolver_main(void *arg)
{
	struct stacks *st = arg;
	struct job j;

	pthread_mutex_lock(&st->mu);
	while (!st->stop) {
		uint64_t now = ig_mono_ns();
		if (job_pop(st, &j, now)) {
			st->busy = true;
			pthread_mutex_unlock(&st->mu);
			do_job(st, &j);
			free(j.maps);
			pthread_mutex_lock(&st->mu);
			st->busy = false;
			pthread_cond_broadcast(&st->idle);
			continue;
		}
		pthread_cond_broadcast(&st->idle);
		if (st->ndelayed) {
			uint64_t due = UINT64_MAX;
			for (unsigned i = 0; i < st->ndelayed; i++)
				if (st->delayed[i].due_ns < due)
					due = st->delayed[i].due_ns;
			struct timespec ts = {.tv_sec = (time_t)(due / NS),
					      .tv_nsec = (long)(due % NS)};
			pthread_cond_timedwait(&st->work, &st->mu, &ts);
		} else {
			pthread_cond_wait(&st->work, &st->mu);
		}
	}
	pthread_mutex_unlock(&st->mu);
	return NULL;
}

int stk_resolver_start(struct stacks *st)
{
	/* The resolver takes no signals: they belong to the main loop. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int r = pthread_create(&st->thread, NULL, resolver_main, st);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r)
		return -r;
	st->threaded = true;
	return 0;
}

void stk_resolver_stop(struct stacks *st)
{
	if (!st->threaded)
		return;
	pthread_mutex_lock(&st->mu);
	st->stop = true;
	pthread_cond_broadcast(&st->work);
	pthread_mutex_unlock(&st->mu);
	pthread_join(st->thread, NULL);
	st->threaded = false;
}

void stk_resolver_run_inline(struct stacks *st)
{
	struct job j;
	for (;;) {
		pthread_mutex_lock(&st->mu);
		bool got = job_pop(st, &j, ig_mono_ns());
		pthread_mutex_unlock(&st->mu);
		if (!got)
			return;
		do_job(st, &j);
		free(j.maps);
	}
}

int stacks_flush(struct stacks *st, int timeout_ms)
{
	uint64_t end = ig_mono_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000ull;
	int r = 0;

	if (!st->threaded) {
		stk_resolver_run_inline(st);
		return 0;
	}
	pthread_mutex_lock(&st->mu);
	while (st->qlen || st->busy) {
		struct timespec ts = {.tv_sec = (time_t)(end / NS), .tv_nsec = (long)(end % NS)};
		if (pthread_cond_timedwait(&st->idle, &st->mu, &ts) == ETIMEDOUT) {
			r = (st->qlen || st->busy) ? -ETIMEDOUT : 0;
			break;
		}
	}
	pthread_mutex_unlock(&st->mu);
	return r;
}
