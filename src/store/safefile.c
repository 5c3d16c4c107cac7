/* Safe output files: the directory check, the O_NOFOLLOW|O_EXCL
 * creation, the registry of held descriptors, and the SQLite VFS glue that
 * makes SQLite use them (recordings); the same rules for a plain file
 * written through a temporary file (exports). See safefile.h. */
#include "store/safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SF_MAX 64
#define SF_PREFIX "/proc/self/fd/"

static const char *const suffixes[] = {"-wal", "-shm", "-journal"};
#define NSUFFIX 3

struct safefile {
	int fd, dirfd;
	dev_t dev;
	ino_t ino;
	int created;
	off_t size;
	char *path;
	const char *verb; /* of the messages: "record to", "write" */
	char base[NAME_MAX + 1];
	char tmp[NAME_MAX + 1]; /* a plain output's temporary name; "" otherwise */
	char dbname[40];
	char refusal[NAME_MAX + 64]; /* why the last companion open was refused */
	/* companions this handle created: their identity, to remove them */
	int comp_made[NSUFFIX];
	dev_t comp_dev[NSUFFIX];
	ino_t comp_ino[NSUFFIX];
};

/* --- the registry: fd number -> handle ------------------------------------------ */

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct safefile *reg[SF_MAX];

static void refuse(struct safefile *sf, const char *name, const char *why)
{
	snprintf(sf->refusal, sizeof(sf->refusal), "%s %s", name, why);
}

const char *safefile_refusal(struct safefile *sf)
{
	pthread_mutex_lock(&reg_mu);
	static __thread char buf[sizeof(sf->refusal)];
	snprintf(buf, sizeof(buf), "%s", sf->refusal);
	pthread_mutex_unlock(&reg_mu);
	return buf;
}

/* Parses "/proc/self/fd/N<suffix>": 0 = not of that form; 1 = ours, with
 * the handle (held under reg_mu by the caller) and the suffix index (-1 for
 * the file itself); -1 = of that form but not registered or an unknown
 * suffix. */
static int lookup(const char *path, struct safefile **sf, int *suffix)
{
	if (!path || strncmp(path, SF_PREFIX, sizeof(SF_PREFIX) - 1))
		return 0;
	const char *p = path + sizeof(SF_PREFIX) - 1;
	char *end;
	errno = 0;
	long n = strtol(p, &end, 10);
	if (end == p || errno || n < 0 || n > INT_MAX)
		return -1;
	*suffix = -1;
	if (*end) {
		int i;
		for (i = 0; i < NSUFFIX && strcmp(end, suffixes[i]); i++)
			;
		if (i == NSUFFIX)
			return -1;
		*suffix = i;
	}
	for (int i = 0; i < SF_MAX; i++)
		if (reg[i] && reg[i]->fd == (int)n) {
			*sf = reg[i];
			return 1;
		}
	return -1;
}

static void comp_name(const struct safefile *sf, int suffix, char *out, size_t len)
{
	snprintf(out, len, "%s%s", sf->base, suffixes[suffix]);
}

/* Is this a file we may write: regular, one link, ours? NULL when it is. */
static const char *not_ours_st(const struct stat *sb)
{
	if (!S_ISREG(sb->st_mode))
		return "is not a regular file";
	if (sb->st_uid != geteuid() && sb->st_uid != 0)
		return "is owned by another user";
	if (sb->st_nlink != 1)
		return "has other hard links";
	return NULL;
}

/* The same of an open descriptor (its stat into sb). */
static const char *not_ours(int fd, struct stat *sb)
{
	return fstat(fd, sb) ? "cannot be examined" : not_ours_st(sb);
}

/* Opens a companion relative to the held directory: created O_EXCL, or an
 * existing one of ours; never through a symbolic link. */
