/* A deep copy of the model for reading: what a view shows while it is
 * paused, or once the traced work has ended, stays one consistent state
 * for every screen while the live model moves on. The copy has no window
 * hook; it is read with the same read API and never ingests. */
#include "model/model_int.h"

#include <stdlib.h>
#include <string.h>

/* src and dst were made with the same capacity (the same cfg). */
static void lru_copy(struct lru *dst, const struct lru *src)
{
	memcpy(dst->key, src->key, src->cap * sizeof(*dst->key));
	memcpy(dst->last, src->last, src->cap * sizeof(*dst->last));
	memcpy(dst->ht.keys, src->ht.keys, (src->ht.mask + 1) * sizeof(*dst->ht.keys));
	memcpy(dst->ht.vals, src->ht.vals, (src->ht.mask + 1) * sizeof(*dst->ht.vals));
	dst->n = src->n;
	dst->evicted = src->evicted;
}

/* *dst becomes a copy of src (NULL when src is), reusing its memory. */
static int series_copy(struct series **dst, const struct series *src, unsigned W, int full)
{
	if (!src) {
		free(*dst);
		*dst = NULL;
		return 0;
	}
	if (!*dst && !(*dst = malloc(series_size(W, full))))
		return -1;
	memcpy(*dst, src, series_size(W, full));
	series_rebase(*dst, W, full);
	return 0;
}

static int stab_copy(struct stab *dst, const struct stab *src, unsigned W, int full)
{
	lru_copy(&dst->t, &src->t);
	for (unsigned k = 0; k < src->t.n; k++)
		if (series_copy(&dst->s[k], src->s[k], W, full))
			return -1;
	return 0;
}

struct ig_model *model_copy(struct ig_model *dst, const struct ig_model *src)
{
	if (dst && memcmp(&dst->cfg, &src->cfg, sizeof(src->cfg)) != 0) {
		model_free(dst);
		dst = NULL;
	}
	if (!dst && !(dst = model_new(&src->cfg)))
		return NULL;
	unsigned W = src->W;
	const struct ig_model_cfg *c = &src->cfg;

	dst->started = src->started;
	dst->clock_ns = src->clock_ns;
	dst->first_ns = src->first_ns;
	dst->cur_sec = src->cur_sec;
	dst->tot = src->tot;
	dst->host = src->host;
	dst->host_valid = src->host_valid;
	memcpy(dst->names, src->names, sizeof(dst->names));
	for (int op = 0; op < IG_OP_MAX; op++)
		if (series_copy(&dst->ops[op], src->ops[op], W, 1))
			goto fail;
	if (stab_copy(&dst->sp, &src->sp, W, 1) || stab_copy(&dst->st, &src->st, W, 0))
		goto fail;
	lru_copy(&dst->ph, &src->ph);
	lru_copy(&dst->th, &src->th);
	memcpy(dst->procs, src->procs, c->max_procs * sizeof(*dst->procs));
	memcpy(dst->threads, src->threads, c->max_threads * sizeof(*dst->threads));
	memcpy(dst->psl, src->psl, (size_t)c->max_procs * W * sizeof(*dst->psl));
	memcpy(dst->tsl, src->tsl, (size_t)c->max_threads * W * sizeof(*dst->tsl));
	for (unsigned i = 0; i < c->max_procs; i++)
		dst->procs[i].sl = src->procs[i].sl ? dst->psl + (size_t)i * W : NULL;
	for (unsigned i = 0; i < c->max_threads; i++)
		dst->threads[i].sl = src->threads[i].sl ? dst->tsl + (size_t)i * W : NULL;
	memcpy(dst->slow, src->slow, (size_t)IG_OP_MAX * W * sizeof(*dst->slow));
	memcpy(dst->slow_life, src->slow_life, IG_OP_MAX * sizeof(*dst->slow_life));
	memcpy(dst->callev, src->callev, IG_CALLEV_MAX * sizeof(*dst->callev));
	dst->callev_i = src->callev_i;
	memcpy(dst->gsl, src->gsl, W * sizeof(*dst->gsl));
	*dst->nccl = *src->nccl; /* plain data, no pointers */
	*dst->gpu = *src->gpu;
	return dst;
fail:
	model_free(dst);
	return NULL;
}
