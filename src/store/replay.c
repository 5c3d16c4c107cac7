/* The replay source: the streams of every file (events, host snapshots,
 * names; arrays for what the Ingero adapter synthesises), their k-way merge
 * by completion time, seeking, and the node table. Opening and reading
 * files is replay_file.c, the Ingero adapter replay_ingero.c, the row
 * formats recfmt.c. */
#include "store/replay_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "store/db.h"
#include "store/recfmt.h"

static const struct ig_source_ops replay_ops;

struct replay *rp_of(struct ig_source *s)
{
	return s && s->ops == &replay_ops ? s->priv : NULL;
}

int replay_is(const struct ig_source *s)
{
	return s && s->ops == &replay_ops;
}

/* --- nodes ------------------------------------------------------------------ */

int rp_node_register(struct replay *r, const char *key, const char *display, int preferred)
{
	for (int i = 0; i < RP_MAX_NODES; i++)
		if (r->nodes[i].key && !strcmp(r->nodes[i].key, key))
			return i;
	int idx = -1;
	if (preferred >= 0 && preferred < RP_MAX_NODES && !r->nodes[preferred].key)
		idx = preferred;
	for (int i = 0; idx < 0 && i < RP_MAX_NODES; i++)
		if (!r->nodes[i].key)
			idx = i;
	if (idx < 0)
		return RP_MAX_NODES - 1; /* table full: share the last slot */
	r->nodes[idx].key = strdup(key);
	r->nodes[idx].display = strdup(display && *display ? display : key);
	if (idx + 1 > r->nnodes)
		r->nnodes = idx + 1;
	return idx;
}

unsigned rp_node_for(struct replay *r, struct rfile *f, const char *name)
{
	if (!name || !*name)
		return f->default_node_idx;
	if (f->last_node_valid && !strcmp(f->last_node, name))
		return f->last_node_idx;
	unsigned idx = (unsigned)rp_node_register(r, name, name, -1);
	snprintf(f->last_node, sizeof(f->last_node), "%s", name);
	f->last_node_idx = idx;
	f->last_node_valid = 1;
	return idx;
}

const char *replay_node_name(struct ig_source *s, unsigned idx)
{
	struct replay *r = rp_of(s);
	if (!r || idx >= RP_MAX_NODES || !r->nodes[idx].key)
		return NULL;
	return r->nodes[idx].display;
}

int replay_node_count(struct ig_source *s)
{
	struct replay *r = rp_of(s);
	return r ? r->nnodes : 0;
}

/* --- streams ---------------------------------------------------------------- */

int rp_fail_read(struct replay *r, struct rfile *f, const char *what)
{
	if (!r->err[0])
		snprintf(r->err, sizeof(r->err), "replay of %s failed: %s: %s", f->path, what,
			 db_errmsg(f->db, sqlite3_errcode(f->db)));
	rp_one_line(r->err);
	return -EIO;
}

int rp_fail_order(struct replay *r, struct rfile *f, const char *table)
{
	if (!r->err[0])
		snprintf(r->err, sizeof(r->err),
			 "replay of %s failed: corrupt database: the rows of %s do not come in "
			 "the order of their index (an index does not match its table: run "
			 "sqlite3 FILE 'PRAGMA integrity_check')",
			 f->path, table);
	rp_one_line(r->err);
	return -EIO;
}

void rp_span_add(struct rfile *f, uint64_t ts)
{
	if (!f->has_span) {
		f->start = f->end = ts;
		f->has_span = 1;
		return;
	}
	if (ts < f->start)
		f->start = ts;
	if (ts > f->end)
		f->end = ts;
}

/* --- the reorder heap ------------------------------------------------------------- */

static int heap_less(const struct pending *a, const struct pending *b)
{
	uint64_t ka = rp_key(&a->e), kb = rp_key(&b->e);
	return ka != kb ? ka < kb : a->seq < b->seq;
}

