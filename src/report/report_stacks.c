/* Top stacks per op as text or JSON for batch mode. See report_stacks.h. */
#include "report/report_stacks.h"

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

static void kv_str(FILE *f, const char *k, const char *v, int comma)
{
	fprintf(f, "%s\"%s\":", comma ? "," : "", k);
	report_json_str(f, v);
}

int report_stacks_json(FILE *f, struct stacks *st, const struct report_stacks_opts *oo)
{
	struct report_stacks_opts o;
	struct stacks_frame *fr = malloc(sizeof(*fr) * MAX_FRAMES);
	struct stacks_stat top[64];
	int ops[IG_OP_MAX];

	if (!fr)
		return -EIO;
	defaults(oo, &o);
	int nops = ops_in_order(st, ops, o.max_ops);
	fprintf(f, "{\"type\":\"stacks\",\"order\":\"%s\",\"ops\":[", order_name(o.order));
	for (int k = 0; k < nops; k++) {
		fprintf(f, "%s{\"op\":", k ? "," : "");
		report_json_str(f, ig_op_name(ops[k]));
		fprintf(f, ",\"stacks\":[");
		int n = stacks_top(st, ops[k], o.order, top, o.per_op < 64 ? o.per_op : 64);
		for (int i = 0; i < n; i++) {
			const struct stacks_stat *s = &top[i];
			int state, nf = stacks_frames(st, s->id, fr, MAX_FRAMES, &state);
			fprintf(f,
				"%s{\"id\":\"0x%016" PRIx64 "\",\"pid\":%u,\"calls\":%" PRIu64
				",\"total_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64
				",\"tail_calls\":%" PRIu64 ",\"tail_ns\":%" PRIu64
				",\"state\":\"%s\",\"frames\":[",
				i ? "," : "", s->id, s->pid, s->calls, s->total_ns, s->max_ns,
				s->tail_calls, s->tail_ns, state_name(state));
			int shown = 0, hidden = 0, first = 1;
			for (int j = 0; j < nf; j++) {
				const struct stacks_frame *x = &fr[j];
				if (x->kind != STACKS_NOTE && shown >= o.frames) {
					hidden++;
					continue;
				}
				shown += x->kind != STACKS_NOTE;
				fprintf(f, "%s{\"kind\":\"%s\"", first ? "" : ",",
					x->kind == STACKS_PY	 ? "py"
					: x->kind == STACKS_NOTE ? "note"
								 : "native");
				first = 0;
				kv_str(f, "text", x->text, 1);
				if (x->kind == STACKS_PY) {
					kv_str(f, "file", x->file, 1);
					kv_str(f, "func", x->sym, 1);
					fprintf(f, ",\"line\":%d", x->line);
				} else if (x->kind == STACKS_NATIVE) {
					kv_str(f, "sym", x->sym, 1);
					kv_str(f, "file", x->file, 1);
					fprintf(f, ",\"off\":%" PRIu64 ",\"ip\":\"0x%" PRIx64 "\"",
						x->off, x->ip);
				}
				fputc('}', f);
			}
			fprintf(f, "],\"more_frames\":%d}", hidden);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "]}\n");
	free(fr);
	return ferror(f) ? -EIO : 0;
}
