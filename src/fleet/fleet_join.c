/* The cross-host straggler (docs/fleet.md): NCCL arrivals of every host,
 * moved onto our clock with each host's offset, joined by (communicator
 * key, sequence number) in a bounded table (the recent FLEET_JOIN_SLOTS
 * collectives of each communicator); per collective, the rank that arrived
 * last and its lateness after the median arrival of the others; over the
 * table, the rank most often last. */
#include "fleet/fleet_int.h"

#include <stdlib.h>
#include <string.h>

static struct fleet_join *join_of(struct fleet *f, uint32_t key, uint32_t nranks)
{
	for (int k = 0; k < f->nkeys; k++)
		if (f->keys[k].key == key)
			return &f->keys[k];
	if (f->nkeys == FLEET_JOIN_KEYS)
		return NULL; /* more communicators than joined: the first ones are kept */
	struct fleet_join *j = &f->keys[f->nkeys];
	memset(j, 0, sizeof(*j));
	j->cap = nranks < 2 ? 2 : nranks > FLEET_JOIN_RANKS ? FLEET_JOIN_RANKS : (int)nranks;
	j->nslots = FLEET_JOIN_ARRIVALS / j->cap;
	if (j->nslots > FLEET_JOIN_SLOTS)
		j->nslots = FLEET_JOIN_SLOTS;
	if (j->nslots < 64)
		j->nslots = 64;
	j->slots = calloc((size_t)j->nslots, sizeof(*j->slots));
	j->pool = calloc((size_t)j->nslots * (size_t)j->cap, sizeof(*j->pool));
	if (!j->slots || !j->pool) {
		free(j->slots);
		free(j->pool);
		return NULL;
	}
	for (int k = 0; k < j->nslots; k++)
		j->slots[k].a = &j->pool[(size_t)k * (size_t)j->cap];
	j->key = key;
	j->nranks = nranks;
	f->nkeys++;
	return j;
}

static void note_seen(struct fleet_join *j, int host, uint32_t rank, uint32_t pid, uint64_t seq)
{
	for (int k = 0; k < j->nseen; k++)
		if (j->seen[k].rank == rank) {
			j->seen[k].host = host;
			j->seen[k].pid = pid;
			if (seq > j->seen[k].latest)
				j->seen[k].latest = seq;
			return;
		}
	if (j->nseen < FLEET_JOIN_RANKS)
		j->seen[j->nseen++] = (struct fleet_seen){rank, pid, host, seq};
}

