/* store/recdir: the names of rotated recordings and their times, the list
 * of a directory and of a glob in time order, the files a range needs, the
 * oldest to prune for a cap and a retention; "10m ago" (core/timearg). */
#include "check.h"
#include "core/timearg.h"
#include "store/recdir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NS 1000000000ull

static void names(void)
{
	char b[RECDIR_NAME_LEN];
	uint64_t t = 1795773280ull * NS + 123456789; /* 2026-11-27T09:54:40.12Z */
	CHECK(!strcmp(recdir_name(b, sizeof(b), t), "ingero-2026-11-27T09-54-40.db"));
	CHECK(recdir_name_time(b) == 1795773280ull * NS);
	CHECK(recdir_name_time("/var/lib/ingero-top/ingero-2026-11-27T09-54-40.db") ==
	      1795773280ull * NS);
	/* names sort by time: a day, an hour and a second later */
	char c[RECDIR_NAME_LEN], d[RECDIR_NAME_LEN];
	recdir_name(c, sizeof(c), t + 3600 * NS);
	recdir_name(d, sizeof(d), t + 86400 * NS - 1);
	CHECK(strcmp(b, c) < 0 && strcmp(c, d) < 0);
	const char * not [] = {"ingero-2026-11-27T09-54-40.db-wal",
			       "ingero-2026-11-27T09-54-40.dbx",
			       "ingero-2026-13-27T09-54-40.db",
			       "ingero-2026-11-27T25-54-40.db",
			       "x-2026-11-27T09-54-40.db",
			       "ingero-2026-11-27T09:54:40.db",
			       "ingero-1970-01-01T00-00-00.db",
			       "ingero-.db",
			       ""};
	for (size_t i = 0; i < sizeof(not ) / sizeof(not [0]); i++)
		CHECKF(!recdir_name_time(not [i]), "%s", not [i]);
}

/* Five files of 5 s from t0, 100 bytes each but the last (the one written). */
static struct recdir_list five(uint64_t t0, struct recdir_file *f)
{
	static char p[5][64];
	for (int i = 0; i < 5; i++) {
		snprintf(p[i], sizeof(p[i]), "f%d", i);
		f[i] = (struct recdir_file){.path = p[i],
					    .start_ns = t0 + (uint64_t)i * 5 * NS,
					    .end_ns = t0 + (uint64_t)(i + 1) * 5 * NS,
					    .bytes = 100};
	}
	f[4].end_ns = t0 + 22 * NS;
	return (struct recdir_list){.f = f, .n = 5};
}

static void select_and_prune(void)
{
	struct recdir_file f[5];
	uint64_t t0 = 1795773280ull * NS;
	struct recdir_list l = five(t0, f);
	size_t a = 99, b = 99;
	CHECK(!recdir_select(&l, 0, 0, &a, &b) && a == 0 && b == 4);
	/* 12.5 s: the third file; a second's margin either side */
	CHECK(!recdir_select(&l, t0 + 12500000000ull, t0 + 13 * NS, &a, &b) && a == 2 && b == 2);
	CHECK(!recdir_select(&l, t0 + 10 * NS + 500000000ull, t0 + 13 * NS, &a, &b) && a == 1 &&
	      b == 2);
	CHECK(!recdir_select(&l, t0 + 12 * NS, t0 + 16 * NS, &a, &b) && a == 2 && b == 3);
	CHECK(!recdir_select(&l, t0 + 21500000000ull, 0, &a, &b) && a == 4 && b == 4);
	CHECK(recdir_select(&l, t0 + 60 * NS, 0, &a, &b) == -ENODATA);
	CHECK(recdir_select(&l, 0, t0 - 5 * NS, &a, &b) == -ENODATA);
	/* the cap: 500 bytes in all */
	CHECK(recdir_prune_count(&l, 0, 0, t0, 1) == 0);
	CHECK(recdir_prune_count(&l, 500, 0, t0, 1) == 0);
	CHECK(recdir_prune_count(&l, 499, 0, t0, 1) == 1);
	CHECK(recdir_prune_count(&l, 250, 0, t0, 1) == 3);
	CHECK(recdir_prune_count(&l, 1, 0, t0, 1) == 4); /* never the one written */
	CHECK(recdir_prune_count(&l, 1, 0, t0, 5) == 0);
	/* retention: files that ended more than 8 s before now (t0 + 20 s) */
	CHECK(recdir_prune_count(&l, 0, 8 * NS, t0 + 20 * NS, 1) == 2);
	CHECK(recdir_prune_count(&l, 0, 8 * NS, t0 + 1000 * NS, 1) == 4);
	CHECK(recdir_prune_count(&l, 350, 8 * NS, t0 + 20 * NS, 1) == 2);
	CHECK(recdir_prune_count(&l, 250, 8 * NS, t0 + 20 * NS, 1) == 3);
}

