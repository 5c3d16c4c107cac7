/* Read-only recordings through one descriptor, with a hot WAL or journal
 * applied in memory, and the "ig-ro" SQLite VFS that reads them. The WAL
 * and journal formats are SQLite's (https://sqlite.org/fileformat2.html);
 * see rofile.h. */
#include "store/rofile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RO_MAX 64
#define RO_PREFIX "/proc/self/fd/"
#define WAL_HDR 32
#define WAL_FRAME_HDR 24

/* One recovered page: where its content lives in a companion. */
struct ovl {
	uint32_t pgno;
	uint32_t seq; /* frame or record index: the later (WAL) or first (journal) wins */
	off_t off;
};

struct rofile {
	int fd;
	int cfd;       /* the companion the overlay reads from, -1 = none */
	off_t size;    /* as SQLite sees it */
	uint32_t page; /* page size of the overlay */
	struct ovl *ov;
	size_t nov;
	char note[256];
	char name[40];
};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int pow2_in(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v >= lo && v <= hi && !(v & (v - 1));
}

/* --- reading the view ------------------------------------------------------------ */

static const struct ovl *ov_find(const struct rofile *rf, uint32_t pgno)
{
	size_t lo = 0, hi = rf->nov;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rf->ov[mid].pgno < pgno)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < rf->nov && rf->ov[lo].pgno == pgno ? &rf->ov[lo] : NULL;
}

