/* The CPU quota of the traced processes' cgroups (cgcpu.h). */
#include "collect/cgcpu.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/event.h"

#define V2_ROOT "/sys/fs/cgroup"

int cgcpu_path(const char *text, int v2, char *out, size_t n)
{
	return cgcpu_path_of(text, v2, "cpu", out, n);
}

int cgcpu_path_of(const char *text, int v2, const char *ctl, char *out, size_t n)
{
	size_t cn = strlen(ctl);
	const char *line = text;
	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
		if (c2) {
			size_t cl = (size_t)(c2 - c1 - 1);
			int hit = 0;
			if (v2)
				hit = cl == 0 && c1 - line == 1 && line[0] == '0';
			else /* ctl among comma-separated controllers */
				for (const char *t = c1 + 1; t < c2 && !hit;) {
					const char *comma = memchr(t, ',', (size_t)(c2 - t));
					size_t tl = comma ? (size_t)(comma - t) : (size_t)(c2 - t);
					hit = tl == cn && !strncmp(t, ctl, cn);
					t += tl + 1;
				}
			if (hit) {
				size_t pl = len - (size_t)(c2 + 1 - line);
				if (pl + 1 > n)
					return -ENAMETOOLONG;
				memcpy(out, c2 + 1, pl);
				out[pl] = 0;
				return 0;
			}
		}
		line = end ? end + 1 : NULL;
	}
	return -ENOENT;
}

int cgcpu_parse_max(const char *s, uint64_t *quota_us, uint64_t *period_us)
{
	char q[32];
	unsigned long long p;
	if (sscanf(s, "%31s %llu", q, &p) != 2 || !p)
		return -EINVAL;
	*period_us = p;
	if (!strcmp(q, "max")) {
		*quota_us = 0;
		return 0;
	}
	char *e;
	unsigned long long v = strtoull(q, &e, 10);
	if (*e || !v)
		return -EINVAL;
	*quota_us = v;
	return 1;
}

int cgcpu_parse_stat(const char *text, uint64_t *thr_ns, uint64_t *nr_thr, uint64_t *nr_per)
{
	char key[64];
	unsigned long long v;
	int found = 0, k;
	*thr_ns = *nr_thr = *nr_per = 0;
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (sscanf(p, "%63s %llu%n", key, &v, &k) != 2)
			continue;
		if (!strcmp(key, "throttled_time"))
			*thr_ns = v, found = 1;
		else if (!strcmp(key, "throttled_usec"))
			*thr_ns = v * 1000, found = 1;
		else if (!strcmp(key, "nr_throttled"))
			*nr_thr = v, found = 1;
		else if (!strcmp(key, "nr_periods"))
			*nr_per = v, found = 1;
	}
	return found ? 0 : -ENOENT;
}

int cgcpu_read(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	size_t k = fread(buf, 1, n - 1, f);
	buf[k] = 0;
	fclose(f);
	return 0;
}

/* The quota of one cgroup directory: 1 limited, 0 not, -errno. */
static int quota_of(const struct cgcpu *cc, const char *dir, uint64_t *q, uint64_t *p)
{
	char path[320], buf[64];
	if (cc->v2_cpu) {
		snprintf(path, sizeof(path), "%s/cpu.max", dir);
		return cgcpu_read(path, buf, sizeof(buf)) ? -ENOENT : cgcpu_parse_max(buf, q, p);
	}
	long long quota;
	unsigned long long period;
	snprintf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir);
	if (cgcpu_read(path, buf, sizeof(buf)) || sscanf(buf, "%lld", &quota) != 1)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/cpu.cfs_period_us", dir);
	if (cgcpu_read(path, buf, sizeof(buf)) || sscanf(buf, "%llu", &period) != 1 || !period)
		return -ENOENT;
	*p = period;
	*q = quota > 0 ? (uint64_t)quota : 0;
	return quota > 0;
}

