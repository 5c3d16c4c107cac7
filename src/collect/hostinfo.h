/* Host meters from /proc: CPU busy %, memory, swap, load. */
#ifndef IG_HOSTINFO_H
#define IG_HOSTINFO_H

#include <stdint.h>

struct hostinfo_cpu {
	uint64_t busy, total; /* jiffies from the "cpu" line of /proc/stat */
};

struct hostinfo_mem {
	double used_pct;      /* (total - available) / total */
	uint64_t avail_mb;
	uint64_t swap_used_mb;
	uint64_t total_mb;
};

int hostinfo_cpu_read(struct hostinfo_cpu *c);
/* Busy % of all CPUs between two readings (0 when no time passed). */
double hostinfo_cpu_pct(const struct hostinfo_cpu *prev, const struct hostinfo_cpu *cur);
int hostinfo_mem_read(struct hostinfo_mem *m);
/* 1-minute load average, 0 when unknown. */
double hostinfo_load1(void);

#endif
