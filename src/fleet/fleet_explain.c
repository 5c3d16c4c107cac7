/* `explain --ssh`: one report for the fleet (docs/explain.md, "Many
 * hosts"). The verdict first: the straggler's host when NCCL ranks make
 * the others wait, else the host whose worst chain costs the most, else
 * the hosts that could not be observed; why (its chain) and what to do
 * (its advice). Then a section per host, worst first. */
#include "fleet/fleet_int.h"

#include "core/escape.h"
#include "core/fmt.h"
#include "core/json.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum verdict_kind { V_STRAGGLER, V_CHAIN, V_UNOBSERVED, V_NONE };
static const char *const kind_names[] = {"straggler", "chain", "unobserved", "none"};

static bool actionable(const struct fleet_host *h)
{
	return h->frames && h->worst.cls[0] && strcmp(h->worst.severity, "INFO");
}

/* The verdict's host (-1 none) and kind. */
static int verdict(const struct fleet *f, enum verdict_kind *kind)
{
	int best = -1;
	if (f->strag.found) {
		*kind = V_STRAGGLER;
		return f->strag.host;
	}
	for (int i = 0; i < f->n; i++)
		if (actionable(&f->hosts[i]) &&
		    (best < 0 || f->hosts[i].worst.impact > f->hosts[best].worst.impact))
			best = i;
	if (best >= 0) {
		*kind = V_CHAIN;
		return best;
	}
	for (int i = 0; i < f->n; i++)
		if (!f->hosts[i].frames) {
			*kind = V_UNOBSERVED;
			return i;
		}
	*kind = V_NONE;
	return -1;
}

static int observed(const struct fleet *f)
{
	int n = 0;
	for (int i = 0; i < f->n; i++)
		n += f->hosts[i].frames > 0;
	return n;
}

static void chain_line(FILE *out, const char *indent, const struct fleet_chain *c)
{
	char w[200];
	fout_chain_words(c, w, sizeof(w));
	fprintf(out, "%s%s: ", indent, w);
	esc_fputs(out, c->summary[0] ? c->summary : "(no summary)", 0);
	fputc('\n', out);
}

static void verdict_text(FILE *out, const struct fleet *f)
{
	enum verdict_kind kind;
	int v = verdict(f, &kind);
	char s[400];
	fprintf(out, "VERDICT\n");
	if (kind == V_NONE) {
		fprintf(out,
			"  nothing stands out: no actionable chain on the %d hosts observed, "
			"no NCCL straggler\n\n",
			observed(f));
		return;
	}
	const struct fleet_host *h = &f->hosts[v];
	fprintf(out, "  host ");
	esc_fputs(out, h->name, 0);
	if (kind == V_UNOBSERVED) {
		fprintf(out, " could not be observed (%s): %s\n", fleet_state_name(h->state),
			h->why[0] ? h->why : "no frame arrived");
		fprintf(out, "  no actionable chain on the %d hosts observed\n\n", observed(f));
		return;
	}
	if (kind == V_STRAGGLER) {
		fout_straggler_words(f, s, sizeof(s));
		fprintf(out, " makes the others wait: %s\n", s);
	} else {
		fprintf(out, " costs the most\n");
	}
	if (h->worst.cls[0])
		chain_line(out, "  why: ", &h->worst);
	else
		fprintf(out, "  why: no active chain on that host (its feeding threads look "
			     "healthy: look at its GPU and its input)\n");
	if (h->worst.advice[0]) {
		fprintf(out, "  what to do: ");
		esc_fputs(out, h->worst.advice, 0);
		fputc('\n', out);
	}
	fputc('\n', out);
}