void cgcpu_init(struct cgcpu *cc)
{
	char buf[512];
	memset(cc, 0, sizeof(*cc));
	if (!cgcpu_read(V2_ROOT "/cgroup.controllers", buf, sizeof(buf))) {
		for (char *t = strtok(buf, " \n"); t; t = strtok(NULL, " \n"))
			cc->v2_cpu |= !strcmp(t, "cpu");
	}
	static const char *const v1[] = {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"};
	for (size_t i = 0; !cc->v2_cpu && i < sizeof(v1) / sizeof(v1[0]); i++) {
		char path[96];
		snprintf(path, sizeof(path), "%s/cpu.cfs_period_us", v1[i]);
		if (!access(path, R_OK)) {
			snprintf(cc->v1_root, sizeof(cc->v1_root), "%s", v1[i]);
			break;
		}
	}
}

/* The limiting cgroup of pid: the nearest up its own (rel) with a quota. */
static void find_limit(struct cgcpu *cc, struct cgcpu_proc *p, const char *rel)
{
	char up[IG_DETAIL_LEN], dir[IG_DETAIL_LEN + 32];
	p->dir[0] = 0;
	snprintf(up, sizeof(up), "%s", rel);
	const char *root = cc->v2_cpu ? V2_ROOT : cc->v1_root;
	for (;;) {
		int k = snprintf(dir, sizeof(dir), "%s%s", root, strcmp(up, "/") ? up : "");
		if (k > 0 && (size_t)k < sizeof(p->dir) &&
		    quota_of(cc, dir, &p->quota_us, &p->period_us) == 1) {
			memcpy(p->dir, dir, (size_t)k + 1);
			p->v2 = cc->v2_cpu;
			return;
		}
		char *slash = strrchr(up, '/');
		if (!slash || slash == up)
			return; /* the root limits nothing */
		*slash = 0;
	}
}

/* Reads pid's cgroup; looks for its limit again when it moved (a job
 * that puts itself in a cgroup once it started) and now and then (a quota
 * set on an ancestor). 0, or -errno when the process is gone. */
static int follow(struct cgcpu *cc, struct cgcpu_proc *p, int again)
{
	char proc[64], text[4096], rel[IG_DETAIL_LEN];
	if (!cc->v2_cpu && !cc->v1_root[0])
		return -ENOENT;
	snprintf(proc, sizeof(proc), "/proc/%u/cgroup", p->pid);
	int r = cgcpu_read(proc, text, sizeof(text));
	if (r)
		return r;
	if (cgcpu_path(text, cc->v2_cpu, rel, sizeof(rel))) {
		p->dir[0] = 0;
		return 0;
	}
	if (again || strcmp(rel, p->rel)) {
		char was[IG_DETAIL_LEN];
		memcpy(was, p->dir, sizeof(was));
		memcpy(p->rel, rel, sizeof(rel));
		find_limit(cc, p, rel);
		p->based &= !strcmp(was, p->dir); /* another cgroup: other counters */
	}
	return 0;
}

static struct cgcpu_proc *proc_of(struct cgcpu *cc, uint32_t pid)
{
	for (int i = 0; i < cc->n; i++)
		if (cc->p[i].pid == pid)
			return &cc->p[i];
	for (int i = 0; i < cc->n; i++) /* a process no longer followed makes room */
		if (cc->p[i].seen + 2 < cc->ticks) {
			memset(&cc->p[i], 0, sizeof(cc->p[i]));
			cc->p[i].pid = pid;
			return &cc->p[i];
		}
	if (cc->n == CGCPU_PROCS)
		return NULL;
	struct cgcpu_proc *p = &cc->p[cc->n++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

void cgcpu_tick(struct cgcpu *cc, const uint32_t *pids, int n, uint64_t now_ns, ig_emit_fn emit,
		void *ctx)
{
	cc->ticks++;
	for (int i = 0; i < n; i++) {
		struct cgcpu_proc *p = proc_of(cc, pids[i]);
		if (!p)
			break;
		int fresh = !p->seen;
		p->seen = cc->ticks;
		if (follow(cc, p, fresh || cc->ticks % 10 == 0) || !p->dir[0]) {
			p->based = 0;
			continue;
		}
		char path[320], text[1024];
		uint64_t thr, nthr, nper;
		snprintf(path, sizeof(path), "%s/cpu.stat", p->dir);
		if (quota_of(cc, p->dir, &p->quota_us, &p->period_us) != 1 ||
		    cgcpu_read(path, text, sizeof(text)) ||
		    cgcpu_parse_stat(text, &thr, &nthr, &nper))
			continue;
		struct ig_event e;
		memset(&e, 0, sizeof(e));
		e.kind = IG_EV_CGROUP;
		e.ts_ns = now_ns;
		e.pid = e.tid = p->pid;
		e.arg0 = p->quota_us;
		e.arg1 = p->period_us;
		if (p->based) { /* the deltas since the last second */
			e.arg2 = thr > p->thr_ns ? thr - p->thr_ns : 0;
			e.stream = (uint64_t)(nthr > p->nr_thr ? nthr - p->nr_thr : 0) << 32 |
				   (uint32_t)(nper > p->nr_per ? nper - p->nr_per : 0);
		}
		e.flags = (uint32_t)p->v2;
		e.container = p->dir;
		p->thr_ns = thr;
		p->nr_thr = nthr;
		p->nr_per = nper;
		p->based = 1;
		emit(ctx, &e);
	}
}

int cgcpu_sched_group(uint32_t pid, struct ig_sched_group *g)
{
	static struct cgcpu roots; /* only its v1_root and v2_cpu, read once */
	static int inited;
	char path[96], text[2048], rel[IG_DETAIL_LEN];
	if (!inited) {
		cgcpu_init(&roots);
		inited = 1;
	}
	memset(g, 0, sizeof(*g));
	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	int r = cgcpu_read(path, text, sizeof(text));
	if (r)
		return r;
	int v2 = roots.v2_cpu;
	if ((v2 || roots.v1_root[0]) && !cgcpu_path(text, v2, rel, sizeof(rel)) &&
	    strcmp(rel, "/")) {
		/* v2: the controller may stop above it (no cpu.weight there) */
		char dir[IG_DETAIL_LEN + 96], top[IG_DETAIL_LEN + 96];
		snprintf(dir, sizeof(dir), "%s%s/%s", v2 ? V2_ROOT : roots.v1_root, rel,
			 v2 ? "cpu.weight" : "cpu.shares");
		while (v2 && access(dir, F_OK)) {
			char *slash = strrchr(rel, '/');
			if (!slash || slash == rel)
				break;
			*slash = 0;
			snprintf(dir, sizeof(dir), "%s%s/cpu.weight", V2_ROOT, rel);
		}
		int k = snprintf(top, sizeof(top), "%s%s", v2 ? V2_ROOT : roots.v1_root, rel);
		if (!access(dir, F_OK) && k > 0 && (size_t)k < sizeof(g->dir)) {
			memcpy(g->dir, top, (size_t)k + 1);
			g->kind = v2 ? IG_SG_CGROUP2 : IG_SG_CGROUP1;
			return 0;
		}
	}
	/* a task of the root group: in its session's autogroup, when on */
	unsigned long ag;
	if (!cgcpu_read("/proc/sys/kernel/sched_autogroup_enabled", text, sizeof(text)) &&
	    text[0] == '1') {
		snprintf(path, sizeof(path), "/proc/%u/autogroup", pid);
		if (!cgcpu_read(path, text, sizeof(text)) &&
		    sscanf(text, "/autogroup-%lu", &ag) == 1) {
			g->kind = IG_SG_AUTOGROUP;
			snprintf(g->dir, sizeof(g->dir), "%lu", ag);
			return 0;
		}
	}
	g->kind = IG_SG_ROOT;
	return 0;
}