static int comp_open(struct safefile *sf, int suffix, int flags)
{
	char name[NAME_MAX + 16];
	struct stat sb;
	comp_name(sf, suffix, name, sizeof(name));
	int base = (flags & O_ACCMODE) | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
	int fd = -1;
	if (flags & O_CREAT) {
		fd = openat(sf->dirfd, name, base | O_CREAT | O_EXCL, 0600);
		if (fd >= 0 && !fstat(fd, &sb)) {
			sf->comp_made[suffix] = 1;
			sf->comp_dev[suffix] = sb.st_dev;
			sf->comp_ino[suffix] = sb.st_ino;
		} else if (fd < 0 && errno != EEXIST) {
			refuse(sf, name, "cannot be created");
			return -1;
		}
	}
	if (fd < 0) {
		fd = openat(sf->dirfd, name, base);
		if (fd < 0) {
			if (errno == ELOOP)
				refuse(sf, name, "is a symbolic link (not following it)");
			return -1;
		}
		const char *why = not_ours(fd, &sb);
		if (why) {
			refuse(sf, name, why);
			close(fd);
			errno = EACCES;
			return -1;
		}
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* --- the unix VFS's system calls, overridden for our names ------------------------ */

typedef int (*open_fn)(const char *, int, int);
typedef int (*path_fn)(const char *);
typedef int (*access_fn)(const char *, int);
typedef int (*stat_fn)(const char *, struct stat *);
typedef int (*opendir_fn)(const char *, int *);

static open_fn real_open;
static path_fn real_unlink;
static access_fn real_access;
static stat_fn real_stat;
static opendir_fn real_opendir;

static int w_open(const char *path, int flags, int mode)
{
	struct safefile *sf;
	int suffix, fd = -1;
	pthread_mutex_lock(&reg_mu);
	int r = lookup(path, &sf, &suffix);
	if (r == 1)
		fd = suffix < 0 ? fcntl(sf->fd, F_DUPFD_CLOEXEC, 3) : comp_open(sf, suffix, flags);
	pthread_mutex_unlock(&reg_mu);
	if (r == 0)
		return real_open(path, flags, mode);
	if (r < 0) {
		errno = ENOENT;
		return -1;
	}
	return fd;
}

static int w_unlink(const char *path)
{
	struct safefile *sf;
	int suffix, rc = -1;
	char name[NAME_MAX + 16];
	pthread_mutex_lock(&reg_mu);
	int r = lookup(path, &sf, &suffix);
	if (r == 1 && suffix >= 0) {
		comp_name(sf, suffix, name, sizeof(name));
		rc = unlinkat(sf->dirfd, name, 0);
	} else if (r) {
		errno = r == 1 ? EPERM : ENOENT;
	}
	pthread_mutex_unlock(&reg_mu);
	return r == 0 ? real_unlink(path) : rc;
}

/* stat() of our names: the file itself by its descriptor, a companion by
 * its name in the held directory, without following a link. */
static int w_stat(const char *path, struct stat *sb)
{
	struct safefile *sf;
	int suffix, rc = -1;
	char name[NAME_MAX + 16];
	pthread_mutex_lock(&reg_mu);
	int r = lookup(path, &sf, &suffix);
	if (r == 1 && suffix < 0) {
		rc = fstat(sf->fd, sb);
	} else if (r == 1) {
		comp_name(sf, suffix, name, sizeof(name));
		rc = fstatat(sf->dirfd, name, sb, AT_SYMLINK_NOFOLLOW);
	} else if (r < 0) {
		errno = ENOENT;
	}
	pthread_mutex_unlock(&reg_mu);
	return r == 0 ? real_stat(path, sb) : rc;
}

static int w_access(const char *path, int mode)
{
	struct stat sb;
	struct safefile *sf;
	int suffix;
	pthread_mutex_lock(&reg_mu);
	int r = lookup(path, &sf, &suffix);
	pthread_mutex_unlock(&reg_mu);
	if (r == 0)
		return real_access(path, mode);
	return w_stat(path, &sb); /* ours: it exists, and we may use it */
}

static int w_opendir(const char *path, int *pfd)
{
	struct safefile *sf;
	int suffix, fd = -1;
	pthread_mutex_lock(&reg_mu);
	int r = lookup(path, &sf, &suffix);
	if (r == 1)
		fd = fcntl(sf->dirfd, F_DUPFD_CLOEXEC, 3);
	pthread_mutex_unlock(&reg_mu);
	if (r == 0)
		return real_opendir(path, pfd);
	*pfd = fd;
	return fd >= 0 ? SQLITE_OK : SQLITE_CANTOPEN;
}

static sqlite3_vfs safe_vfs;
static sqlite3_vfs *unix_vfs;
static const char *install_why;

static int w_fullpath(sqlite3_vfs *vfs, const char *path, int n, char *out)
{
	if (path && !strncmp(path, SF_PREFIX, sizeof(SF_PREFIX) - 1)) {
		if ((int)strlen(path) >= n)
			return SQLITE_CANTOPEN;
		memcpy(out, path, strlen(path) + 1);
		return SQLITE_OK;
	}
	return unix_vfs->xFullPathname(unix_vfs, path, n, out);
}

static int override(const char *name, sqlite3_syscall_ptr fn, sqlite3_syscall_ptr *real)
{
	*real = unix_vfs->xGetSystemCall(unix_vfs, name);
	return *real && unix_vfs->xSetSystemCall(unix_vfs, name, fn) == SQLITE_OK ? 0 : -1;
}

static void install(void)
{
	sqlite3_initialize();
	unix_vfs = sqlite3_vfs_find("unix");
	if (!unix_vfs || unix_vfs->iVersion < 3 || !unix_vfs->xSetSystemCall) {
		install_why = "this SQLite has no unix VFS with replaceable system calls";
		return;
	}
	sqlite3_syscall_ptr p[5];
	if (override("open", (sqlite3_syscall_ptr)w_open, &p[0]) ||
	    override("unlink", (sqlite3_syscall_ptr)w_unlink, &p[1]) ||
	    override("access", (sqlite3_syscall_ptr)w_access, &p[2]) ||
	    override("stat", (sqlite3_syscall_ptr)w_stat, &p[3]) ||
	    override("openDirectory", (sqlite3_syscall_ptr)w_opendir, &p[4])) {
		install_why = "this SQLite does not let its file system calls be replaced";
		return;
	}
	real_open = (open_fn)p[0];
	real_unlink = (path_fn)p[1];
	real_access = (access_fn)p[2];
	real_stat = (stat_fn)p[3];
	real_opendir = (opendir_fn)p[4];
	safe_vfs = *unix_vfs;
	safe_vfs.zName = "ig-safe";
	safe_vfs.pNext = NULL;
	safe_vfs.xFullPathname = w_fullpath;
	if (sqlite3_vfs_register(&safe_vfs, 0) != SQLITE_OK)
		install_why = "cannot register the ig-safe VFS";
}

const char *safefile_vfs(const char **why)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, install);
	if (install_why && why)
		*why = install_why;
	return install_why ? NULL : safe_vfs.zName;
}

