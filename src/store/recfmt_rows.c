/* The row types of the recording format: deep copies of chains and
 * sessions, the JSON columns of chains and stacks (written and read with
 * jansson), and reading a chain row. See recfmt.h. */
#include "store/recfmt.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"

/* --- copies ------------------------------------------------------------------- */

/* Lays out strings in one block: a first pass with p NULL only measures. */
struct blob {
	char *p;
	size_t len;
};

static const char *blob_str(struct blob *b, const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *d = b->p ? b->p + b->len : NULL;
	if (d)
		memcpy(d, s, n);
	b->len += n;
	return d;
}

/* Copies the string members at offs (offsetof of `const char *` members)
 * of s into the block, pointing d's members at the copies. */
static void strs_layout(void *d, const void *s, const size_t *offs, size_t n, struct blob *b)
{
	for (size_t i = 0; i < n; i++) {
		const char *const *from =
		    (const char *const *)(const void *)((const char *)s + offs[i]);
		const char **to = (const char **)(void *)((char *)d + offs[i]);
		*to = blob_str(b, *from);
	}
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const size_t chain_strs[] = {
    offsetof(struct rec_chain, id),	     offsetof(struct rec_chain, severity),
    offsetof(struct rec_chain, summary),     offsetof(struct rec_chain, root_cause),
    offsetof(struct rec_chain, explanation), offsetof(struct rec_chain, cuda_op),
    offsetof(struct rec_chain, node),
};

static const size_t session_strs[] = {
    offsetof(struct rec_session, gpu_model),  offsetof(struct rec_session, gpu_driver),
    offsetof(struct rec_session, cpu_model),  offsetof(struct rec_session, kernel),
    offsetof(struct rec_session, os_release), offsetof(struct rec_session, cuda_ver),
    offsetof(struct rec_session, python_ver), offsetof(struct rec_session, version),
    offsetof(struct rec_session, pid_filter), offsetof(struct rec_session, flags),
    offsetof(struct rec_session, node),
};

/* The arrays first (pointer-aligned at the start of the block), then every
 * string. */
static void chain_layout(void *dv, const void *sv, struct blob *b)
{
	struct rec_chain *d = dv;
	const struct rec_chain *s = sv;
	const char **recs = b->p ? (const char **)(void *)b->p : NULL;
	b->len = s->nrecs * sizeof(*recs);
	struct rec_tl *tl = b->p ? (struct rec_tl *)(void *)(b->p + b->len) : NULL;
	b->len += s->ntimeline * sizeof(*tl);
	strs_layout(d, s, chain_strs, N_OF(chain_strs), b);
	for (size_t i = 0; i < s->nrecs; i++) {
		const char *t = blob_str(b, s->recs[i]);
		if (recs)
			recs[i] = t;
	}
	for (size_t i = 0; i < s->ntimeline; i++) {
		const char *t = blob_str(b, s->timeline[i].text);
		if (tl)
			tl[i] = (struct rec_tl){.ts_ns = s->timeline[i].ts_ns, .text = t};
	}
	d->recs = s->nrecs ? recs : NULL;
	d->timeline = s->ntimeline ? tl : NULL;
}

static void session_layout(void *d, const void *s, struct blob *b)
{
	strs_layout(d, s, session_strs, N_OF(session_strs), b);
}

/* A row of size bytes copied with its strings (and arrays) laid out by
 * layout in one block, which *own then holds. */
static int deep_copy(void *dst, const void *src, size_t size, void **own,
		     void (*layout)(void *d, const void *s, struct blob *b))
{
	struct blob b = {0};
	memcpy(dst, src, size);
	layout(dst, src, &b); /* measures */
	b.p = malloc(b.len ? b.len : 1);
	if (!b.p) {
		memset(dst, 0, size);
		return -ENOMEM;
	}
	b.len = 0;
	layout(dst, src, &b);
	*own = b.p;
	return 0;
}

/* Frees a copy's block and zeroes the row; nothing for a borrowed row. */
static void clear_copy(void *row, size_t size, void *own)
{
	if (own) {
		free(own);
		memset(row, 0, size);
	}
}

int rec_chain_copy(struct rec_chain *dst, const struct rec_chain *src)
{
	return deep_copy(dst, src, sizeof(*dst), &dst->own, chain_layout);
}

int rec_session_copy(struct rec_session *dst, const struct rec_session *src)
{
	return deep_copy(dst, src, sizeof(*dst), &dst->own, session_layout);
}

void rec_chain_clear(struct rec_chain *c)
{
	if (c)
		clear_copy(c, sizeof(*c), c->own);
}

void rec_session_clear(struct rec_session *s)
{
	if (s)
		clear_copy(s, sizeof(*s), s->own);
}

/* --- the JSON columns of a chain ------------------------------------------------ */

static char *dump_and_free(json_t *v, int bad)
{
	char *s = bad ? NULL : ig_json_dumps(v);
	json_decref(v);
	return s;
}

char *recfmt_recs_json(const char *const *recs, size_t n)
{
	json_t *a = json_array();
	int bad = !a;
	for (size_t i = 0; i < n; i++)
		bad |= ig_json_push(a, ig_json_str(recs[i]));
	return dump_and_free(a, bad);
}

char *recfmt_timeline_json(const struct rec_tl *tl, size_t n)
{
	json_t *a = json_array();
	int bad = !a;
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_object();
		bad |= ig_json_set(o, "ts_ns", ig_json_u64(tl[i].ts_ns));
		bad |= ig_json_set(o, "text", ig_json_str(tl[i].text));
		bad |= ig_json_push(a, o);
	}
	return dump_and_free(a, bad);
}

