/* Is a pid still the process the screen named? A pid wraps in minutes on a
 * busy host, so the process start time (field 22 of /proc/PID/stat, clock
 * ticks since boot) is kept when a pid is first seen (a row of the
 * processes pane, an alert's process or culprit), and a signal or a renice
 * reads it again first: a changed start time is another process, a missing
 * or zombie one has exited. No terminal here; only /proc is read. */
#ifndef TUI_PIDCHECK_H
#define TUI_PIDCHECK_H

#include <stdint.h>

#define PIDSEEN_MAX 512

/* The start times seen, a ring: the oldest is forgotten when it is full. */
struct pidseen {
	uint32_t pid[PIDSEEN_MAX];
	uint64_t start[PIDSEEN_MAX]; /* clock ticks since boot */
	int n, next;
};

/* The start time in a /proc/PID/stat line (fields after the last ')', so a
 * name with spaces or parentheses reads right). 0, -ESRCH for a zombie or a
 * dead process (state Z or X), -EINVAL when the line cannot be read. */
int pid_stat_start(const char *stat, uint64_t *start);
/* The same from /proc/PID/stat: -ESRCH when the process is gone. */
int pid_start(uint32_t pid, uint64_t *start);

/* Keeps the start time of pid if it has none yet (a pid that is gone is
 * not kept). */
void pidseen_note(struct pidseen *s, uint32_t pid);
/* The start time kept for pid: 0 (and *start), or -ENOENT. */
int pidseen_get(const struct pidseen *s, uint32_t pid, uint64_t *start);
/* Before a signal or a renice: 0 when pid is the process first seen with
 * that pid (kept now, and in *start, when it was not seen before);
 * -ESRCH when it exited; -ESTALE when the pid names another process now. */
int pidseen_check(struct pidseen *s, uint32_t pid, uint64_t *start);

#endif
