/* A capped table from a 64-bit key to a slot index 0..cap-1. The caller
 * keeps its entries in its own arrays, indexed by slot. When the table is
 * full, a new key takes the slot touched least recently (the lowest
 * lru_touch time; ties: the lowest slot), and the table counts the
 * eviction. The process, thread and series tables of the model and the
 * stack tables use it. Not thread-safe; no allocation after lru_init. */
#ifndef IG_LRU_H
#define IG_LRU_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/htab.h"

struct lru {
	struct htab ht;
	uint64_t *key;	  /* key of each used slot */
	uint64_t *last;	  /* last activity of each used slot (caller's unit) */
	unsigned n, cap;  /* slots in use, capacity */
	uint64_t evicted; /* keys dropped to make room */
};

static inline int lru_init(struct lru *t, unsigned cap)
{
	memset(t, 0, sizeof(*t));
	t->cap = cap;
	t->key = calloc(cap ? cap : 1, sizeof(*t->key));
	t->last = calloc(cap ? cap : 1, sizeof(*t->last));
	if (!t->key || !t->last || ht_init(&t->ht, cap))
		return -ENOMEM;
	return 0;
}

/* lru_free on a zeroed or half-initialised table is safe. */
static inline void lru_free(struct lru *t)
{
	free(t->key);
	free(t->last);
	ht_free(&t->ht);
	memset(t, 0, sizeof(*t));
}

/* Forgets every key; the eviction count stays. */
static inline void lru_clear(struct lru *t)
{
	ht_clear(&t->ht);
	t->n = 0;
}

/* Slot of key, or -1. */
static inline int32_t lru_find(const struct lru *t, uint64_t key)
{
	return ht_get(&t->ht, key);
}

/* Slot of key; a new key gets a free slot or evicts the least recently
 * touched one. *fresh (may be NULL) is 1 when the slot is new to key: the
 * caller resets its entry. *old (may be NULL) gets the evicted key. Never
 * fails once lru_init succeeded with cap > 0. */
static inline int32_t lru_get(struct lru *t, uint64_t key, int *fresh, int *evicted,
			      uint64_t *old)
{
	int32_t i = ht_get(&t->ht, key);
	if (fresh)
		*fresh = i < 0;
	if (evicted)
		*evicted = 0;
	if (i >= 0)
		return i;
	if (t->n < t->cap) {
		i = (int32_t)t->n++;
	} else {
		uint64_t best = UINT64_MAX;
		i = 0;
		for (unsigned k = 0; k < t->n; k++)
			if (t->last[k] < best) {
				best = t->last[k];
				i = (int32_t)k;
			}
		if (old)
			*old = t->key[i];
		if (evicted)
			*evicted = 1;
		ht_del(&t->ht, t->key[i]);
		t->evicted++;
	}
	t->key[i] = key;
	t->last[i] = 0;
	ht_put(&t->ht, key, i);
	return i;
}

/* Undoes the lru_get that just gave key a new slot i, when the caller
 * could not fill it (out of memory). */
static inline void lru_undo(struct lru *t, int32_t i)
{
	ht_del(&t->ht, t->key[i]);
	if ((unsigned)i + 1 == t->n)
		t->n--;
}

/* Records activity of slot i at time when (kept if later than before). */
static inline void lru_touch(struct lru *t, int32_t i, uint64_t when)
{
	if (when > t->last[i])
		t->last[i] = when;
}

/* dst becomes a copy of src; both were made with the same capacity. */
static inline void lru_copy(struct lru *dst, const struct lru *src)
{
	memcpy(dst->key, src->key, src->cap * sizeof(*dst->key));
	memcpy(dst->last, src->last, src->cap * sizeof(*dst->last));
	memcpy(dst->ht.keys, src->ht.keys, (src->ht.mask + 1) * sizeof(*dst->ht.keys));
	memcpy(dst->ht.vals, src->ht.vals, (src->ht.mask + 1) * sizeof(*dst->ht.vals));
	dst->n = src->n;
	dst->evicted = src->evicted;
}

#endif