/* What a chain row's JSON columns hold, as arrays pointing into the parsed
 * values (root) or into the column texts. */
struct chain_lists {
	json_t *recs_root, *tl_root, *made; /* made: texts composed here */
	const char **recs;
	struct rec_tl *tl;
	size_t nrecs, ntl;
};

static void lists_free(struct chain_lists *l)
{
	json_decref(l->recs_root);
	json_decref(l->tl_root);
	json_decref(l->made);
	free(l->recs);
	free(l->tl);
}

static int parse_recs(struct chain_lists *l, const char *col)
{
	l->recs_root = ig_json_parse(col);
	size_t cap = json_is_array(l->recs_root) ? json_array_size(l->recs_root) : 1;
	l->recs = calloc(cap ? cap : 1, sizeof(*l->recs));
	if (!l->recs)
		return -ENOMEM;
	if (!json_is_array(l->recs_root)) { /* an older file's text: one entry */
		if (*col)
			l->recs[l->nrecs++] = col;
		return 0;
	}
	for (size_t i = 0; i < cap; i++) {
		const json_t *v = json_array_get(l->recs_root, i);
		if (json_is_string(v))
			l->recs[l->nrecs++] = json_string_value(v);
	}
	return 0;
}

/* Ingero's timeline entries ({"layer","op","detail","dur_us"}) as one line. */
static const char *compose_entry(struct chain_lists *l, const json_t *o)
{
	const char *layer = ig_json_get_str(o, "layer", ""), *op = ig_json_get_str(o, "op", "");
	const char *detail = ig_json_get_str(o, "detail", "");
	if (!*layer && !*op && !*detail)
		return NULL;
	json_t *s = json_sprintf("%s%s%s%s%s", layer, *layer && *op ? " " : "", op,
				 (*layer || *op) && *detail ? ": " : "", detail);
	if (!s || json_array_append_new(l->made, s))
		return NULL;
	return json_string_value(s);
}

