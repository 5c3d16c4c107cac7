/* A small open-addressing hash from a 64-bit key to an index (int32, -1 =
 * empty), linear probing with backward-shift deletion. Header-only so the
 * model's per-event lookups inline. Not thread-safe; the caller sizes it
 * (ht_init(cap) keeps the load at or below one half for cap entries). */
#ifndef IG_HTAB_H
#define IG_HTAB_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct htab {
	uint64_t *keys;
	int32_t *vals; /* -1 = empty */
	uint32_t mask;
};

static inline uint32_t hmix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return (uint32_t)k;
}

static inline int ht_init(struct htab *t, unsigned cap)
{
	uint32_t n = 16;
	while (n < 2 * cap)
		n <<= 1;
	t->keys = calloc(n, sizeof(*t->keys));
	t->vals = malloc(n * sizeof(*t->vals));
	if (!t->keys || !t->vals)
		return -ENOMEM;
	memset(t->vals, 0xff, n * sizeof(*t->vals));
	t->mask = n - 1;
	return 0;
}

static inline void ht_free(struct htab *t)
{
	free(t->keys);
	free(t->vals);
}

static inline void ht_clear(struct htab *t)
{
	memset(t->vals, 0xff, (t->mask + 1) * sizeof(*t->vals));
}

static inline int32_t ht_get(const struct htab *t, uint64_t k)
{
	for (uint32_t i = hmix(k) & t->mask;; i = (i + 1) & t->mask) {
		if (t->vals[i] < 0)
			return -1;
		if (t->keys[i] == k)
			return t->vals[i];
	}
}

static inline void ht_put(struct htab *t, uint64_t k, int32_t v)
{
	uint32_t i = hmix(k) & t->mask;
	while (t->vals[i] >= 0 && t->keys[i] != k)
		i = (i + 1) & t->mask;
	t->keys[i] = k;
	t->vals[i] = v;
}

static inline void ht_del(struct htab *t, uint64_t k)
{
	uint32_t i = hmix(k) & t->mask;
	while (t->vals[i] >= 0 && t->keys[i] != k)
		i = (i + 1) & t->mask;
	if (t->vals[i] < 0)
		return;
	/* shift later members of the cluster back into the hole */
	uint32_t j = i;
	for (;;) {
		t->vals[i] = -1;
		for (;;) {
			j = (j + 1) & t->mask;
			if (t->vals[j] < 0)
				return;
			uint32_t home = hmix(t->keys[j]) & t->mask;
			/* j may move to i when home is not cyclically in (i, j] */
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		t->keys[i] = t->keys[j];
		t->vals[i] = t->vals[j];
		i = j;
	}
}

#endif
