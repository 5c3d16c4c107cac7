/* The replay source: reads ingero-top recordings and Ingero trace databases
 * read-only and immutable, converts rows to struct ig_event and merges the
 * streams of every file by event time. */
#include "store/replay.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/ops.h"

#define MAX_FILES 64
#define MAX_NODES 256

enum writer { W_INGERO = 0, W_OWN = 1 };

/* Stream types, in tie-break order at equal ts: names first, then host
 * context, then events. */
enum stype { S_COMM = 0, S_SNAP = 1, S_AGG = 2, S_EVENTS = 3, S_NTYPES };

struct opmap {
	int src;
	int64_t id;
	int kind, op;
};

struct pending {
	struct ig_event e;
	uint64_t seq;
};

struct rfile;

struct stream {
	struct rfile *f;
	int type;
	sqlite3_stmt *st;
	int has_head, eof;
	struct ig_event head;
	uint64_t seq;
	/* Ingero events: reorder heap (rows come by timestamp; a call's
	 * completion is later than its timestamp by its duration) */
	struct pending *heap;
	size_t hlen, hcap;
	int64_t last_stamp;
	int cursor_eof;
	/* array streams (aggregates, Ingero names) */
	struct ig_event *arr;
	size_t alen, apos;
};

struct name_slot {
	uint32_t pid;
	char comm[IG_COMM_LEN];
};

#define NAME_SLOTS 8192

struct rfile {
	int idx;
	char *path;   /* as given */
	char *tmpdir; /* private copy when recovering a hot WAL/journal */
	sqlite3 *db;
	int writer;
	char version[16];
	int top_schema;
	int has_node, has_comm, has_names_ext, has_names_ppid, has_snap_node, has_chain_node;
	char default_node[128];
	unsigned default_node_idx;
	struct opmap *ops;
	size_t nops;
	int map[8][64];	     /* fast (source, op_id) -> index into ops, -1 = none */
	uint64_t w_ns;	     /* longest duration of a start-stamped row (calls) */
	uint64_t start, end; /* span of what this file delivers */
	int has_span;
	struct name_slot *names; /* Ingero files: pid -> name */
	/* per-row node lookup cache */
	char last_node[128];
	unsigned last_node_idx;
	int last_node_valid;
	struct stream s[S_NTYPES];
};

struct node {
	char *key; /* raw name, or "\1<file idx>" for a file's unnamed node */
	char *display;
};

struct replay {
	struct ig_source src;
	struct replay_opts o;
	struct rfile *files;
	int nfiles;
	struct node nodes[MAX_NODES];
	int nnodes;
	uint64_t seek_ts;
	struct replay_stats st;
	char err[512];
};

static __thread char errbuf[768];

/* Errors are printed as one line: SQLite's multi-line reports are folded. */
static void one_line(char *s)
{
	for (char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = p[1] ? ' ' : 0;
}

static const char *set_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	one_line(errbuf);
	return errbuf;
}

static const struct ig_source_ops replay_ops;

static struct replay *RP(struct ig_source *s)
{
	return s && s->ops == &replay_ops ? s->priv : NULL;
}

int replay_is(const struct ig_source *s)
{
	return s && s->ops == &replay_ops;
}

/* --- nodes ------------------------------------------------------------------ */

static int node_register(struct replay *r, const char *key, const char *display, int preferred)
{
	for (int i = 0; i < MAX_NODES; i++)
		if (r->nodes[i].key && !strcmp(r->nodes[i].key, key))
			return i;
	int idx = -1;
	if (preferred >= 0 && preferred < MAX_NODES && !r->nodes[preferred].key)
		idx = preferred;
	for (int i = 0; idx < 0 && i < MAX_NODES; i++)
		if (!r->nodes[i].key)
			idx = i;
	if (idx < 0)
		return MAX_NODES - 1; /* table full: share the last slot */
	r->nodes[idx].key = strdup(key);
	r->nodes[idx].display = strdup(display && *display ? display : key);
	if (idx + 1 > r->nnodes)
		r->nnodes = idx + 1;
	return idx;
}

/* Node index for a row's node text (may be NULL or ""). */
static unsigned node_for(struct replay *r, struct rfile *f, const char *name)
{
	if (!name || !*name)
		return f->default_node_idx;
	if (f->last_node_valid && !strcmp(f->last_node, name))
		return f->last_node_idx;
	unsigned idx = (unsigned)node_register(r, name, name, -1);
	snprintf(f->last_node, sizeof(f->last_node), "%s", name);
	f->last_node_idx = idx;
	f->last_node_valid = 1;
	return idx;
}

const char *replay_node_name(struct ig_source *s, unsigned idx)
{
	struct replay *r = RP(s);
	if (!r || idx >= MAX_NODES || !r->nodes[idx].key)
		return NULL;
	return r->nodes[idx].display;
}

int replay_node_count(struct ig_source *s)
{
	struct replay *r = RP(s);
	return r ? r->nnodes : 0;
}

/* --- small SQL helpers ---------------------------------------------------------- */

static int has_table(sqlite3 *db, const char *t)
{
	sqlite3_stmt *st;
	int found = 0;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1", -1,
			       &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

static int has_column(sqlite3 *db, const char *t, const char *c)
{
	sqlite3_stmt *st;
	int found = 0;
	char *q = sqlite3_mprintf("PRAGMA table_info(%Q)", t);
	if (sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK) {
		while (!found && sqlite3_step(st) == SQLITE_ROW) {
			const char *n = (const char *)sqlite3_column_text(st, 1);
			found = n && !strcmp(n, c);
		}
		sqlite3_finalize(st);
	}
	sqlite3_free(q);
	return found;
}

static void copy_text(char *dst, size_t len, sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	int n = sqlite3_column_bytes(st, col);
	if (!t || n <= 0) {
		memset(dst, 0, len);
		return;
	}
	size_t m = (size_t)n < len ? (size_t)n : len;
	memcpy(dst, t, m);
	if (m < len)
		memset(dst + m, 0, len - m);
}

/* --- opening a file ----------------------------------------------------------- */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Checks the file before SQLite sees it: exists, regular, not empty, SQLite
 * magic, not truncated according to its header. */
static int sidecar_size(const char *path, const char *suffix, off_t *size);

static const char *precheck(const char *path)
{
	off_t wal = 0;
	int hot_wal = sidecar_size(path, "-wal", &wal);
	struct stat sb;
	if (stat(path, &sb) != 0)
		return set_err("cannot replay %s: %s", path, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return set_err("cannot replay %s: not a regular file", path);
	if (sb.st_size == 0)
		return set_err("cannot replay %s: empty file", path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return set_err("cannot replay %s: %s", path, strerror(errno));
	unsigned char h[100];
	ssize_t n = read(fd, h, sizeof(h));
	close(fd);
	if (n < 16 || memcmp(h, "SQLite format 3", 16))
		return set_err("cannot replay %s: not an SQLite database", path);
	if (n < 100)
		return set_err("cannot replay %s: truncated (%zd bytes, shorter than the SQLite "
			       "header)",
			       path, n);
	uint32_t page = (uint32_t)h[16] << 8 | h[17];
	if (page == 1)
		page = 65536;
	if (page < 512 || (page & (page - 1)))
		return set_err("cannot replay %s: corrupt SQLite header (page size %u)", path,
			       page);
	uint32_t pages = be32(h + 28);
	/* with a WAL beside it the newest pages live there, not in the file */
	if (pages && !hot_wal && be32(h + 92) == be32(h + 24) &&
	    (uint64_t)pages * page > (uint64_t)sb.st_size)
		return set_err("cannot replay %s: truncated (%lld of %llu bytes)", path,
			       (long long)sb.st_size, (unsigned long long)pages * page);
	return NULL;
}

static int sidecar_size(const char *path, const char *suffix, off_t *size)
{
	char p[PATH_MAX + 16];
	struct stat sb;
	snprintf(p, sizeof(p), "%s%s", path, suffix);
	if (stat(p, &sb) != 0 || !S_ISREG(sb.st_mode))
		return 0;
	*size = sb.st_size;
	return sb.st_size > 0;
}

static int copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, rc = -1;
	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out >= 0) {
		char buf[1 << 16];
		ssize_t n;
		rc = 0;
		while ((n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)n) != n) {
				rc = -1;
				break;
			}
		if (n < 0)
			rc = -1;
		if (close(out))
			rc = -1;
	}
	close(in);
	return rc;
}

