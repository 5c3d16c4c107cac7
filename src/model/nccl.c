/* NCCL in the model: operations (a data call, or a group of them) waiting
 * on their stream, their completion when a synchronisation of that stream
 * returns, and per op and per rank (a process in a communicator) the
 * operations, bytes and completion waits over the window (model.h). The
 * state is one block of plain data (struct nccl_state). */
#include "model/model_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ops.h"

#define GROUP_KIND NC_DATA /* first group slot */

static int data_index(int op)
{
	return op >= IG_OP_NCCL_ALL_REDUCE && op <= IG_OP_NCCL_RECV ? op - IG_OP_NCCL_ALL_REDUCE
								    : -1;
}

/* The slice of second sec; a scratch slice for events older than the
 * window (sec NO_SEC: counted in lifetime totals only). */
#define NO_SEC UINT64_MAX
static struct nc_slice *nslot(struct nc_slice *sl, unsigned W, uint64_t sec)
{
	static __thread struct nc_slice scratch;
	if (sec == NO_SEC)
		return &scratch;
	struct nc_slice *s = &sl[sec % W];
	if (s->sec != sec) {
		memset(s, 0, sizeof(*s));
		s->sec = sec;
	}
	return s;
}

/* The rank record of (pid, comm), made when new; -1 when the table is full
 * of ranks active in the last second (the oldest is taken otherwise). */
static int rank_get(struct ig_model *m, uint32_t pid, uint64_t comm, uint64_t end)
{
	struct nccl_state *N = m->nccl;
	int old = -1;
	for (int i = 0; i < N->nr; i++) {
		if (N->r[i].pid == pid && N->r[i].comm == comm)
			return i;
		if (old < 0 || N->r[i].last_ns < N->r[old].last_ns)
			old = i;
	}
	int i = N->nr < NC_RANKS ? N->nr++ : old;
	if (N->nr == NC_RANKS && i == old) {
		if (end < N->r[old].last_ns + NS)
			return -1;
		/* operations still pending on the slot forget their rank */
		for (int k = 0; k < N->npend; k++)
			if (N->pend[k].rank == (uint16_t)i)
				N->pend[k].rank = UINT16_MAX;
	}
	memset(&N->r[i], 0, sizeof(N->r[i]));
	N->r[i].pid = pid;
	N->r[i].comm = comm;
	return i;
}

/* The kind of a group with these members: its slot, made when new (the last
 * slot takes every further distinct group). */
static int group_kind(struct nccl_state *N, uint32_t sig)
{
	for (int g = 0; g < NC_GROUPS; g++) {
		struct nc_kind *k = &N->k[GROUP_KIND + g];
		if (k->sig == sig || !k->sig || g == NC_GROUPS - 1) {
			if (!k->sig)
				k->sig = sig;
			else if (k->sig != sig)
				k->sig = UINT32_MAX; /* "other groups" */
			return GROUP_KIND + g;
		}
	}
	return GROUP_KIND + NC_GROUPS - 1;
}

/* An operation is enqueued: counted, and waits for its completion. */
static void enqueue(struct ig_model *m, const struct ig_event *e, int kind, uint64_t bytes,
		    uint64_t stream, uint64_t comm, uint64_t end, uint64_t sec)
{
	struct nccl_state *N = m->nccl;
	struct nc_kind *k = &N->k[kind];
	k->ops_life++;
	k->bytes_life += bytes;
	struct nc_slice *s = nslot(k->sl, m->W, sec);
	s->ops++;
	s->bytes += bytes;
	int r = rank_get(m, e->pid, comm, end);
	if (r >= 0) {
		struct nc_rank *R = &N->r[r];
		R->ops_life++;
		R->last_ns = end;
		R->arr[R->ops_life % IG_NCCL_ARRIVALS] =
		    (struct nc_arrival){.seq = R->ops_life, .entry_ns = e->ts_ns};
		s = nslot(R->sl, m->W, sec);
		s->ops++;
		s->bytes += bytes;
	}
	if (N->npend == NC_PEND) {
		/* the oldest is forgotten: its completion will not be known */
		int o = 0;
		for (int i = 1; i < N->npend; i++)
			if (N->pend[i].end_ns < N->pend[o].end_ns)
				o = i;
		N->pend[o] = N->pend[--N->npend];
		N->dropped++;
	}
	N->pend[N->npend++] = (struct nc_pend){.pid = e->pid,
					       .kind = (uint16_t)kind,
					       .rank = r >= 0 ? (uint16_t)r : UINT16_MAX,
					       .stream = stream,
					       .end_ns = end,
					       .bytes = bytes};
}

