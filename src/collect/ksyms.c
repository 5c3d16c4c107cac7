/* Kernel text ranges from /proc/kallsyms (ksyms.h). */
#include "collect/ksyms.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define NWANTED 5
static const char *const wanted[NWANTED] = {"exc_page_fault", "hrtimer_wakeup", "process_timeout",
					    "posix_timer_fn", "it_real_fn"};

int ksym_ranges(struct ksym_ranges *r)
{
	static struct ksym_ranges known;
	static int found = -1;
	char line[256], name[128], type;
	unsigned long long addr;

	if (found >= 0) {
		*r = known;
		return found;
	}
	found = 0;
	uint64_t *slot[NWANTED] = {known.fault, known.hrtimer, known.timeout, known.posix_timer,
				   known.itimer};
	uint64_t *open = NULL; /* a range waiting for the next symbol's address */
	FILE *f = fopen("/proc/kallsyms", "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (line[0] == '0' && line[1] == '0' && line[2] == '0' && line[3] == '0')
			break; /* addresses hidden */
		if (!open && !strstr(line, "fault") && !strstr(line, "timer_wakeup") &&
		    !strstr(line, "process_timeout") && !strstr(line, "timer_fn") &&
		    !strstr(line, "it_real_fn"))
			continue;
		if (sscanf(line, "%llx %c %127s", &addr, &type, name) != 3)
			continue;
		if (open) { /* kernel text is listed in address order */
			if (addr > open[0])
				open[1] = addr;
			else
				open[0] = 0;
			open = NULL;
		}
		for (int i = 0; i < NWANTED; i++)
			if (!slot[i][0] && !strcmp(name, wanted[i]) &&
			    (type == 't' || type == 'T')) {
				slot[i][0] = addr;
				open = slot[i];
			}
	}
	if (f)
		fclose(f);
	for (int i = 0; i < NWANTED; i++) {
		if (slot[i][0] && slot[i][1] > slot[i][0])
			found++;
		else
			slot[i][0] = slot[i][1] = 0;
	}
	*r = known;
	return found;
}

/* Where the kernel's interrupt entry code and __do_softirq live, for the
 * waker of a wake-up (bpf/sched.bpf.h: wake_ctx). Zeros when
 * /proc/kallsyms hides addresses (kptr_restrict) or lacks the symbols.
 * Read once per process: the kernel text does not move. */
void ksym_irq_ranges(uint64_t r[4])
{
	static const char *const names[4] = {"__irqentry_text_start", "__irqentry_text_end",
					     "__softirqentry_text_start",
					     "__softirqentry_text_end"};
	static uint64_t known[4];
	static bool read;
	char line[256], name[128], type;
	unsigned long long addr;
	int found = 0;

	if (read) {
		memcpy(r, known, sizeof(known));
		return;
	}
	read = true;
	FILE *f = fopen("/proc/kallsyms", "re");
	if (f) {
		while (found < 4 && fgets(line, sizeof(line), f)) {
			if (line[0] == '0' && line[1] == '0' && line[2] == '0')
				break; /* addresses hidden */
			if (!strstr(line, "entry_text_") ||
			    sscanf(line, "%llx %c %127s", &addr, &type, name) != 3)
				continue;
			for (int i = 0; i < 4; i++)
				if (!known[i] && !strcmp(name, names[i])) {
					known[i] = addr;
					found++;
				}
		}
		fclose(f);
	}
	if (found < 4 || known[0] >= known[1] || known[2] >= known[3])
		memset(known, 0, sizeof(known));
	memcpy(r, known, sizeof(known));
}