static void rm_tmpdir(char *dir)
{
	if (!dir)
		return;
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			char p[PATH_MAX + 300];
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			unlink(p);
		}
		closedir(d);
	}
	rmdir(dir);
}

/* URI-escapes path for "file:" URIs. */
static char *uri_for(const char *path, const char *params)
{
	size_t n = strlen(path);
	char *u = malloc(n * 3 + strlen(params) + 16);
	if (!u)
		return NULL;
	char *p = u + sprintf(u, "file:");
	for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
		if (*c == '%' || *c == '?' || *c == '#' || *c < 0x21 || *c >= 0x7f)
			p += sprintf(p, "%%%02X", *c);
		else
			*p++ = (char)*c;
	}
	sprintf(p, "?%s", params);
	return u;
}

/* Opens the database: immutable and read-only; or, with a hot WAL/journal, a
 * private recovered copy. */
static const char *open_db(struct rfile *f)
{
	off_t wal = 0, jnl = 0;
	int hot = sidecar_size(f->path, "-wal", &wal) | sidecar_size(f->path, "-journal", &jnl);
	const char *dbpath = f->path;
	char copy[PATH_MAX + 64];
	if (hot) {
		const char *tmp = getenv("TMPDIR");
		char tmpl[PATH_MAX];
		snprintf(tmpl, sizeof(tmpl), "%s/ingero-top-replay.XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(tmpl))
			return set_err("cannot replay %s: it has an unfinished WAL/journal and no "
				       "temporary directory to recover it in: %s",
				       f->path, strerror(errno));
		f->tmpdir = strdup(tmpl);
		snprintf(copy, sizeof(copy), "%s/db", tmpl);
		char from[PATH_MAX + 16], to[PATH_MAX + 80];
		int bad = copy_file(f->path, copy);
		if (!bad && wal) {
			snprintf(from, sizeof(from), "%s-wal", f->path);
			snprintf(to, sizeof(to), "%s-wal", copy);
			bad = copy_file(from, to);
		}
		if (!bad && jnl) {
			snprintf(from, sizeof(from), "%s-journal", f->path);
			snprintf(to, sizeof(to), "%s-journal", copy);
			bad = copy_file(from, to);
		}
		if (bad)
			return set_err("cannot replay %s: cannot copy it to %s to recover its "
				       "WAL/journal: %s",
				       f->path, tmpl, strerror(errno));
		dbpath = copy;
	}
	char *uri = uri_for(dbpath, hot ? "mode=rw" : "mode=ro&immutable=1");
	if (!uri)
		return set_err("cannot replay %s: out of memory", f->path);
	int flags = (hot ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_URI |
		    SQLITE_OPEN_NOMUTEX;
	int rc = sqlite3_open_v2(uri, &f->db, flags, NULL);
	free(uri);
	if (rc != SQLITE_OK)
		return set_err("cannot replay %s: %s", f->path,
			       f->db ? sqlite3_errmsg(f->db) : "out of memory");
	if (hot) {
		/* recover into the copy now, then read it like any other file */
		sqlite3_exec(f->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
	}
	return NULL;
}

static const char *read_schema_info(struct rfile *f)
{
	if (!has_table(f->db, "schema_info") || !has_table(f->db, "events"))
		return set_err("cannot replay %s: not an Ingero or ingero-top trace database (no "
			       "%s table)",
			       f->path, has_table(f->db, "events") ? "schema_info" : "events");
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(f->db, "SELECT key, value FROM schema_info", -1, &st, NULL) !=
	    SQLITE_OK)
		return set_err("cannot replay %s: %s", f->path, sqlite3_errmsg(f->db));
	int rc, own = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);
		if (!k || !v)
			continue;
		if (!strcmp(k, "version"))
			snprintf(f->version, sizeof(f->version), "%s", v);
		else if (!strcmp(k, "writer"))
			own = !strcmp(v, "ingero-top") ? 1 : -1;
		else if (!strcmp(k, "ingero_top_schema"))
			f->top_schema = atoi(v);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return set_err("cannot replay %s: corrupt database: %s", f->path,
			       sqlite3_errmsg(f->db));
	if (own < 0)
		return set_err("cannot replay %s: written by an unknown program (schema_info "
			       "writer is not ingero-top)",
			       f->path);
	if (own) {
		f->writer = W_OWN;
		if (f->top_schema > REC_SCHEMA)
			return set_err("cannot replay %s: written by a newer ingero-top (schema "
				       "%d; this one reads up to %d)",
				       f->path, f->top_schema, REC_SCHEMA);
		if (f->top_schema < 1)
			return set_err("cannot replay %s: unknown ingero-top schema", f->path);
		return NULL;
	}
	f->writer = W_INGERO;
	int maj = 0, min = 0;
	if (!f->version[0] || sscanf(f->version, "%d.%d", &maj, &min) != 2)
		return set_err("cannot replay %s: unknown schema version '%s'", f->path,
			       f->version);
	if (maj > 0 || min > 10)
		return set_err("cannot replay %s: Ingero schema %s is newer than this ingero-top "
			       "reads (0.8 to 0.10)",
			       f->path, f->version);
	if (min < 8)
		return set_err("cannot replay %s: Ingero schema %s is older than this ingero-top "
			       "reads (0.8 to 0.10)",
			       f->path, f->version);
	return NULL;
}

static const char *check_columns(struct rfile *f)
{
	static const char *const need[] = {"timestamp", "pid",	"tid",	"source",   "op",
					   "duration",	"arg0", "arg1", "ret_code", NULL};
	static const char *const own[] = {"kind",     "start_ns",   "cpu",	  "flags",
					  "state",    "stream",	    "preempt_ns", "blocked_ns",
					  "switches", "other_pid",  "other_comm", "comm",
					  "node",     "stack_hash", "cgroup_id",  NULL};
	for (const char *const *c = need; *c; c++)
		if (!has_column(f->db, "events", *c))
			return set_err("cannot replay %s: events table has no %s column", f->path,
				       *c);
	for (const char *const *c = own; f->writer == W_OWN && *c; c++)
		if (!has_column(f->db, "events", *c))
			return set_err("cannot replay %s: ingero-top events table has no %s column",
				       f->path, *c);
	if (!has_table(f->db, "ops"))
		return set_err("cannot replay %s: no ops table", f->path);
	f->has_node = has_column(f->db, "events", "node");
	f->has_comm = has_column(f->db, "events", "comm");
	f->has_names_ext =
	    has_table(f->db, "process_names") && has_column(f->db, "process_names", "is_event");
	f->has_names_ppid = f->has_names_ext && has_column(f->db, "process_names", "ppid");
	f->has_snap_node = has_column(f->db, "system_snapshots", "node");
	f->has_chain_node = has_column(f->db, "causal_chains", "node");
	return NULL;
}

static const char *read_ops(struct rfile *f)
{
	memset(f->map, 0xff, sizeof(f->map));
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(f->db, "SELECT source_id, op_id, name FROM ops", -1, &st, NULL) !=
	    SQLITE_OK)
		return set_err("cannot replay %s: cannot read ops: %s", f->path,
			       sqlite3_errmsg(f->db));
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int kind, op;
		if (rec_ingero_kind(sqlite3_column_int(st, 0),
				    (const char *)sqlite3_column_text(st, 2), &kind, &op))
			continue;
		if (f->nops == cap) {
			cap = cap ? cap * 2 : 64;
			struct opmap *n = realloc(f->ops, cap * sizeof(*n));
			if (!n) {
				sqlite3_finalize(st);
				return set_err("cannot replay %s: out of memory", f->path);
			}
			f->ops = n;
		}
		struct opmap *m = &f->ops[f->nops];
		m->src = sqlite3_column_int(st, 0);
		m->id = sqlite3_column_int64(st, 1);
		m->kind = kind;
		m->op = op;
		if (m->src >= 0 && m->src < 8 && m->id >= 0 && m->id < 64)
			f->map[m->src][m->id] = (int)f->nops;
		f->nops++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return set_err("cannot replay %s: corrupt ops table: %s", f->path,
			       sqlite3_errmsg(f->db));
	return NULL;
}

