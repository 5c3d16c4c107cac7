/* Recording as root in other people's directories (store/safefile.h):
 * --record and the flight recorder never follow a link planted at the
 * path or at a companion (-wal, -shm, -journal), never create a file at a
 * dangling link's target, never change a linked file (checksum and mtime),
 * refuse directories others may write without the sticky bit, create
 * recordings 0600, append only to a regular file of the caller's with one
 * link, and a racer that swaps names for links in a loop while recordings
 * and flight saves run gets nothing written outside the directory. */
#include "check.h"
#include "core/ops.h"
#include "store/flight.h"
#include "store/rec.h"
#include "store/replay.h"
#include "store/safefile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];	   /* where recordings go (0700, ours) */
static char outside[64];   /* what links point at */
static char target[300];   /* a file outside: must never change */
static char dangling[300]; /* a path outside that must never appear */

static uint64_t checksum(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint64_t h = 1469598103934665603ull;
	int c;
	if (!f)
		return 0;
	while ((c = fgetc(f)) != EOF)
		h = (h ^ (uint64_t)c) * 1099511628211ull;
	fclose(f);
	return h;
}

static uint64_t target_sum;
static struct timespec target_mtime;

static void make_target(void)
{
	snprintf(target, sizeof(target), "%s/target.txt", outside);
	snprintf(dangling, sizeof(dangling), "%s/dangling.db", outside);
	FILE *f = fopen(target, "w");
	fputs("root's file: must never change\n", f);
	fclose(f);
	struct stat sb;
	stat(target, &sb);
	target_sum = checksum(target);
	target_mtime = sb.st_mtim;
}

/* Nothing reached outside: the target is as it was, the dangling target
 * does not exist, and the outside directory holds nothing else. */
static void check_outside(const char *when)
{
	struct stat sb;
	CHECKF(checksum(target) == target_sum, "%s: target changed", when);
	CHECKF(stat(target, &sb) == 0 && sb.st_mtim.tv_sec == target_mtime.tv_sec &&
		   sb.st_mtim.tv_nsec == target_mtime.tv_nsec,
	       "%s: target touched", when);
	CHECKF(lstat(dangling, &sb) != 0, "%s: a file appeared at the dangling target", when);
	DIR *d = opendir(outside);
	int n = 0;
	struct dirent *de;
	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	CHECKF(n == 1, "%s: %d files outside", when, n);
}

static void path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void event(struct ig_event *e, uint64_t i)
{
	memset(e, 0, sizeof(*e));
	e->kind = IG_EV_CALL;
	e->op = IG_OP_CUDA_STREAM_SYNC;
	e->ts_ns = 1700000000000000000ull + i * 1000000;
	e->dur_ns = 1000;
	e->pid = e->tid = 4242;
	snprintf(e->comm, sizeof(e->comm), "victim");
}

/* Records n events to path; 0 or the -errno of rec_open (err set). */
static int record(const char *path, int n, const char **err)
{
	struct rec *r = rec_open(path, NULL, err);
	if (!r)
		return -1;
	for (int i = 0; i < n; i++) {
		struct ig_event e;
		event(&e, (uint64_t)i);
		rec_event(r, &e);
	}
	return rec_close(r);
}

static int mode_of(const char *path)
{
	struct stat sb;
	return stat(path, &sb) ? -1 : (int)(sb.st_mode & 07777);
}

static void test_links(void)
{
	char path[300];
	const char *err = NULL;
	/* a dangling link: no file at its target */
	path_in(path, sizeof(path), "dangling.db");
	CHECK(symlink(dangling, path) == 0);
	CHECK(record(path, 10, &err) != 0 && err && strstr(err, "symbolic link"));
	check_outside("dangling link");
	/* a link to an existing file: the file is unchanged */
	path_in(path, sizeof(path), "linked.db");
	CHECK(symlink(target, path) == 0);
	CHECK(record(path, 10, &err) != 0 && err && strstr(err, "symbolic link"));
	check_outside("link to a file");
	/* a new recording is 0600 */
	path_in(path, sizeof(path), "new.db");
	CHECK(record(path, 10, &err) == 0);
	CHECKF(mode_of(path) == 0600, "mode %o", mode_of(path));
	/* appending to it works; a second hard link to it is refused */
	CHECK(record(path, 10, &err) == 0);
	char twin[300];
	path_in(twin, sizeof(twin), "twin.db");
	CHECK(link(path, twin) == 0);
	CHECK(record(path, 10, &err) != 0 && err && strstr(err, "hard links"));
	unlink(twin);
	/* a FIFO does not block the open; a directory is refused */
	path_in(path, sizeof(path), "fifo.db");
	CHECK(mkfifo(path, 0600) == 0);
	CHECK(record(path, 10, &err) != 0 && err && strstr(err, "not a regular file"));
	CHECK(record(dir, 10, &err) != 0 && err && strstr(err, "directory"));
}

