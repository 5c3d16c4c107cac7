/* Growable tables keyed by 64 bits (keytab.h). */
#include "report/keytab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int keytab_init(struct keytab *t, size_t size)
{
	memset(t, 0, sizeof(*t));
	t->size = size;
	t->cap = 64;
	t->v = calloc(t->cap, size);
	if (!t->v || ht_init(&t->ht, (unsigned)t->cap))
		return -ENOMEM;
	return 0;
}

void keytab_free(struct keytab *t)
{
	free(t->v);
	ht_free(&t->ht);
}

void *keytab_at(const struct keytab *t, size_t i)
{
	return t->v + i * t->size;
}

void *keytab_get(struct keytab *t, uint64_t key, int create)
{
	int32_t i = ht_get(&t->ht, key);
	if (i >= 0)
		return keytab_at(t, (size_t)i);
	if (!create)
		return NULL;
	if (t->n == t->cap) {
		size_t cap = t->cap * 2;
		char *v = realloc(t->v, cap * t->size);
		struct htab h;
		if (!v || ht_init(&h, (unsigned)cap)) {
			t->v = v ? v : t->v;
			return NULL;
		}
		t->v = v;
		t->cap = cap;
		ht_free(&t->ht);
		t->ht = h;
		for (size_t k = 0; k < t->n; k++)
			ht_put(&t->ht, *(uint64_t *)keytab_at(t, k), (int32_t)k);
	}
	char *e = keytab_at(t, t->n);
	memset(e, 0, t->size);
	*(uint64_t *)e = key;
	ht_put(&t->ht, key, (int32_t)t->n++);
	return e;
}
