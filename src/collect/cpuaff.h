/* The CPUs a traced process may run on: its affinity (sched_getaffinity,
 * which its cgroup's cpuset bounds), the CPUs online, and those its
 * cgroup's cpuset allows (cgroup v2 cpuset.cpus.effective, v1
 * cpuset.effective_cpus). Sent with its environment's settings
 * (collect/procenv.h, IG_EV_ENV's stream: IG_CPUS_PACK). The list parser
 * is pure. */
#ifndef IG_CPUAFF_H
#define IG_CPUAFF_H

#include <stdint.h>

struct cpuaff {
	uint32_t allowed; /* CPUs in its affinity */
	uint32_t online;  /* CPUs online */
	uint32_t cpuset;  /* CPUs its cgroup's cpuset allows, 0 not known */
};

/* How many CPUs a kernel CPU list names ("0-3,8" is 5), or -EINVAL. */
int cpuaff_count(const char *list);

/* pid's CPUs into *a: 0, or -errno when its affinity cannot be read. */
int cpuaff_read(uint32_t pid, struct cpuaff *a);

#endif