/* Links planted at the companions of a new file and of one appended to. */
static void test_companions(void)
{
	char path[300], wal[320];
	const char *err = NULL;
	path_in(path, sizeof(path), "comp.db");
	snprintf(wal, sizeof(wal), "%s-wal", path);
	CHECK(symlink(target, wal) == 0);
	CHECK(record(path, 10, &err) != 0 && err && strstr(err, "comp.db-wal"));
	CHECK(access(path, F_OK) != 0); /* the new file was taken back */
	check_outside("link at -wal of a new file");
	unlink(wal);
	CHECK(record(path, 10, &err) == 0);
	CHECK(symlink(dangling, wal) == 0); /* appending: the WAL is opened again */
	CHECK(record(path, 10, &err) != 0 && err && strstr(err, "symbolic link"));
	check_outside("dangling link at -wal of an existing file");
	unlink(wal);
	char shm[320];
	snprintf(shm, sizeof(shm), "%s-shm", path);
	CHECK(symlink(target, shm) == 0);
	CHECK(record(path, 10, &err) != 0);
	check_outside("link at -shm");
	unlink(shm);
	/* our own stale WAL beside a new file is removed, not replayed into it */
	path_in(path, sizeof(path), "stale.db");
	snprintf(wal, sizeof(wal), "%s-wal", path);
	FILE *f = fopen(wal, "w");
	fputs("stale", f);
	fclose(f);
	CHECK(record(path, 10, &err) == 0 && access(wal, F_OK) != 0);
	/* a name of the ig-safe VFS that is not registered opens nothing */
	sqlite3 *db = NULL;
	CHECK(safefile_vfs(NULL) != NULL);
	CHECK(sqlite3_open_v2("/proc/self/fd/1", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
			      safefile_vfs(NULL)) != SQLITE_OK);
	sqlite3_close(db);
}

static void test_directories(void)
{
	char sub[300], path[400];
	const char *err = NULL;
	snprintf(sub, sizeof(sub), "%s/shared", dir);
	CHECK(mkdir(sub, 0700) == 0 && chmod(sub, 0777) == 0);
	snprintf(path, sizeof(path), "%s/x.db", sub);
	CHECK(record(path, 10, &err) != 0 && err && strstr(err, "sticky"));
	CHECK(access(path, F_OK) != 0);
	struct flight *f = flight_new(10, 0);
	struct ig_event e;
	event(&e, 1);
	flight_push(f, &e);
	char saved[4200];
	CHECK(flight_save(f, sub, saved, sizeof(saved)) == -EPERM &&
	      strstr(flight_error(f), "sticky"));
	CHECK(chmod(sub, 0770) == 0); /* group-writable, not sticky */
	CHECK(record(path, 10, &err) != 0 && err && strstr(err, "group"));
	CHECK(chmod(sub, 01777) == 0); /* sticky, like /tmp: fine */
	CHECK(record(path, 10, &err) == 0 && mode_of(path) == 0600);
	/* a flight file is 0600 too */
	CHECK(flight_save(f, sub, saved, sizeof(saved)) == 0);
	char msg[4400];
	for (int i = 0; i < 6000 && !flight_poll(f, msg, sizeof(msg)); i++)
		usleep(10000);
	CHECKF(strstr(msg, "saved 1 events"), "%s", msg);
	CHECKF(mode_of(saved) == 0600, "%s: mode %o", saved, mode_of(saved));
	flight_free(f);
	if (geteuid() == 0) { /* a file another user owns is not appended to */
		snprintf(path, sizeof(path), "%s/theirs.db", sub);
		CHECK(record(path, 10, &err) == 0 && chown(path, 65534, 65534) == 0);
		uint64_t sum = checksum(path);
		CHECK(record(path, 10, &err) != 0 && err && strstr(err, "another user"));
		CHECK(checksum(path) == sum);
	} else {
		printf("not root: the check of a file another user owns is not run\n");
	}
}

