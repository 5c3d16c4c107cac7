/* The slowest calls of a run per (op, process) (slowcalls.h). A series is a
 * small array kept sorted slowest first; series live in an open-addressing
 * table keyed by (op, pid). */
#include "analysis/slowcalls.h"

#include <stdlib.h>
#include <string.h>

struct series {
	uint32_t pid;
	int op; /* 0 = free slot, -1 = evicted */
	unsigned n;
	struct ig_event *calls; /* per_series, slowest first */
};

struct slowcalls {
	unsigned per, max, cap; /* calls per series, series kept, table slots */
	unsigned used;
	uint64_t evicted;
	struct series *tab;
	struct ig_event *pool; /* cap * per calls */
};

struct slowcalls *slowcalls_new(unsigned per_series, unsigned max_series)
{
	struct slowcalls *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->per = per_series ? per_series : 10;
	s->max = max_series ? max_series : 512;
	s->cap = 1;
	while (s->cap < s->max * 2)
		s->cap <<= 1;
	s->tab = calloc(s->cap, sizeof(*s->tab));
	s->pool = calloc((size_t)s->cap * s->per, sizeof(*s->pool));
	if (!s->tab || !s->pool) {
		slowcalls_free(s);
		return NULL;
	}
	for (unsigned i = 0; i < s->cap; i++)
		s->tab[i].calls = &s->pool[(size_t)i * s->per];
	return s;
}

void slowcalls_free(struct slowcalls *s)
{
	if (!s)
		return;
	free(s->tab);
	free(s->pool);
	free(s);
}

void slowcalls_reset(struct slowcalls *s)
{
	for (unsigned i = 0; i < s->cap; i++) {
		s->tab[i].op = 0;
		s->tab[i].n = 0;
	}
	s->used = 0;
}

uint64_t slowcalls_evicted(const struct slowcalls *s)
{
	return s->evicted;
}

static unsigned slot_of(const struct slowcalls *s, int op, uint32_t pid)
{
	uint64_t h =
	    ((uint64_t)pid * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)op * 0xC2B2AE3D27D4EB4Full);
	return (unsigned)(h >> 32) & (s->cap - 1);
}

/* The series whose slowest call is the fastest, or NULL. */
static struct series *weakest(struct slowcalls *s)
{
	struct series *low = NULL;
	for (unsigned k = 0; k < s->cap; k++)
		if (s->tab[k].op > 0 &&
		    (!low || !s->tab[k].n ||
		     (low->n && s->tab[k].calls[0].dur_ns < low->calls[0].dur_ns)))
			low = &s->tab[k];
	return low;
}

/* The series of (op, pid), made when absent; NULL when it would not fit.
 * Slots: op 0 free, -1 a series evicted (probing goes on past it). */
static struct series *series_of(struct slowcalls *s, int op, uint32_t pid, uint64_t dur)
{
	unsigned i = slot_of(s, op, pid), k;
	struct series *room = NULL;
	for (k = 0; k < s->cap; k++, i = (i + 1) & (s->cap - 1)) {
		struct series *v = &s->tab[i];
		if (v->op == op && v->pid == pid)
			return v;
		if (v->op <= 0 && !room)
			room = v;
		if (!v->op)
			break;
	}
	if (s->used >= s->max) {
		/* full: the series whose slowest call is the fastest makes room,
		 * when this call is slower than it */
		struct series *low = weakest(s);
		if (!low || (low->n && low->calls[0].dur_ns >= dur))
			return NULL;
		s->evicted++;
		low->op = -1;
		low->n = 0;
		s->used--;
		if (!room) /* the chain had no free slot before: take the one freed */
			room = low;
	}
	if (!room)
		return NULL;
	s->used++;
	room->op = op;
	room->pid = pid;
	room->n = 0;
	return room;
}

void slowcalls_event(struct slowcalls *s, const struct ig_event *e)
{
	if (!s || e->kind != IG_EV_CALL || !e->op)
		return;
	struct series *v = series_of(s, e->op, e->pid, e->dur_ns);
	if (!v || (v->n == s->per && v->calls[v->n - 1].dur_ns >= e->dur_ns))
		return;
	unsigned k = v->n < s->per ? v->n++ : s->per - 1;
	while (k > 0 && v->calls[k - 1].dur_ns < e->dur_ns) {
		v->calls[k] = v->calls[k - 1];
		k--;
	}
	v->calls[k] = *e;
}

static int cmp_dur(const void *a, const void *b)
{
	const struct ig_event *x = a, *y = b;
	if (x->dur_ns != y->dur_ns)
		return x->dur_ns > y->dur_ns ? -1 : 1;
	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

/* e lies inside a call of the same thread already in out[0..n). */
static int nested(const struct ig_event *e, const struct ig_event *out, int n)
{
	for (int i = 0; i < n; i++)
		if (out[i].tid == e->tid && out[i].ts_ns <= e->ts_ns &&
		    e->ts_ns + e->dur_ns <= out[i].ts_ns + out[i].dur_ns)
			return 1;
	return 0;
}

int slowcalls_get(const struct slowcalls *s, int op, uint32_t pid, uint64_t since_ns,
		  uint64_t until_ns, struct ig_event *out, int max)
{
	size_t n = 0, cap = 0;
	struct ig_event *all = NULL;
	for (unsigned i = 0; s && i < s->cap; i++) {
		const struct series *v = &s->tab[i];
		if (v->op <= 0 || (op >= 0 && v->op != op) || (pid && v->pid != pid))
			continue;
		for (unsigned k = 0; k < v->n; k++) {
			const struct ig_event *e = &v->calls[k];
			uint64_t end = e->ts_ns + e->dur_ns;
			if ((since_ns && end < since_ns) || (until_ns && end > until_ns))
				continue;
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 256;
				struct ig_event *m = realloc(all, nc * sizeof(*m));
				if (!m)
					break;
				all = m;
				cap = nc;
			}
			all[n++] = *e;
		}
	}
	if (n)
		qsort(all, n, sizeof(*all), cmp_dur);
	int w = 0;
	for (size_t i = 0; i < n && w < max; i++)
		if (op >= 0 || !nested(&all[i], out, w))
			out[w++] = all[i];
	free(all);
	return w;
}
