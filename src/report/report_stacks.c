/* Top stacks per op as text or JSON for batch mode. See report_stacks.h. */
#include "report/report_stacks.h"

#include "core/json.h"
#include "core/escape.h"
#include "core/ops.h"
#include "report/report.h"
#include "stacks/stacks.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SERIES 8192
#define MAX_FRAMES 128

static const char *order_name(int order)
{
	return order == STACKS_BY_TOTAL ? "total" : order == STACKS_BY_CALLS ? "calls" : "tail";
}

static const char *state_name(int s)
{
	return s == STACKS_RESOLVED  ? "resolved"
	       : s == STACKS_PENDING ? "resolving"
	       : s == STACKS_MISSING ? "missing"
				     : "unknown";
}

/* Ops that have stacks, by the total time of their calls with a stack. */
static int ops_in_order(struct stacks *st, int *ops, int max)
{
	struct stacks_stat *all = malloc(sizeof(*all) * MAX_SERIES);
	uint64_t total[256] = {0};
	int n, nops = 0;

	if (!all)
		return 0;
	n = stacks_top(st, -1, STACKS_BY_TOTAL, all, MAX_SERIES);
	for (int i = 0; i < n; i++)
		if (all[i].op > 0 && all[i].op < 256)
			total[all[i].op] += all[i].total_ns;
	free(all);
	for (int op = 1; op < 256 && op < IG_OP_MAX; op++)
		if (total[op])
			ops[nops++] = op;
	for (int i = 1; i < nops; i++) /* insertion sort, few ops */
		for (int j = i; j > 0 && total[ops[j]] > total[ops[j - 1]]; j--) {
			int t = ops[j];
			ops[j] = ops[j - 1];
			ops[j - 1] = t;
		}
	return nops < max ? nops : max;
}

static void defaults(const struct report_stacks_opts *o, struct report_stacks_opts *d)
{
	*d = o ? *o : (struct report_stacks_opts){0};
	if (d->per_op <= 0)
		d->per_op = 3;
	if (d->frames <= 0)
		d->frames = 12;
	if (d->max_ops <= 0)
		d->max_ops = IG_OP_MAX;
}

int report_stacks_text(FILE *f, struct stacks *st, const struct report_stacks_opts *oo)
{
	struct report_stacks_opts o;
	struct stacks_frame *fr = malloc(sizeof(*fr) * MAX_FRAMES);
	struct stacks_stat top[64];
	int ops[IG_OP_MAX];
	char a[32], b[32], c[32];

	if (!fr)
		return -EIO;
	defaults(oo, &o);
	int nops = ops_in_order(st, ops, o.max_ops);
	if (!nops) {
		fprintf(f, "STACKS none\n");
		free(fr);
		return ferror(f) ? -EIO : 0;
	}
	fprintf(f, "STACKS  top %d per op by %s\n", o.per_op,
		o.order == STACKS_BY_CALLS   ? "calls"
		: o.order == STACKS_BY_TOTAL ? "total time"
					     : "tail time");
	for (int k = 0; k < nops; k++) {
		int n = stacks_top(st, ops[k], o.order, top, o.per_op < 64 ? o.per_op : 64);
		for (int i = 0; i < n; i++) {
			const struct stacks_stat *s = &top[i];
			fprintf(f,
				"%s  stack 0x%016" PRIx64 "  calls %" PRIu64
				"  total %s  max %s  tail %" PRIu64 " %s\n",
				ig_op_name(s->op), s->id, s->calls,
				report_fmt_ns(a, sizeof(a), s->total_ns),
				report_fmt_ns(b, sizeof(b), s->max_ns), s->tail_calls,
				report_fmt_ns(c, sizeof(c), s->tail_ns));
			int state, nf = stacks_frames(st, s->id, fr, MAX_FRAMES, &state);
			if (!nf)
				fprintf(f, "    (%s)\n",
					state == STACKS_PENDING ? "resolving"
								: "stack not available");
			int shown = 0, hidden = 0;
			for (int j = 0; j < nf; j++) {
				if (fr[j].kind != STACKS_NOTE && shown >= o.frames) {
					hidden++;
					continue;
				}
				fputs("    ", f); /* symbols and paths: untrusted */
				esc_fputs(f, fr[j].text, 0);
				fputc('\n', f);
				shown += fr[j].kind != STACKS_NOTE;
			}
			if (hidden)
				fprintf(f, "    (%d more frames)\n", hidden);
		}
	}
	free(fr);
	return ferror(f) ? -EIO : 0;
}