/* Does name in dirfd still refer to the inode (dev, ino)? */
static int names(int dirfd, const char *name, dev_t dev, ino_t ino)
{
	struct stat sb;
	return !fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) && sb.st_dev == dev &&
	       sb.st_ino == ino;
}

/* --- opening ------------------------------------------------------------------------ */

/* "cannot VERB PATH: why" into err; returns rc. */
static int fail(char *err, size_t len, int rc, const struct safefile *sf, const char *fmt, ...)
{
	char why[PATH_MAX + 128];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (err && len)
		snprintf(err, len, "cannot %s %s: %s", sf->verb, sf->path, why);
	return rc;
}

/* The directory of path, held open, and checked: not writable by group or
 * others unless sticky. */
static int open_dir(const char *path, struct safefile *sf, char *err, size_t len)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	const char *base = slash ? slash + 1 : path;
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return fail(err, len, -EISDIR, sf, "is a directory");
	if (strlen(base) > NAME_MAX)
		return fail(err, len, -ENAMETOOLONG, sf, "file name too long");
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		return fail(err, len, -ENAMETOOLONG, sf, "path too long");
	snprintf(sf->base, sizeof(sf->base), "%s", base);
	sf->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sf->dirfd < 0)
		return fail(err, len, -errno, sf, "%s", strerror(errno));
	struct stat sb;
	if (fstat(sf->dirfd, &sb))
		return fail(err, len, -errno, sf, "%s", strerror(errno));
	if ((sb.st_mode & (S_IWGRP | S_IWOTH)) && !(sb.st_mode & S_ISVTX))
		return fail(err, len, -EPERM, sf,
			    "its directory %s is writable by %s and has no sticky bit (another "
			    "user could swap the file for a link); choose another directory",
			    dir, sb.st_mode & S_IWOTH ? "everyone" : "its group");
	return 0;
}

/* Companions beside a file we just created are left from another file of
 * the same name: ours are removed (SQLite would take a stale WAL for this
 * file's), anything else is refused. */