static void host_section(FILE *out, const struct fleet_host *h)
{
	char cols[200], off[32], unc[32], cm[40];
	fprintf(out, "== ");
	esc_fputs(out, h->name, 0);
	fprintf(out, "%s: %s", h->straggler ? " (the straggler)" : "", fleet_state_name(h->state));
	if (h->version[0]) {
		fprintf(out, ", ingero-top ");
		esc_fputs(out, h->version, 0);
	}
	fprintf(out, ", %" PRIu64 " frames", h->frames);
	if (h->unc_ns)
		fprintf(out, ", clock %s%s \u00b1%s", h->offset_ns < 0 ? "-" : "+",
			fmt_ns(off, sizeof(off), (uint64_t)llabs(h->offset_ns)),
			fmt_ns(unc, sizeof(unc), h->unc_ns));
	fprintf(out, "\n");
	if (h->why[0])
		fprintf(out, "  why: %s\n", h->why);
	if (!h->frames) {
		fputc('\n', out);
		return;
	}
	for (int k = 0; k < h->nchains; k++) {
		chain_line(out, "  chain: ", &h->chains[k]);
		if (h->chains[k].advice[0]) {
			fprintf(out, "    advice: ");
			esc_fputs(out, h->chains[k].advice, 0);
			fputc('\n', out);
		}
	}
	if (!h->nchains)
		fprintf(out, "  chains: none active\n");
	fprintf(out, "  %-20s %5s %5s %5s %5s %-24s %8s %s\n", "PROCESS", "GPU%", "CPU%", "PRE%",
		"WAIT%", "TOP OP", "P99", "(change)");
	for (int k = 0; k < h->nprocs; k++) {
		char pn[64];
		snprintf(pn, sizeof(pn), "%u/%s", h->procs[k].pid,
			 esc_str(cm, sizeof(cm), h->procs[k].comm, ESC_FIELD));
		fout_proc_cols(&h->procs[k], cols, sizeof(cols));
		fprintf(out, "  %-20.20s %s\n", pn, cols);
	}
	for (int k = 0; k < h->nranks; k++) {
		const struct fleet_rank *r = &h->ranks[k];
		fprintf(out,
			"  nccl: rank %u of %u on comm 0x%x (pid %u): %" PRIu64
			" ops in the window, wait mean %s\n",
			r->rank, r->nranks, r->key, r->pid, r->ops_win,
			fmt_ns(off, sizeof(off), r->wait_mean_ns));
	}
	fputc('\n', out);
}

int fleet_explain_text(FILE *out, const struct fleet *f, double seconds)
{
	char clk[16];
	int *idx = malloc(sizeof(int) * (size_t)(f->n ? f->n : 1));
	if (!idx)
		return -1;
	fprintf(out, "ingero-top explain --ssh: %d hosts, %d observed, %gs up to %s\n\n", f->n,
		observed(f), seconds, fmt_clock(clk, sizeof(clk), fleet_now_ns()));
	verdict_text(out, f);
	fprintf(out, "HOSTS (worst first)\n");
	int n = fleet_order(f, idx, f->n);
	for (int k = 0; k < n; k++)
		host_section(out, &f->hosts[idx[k]]);
	free(idx);
	return ferror(out) ? -1 : 0;
}

int fleet_explain_json(FILE *out, const struct fleet *f, double seconds)
{
	enum verdict_kind kind;
	int v = verdict(f, &kind);
	json_t *o = json_object(), *vd = json_object();
	const struct fleet_host *h = v >= 0 ? &f->hosts[v] : NULL;
	int bad =
	    ig_json_set(vd, "kind", json_string(kind_names[kind])) |
	    ig_json_set(vd, "host", h ? ig_json_str(h->name) : json_null()) |
	    ig_json_set(vd, "chain",
			h && h->worst.cls[0] && kind != V_UNOBSERVED ? fout_chain_json(&h->worst)
								     : json_null()) |
	    ig_json_set(vd, "why", ig_json_str(h && kind == V_UNOBSERVED ? h->why : ""));
	bad |= ig_json_set(o, "type", json_string("fleet_explain")) |
	       ig_json_set(o, "stream", json_integer(FLEET_STREAM_VERSION)) |
	       ig_json_set(o, "seconds", ig_json_num(seconds)) |
	       ig_json_set(o, "observed", json_integer(observed(f))) |
	       ig_json_set(o, "verdict", vd) | ig_json_set(o, "fleet", fout_json(f));
	int r = bad ? -1 : ig_json_write_line(out, o);
	json_decref(o);
	return r;
}
