/* A directory of rotated recordings (`ingero-top record`, docs/recording.md
 * "Always-on recording"): the names that sort by time
 * (ingero-2026-11-27T09-00-00.db, the UTC second the file starts), the
 * list of a directory or a glob in time order, the files a time range
 * needs, and which of the oldest to prune for a size cap and a retention.
 * Each file is a normal recording (store/rec.h); this module only names,
 * lists and removes them. Pure but for recdir_is_set, recdir_list and
 * recdir_remove, which look at the file system. */
#ifndef IG_RECDIR_H
#define IG_RECDIR_H

#include <stddef.h>
#include <stdint.h>

#define RECDIR_NAME_LEN 32 /* "ingero-YYYY-MM-DDTHH-MM-SS.db" and its NUL */

/* The name of the file that starts at Unix ns t (UTC, whole seconds) into
 * buf (at least RECDIR_NAME_LEN). Returns buf. */
char *recdir_name(char *buf, size_t n, uint64_t t_ns);
/* The start a name (the last component of a path) says, in Unix ns; 0
 * when it is not such a name. */
uint64_t recdir_name_time(const char *name);

struct recdir_file {
	char *path;	   /* owned */
	uint64_t start_ns; /* from the name; 0 when the name says none */
	uint64_t end_ns;   /* the next file's start; the last file's last write */
	uint64_t bytes;	   /* on disk: the file and its -wal, -journal */
};

struct recdir_list {
	struct recdir_file *f; /* by start (names without a time first, by name) */
	size_t n;
};

/* 1 when arg names a directory or is a glob pattern (holds * ? or [ and
 * is not an existing file): what recdir_list expands. */
int recdir_is_set(const char *arg);
/* The recordings of a directory (the files named as recdir_name says) or
 * of a glob pattern (every regular file it matches), in time order. 0, or
 * -errno with a one-line reason in err (-ENOENT: none). Free with
 * recdir_list_free. */
int recdir_list(const char *arg, struct recdir_list *out, char *err, size_t errlen);
void recdir_list_free(struct recdir_list *l);

/* The files whose time [start_ns, end_ns] meets [since_ns, until_ns]
 * (Unix ns; 0: no bound), as the first and last index; a file without a
 * time in its name is always needed. 0, or -ENODATA when none is. */
int recdir_select(const struct recdir_list *l, uint64_t since_ns, uint64_t until_ns, size_t *first,
		  size_t *last);

/* How many of the oldest files to remove so that the rest fit max_bytes (0:
 * no cap) and none ended more than retain_ns (0: kept forever) before
 * now_ns. The newest `keep` files (the one being written) are never
 * counted. */
size_t recdir_prune_count(const struct recdir_list *l, uint64_t max_bytes, uint64_t retain_ns,
			  uint64_t now_ns, size_t keep);
/* Removes a recording and its companions (-wal, -shm, -journal). 0 or
 * -errno of the file's unlink. */
int recdir_remove(const char *path);

#endif