static void event_record(struct nccl_state *N, const struct ig_event *e, uint64_t end)
{
	for (int i = 0; i < N->nev; i++)
		if (N->ev[i].pid == e->pid && N->ev[i].event == e->arg0) {
			N->ev[i].stream = e->stream;
			N->ev[i].end_ns = end;
			return;
		}
	int i = N->nev < NC_EVENTS ? N->nev++ : (N->evi++ % NC_EVENTS);
	N->ev[i] = (struct nc_event){e->pid, e->arg0, e->stream, end};
}

/* A synchronisation of pid returned at end: every operation of pid
 * enqueued before it began (on its stream, or on every stream), or before
 * upto, is complete. */
static void complete(struct ig_model *m, const struct ig_event *e, int all, uint64_t stream,
		     uint64_t upto, uint64_t end, uint64_t sec)
{
	struct nccl_state *N = m->nccl;
	int seen[8], nseen = 0;
	for (int i = 0; i < N->npend;) {
		struct nc_pend *p = &N->pend[i];
		if (p->pid != e->pid || (!all && p->stream != stream) || p->end_ns > upto) {
			i++;
			continue;
		}
		uint64_t wait = end > p->end_ns ? end - p->end_ns : 0;
		struct nc_kind *k = &N->k[p->kind];
		k->done_life++;
		hist_add(&k->wait_life, wait);
		struct nc_slice *s = nslot(k->sl, m->W, sec);
		s->done++;
		s->wait_ns += wait;
		if (wait > s->wait_max)
			s->wait_max = wait;
		if (p->rank < N->nr && N->r[p->rank].pid == e->pid) {
			struct nc_rank *R = &N->r[p->rank];
			s = nslot(R->sl, m->W, sec);
			s->done++;
			s->wait_ns += wait;
			if (wait > s->wait_max)
				s->wait_max = wait;
			/* the synchronisation's time counts once per rank it served */
			int dup = 0;
			for (int j = 0; j < nseen; j++)
				dup |= seen[j] == p->rank;
			if (!dup && nseen < 8) {
				seen[nseen++] = p->rank;
				s->sync_ns += e->dur_ns;
			}
		}
		*p = N->pend[--N->npend];
	}
}

/* What a call that is not NCCL's does to pending operations. */
static void sync_call(struct ig_model *m, const struct ig_event *e, const struct ig_op_info *oi,
		      uint64_t end, uint64_t sec)
{
	struct nccl_state *N = m->nccl;
	if (e->op == IG_OP_CUDA_EVENT_RECORD) {
		event_record(N, e, end);
		return;
	}
	if (!(oi->kind & (IG_OPK_SYNC | IG_OPK_IMPLICIT_SYNC)) || !N->npend)
		return;
	if (e->op == IG_OP_CUDA_EVENT_SYNC || e->op == IG_OP_HIP_EVENT_SYNC) {
		/* up to the event's record, on its stream (unknown events: nothing) */
		for (int i = 0; i < N->nev; i++)
			if (N->ev[i].pid == e->pid && N->ev[i].event == e->arg0)
				complete(m, e, !N->ev[i].stream, N->ev[i].stream, N->ev[i].end_ns,
					 end, sec);
		return;
	}
	/* a stream sync of stream 0 (the legacy stream) waits for the blocking
	 * streams too; device syncs and implicit ones wait for all */
	int stream_sync = (oi->kind & IG_OPK_SYNC) && oi->argmode == IG_ARGS_STREAM1;
	int all = !stream_sync || !e->stream;
	complete(m, e, all, e->stream, e->ts_ns, end, sec);
}