static ssize_t pread_full(int fd, void *buf, size_t n, off_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, off + (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

ssize_t rofile_read(const struct rofile *rf, void *buf, size_t n, off_t off)
{
	if (off < 0)
		return -EINVAL;
	if (off >= rf->size)
		return 0;
	if ((off_t)n > rf->size - off)
		n = (size_t)(rf->size - off);
	if (!rf->nov)
		return pread_full(rf->fd, buf, n, off);
	size_t done = 0;
	while (done < n) {
		off_t at = off + (off_t)done;
		uint32_t pgno = (uint32_t)(at / rf->page) + 1;
		off_t in = at % rf->page;
		size_t part =
		    (size_t)(rf->page - in) < n - done ? (size_t)(rf->page - in) : n - done;
		const struct ovl *o = ov_find(rf, pgno);
		ssize_t r = o ? pread_full(rf->cfd, (char *)buf + done, part, o->off + in)
			      : pread_full(rf->fd, (char *)buf + done, part, at);
		if (r < 0)
			return r;
		if ((size_t)r < part) /* a hole past the end of the file: zeros */
			memset((char *)buf + done + r, 0, part - (size_t)r);
		done += part;
	}
	return (ssize_t)done;
}

/* --- recovering a WAL --------------------------------------------------------------- */

/* SQLite's WAL checksum over n bytes (a multiple of 8), words read in the
 * byte order the WAL's magic number names. */
static void wal_cksum(int big, const unsigned char *p, size_t n, uint32_t s[2])
{
	for (size_t i = 0; i + 8 <= n; i += 8) {
		uint32_t a, b;
		if (big) {
			a = be32(p + i);
			b = be32(p + i + 4);
		} else {
			a = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 | (uint32_t)p[i + 2] << 16 |
			    (uint32_t)p[i + 3] << 24;
			b = (uint32_t)p[i + 4] | (uint32_t)p[i + 5] << 8 |
			    (uint32_t)p[i + 6] << 16 | (uint32_t)p[i + 7] << 24;
		}
		s[0] += a + s[1];
		s[1] += b + s[0];
	}
}

static int ov_add(struct rofile *rf, size_t *cap, uint32_t pgno, uint32_t seq, off_t off)
{
	if (rf->nov == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct ovl *n = realloc(rf->ov, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		rf->ov = n;
		*cap = nc;
	}
	rf->ov[rf->nov++] = (struct ovl){.pgno = pgno, .seq = seq, .off = off};
	return 0;
}

static int cmp_ovl(const void *a, const void *b)
{
	const struct ovl *x = a, *y = b;
	if (x->pgno != y->pgno)
		return x->pgno < y->pgno ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sorts the overlay by page and keeps one entry per page: the last (WAL)
 * or the first (journal). */
static void ov_settle(struct rofile *rf, int keep_last)
{
	if (!rf->nov)
		return;
	qsort(rf->ov, rf->nov, sizeof(*rf->ov), cmp_ovl);
	size_t w = 0;
	for (size_t i = 0; i < rf->nov; i++) {
		if (w && rf->ov[w - 1].pgno == rf->ov[i].pgno) {
			if (keep_last)
				rf->ov[w - 1] = rf->ov[i];
			continue;
		}
		rf->ov[w++] = rf->ov[i];
	}
	rf->nov = w;
}

/* The valid frames of the WAL up to its last commit (possibly none): 1, or
 * 0 when the WAL has no valid header, or -ENOMEM. *dbpages gets the
 * database size the last commit names. */
static int wal_frames(struct rofile *rf, int fd, off_t len, uint32_t *dbpages)
{
	unsigned char h[WAL_HDR];
	if (pread_full(fd, h, sizeof(h), 0) != WAL_HDR)
		return 0;
	uint32_t magic = be32(h), page = be32(h + 8), s[2] = {0, 0};
	if ((magic & ~1u) != 0x377f0682 || be32(h + 4) != 3007000 || !pow2_in(page, 512, 65536))
		return 0;
	int big = magic & 1;
	wal_cksum(big, h, 24, s);
	if (s[0] != be32(h + 24) || s[1] != be32(h + 28))
		return 0;
	unsigned char *fr = malloc(WAL_FRAME_HDR + page);
	if (!fr)
		return -ENOMEM;
	size_t cap = 0, committed = 0;
	rf->page = page;
	uint32_t seq = 0;
	for (off_t off = WAL_HDR; off + WAL_FRAME_HDR + page <= len; off += WAL_FRAME_HDR + page) {
		if (pread_full(fd, fr, WAL_FRAME_HDR + page, off) !=
		    (ssize_t)(WAL_FRAME_HDR + page))
			break;
		uint32_t pgno = be32(fr), commit = be32(fr + 4);
		if (!pgno || memcmp(fr + 8, h + 16, 8))
			break; /* salts of another generation: the end */
		wal_cksum(big, fr, 8, s);
		wal_cksum(big, fr + WAL_FRAME_HDR, page, s);
		if (s[0] != be32(fr + 16) || s[1] != be32(fr + 20))
			break;
		if (ov_add(rf, &cap, pgno, seq++, off + WAL_FRAME_HDR)) {
			free(fr);
			return -ENOMEM;
		}
		if (commit) {
			committed = rf->nov;
			*dbpages = commit;
		}
	}
	free(fr);
	rf->nov = committed; /* frames after the last commit do not count */
	return 1;
}

/* --- recovering a rollback journal ---------------------------------------------------- */

static const unsigned char jmagic[8] = {0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7};

/* The original pages a hot journal holds, segment after segment, until a
 * header or a checksum fails. *dbpages gets the size before the
 * transaction. 0 or -ENOMEM. */
static int jnl_records(struct rofile *rf, int fd, off_t len, uint32_t *dbpages)
{
	unsigned char h[28];
	off_t off = 0;
	size_t cap = 0;
	uint32_t seq = 0, sector = 0, page = 0;
	unsigned char *rec = NULL;
	while (off + 28 <= len && pread_full(fd, h, sizeof(h), off) == 28 &&
	       !memcmp(h, jmagic, 8)) {
		uint32_t nrec = be32(h + 8), init = be32(h + 12);
		if (!off) { /* the first header sets the sizes and the original size */
			sector = be32(h + 20);
			page = be32(h + 24);
			if (!pow2_in(sector, 32, 65536) || !pow2_in(page, 512, 65536))
				break;
			*dbpages = be32(h + 16);
			rf->page = page;
			if (!(rec = malloc(page + 8)))
				return -ENOMEM;
		}
		off += sector;
		if (nrec == 0xffffffffu)
			nrec = (uint32_t)((len - off) / (page + 8));
		for (uint32_t i = 0; i < nrec; i++, off += page + 8) {
			if (off + page + 8 > len ||
			    pread_full(fd, rec, page + 8, off) != (ssize_t)(page + 8))
				goto done;
			uint32_t sum = init;
			for (uint32_t k = page - 200; k > 0 && k < page; k -= 200)
				sum += rec[4 + k];
			uint32_t pgno = be32(rec);
			if (!pgno || sum != be32(rec + 4 + page))
				goto done;
			if (ov_add(rf, &cap, pgno, seq++, off + 4)) {
				free(rec);
				return -ENOMEM;
			}
		}
		off = (off + sector - 1) / sector * sector; /* the next header */
	}
done:
	free(rec);
	return 0;
}

/* --- the companion beside the file ------------------------------------------------ */

/* Opens the real path's companion (NOFOLLOW, non-blocking, regular files
 * only). -1 when there is none to use. */
static int open_companion(const char *real, const char *suffix, off_t *len)
{
	char p[PATH_MAX + 16];
	struct stat sb;
	if (snprintf(p, sizeof(p), "%s%s", real, suffix) >= (int)sizeof(p))
		return -1;
	int fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_size <= 0) {
		close(fd);
		return -1;
	}
	*len = sb.st_size;
	return fd;
}

static void human(char *out, size_t len, off_t bytes)
{
	if (bytes >= (1 << 20))
		snprintf(out, len, "%lld MiB", (long long)(bytes >> 20));
	else
		snprintf(out, len, "%lld bytes", (long long)bytes);
}

/* Looks beside the file for a hot WAL, else a hot journal, and builds the
 * overlay. 0 or -ENOMEM. */
static int recover(struct rofile *rf)
{
	char real[PATH_MAX], self[64], sz[32];
	snprintf(self, sizeof(self), RO_PREFIX "%d", rf->fd);
	ssize_t n = readlink(self, real, sizeof(real) - 1);
	if (n <= 0 || real[0] != '/')
		return 0; /* no name (deleted, a memfd): nothing beside it */
	real[n] = 0;
	static const char *const kinds[] = {"-wal", "-journal"};
	for (int k = 0; k < 2; k++) {
		off_t len = 0;
		int fd = open_companion(real, kinds[k], &len);
		if (fd < 0)
			continue;
		human(sz, sizeof(sz), len);
		if (len > ROFILE_MAX_COMPANION) {
			snprintf(rf->note, sizeof(rf->note),
				 "its %s of %s is larger than %lld MiB and was not read: the file "
				 "is read without it",
				 kinds[k] + 1, sz, ROFILE_MAX_COMPANION >> 20);
			close(fd);
			return 0;
		}
		uint32_t dbpages = 0;
		int rc =
		    k == 0 ? wal_frames(rf, fd, len, &dbpages) : jnl_records(rf, fd, len, &dbpages);
		if (rc < 0) {
			close(fd);
			return rc;
		}
		if (k == 0 && rc == 0) { /* SQLite would take it for an empty WAL too */
			snprintf(rf->note, sizeof(rf->note),
				 "its WAL (%s) has no valid header: the file is read without it",
				 sz);
			close(fd);
			return 0;
		}
		if (k == 1 && !dbpages && !rf->nov) {
			close(fd); /* not a hot journal (zeroed header) */
			continue;
		}
		ov_settle(rf, k == 0);
		while (rf->nov && rf->ov[rf->nov - 1].pgno > dbpages)
			rf->nov--;	  /* pages past the recovered end */
		if (!rf->nov && k == 0) { /* nothing committed since the last checkpoint */
			close(fd);
			return 0;
		}
		rf->size = (off_t)dbpages * rf->page; /* a journal: the size before */
		if (rf->nov)
			rf->cfd = fd;
		else
			close(fd);
		return 0;
	}
	return 0;
}

/* --- registry and VFS ---------------------------------------------------------------- */

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct rofile *reg[RO_MAX];

static struct rofile *lookup(const char *name)
{
	struct rofile *rf = NULL;
	if (!name || strncmp(name, RO_PREFIX, sizeof(RO_PREFIX) - 1))
		return NULL;
	pthread_mutex_lock(&reg_mu);
	for (int i = 0; i < RO_MAX && !rf; i++)
		if (reg[i] && !strcmp(reg[i]->name, name))
			rf = reg[i];
	pthread_mutex_unlock(&reg_mu);
	return rf;
}

struct ro_file {
	sqlite3_file base;
	struct rofile *rf;
};

static int ro_close(sqlite3_file *f)
{
	return SQLITE_OK;
}

static int ro_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off)
{
	ssize_t r = rofile_read(((struct ro_file *)f)->rf, buf, (size_t)amt, (off_t)off);
	if (r < 0)
		return SQLITE_IOERR_READ;
	if (r < amt) {
		memset((char *)buf + r, 0, (size_t)(amt - r));
		return SQLITE_IOERR_SHORT_READ;
	}
	return SQLITE_OK;
}

static int ro_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o)
{
	return SQLITE_READONLY;
}

static int ro_truncate(sqlite3_file *f, sqlite3_int64 n)
{
	return SQLITE_READONLY;
}

static int ro_sync(sqlite3_file *f, int flags)
{
	return SQLITE_OK;
}

static int ro_size(sqlite3_file *f, sqlite3_int64 *n)
{
	*n = rofile_size(((struct ro_file *)f)->rf);
	return SQLITE_OK;
}

static int ro_lock(sqlite3_file *f, int lock)
{
	return SQLITE_OK;
}

static int ro_reserved(sqlite3_file *f, int *out)
{
	*out = 0;
	return SQLITE_OK;
}

static int ro_fcntl(sqlite3_file *f, int op, void *arg)
{
	return SQLITE_NOTFOUND;
}

static int ro_sector(sqlite3_file *f)
{
	return 4096;
}

static int ro_caps(sqlite3_file *f)
{
	return SQLITE_IOCAP_IMMUTABLE;
}

static const sqlite3_io_methods ro_methods = {
    .iVersion = 1,
    .xClose = ro_close,
    .xRead = ro_read,
    .xWrite = ro_write,
    .xTruncate = ro_truncate,
    .xSync = ro_sync,
    .xFileSize = ro_size,
    .xLock = ro_lock,
    .xUnlock = ro_lock,
    .xCheckReservedLock = ro_reserved,
    .xFileControl = ro_fcntl,
    .xSectorSize = ro_sector,
    .xDeviceCharacteristics = ro_caps,
};

static sqlite3_vfs ro_vfs;
static sqlite3_vfs *unix_vfs;

/* The main file: ours when registered; temporary files (sorting) go to the
 * unix VFS; anything else named after ours (a journal) does not exist. */
static int v_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags, int *out)
{
	f->pMethods = NULL;
	if (!(flags & SQLITE_OPEN_MAIN_DB) || !name)
		return unix_vfs->xOpen(unix_vfs, name, f, flags, out);
	struct rofile *rf = lookup(name);
	if (!rf || (flags & SQLITE_OPEN_READWRITE))
		return SQLITE_CANTOPEN;
	((struct ro_file *)f)->rf = rf;
	f->pMethods = &ro_methods;
	if (out)
		*out = SQLITE_OPEN_READONLY;
	return SQLITE_OK;
}