static const struct opmap *op_lookup(const struct rfile *f, int64_t src, int64_t id)
{
	if (src >= 0 && src < 8 && id >= 0 && id < 64) {
		int i = f->map[src][id];
		return i >= 0 ? &f->ops[i] : NULL;
	}
	for (size_t i = 0; i < f->nops; i++)
		if (f->ops[i].src == src && f->ops[i].id == id)
			return &f->ops[i];
	return NULL;
}

static int end_stamped(const struct opmap *m)
{
	return m->kind == IG_EV_OFFCPU || m->kind == IG_EV_BLOCK_IO;
}

static void names_put(struct rfile *f, uint32_t pid, const char *name)
{
	unsigned slot = (pid * 2654435761u) % NAME_SLOTS;
	f->names[slot].pid = pid;
	snprintf(f->names[slot].comm, IG_COMM_LEN, "%s", name ? name : "");
}

static const char *names_get(const struct rfile *f, uint32_t pid)
{
	if (!f->names)
		return NULL;
	unsigned slot = (pid * 2654435761u) % NAME_SLOTS;
	return f->names[slot].pid == pid ? f->names[slot].comm : NULL;
}

/* Default node (rows without a node name): ingero-top's name for node 0,
 * else the session's node/host, else the file name. A real name is the key,
 * so rows naming the same node share its index; a file name is not (two
 * files may share a base name). */
