/* The stacks module and recordings: resolved stacks out as stack_traces
 * rows (stacks_json, stacks_drain) and recorded rows back in
 * (stacks_add_json), through the format's one owner, store/recfmt.h. */
#include "stacks/stacks_int.h"

#include "stacks/symbolize.h"
#include "store/recfmt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

/* A frame as the recording format has it; strings point into s. */
static struct rec_frame rec_frame_of(const struct stk *s, const struct iframe *f)
{
	const char *sym = s->blob + f->sym, *file = s->blob + f->file;
	switch (f->kind) {
	case STACKS_PY:
		return (struct rec_frame){
		    .kind = REC_FRAME_PY, .line = f->line, .sym = sym, .file = file, .note = ""};
	case STACKS_NOTE:
		return (struct rec_frame){
		    .kind = REC_FRAME_NOTE, .sym = "", .file = "", .note = s->blob + f->text};
	default:
		return (struct rec_frame){.kind = REC_FRAME_NATIVE,
					  .ip = f->ip,
					  .off = f->off,
					  .line = f->src ? f->line : 0,
					  .sym = sym,
					  .file = base_name(file),
					  .note = "",
					  .src = f->src ? s->blob + f->src : ""};
	}
}

/* *ips ("" when none) and *frames ("" while not resolved) as JSON,
 * malloc'd; NULL when out of memory. Called under st->mu. */
static void json_of(const struct stk *s, char **ips, char **frames)
{
	*ips = s->nips ? recfmt_ips_json(s->ips, (size_t)s->nips) : strdup("");
	if (s->state != STACKS_RESOLVED) {
		*frames = strdup("");
		return;
	}
	struct rec_frame *fr = malloc(sizeof(*fr) * (size_t)(s->nfr ? s->nfr : 1));
	*frames = NULL;
	if (!fr)
		return;
	for (int i = 0; i < s->nfr; i++)
		fr[i] = rec_frame_of(s, &s->fr[i]);
	*frames = recfmt_frames_json(fr, (size_t)s->nfr);
	free(fr);
}

int stacks_json(struct stacks *st, uint64_t id, char **ips, char **frames)
{
	int r = -ENOENT;
	*ips = *frames = NULL;
	pthread_mutex_lock(&st->mu);
	int i = stk_find(st, id);
	if (i >= 0) {
		json_of(&st->stks[i], ips, frames);
		r = !*ips || !*frames ? -ENOMEM : st->stks[i].state == STACKS_PENDING;
	}
	pthread_mutex_unlock(&st->mu);
	if (r < 0) {
		free(*ips);
		free(*frames);
		*ips = *frames = NULL;
	}
	return r;
}

int stacks_drain(struct stacks *st, stacks_json_fn fn, void *ctx)
{
	struct out {
		uint64_t id;
		char *ips, *frames;
	} *v = NULL;
	int n = 0, cap = 0;

	pthread_mutex_lock(&st->mu);
	for (unsigned i = 0; i < st->stk_lru.n; i++) {
		struct stk *s = &st->stks[i];
		if (s->loaded || s->drained || s->state != STACKS_RESOLVED)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			struct out *nv = realloc(v, sizeof(*v) * (size_t)cap);
			if (!nv)
				break;
			v = nv;
		}
		json_of(s, &v[n].ips, &v[n].frames);
		if (!v[n].ips || !v[n].frames) {
			free(v[n].ips);
			free(v[n].frames);
			continue;
		}
		v[n].id = s->id;
		s->drained = true;
		n++;
	}
	pthread_mutex_unlock(&st->mu);
	for (int i = 0; i < n; i++) {
		fn(ctx, v[i].id, v[i].ips, v[i].frames);
		free(v[i].ips);
		free(v[i].frames);
	}
	free(v);
	return n;
}

/* One frame of a recording into the builder, with its display line.
 * Symbols are demangled (Ingero keeps them mangled). */