static int parse_timeline(struct chain_lists *l, const char *col)
{
	l->tl_root = ig_json_parse(col);
	l->made = json_array();
	size_t cap = json_is_array(l->tl_root) ? json_array_size(l->tl_root) : 1;
	l->tl = calloc(cap ? cap : 1, sizeof(*l->tl));
	if (!l->tl || !l->made)
		return -ENOMEM;
	if (!json_is_array(l->tl_root)) { /* an older file's text: one entry */
		if (*col)
			l->tl[l->ntl++] = (struct rec_tl){.text = col};
		return 0;
	}
	for (size_t i = 0; i < cap; i++) {
		const json_t *v = json_array_get(l->tl_root, i);
		struct rec_tl e = {0};
		if (json_is_string(v)) {
			e.text = json_string_value(v);
		} else if (json_is_object(v)) {
			int64_t ts = ig_json_get_int(v, "ts_ns", ig_json_get_int(v, "t", 0));
			e.ts_ns = recfmt_ts_ok(ts) ? (uint64_t)ts : 0; /* else: not known */
			e.text = ig_json_get_str(v, "text", NULL);
			if (!e.text)
				e.text = compose_entry(l, v);
		}
		if (e.text)
			l->tl[l->ntl++] = e;
	}
	return 0;
}

static const char *col_text(sqlite3_stmt *st, int c)
{
	const char *t = (const char *)sqlite3_column_text(st, c);
	return t ? t : "";
}

int recfmt_chain_read(sqlite3_stmt *st, int has_node, const char *default_node,
		      struct rec_chain *out)
{
	struct chain_lists l = {0};
	memset(out, 0, sizeof(*out));
	if (recfmt_chain_check(st))
		return -ERANGE;
	int rc = parse_recs(&l, col_text(st, 6));
	if (!rc)
		rc = parse_timeline(&l, col_text(st, 11));
	const char *nd = has_node ? col_text(st, 12) : "";
	struct rec_chain c = {
	    .id = col_text(st, 0),
	    .detected_at_ns = (uint64_t)sqlite3_column_int64(st, 1),
	    .severity = col_text(st, 2),
	    .summary = col_text(st, 3),
	    .root_cause = col_text(st, 4),
	    .explanation = col_text(st, 5),
	    .recs = l.recs,
	    .nrecs = l.nrecs,
	    .cuda_op = col_text(st, 7),
	    .p99_us = (uint64_t)sqlite3_column_int64(st, 8),
	    .p50_us = (uint64_t)sqlite3_column_int64(st, 9),
	    .tail_ratio = sqlite3_column_double(st, 10),
	    .timeline = l.tl,
	    .ntimeline = l.ntl,
	    .node = *nd ? nd : default_node,
	};
	if (!rc)
		rc = rec_chain_copy(out, &c);
	lists_free(&l);
	return rc;
}

/* --- stack_traces: frames and ips --------------------------------------------------- */

static json_t *hex_str(uint64_t v)
{
	char b[24];
	snprintf(b, sizeof(b), "0x%" PRIx64, v);
	return json_string(b);
}

/* "sym+0x1a" from bytes that may not be UTF-8 (ig_json_str repairs them). */
static json_t *sym_off(const char *sym, uint64_t off)
{
	size_t n = strlen(sym);
	char *b = malloc(n + 24);
	if (!b)
		return NULL;
	snprintf(b, n + 24, "%s+0x%" PRIx64, sym, off);
	json_t *s = ig_json_str(b);
	free(b);
	return s;
}