int rp_heap_push(struct stream *s, const struct ig_event *e, uint64_t seq)
{
	if (s->hlen == s->hcap) {
		size_t cap = s->hcap ? s->hcap * 2 : 256;
		struct pending *n = realloc(s->heap, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->heap = n;
		s->hcap = cap;
	}
	size_t i = s->hlen++;
	s->heap[i].e = *e;
	s->heap[i].seq = seq;
	while (i) {
		size_t p = (i - 1) / 2;
		if (!heap_less(&s->heap[i], &s->heap[p]))
			break;
		struct pending t = s->heap[i];
		s->heap[i] = s->heap[p];
		s->heap[p] = t;
		i = p;
	}
	return 0;
}

void rp_heap_pop(struct stream *s, struct ig_event *out)
{
	*out = s->heap[0].e;
	s->heap[0] = s->heap[--s->hlen];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, rr = l + 1, m = i;
		if (l < s->hlen && heap_less(&s->heap[l], &s->heap[m]))
			m = l;
		if (rr < s->hlen && heap_less(&s->heap[rr], &s->heap[m]))
			m = rr;
		if (m == i)
			break;
		struct pending t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

int rp_heap_step(struct replay *r, struct stream *s, const char *what)
{
	for (;;) {
		while (s->hlen &&
		       (s->cursor_eof || (int64_t)rp_key(&s->heap[0].e) <= s->last_stamp)) {
			rp_heap_pop(s, &s->head);
			if (rp_key(&s->head) < r->seek_ts)
				continue;
			s->has_head = 1;
			return 1;
		}
		if (s->cursor_eof) {
			s->eof = 1;
			return 1;
		}
		int rc = db_step(s->st);
		if (rc == SQLITE_ROW)
			return 0;
		if (rc != SQLITE_DONE)
			return rp_fail_read(r, s->f, what);
		s->cursor_eof = 1;
	}
}

/* One row of an ingero-top file's events: values checked, op by the file's
 * ops table (an op it does not name, or of another kind, is refused). */
static int own_row(struct replay *r, struct rfile *f, struct stream *s)
{
	struct ig_event *e = &s->head;
	int64_t src, op_id;
	const char *node, *detail;
	if (recfmt_event_read(s->st, e, &src, &op_id, &node, &detail, f->dur_max))
		return ROW_REFUSE;
	const struct opmap *m = rp_op_lookup(f, src, op_id);
	if (!m || (m->kind && m->kind != e->kind))
		return ROW_REFUSE;
	if (!m->kind)
		return ROW_SKIP;
	e->node = (uint8_t)rp_node_for(r, f, node);
	e->op = (uint16_t)m->op;
	if (e->kind == IG_EV_CGROUP && detail && detail[0]) {
		snprintf(s->container, sizeof(s->container), "%s", detail);
		e->container = s->container;
	}
	return ROW_OK;
}

static const char *stream_table(int type)
{
	static const char *const t[] = {"process_names", "system_snapshots", "event_aggregates",
					"events", "ingero_top_summaries"};
	return type >= 0 && type < S_NTYPES ? t[type] : "?";
}

/* Streams never go back: a head earlier than the last one means the rows
 * did not come in the order the query asked for (a damaged index). */
static int head_in_order(struct replay *r, struct stream *s)
{
	uint64_t k = rp_key(&s->head);
	if (k < s->last_key)
		return rp_fail_order(r, s->f, stream_table(s->type));
	s->last_key = k;
	return 0;
}

/* Advances an array stream past the seek time. */
static void array_next(struct replay *r, struct stream *s)
{
	while (s->apos < s->alen && rp_key(&s->arr[s->apos]) < r->seek_ts)
		s->apos++;
	if (s->apos >= s->alen) {
		s->eof = 1;
		return;
	}
	s->head = s->arr[s->apos++];
	s->has_head = 1;
}

/* Advances stream s to its next head at or after the seek time. Returns 0
 * (head set or eof) or -errno. */
static int stream_next(struct replay *r, struct stream *s)
{
	struct rfile *f = s->f;
	s->has_head = 0;
	if (s->eof)
		return 0;
	if (s->arr) {
		array_next(r, s);
		return s->has_head ? head_in_order(r, s) : 0;
	}
	if (!s->st) {
		s->eof = 1;
		return 0;
	}
	if (s->type == S_SUM) {
		int rc = rp_sum_next(r, s);
		return rc || !s->has_head ? rc : head_in_order(r, s);
	}
	if (s->type == S_EVENTS && f->writer == W_INGERO) {
		int rc = rp_ingero_next(r, s);
		return rc || !s->has_head ? rc : head_in_order(r, s);
	}
	for (;;) {
		int rc = db_step(s->st);
		if (rc == SQLITE_DONE) {
			s->eof = 1;
			return 0;
		}
		if (rc != SQLITE_ROW)
			return rp_fail_read(r, f, "reading");
		const char *node = NULL;
		int row = ROW_OK;
		switch (s->type) {
		case S_EVENTS:
			r->st.rows++;
			row = own_row(r, f, s);
			break;
		case S_SNAP:
			if (recfmt_snapshot_check(s->st)) {
				row = ROW_REFUSE;
				break;
			}
			recfmt_snapshot_read(s->st, &s->head, &node);
			s->head.node = (uint8_t)rp_node_for(r, f, node);
			break;
		case S_COMM: {
			const char *cont = NULL;
			if (recfmt_name_read(s->st, &s->head, &node, &cont)) {
				row = ROW_REFUSE;
				break;
			}
			s->head.node = (uint8_t)rp_node_for(r, f, node);
			snprintf(s->container, sizeof(s->container), "%s", cont ? cont : "");
			s->head.container = s->container[0] ? s->container : NULL;
			break;
		}
		}
		if (row == ROW_SKIP)
			r->st.skipped++;
		if (row == ROW_REFUSE)
			r->st.refused++;
		if (row != ROW_OK)
			continue;
		s->has_head = 1;
		return head_in_order(r, s);
	}
}

static void stream_close(struct stream *s)
{
	sqlite3_finalize(s->st);
	s->st = NULL;
	s->hlen = 0;
	s->has_head = 0;
}

/* The query of a cursor stream, NULL when the file has none of it. */
static const char *stream_sql(struct rfile *f, int type, char *buf, size_t len)
{
	switch (type) {
	case S_EVENTS:
		if (f->writer == W_OWN)
			return recfmt_event_select_sql(f->has_arg2, f->has_detail);
		rp_ingero_events_sql(f, buf, len);
		return buf;
	case S_SNAP:
		return db_has_table(f->db, "system_snapshots")
			   ? recfmt_snapshot_select_sql(f->has_snap_node)
			   : NULL;
	case S_SUM:
		return f->writer == W_OWN && db_has_table(f->db, "ingero_top_summaries")
			   ? recfmt_summary_select_sql
			   : NULL;
	case S_COMM:
		return f->writer == W_OWN && f->has_names_ext
			   ? recfmt_name_select_sql(f->has_names_ppid, f->has_names_container)
			   : NULL;
	}
	return NULL;
}

/* (Re)starts the cursor streams of f at r->seek_ts. */
static int file_start_streams(struct replay *r, struct rfile *f)
{
	for (int t = 0; t < S_NTYPES; t++) {
		struct stream *s = &f->s[t];
		stream_close(s);
		s->f = f;
		s->type = t;
		s->eof = 0;
		s->cursor_eof = 0;
		s->last_stamp = INT64_MIN;
		s->last_key = 0;
		s->seq = 0;
		s->apos = 0;
		if (s->arr)
			continue;
		char buf[512];
		const char *sql =
		    t == S_SUM && r->o.no_summaries ? NULL : stream_sql(f, t, buf, sizeof(buf));
		if (!sql) {
			s->eof = 1;
			continue;
		}
		if (sqlite3_prepare_v2(f->db, sql, -1, &s->st, NULL) != SQLITE_OK)
			return rp_fail_read(r, f, "preparing a query");
		int64_t lo = INT64_MIN;
		if (r->seek_ts) {
			lo = (int64_t)r->seek_ts;
			/* a call stamped at entry completes up to w_ns later */
			if (t == S_EVENTS && f->writer == W_INGERO)
				lo -= (int64_t)f->w_ns;
		}
		sqlite3_bind_int64(s->st, 1, lo);
	}
	for (int t = 0; t < S_NTYPES; t++) {
		int rc = stream_next(r, &f->s[t]);
		if (rc)
			return rc;
	}
	return 0;
}

/* --- the source ----------------------------------------------------------------- */

static struct stream *next_stream(struct replay *r)
{
	struct stream *best = NULL;
	for (int i = 0; i < r->nfiles; i++)
		for (int t = 0; t < S_NTYPES; t++) {
			struct stream *s = &r->files[i].s[t];
			if (!s->has_head)
				continue;
			if (!best || rp_key(&s->head) < rp_key(&best->head) ||
			    (rp_key(&s->head) == rp_key(&best->head) && s->type < best->type))
				best = s;
		}
	return best;
}

static int rp_fd(struct ig_source *s)
{
	return -1;
}

static int rp_poll(struct ig_source *src, ig_emit_fn emit, void *ctx, int max)
{
	struct replay *r = src->priv;
	if (r->err[0])
		return -EIO;
	int n = 0;
	while (n < max) {
		struct stream *s = next_stream(r);
		if (!s)
			return n ? n : -ENODATA;
		struct ig_event e = s->head;
		char cont[IG_DETAIL_LEN]; /* the stream's copy is the next row's */
		if (e.container) {
			snprintf(cont, sizeof(cont), "%s", e.container);
			e.container = cont;
		}
		int rc = stream_next(r, s);
		emit(ctx, &e);
		n++;
		r->st.delivered++;
		if (rc)
			return n;
	}
	return n;
}

static int rp_peek(struct ig_source *src, uint64_t *ts)
{
	struct replay *r = src->priv;
	if (r->err[0])
		return -EIO;
	struct stream *s = next_stream(r);
	if (!s)
		return -ENODATA;
	*ts = rp_key(&s->head);
	return 0;
}

static void rp_free(struct ig_source *src)
{
	if (!src)
		return;
	struct replay *r = src->priv;
	for (int i = 0; r && i < r->nfiles; i++)
		rp_file_free(&r->files[i]);
	for (int i = 0; r && i < RP_MAX_NODES; i++) {
		free(r->nodes[i].key);
		free(r->nodes[i].display);
	}
	if (r)
		free(r->files);
	free(r);
}

static const struct ig_source_ops replay_ops = {
    .name = "replay",
    .fd = rp_fd,
    .poll = rp_poll,
    .peek_ts = rp_peek,
    .free = rp_free,
};

struct ig_source *replay_open_opts(const char *const *paths, int n, const struct replay_opts *o,
				   const char **err)
{
	const char *dummy;
	if (!err)
		err = &dummy;
	*err = NULL;
	if (!paths || n < 1) {
		*err = rp_err("cannot replay: no file given");
		return NULL;
	}
	if (n > RP_MAX_FILES) {
		*err = rp_err("cannot replay: at most %d files at once", RP_MAX_FILES);
		return NULL;
	}
	struct replay *r = calloc(1, sizeof(*r));
	if (!r || !(r->files = calloc((size_t)n, sizeof(*r->files)))) {
		free(r);
		*err = rp_err("cannot replay: out of memory");
		return NULL;
	}
	r->src.ops = &replay_ops;
	r->src.priv = r;
	if (o)
		r->o = *o;
	for (int i = 0; i < n; i++) {
		struct rfile *f = &r->files[i];
		f->idx = i;
		f->path = strdup(paths[i] ? paths[i] : "");
		r->nfiles = i + 1;
		const char *e =
		    f->path ? rp_open_file(r, f) : rp_err("cannot replay: out of memory");
		if (e) {
			*err = e;
			rp_free(&r->src);
			return NULL;
		}
	}
	for (int i = 0; i < n; i++)
		if (file_start_streams(r, &r->files[i])) {
			*err = rp_err("%s", r->err[0] ? r->err : "cannot replay: read error");
			rp_free(&r->src);
			return NULL;
		}
	return &r->src;
}

struct ig_source *replay_open(const char *const *paths, int n, const char **err)
{
	return replay_open_opts(paths, n, NULL, err);
}

int replay_seek(struct ig_source *src, uint64_t ts_ns)
{
	struct replay *r = rp_of(src);
	if (!r)
		return -EINVAL;
	r->err[0] = 0;
	r->seek_ts = ts_ns;
	for (int i = 0; i < r->nfiles; i++) {
		int rc = file_start_streams(r, &r->files[i]);
		if (rc)
			return rc;
	}
	return 0;
}

int replay_each(struct ig_source *src, uint64_t since_ns, uint64_t until_ns, ig_emit_fn emit,
		void *ctx)
{
	int rc = replay_seek(src, since_ns);
	while (!rc) {
		uint64_t ts;
		int p = src->ops->peek_ts(src, &ts);
		if (p == -ENODATA || (!p && until_ns && ts > until_ns))
			break;
		if (p < 0)
			return p;
		p = src->ops->poll(src, emit, ctx, 1);
		if (p == -ENODATA || !p)
			break;
		if (p < 0)
			return p;
	}
	return rc;
}

int replay_span(struct ig_source *src, uint64_t *start, uint64_t *end)
{
	struct replay *r = rp_of(src);
	if (!r)
		return -EINVAL;
	int any = 0;
	for (int i = 0; i < r->nfiles; i++) {
		struct rfile *f = &r->files[i];
		if (!f->has_span)
			continue;
		if (!any || f->start < *start)
			*start = f->start;
		if (!any || f->end > *end)
			*end = f->end;
		any = 1;
	}
	return any ? 0 : -ENODATA;
}

void replay_get_stats(struct ig_source *src, struct replay_stats *st)
{
	struct replay *r = rp_of(src);
	if (r)
		*st = r->st;
	else
		memset(st, 0, sizeof(*st));
}

const char *replay_error(struct ig_source *src)
{
	struct replay *r = rp_of(src);
	return r && r->err[0] ? r->err : NULL;
}

int replay_status(struct ig_source *src, struct ig_status *st)
{
	struct replay *r = rp_of(src);
	uint64_t next;
	if (!r)
		return -EINVAL;
	st->rows_refused = r->st.refused;
	st->replay_summarised = r->st.summarised;
	st->replay_next_ns = rp_peek(src, &next) ? 0 : next;
	if (!r->err[0])
		return 0;
	ig_status_say(st, "%s", r->err);
	return -EIO;
}