static void default_node(struct replay *r, struct rfile *f)
{
	sqlite3_stmt *st;
	int own_nodes = f->writer == W_OWN && has_table(f->db, "ingero_top_nodes");
	f->default_node[0] = 0;
	if (own_nodes &&
	    sqlite3_prepare_v2(f->db, "SELECT name FROM ingero_top_nodes WHERE idx = 0", -1, &st,
			       NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
			snprintf(f->default_node, sizeof(f->default_node), "%s",
				 (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	if (!f->default_node[0] && has_column(f->db, "sessions", "node") &&
	    sqlite3_prepare_v2(f->db, "SELECT DISTINCT node FROM sessions WHERE node != ''", -1,
			       &st, NULL) == SQLITE_OK) {
		int n = 0;
		while (sqlite3_step(st) == SQLITE_ROW && n < 2) {
			if (!n)
				snprintf(f->default_node, sizeof(f->default_node), "%s",
					 (const char *)sqlite3_column_text(st, 0));
			n++;
		}
		if (n != 1)
			f->default_node[0] = 0;
		sqlite3_finalize(st);
	}
	char key[32];
	const char *k = f->default_node;
	if (!f->default_node[0]) {
		const char *b = strrchr(f->path, '/');
		b = b ? b + 1 : f->path;
		snprintf(f->default_node, sizeof(f->default_node), "%s", b);
		size_t l = strlen(f->default_node);
		if (l > 3 && !strcmp(f->default_node + l - 3, ".db"))
			f->default_node[l - 3] = 0;
		snprintf(key, sizeof(key), "\1%d", f->idx);
		k = key;
	}
	f->default_node_idx =
	    (unsigned)node_register(r, k, f->default_node, f->writer == W_OWN ? 0 : -1);
	/* nodes named by the sessions are known from the start (Ingero 0.9 has
	 * one session per node); others appear as their rows are read */
	if (has_column(f->db, "sessions", "node") &&
	    sqlite3_prepare_v2(f->db, "SELECT node FROM sessions WHERE node != '' ORDER BY id", -1,
			       &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *nm = (const char *)sqlite3_column_text(st, 0);
			if (nm && *nm && (!own_nodes))
				node_register(r, nm, nm, -1);
		}
		sqlite3_finalize(st);
	}
	/* ingero-top files: the recorder's node table, at the recorded indexes */
	if (own_nodes && sqlite3_prepare_v2(f->db,
					    "SELECT idx, name FROM ingero_top_nodes "
					    "WHERE idx > 0 ORDER BY idx",
					    -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *nm = (const char *)sqlite3_column_text(st, 1);
			if (nm && *nm)
				node_register(r, nm, nm, sqlite3_column_int(st, 0));
		}
		sqlite3_finalize(st);
	}
}

/* --- converting rows -------------------------------------------------------------- */

#define OWN_COLS                                                                                   \
	"id, pid, tid, duration, arg0, arg1, ret_code, stack_hash, cgroup_id, node, comm, "        \
	"kind, start_ns, cpu, flags, state, stream, preempt_ns, blocked_ns, switches, "            \
	"other_pid, other_comm, source, op"

static int own_row(struct replay *r, struct rfile *f, sqlite3_stmt *st, struct ig_event *e)
{
	memset(e, 0, sizeof(*e));
	e->pid = (uint32_t)sqlite3_column_int64(st, 1);
	e->tid = (uint32_t)sqlite3_column_int64(st, 2);
	e->dur_ns = (uint64_t)sqlite3_column_int64(st, 3);
	e->arg0 = (uint64_t)sqlite3_column_int64(st, 4);
	e->arg1 = (uint64_t)sqlite3_column_int64(st, 5);
	e->ret = (int32_t)sqlite3_column_int64(st, 6);
	e->stack_id = (uint64_t)sqlite3_column_int64(st, 7);
	e->cgroup_id = (uint64_t)sqlite3_column_int64(st, 8);
	e->node = (uint8_t)node_for(r, f, (const char *)sqlite3_column_text(st, 9));
	copy_text(e->comm, IG_COMM_LEN, st, 10);
	e->kind = (uint16_t)sqlite3_column_int(st, 11);
	e->ts_ns = (uint64_t)sqlite3_column_int64(st, 12);
	e->cpu = (uint32_t)sqlite3_column_int64(st, 13);
	e->flags = (uint32_t)sqlite3_column_int64(st, 14);
	e->state = (uint8_t)sqlite3_column_int(st, 15);
	e->stream = (uint64_t)sqlite3_column_int64(st, 16);
	e->preempt_ns = (uint64_t)sqlite3_column_int64(st, 17);
	e->blocked_ns = (uint64_t)sqlite3_column_int64(st, 18);
	e->switches = (uint32_t)sqlite3_column_int64(st, 19);
	e->other_pid = (uint32_t)sqlite3_column_int64(st, 20);
	copy_text(e->other_comm, IG_COMM_LEN, st, 21);
	const struct opmap *m =
	    op_lookup(f, sqlite3_column_int64(st, 22), sqlite3_column_int64(st, 23));
	if (!m || m->kind != e->kind || e->kind <= IG_EV_NONE || e->kind >= IG_EV_KIND_MAX)
		return -1;
	e->op = (uint16_t)m->op;
	return 0;
}

/* Ingero row: rowid, timestamp, pid, tid, source, op, duration, arg0, arg1,
 * ret_code, stack_hash, cgroup_id, node?, comm? */
static int ingero_row(struct replay *r, struct rfile *f, sqlite3_stmt *st, struct ig_event *e,
		      int node_col, int comm_col)
{
	const struct opmap *m =
	    op_lookup(f, sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5));
	if (!m)
		return -1;
	memset(e, 0, sizeof(*e));
	int64_t stamp = sqlite3_column_int64(st, 1);
	int64_t dur = sqlite3_column_int64(st, 6);
	if (dur < 0)
		dur = 0;
	e->kind = (uint16_t)m->kind;
	e->op = (uint16_t)m->op;
	e->pid = (uint32_t)sqlite3_column_int64(st, 2);
	e->tid = (uint32_t)sqlite3_column_int64(st, 3);
	e->dur_ns = (uint64_t)dur;
	e->ts_ns = (uint64_t)(end_stamped(m) ? stamp - dur : stamp);
	e->arg0 = (uint64_t)sqlite3_column_int64(st, 7);
	e->arg1 = (uint64_t)sqlite3_column_int64(st, 8);
	e->ret = (int32_t)sqlite3_column_int64(st, 9);
	e->stack_id = (uint64_t)sqlite3_column_int64(st, 10);
	e->cgroup_id = (uint64_t)sqlite3_column_int64(st, 11);
	switch (m->kind) {
	case IG_EV_CALL:
		e->flags = IG_F_NO_SPLIT;
		break;
	case IG_EV_OFFCPU:
		e->state = IG_OFF_UNKNOWN;
		e->arg0 = e->arg1 = 0;
		break;
	case IG_EV_BLOCK_IO:
		e->arg0 *= 512; /* Ingero stores sectors */
		break;
	case IG_EV_FORK:
		e->arg0 = e->arg1; /* Ingero: child pid in arg1 */
		e->arg1 = 0;
		break;
	}
	e->node = (uint8_t)node_for(
	    r, f, node_col >= 0 ? (const char *)sqlite3_column_text(st, node_col) : NULL);
	if (comm_col >= 0)
		copy_text(e->comm, IG_COMM_LEN, st, comm_col);
	if (!e->comm[0]) {
		const char *n = names_get(f, e->pid);
		if (n)
			memcpy(e->comm, n, IG_COMM_LEN);
	}
	return 0;
}

/* --- streams ---------------------------------------------------------------- */

/* The merge key: completion time, the model's clock. */
static inline uint64_t key(const struct ig_event *e)
{
	return e->ts_ns + e->dur_ns;
}

static int heap_less(const struct pending *a, const struct pending *b)
{
	uint64_t ka = key(&a->e), kb = key(&b->e);
	return ka != kb ? ka < kb : a->seq < b->seq;
}

static int heap_push(struct stream *s, const struct ig_event *e, uint64_t seq)
{
	if (s->hlen == s->hcap) {
		size_t cap = s->hcap ? s->hcap * 2 : 256;
		struct pending *n = realloc(s->heap, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->heap = n;
		s->hcap = cap;
	}
	size_t i = s->hlen++;
	s->heap[i].e = *e;
	s->heap[i].seq = seq;
	while (i) {
		size_t p = (i - 1) / 2;
		if (!heap_less(&s->heap[i], &s->heap[p]))
			break;
		struct pending t = s->heap[i];
		s->heap[i] = s->heap[p];
		s->heap[p] = t;
		i = p;
	}
	return 0;
}

static void heap_pop(struct stream *s, struct ig_event *out)
{
	*out = s->heap[0].e;
	s->heap[0] = s->heap[--s->hlen];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, rr = l + 1, m = i;
		if (l < s->hlen && heap_less(&s->heap[l], &s->heap[m]))
			m = l;
		if (rr < s->hlen && heap_less(&s->heap[rr], &s->heap[m]))
			m = rr;
		if (m == i)
			break;
		struct pending t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

static int fail_read(struct replay *r, struct rfile *f, const char *what)
{
	if (!r->err[0])
		snprintf(r->err, sizeof(r->err), "replay of %s failed: %s: %s", f->path, what,
			 sqlite3_errmsg(f->db));
	one_line(r->err);
	return -EIO;
}

/* Advances stream s to its next head at or after the seek time. Returns 0
 * (head set or eof) or -errno. */
static int stream_next(struct replay *r, struct stream *s)
{
	struct rfile *f = s->f;
	s->has_head = 0;
	if (s->eof)
		return 0;
	if (s->arr) {
		while (s->apos < s->alen && key(&s->arr[s->apos]) < r->seek_ts)
			s->apos++;
		if (s->apos >= s->alen) {
			s->eof = 1;
			return 0;
		}
		s->head = s->arr[s->apos++];
		s->has_head = 1;
		return 0;
	}
	if (!s->st) {
		s->eof = 1;
		return 0;
	}
	if (s->type == S_EVENTS && f->writer == W_INGERO) {
		int node_col = f->has_node ? 12 : -1;
		int comm_col = f->has_comm ? (f->has_node ? 13 : 12) : -1;
		for (;;) {
			/* every row not read yet completes at or after last_stamp */
			if (s->hlen &&
			    (s->cursor_eof || (int64_t)key(&s->heap[0].e) <= s->last_stamp)) {
				heap_pop(s, &s->head);
				if (key(&s->head) < r->seek_ts)
					continue;
				s->has_head = 1;
				return 0;
			}
			if (s->cursor_eof) {
				s->eof = 1;
				return 0;
			}
			int rc = sqlite3_step(s->st);
			if (rc == SQLITE_DONE) {
				s->cursor_eof = 1;
				continue;
			}
			if (rc != SQLITE_ROW)
				return fail_read(r, f, "reading events");
			r->st.rows++;
			struct ig_event e;
			if (ingero_row(r, f, s->st, &e, node_col, comm_col)) {
				r->st.skipped++;
				continue;
			}
			s->last_stamp = sqlite3_column_int64(s->st, 1);
			if (heap_push(s, &e, s->seq++))
				return -ENOMEM;
		}
	}
	for (;;) {
		int rc = sqlite3_step(s->st);
		if (rc == SQLITE_DONE) {
			s->eof = 1;
			return 0;
		}
		if (rc != SQLITE_ROW)
			return fail_read(r, f, "reading");
		struct ig_event *e = &s->head;
		switch (s->type) {
		case S_EVENTS:
			r->st.rows++;
			if (own_row(r, f, s->st, e)) {
				r->st.skipped++;
				continue;
			}
			break;
		case S_SNAP:
			ig_snapshot_fill(e, (uint64_t)sqlite3_column_int64(s->st, 0),
					 sqlite3_column_double(s->st, 1),
					 sqlite3_column_double(s->st, 2),
					 (uint64_t)sqlite3_column_int64(s->st, 3),
					 (uint64_t)sqlite3_column_int64(s->st, 4),
					 sqlite3_column_double(s->st, 5));
			e->node = (uint8_t)node_for(
			    r, f,
			    f->has_snap_node ? (const char *)sqlite3_column_text(s->st, 6) : NULL);
			break;
		case S_COMM: /* own files: pid, name, seen_at, tid, node, ppid */
			memset(e, 0, sizeof(*e));
			e->kind = IG_EV_COMM;
			e->pid = (uint32_t)sqlite3_column_int64(s->st, 0);
			copy_text(e->comm, IG_COMM_LEN, s->st, 1);
			e->ts_ns = (uint64_t)sqlite3_column_int64(s->st, 2);
			e->tid = (uint32_t)sqlite3_column_int64(s->st, 3);
			e->node =
			    (uint8_t)node_for(r, f, (const char *)sqlite3_column_text(s->st, 4));
			e->arg0 = (uint64_t)sqlite3_column_int64(s->st, 5);
			break;
		}
		s->has_head = 1;
		return 0;
	}
}

static void stream_close(struct stream *s)
{
	sqlite3_finalize(s->st);
	s->st = NULL;
	s->hlen = 0;
	s->has_head = 0;
}

/* (Re)starts the cursor streams of f at r->seek_ts. */
static int file_start_streams(struct replay *r, struct rfile *f)
{
	for (int t = 0; t < S_NTYPES; t++) {
		struct stream *s = &f->s[t];
		stream_close(s);
		s->f = f;
		s->type = t;
		s->eof = 0;
		s->cursor_eof = 0;
		s->last_stamp = INT64_MIN;
		s->seq = 0;
		s->apos = 0;
		if (s->arr)
			continue;
		const char *sql = NULL;
		char buf[512];
		switch (t) {
		case S_EVENTS:
			if (f->writer == W_OWN) {
				sql = "SELECT " OWN_COLS " FROM events WHERE end_ns >= ?1 "
				      "ORDER BY end_ns, id";
			} else {
				snprintf(
				    buf, sizeof(buf),
				    "SELECT rowid, timestamp, pid, tid, source, op, duration, "
				    "arg0, arg1, ret_code, %s, %s%s%s FROM events WHERE "
				    "timestamp >= ?1 ORDER BY timestamp, rowid",
				    has_column(f->db, "events", "stack_hash") ? "stack_hash" : "0",
				    has_column(f->db, "events", "cgroup_id") ? "cgroup_id" : "0",
				    f->has_node ? ", node" : "", f->has_comm ? ", comm" : "");
				sql = buf;
			}
			break;
		case S_SNAP:
			if (!has_table(f->db, "system_snapshots"))
				break;
			snprintf(
			    buf, sizeof(buf),
			    "SELECT timestamp, cpu_pct, mem_pct, mem_avail, swap_mb, load_avg%s "
			    "FROM system_snapshots WHERE timestamp >= ?1 ORDER BY timestamp, "
			    "rowid",
			    f->has_snap_node ? ", node" : "");
			sql = buf;
			break;
		case S_COMM:
			if (f->writer == W_OWN && f->has_names_ext)
				sql = f->has_names_ppid
					  ? "SELECT pid, name, seen_at, tid, node, ppid FROM "
					    "process_names WHERE is_event = 1 AND seen_at >= ?1 "
					    "ORDER BY seen_at, rowid"
					  : "SELECT pid, name, seen_at, tid, node, 0 FROM "
					    "process_names WHERE is_event = 1 AND seen_at >= ?1 "
					    "ORDER BY seen_at, rowid";
			break;
		}
		if (!sql) {
			s->eof = 1;
			continue;
		}
		if (sqlite3_prepare_v2(f->db, sql, -1, &s->st, NULL) != SQLITE_OK)
			return fail_read(r, f, "preparing a query");
		int64_t lo = INT64_MIN;
		if (r->seek_ts) {
			lo = (int64_t)r->seek_ts;
			/* a call stamped at entry completes up to w_ns later */
			if (t == S_EVENTS && f->writer == W_INGERO)
				lo -= (int64_t)f->w_ns;
		}
		sqlite3_bind_int64(s->st, 1, lo);
	}
	for (int t = 0; t < S_NTYPES; t++) {
		int rc = stream_next(r, &f->s[t]);
		if (rc)
			return rc;
	}
	return 0;
}

static int64_t q_int(sqlite3 *db, const char *sql, int64_t dflt, int *ok)
{
	sqlite3_stmt *st;
	int64_t v = dflt;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		if (ok)
			*ok = 0;
		return dflt;
	}
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_ROW && rc != SQLITE_DONE && ok)
		*ok = 0;
	sqlite3_finalize(st);
	return v;
}

static void span_add(struct rfile *f, uint64_t ts)
{
	if (!f->has_span) {
		f->start = f->end = ts;
		f->has_span = 1;
		return;
	}
	if (ts < f->start)
		f->start = ts;
	if (ts > f->end)
		f->end = ts;
}

/* Ingero: the exact first and last completion times of deliverable rows,
 * looking only at rows within w_ns of the first and last timestamps. */
static const char *ingero_span(struct replay *r, struct rfile *f)
{
	int ok = 1;
	int64_t lo = q_int(f->db, "SELECT MIN(timestamp) FROM events", INT64_MIN, &ok);
	int64_t hi = q_int(f->db, "SELECT MAX(timestamp) FROM events", INT64_MIN, &ok);
	if (!ok)
		return set_err("cannot replay %s: corrupt events table: %s", f->path,
			       sqlite3_errmsg(f->db));
	if (lo == INT64_MIN)
		return NULL;
	char sql[256];
	snprintf(sql, sizeof(sql),
		 "SELECT rowid, timestamp, pid, tid, source, op, duration, 0, 0, 0, 0, 0 FROM "
		 "events WHERE timestamp <= %" PRId64 " OR timestamp >= %" PRId64,
		 lo + (int64_t)f->w_ns, hi - (int64_t)f->w_ns);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(f->db, sql, -1, &st, NULL) != SQLITE_OK)
		return set_err("cannot replay %s: %s", f->path, sqlite3_errmsg(f->db));
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct ig_event e;
		if (!ingero_row(r, f, st, &e, -1, -1))
			span_add(f, key(&e));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return set_err("cannot replay %s: corrupt events table: %s", f->path,
			       sqlite3_errmsg(f->db));
	return NULL;
}

static int cmp_ev(const void *a, const void *b)
{
	const struct ig_event *x = a, *y = b;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Ingero: process names (at the start of the file) and page allocations
 * spread from event_aggregates, as small sorted arrays. */
static const char *ingero_arrays(struct replay *r, struct rfile *f)
{
	sqlite3_stmt *st;
	struct stream *s = &f->s[S_COMM];
	if (has_table(f->db, "process_names") &&
	    sqlite3_prepare_v2(f->db, "SELECT pid, name, seen_at FROM process_names ORDER BY pid",
			       -1, &st, NULL) == SQLITE_OK) {
		size_t cap = 0;
		while (sqlite3_step(st) == SQLITE_ROW) {
			if (s->alen == cap) {
				cap = cap ? cap * 2 : 64;
				struct ig_event *n = realloc(s->arr, cap * sizeof(*n));
				if (!n)
					break;
				s->arr = n;
			}
			struct ig_event *e = &s->arr[s->alen++];
			memset(e, 0, sizeof(*e));
			e->kind = IG_EV_COMM;
			e->pid = e->tid = (uint32_t)sqlite3_column_int64(st, 0);
			copy_text(e->comm, IG_COMM_LEN, st, 1);
			uint64_t seen = (uint64_t)sqlite3_column_int64(st, 2);
			e->ts_ns = f->has_span && (seen > f->start || !seen) ? f->start : seen;
			e->node = (uint8_t)f->default_node_idx;
			names_put(f, e->pid, (const char *)sqlite3_column_text(st, 1));
		}
		sqlite3_finalize(st);
		if (!s->arr)
			s->arr = calloc(1, sizeof(*s->arr)); /* marks an array stream */
		qsort(s->arr, s->alen, sizeof(*s->arr), cmp_ev);
		for (size_t i = 0; i < s->alen; i++)
			span_add(f, s->arr[i].ts_ns);
	}
	s = &f->s[S_AGG];
	s->arr = calloc(1, sizeof(*s->arr));
	if (!s->arr)
		return set_err("cannot replay %s: out of memory", f->path);
	if (r->o.no_aggregates || !f->has_span || !has_table(f->db, "event_aggregates"))
		return NULL;
	int64_t page_op = -1;
	for (size_t i = 0; i < f->nops; i++)
		if (f->ops[i].kind == IG_EV_PAGE_ALLOC)
			page_op = f->ops[i].id;
	if (page_op < 0)
		return NULL;
	char sql[256];
	snprintf(sql, sizeof(sql),
		 "SELECT bucket, pid, sum_arg0 FROM event_aggregates WHERE source = 3 AND op = "
		 "%" PRId64 " AND stored = 0 AND sum_arg0 > 0 ORDER BY bucket, pid",
		 page_op);
	if (sqlite3_prepare_v2(f->db, sql, -1, &st, NULL) != SQLITE_OK)
		return NULL;
	size_t cap = 0;
	const uint64_t sec = 1000000000ull;
	while (sqlite3_step(st) == SQLITE_ROW && s->alen < (1u << 20)) {
		uint64_t b = (uint64_t)sqlite3_column_int64(st, 0);
		uint32_t pid = (uint32_t)sqlite3_column_int64(st, 1);
		uint64_t bytes = (uint64_t)sqlite3_column_int64(st, 2);
		/* the part of the minute the recording covers */
		uint64_t lo = b > f->start ? b : f->start;
		uint64_t hi = b + 60 * sec < f->end + 1 ? b + 60 * sec : f->end + 1;
		if (lo >= hi) {
			lo = b + 60 * sec <= f->start ? f->start : f->end;
			hi = lo + 1;
		}
		uint64_t k = (hi - lo + sec - 1) / sec;
		for (uint64_t i = 0; i < k; i++) {
			if (s->alen == cap) {
				cap = cap ? cap * 2 : 256;
				struct ig_event *n = realloc(s->arr, cap * sizeof(*n));
				if (!n) {
					sqlite3_finalize(st);
					return set_err("cannot replay %s: out of memory", f->path);
				}
				s->arr = n;
			}
			struct ig_event *e = &s->arr[s->alen++];
			memset(e, 0, sizeof(*e));
			e->kind = IG_EV_PAGE_ALLOC;
			e->ts_ns = lo + i * sec;
			e->pid = e->tid = pid;
			e->arg0 = bytes / k + (i == k - 1 ? bytes % k : 0);
			e->node = (uint8_t)f->default_node_idx;
			const char *n = names_get(f, pid);
			if (n)
				memcpy(e->comm, n, IG_COMM_LEN);
		}
	}
	sqlite3_finalize(st);
	qsort(s->arr, s->alen, sizeof(*s->arr), cmp_ev);
	r->st.synthesized += s->alen;
	return NULL;
}

static const char *own_span(struct rfile *f)
{
	int ok = 1;
	int64_t v;
	const char *q[] = {
	    "SELECT MIN(end_ns) FROM events",
	    "SELECT MAX(end_ns) FROM events",
	    "SELECT MIN(timestamp) FROM system_snapshots",
	    "SELECT MAX(timestamp) FROM system_snapshots",
	    f->has_names_ext ? "SELECT MIN(seen_at) FROM process_names WHERE is_event=1" : NULL,
	    f->has_names_ext ? "SELECT MAX(seen_at) FROM process_names WHERE is_event=1" : NULL};
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		if (!q[i])
			continue;
		v = q_int(f->db, q[i], INT64_MIN, &ok);
		if (v != INT64_MIN)
			span_add(f, (uint64_t)v);
	}
	if (!ok)
		return set_err("cannot replay %s: corrupt database: %s", f->path,
			       sqlite3_errmsg(f->db));
	return NULL;
}

static const char *open_file(struct replay *r, struct rfile *f)
{
	const char *e = precheck(f->path);
	if (!e)
		e = open_db(f);
	if (e)
		return e;
	sqlite3_busy_timeout(f->db, 1000);
	/* quick structural check, bounded so that big files still open fast */
	struct stat sb;
	if (stat(f->path, &sb) == 0 && sb.st_size < (256 << 20)) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(f->db, "PRAGMA quick_check(1)", -1, &st, NULL) != SQLITE_OK)
			return set_err("cannot replay %s: %s", f->path, sqlite3_errmsg(f->db));
		int rc = sqlite3_step(st);
		const char *res =
		    rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
		if (!res || strcmp(res, "ok")) {
			set_err("cannot replay %s: corrupt database: %s", f->path,
				res ? res : sqlite3_errmsg(f->db));
			sqlite3_finalize(st);
			return errbuf;
		}
		sqlite3_finalize(st);
	}
	if ((e = read_schema_info(f)) || (e = check_columns(f)) || (e = read_ops(f)))
		return e;
	default_node(r, f);
	if (f->writer == W_INGERO) {
		f->names = calloc(NAME_SLOTS, sizeof(*f->names));
		if (!f->names)
			return set_err("cannot replay %s: out of memory", f->path);
		/* longest call: how far a completion can lie after its row's stamp */
		char sql[512];
		size_t n =
		    (size_t)snprintf(sql, sizeof(sql), "SELECT MAX(duration) FROM events WHERE 0");
		for (size_t i = 0; i < f->nops && n < sizeof(sql) - 64; i++)
			if (!end_stamped(&f->ops[i]))
				n += (size_t)snprintf(sql + n, sizeof(sql) - n,
						      " OR (source = %d AND op = %" PRId64 ")",
						      f->ops[i].src, f->ops[i].id);
		int ok = 1;
		int64_t w = q_int(f->db, sql, 0, &ok);
		if (!ok)
			return set_err("cannot replay %s: corrupt events table: %s", f->path,
				       sqlite3_errmsg(f->db));
		f->w_ns = w > 0 ? (uint64_t)w : 0;
		if ((e = ingero_span(r, f)))
			return e;
		/* snapshots belong to the span too */
		int64_t a =
		    q_int(f->db, "SELECT MIN(timestamp) FROM system_snapshots", INT64_MIN, &ok);
		int64_t b =
		    q_int(f->db, "SELECT MAX(timestamp) FROM system_snapshots", INT64_MIN, &ok);
		if (a != INT64_MIN)
			span_add(f, (uint64_t)a);
		if (b != INT64_MIN)
			span_add(f, (uint64_t)b);
		if ((e = ingero_arrays(r, f)))
			return e;
	} else if ((e = own_span(f))) {
		return e;
	}
	return NULL;
}

