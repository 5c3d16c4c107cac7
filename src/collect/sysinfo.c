/* Session facts from uname, /proc/cpuinfo, /etc/os-release, and the
 * memory total the host meters read (hostinfo.c). */
#include "collect/sysinfo.h"

#include "collect/hostinfo.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static char *slurp(const char *path, size_t max)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *b = malloc(max + 1);
	size_t n = b ? fread(b, 1, max, f) : 0;
	fclose(f);
	if (b)
		b[n] = 0;
	return b;
}

/* The value after "key<sep>" at the start of a line, trimmed. */
static int line_value(const char *text, const char *key, char sep, char *out, int len)
{
	size_t kl = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, kl))
			continue;
		const char *v = p + kl;
		while (*v == ' ' || *v == '\t')
			v++;
		if (*v != sep)
			continue;
		v++;
		while (*v == ' ' || *v == '\t' || *v == '"')
			v++;
		const char *e = strchr(v, '\n');
		int n = e ? (int)(e - v) : (int)strlen(v);
		while (n > 0 && (v[n - 1] == '"' || v[n - 1] == ' ' || v[n - 1] == '\r'))
			n--;
		snprintf(out, (size_t)len, "%.*s", n, v);
		return 0;
	}
	return -ENOENT;
}

int sysinfo_parse_os_release(const char *text, char *out, int len)
{
	return line_value(text, "PRETTY_NAME", '=', out, len);
}

int sysinfo_parse_cpu_model(const char *text, char *out, int len)
{
	return line_value(text, "model name", ':', out, len);
}

int sysinfo_read(struct sysinfo_facts *f)
{
	memset(f, 0, sizeof(*f));
	struct utsname u;
	struct hostinfo_mem mem;
	if (uname(&u) == 0)
		snprintf(f->kernel, sizeof(f->kernel), "%s", u.release);
	if (hostinfo_mem_read(&mem) == 0)
		f->mem_total_mb = mem.total_mb;
	char *t = slurp("/etc/os-release", 16384);
	if (t)
		sysinfo_parse_os_release(t, f->os_release, sizeof(f->os_release));
	free(t);
	t = slurp("/proc/cpuinfo", 1 << 20);
	if (t)
		sysinfo_parse_cpu_model(t, f->cpu_model, sizeof(f->cpu_model));
	free(t);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	f->cpu_cores = n > 0 ? (unsigned)n : 0;
	return 0;
}
