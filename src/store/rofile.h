/* Recordings opened for replay: one read-only descriptor that SQLite reads
 * through the VFS rofile_vfs() ("ig-ro") by the name "/proc/self/fd/N", so
 * the path the user gave is never parsed as a URI and never looked up
 * again (a path holding '%', '?' or '#' opens that file). The file is
 * immutable to SQLite: no lock, no journal, nothing is created beside it.
 *
 * A file left with a hot WAL or rollback journal (a recorder killed with
 * -9) is recovered in memory, without copying anything: the valid frames
 * of the WAL up to its last commit (checksums and salts checked as SQLite
 * does), or the original pages saved in the journal, form an overlay of
 * page -> (companion, offset) that reads consult before the file. Memory
 * grows with the number of frames, not with their size; a WAL or journal
 * larger than ROFILE_MAX_COMPANION is not read (the file is read without
 * it, and rofile_note says so). Nothing is written anywhere, so nothing is
 * left behind by a kill -9. */
#ifndef IG_ROFILE_H
#define IG_ROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ROFILE_MAX_COMPANION (1ll << 30) /* 1 GiB */

struct rofile;

/* Opens path read-only (a symbolic link is followed: reading through one
 * is harmless; a FIFO does not block) and looks for a WAL or journal
 * beside the file it names. Returns 0 and *out, or -errno with the reason
 * (no path prefix) in why. */
int rofile_open(const char *path, struct rofile **out, char *why, size_t len);
/* The VFS to open rofile names with (registered on first use), or NULL. */
const char *rofile_vfs(void);
/* "/proc/self/fd/N", owned by rf. */
const char *rofile_db_name(const struct rofile *rf);
/* Size of the file as SQLite sees it (recovered pages applied), bytes. */
off_t rofile_size(const struct rofile *rf);
/* Reads n bytes at off of that view; returns the bytes read (short at the
 * end) or -errno. */
ssize_t rofile_read(const struct rofile *rf, void *buf, size_t n, off_t off);
/* Pages taken from a WAL or journal (0 when none was applied). */
size_t rofile_recovered(const struct rofile *rf);
/* One line about a companion that was not used ("its WAL of 512 MiB is
 * larger than 1 GiB..."), or "" (owned by rf). */
const char *rofile_note(const struct rofile *rf);
/* Closes: after sqlite3_close. rofile_close(NULL) is a no-op. */
void rofile_close(struct rofile *rf);

#endif