/* --- the source ----------------------------------------------------------------- */

static struct stream *next_stream(struct replay *r)
{
	struct stream *best = NULL;
	for (int i = 0; i < r->nfiles; i++)
		for (int t = 0; t < S_NTYPES; t++) {
			struct stream *s = &r->files[i].s[t];
			if (!s->has_head)
				continue;
			if (!best || key(&s->head) < key(&best->head) ||
			    (key(&s->head) == key(&best->head) && s->type < best->type))
				best = s;
		}
	return best;
}

static int rp_fd(struct ig_source *s)
{
	return -1;
}

static int rp_poll(struct ig_source *src, ig_emit_fn emit, void *ctx, int max)
{
	struct replay *r = src->priv;
	if (r->err[0])
		return -EIO;
	int n = 0;
	while (n < max) {
		struct stream *s = next_stream(r);
		if (!s)
			return n ? n : -ENODATA;
		struct ig_event e = s->head;
		int rc = stream_next(r, s);
		emit(ctx, &e);
		n++;
		r->st.delivered++;
		if (rc)
			return n;
	}
	return n;
}

static int rp_peek(struct ig_source *src, uint64_t *ts)
{
	struct replay *r = src->priv;
	if (r->err[0])
		return -EIO;
	struct stream *s = next_stream(r);
	if (!s)
		return -ENODATA;
	*ts = key(&s->head);
	return 0;
}