void nccl_call(struct ig_model *m, struct thread *t, const struct ig_event *e, uint64_t end,
	       uint64_t sec, int inwin)
{
	const struct ig_op_info *oi = ig_op_info(e->op);
	if (!m->nccl || !oi)
		return;
	if (!inwin)
		sec = NO_SEC;
	if (oi->group != IG_GRP_NCCL) {
		sync_call(m, e, oi, end, sec);
		return;
	}
	if (e->op == IG_OP_NCCL_GROUP_START) {
		if (!t->grp_depth++) {
			t->grp_sig = 0;
			t->grp_bytes = t->grp_stream = t->grp_comm = 0;
		}
		return;
	}
	if (e->op == IG_OP_NCCL_GROUP_END) {
		if (!t->grp_depth)
			return; /* its start was not seen */
		if (--t->grp_depth || !t->grp_sig)
			return;
		if (!e->ret)
			enqueue(m, e, group_kind(m->nccl, t->grp_sig), t->grp_bytes, t->grp_stream,
				t->grp_comm, end, sec);
		return;
	}
	int d = data_index(e->op);
	if (d < 0 || e->ret) /* communicators; a refused call enqueues nothing */
		return;
	if (t->grp_depth) {
		unsigned c = (t->grp_sig >> (4 * d)) & 0xf;
		if (!t->grp_sig) {
			t->grp_stream = e->stream;
			t->grp_comm = e->arg2;
		}
		if (c < 15)
			t->grp_sig += 1u << (4 * d);
		t->grp_bytes += e->arg0;
		return;
	}
	enqueue(m, e, d, e->arg0, e->stream, e->arg2, end, sec);
}

void nccl_reset(struct ig_model *m)
{
	if (!m->nccl)
		return;
	memset(m->nccl, 0, sizeof(*m->nccl));
	for (int i = 0; i < NC_KINDS; i++)
		hist_clear(&m->nccl->k[i].wait_life);
}

/* --- reading ---------------------------------------------------------------------- */

static void kind_name(const struct nc_kind *k, int kind, char *b, size_t n)
{
	if (kind < GROUP_KIND) {
		snprintf(b, n, "%s", ig_op_name(IG_OP_NCCL_ALL_REDUCE + kind));
		return;
	}
	if (k->sig == UINT32_MAX) {
		snprintf(b, n, "group(other)");
		return;
	}
	size_t l = (size_t)snprintf(b, n, "group(");
	for (int d = 0, first = 1; d < NC_DATA && l < n; d++) {
		unsigned c = (k->sig >> (4 * d)) & 0xf;
		if (!c)
			continue;
		l += (size_t)snprintf(b + l, n - l, "%s%s", first ? "" : ", ",
				      ig_op_name(IG_OP_NCCL_ALL_REDUCE + d));
		if (c > 1 && l < n)
			l += (size_t)snprintf(b + l, n - l, " x%u%s", c, c == 15 ? "+" : "");
		first = 0;
	}
	if (l < n)
		snprintf(b + l, n - l, ")");
}

static void slices_sum(const struct ig_model *m, const struct nc_slice *sl, struct nc_slice *o)
{
	memset(o, 0, sizeof(*o));
	for (unsigned j = 0; j < m->W; j++) {
		const struct nc_slice *s = &sl[j];
		if (!in_window(m, s->sec) || (!s->ops && !s->done))
			continue;
		o->ops += s->ops;
		o->bytes += s->bytes;
		o->done += s->done;
		o->wait_ns += s->wait_ns;
		o->sync_ns += s->sync_ns;
		if (s->wait_max > o->wait_max)
			o->wait_max = s->wait_max;
	}
}

static void pcts(const struct hist *h, struct ig_pcts *p)
{
	static const double qs[] = {0.5, 0.9, 0.95, 0.99, 0.999};
	uint64_t v[5];
	hist_percentiles(h, qs, v, 5);
	*p = (struct ig_pcts){.n = h->n,
			      .p50 = v[0],
			      .p90 = v[1],
			      .p95 = v[2],
			      .p99 = v[3],
			      .p999 = v[4],
			      .max = h->max_ns,
			      .min = h->n ? h->min_ns : 0,
			      .mean = hist_mean(h)};
}

