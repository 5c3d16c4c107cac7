/* SHIM_STATS: the per-symbol call counts of a shim library, written at exit. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stats.h"

void shim_write_stats(const char *const *names, _Atomic unsigned long long *counts, int n)
{
	const char *path = getenv("SHIM_STATS");
	char buf[8192];
	size_t len = 0;
	int fd;

	if (!path || !*path)
		return;
	for (int i = 0; i < n; i++) {
		unsigned long long c = atomic_load(&counts[i]);

		if (c && len < sizeof(buf))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%d %s %llu\n",
						(int)getpid(), names[i], c);
	}
	if (!len)
		return;
	if (len > sizeof(buf))
		len = sizeof(buf);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, buf, len) < 0)
		fprintf(stderr, "shim: cannot write %s: %s\n", path, strerror(errno));
	close(fd);
}