void fjoin_add(struct fleet *f, int host, uint32_t key, uint32_t rank, uint32_t nranks,
	       uint32_t pid, uint64_t seq, int64_t t_remote_ns)
{
	struct fleet_join *j = join_of(f, key, nranks);
	if (!j || rank > 65535)
		return;
	if (nranks > j->nranks)
		j->nranks = nranks;
	note_seen(j, host, rank, pid, seq);
	f->join_dirty = true;
	struct fleet_slot *s = &j->slots[seq % (uint64_t)j->nslots];
	if (s->seq > seq)
		return; /* older than what the table keeps */
	if (s->seq != seq) {
		s->seq = seq;
		s->n = 0;
	}
	for (int k = 0; k < s->n; k++)
		if (s->a[k].rank == rank)
			return; /* listed twice: the first one counts */
	if (s->n == j->cap)
		return;
	s->a[s->n++] = (struct fleet_arrival){
	    .rank = (uint16_t)rank,
	    .host = (uint16_t)host,
	    .pid = pid,
	    .t_ns = t_remote_ns - f->hosts[host].offset_ns,
	};
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

struct tally {
	uint32_t rank, pid;
	int host;
	uint64_t last, late_sum, late_max;
};

/* The collective of slot s is judged when every rank seen on the
 * communicator is in it, or when each of them has reported later ones (the
 * missing arrivals were lost). */
static bool judged(const struct fleet_join *j, const struct fleet_slot *s, uint64_t min_latest)
{
	return s->seq && s->n >= 2 && (s->n >= j->nseen || s->seq <= min_latest);
}

/* Counts the last ranks of one communicator into t[]; returns the
 * collectives judged. */
static uint64_t tally_join(const struct fleet *f, const struct fleet_join *j, struct tally *t,
			   int *nt, uint64_t *unc)
{
	uint64_t min_latest = UINT64_MAX, n = 0;
	for (int k = 0; k < j->nseen; k++)
		if (j->seen[k].latest < min_latest)
			min_latest = j->seen[k].latest;
	for (int x = 0; x < j->nslots; x++) {
		const struct fleet_slot *s = &j->slots[x];
		if (!judged(j, s, min_latest))
			continue;
		int64_t ts[FLEET_JOIN_RANKS];
		int last = 0;
		for (int k = 0; k < s->n; k++) {
			ts[k] = s->a[k].t_ns;
			if (s->a[k].t_ns > s->a[last].t_ns)
				last = k;
			if (f->hosts[s->a[k].host].unc_ns > *unc)
				*unc = f->hosts[s->a[k].host].unc_ns;
		}
		/* the median of the others: the last is ts[n - 1] once sorted */
		qsort(ts, s->n, sizeof(ts[0]), cmp_i64);
		int no = s->n - 1;
		int64_t med = no % 2 ? ts[no / 2] : ts[no / 2 - 1] / 2 + ts[no / 2] / 2;
		uint64_t late = (uint64_t)(s->a[last].t_ns - med);
		n++;
		int k;
		for (k = 0; k < *nt; k++)
			if (t[k].rank == s->a[last].rank)
				break;
		if (k == *nt) {
			if (*nt == FLEET_JOIN_RANKS)
				continue;
			t[(*nt)++] = (struct tally){.rank = s->a[last].rank};
		}
		t[k].pid = s->a[last].pid;
		t[k].host = s->a[last].host;
		t[k].last++;
		t[k].late_sum += late;
		if (late > t[k].late_max)
			t[k].late_max = late;
	}
	return n;
}

void fjoin_update(struct fleet *f)
{
	struct fleet_straggler best = {0};
	f->join_dirty = false;
	for (int k = 0; k < f->nkeys; k++) {
		struct tally t[FLEET_JOIN_RANKS];
		int nt = 0;
		uint64_t unc = 0, n = tally_join(f, &f->keys[k], t, &nt, &unc);
		for (int r = 0; r < nt; r++) {
			bool better = !best.found || t[r].last > best.last_count ||
				      (t[r].last == best.last_count &&
				       t[r].late_sum > best.late_mean_ns * best.last_count);
			if (!better)
				continue;
			best = (struct fleet_straggler){
			    .found = true,
			    .key = f->keys[k].key,
			    .rank = t[r].rank,
			    .nranks = f->keys[k].nranks,
			    .host = t[r].host,
			    .pid = t[r].pid,
			    .collectives = n,
			    .last_count = t[r].last,
			    .late_mean_ns = t[r].late_sum / t[r].last,
			    .late_max_ns = t[r].late_max,
			    .unc_ns = unc,
			};
		}
	}
	/* A straggler is a rank last in most of the collectives (not by
	 * chance among two), by more than the clocks can tell apart. */
	if (best.found && (best.collectives < 3 || best.last_count * 2 <= best.collectives ||
			   best.late_mean_ns <= best.unc_ns))
		best.found = false;
	f->strag = best;
	for (int i = 0; i < f->n; i++)
		f->hosts[i].straggler = best.found && best.host == i;
}

void fjoin_free(struct fleet *f)
{
	for (int k = 0; k < f->nkeys; k++) {
		free(f->keys[k].slots);
		free(f->keys[k].pool);
	}
	f->nkeys = 0;
}

void fleet_straggler(const struct fleet *f, struct fleet_straggler *out)
{
	*out = f->strag;
}