static const char *kind_name(int kind)
{
	return kind == STACKS_PY ? "py" : kind == STACKS_NOTE ? "note" : "native";
}

static json_t *json_frame(const struct stacks_frame *x)
{
	json_t *o = json_object();
	int bad = !o;
	char ip[24];
	bad |= ig_json_set(o, "kind", json_string(kind_name(x->kind)));
	bad |= ig_json_set(o, "text", ig_json_str(x->text));
	if (x->kind == STACKS_PY) {
		bad |= ig_json_set(o, "file", ig_json_str(x->file));
		bad |= ig_json_set(o, "func", ig_json_str(x->sym));
		bad |= ig_json_set(o, "line", json_integer(x->line));
	} else if (x->kind == STACKS_NATIVE) {
		snprintf(ip, sizeof(ip), "0x%" PRIx64, x->ip);
		bad |= ig_json_set(o, "sym", ig_json_str(x->sym));
		bad |= ig_json_set(o, "file", ig_json_str(x->file));
		bad |= ig_json_set(o, "off", ig_json_u64(x->off));
		bad |= ig_json_set(o, "ip", json_string(ip));
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* One stack of the top list, with its first o->frames frames (notes always). */
static json_t *json_stack(struct stacks *st, const struct stacks_stat *s,
			  const struct report_stacks_opts *o, struct stacks_frame *fr)
{
	json_t *j = json_object(), *frames = json_array();
	int bad = !j, state, nf = stacks_frames(st, s->id, fr, MAX_FRAMES, &state);
	int shown = 0, hidden = 0;
	char id[24];
	snprintf(id, sizeof(id), "0x%016" PRIx64, s->id);
	bad |= ig_json_set(j, "id", json_string(id));
	bad |= ig_json_set(j, "pid", ig_json_u64(s->pid));
	bad |= ig_json_set(j, "calls", ig_json_u64(s->calls));
	bad |= ig_json_set(j, "total_ns", ig_json_u64(s->total_ns));
	bad |= ig_json_set(j, "max_ns", ig_json_u64(s->max_ns));
	bad |= ig_json_set(j, "tail_calls", ig_json_u64(s->tail_calls));
	bad |= ig_json_set(j, "tail_ns", ig_json_u64(s->tail_ns));
	bad |= ig_json_set(j, "state", json_string(state_name(state)));
	for (int k = 0; k < nf; k++) {
		if (fr[k].kind != STACKS_NOTE && shown >= o->frames) {
			hidden++;
			continue;
		}
		shown += fr[k].kind != STACKS_NOTE;
		bad |= ig_json_push(frames, json_frame(&fr[k]));
	}
	bad |= ig_json_set(j, "frames", frames);
	bad |= ig_json_set(j, "more_frames", json_integer(hidden));
	if (bad) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* One object per call, one line: the stacks section of a frame is bounded
 * (ops x per_op x frames), so it is built whole and written at once. */
int report_stacks_json(FILE *f, struct stacks *st, const struct report_stacks_opts *oo)
{
	struct report_stacks_opts o;
	struct stacks_frame *fr = malloc(sizeof(*fr) * MAX_FRAMES);
	struct stacks_stat top[64];
	int ops[IG_OP_MAX];
	json_t *j = json_object(), *list = json_array();
	int bad = !fr || !j;

	defaults(oo, &o);
	bad |= ig_json_set(j, "type", json_string("stacks"));
	bad |= ig_json_set(j, "order", json_string(order_name(o.order)));
	int nops = fr ? ops_in_order(st, ops, o.max_ops) : 0;
	for (int k = 0; k < nops && !bad; k++) {
		json_t *op = json_object(), *stacks = json_array();
		bad |= ig_json_set(op, "op", ig_json_str(ig_op_name(ops[k])));
		int n = stacks_top(st, ops[k], o.order, top, o.per_op < 64 ? o.per_op : 64);
		for (int i = 0; i < n; i++)
			bad |= ig_json_push(stacks, json_stack(st, &top[i], &o, fr));
		bad |= ig_json_set(op, "stacks", stacks);
		bad |= ig_json_push(list, op);
	}
	bad |= ig_json_set(j, "ops", list);
	int rc = bad ? -EIO : ig_json_write_line(f, j);
	json_decref(j);
	free(fr);
	return rc;
}

json_t *report_stacks_stack_json(struct stacks *st, const struct stacks_stat *s, int frames)
{
	struct report_stacks_opts o;
	struct stacks_frame *fr = malloc(sizeof(*fr) * MAX_FRAMES);
	defaults(&(struct report_stacks_opts){.frames = frames}, &o);
	json_t *j = fr ? json_stack(st, s, &o, fr) : NULL;
	if (j)
		ig_json_set(j, "op", ig_json_str(ig_op_name(s->op)));
	free(fr);
	return j;
}

json_t *report_stacks_frames_json(struct stacks *st, uint64_t id, int frames, const char **state)
{
	struct stacks_frame *fr = st ? malloc(sizeof(*fr) * MAX_FRAMES) : NULL;
	json_t *a = json_array();
	int bad = !a, shown = 0, s = STACKS_UNKNOWN;
	int nf = fr && id ? stacks_frames(st, id, fr, MAX_FRAMES, &s) : 0;
	for (int k = 0; k < nf; k++) {
		if (fr[k].kind != STACKS_NOTE && shown >= (frames > 0 ? frames : 12))
			continue;
		shown += fr[k].kind != STACKS_NOTE;
		bad |= ig_json_push(a, json_frame(&fr[k]));
	}
	free(fr);
	if (state)
		*state = state_name(s);
	if (bad) {
		json_decref(a);
		return NULL;
	}
	return a;
}

/* A frame of the C library or the dynamic loader: where every sleep ends,
 * not where the program chose to sleep. */
static int libc_frame(const struct stacks_frame *f)
{
	const char *b = strrchr(f->file, '/');
	b = b ? b + 1 : f->file;
	return f->kind == STACKS_NATIVE &&
	       (!strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5) ||
		!strncmp(b, "libpthread", 10) || !strncmp(b, "ld-linux", 8));
}

/* The site of stack id; waker: keep its innermost native frame, the
 * C library's unlock or signal that woke the waiter. */
static int site(struct stacks *st, uint64_t id, char (*lines)[REPORT_SITE_LEN], int max, int waker)
{
	struct stacks_frame *fr = st && id ? malloc(sizeof(*fr) * MAX_FRAMES) : NULL;
	int n = 0, py = 0, state;
	int nf = fr ? stacks_frames(st, id, fr, MAX_FRAMES, &state) : 0;
	for (int k = 0; k < nf; k++)
		py += fr[k].kind == STACKS_PY;
	for (int k = 0, lead = 1; k < nf && n < max; k++) {
		if (fr[k].kind == STACKS_NOTE || (py && fr[k].kind != STACKS_PY))
			continue;
		if (waker && !py && !n) { /* what the waker did */
			snprintf(lines[n++], REPORT_SITE_LEN, "%s", fr[k].text);
			continue;
		}
		if (lead && libc_frame(&fr[k]) && k + 1 < nf)
			continue; /* the sleep's own frames, before the caller's */
		lead = 0;
		snprintf(lines[n++], REPORT_SITE_LEN, "%s", fr[k].text);
	}
	/* Only the C library's frames, the walk stopped in it (no frame
	 * pointers) and no interpreter frames yet: those frames and why the
	 * walk stopped, rather than nothing. */
	int only_libc = !n;
	for (int pass = 0; only_libc && pass < 2; pass++)
		for (int k = 0; k < nf && n < max; k++)
			if ((fr[k].kind == STACKS_NOTE) == pass)
				snprintf(lines[n++], REPORT_SITE_LEN, "%s", fr[k].text);
	free(fr);
	return n;
}

int report_call_site(struct stacks *st, uint64_t id, char (*lines)[REPORT_SITE_LEN], int max)
{
	return site(st, id, lines, max, 0);
}

int report_waker_site(struct stacks *st, uint64_t id, char (*lines)[REPORT_SITE_LEN], int max)
{
	return site(st, id, lines, max, 1);
}

int report_site_json(json_t *o, const char *idkey, const char *lineskey, struct stacks *stk,
		     uint64_t id, int waker)
{
	char h[24], site[3][REPORT_SITE_LEN];
	snprintf(h, sizeof(h), "0x%016" PRIx64, id);
	int bad = ig_json_set(o, idkey, ig_json_str(h));
	json_t *a = json_array();
	int ns = waker ? report_waker_site(stk, id, site, 3) : report_call_site(stk, id, site, 3);
	bad |= !a;
	for (int k = 0; a && k < ns; k++)
		bad |= ig_json_push(a, ig_json_str(site[k]));
	return bad | ig_json_set(o, lineskey, a);
}
