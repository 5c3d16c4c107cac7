/* GPU devices in the model: the latest NVML sample of each device, the
 * window's means per device (1-second slices), and the GPU memory of each
 * process at the latest sampling round (model.h). One block of plain data
 * (struct gpu_state). */
#include "model/model_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static struct gpu_slice *gslice(struct ig_model *m, struct gpu_dev_st *d, uint64_t sec)
{
	struct gpu_slice *s = &d->sl[sec % m->W];
	if (s->sec != sec) {
		memset(s, 0, sizeof(*s));
		s->sec = sec;
		s->temp_max = -1;
	}
	return s;
}

static void dev_sample(struct ig_model *m, const struct ig_event *e, uint64_t sec, int inwin)
{
	struct ig_gpu_dev g;
	ig_gpu_dev_unpack(e, &g);
	if (g.index >= IG_GPU_MAX_DEVS)
		return;
	struct gpu_dev_st *d = &m->gpu->d[g.index];
	if (!d->seen || g.ts_ns >= d->last.ts_ns) {
		d->last = g;
		d->seen = 1;
	}
	if (!inwin)
		return;
	struct gpu_slice *s = gslice(m, d, sec);
	s->n++;
	if (g.valid & IG_GPU_V_UTIL) {
		s->n_util++;
		s->util_sum += g.util_gpu_pct;
		s->umem_sum += g.util_mem_pct;
	}
	if ((g.valid & IG_GPU_V_MEM) && g.mem_used > s->mem_max)
		s->mem_max = g.mem_used;
	if (g.valid & IG_GPU_V_POWER) {
		s->n_power++;
		s->power_sum += g.power_mw;
	}
	if ((g.valid & IG_GPU_V_TEMP) && (int)g.temp_c > s->temp_max)
		s->temp_max = (int)g.temp_c;
}

static void proc_sample(struct ig_model *m, const struct ig_event *e)
{
	struct gpu_state *G = m->gpu;
	if (e->cpu >= IG_GPU_MAX_DEVS)
		return;
	int i, old = 0;
	for (i = 0; i < G->npm; i++) {
		if (G->pm[i].pid == e->pid && G->pm[i].dev == e->cpu)
			break;
		if (G->pm[i].ts_ns < G->pm[old].ts_ns)
			old = i;
	}
	if (i == G->npm)
		i = G->npm < GPU_PMEM ? G->npm++ : old;
	G->pm[i] = (struct gpu_pmem){.pid = e->pid,
				     .dev = (uint16_t)e->cpu,
				     .known = (e->flags & IG_GPU_V_MEM) != 0,
				     .bytes = e->arg0,
				     .ts_ns = e->ts_ns};
}

void gpu_ingest(struct ig_model *m, const struct ig_event *e, uint64_t sec, int inwin)
{
	if (!m->gpu)
		return;
	if (e->kind == IG_EV_GPU)
		dev_sample(m, e, sec, inwin);
	else if (e->kind == IG_EV_GPU_PROC)
		proc_sample(m, e);
}

void gpu_reset(struct ig_model *m)
{
	if (!m->gpu)
		return;
	/* the devices' latest values stay: they are the state, not statistics */
	for (int i = 0; i < IG_GPU_MAX_DEVS; i++)
		memset(m->gpu->d[i].sl, 0, sizeof(m->gpu->d[i].sl));
}

/* Whether a process entry belongs to its device's latest round. */
static int pm_current(const struct gpu_state *G, const struct gpu_pmem *p)
{
	const struct gpu_dev_st *d = &G->d[p->dev];
	return d->seen && p->ts_ns >= d->last.ts_ns;
}

int gpu_stats_at(const struct ig_model *m, uint64_t end, struct ig_gpu_stats *out, int max)
{
	const struct gpu_state *G = m->gpu;
	int n = 0;
	for (int i = 0; G && i < IG_GPU_MAX_DEVS && n < max; i++) {
		const struct gpu_dev_st *d = &G->d[i];
		if (!d->seen)
			continue;
		struct ig_gpu_stats *o = &out[n++];
		memset(o, 0, sizeof(*o));
		o->last = d->last;
		o->age_ns = end > d->last.ts_ns ? end - d->last.ts_ns : 0;
		o->util_gpu_win = o->util_mem_win = o->power_win_mw = -1;
		o->temp_max_win = -1;
		uint64_t nu = 0, us = 0, ms = 0, np = 0, ps = 0;
		for (unsigned j = 0; j < m->W; j++) {
			const struct gpu_slice *s = &d->sl[j];
			if (!s->n || !in_window(m, s->sec))
				continue;
			o->samples_win += s->n;
			nu += s->n_util;
			us += s->util_sum;
			ms += s->umem_sum;
			np += s->n_power;
			ps += s->power_sum;
			if (s->mem_max > o->mem_used_max_win)
				o->mem_used_max_win = s->mem_max;
			if (s->temp_max > o->temp_max_win)
				o->temp_max_win = s->temp_max;
		}
		if (nu) {
			o->util_gpu_win = (double)us / (double)nu;
			o->util_mem_win = (double)ms / (double)nu;
		}
		if (np)
			o->power_win_mw = (double)ps / (double)np;
		for (int k = 0; k < G->npm; k++)
			if (G->pm[k].dev == (uint16_t)i && pm_current(G, &G->pm[k]))
				o->nprocs++;
	}
	return n;
}

int model_gpus(const struct ig_model *m, struct ig_gpu_stats *out, int max)
{
	return gpu_stats_at(m, m->clock_ns, out, max);
}

static int cmp_gproc(const void *a, const void *b)
{
	const struct ig_gpu_proc *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int model_gpu_procs(const struct ig_model *m, struct ig_gpu_proc *out, int max)
{
	const struct gpu_state *G = m->gpu;
	int n = 0;
	for (int k = 0; G && k < G->npm && n < max; k++) {
		const struct gpu_pmem *p = &G->pm[k];
		if (!pm_current(G, p))
			continue;
		struct ig_gpu_proc *o = &out[n++];
		memset(o, 0, sizeof(*o));
		o->pid = p->pid;
		o->dev = p->dev;
		o->known = p->known;
		o->bytes = p->bytes;
		copy_comm(o->comm, model_comm(m, p->pid));
	}
	qsort(out, (size_t)n, sizeof(*out), cmp_gproc);
	return n;
}

int gpu_proc_mem(const struct ig_model *m, uint32_t pid, uint64_t *bytes, uint32_t *devs)
{
	const struct gpu_state *G = m->gpu;
	int found = 0;
	*bytes = 0;
	*devs = 0;
	for (int k = 0; G && k < G->npm; k++) {
		const struct gpu_pmem *p = &G->pm[k];
		if (p->pid != pid || !pm_current(G, p))
			continue;
		*devs |= 1u << p->dev;
		if (!p->known)
			continue;
		*bytes += p->bytes;
		found = 1;
	}
	return found ? 0 : -ENOENT;
}

int model_proc_gpu_mem(const struct ig_model *m, uint32_t pid, uint64_t *bytes)
{
	uint32_t devs;
	return gpu_proc_mem(m, pid, bytes, &devs);
}
