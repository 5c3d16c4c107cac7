/* Checkpoints of a replay: copies of the model, the detector's chains and
 * the stack counts at window boundaries of event time, so that a seek
 * back restores the nearest one at or before the target and reads only
 * the events after it, not the stream from its start (docs/tui.md,
 * "Walking a replay"). A checkpoint at P holds the state once every event
 * that ends at or before P was ingested and none after: taken by the pump
 * when the next event ends past P, it is a prefix of any forward read, so
 * a restore and a read from the start land on the same state.
 *
 * At most CK_MAX are kept. When full, the one whose removal leaves the
 * smallest gap goes, gaps far from the position counting as smaller: the
 * windows near where the user walks stay dense (each t is one restore and
 * a window read), the rest of the file thins out evenly. */
#include "session/session_int.h"

#include "core/clock.h" /* ig_unix_now_ns */
#include "detect/detect.h"
#include "model/model.h"
#include "stacks/stacks.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#define CK_MAX 16
#define CK_NEAR 8 /* windows before a seek's target always taken */

struct ckpt {
	uint64_t pos_ns; /* every event ending at or before it is in, none after */
	uint64_t events_total, last_ev_ns;
	struct ig_model *m;
	struct detect_state *d;
	struct stacks_ckpt *k;
};

struct ckpts {
	struct ckpt c[CK_MAX]; /* by pos_ns */
	int n;
	uint64_t every_ns; /* the model's window */
	uint64_t next_ns;  /* the next boundary a forward read may take */
	uint64_t target_ns; /* a seek's target (ckpt_target), 0: playing */
	uint64_t last_ns;   /* the last one taken */
	uint64_t taken, restored;
};

static void ck_clear(struct ckpt *c)
{
	model_free(c->m);
	detect_state_free(c->d);
	stacks_ckpt_free(c->k);
	memset(c, 0, sizeof(*c));
}

void ckpt_free(struct session *s)
{
	if (!s->ck)
		return;
	for (int i = 0; i < s->ck->n; i++)
		ck_clear(&s->ck->c[i]);
	free(s->ck);
	s->ck = NULL;
}

/* The next boundary after t: a multiple of the window from the start. */
static uint64_t next_boundary(const struct session *s, uint64_t t)
{
	uint64_t start = s->st.replay_start_ns, w = s->ck->every_ns;
	return t < start ? start + w : start + ((t - start) / w + 1) * w;
}

void ckpt_init(struct session *s)
{
	/* Only the viewer walks back; a batch run reads forward once (a
	 * checkpoint was a model copy per window: ~8 % of a batch replay). */
	if (!s->src->ops->seek || s->ck || !s->st.replay_start_ns || s->cli.batch)
		return;
	/* A clone's tables and series come from calloc: from this size on
	 * glibc maps them fresh (zero pages it need not clear), so the sparse
	 * copy keeps only the pages a checkpoint uses. Set, the threshold no
	 * longer rises after a large free, which would serve them from the
	 * heap, cleared and resident (16 MB a checkpoint instead of ~2). */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	s->ck = calloc(1, sizeof(*s->ck));
	if (!s->ck)
		return; /* no checkpoints: seeks back read from the start */
	s->ck->every_ns = (uint64_t)model_cfg(s->an->m)->window_s * 1000000000ULL;
	s->ck->next_ns = next_boundary(s, s->pos_ns);
}

static int find(const struct ckpts *k, uint64_t pos)
{
	for (int i = 0; i < k->n; i++)
		if (k->c[i].pos_ns == pos)
			return i;
	return -1;
}

/* Room for one more: the interior checkpoint whose gap (to its neighbours)
 * weighed by closeness to the position is smallest goes. */
static void make_room(struct ckpts *k, uint64_t pos)
{
	int best = k->n - 1;
	double best_score = 0;
	for (int i = 1; i + 1 < k->n; i++) {
		uint64_t p = k->c[i].pos_ns;
		double d = (double)(p > pos ? p - pos : pos - p) / (double)k->every_ns;
		double score = (double)(k->c[i + 1].pos_ns - k->c[i - 1].pos_ns) / (1.0 + d / 4.0);
		if (i == 1 || score < best_score) {
			best = i;
			best_score = score;
		}
	}
	ck_clear(&k->c[best]);
	memmove(&k->c[best], &k->c[best + 1], (size_t)(k->n - best - 1) * sizeof(k->c[0]));
	k->n--;
}