/* --- the racer ------------------------------------------------------------------ */

static volatile int racing;
static unsigned long swaps;

/* Replaces every name in dir that a recording or a flight save may use
 * (the files and their companions) with a link outside, atomically, and
 * plants links at names not taken yet, in a loop. */
static void *racer(void *arg)
{
	char tmp[400], p[700];
	snprintf(tmp, sizeof(tmp), "%s/.racer", dir);
	while (racing) {
		DIR *d = opendir(dir);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (strncmp(de->d_name, "race", 4) &&
			    strncmp(de->d_name, "ingero-top-flight", 17))
				continue;
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			unlink(tmp);
			if (symlink(swaps % 2 ? target : dangling, tmp) == 0 && rename(tmp, p) == 0)
				swaps++;
		}
		if (d)
			closedir(d);
		static const char *const plant[] = {"race.db-wal", "race.db-shm",
						    "race.db-journal"};
		for (int i = 0; i < 3 && rand() % 4 == 0; i++) {
			snprintf(p, sizeof(p), "%s/%s", dir, plant[i]);
			if (symlink(swaps % 2 ? dangling : target, p) == 0)
				swaps++;
		}
		usleep((useconds_t)(rand() % 20000)); /* bursts: some writes get through */
	}
	return NULL;
}

static void test_racer(void)
{
	pthread_t thr;
	racing = 1;
	CHECK(pthread_create(&thr, NULL, racer, NULL) == 0);
	int recorded = 0, refused = 0, stale = 0;
	char path[300];
	path_in(path, sizeof(path), "race.db");
	for (int round = 0; round < 40; round++) {
		const char *err = NULL;
		char comp[320];
		unlink(path);
		for (int i = 0; i < 3; i++) { /* the last round's links, to start afresh */
			snprintf(comp, sizeof(comp), "%s%s", path,
				 i == 0	  ? "-wal"
				 : i == 1 ? "-shm"
					  : "-journal");
			unlink(comp);
		}
		int rc = record(path, 2000, &err);
		recorded += rc == 0;
		stale += rc == -ESTALE;
		refused += rc != 0 && rc != -ESTALE;
	}
	struct flight *f = flight_new(1e6, 0);
	for (int i = 0; i < 20000; i++) {
		struct ig_event e;
		event(&e, (uint64_t)i);
		flight_push(f, &e);
	}
	int saved = 0, failed = 0;
	for (int round = 0; round < 40; round++) {
		char out[4200], msg[4400] = "";
		if (flight_save(f, dir, out, sizeof(out))) {
			failed++;
			continue;
		}
		for (int i = 0; i < 6000 && !flight_poll(f, msg, sizeof(msg)); i++)
			usleep(1000);
		if (round == 0)
			printf("first flight save: %s\n", msg);
		saved += strstr(msg, "saved 20000 events") != NULL;
		failed += strstr(msg, "saved 20000 events") == NULL;
	}
	flight_free(f);
	racing = 0;
	pthread_join(thr, NULL);
	printf("racer: %lu swaps; --record: %d written, %d refused, %d replaced under it; "
	       "flight: %d saved, %d failed\n",
	       swaps, recorded, refused, stale, saved, failed);
	CHECK(swaps > 0);
	CHECK(recorded + refused + stale == 40 && saved + failed == 40);
	check_outside("racer");
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ig-test-safe.XXXXXX");
	snprintf(outside, sizeof(outside), "/tmp/ig-test-outside.XXXXXX");
	if (!mkdtemp(dir) || !mkdtemp(outside))
		return 1;
	make_target();
	test_links();
	test_companions();
	test_directories();
	test_racer();
	check_outside("end");
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", dir, outside);
	if (system(cmd)) {
	}
	return check_done("test_safefile");
}