static int v_delete(sqlite3_vfs *v, const char *name, int sync)
{
	if (name && !strncmp(name, RO_PREFIX, sizeof(RO_PREFIX) - 1))
		return SQLITE_IOERR_DELETE;
	return unix_vfs->xDelete(unix_vfs, name, sync);
}

static int v_access(sqlite3_vfs *v, const char *name, int flags, int *res)
{
	if (name && !strncmp(name, RO_PREFIX, sizeof(RO_PREFIX) - 1)) {
		*res = 0; /* no journal, no WAL: the overlay has them already */
		return SQLITE_OK;
	}
	return unix_vfs->xAccess(unix_vfs, name, flags, res);
}

static int v_fullpath(sqlite3_vfs *v, const char *name, int n, char *out)
{
	if (name && !strncmp(name, RO_PREFIX, sizeof(RO_PREFIX) - 1)) {
		if ((int)strlen(name) >= n)
			return SQLITE_CANTOPEN;
		memcpy(out, name, strlen(name) + 1);
		return SQLITE_OK;
	}
	return unix_vfs->xFullPathname(unix_vfs, name, n, out);
}

static int v_random(sqlite3_vfs *v, int n, char *out)
{
	return unix_vfs->xRandomness(unix_vfs, n, out);
}

static int v_sleep(sqlite3_vfs *v, int us)
{
	return unix_vfs->xSleep(unix_vfs, us);
}

