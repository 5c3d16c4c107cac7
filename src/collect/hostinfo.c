/* /proc/stat, /proc/meminfo and /proc/loadavg readers for the header meters
 * and the system snapshots. */
#include "collect/hostinfo.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int hostinfo_cpu_read(struct hostinfo_cpu *c)
{
	unsigned long long v[10] = { 0 };
	FILE *f = fopen("/proc/stat", "re");

	c->busy = c->total = 0;
	if (!f)
		return -errno;
	int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		       &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
	fclose(f);
	if (n < 4)
		return -EINVAL;
	for (int i = 0; i < 8; i++) /* guest time is already in user */
		c->total += v[i];
	c->busy = c->total - v[3] - v[4]; /* minus idle and iowait */
	return 0;
}

double hostinfo_cpu_pct(const struct hostinfo_cpu *prev, const struct hostinfo_cpu *cur)
{
	if (cur->total <= prev->total)
		return 0;
	return 100.0 * (double)(cur->busy - prev->busy) / (double)(cur->total - prev->total);
}

int hostinfo_mem_read(struct hostinfo_mem *m)
{
	char line[256];
	unsigned long long total = 0, avail = 0, stotal = 0, sfree = 0, v;
	FILE *f = fopen("/proc/meminfo", "re");

	memset(m, 0, sizeof(*m));
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemTotal: %llu", &v) == 1)
			total = v;
		else if (sscanf(line, "MemAvailable: %llu", &v) == 1)
			avail = v;
		else if (sscanf(line, "SwapTotal: %llu", &v) == 1)
			stotal = v;
		else if (sscanf(line, "SwapFree: %llu", &v) == 1)
			sfree = v;
	}
	fclose(f);
	if (!total)
		return -EINVAL;
	m->total_mb = total / 1024;
	m->avail_mb = avail / 1024;
	m->swap_used_mb = (stotal - sfree) / 1024;
	m->used_pct = 100.0 * (double)(total - avail) / (double)total;
	return 0;
}

double hostinfo_load1(void)
{
	double l = 0;
	FILE *f = fopen("/proc/loadavg", "re");
	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = 0;
		fclose(f);
	}
	return l;
}