static void file_free(struct rfile *f)
{
	for (int t = 0; t < S_NTYPES; t++) {
		stream_close(&f->s[t]);
		free(f->s[t].heap);
		free(f->s[t].arr);
	}
	if (f->db)
		sqlite3_close_v2(f->db);
	rm_tmpdir(f->tmpdir);
	free(f->tmpdir);
	free(f->path);
	free(f->ops);
	free(f->names);
}

static void rp_free(struct ig_source *src)
{
	if (!src)
		return;
	struct replay *r = src->priv;
	for (int i = 0; r && i < r->nfiles; i++)
		file_free(&r->files[i]);
	for (int i = 0; r && i < MAX_NODES; i++) {
		free(r->nodes[i].key);
		free(r->nodes[i].display);
	}
	if (r)
		free(r->files);
	free(r);
}

static const struct ig_source_ops replay_ops = {
    .name = "replay",
    .fd = rp_fd,
    .poll = rp_poll,
    .peek_ts = rp_peek,
    .free = rp_free,
};

struct ig_source *replay_open_opts(const char *const *paths, int n, const struct replay_opts *o,
				   const char **err)
{
	const char *dummy;
	if (!err)
		err = &dummy;
	*err = NULL;
	if (!paths || n < 1) {
		*err = set_err("cannot replay: no file given");
		return NULL;
	}
	if (n > MAX_FILES) {
		*err = set_err("cannot replay: at most %d files at once", MAX_FILES);
		return NULL;
	}
	struct replay *r = calloc(1, sizeof(*r));
	if (!r || !(r->files = calloc((size_t)n, sizeof(*r->files)))) {
		free(r);
		*err = set_err("cannot replay: out of memory");
		return NULL;
	}
	r->src.ops = &replay_ops;
	r->src.priv = r;
	if (o)
		r->o = *o;
	for (int i = 0; i < n; i++) {
		struct rfile *f = &r->files[i];
		f->idx = i;
		f->path = strdup(paths[i] ? paths[i] : "");
		r->nfiles = i + 1;
		const char *e = f->path ? open_file(r, f) : set_err("cannot replay: out of memory");
		if (e) {
			*err = e;
			rp_free(&r->src);
			return NULL;
		}
	}
	for (int i = 0; i < n; i++)
		if (file_start_streams(r, &r->files[i])) {
			*err = set_err("%s", r->err[0] ? r->err : "cannot replay: read error");
			rp_free(&r->src);
			return NULL;
		}
	return &r->src;
}