static int v_time(sqlite3_vfs *v, double *t)
{
	return unix_vfs->xCurrentTime(unix_vfs, t);
}

static int v_time64(sqlite3_vfs *v, sqlite3_int64 *t)
{
	return unix_vfs->xCurrentTimeInt64(unix_vfs, t);
}

static int v_lasterr(sqlite3_vfs *v, int n, char *out)
{
	return unix_vfs->xGetLastError(unix_vfs, n, out);
}

static void install(void)
{
	sqlite3_initialize();
	unix_vfs = sqlite3_vfs_find("unix");
	if (!unix_vfs || unix_vfs->iVersion < 2)
		return;
	ro_vfs = (sqlite3_vfs){
	    .iVersion = 2,
	    .szOsFile = unix_vfs->szOsFile > (int)sizeof(struct ro_file)
			    ? unix_vfs->szOsFile
			    : (int)sizeof(struct ro_file),
	    .mxPathname = unix_vfs->mxPathname,
	    .zName = "ig-ro",
	    .xOpen = v_open,
	    .xDelete = v_delete,
	    .xAccess = v_access,
	    .xFullPathname = v_fullpath,
	    .xRandomness = v_random,
	    .xSleep = v_sleep,
	    .xCurrentTime = v_time,
	    .xGetLastError = v_lasterr,
	    .xCurrentTimeInt64 = v_time64,
	};
	if (sqlite3_vfs_register(&ro_vfs, 0) != SQLITE_OK)
		ro_vfs.zName = NULL;
}