int model_nccl_ops(const struct ig_model *m, struct ig_nccl_stats *out, int max)
{
	const struct nccl_state *N = m->nccl;
	int n = 0;
	for (int i = 0; N && i < NC_KINDS && n < max; i++) {
		const struct nc_kind *k = &N->k[i];
		if (!k->ops_life)
			continue;
		struct ig_nccl_stats *o = &out[n++];
		struct nc_slice w;
		memset(o, 0, sizeof(*o));
		o->op = i < GROUP_KIND ? IG_OP_NCCL_ALL_REDUCE + i : IG_OP_NCCL_GROUP_END;
		kind_name(k, i, o->name, sizeof(o->name));
		slices_sum(m, k->sl, &w);
		o->ops_life = k->ops_life;
		o->bytes_life = k->bytes_life;
		o->done_life = k->done_life;
		o->ops_win = w.ops;
		o->bytes_win = w.bytes;
		o->done_win = w.done;
		o->wait_mean_win_ns = w.done ? w.wait_ns / w.done : 0;
		o->wait_max_win_ns = w.wait_max;
		o->bytes_per_s =
		    (double)w.bytes * 1e9 / (double)rate_span(m, m->clock_ns);
		pcts(&k->wait_life, &o->wait_life);
	}
	return n;
}

static int cmp_rank(const void *a, const void *b)
{
	const struct ig_nccl_rank *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int nccl_window_ranks(const struct ig_model *m, uint64_t end, struct ig_nccl_rank *out, int max)
{
	const struct nccl_state *N = m->nccl;
	int n = 0;
	for (int i = 0; N && i < N->nr && n < max; i++) {
		const struct nc_rank *R = &N->r[i];
		struct nc_slice w;
		slices_sum(m, R->sl, &w);
		if (!w.ops && !w.done)
			continue;
		struct ig_nccl_rank *o = &out[n++];
		memset(o, 0, sizeof(*o));
		o->pid = R->pid;
		copy_comm(o->comm, model_comm(m, R->pid));
		o->known = IG_NCCL_COMM_NRANKS(R->comm) != 0;
		o->key = IG_NCCL_COMM_KEY(R->comm);
		o->rank = IG_NCCL_COMM_RANK(R->comm);
		o->nranks = IG_NCCL_COMM_NRANKS(R->comm);
		o->ops_win = w.ops;
		o->bytes_win = w.bytes;
		o->done_win = w.done;
		o->wait_ns_win = w.wait_ns;
		o->wait_mean_ns = w.done ? w.wait_ns / w.done : 0;
		o->sync_ns_win = w.sync_ns;
		o->ops_life = R->ops_life;
		o->last_ns = R->last_ns;
	}
	(void)end;
	qsort(out, (size_t)n, sizeof(*out), cmp_rank);
	return n;
}

int model_nccl_ranks(const struct ig_model *m, struct ig_nccl_rank *out, int max)
{
	return nccl_window_ranks(m, m->clock_ns, out, max);
}

int model_nccl_arrivals(const struct ig_model *m, uint32_t pid, uint32_t key, uint32_t rank,
			uint64_t after_seq, uint64_t (*out)[2], int max, uint64_t *lost)
{
	const struct nccl_state *N = m->nccl;
	const struct nc_rank *R = NULL;
	if (lost)
		*lost = 0;
	for (int i = 0; N && i < N->nr && !R; i++)
		if (N->r[i].pid == pid && IG_NCCL_COMM_KEY(N->r[i].comm) == key &&
		    IG_NCCL_COMM_RANK(N->r[i].comm) == rank)
			R = &N->r[i];
	if (!R)
		return -ENOENT;
	if (after_seq > R->ops_life)
		after_seq = 0;
	uint64_t first = after_seq + 1; /* the oldest wanted, then the oldest kept */
	if (R->ops_life >= IG_NCCL_ARRIVALS && first < R->ops_life - IG_NCCL_ARRIVALS + 1)
		first = R->ops_life - IG_NCCL_ARRIVALS + 1;
	if (max < 0)
		max = 0;
	if (R->ops_life >= first && R->ops_life - first + 1 > (uint64_t)max)
		first = R->ops_life - (uint64_t)max + 1;
	int n = 0;
	for (uint64_t q = first; q <= R->ops_life; q++) {
		const struct nc_arrival *a = &R->arr[q % IG_NCCL_ARRIVALS];
		if (a->seq != q)
			continue; /* not kept (cannot happen: the ring holds the last ones) */
		out[n][0] = a->seq;
		out[n][1] = a->entry_ns;
		n++;
	}
	if (lost)
		*lost = R->ops_life - after_seq - (uint64_t)n;
	return n;
}

void model_nccl_totals(const struct ig_model *m, struct ig_nccl_totals *o)
{
	memset(o, 0, sizeof(*o));
	if (!m->nccl)
		return;
	o->pending = (uint64_t)m->nccl->npend;
	o->dropped = m->nccl->dropped;
}
