/* causegen's cgroups (cg.h): a CPU quota and a memory limit for the whole
 * process tree, made before the helpers start so that they inherit them.
 * cgroup v2 when its root lists the controller (production hosts), else
 * v1 (this project's machines: cpu and memory under /sys/fs/cgroup/NAME). */
#include "cg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define V2 "/sys/fs/cgroup"

static char made[2][256]; /* the cgroups made, removed at the end */
static char v1_root[2][256];

static int write_file(const char *dir, const char *file, const char *val)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	FILE *f = fopen(p, "we");
	if (!f)
		return -errno;
	int r = fputs(val, f) < 0 ? -EIO : 0;
	if (fclose(f))
		r = -errno;
	return r;
}

static int v2_has(const char *ctl)
{
	char line[512];
	FILE *f = fopen(V2 "/cgroup.controllers", "re");
	int has = 0;
	if (f && fgets(line, sizeof(line), f)) {
		for (char *t = strtok(line, " \n"); t && !has; t = strtok(NULL, " \n"))
			has = !strcmp(t, ctl);
	}
	if (f)
		fclose(f);
	return has;
}

/* A new cgroup for controller ctl, this process in it: its path in dir. */
static int enter(const char *ctl, int slot, char *dir, size_t len, int *v2)
{
	char pid[32];
	*v2 = v2_has(ctl);
	if (*v2) {
		write_file(V2, "cgroup.subtree_control", ctl[0] == 'c' ? "+cpu" : "+memory");
		snprintf(dir, len, V2 "/causegen-%d", (int)getpid());
	} else {
		snprintf(v1_root[slot], sizeof(v1_root[slot]), "/sys/fs/cgroup/%s", ctl);
		snprintf(dir, len, "%s/causegen-%d", v1_root[slot], (int)getpid());
	}
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	snprintf(made[slot], sizeof(made[slot]), "%s", dir);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return write_file(dir, "cgroup.procs", pid);
}

int cgroup_cpu_quota(struct cg_quota *q, int pct)
{
	char v[64];
	int r = enter("cpu", 0, q->path, sizeof(q->path), &q->v2);
	if (r)
		return r;
	q->pct = pct;
	if (q->v2) {
		snprintf(v, sizeof(v), "%d 100000", pct * 1000);
		r = write_file(q->path, "cpu.max", v);
	} else {
		r = write_file(q->path, "cpu.cfs_period_us", "100000");
		snprintf(v, sizeof(v), "%d", pct * 1000);
		if (!r)
			r = write_file(q->path, "cpu.cfs_quota_us", v);
	}
	if (!r)
		cgroup_cpu_stat(q, &q->throttled_ns, &q->nr_throttled, &q->nr_periods);
	return r;
}

/* cpu.stat: v1 throttled_time (ns), v2 throttled_usec. */
void cgroup_cpu_stat(const struct cg_quota *q, u64 *throttled_ns, u64 *nr_throttled,
		     u64 *nr_periods)
{
	char p[512], key[64];
	unsigned long long val;
	*throttled_ns = *nr_throttled = *nr_periods = 0;
	snprintf(p, sizeof(p), "%s/cpu.stat", q->path);
	FILE *f = fopen(p, "re");
	while (f && fscanf(f, "%63s %llu", key, &val) == 2) {
		if (!strcmp(key, "throttled_time"))
			*throttled_ns = val;
		else if (!strcmp(key, "throttled_usec"))
			*throttled_ns = val * 1000;
		else if (!strcmp(key, "nr_throttled"))
			*nr_throttled = val;
		else if (!strcmp(key, "nr_periods"))
			*nr_periods = val;
	}
	if (f)
		fclose(f);
}

int cgroup_mem_limit(int mb, char *path, size_t len)
{
	char v[64];
	int v2, r = enter("memory", 1, path, len, &v2);
	if (r)
		return r;
	snprintf(v, sizeof(v), "%llu", (unsigned long long)mb << 20);
	return write_file(path, v2 ? "memory.max" : "memory.limit_in_bytes", v);
}

void cgroup_leave(void)
{
	char pid[32];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	for (int i = 0; i < 2; i++) {
		if (!made[i][0])
			continue;
		write_file(v1_root[i][0] ? v1_root[i] : V2, "cgroup.procs", pid);
		/* the helpers were killed; a cgroup with no process goes */
		for (int k = 0; k < 50 && rmdir(made[i]) && errno == EBUSY; k++)
			usleep(20000);
	}
}