const char *rofile_vfs(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, install);
	return ro_vfs.zName;
}

/* --- opening -------------------------------------------------------------------------- */

int rofile_open(const char *path, struct rofile **out, char *why, size_t len)
{
	*out = NULL;
	if (!rofile_vfs()) {
		snprintf(why, len, "this SQLite has no unix VFS to build on");
		return -ENOSYS;
	}
	struct rofile *rf = calloc(1, sizeof(*rf));
	if (!rf) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	rf->cfd = -1;
	rf->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat sb;
	int rc = 0;
	if (rf->fd < 0 || fstat(rf->fd, &sb)) {
		rc = -errno;
		snprintf(why, len, "%s", strerror(errno));
	} else if (!S_ISREG(sb.st_mode)) {
		rc = -EINVAL;
		snprintf(why, len, "not a regular file");
	}
	if (!rc) {
		rf->size = sb.st_size;
		snprintf(rf->name, sizeof(rf->name), RO_PREFIX "%d", rf->fd);
		if ((rc = recover(rf)))
			snprintf(why, len, "out of memory");
	}
	pthread_mutex_lock(&reg_mu);
	int slot = -1;
	for (int i = 0; !rc && i < RO_MAX && slot < 0; i++)
		if (!reg[i])
			reg[slot = i] = rf;
	pthread_mutex_unlock(&reg_mu);
	if (!rc && slot < 0) {
		rc = -EMFILE;
		snprintf(why, len, "too many files open at once");
	}
	if (rc) {
		rofile_close(rf);
		return rc;
	}
	*out = rf;
	return 0;
}

const char *rofile_db_name(const struct rofile *rf)
{
	return rf->name;
}

off_t rofile_size(const struct rofile *rf)
{
	return rf->size;
}

size_t rofile_recovered(const struct rofile *rf)
{
	return rf->nov;
}

const char *rofile_note(const struct rofile *rf)
{
	return rf->note;
}

void rofile_close(struct rofile *rf)
{
	if (!rf)
		return;
	pthread_mutex_lock(&reg_mu);
	for (int i = 0; i < RO_MAX; i++)
		if (reg[i] == rf)
			reg[i] = NULL;
	pthread_mutex_unlock(&reg_mu);
	if (rf->fd >= 0)
		close(rf->fd);
	if (rf->cfd >= 0)
		close(rf->cfd);
	free(rf->ov);
	free(rf);
}
