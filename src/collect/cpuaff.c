/* The CPUs a traced process may run on (cpuaff.h). */
#include "collect/cpuaff.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "collect/cgcpu.h"

int cpuaff_count(const char *list)
{
	int n = 0;
	const char *p = list;
	while (*p && *p != '\n') {
		char *e;
		long a = strtol(p, &e, 10), b = a;
		if (e == p || a < 0)
			return -EINVAL;
		if (*e == '-') {
			p = e + 1;
			b = strtol(p, &e, 10);
			if (e == p || b < a)
				return -EINVAL;
		}
		n += (int)(b - a + 1);
		if (*e == ',')
			e++;
		else if (*e && *e != '\n')
			return -EINVAL;
		p = e;
	}
	return n;
}

/* The CPUs of pid's cpuset cgroup, 0 when not known. */
static uint32_t cpuset_cpus(uint32_t pid)
{
	char path[512], text[2048], rel[400], list[1024];
	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	if (cgcpu_read(path, text, sizeof(text)))
		return 0;
	static const struct {
		int v2;
		const char *root, *file;
	} where[] = {
	    {0, "/sys/fs/cgroup/cpuset", "cpuset.effective_cpus"},
	    {1, "/sys/fs/cgroup", "cpuset.cpus.effective"},
	};
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		if (cgcpu_path_of(text, where[i].v2, "cpuset", rel, sizeof(rel)))
			continue;
		snprintf(path, sizeof(path), "%s%s/%s", where[i].root, rel, where[i].file);
		int n = cgcpu_read(path, list, sizeof(list)) ? -1 : cpuaff_count(list);
		if (n > 0)
			return (uint32_t)n;
	}
	return 0;
}

int cpuaff_read(uint32_t pid, struct cpuaff *a)
{
	memset(a, 0, sizeof(*a));
	int ncpu = get_nprocs_conf();
	size_t sz = CPU_ALLOC_SIZE(ncpu > 0 ? ncpu : 1);
	cpu_set_t *set = CPU_ALLOC(ncpu > 0 ? ncpu : 1);
	if (!set)
		return -ENOMEM;
	int r = sched_getaffinity((pid_t)pid, sz, set) ? -errno : 0;
	if (!r)
		a->allowed = (uint32_t)CPU_COUNT_S(sz, set);
	CPU_FREE(set);
	if (r)
		return r;
	a->online = (uint32_t)get_nprocs();
	a->cpuset = cpuset_cpus(pid);
	return 0;
}