struct ig_source *replay_open(const char *const *paths, int n, const char **err)
{
	return replay_open_opts(paths, n, NULL, err);
}

int replay_seek(struct ig_source *src, uint64_t ts_ns)
{
	struct replay *r = RP(src);
	if (!r)
		return -EINVAL;
	r->err[0] = 0;
	r->seek_ts = ts_ns;
	for (int i = 0; i < r->nfiles; i++) {
		int rc = file_start_streams(r, &r->files[i]);
		if (rc)
			return rc;
	}
	return 0;
}

int replay_span(struct ig_source *src, uint64_t *start, uint64_t *end)
{
	struct replay *r = RP(src);
	if (!r)
		return -EINVAL;
	int any = 0;
	for (int i = 0; i < r->nfiles; i++) {
		struct rfile *f = &r->files[i];
		if (!f->has_span)
			continue;
		if (!any || f->start < *start)
			*start = f->start;
		if (!any || f->end > *end)
			*end = f->end;
		any = 1;
	}
	return any ? 0 : -ENODATA;
}

static char *col_dup(sqlite3_stmt *st, int c)
{
	const char *t = (const char *)sqlite3_column_text(st, c);
	return strdup(t ? t : "");
}

void replay_chains_free(struct rec_chain *c, size_t n)
{
	for (size_t i = 0; c && i < n; i++) {
		free((char *)c[i].id);
		free((char *)c[i].severity);
		free((char *)c[i].summary);
		free((char *)c[i].root_cause);
		free((char *)c[i].explanation);
		free((char *)c[i].recommendations);
		free((char *)c[i].cuda_op);
		free((char *)c[i].timeline);
		free((char *)c[i].node);
	}
	free(c);
}

static int cmp_chain(const void *a, const void *b)
{
	const struct rec_chain *x = a, *y = b;
	if (x->detected_at_ns != y->detected_at_ns)
		return x->detected_at_ns < y->detected_at_ns ? -1 : 1;
	return strcmp(x->id, y->id);
}