/* The state now, as the checkpoint at pos (the pump calls it before the
 * first event that ends past pos). */
static void take(struct session *s, uint64_t pos)
{
	struct ckpts *k = s->ck;
	struct ckpt c = {.pos_ns = pos, .events_total = s->st.events_total,
			 .last_ev_ns = s->last_ev_ns};

	if (find(k, pos) >= 0)
		return;
	c.m = model_clone(s->an->m);
	c.d = detect_save(s->an->d);
	c.k = s->stacks ? stacks_save(s->stacks) : NULL;
	if (!c.m || !c.d || (s->stacks && !c.k)) {
		ck_clear(&c);
		return;
	}
	if (k->n == CK_MAX)
		make_room(k, pos);
	int i = k->n;
	while (i > 0 && k->c[i - 1].pos_ns > pos) {
		k->c[i] = k->c[i - 1];
		i--;
	}
	k->c[i] = c;
	k->n++;
	k->taken++;
}

void ckpt_before(struct session *s, uint64_t next_end_ns)
{
	struct ckpts *k = s->ck;
	uint64_t start = s->st.replay_start_ns;
	if (!k || next_end_ns <= k->next_ns || next_end_ns <= start)
		return;
	/* Every event ending before next_end_ns is in, none after: the last
	 * boundary before it is a valid checkpoint (when a read jumps over
	 * several, the last one). */
	uint64_t e = next_end_ns - 1, b = e - (e - start) % k->every_ns;
	k->next_ns = next_boundary(s, e);
	/* A seek far ahead takes the boundaries near its target and, on the
	 * way, one per 1/CK_MAX of the file: the others would be thinned out
	 * at once (and each costs a copy: a third of a long jump's time). */
	uint64_t span = s->st.replay_end_ns > start ? s->st.replay_end_ns - start : 0;
	if (k->target_ns && b + CK_NEAR * k->every_ns < k->target_ns && k->last_ns &&
	    b < k->last_ns + span / CK_MAX)
		return;
	take(s, b);
	k->last_ns = b;
}

void ckpt_target(struct session *s, uint64_t to)
{
	if (s->ck)
		s->ck->target_ns = to;
}

void ckpt_rewound(struct session *s)
{
	if (s->ck)
		s->ck->next_ns = next_boundary(s, s->pos_ns);
}

int ckpt_restore(struct session *s, uint64_t to)
{
	struct ckpts *k = s->ck;
	int best = -1;
	if (!k)
		return -ENOENT;
	for (int i = 0; i < k->n && k->c[i].pos_ns <= to; i++)
		best = i;
	if (best < 0)
		return -ENOENT;
	/* forward, a later checkpoint only where it skips reading */
	if (to >= s->pos_ns && k->c[best].pos_ns <= s->pos_ns)
		return -ENOENT;
	struct ckpt *c = &k->c[best];
	int r = s->src->ops->seek(s->src, c->pos_ns + 1);
	if (r)
		return r;
	struct ig_model *m = model_copy(s->an->m, c->m);
	if (!m) { /* model_copy freed it: a new one, and the caller rebuilds */
		s->an->m = NULL;
		analysis_set_model(s->an, model_new(model_cfg(c->m)));
		return -ENOMEM;
	}
	detect_restore(s->an->d, c->d);
	if (s->stacks && c->k)
		stacks_restore(s->stacks, c->k);
	s->pos_ns = c->pos_ns;
	s->at_end = false;
	s->last_ev_ns = c->last_ev_ns;
	s->st.events_total = s->rate_events0 = c->events_total;
	s->rate_t0_ns = ig_unix_now_ns();
	k->next_ns = next_boundary(s, c->pos_ns);
	k->restored++;
	return 0;
}

void session_ckpt_stats(const struct session *s, int *n, uint64_t *taken, uint64_t *restored)
{
	*n = s->ck ? s->ck->n : 0;
	*taken = s->ck ? s->ck->taken : 0;
	*restored = s->ck ? s->ck->restored : 0;
}
