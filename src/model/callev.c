/* The off-CPU intervals of the slowest calls, kept with them: a thread's
 * ring holds only its last IG_TL_MAX intervals, so by the time a user
 * opens a slow call (`o`) its intervals would be gone. When a call that
 * left the CPU enters a slowest-calls list, the intervals during it are
 * copied from its thread's ring into a store of IG_CALLEV_MAX entries; an
 * entry of a call still among its op's slowest since the start, or of a
 * second of the window (those the op view's slowest calls are drawn
 * from), is not overwritten: under load, when most calls leave the CPU,
 * the store turns over in a few seconds, less than a window. Live and
 * replayed alike (replay feeds the same intervals). */
#include <string.h>

#include "model/model_int.h"

#define CALLEV_TRIES 256

static int in_slice(const struct slowslice *s, const struct callev *c)
{
	for (int i = 0; i < s->n; i++)
		if (s->r[i].tid == c->tid && s->r[i].ts_ns == c->ts_ns)
			return 1;
	return 0;
}

/* Whether c's call is among its op's slowest since the start or of a
 * second in the window. */
static int pinned(const struct ig_model *m, const struct callev *c)
{
	if (in_slice(&m->slow_life[c->op], c))
		return 1;
	for (unsigned k = 0; k < m->W; k++) {
		const struct slowslice *s = &m->slow[(size_t)c->op * m->W + k];
		if (s->n && in_window(m, s->sec) && in_slice(s, c))
			return 1;
	}
	return 0;
}

void callev_keep(struct ig_model *m, const struct thread *t, const struct ig_event *e)
{
	struct callev *c = NULL;
	/* a bounded look for a free entry (a pinned one costs up to a window
	 * of slices to tell): when many ops fill the store with pinned entries,
	 * a call is not kept rather than every keep walking the store */
	for (int k = 0; k < CALLEV_TRIES && !c; k++) {
		struct callev *x = &m->callev[m->callev_i];
		m->callev_i = (m->callev_i + 1) % IG_CALLEV_MAX;
		if (!x->used || !pinned(m, x))
			c = x;
	}
	if (!c)
		return;
	struct ig_offcpu_rec all[IG_TL_MAX];
	int n = thread_offcpu(t, all, IG_TL_MAX), k = 0;
	uint64_t a = e->ts_ns, b = e->ts_ns + e->dur_ns;
	/* a full ring whose oldest began after the call: earlier ones are gone */
	int gone = n == IG_TL_MAX && all[0].ts_ns > a;
	c->used = 1;
	c->tid = e->tid;
	c->ts_ns = e->ts_ns;
	c->op = e->op;
	/* the ring is oldest first: the call's intervals are its last ones;
	 * begun before it ends, ended after it began */
	for (int i = 0; i < n; i++)
		if (all[i].ts_ns < b && all[i].ts_ns + all[i].dur_ns > a)
			all[k++] = all[i];
	int from = k > IG_CALLEV_TL ? k - IG_CALLEV_TL : 0;
	c->n = (uint8_t)(k - from);
	c->cut = from > 0 || gone;
	memcpy(c->r, all + from, (size_t)c->n * sizeof(*c->r));
}

int model_call_offcpu(const struct ig_model *m, uint32_t tid, uint64_t ts_ns,
		      struct ig_offcpu_rec *out, int max, int *cut)
{
	for (int i = 0; i < IG_CALLEV_MAX; i++) {
		const struct callev *c = &m->callev[i];
		if (!c->used || c->tid != tid || c->ts_ns != ts_ns)
			continue;
		int n = c->n < max ? c->n : max;
		memcpy(out, c->r, (size_t)n * sizeof(*out));
		if (cut)
			*cut = c->cut;
		return n;
	}
	return -1;
}
