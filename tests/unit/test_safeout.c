/* Plain output files (store/safefile.h, safefile_out_*: the exports): with
 * umask 022 the file is 0600 and appears whole or not at all; a link, a
 * FIFO, a directory or another user's file at the path is refused before a
 * byte is written, and again when the file is put in place (one planted
 * while the trace was written); a link planted at the temporary name is
 * never followed; a failed output leaves nothing behind. */
#include "check.h"
#include "store/safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/ig-safeout.XXXXXX";

static const char *at(const char *name)
{
	static char p[4][300];
	static int i;
	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

static int mode_of(const char *path)
{
	struct stat sb;
	return lstat(path, &sb) ? -1 : (int)(sb.st_mode & 07777);
}

static char *slurp(const char *path)
{
	static char b[256];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(b, 1, sizeof(b) - 1, f) : 0;
	b[n] = 0;
	if (f)
		fclose(f);
	return b;
}

/* Opens path, writes text, commits: 0 or the -errno of the first failure. */
static int put(const char *path, const char *text, char *err, size_t len)
{
	struct safefile *sf = NULL;
	int rc = safefile_out_open(path, &sf, err, len);
	if (rc)
		return rc;
	if (write(safefile_fd(sf), text, strlen(text)) != (ssize_t)strlen(text))
		rc = -EIO;
	if (!rc)
		rc = safefile_out_commit(sf, err, len);
	if (rc)
		safefile_unlink(sf);
	safefile_close(sf);
	return rc;
}

static int leftovers(void)
{
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "find %s -name '*.tmp[0-9]*' | grep -q .", dir);
	return system(cmd) == 0;
}

static void test_modes(void)
{
	char err[512];
	CHECKF(put(at("a.json"), "one", err, sizeof(err)) == 0, "%s", err);
	CHECKF(mode_of(at("a.json")) == 0600, "mode %o", mode_of(at("a.json")));
	CHECK(!strcmp(slurp(at("a.json")), "one"));
	/* over an older file of ours, 0644: replaced, 0600 */
	chmod(at("a.json"), 0644);
	CHECKF(put(at("a.json"), "two", err, sizeof(err)) == 0, "%s", err);
	CHECK(mode_of(at("a.json")) == 0600 && !strcmp(slurp(at("a.json")), "two"));
	/* while written, the file is the temporary one, 0600, and the path is untouched */
	struct safefile *sf = NULL;
	CHECK(safefile_out_open(at("b.json"), &sf, err, sizeof(err)) == 0);
	char tmp[300];
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", at("b.json"), (int)getpid());
	CHECKF(mode_of(tmp) == 0600 && mode_of(at("b.json")) == -1, "tmp %o", mode_of(tmp));
	/* a failure: nothing left */
	safefile_unlink(sf);
	safefile_close(sf);
	CHECK(mode_of(tmp) == -1 && mode_of(at("b.json")) == -1);
	CHECK(!leftovers());
}

static void test_refusals(void)
{
	char err[512];
	FILE *f = fopen(at("target"), "w");
	fputs("keep", f);
	fclose(f);
	CHECK(symlink(at("target"), at("link.json")) == 0);
	int rc = put(at("link.json"), "x", err, sizeof(err));
	CHECKF(rc == -ELOOP && strstr(err, "cannot write ") && strstr(err, "symbolic link"),
	       "%d %s", rc, err);
	CHECK(!strcmp(slurp(at("target")), "keep") && mode_of(at("target")) == 0644);
	CHECK(mkfifo(at("fifo.json"), 0600) == 0);
	rc = put(at("fifo.json"), "x", err, sizeof(err));
	CHECKF(rc == -EPERM && strstr(err, "not a regular file"), "%d %s", rc, err);
	CHECK(mkdir(at("dir.json"), 0700) == 0);
	rc = put(at("dir.json"), "x", err, sizeof(err));
	CHECKF(rc == -EISDIR, "%d %s", rc, err);
	CHECK(link(at("target"), at("hard.json")) == 0);
	rc = put(at("hard.json"), "x", err, sizeof(err));
	CHECKF(rc == -EPERM && strstr(err, "hard links"), "%d %s", rc, err);
	/* a directory others may write, without the sticky bit */
	CHECK(mkdir(at("open"), 0700) == 0 && chmod(at("open"), 0777) == 0);
	rc = put(at("open/x.json"), "x", err, sizeof(err));
	CHECKF(rc == -EPERM && strstr(err, "writable by everyone"), "%d %s", rc, err);
	/* a link planted at the temporary name: not followed */
	char tmp[300];
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", at("c.json"), (int)getpid());
	CHECK(symlink(at("target"), tmp) == 0);
	rc = put(at("c.json"), "x", err, sizeof(err));
	CHECKF(rc < 0 && strstr(err, "cannot create"), "%d %s", rc, err);
	CHECK(!strcmp(slurp(at("target")), "keep") && mode_of(at("c.json")) == -1);
	unlink(tmp);
	if (geteuid() == 0) {
		f = fopen(at("theirs.json"), "w");
		fputs("theirs", f);
		fclose(f);
		CHECK(chown(at("theirs.json"), 65534, 65534) == 0);
		rc = put(at("theirs.json"), "x", err, sizeof(err));
		CHECKF(rc == -EPERM && strstr(err, "another user"), "%d %s", rc, err);
		CHECK(!strcmp(slurp(at("theirs.json")), "theirs"));
	}
	CHECK(!leftovers());
}

/* The path taken while the file was written: the commit refuses it. */
static void test_commit_checks_again(void)
{
	char err[512];
	struct safefile *sf = NULL;
	CHECK(safefile_out_open(at("d.json"), &sf, err, sizeof(err)) == 0);
	CHECK(sf && write(safefile_fd(sf), "x", 1) == 1);
	CHECK(symlink(at("target"), at("d.json")) == 0);
	int rc = sf ? safefile_out_commit(sf, err, sizeof(err)) : -1;
	CHECKF(rc == -ELOOP && strstr(err, "symbolic link"), "%d %s", rc, err);
	CHECK(mode_of(at("d.json")) == 0777 && !strcmp(slurp(at("target")), "keep"));
	safefile_unlink(sf);
	safefile_close(sf);
	/* the temporary file removed behind our back: refused, not renamed */
	CHECK(safefile_out_open(at("e.json"), &sf, err, sizeof(err)) == 0);
	char tmp[300];
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", at("e.json"), (int)getpid());
	unlink(tmp);
	rc = sf ? safefile_out_commit(sf, err, sizeof(err)) : -1;
	CHECKF(rc == -ESTALE && mode_of(at("e.json")) == -1, "%d %s", rc, err);
	safefile_unlink(sf);
	safefile_close(sf);
	CHECK(!leftovers());
}

int main(void)
{
	umask(022);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_modes();
	test_refusals();
	test_commit_checks_again();
	char cmd[200];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	return check_done("test_safeout");
}
