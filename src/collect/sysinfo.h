/* Session facts for recordings (Ingero's sessions table): kernel, OS, CPU
 * model and cores, memory. Read once from uname, /proc and /etc; the
 * per-second host meters are in hostinfo.h (the memory total comes from
 * there too). The session turns them into the sessions row of a recording,
 * with its own host name (ig_status.host). */
#ifndef IG_SYSINFO_H
#define IG_SYSINFO_H

#include <stdint.h>

struct sysinfo_facts {
	char kernel[128];     /* uname -r */
	char os_release[128]; /* PRETTY_NAME of /etc/os-release */
	char cpu_model[128];  /* first "model name" of /proc/cpuinfo */
	unsigned cpu_cores;   /* online CPUs */
	uint64_t mem_total_mb;
};

/* Fills what it can; missing facts stay "" / 0. Returns 0. */
int sysinfo_read(struct sysinfo_facts *f);

/* Pure parsers (for tests): the value of "key" in an os-release text (quotes
 * removed), the first "model name" of a cpuinfo text. Return 0, or -ENOENT
 * when absent. */
int sysinfo_parse_os_release(const char *text, char *out, int len);
int sysinfo_parse_cpu_model(const char *text, char *out, int len);

#endif