static int clear_companions(struct safefile *sf, char *err, size_t len)
{
	for (int i = 0; i < NSUFFIX; i++) {
		char name[NAME_MAX + 16];
		struct stat sb;
		comp_name(sf, i, name, sizeof(name));
		if (fstatat(sf->dirfd, name, &sb, AT_SYMLINK_NOFOLLOW))
			continue;
		if (!S_ISREG(sb.st_mode) || (sb.st_uid != geteuid() && sb.st_uid != 0) ||
		    sb.st_nlink != 1)
			return fail(err, len, -EEXIST, sf,
				    "%s exists beside it and is not a file of ours", name);
		if (unlinkat(sf->dirfd, name, 0) && errno != ENOENT)
			return fail(err, len, -errno, sf, "cannot remove the stale %s: %s", name,
				    strerror(errno));
	}
	return 0;
}

/* Creates the file, or (append) opens the existing one, and checks it. */
static int open_file(struct safefile *sf, enum safefile_mode mode, char *err, size_t len)
{
	const int fl = O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
	sf->fd = openat(sf->dirfd, sf->base, fl | O_CREAT | O_EXCL, 0600);
	sf->created = sf->fd >= 0;
	if (sf->fd < 0 && errno == EEXIST && mode == SAFEFILE_CREATE)
		return fail(err, len, -EEXIST, sf, "file exists");
	if (sf->fd < 0 && errno == EEXIST)
		sf->fd = openat(sf->dirfd, sf->base, fl);
	if (sf->fd < 0) {
		int e = errno;
		if (e == ELOOP)
			return fail(err, len, -ELOOP, sf, "is a symbolic link (not following it)");
		return fail(err, len, -e, sf, "%s", e == EISDIR ? "is a directory" : strerror(e));
	}
	struct stat sb;
	const char *why = not_ours(sf->fd, &sb);
	if (why)
		return fail(err, len, -EPERM, sf, "exists and %s", why);
	fcntl(sf->fd, F_SETFL, fcntl(sf->fd, F_GETFL) & ~O_NONBLOCK);
	sf->dev = sb.st_dev;
	sf->ino = sb.st_ino;
	sf->size = sb.st_size;
	return sf->created ? clear_companions(sf, err, len) : 0;
}

static int enroll(struct safefile *sf)
{
	pthread_mutex_lock(&reg_mu);
	int slot = -1;
	for (int i = 0; i < SF_MAX && slot < 0; i++)
		if (!reg[i])
			slot = i;
	if (slot >= 0)
		reg[slot] = sf;
	pthread_mutex_unlock(&reg_mu);
	return slot >= 0 ? 0 : -EMFILE;
}

/* A handle for path, or NULL with "cannot VERB PATH: out of memory". */
static struct safefile *sf_new(const char *path, const char *verb, char *err, size_t len)
{
	struct safefile *sf = calloc(1, sizeof(*sf));
	if (!sf || !(sf->path = strdup(path))) {
		free(sf);
		if (err && len)
			snprintf(err, len, "cannot %s %s: out of memory", verb, path);
		return NULL;
	}
	sf->fd = sf->dirfd = -1;
	sf->verb = verb;
	return sf;
}

int safefile_open(const char *path, enum safefile_mode mode, struct safefile **out, char *err,
		  size_t errlen)
{
	const char *why = NULL;
	*out = NULL;
	if (!safefile_vfs(&why)) {
		if (err && errlen)
			snprintf(err, errlen, "cannot record to %s: %s", path, why);
		return -ENOSYS;
	}
	struct safefile *sf = sf_new(path, "record to", err, errlen);
	if (!sf)
		return -ENOMEM;
	int rc = open_dir(path, sf, err, errlen);
	if (!rc)
		rc = open_file(sf, mode, err, errlen);
	if (!rc && (rc = enroll(sf)))
		fail(err, errlen, rc, sf, "too many recordings open at once");
	if (rc) {
		if (sf->created)
			safefile_unlink(sf);
		safefile_close(sf);
		return rc;
	}
	snprintf(sf->dbname, sizeof(sf->dbname), SF_PREFIX "%d", sf->fd);
	*out = sf;
	return 0;
}

/* --- plain outputs (exports) --------------------------------------------------------- */

/* What the name holds now, if anything: refused unless a regular file of
 * ours (the rule of an existing recording), so that the rename never
 * replaces a link, a device, a FIFO or somebody else's file. */
