/* The ring of recent events (evring.h): a growable circular array. */
#include "session/evring.h"

#include <errno.h>
#include <stdlib.h>

struct evring {
	struct ig_event *v;
	size_t cap, max, head, n; /* head: index of the oldest */
	uint64_t span_ns, newest, capped;
	uint64_t lost_ns; /* latest completion of an event dropped */
};

struct evring *evring_new(double seconds, size_t max_events)
{
	if (!(seconds > 0) || !max_events)
		return NULL;
	struct evring *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->max = max_events;
	r->span_ns = (uint64_t)(seconds * 1e9);
	return r;
}

void evring_free(struct evring *r)
{
	if (!r)
		return;
	free(r->v);
	free(r);
}

static int grow(struct evring *r)
{
	size_t nc = r->cap ? r->cap * 2 : 4096;
	if (nc > r->max)
		nc = r->max;
	if (nc <= r->cap)
		return -ENOSPC;
	struct ig_event *v = malloc(nc * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++) /* unroll into the new array */
		v[i] = r->v[(r->head + i) % r->cap];
	free(r->v);
	r->v = v;
	r->cap = nc;
	r->head = 0;
	return 0;
}

void evring_push(struct evring *r, const struct ig_event *e)
{
	if (!r)
		return;
	uint64_t end = e->ts_ns + e->dur_ns;
	if (end > r->newest)
		r->newest = end;
	/* age: the oldest leave once they completed span before the newest */
	while (r->n) {
		const struct ig_event *o = &r->v[r->head];
		if (o->ts_ns + o->dur_ns + r->span_ns >= r->newest)
			break;
		if (o->ts_ns + o->dur_ns > r->lost_ns)
			r->lost_ns = o->ts_ns + o->dur_ns;
		r->head = (r->head + 1) % r->cap;
		r->n--;
	}
	if (r->n == r->cap && grow(r)) {
		if (!r->cap) { /* no memory at all */
			r->capped++;
			if (end > r->lost_ns)
				r->lost_ns = end;
			return;
		}
		const struct ig_event *o = &r->v[r->head]; /* full at the cap: the oldest goes */
		if (o->ts_ns + o->dur_ns > r->lost_ns)
			r->lost_ns = o->ts_ns + o->dur_ns;
		r->head = (r->head + 1) % r->cap;
		r->n--;
		r->capped++;
	}
	r->v[(r->head + r->n) % r->cap] = *e;
	r->n++;
}

size_t evring_count(const struct evring *r)
{
	return r ? r->n : 0;
}

uint64_t evring_lost_until(const struct evring *r)
{
	return r ? r->lost_ns : 0;
}

uint64_t evring_capped(const struct evring *r)
{
	return r ? r->capped : 0;
}

int evring_span(const struct evring *r, uint64_t *oldest_ns, uint64_t *newest_ns)
{
	*oldest_ns = *newest_ns = 0;
	if (!r || !r->n)
		return -ENODATA;
	uint64_t lo = UINT64_MAX;
	for (size_t i = 0; i < r->n && i < 4096; i++) { /* arrival order is nearly time order */
		uint64_t t = r->v[(r->head + i) % r->cap].ts_ns;
		if (t && t < lo)
			lo = t;
	}
	*oldest_ns = lo == UINT64_MAX ? 0 : lo;
	*newest_ns = r->newest;
	return 0;
}

size_t evring_each(const struct evring *r, uint64_t since_ns, uint64_t until_ns, ig_emit_fn fn,
		   void *ctx)
{
	size_t k = 0;
	for (size_t i = 0; r && i < r->n; i++) {
		const struct ig_event *e = &r->v[(r->head + i) % r->cap];
		uint64_t end = e->ts_ns + e->dur_ns;
		if ((since_ns && end < since_ns) || (until_ns && end > until_ns))
			continue;
		fn(ctx, e);
		k++;
	}
	return k;
}