int replay_chains(struct ig_source *src, struct rec_chain **out, size_t *n)
{
	struct replay *r = RP(src);
	if (!r || !out || !n)
		return -EINVAL;
	*out = NULL;
	*n = 0;
	size_t cap = 0;
	for (int i = 0; i < r->nfiles; i++) {
		struct rfile *f = &r->files[i];
		if (!has_table(f->db, "causal_chains"))
			continue;
		char sql[320];
		snprintf(
		    sql, sizeof(sql),
		    "SELECT id, detected_at, severity, summary, root_cause, explanation, "
		    "recommendations, cuda_op, cuda_p99_us, cuda_p50_us, tail_ratio, timeline%s "
		    "FROM causal_chains",
		    f->has_chain_node ? ", node" : "");
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(f->db, sql, -1, &st, NULL) != SQLITE_OK)
			continue;
		while (sqlite3_step(st) == SQLITE_ROW) {
			if (*n == cap) {
				cap = cap ? cap * 2 : 16;
				struct rec_chain *nc = realloc(*out, cap * sizeof(*nc));
				if (!nc) {
					sqlite3_finalize(st);
					return -ENOMEM;
				}
				*out = nc;
			}
			struct rec_chain *c = &(*out)[(*n)++];
			memset(c, 0, sizeof(*c));
			c->id = col_dup(st, 0);
			c->detected_at_ns = (uint64_t)sqlite3_column_int64(st, 1);
			c->severity = col_dup(st, 2);
			c->summary = col_dup(st, 3);
			c->root_cause = col_dup(st, 4);
			c->explanation = col_dup(st, 5);
			c->recommendations = col_dup(st, 6);
			c->cuda_op = col_dup(st, 7);
			c->p99_us = (uint64_t)sqlite3_column_int64(st, 8);
			c->p50_us = (uint64_t)sqlite3_column_int64(st, 9);
			c->tail_ratio = sqlite3_column_double(st, 10);
			c->timeline = col_dup(st, 11);
			const char *nd =
			    f->has_chain_node ? (const char *)sqlite3_column_text(st, 12) : NULL;
			c->node = strdup(nd && *nd ? nd : f->default_node);
		}
		sqlite3_finalize(st);
	}
	if (*n)
		qsort(*out, *n, sizeof(**out), cmp_chain);
	return 0;
}

void replay_sessions_free(struct rec_session *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		const char *s[] = {v[i].gpu_model,  v[i].gpu_driver, v[i].cpu_model,  v[i].kernel,
				   v[i].os_release, v[i].cuda_ver,   v[i].python_ver, v[i].version,
				   v[i].pid_filter, v[i].flags,	     v[i].node};
		for (size_t k = 0; k < sizeof(s) / sizeof(s[0]); k++)
			free((char *)s[k]);
	}
	free(v);
}

int replay_sessions(struct ig_source *src, struct rec_session **out, size_t *n)
{
	struct replay *r = RP(src);
	if (!r || !out || !n)
		return -EINVAL;
	*out = NULL;
	*n = 0;
	size_t cap = 0;
	for (int i = 0; i < r->nfiles; i++) {
		struct rfile *f = &r->files[i];
		if (!has_table(f->db, "sessions"))
			continue;
		int hn = has_column(f->db, "sessions", "node");
		char sql[400];
		snprintf(
		    sql, sizeof(sql),
		    "SELECT started_at, stopped_at, gpu_model, gpu_driver, cpu_model, cpu_cores, "
		    "mem_total, kernel, os_release, cuda_ver, python_ver, ingero_ver, "
		    "pid_filter, flags%s FROM sessions ORDER BY id",
		    hn ? ", node" : "");
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(f->db, sql, -1, &st, NULL) != SQLITE_OK)
			continue;
		while (sqlite3_step(st) == SQLITE_ROW) {
			if (*n == cap) {
				cap = cap ? cap * 2 : 8;
				struct rec_session *nv = realloc(*out, cap * sizeof(*nv));
				if (!nv) {
					sqlite3_finalize(st);
					return -ENOMEM;
				}
				*out = nv;
			}
			struct rec_session *v = &(*out)[(*n)++];
			memset(v, 0, sizeof(*v));
			v->started_at_ns = (uint64_t)sqlite3_column_int64(st, 0);
			v->stopped_at_ns = (uint64_t)sqlite3_column_int64(st, 1);
			v->gpu_model = col_dup(st, 2);
			v->gpu_driver = col_dup(st, 3);
			v->cpu_model = col_dup(st, 4);
			v->cpu_cores = (unsigned)sqlite3_column_int(st, 5);
			v->mem_total_mb = (uint64_t)sqlite3_column_int64(st, 6);
			v->kernel = col_dup(st, 7);
			v->os_release = col_dup(st, 8);
			v->cuda_ver = col_dup(st, 9);
			v->python_ver = col_dup(st, 10);
			v->version = col_dup(st, 11);
			v->pid_filter = col_dup(st, 12);
			v->flags = col_dup(st, 13);
			const char *nd = hn ? (const char *)sqlite3_column_text(st, 14) : NULL;
			v->node = strdup(nd && *nd ? nd : f->default_node);
		}
		sqlite3_finalize(st);
	}
	return 0;
}

int replay_process_names(struct ig_source *src, replay_name_fn cb, void *ctx)
{
	struct replay *r = RP(src);
	if (!r || !cb)
		return -EINVAL;
	for (int i = 0; i < r->nfiles; i++) {
		struct rfile *f = &r->files[i];
		if (!has_table(f->db, "process_names"))
			continue;
		int hn = has_column(f->db, "process_names", "node");
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(f->db,
				       hn ? "SELECT pid, name, seen_at, node FROM process_names "
					    "ORDER BY seen_at, rowid"
					  : "SELECT pid, name, seen_at FROM process_names ORDER BY "
					    "seen_at, rowid",
				       -1, &st, NULL) != SQLITE_OK)
			continue;
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *nm = (const char *)sqlite3_column_text(st, 1);
			unsigned node =
			    node_for(r, f, hn ? (const char *)sqlite3_column_text(st, 3) : NULL);
			cb(ctx, (uint32_t)sqlite3_column_int64(st, 0), nm ? nm : "",
			   (uint64_t)sqlite3_column_int64(st, 2), node);
		}
		sqlite3_finalize(st);
	}
	return 0;
}

int replay_file_count(struct ig_source *src)
{
	struct replay *r = RP(src);
	return r ? r->nfiles : 0;
}

int replay_file_info(struct ig_source *src, int i, struct replay_file_info *fi)
{
	struct replay *r = RP(src);
	if (!r || i < 0 || i >= r->nfiles || !fi)
		return -EINVAL;
	struct rfile *f = &r->files[i];
	fi->path = f->path;
	fi->writer = f->writer == W_OWN ? "ingero-top" : "ingero";
	fi->version = f->version;
	fi->ingero_top_schema = f->writer == W_OWN ? f->top_schema : 0;
	fi->recovered = f->tmpdir != NULL;
	return 0;
}

void replay_get_stats(struct ig_source *src, struct replay_stats *st)
{
	struct replay *r = RP(src);
	if (r)
		*st = r->st;
	else
		memset(st, 0, sizeof(*st));
}

const char *replay_error(struct ig_source *src)
{
	struct replay *r = RP(src);
	return r && r->err[0] ? r->err : NULL;
}