static int check_target(struct safefile *sf, char *err, size_t len)
{
	struct stat sb;
	if (fstatat(sf->dirfd, sf->base, &sb, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : fail(err, len, -errno, sf, "%s", strerror(errno));
	if (S_ISLNK(sb.st_mode))
		return fail(err, len, -ELOOP, sf,
			    "is a symbolic link (not following it, not replacing it)");
	if (S_ISDIR(sb.st_mode))
		return fail(err, len, -EISDIR, sf, "is a directory");
	const char *why = not_ours_st(&sb);
	return why ? fail(err, len, -EPERM, sf, "exists and %s", why) : 0;
}

int safefile_out_open(const char *path, struct safefile **out, char *err, size_t errlen)
{
	*out = NULL;
	struct safefile *sf = sf_new(path, "write", err, errlen);
	if (!sf)
		return -ENOMEM;
	struct stat sb;
	int rc = open_dir(path, sf, err, errlen);
	if (!rc)
		rc = check_target(sf, err, errlen);
	if (!rc && (size_t)snprintf(sf->tmp, sizeof(sf->tmp), "%s.tmp%d", sf->base,
				    (int)getpid()) >= sizeof(sf->tmp))
		rc = fail(err, errlen, -ENAMETOOLONG, sf, "file name too long");
	if (!rc) {
		sf->fd = openat(sf->dirfd, sf->tmp,
				O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (sf->fd < 0 || fstat(sf->fd, &sb))
			rc = fail(err, errlen, -errno, sf, "cannot create %s: %s", sf->tmp,
				  strerror(errno));
	}
	if (rc) {
		if (sf->fd >= 0)
			unlinkat(sf->dirfd, sf->tmp, 0);
		safefile_close(sf);
		return rc;
	}
	sf->created = 1;
	sf->dev = sb.st_dev;
	sf->ino = sb.st_ino;
	*out = sf;
	return 0;
}

int safefile_fd(const struct safefile *sf)
{
	return sf->fd;
}

int safefile_out_commit(struct safefile *sf, char *err, size_t errlen)
{
	/* again: the name may have been taken while the file was written */
	int rc = check_target(sf, err, errlen);
	if (!rc && !names(sf->dirfd, sf->tmp, sf->dev, sf->ino))
		rc = fail(err, errlen, -ESTALE, sf,
			  "%s was removed or replaced while it was written", sf->tmp);
	if (!rc && renameat(sf->dirfd, sf->tmp, sf->dirfd, sf->base))
		rc = fail(err, errlen, -errno, sf, "cannot rename %s into place: %s", sf->tmp,
			  strerror(errno));
	if (!rc) {
		sf->tmp[0] = 0; /* in place: nothing left to remove */
		sf->created = 0;
	}
	return rc;
}

const char *safefile_db_name(const struct safefile *sf)
{
	return sf->dbname;
}

const char *safefile_path(const struct safefile *sf)
{
	return sf->path;
}

int safefile_created(const struct safefile *sf)
{
	return sf->created;
}

off_t safefile_size(const struct safefile *sf)
{
	return sf->size;
}

int safefile_still_there(const struct safefile *sf)
{
	return names(sf->dirfd, sf->base, sf->dev, sf->ino);
}

void safefile_unlink(struct safefile *sf)
{
	if (sf->fd < 0 || sf->dirfd < 0)
		return;
	if (sf->tmp[0]) { /* a plain output not yet in place */
		if (names(sf->dirfd, sf->tmp, sf->dev, sf->ino))
			unlinkat(sf->dirfd, sf->tmp, 0);
		return;
	}
	for (int i = 0; i < NSUFFIX; i++) {
		char name[NAME_MAX + 16];
		comp_name(sf, i, name, sizeof(name));
		if (sf->comp_made[i] && names(sf->dirfd, name, sf->comp_dev[i], sf->comp_ino[i]))
			unlinkat(sf->dirfd, name, 0);
	}
	if (sf->created && safefile_still_there(sf))
		unlinkat(sf->dirfd, sf->base, 0);
}

void safefile_close(struct safefile *sf)
{
	if (!sf)
		return;
	pthread_mutex_lock(&reg_mu);
	for (int i = 0; i < SF_MAX; i++)
		if (reg[i] == sf)
			reg[i] = NULL;
	pthread_mutex_unlock(&reg_mu);
	if (sf->fd >= 0)
		close(sf->fd);
	if (sf->dirfd >= 0)
		close(sf->dirfd);
	free(sf->path);
	free(sf);
}
