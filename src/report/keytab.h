/* Small growable tables of fixed-size entries keyed by 64 bits, for the
 * exports' processes, tracks and stacks (report/perfetto.c). Each entry
 * starts with its uint64_t key. Not thread-safe. */
#ifndef IG_KEYTAB_H
#define IG_KEYTAB_H

#include <stddef.h>
#include <stdint.h>

#include "core/htab.h"

struct keytab {
	char *v; /* entries of size bytes, each starting with its uint64_t key */
	size_t size, n, cap;
	struct htab ht;
};

/* An empty table of entries of size bytes (size >= 8). 0 or -ENOMEM. */
int keytab_init(struct keytab *t, size_t size);
/* Frees the entries (not what they point to). */
void keytab_free(struct keytab *t);
/* Entry i, 0 <= i < t->n. */
void *keytab_at(const struct keytab *t, size_t i);
/* The entry of key; a new zeroed one (key set) when create, else NULL;
 * NULL when out of memory. Pointers into the table are valid until the
 * next create. */
void *keytab_get(struct keytab *t, uint64_t key, int create);

#endif
