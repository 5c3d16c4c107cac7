/* A replay checkpoint of the stacks: what a seek back must put back as it
 * was at that event time (the per-(op, stack) counts and the ops' tail
 * histograms), beside the model's and the detector's (session/ckpt.c). */
#include "stacks/stacks_int.h"

#include <stdlib.h>
#include <string.h>

struct stacks_ckpt {
	struct lru lru;
	struct series *ser; /* lru.n of them */
	struct optail tails[IG_OP_MAX];
};

void stacks_ckpt_free(struct stacks_ckpt *s)
{
	if (!s)
		return;
	lru_free(&s->lru);
	free(s->ser);
	free(s);
}

struct stacks_ckpt *stacks_save(struct stacks *st)
{
	struct stacks_ckpt *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	pthread_mutex_lock(&st->mu);
	unsigned n = st->ser_lru.n;
	if (lru_init(&s->lru, st->ser_lru.cap) ||
	    !(s->ser = malloc((n ? n : 1) * sizeof(*s->ser)))) {
		pthread_mutex_unlock(&st->mu);
		stacks_ckpt_free(s);
		return NULL;
	}
	lru_copy(&s->lru, &st->ser_lru);
	memcpy(s->ser, st->ser, n * sizeof(*s->ser));
	memcpy(s->tails, st->tails, sizeof(s->tails));
	pthread_mutex_unlock(&st->mu);
	return s;
}

void stacks_restore(struct stacks *st, const struct stacks_ckpt *s)
{
	pthread_mutex_lock(&st->mu);
	lru_copy(&st->ser_lru, &s->lru);
	memcpy(st->ser, s->ser, s->lru.n * sizeof(*st->ser));
	memcpy(st->tails, s->tails, sizeof(s->tails));
	pthread_mutex_unlock(&st->mu);
}