static int add_rec_frame(void *ctx, const struct rec_frame *f)
{
	struct builder *b = ctx;
	char text[320];

	switch (f->kind) {
	case REC_FRAME_PY:
		tfmt(text, sizeof(text), "[py] %s:%d in %s()", *f->file ? f->file : "?", f->line,
		     *f->sym ? f->sym : "?");
		stk_badd(b, STACKS_PY, 0, 0, f->line, f->sym, f->file, text);
		return 0;
	case REC_FRAME_NOTE:
		stk_badd(b, STACKS_NOTE, 0, 0, 0, NULL, NULL, f->note);
		return 0;
	}
	if (*f->sym) {
		char *dm = sym_demangle(f->sym);
		const char *sym = dm ? dm : f->sym;
		char src[128] = "";
		if (f->src && *f->src && f->line > 0)
			snprintf(src, sizeof(src), " %s:%d", f->src, f->line);
		tfmt(text, sizeof(text), "%s+0x%" PRIx64 "%s%s%s%s", sym, f->off,
		     *f->file ? " (" : "", f->file, *f->file ? ")" : "", src);
		stk_badd_src(b, f->ip, f->off, sym, f->file, text, f->src, f->line);
		free(dm);
	} else if (f->off && *f->file) {
		tfmt(text, sizeof(text), "0x%" PRIx64 " (%s+0x%" PRIx64 ")", f->ip, f->file,
		     f->off);
		stk_badd(b, STACKS_NATIVE, f->ip, f->off, 0, NULL, f->file, text);
	} else {
		tfmt(text, sizeof(text), "0x%" PRIx64 " (%s)", f->ip, *f->file ? f->file : "?");
		stk_badd(b, STACKS_NATIVE, f->ip, f->off, 0, NULL, f->file, text);
	}
	return 0;
}

/* Parses a recording's row into b and ips: the frames when they parse,
 * else one unresolved frame per address. 0 or -EINVAL (neither parses). */
static int parse_rec_stack(struct builder *b, const char *ips_json, const char *frames_json,
			   uint64_t *ips, int *nips)
{
	uint64_t all[MAX_FRAMES];
	size_t n = 0;
	int r = -EINVAL;

	*nips = 0;
	if (frames_json && *frames_json)
		r = recfmt_frames_parse(frames_json, add_rec_frame, b);
	if (!ips_json || !*ips_json || recfmt_ips_parse(ips_json, all, MAX_FRAMES, &n))
		return r;
	if (r) { /* no frames: the addresses alone */
		b->n = 0;
		for (size_t i = 0; i < n; i++) {
			char text[96];
			snprintf(text, sizeof(text), "0x%" PRIx64 " (?)", all[i]);
			stk_badd(b, STACKS_NATIVE, all[i], 0, 0, NULL, NULL, text);
		}
	}
	*nips = n < IGB_STACK_MAX ? (int)n : IGB_STACK_MAX;
	memcpy(ips, all, sizeof(*ips) * (size_t)*nips);
	return 0;
}

int stacks_add_json(struct stacks *st, uint64_t id, const char *ips_json, const char *frames_json)
{
	struct builder *b = malloc(sizeof(*b));
	uint64_t ips[IGB_STACK_MAX];
	int nips = 0, r;

	if (!b)
		return -ENOMEM;
	stk_binit(b);
	r = parse_rec_stack(b, ips_json, frames_json, ips, &nips);
	if (r) {
		free(b->blob);
		free(b);
		return r;
	}
	pthread_mutex_lock(&st->mu);
	if (stk_find(st, id) >= 0) {
		pthread_mutex_unlock(&st->mu);
		free(b->blob);
		free(b);
		return -EEXIST;
	}
	struct stk *s = &st->stks[stk_insert(st, id, 0)];
	s->loaded = true;
	if (nips && (s->ips = malloc(sizeof(*ips) * (size_t)nips))) {
		memcpy(s->ips, ips, sizeof(*ips) * (size_t)nips);
		s->nips = nips;
	}
	stk_publish(s, b);
	pthread_mutex_unlock(&st->mu);
	free(b);
	return 0;
}
