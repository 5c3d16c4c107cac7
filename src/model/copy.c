/* A deep copy of the model for reading: what a view shows while it is
 * paused, or once the traced work has ended, stays one consistent state
 * for every screen while the live model moves on. The copy has no window
 * hook; it is read with the same read API and never ingests. */
#include "model/model_int.h"

#include <stdlib.h>
#include <string.h>

/* A copy of len bytes. Sparse, into memory fresh from calloc (untouched
 * zero pages): the blocks that are zero in src are not written, so a
 * replay's checkpoint of a model that uses 5 of its 256 process slots
 * holds their pages only. */
static void copy_mem(void *dst, const void *src, size_t len, int sparse)
{
	static const uint64_t zero[512];
	const char *s = src;
	char *d = dst;

	if (!sparse) {
		memcpy(dst, src, len);
		return;
	}
	for (size_t off = 0; off < len; off += sizeof(zero)) {
		size_t n = len - off < sizeof(zero) ? len - off : sizeof(zero);
		if (memcmp(s + off, zero, n))
			memcpy(d + off, s + off, n);
	}
}

/* *dst becomes a copy of src (NULL when src is), reusing its memory;
 * sparse: *dst is NULL, and the new one is cleared memory. */
static int series_copy(struct series **dst, const struct series *src, unsigned W, int full,
		       int sparse)
{
	if (!src) {
		free(*dst);
		*dst = NULL;
		return 0;
	}
	if (!*dst && !(*dst = sparse ? calloc(1, series_size(W, full)) : malloc(series_size(W, full))))
		return -1;
	copy_mem(*dst, src, series_size(W, full), sparse);
	series_rebase(*dst, W, full);
	return 0;
}

static int stab_copy(struct stab *dst, const struct stab *src, unsigned W, int full, int sparse)
{
	lru_copy(&dst->t, &src->t);
	for (unsigned k = 0; k < src->t.n; k++)
		if (series_copy(&dst->s[k], src->s[k], W, full, sparse))
			return -1;
	return 0;
}

static struct ig_model *copy_into(struct ig_model *dst, const struct ig_model *src, int sparse)
{
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
		if (series_copy(&dst->ops[op], src->ops[op], W, 1, sparse))
			goto fail;
	if (stab_copy(&dst->sp, &src->sp, W, 1, sparse) || stab_copy(&dst->st, &src->st, W, 0, sparse))
		goto fail;
	lru_copy(&dst->ph, &src->ph);
	lru_copy(&dst->th, &src->th);
	copy_mem(dst->procs, src->procs, c->max_procs * sizeof(*dst->procs), sparse);
	copy_mem(dst->threads, src->threads, c->max_threads * sizeof(*dst->threads), sparse);
	copy_mem(dst->psl, src->psl, (size_t)c->max_procs * W * sizeof(*dst->psl), sparse);
	copy_mem(dst->tsl, src->tsl, (size_t)c->max_threads * W * sizeof(*dst->tsl), sparse);
	/* (sparse: the slots without slices are zero already, left untouched) */
	for (unsigned i = 0; i < c->max_procs; i++)
		if (src->procs[i].sl || !sparse)
			dst->procs[i].sl = src->procs[i].sl ? dst->psl + (size_t)i * W : NULL;
	for (unsigned i = 0; i < c->max_threads; i++)
		if (src->threads[i].sl || !sparse)
			dst->threads[i].sl = src->threads[i].sl ? dst->tsl + (size_t)i * W : NULL;
	copy_mem(dst->slow, src->slow, (size_t)IG_OP_MAX * W * sizeof(*dst->slow), sparse);
	memcpy(dst->slow_life, src->slow_life, IG_OP_MAX * sizeof(*dst->slow_life));
	copy_mem(dst->callev, src->callev, IG_CALLEV_MAX * sizeof(*dst->callev), sparse);
	dst->callev_i = src->callev_i;
	memcpy(dst->gsl, src->gsl, W * sizeof(*dst->gsl));
	*dst->nccl = *src->nccl; /* plain data, no pointers (the ranks' arrivals too) */
	*dst->gpu = *src->gpu;
	return dst;
fail:
	model_free(dst);
	return NULL;
}

struct ig_model *model_copy(struct ig_model *dst, const struct ig_model *src)
{
	if (dst && memcmp(&dst->cfg, &src->cfg, sizeof(src->cfg)) != 0) {
		model_free(dst);
		dst = NULL;
	}
	if (!dst && !(dst = model_new(&src->cfg)))
		return NULL;
	return copy_into(dst, src, 0);
}

struct ig_model *model_clone(const struct ig_model *src)
{
	struct ig_model *dst = model_new(&src->cfg);
	return dst ? copy_into(dst, src, 1) : NULL;
}