static json_t *frame_obj(const struct rec_frame *f)
{
	json_t *o = json_object();
	int bad = !o;
	const char *file = f->file ? f->file : "";
	switch (f->kind) {
	case REC_FRAME_PY:
		bad |= ig_json_set(o, "pf", ig_json_str(file));
		bad |= ig_json_set(o, "pfn", ig_json_str(f->sym));
		bad |= ig_json_set(o, "pl", json_integer(f->line));
		break;
	case REC_FRAME_NOTE:
		bad |= ig_json_set(o, "n", ig_json_str(f->note));
		break;
	default:
		if (f->sym && *f->sym) {
			bad |= ig_json_set(o, "s", sym_off(f->sym, f->off));
		} else if (f->ip) {
			bad |= ig_json_set(o, "i", hex_str(f->ip));
			if (*file && f->off) /* ours: the offset in the file */
				bad |= ig_json_set(o, "o", hex_str(f->off));
		}
		if (*file)
			bad |= ig_json_set(o, "f", ig_json_str(file));
		if (f->src && *f->src && f->line > 0) {
			bad |= ig_json_set(o, "sf", ig_json_str(f->src));
			bad |= ig_json_set(o, "l", json_integer(f->line));
		}
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

char *recfmt_frames_json(const struct rec_frame *fr, size_t n)
{
	json_t *a = json_array();
	int bad = !a;
	for (size_t i = 0; i < n; i++)
		bad |= ig_json_push(a, frame_obj(&fr[i]));
	return dump_and_free(a, bad);
}

char *recfmt_ips_json(const uint64_t *ips, size_t n)
{
	json_t *a = json_array();
	int bad = !a;
	for (size_t i = 0; i < n; i++)
		bad |= ig_json_push(a, hex_str(ips[i]));
	return dump_and_free(a, bad);
}

int recfmt_ips_parse(const char *json, uint64_t *ips, size_t max, size_t *n)
{
	json_t *a = ig_json_parse(json);
	int rc = json_is_array(a) ? 0 : -EINVAL;
	*n = 0;
	for (size_t i = 0; !rc && i < json_array_size(a); i++) {
		const json_t *v = json_array_get(a, i);
		if (!json_is_string(v))
			rc = -EINVAL;
		else if (*n < max)
			ips[(*n)++] = strtoull(json_string_value(v), NULL, 16);
	}
	json_decref(a);
	return rc;
}

/* A string member that is present and not empty, else NULL. */
static const char *nonempty(const json_t *o, const char *key)
{
	const char *s = ig_json_get_str(o, key, NULL);
	return s && *s ? s : NULL;
}

/* The frame an object names, kind 0 when none (-ENOMEM when out of
 * memory). *copy gets storage to free. */
static struct rec_frame frame_of(const json_t *o, char **copy)
{
	struct rec_frame f = {.sym = "",
			      .file = ig_json_get_str(o, "f", ""),
			      .note = "",
			      .src = ig_json_get_str(o, "sf", "")};
	const char *pf = nonempty(o, "pf"), *pfn = nonempty(o, "pfn"), *s = nonempty(o, "s");
	const char *ip = nonempty(o, "i"), *note = nonempty(o, "n"), *off = nonempty(o, "o");
	*copy = NULL;
	if (pf || pfn) {
		f.kind = REC_FRAME_PY;
		f.file = pf ? pf : "";
		f.sym = pfn ? pfn : "";
		f.line = (int)ig_json_get_int(o, "pl", 0);
	} else if (note) {
		f.kind = REC_FRAME_NOTE;
		f.file = "";
		f.note = note;
	} else if (s) {
		if (!(*copy = strdup(s))) {
			f.kind = -ENOMEM;
			return f;
		}
		/* "name+0x1a": the offset follows the last "+0x" */
		char *plus = NULL;
		for (char *q = *copy; *q; q++)
			if (q[0] == '+' && q[1] == '0' && q[2] == 'x')
				plus = q;
		if (plus) {
			f.off = strtoull(plus + 3, NULL, 16);
			*plus = 0;
		}
		f.kind = REC_FRAME_NATIVE;
		f.sym = *copy;
		f.ip = ip ? strtoull(ip, NULL, 16) : 0;
		f.line = (int)ig_json_get_int(o, "l", 0);
	} else if (ip) {
		f.kind = REC_FRAME_NATIVE;
		f.ip = strtoull(ip, NULL, 16);
		f.off = off ? strtoull(off, NULL, 16) : 0;
	}
	return f;
}

int recfmt_frames_parse(const char *json, recfmt_frame_fn fn, void *ctx)
{
	json_t *a = ig_json_parse(json);
	if (!json_is_array(a)) {
		json_decref(a);
		return -EINVAL;
	}
	int rc = 0;
	for (size_t i = 0; !rc && i < json_array_size(a); i++) {
		const json_t *o = json_array_get(a, i);
		char *copy = NULL;
		if (!json_is_object(o))
			continue;
		struct rec_frame f = frame_of(o, &copy);
		if (f.kind < 0)
			rc = f.kind;
		else if (f.kind)
			rc = fn(ctx, &f);
		free(copy);
	}
	json_decref(a);
	return rc;
}
