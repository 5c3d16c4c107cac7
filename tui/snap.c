/* The main screen's copy of the model's numbers and the chains, taken once
 * per refresh interval from what the screens read (freeze.c); and container
 * names of live processes. */
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

void snap_take(struct tui *t)
{
	struct tui_snap *sn = t->snap;
	struct ig_model *m = tui_model(t);
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
	const struct tui_frozen *f = tui_frozen_now(t);
	if (f) {
		for (int i = 0; i < f->nchains; i++)
			sn->chains[sn->nchains++] = f->chains[i];
		return;
	}
	const struct ig_detect *d = session_detect(t->s);
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

/* Reads /proc/PID/cgroup (live mode only: the pid is on this host). */
static void read_container(uint32_t pid, char *out, size_t n)
{
	char path[64], text[4096];
	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(out, n, "?");
		return;
	}
	size_t len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = 0;
	tui_container_from_cgroup(text, out, n);
}

const char *tui_container(struct tui *t, uint32_t pid, uint64_t cgroup_id)
{
	static char buf[40];
	if (!t->live) {
		if (!cgroup_id)
			return "-";
		snprintf(buf, sizeof(buf), "cg:%llu", (unsigned long long)cgroup_id);
		return buf;
	}
	/* a small cache: a process does not change container; pids are
	 * reused, so entries also carry the cgroup id they were read under */
	unsigned h = (pid * 2654435761u) % CONT_CACHE;
	struct tui_cont *c = &t->cont[h];
	if (c->pid == pid && c->start == cgroup_id + 1)
		return c->name;
	c->pid = pid;
	c->start = cgroup_id + 1;
	read_container(pid, c->name, sizeof(c->name));
	return c->name;
}
