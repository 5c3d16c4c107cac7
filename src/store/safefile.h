/* Output files opened safely by a process that may run as root in
 * somebody else's directory (recordings, flight saves and, through
 * safefile_out_open, exports): the file is created (or, to append, opened)
 * once, relative to a held directory descriptor, never through a symbolic
 * link, and SQLite works on that one descriptor without ever looking the
 * name up again. docs/recording.md ("Safe files") explains the design.
 *
 * How SQLite gets the descriptor: the file is handed to SQLite by the name
 * "/proc/self/fd/N" through the VFS safefile_vfs() ("ig-safe": the unix
 * VFS with its full-pathname step left verbatim for such names). The unix
 * VFS's open, stat, access, unlink and directory-open calls are overridden
 * (sqlite3_vfs.xSetSystemCall) so that, for a registered N, the main file
 * is a dup() of the held descriptor and the companions (N-wal, N-shm,
 * N-journal) are opened relative to the held directory with O_NOFOLLOW,
 * created with O_CREAT|O_EXCL mode 0600, and an existing one is used only
 * when it is a regular file with one link owned by the caller or root. A
 * name of that form that is not registered fails (ENOENT); every other name
 * passes through untouched. Should anything slip past the overrides, the
 * names it would reach are the held inode itself or /proc/self/fd/N-wal,
 * where nothing can be created. */
#ifndef IG_SAFEFILE_H
#define IG_SAFEFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct safefile;

enum safefile_mode {
	SAFEFILE_CREATE = 1, /* the file must not exist (O_CREAT|O_EXCL) */
	SAFEFILE_APPEND = 2, /* create it, or open an existing regular file of ours */
};

/* Opens path for writing a recording. The directory must not be writable
 * by group or others unless it has the sticky bit; the last component must
 * not be a symbolic link; a new file is created 0600; an existing file
 * (SAFEFILE_APPEND) must be a regular file with one link, owned by the
 * caller or root; companions left beside a new file are removed when they
 * are ours and refused otherwise. Returns 0 and *out, or -errno with one
 * line in err ("cannot record to PATH: ..."). */
int safefile_open(const char *path, enum safefile_mode mode, struct safefile **out, char *err,
		  size_t errlen);
/* The VFS to open safefile names with, or NULL (with a reason in why) when
 * this SQLite does not let the overrides be installed. */
const char *safefile_vfs(const char **why);
/* The name SQLite opens the file by: "/proc/self/fd/N" (owned by sf). */
const char *safefile_db_name(const struct safefile *sf);
/* The path as given (owned by sf). */
const char *safefile_path(const struct safefile *sf);
/* 1 when safefile_open created the file; its size when opened. */
int safefile_created(const struct safefile *sf);
off_t safefile_size(const struct safefile *sf);
/* 1 when the path still names the file sf holds (not removed, renamed or
 * replaced by someone else since it was opened). */
int safefile_still_there(const struct safefile *sf);
/* Removes the file and the companions sf created, each only when its name
 * still refers to what sf created; for a plain output not yet committed,
 * its temporary file. */
void safefile_unlink(struct safefile *sf);
/* Why the last companion open of sf was refused ("" when none): for error
 * messages after SQLite says "unable to open" (thread-local copy). */
const char *safefile_refusal(struct safefile *sf);
/* A plain output file (an export) under the same rules: the directory
 * check of safefile_open; what path names already must be a regular file
 * of the caller's (or root's) with one link, never a link, a directory, a
 * FIFO or a device; the data goes to "PATH.tmpPID", created O_EXCL,
 * O_NOFOLLOW, mode 0600 beside it, which safefile_out_commit renames into
 * place. Returns 0 and *out, or -errno with one line in err ("cannot write
 * PATH: ..."). Write through safefile_fd (dup it for a FILE); when the
 * output fails, safefile_unlink removes the temporary file. */
int safefile_out_open(const char *path, struct safefile **out, char *err, size_t errlen);
/* The descriptor written to (owned by sf). */
int safefile_fd(const struct safefile *sf);
/* Renames the temporary file to PATH, after checking PATH again. 0, or
 * -errno with one line in err (the temporary file is left to
 * safefile_unlink). */
int safefile_out_commit(struct safefile *sf, char *err, size_t errlen);
/* Closes the descriptors and forgets the name: call after sqlite3_close.
 * safefile_close(NULL) is a no-op. */
void safefile_close(struct safefile *sf);

#endif