static void touch(const char *dir, const char *name, size_t bytes)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	for (size_t i = 0; f && i < bytes; i++)
		fputc('x', f);
	if (f)
		fclose(f);
}

static void lists(void)
{
	char dir[] = "/tmp/test_recdir.XXXXXX", pat[600], err[512];
	struct recdir_list l;
	CHECK(mkdtemp(dir) != NULL);
	CHECK(recdir_is_set(dir));
	CHECK(recdir_list(dir, &l, err, sizeof(err)) == -ENOENT && strstr(err, "no recordings"));
	touch(dir, "ingero-2026-11-27T10-00-00.db", 10);
	touch(dir, "ingero-2026-11-27T09-00-00.db", 10);
	touch(dir, "ingero-2026-11-27T09-00-00.db-wal", 5000);
	touch(dir, "ingero-2026-11-27T11-00-00.db", 10);
	touch(dir, "notes.txt", 10);
	touch(dir, "other.db", 10);
	CHECK(!recdir_list(dir, &l, err, sizeof(err)) && l.n == 3);
	CHECK(l.n == 3 && strstr(l.f[0].path, "T09-00-00.db") && strstr(l.f[2].path, "T11-"));
	CHECK(l.n == 3 && l.f[0].end_ns == l.f[1].start_ns && l.f[0].bytes >= 5010);
	recdir_list_free(&l);
	/* a glob takes what it matches, but not the companions */
	snprintf(pat, sizeof(pat), "%s/*.db*", dir);
	CHECK(recdir_is_set(pat));
	CHECK(!recdir_list(pat, &l, err, sizeof(err)) && l.n == 4);
	CHECK(l.n == 4 && !l.f[0].start_ns && strstr(l.f[0].path, "other.db"));
	recdir_list_free(&l);
	snprintf(pat, sizeof(pat), "%s/nothing-*.db", dir);
	CHECK(recdir_list(pat, &l, err, sizeof(err)) == -ENOENT);
	snprintf(pat, sizeof(pat), "%s/ingero-2026-11-27T09-00-00.db", dir);
	CHECK(!recdir_is_set(pat)); /* a file is a file */
	CHECK(!recdir_remove(pat) && access(pat, F_OK) && access("x", F_OK));
	snprintf(pat, sizeof(pat), "rm -rf %s", dir);
	CHECK(!system(pat));
}

static void ago(void)
{
	uint64_t t = 0, now = (uint64_t)time(NULL) * NS;
	char err[256];
	CHECK(!timearg_parse("10m ago", 1, 2, &t, err, sizeof(err)));
	CHECK(t + 600 * NS >= now - 2 * NS && t + 600 * NS <= now + 2 * NS);
	CHECK(!timearg_parse("1h30m ago", 1, 2, &t, err, sizeof(err)));
	CHECK(t + 5400 * NS >= now - 2 * NS && t + 5400 * NS <= now + 2 * NS);
	CHECK(timearg_parse("ago", 1, 2, &t, err, sizeof(err)) == -EINVAL);
	CHECK(timearg_parse("10x ago", 1, 2, &t, err, sizeof(err)) == -EINVAL);
	CHECK(timearg_parse("-10m ago", 1, 2, &t, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "10m ago"));
}

int main(void)
{
	names();
	select_and_prune();
	lists();
	ago();
	return check_done("test_recdir");
}
