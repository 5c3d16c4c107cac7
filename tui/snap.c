/* The main screen's copy of the model's numbers and the chains, taken once
 * per refresh interval from what the screens read (freeze.c hands it the
 * model and the chains: nothing here knows the viewer's state); the
 * processes' container names as the model carries them. */
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

void snap_take(struct tui_snap *sn, struct ig_model *m, const struct tui_frozen *f,
	       const struct ig_detect *d)
{
	int ops[IG_OP_MAX];

	model_totals(m, &sn->tot);
	model_host(m, &sn->host);
	sn->window_ns = (uint64_t)model_cfg(m)->window_s * 1000000000ull;

	int n = model_ops(m, ops, IG_OP_MAX);
	sn->nops = 0;
	for (int i = 0; i < n; i++)
		if (model_op_stats(m, ops[i], &sn->ops[sn->nops]) == 0)
			sn->nops++;

	sn->nprocs = model_procs(m, sn->procs, TUI_MAX_PROCS);

	sn->nchains = 0;
	if (f) {
		for (int i = 0; i < f->nchains; i++)
			sn->chains[sn->nchains++] = f->chains[i];
		return;
	}
	int nc = detect_count(d);
	for (int i = 0; i < nc && sn->nchains < IG_CHAIN_MAX; i++) {
		const struct ig_chain *c = detect_chain(d, i);
		if (c)
			sn->chains[sn->nchains++] = *c;
	}
}

const struct ig_chain *snap_chain(const struct tui_snap *sn, uint32_t id)
{
	for (int i = 0; i < sn->nchains; i++)
		if (sn->chains[i].id == id)
			return &sn->chains[i];
	return NULL;
}

int snap_severity(const struct tui_snap *sn, int op, uint32_t pid)
{
	int sev = -1;
	for (int i = 0; i < sn->nchains; i++) {
		const struct ig_chain *c = &sn->chains[i];
		if (!c->active || (op && c->op != op) || (pid && c->pid != pid))
			continue;
		if (c->severity > sev)
			sev = c->severity;
	}
	return sev;
}

/* The process's container or service as the collector named it (carried
 * by the model, so batch, JSON and recordings have the same), "?" when
 * unknown. */
const char *tui_container(const struct ig_proc_stats *p)
{
	return p->container[0] ? p->container : "?";
}
