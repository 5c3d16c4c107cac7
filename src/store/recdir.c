/* A directory of rotated recordings: names by time, lists, selection by a
 * time range, pruning (recdir.h). */
#include "store/recdir.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NS 1000000000ull

char *recdir_name(char *buf, size_t n, uint64_t t_ns)
{
	time_t t = (time_t)(t_ns / NS);
	struct tm tm;
	char s[32] = "1970-01-01T00-00-00";
	if (gmtime_r(&t, &tm))
		strftime(s, sizeof(s), "%Y-%m-%dT%H-%M-%S", &tm);
	snprintf(buf, n, "ingero-%s.db", s);
	return buf;
}

uint64_t recdir_name_time(const char *name)
{
	const char *base = strrchr(name, '/');
	struct tm tm = {0};
	int y, mo, d, h, mi, se, len = 0;
	base = base ? base + 1 : name;
	if (sscanf(base, "ingero-%4d-%2d-%2dT%2d-%2d-%2d.db%n", &y, &mo, &d, &h, &mi, &se, &len) !=
		6 ||
	    len != (int)strlen(base) || len != RECDIR_NAME_LEN - 3)
		return 0;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60 || y < 1971)
		return 0;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	time_t t = timegm(&tm);
	return t > 0 ? (uint64_t)t * NS : 0;
}

int recdir_is_set(const char *arg)
{
	struct stat st;
	if (!stat(arg, &st))
		return S_ISDIR(st.st_mode);
	return strpbrk(arg, "*?[") != NULL;
}

/* The file and its companions, in bytes on disk; its last write. */
static uint64_t disk_bytes(const char *path, uint64_t *mtime_ns)
{
	static const char *const comp[] = {"", "-wal", "-journal"};
	char p[4096];
	uint64_t b = 0;
	*mtime_ns = 0;
	for (size_t i = 0; i < sizeof(comp) / sizeof(comp[0]); i++) {
		struct stat st;
		snprintf(p, sizeof(p), "%s%s", path, comp[i]);
		if (stat(p, &st))
			continue;
		uint64_t used = (uint64_t)st.st_blocks * 512; /* a sparse file: its size */
		b += used > (uint64_t)st.st_size ? used : (uint64_t)st.st_size;
		uint64_t m = (uint64_t)st.st_mtim.tv_sec * NS + (uint64_t)st.st_mtim.tv_nsec;
		if (m > *mtime_ns)
			*mtime_ns = m;
	}
	return b;
}

static int by_time(const void *a, const void *b)
{
	const struct recdir_file *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return strcmp(x->path, y->path);
}

static int add(struct recdir_list *l, size_t *cap, const char *path)
{
	struct stat st;
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	if (l->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct recdir_file *f = realloc(l->f, nc * sizeof(*f));
		if (!f)
			return -ENOMEM;
		l->f = f;
		*cap = nc;
	}
	struct recdir_file *f = &l->f[l->n];
	if (!(f->path = strdup(path)))
		return -ENOMEM;
	f->start_ns = recdir_name_time(path);
	f->bytes = disk_bytes(path, &f->end_ns);
	l->n++;
	return 0;
}

static int list_dir(const char *dir, struct recdir_list *l, size_t *cap)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char p[4096];
	int r = 0;
	if (!d)
		return -errno;
	while (!r && (de = readdir(d))) {
		if (!recdir_name_time(de->d_name))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		r = add(l, cap, p);
	}
	closedir(d);
	return r;
}

static int list_glob(const char *pat, struct recdir_list *l, size_t *cap)
{
	glob_t g;
	int r = glob(pat, GLOB_NOSORT, NULL, &g);
	if (r == GLOB_NOMATCH)
		return 0;
	if (r)
		return -ENOMEM;
	r = 0;
	for (size_t i = 0; !r && i < g.gl_pathc; i++) {
		size_t n = strlen(g.gl_pathv[i]);
		/* a recording's companions are not recordings */
		if ((n > 4 && !strcmp(g.gl_pathv[i] + n - 4, "-wal")) ||
		    (n > 4 && !strcmp(g.gl_pathv[i] + n - 4, "-shm")) ||
		    (n > 8 && !strcmp(g.gl_pathv[i] + n - 8, "-journal")))
			continue;
		r = add(l, cap, g.gl_pathv[i]);
	}
	globfree(&g);
	return r;
}

int recdir_list(const char *arg, struct recdir_list *out, char *err, size_t errlen)
{
	struct stat st;
	size_t cap = 0;
	int dir = !stat(arg, &st) && S_ISDIR(st.st_mode);
	memset(out, 0, sizeof(*out));
	int r = dir ? list_dir(arg, out, &cap) : list_glob(arg, out, &cap);
	if (r) {
		snprintf(err, errlen, "cannot list %s: %s", arg, strerror(-r));
		recdir_list_free(out);
		return r;
	}
	if (!out->n) {
		snprintf(err, errlen, "%s holds no recordings%s", arg,
			 dir ? " (files named ingero-YYYY-MM-DDTHH-MM-SS.db)" : "");
		return -ENOENT;
	}
	qsort(out->f, out->n, sizeof(out->f[0]), by_time);
	/* a file ends where the next begins; the last at its last write */
	for (size_t i = 0; i + 1 < out->n; i++)
		if (out->f[i].start_ns && out->f[i + 1].start_ns)
			out->f[i].end_ns = out->f[i + 1].start_ns;
	return 0;
}

void recdir_list_free(struct recdir_list *l)
{
	for (size_t i = 0; l && i < l->n; i++)
		free(l->f[i].path);
	if (l)
		free(l->f);
	if (l)
		memset(l, 0, sizeof(*l));
}

int recdir_select(const struct recdir_list *l, uint64_t since_ns, uint64_t until_ns, size_t *first,
		  size_t *last)
{
	size_t a = SIZE_MAX, b = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct recdir_file *f = &l->f[i];
		/* a second either side: a record's end may straddle a boundary */
		int meets = !f->start_ns || ((!until_ns || f->start_ns <= until_ns + NS) &&
					     (!since_ns || f->end_ns + NS >= since_ns));
		if (!meets)
			continue;
		if (a == SIZE_MAX)
			a = i;
		b = i;
	}
	if (a == SIZE_MAX)
		return -ENODATA;
	*first = a;
	*last = b;
	return 0;
}

size_t recdir_prune_count(const struct recdir_list *l, uint64_t max_bytes, uint64_t retain_ns,
			  uint64_t now_ns, size_t keep)
{
	uint64_t total = 0;
	size_t k = 0, cand = l->n > keep ? l->n - keep : 0;
	for (size_t i = 0; i < l->n; i++)
		total += l->f[i].bytes;
	while (k < cand) {
		const struct recdir_file *f = &l->f[k];
		int old = retain_ns && f->end_ns && f->end_ns + retain_ns < now_ns;
		if (!old && (!max_bytes || total <= max_bytes))
			break;
		total -= f->bytes;
		k++;
	}
	return k;
}

int recdir_remove(const char *path)
{
	static const char *const comp[] = {"-wal", "-shm", "-journal"};
	char p[4096];
	int r = unlink(path) ? -errno : 0;
	for (size_t i = 0; i < sizeof(comp) / sizeof(comp[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", path, comp[i]);
		unlink(p);
	}
	return r;
}
