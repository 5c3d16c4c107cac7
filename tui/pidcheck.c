/* The start times of the pids the screens named (see pidcheck.h). */
#include "pidcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pid_stat_start(const char *stat, uint64_t *start)
{
	const char *p = strrchr(stat, ')');
	if (!p || p[1] != ' ')
		return -EINVAL;
	p += 2;
	if (*p == 'Z' || *p == 'X')
		return -ESRCH;
	/* p is at field 3 (the state): 19 more fields to the start time */
	for (int f = 3; f < 22; f++) {
		p = strchr(p, ' ');
		if (!p)
			return -EINVAL;
		p++;
	}
	char *end;
	errno = 0;
	unsigned long long v = strtoull(p, &end, 10);
	if (end == p || errno)
		return -EINVAL;
	*start = v;
	return 0;
}

int pid_start(uint32_t pid, uint64_t *start)
{
	char path[40], buf[1024];
	if (!pid)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	int e = errno;
	close(fd);
	if (n <= 0)
		return n < 0 && e != ESRCH ? -e : -ESRCH;
	buf[n] = 0;
	return pid_stat_start(buf, start);
}

static int find(const struct pidseen *s, uint32_t pid)
{
	for (int i = 0; i < s->n; i++)
		if (s->pid[i] == pid)
			return i;
	return -1;
}

static void keep(struct pidseen *s, uint32_t pid, uint64_t start)
{
	int i = s->n < PIDSEEN_MAX ? s->n++ : s->next;
	s->next = (i + 1) % PIDSEEN_MAX;
	s->pid[i] = pid;
	s->start[i] = start;
}

void pidseen_note(struct pidseen *s, uint32_t pid)
{
	uint64_t st;
	if (!pid || find(s, pid) >= 0 || pid_start(pid, &st))
		return;
	keep(s, pid, st);
}

int pidseen_get(const struct pidseen *s, uint32_t pid, uint64_t *start)
{
	int i = find(s, pid);
	if (i < 0)
		return -ENOENT;
	*start = s->start[i];
	return 0;
}

int pidseen_check(struct pidseen *s, uint32_t pid, uint64_t *start)
{
	uint64_t now, then;
	int r = pid_start(pid, &now);
	if (r)
		return r == -EINVAL ? -ESRCH : r;
	if (pidseen_get(s, pid, &then)) {
		keep(s, pid, now);
		then = now;
	}
	*start = then;
	return then == now ? 0 : -ESTALE;
}
