/* The recorder: Ingero-compatible SQLite files written by a private writer
 * thread (WAL, prepared statements, transactions batched by count and by
 * wall time), size-bounded by pruning whole seconds of the oldest events. */
#include "store/rec.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/ops.h"

#ifndef IG_VERSION
#define IG_VERSION "dev"
#endif

/* --- the op table shared with Ingero's files ------------------------------ */

enum {
	SRC_CUDA = 1,
	SRC_NVIDIA = 2,
	SRC_HOST = 3,
	SRC_DRIVER = 4,
	SRC_IO = 5,
	SRC_TCP = 6,
	SRC_NET = 7
};

static const struct {
	int id;
	const char *name, *desc;
} sources[] = {
    {SRC_CUDA, "CUDA", "CUDA Runtime API (libcudart.so) — uprobes"},
    {SRC_NVIDIA, "NVIDIA", "NVIDIA kernel driver (nvidia.ko) — reserved, not currently traced"},
    {SRC_HOST, "HOST", "Host kernel events — tracepoints (scheduler, memory, process lifecycle)"},
    {SRC_DRIVER, "DRIVER", "CUDA Driver API (libcuda.so) — uprobes"},
    {SRC_IO, "IO", "Block I/O events — tracepoints (block_rq_issue/block_rq_complete)"},
    {SRC_TCP, "TCP", "TCP events — tracepoints (tcp_retransmit_skb)"},
    {SRC_NET, "NET", "Network socket events — syscall tracepoints (sendto/recvfrom)"},
};

/* Ingero's op ids where Ingero has the op; new ids above Ingero's for ours.
 * kind/op: what ingero-top makes of the row (kind 0: nothing). */
static const struct op_row {
	int src, id;
	const char *name, *desc;
	int kind, op;
} op_rows[] = {
    {1, 1, "cudaMalloc", "GPU memory allocation", IG_EV_CALL, IG_OP_CUDA_MALLOC},
    {1, 2, "cudaFree", "GPU memory free", IG_EV_CALL, IG_OP_CUDA_FREE},
    {1, 3, "cudaLaunchKernel", "Launch GPU kernel via runtime API", IG_EV_CALL,
     IG_OP_CUDA_LAUNCH_KERNEL},
    {1, 4, "cudaMemcpy", "Synchronous host<->device memory copy", IG_EV_CALL, IG_OP_CUDA_MEMCPY},
    {1, 5, "cudaStreamSync", "Wait for all ops in a CUDA stream to complete", IG_EV_CALL,
     IG_OP_CUDA_STREAM_SYNC},
    {1, 6, "cudaDeviceSync", "Wait for all GPU work on device to complete", IG_EV_CALL,
     IG_OP_CUDA_DEVICE_SYNC},
    {1, 7, "cudaMemcpyAsync", "Asynchronous host<->device memory copy", IG_EV_CALL,
     IG_OP_CUDA_MEMCPY_ASYNC},
    {1, 8, "cudaMallocManaged", "Unified Memory allocation via runtime API", IG_EV_CALL,
     IG_OP_CUDA_MALLOC_MANAGED},
    {1, 9, "cudaStreamBeginCapture", "Begin CUDA graph capture (ingero-top)", IG_EV_CALL,
     IG_OP_CUDA_STREAM_BEGIN_CAPTURE},
    {1, 10, "cudaStreamEndCapture", "End CUDA graph capture (ingero-top)", IG_EV_CALL,
     IG_OP_CUDA_STREAM_END_CAPTURE},
    {1, 11, "cudaGraphInstantiate", "Instantiate a CUDA graph (ingero-top)", IG_EV_CALL,
     IG_OP_CUDA_GRAPH_INSTANTIATE},
    {1, 12, "cudaGraphLaunch", "Launch a CUDA graph (ingero-top)", IG_EV_CALL,
     IG_OP_CUDA_GRAPH_LAUNCH},
    {3, 1, "sched_switch", "CPU context switch — thread was descheduled", IG_EV_OFFCPU, 0},
    {3, 2, "sched_wakeup", "Thread woken up and enqueued to run queue", 0, 0},
    {3, 3, "mm_page_alloc", "Kernel page allocation (arg0 = bytes)", IG_EV_PAGE_ALLOC, 0},
    {3, 4, "oom_kill", "Out-of-memory killer invoked", 0, 0},
    {3, 5, "process_exec", "New process executed (execve)", IG_EV_EXEC, 0},
    {3, 6, "process_exit", "Process exited", IG_EV_EXIT, 0},
    {3, 7, "process_fork", "Process forked (child auto-enrolled for tracing)", IG_EV_FORK, 0},
    {3, 10, "pod_restart", "K8s pod container restart detected", 0, 0},
    {3, 11, "pod_eviction", "K8s pod eviction detected", 0, 0},
    {3, 12, "pod_oom_kill", "K8s pod OOM kill detected", 0, 0},
    {4, 1, "cuLaunchKernel", "Launch GPU kernel via driver API (cuBLAS/cuDNN path)", IG_EV_CALL,
     IG_OP_CU_LAUNCH_KERNEL},
    {4, 2, "cuMemcpy", "Synchronous memory copy via driver API", IG_EV_CALL, IG_OP_CU_MEMCPY},
    {4, 3, "cuMemcpyAsync", "Asynchronous memory copy via driver API", IG_EV_CALL,
     IG_OP_CU_MEMCPY_ASYNC},
    {4, 4, "cuCtxSynchronize", "Wait for all GPU work in context to complete", IG_EV_CALL,
     IG_OP_CU_CTX_SYNC},
    {4, 5, "cuMemAlloc", "GPU memory allocation via driver API", IG_EV_CALL, IG_OP_CU_MEM_ALLOC},
    {4, 6, "cuMemAllocManaged", "Unified Memory allocation via driver API", IG_EV_CALL,
     IG_OP_CU_MEM_ALLOC_MANAGED},
    {4, 7, "cuMemcpyHtoD", "Synchronous host-to-device copy via driver API (ingero-top)",
     IG_EV_CALL, IG_OP_CU_MEMCPY_HTOD},
    {4, 8, "cuMemcpyDtoH", "Synchronous device-to-host copy via driver API (ingero-top)",
     IG_EV_CALL, IG_OP_CU_MEMCPY_DTOH},
    {4, 9, "cuMemFree", "GPU memory free via driver API (ingero-top)", IG_EV_CALL,
     IG_OP_CU_MEM_FREE},
    {4, 10, "cuStreamSynchronize", "Wait for a stream via driver API (ingero-top)", IG_EV_CALL,
     IG_OP_CU_STREAM_SYNC},
    {4, 11, "cuGraphLaunch", "Launch a CUDA graph via driver API (ingero-top)", IG_EV_CALL,
     IG_OP_CU_GRAPH_LAUNCH},
    {5, 1, "block_read", "Block device read request", IG_EV_BLOCK_IO, IG_IO_READ},
    {5, 2, "block_write", "Block device write request", IG_EV_BLOCK_IO, IG_IO_WRITE},
    {5, 3, "block_discard", "Block device discard/trim request", IG_EV_BLOCK_IO, IG_IO_DISCARD},
    {5, 4, "block_other", "Other block request: flush, ... (ingero-top)", IG_EV_BLOCK_IO,
     IG_IO_OTHER},
    {6, 1, "tcp_retransmit", "TCP segment retransmission", 0, 0},
    {7, 1, "net_send", "Socket send/sendto syscall", 0, 0},
    {7, 2, "net_recv", "Socket recv/recvfrom syscall", 0, 0},
};

#define N_OP_ROWS (sizeof(op_rows) / sizeof(op_rows[0]))

static const struct op_row *op_row_for(int kind, int op)
{
	for (size_t i = 0; i < N_OP_ROWS; i++)
		if (op_rows[i].kind == kind &&
		    (kind == IG_EV_CALL || kind == IG_EV_BLOCK_IO ? op_rows[i].op == op : 1))
			return &op_rows[i];
	return NULL;
}

int rec_ingero_op(int kind, int op, const char **name)
{
	const struct op_row *r = op_row_for(kind, op);
	if (!r)
		return 0;
	if (name)
		*name = r->name;
	return r->src;
}

int rec_ingero_kind(int source, const char *name, int *kind, int *op)
{
	if (!name)
		return -ENOENT;
	if (source == SRC_CUDA || source == SRC_DRIVER) {
		int o = ig_op_by_name(name);
		if (o == IG_OP_NONE)
			return -ENOENT;
		*kind = IG_EV_CALL;
		*op = o;
		return 0;
	}
	for (size_t i = 0; i < N_OP_ROWS; i++)
		if (op_rows[i].src == source && op_rows[i].kind && !strcmp(op_rows[i].name, name)) {
			*kind = op_rows[i].kind;
			*op = op_rows[i].op;
			return 0;
		}
	return -ENOENT;
}

/* --- schema ---------------------------------------------------------------- */

/* Ingero's tables (0.9 columns) plus ingero-top's columns after theirs. */
static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS events (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  timestamp INTEGER NOT NULL,\n"
    "  pid INTEGER NOT NULL,\n"
    "  tid INTEGER NOT NULL,\n"
    "  source INTEGER NOT NULL,\n"
    "  op INTEGER NOT NULL,\n"
    "  duration INTEGER NOT NULL,\n"
    "  gpu_id INTEGER NOT NULL DEFAULT 0,\n"
    "  arg0 INTEGER NOT NULL DEFAULT 0,\n"
    "  arg1 INTEGER NOT NULL DEFAULT 0,\n"
    "  ret_code INTEGER NOT NULL DEFAULT 0,\n"
    "  stack_hash INTEGER NOT NULL DEFAULT 0,\n"
    "  stack_ips TEXT NOT NULL DEFAULT '',\n"
    "  cgroup_id INTEGER NOT NULL DEFAULT 0,\n"
    "  node TEXT NOT NULL DEFAULT '',\n"
    "  rank INTEGER,\n"
    "  local_rank INTEGER,\n"
    "  world_size INTEGER,\n"
    "  comm TEXT NOT NULL DEFAULT '',\n"
    "  kind INTEGER NOT NULL DEFAULT 0,\n"
    "  start_ns INTEGER NOT NULL DEFAULT 0,\n"
    "  end_ns INTEGER NOT NULL DEFAULT 0,\n"
    "  cpu INTEGER NOT NULL DEFAULT 0,\n"
    "  flags INTEGER NOT NULL DEFAULT 0,\n"
    "  state INTEGER NOT NULL DEFAULT 0,\n"
    "  stream INTEGER NOT NULL DEFAULT 0,\n"
    "  preempt_ns INTEGER NOT NULL DEFAULT 0,\n"
    "  blocked_ns INTEGER NOT NULL DEFAULT 0,\n"
    "  switches INTEGER NOT NULL DEFAULT 0,\n"
    "  other_pid INTEGER NOT NULL DEFAULT 0,\n"
    "  other_comm TEXT NOT NULL DEFAULT ''\n"
    ");\n"
    "CREATE INDEX IF NOT EXISTS idx_events_end ON events(end_ns);\n"
    "CREATE TABLE IF NOT EXISTS stack_traces (\n"
    "  hash INTEGER PRIMARY KEY,\n"
    "  ips TEXT NOT NULL,\n"
    "  frames TEXT NOT NULL DEFAULT ''\n"
    ");\n"
    "CREATE TABLE IF NOT EXISTS causal_chains (\n"
    "  id TEXT PRIMARY KEY,\n"
    "  detected_at INTEGER NOT NULL,\n"
    "  severity TEXT NOT NULL,\n"
    "  summary TEXT NOT NULL,\n"
    "  root_cause TEXT NOT NULL,\n"
    "  explanation TEXT NOT NULL,\n"
    "  recommendations TEXT NOT NULL DEFAULT '',\n"
    "  cuda_op TEXT NOT NULL DEFAULT '',\n"
    "  cuda_p99_us INTEGER NOT NULL DEFAULT 0,\n"
    "  cuda_p50_us INTEGER NOT NULL DEFAULT 0,\n"
    "  tail_ratio REAL NOT NULL DEFAULT 0,\n"
    "  timeline TEXT NOT NULL DEFAULT '',\n"
    "  node TEXT NOT NULL DEFAULT ''\n"
    ");\n"
    "CREATE INDEX IF NOT EXISTS idx_chains_detected_at ON causal_chains(detected_at);\n"
    "CREATE TABLE IF NOT EXISTS sources (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  name TEXT NOT NULL,\n"
    "  description TEXT NOT NULL\n"
    ");\n"
    "CREATE TABLE IF NOT EXISTS ops (\n"
    "  source_id INTEGER NOT NULL,\n"
    "  op_id INTEGER NOT NULL,\n"
    "  name TEXT NOT NULL,\n"
    "  description TEXT NOT NULL,\n"
    "  PRIMARY KEY (source_id, op_id)\n"
    ");\n"
    "CREATE TABLE IF NOT EXISTS schema_info (\n"
    "  key TEXT PRIMARY KEY,\n"
    "  value TEXT NOT NULL\n"
    ");\n"
    "CREATE TABLE IF NOT EXISTS system_snapshots (\n"
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
    "  timestamp INTEGER NOT NULL UNIQUE,\n"
    "  cpu_pct REAL NOT NULL,\n"
    "  mem_pct REAL NOT NULL,\n"
    "  mem_avail INTEGER NOT NULL,\n"
    "  swap_mb INTEGER NOT NULL,\n"
    "  load_avg REAL NOT NULL,\n"
    "  node TEXT NOT NULL DEFAULT ''\n"
    ");\n"
    "CREATE TABLE IF NOT EXISTS sessions (\n"
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
    "  started_at INTEGER NOT NULL,\n"
    "  stopped_at INTEGER NOT NULL DEFAULT 0,\n"
    "  gpu_model TEXT NOT NULL DEFAULT '',\n"
    "  gpu_driver TEXT NOT NULL DEFAULT '',\n"
    "  cpu_model TEXT NOT NULL DEFAULT '',\n"
    "  cpu_cores INTEGER NOT NULL DEFAULT 0,\n"
    "  mem_total INTEGER NOT NULL DEFAULT 0,\n"
    "  kernel TEXT NOT NULL DEFAULT '',\n"
    "  os_release TEXT NOT NULL DEFAULT '',\n"
    "  cuda_ver TEXT NOT NULL DEFAULT '',\n"
    "  python_ver TEXT NOT NULL DEFAULT '',\n"
    "  ingero_ver TEXT NOT NULL DEFAULT '',\n"
    "  pid_filter TEXT NOT NULL DEFAULT '',\n"
    "  flags TEXT NOT NULL DEFAULT '',\n"
    "  node TEXT NOT NULL DEFAULT '',\n"
    "  rank INTEGER,\n"
    "  local_rank INTEGER,\n"
    "  world_size INTEGER\n"
    ");\n"
    "CREATE TABLE IF NOT EXISTS process_names (\n"
    "  pid INTEGER NOT NULL,\n"
    "  name TEXT NOT NULL,\n"
    "  seen_at INTEGER NOT NULL DEFAULT 0,\n"
    "  tid INTEGER NOT NULL DEFAULT 0,\n"
    "  node TEXT NOT NULL DEFAULT '',\n"
    "  is_event INTEGER NOT NULL DEFAULT 0,\n"
    "  ppid INTEGER NOT NULL DEFAULT 0\n"
    ");\n"
    "CREATE INDEX IF NOT EXISTS idx_process_names_pid ON process_names(pid);\n"
    "CREATE TABLE IF NOT EXISTS event_aggregates (\n"
    "  bucket INTEGER NOT NULL,\n"
    "  source INTEGER NOT NULL,\n"
    "  op INTEGER NOT NULL,\n"
    "  pid INTEGER NOT NULL DEFAULT 0,\n"
    "  count INTEGER NOT NULL DEFAULT 0,\n"
    "  stored INTEGER NOT NULL DEFAULT 0,\n"
    "  sum_dur INTEGER NOT NULL DEFAULT 0,\n"
    "  min_dur INTEGER NOT NULL DEFAULT 0,\n"
    "  max_dur INTEGER NOT NULL DEFAULT 0,\n"
    "  sum_arg0 INTEGER NOT NULL DEFAULT 0,\n"
    "  PRIMARY KEY (bucket, source, op, pid)\n"
    ");\n"
    "CREATE TABLE IF NOT EXISTS ingero_top_nodes (\n"
    "  idx INTEGER PRIMARY KEY,\n"
    "  name TEXT NOT NULL\n"
    ");\n"
    "CREATE TABLE IF NOT EXISTS ingero_top_pruned (\n"
    "  pruned_at INTEGER NOT NULL,\n"
    "  before_ns INTEGER NOT NULL,\n"
    "  events INTEGER NOT NULL,\n"
    "  db_bytes INTEGER NOT NULL\n"
    ");\n";

/* Ingero's query indexes; built at rec_close so that inserts stay cheap. */
static const char close_index_sql[] =
    "CREATE INDEX IF NOT EXISTS idx_events_timestamp ON events(timestamp);\n"
    "CREATE INDEX IF NOT EXISTS idx_events_pid ON events(pid);\n"
    "CREATE INDEX IF NOT EXISTS idx_events_source_op_stack ON events(source, op, stack_hash);\n";

static const char *const schema_notes[][2] = {
    {"timestamp_unit", "nanoseconds (Unix epoch)"},
    {"duration_unit", "nanoseconds"},
    {"arg0_note", "Operation-specific: byte size for alloc/memcpy, kernel function pointer for "
		  "launch; ingero-top: bytes for block I/O, child pid for process_fork"},
    {"arg1_note", "Operation-specific: memcpy direction for cudaMemcpy/cudaMemcpyAsync, unused "
		  "for most ops"},
    {"ret_code_note", "CUDA return code (0 = cudaSuccess). Host events always 0."},
    {"example_query",
     "SELECT e.id, s.name AS source, o.name AS op, e.duration/1000 AS dur_us, e.pid FROM events "
     "e JOIN sources s ON e.source = s.id JOIN ops o ON e.source = o.source_id AND e.op = "
     "o.op_id ORDER BY e.timestamp DESC LIMIT 20"},
    {"system_snapshots_note", "System metrics sampled every 1s during recording."},
    {"process_names_note", "PID-to-name mapping; ingero-top adds a row per name change "
			   "(seen_at = when the name was seen; ppid = parent pid, 0 = unknown)."},
    {"ingero_top_columns_note",
     "events.start_ns/end_ns: interval in Unix ns (call entry/exit, switch-out/back on CPU, "
     "I/O issue/completion); timestamp follows Ingero (entry for calls, end for sched_switch "
     "and block I/O). kind: ingero-top event kind. cpu, flags (1 in call, 2 no split), state "
     "(0 unknown, 1 preempted, 2 blocked), stream, preempt_ns/blocked_ns/switches (off-CPU "
     "during a call), other_pid/other_comm (preemptor or waker). See docs/recording.md."},
};

/* --- the recorder ---------------------------------------------------------- */

enum item_type { IT_EVENT = 0, IT_CHAIN, IT_SESSION, IT_STACK, IT_NODE };

struct item {
	int type;
	void *p; /* owned command data for non-event items */
	struct ig_event e;
};

struct chain_cmd {
	struct rec_chain c;
	char *s[10];
};

struct session_cmd {
	struct rec_session s;
	char *str[11];
};

struct stack_cmd {
	uint64_t hash;
	char *ips, *frames;
};

struct node_cmd {
	unsigned idx;
	char *name;
};

#define NAME_SLOTS 4096

struct rec {
	char *path;
	sqlite3 *db;
	struct rec_opts o;
	/* statements */
	sqlite3_stmt *st_event, *st_snap, *st_name, *st_chain, *st_stack, *st_node;
	sqlite3_stmt *st_begin, *st_commit, *st_rollback;
	/* queue, guarded by mu */
	pthread_mutex_t mu;
	pthread_cond_t cv_work, cv_done;
	struct item *q;
	size_t qcap, qhead, qlen;
	uint64_t flush_req, flush_done;
	int quit;
	pthread_t thr;
	int have_thr;
	/* state shared with the writer; guarded by mu */
	int err; /* -errno once stopped */
	char errmsg[1024];
	struct rec_stats st;
	/* writer-only state */
	int in_txn;
	unsigned txn_rows;
	uint64_t txn_start_ms;
	int64_t session_id;
	uint64_t rows_in_file; /* estimate for pruning */
	uint64_t w_events;     /* rows written by this recorder */
	uint64_t page_size;
	char *node_names[256];
	struct {
		uint32_t pid;
		char comm[IG_COMM_LEN];
	} names[NAME_SLOTS];
	struct item *batch; /* writer's private copy of queued items */
};

static __thread char errbuf[512];

static const char *set_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	return errbuf;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int sqlite_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_TOOBIG:
		return -EFBIG;
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return -EILSEQ;
	default:
		return -EIO;
	}
}

/* Stops the recorder: first error wins. Caller holds no lock. */
static void stop_with(struct rec *r, int err, const char *what)
{
	pthread_mutex_lock(&r->mu);
	if (!r->err) {
		r->err = err;
		snprintf(r->errmsg, sizeof(r->errmsg), "recording to %s stopped: %s (%s)", r->path,
			 what, strerror(-err));
	}
	pthread_cond_broadcast(&r->cv_done);
	pthread_mutex_unlock(&r->mu);
}

static int exec_sql(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

static int step_reset(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

static void bind_str(sqlite3_stmt *st, int i, const char *s)
{
	sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_STATIC);
}

static void bind_comm(sqlite3_stmt *st, int i, const char *c)
{
	sqlite3_bind_text(st, i, c, (int)strnlen(c, IG_COMM_LEN), SQLITE_STATIC);
}

static const char *node_name(struct rec *r, unsigned idx)
{
	if (idx < 256 && r->node_names[idx])
		return r->node_names[idx];
	return "";
}

/* Names are only stored when they change, per pid. */
static int name_changed(struct rec *r, uint32_t pid, const char *comm)
{
	unsigned slot = (pid * 2654435761u) % NAME_SLOTS;
	if (r->names[slot].pid == pid && !strncmp(r->names[slot].comm, comm, IG_COMM_LEN))
		return 0;
	r->names[slot].pid = pid;
	memcpy(r->names[slot].comm, comm, IG_COMM_LEN);
	return 1;
}

static int write_name(struct rec *r, const struct ig_event *e, int is_event)
{
	sqlite3_stmt *st = r->st_name;
	sqlite3_bind_int64(st, 1, e->pid);
	bind_comm(st, 2, e->comm);
	sqlite3_bind_int64(st, 3, (int64_t)e->ts_ns);
	sqlite3_bind_int64(st, 4, e->tid);
	bind_str(st, 5, node_name(r, e->node));
	sqlite3_bind_int(st, 6, is_event);
	sqlite3_bind_int64(st, 7, is_event ? (int64_t)e->arg0 : 0); /* name events: the ppid */
	return step_reset(st);
}

static int write_event(struct rec *r, const struct ig_event *e)
{
	int rc;
	if (e->kind == IG_EV_SNAPSHOT) {
		sqlite3_stmt *st = r->st_snap;
		sqlite3_bind_int64(st, 1, (int64_t)e->ts_ns);
		sqlite3_bind_double(st, 2, (double)e->arg0 / 10.0);
		sqlite3_bind_double(st, 3, (double)e->arg1 / 10.0);
		sqlite3_bind_int64(st, 4, (int64_t)e->stream);
		sqlite3_bind_int64(st, 5, (int64_t)e->preempt_ns);
		sqlite3_bind_double(st, 6, (double)e->blocked_ns / 100.0);
		bind_str(st, 7, node_name(r, e->node));
		return step_reset(st);
	}
	if (e->kind == IG_EV_COMM) {
		name_changed(r, e->pid, e->comm);
		return write_name(r, e, 1);
	}
	const struct op_row *o = op_row_for(e->kind, e->op);
	if (!o)
		return SQLITE_OK; /* nothing to store for this kind */
	if (e->comm[0] && name_changed(r, e->pid, e->comm)) {
		rc = write_name(r, e, 0);
		if (rc != SQLITE_OK)
			return rc;
	}
	uint64_t end = e->ts_ns + e->dur_ns;
	/* Ingero stamps sched_switch and block I/O rows at their end. */
	uint64_t stamp = (e->kind == IG_EV_OFFCPU || e->kind == IG_EV_BLOCK_IO) ? end : e->ts_ns;
	sqlite3_stmt *st = r->st_event;
	sqlite3_bind_int64(st, 1, (int64_t)stamp);
	sqlite3_bind_int64(st, 2, e->pid);
	sqlite3_bind_int64(st, 3, e->tid);
	sqlite3_bind_int(st, 4, o->src);
	sqlite3_bind_int(st, 5, o->id);
	sqlite3_bind_int64(st, 6, (int64_t)e->dur_ns);
	sqlite3_bind_int64(st, 7, (int64_t)e->arg0);
	sqlite3_bind_int64(st, 8, (int64_t)e->arg1);
	sqlite3_bind_int64(st, 9, e->ret);
	sqlite3_bind_int64(st, 10, (int64_t)e->stack_id);
	sqlite3_bind_int64(st, 11, (int64_t)e->cgroup_id);
	bind_str(st, 12, node_name(r, e->node));
	bind_comm(st, 13, e->comm);
	sqlite3_bind_int(st, 14, e->kind);
	sqlite3_bind_int64(st, 15, (int64_t)e->ts_ns);
	sqlite3_bind_int64(st, 16, (int64_t)end);
	sqlite3_bind_int64(st, 17, e->cpu);
	sqlite3_bind_int64(st, 18, e->flags);
	sqlite3_bind_int(st, 19, e->state);
	sqlite3_bind_int64(st, 20, (int64_t)e->stream);
	sqlite3_bind_int64(st, 21, (int64_t)e->preempt_ns);
	sqlite3_bind_int64(st, 22, (int64_t)e->blocked_ns);
	sqlite3_bind_int64(st, 23, e->switches);
	sqlite3_bind_int64(st, 24, e->other_pid);
	bind_comm(st, 25, e->other_comm);
	rc = step_reset(st);
	if (rc == SQLITE_OK) {
		r->rows_in_file++;
		r->w_events++;
	}
	return rc;
}

static int write_chain(struct rec *r, const struct rec_chain *c)
{
	sqlite3_stmt *st = r->st_chain;
	bind_str(st, 1, c->id);
	sqlite3_bind_int64(st, 2, (int64_t)c->detected_at_ns);
	bind_str(st, 3, c->severity);
	bind_str(st, 4, c->summary);
	bind_str(st, 5, c->root_cause);
	bind_str(st, 6, c->explanation);
	bind_str(st, 7, c->recommendations);
	bind_str(st, 8, c->cuda_op);
	sqlite3_bind_int64(st, 9, (int64_t)c->p99_us);
	sqlite3_bind_int64(st, 10, (int64_t)c->p50_us);
	sqlite3_bind_double(st, 11, c->tail_ratio);
	bind_str(st, 12, c->timeline);
	bind_str(st, 13, c->node);
	return step_reset(st);
}

static int write_session(struct rec *r, const struct rec_session *s)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(
	    r->db,
	    "UPDATE sessions SET started_at=?1, gpu_model=?2, gpu_driver=?3, cpu_model=?4, "
	    "cpu_cores=?5, mem_total=?6, kernel=?7, os_release=?8, cuda_ver=?9, python_ver=?10, "
	    "ingero_ver=?11, pid_filter=?12, flags=?13, node=?14, stopped_at=?15 WHERE id=?16",
	    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, (int64_t)(s->started_at_ns ? s->started_at_ns : wall_ns()));
	bind_str(st, 2, s->gpu_model);
	bind_str(st, 3, s->gpu_driver);
	bind_str(st, 4, s->cpu_model);
	sqlite3_bind_int64(st, 5, s->cpu_cores);
	sqlite3_bind_int64(st, 6, (int64_t)s->mem_total_mb);
	bind_str(st, 7, s->kernel);
	bind_str(st, 8, s->os_release);
	bind_str(st, 9, s->cuda_ver);
	bind_str(st, 10, s->python_ver);
	bind_str(st, 11, s->version ? s->version : "ingero-top " IG_VERSION);
	bind_str(st, 12, s->pid_filter);
	bind_str(st, 13, s->flags);
	bind_str(st, 14, s->node);
	sqlite3_bind_int64(st, 15, (int64_t)s->stopped_at_ns);
	sqlite3_bind_int64(st, 16, r->session_id);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int write_stack(struct rec *r, const struct stack_cmd *s)
{
	sqlite3_stmt *st = r->st_stack;
	sqlite3_bind_int64(st, 1, (int64_t)s->hash);
	bind_str(st, 2, s->ips);
	bind_str(st, 3, s->frames);
	return step_reset(st);
}

static int write_node(struct rec *r, unsigned idx, const char *name)
{
	free(r->node_names[idx]);
	r->node_names[idx] = strdup(name ? name : "");
	sqlite3_stmt *st = r->st_node;
	sqlite3_bind_int(st, 1, (int)idx);
	bind_str(st, 2, r->node_names[idx]);
	return step_reset(st);
}

static void free_item(struct item *it)
{
	switch (it->type) {
	case IT_CHAIN: {
		struct chain_cmd *c = it->p;
		for (int i = 0; i < 10; i++)
			free(c->s[i]);
		break;
	}
	case IT_SESSION: {
		struct session_cmd *c = it->p;
		for (int i = 0; i < 11; i++)
			free(c->str[i]);
		break;
	}
	case IT_STACK: {
		struct stack_cmd *c = it->p;
		free(c->ips);
		free(c->frames);
		break;
	}
	case IT_NODE:
		free(((struct node_cmd *)it->p)->name);
		break;
	}
	free(it->p);
	it->p = NULL;
}

static int write_item(struct rec *r, struct item *it)
{
	switch (it->type) {
	case IT_EVENT:
		return write_event(r, &it->e);
	case IT_CHAIN:
		return write_chain(r, &((struct chain_cmd *)it->p)->c);
	case IT_SESSION:
		return write_session(r, &((struct session_cmd *)it->p)->s);
	case IT_STACK:
		return write_stack(r, it->p);
	case IT_NODE: {
		struct node_cmd *n = it->p;
		return write_node(r, n->idx, n->name);
	}
	}
	return SQLITE_OK;
}

static int64_t query_int(sqlite3 *db, const char *sql, int64_t dflt)
{
	sqlite3_stmt *st;
	int64_t v = dflt;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return dflt;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Used size of the database: pages in use, in bytes. The WAL beside it is
 * bounded on its own (journal_size_limit) and folded in at rec_close. */
static uint64_t used_bytes(struct rec *r)
{
	int64_t pages = query_int(r->db, "PRAGMA page_count", 0);
	int64_t free_pages = query_int(r->db, "PRAGMA freelist_count", 0);
	return (uint64_t)(pages - free_pages) * r->page_size;
}

/* --max-db: deletes the oldest whole seconds of events until the used size is
 * back under ~80 % of the bound, in its own transaction, and says so in
 * ingero_top_pruned and schema_info. */
static int prune(struct rec *r)
{
	uint64_t used = used_bytes(r);
	pthread_mutex_lock(&r->mu);
	r->st.db_bytes = used;
	pthread_mutex_unlock(&r->mu);
	if (!r->o.max_db_bytes || used <= r->o.max_db_bytes)
		return SQLITE_OK;
	if (!r->rows_in_file)
		return SQLITE_OK;
	uint64_t target = r->o.max_db_bytes / 10 * 8;
	uint64_t per_row = used / r->rows_in_file;
	if (!per_row)
		per_row = 1;
	uint64_t n = (used - target) / per_row + 1;
	if (n > r->rows_in_file / 2) /* the estimate may be off: never wipe out */
		n = r->rows_in_file / 2;
	char sql[256];
	snprintf(sql, sizeof(sql),
		 "SELECT end_ns FROM events ORDER BY end_ns LIMIT 1 OFFSET %" PRIu64, n);
	int64_t ts = query_int(r->db, sql, -1);
	if (ts < 0)
		return SQLITE_OK;
	/* whole seconds: everything before the next second boundary goes */
	uint64_t cutoff = ((uint64_t)ts / 1000000000ull + 1) * 1000000000ull;
	int rc = exec_sql(r->db, "BEGIN");
	if (rc != SQLITE_OK)
		return rc;
	snprintf(sql, sizeof(sql), "DELETE FROM events WHERE end_ns < %" PRIu64, cutoff);
	rc = exec_sql(r->db, sql);
	uint64_t deleted = (uint64_t)sqlite3_changes(r->db);
	if (rc == SQLITE_OK) {
		snprintf(sql, sizeof(sql),
			 "DELETE FROM system_snapshots WHERE timestamp < %" PRIu64, cutoff);
		rc = exec_sql(r->db, sql);
	}
	if (rc == SQLITE_OK) { /* older names go too, but each pid keeps its latest */
		snprintf(sql, sizeof(sql),
			 "DELETE FROM process_names WHERE seen_at < %" PRIu64 " AND rowid NOT IN "
			 "(SELECT MAX(rowid) FROM process_names GROUP BY pid)",
			 cutoff);
		rc = exec_sql(r->db, sql);
	}
	if (rc == SQLITE_OK) {
		snprintf(sql, sizeof(sql),
			 "INSERT INTO ingero_top_pruned VALUES (%" PRIu64 ", %" PRIu64 ", %" PRIu64
			 ", %" PRIu64 ")",
			 wall_ns(), cutoff, deleted, used);
		rc = exec_sql(r->db, sql);
	}
	if (rc == SQLITE_OK) {
		snprintf(sql, sizeof(sql),
			 "INSERT OR REPLACE INTO schema_info VALUES ('pruned_before_ns', '%" PRIu64
			 "')",
			 cutoff);
		rc = exec_sql(r->db, sql);
	}
	if (rc == SQLITE_OK)
		rc = exec_sql(r->db, "COMMIT");
	if (rc != SQLITE_OK) {
		exec_sql(r->db, "ROLLBACK");
		return rc;
	}
	r->rows_in_file = deleted < r->rows_in_file ? r->rows_in_file - deleted : 0;
	pthread_mutex_lock(&r->mu);
	r->st.pruned_events += deleted;
	r->st.prunes++;
	pthread_mutex_unlock(&r->mu);
	return SQLITE_OK;
}

static int txn_begin(struct rec *r)
{
	if (r->in_txn)
		return SQLITE_OK;
	int rc = step_reset(r->st_begin);
	if (rc == SQLITE_OK) {
		r->in_txn = 1;
		r->txn_rows = 0;
		r->txn_start_ms = mono_ms();
	}
	return rc;
}

static int txn_commit(struct rec *r)
{
	if (!r->in_txn)
		return SQLITE_OK;
	int rc = step_reset(r->st_commit);
	if (rc != SQLITE_OK)
		return rc;
	r->in_txn = 0;
	pthread_mutex_lock(&r->mu);
	r->st.events = r->w_events;
	r->st.committed = r->w_events;
	r->st.commits++;
	pthread_mutex_unlock(&r->mu);
	return prune(r);
}

static void fail_txn(struct rec *r, int rc, const char *what)
{
	char why[300];
	snprintf(why, sizeof(why), "%s: %s", what, sqlite3_errmsg(r->db));
	if (r->in_txn) {
		step_reset(r->st_rollback);
		r->in_txn = 0;
	}
	stop_with(r, sqlite_errno(rc), why);
}

/* Writes a batch of items inside the current transaction, committing by
 * count. Returns 0 or an SQLite error (the recorder is then stopped). */
static int write_batch(struct rec *r, struct item *items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc = txn_begin(r);
		if (rc == SQLITE_OK)
			rc = write_item(r, &items[i]);
		if (rc == SQLITE_OK && ++r->txn_rows >= r->o.batch_events)
			rc = txn_commit(r);
		if (rc != SQLITE_OK) {
			fail_txn(r, rc, "cannot write");
			return rc;
		}
	}
	pthread_mutex_lock(&r->mu);
	r->st.events = r->w_events;
	pthread_mutex_unlock(&r->mu);
	return SQLITE_OK;
}

static int maybe_commit_by_time(struct rec *r)
{
	if (r->in_txn && mono_ms() - r->txn_start_ms >= r->o.commit_ms) {
		int rc = txn_commit(r);
		if (rc != SQLITE_OK) {
			fail_txn(r, rc, "cannot commit");
			return rc;
		}
	}
	return SQLITE_OK;
}

static void *writer_main(void *arg)
{
	struct rec *r = arg;
	size_t chunk = r->o.batch_events;
	pthread_mutex_lock(&r->mu);
	for (;;) {
		while (!r->qlen && !r->quit && r->flush_req == r->flush_done) {
			if (r->in_txn && !r->err) {
				uint64_t due = r->txn_start_ms + r->o.commit_ms;
				struct timespec ts;
				clock_gettime(CLOCK_REALTIME, &ts);
				uint64_t now = mono_ms();
				uint64_t wait = due > now ? due - now : 0;
				if (!wait)
					break;
				ts.tv_sec += (time_t)(wait / 1000);
				ts.tv_nsec += (long)(wait % 1000) * 1000000;
				if (ts.tv_nsec >= 1000000000) {
					ts.tv_sec++;
					ts.tv_nsec -= 1000000000;
				}
				pthread_cond_timedwait(&r->cv_work, &r->mu, &ts);
			} else {
				pthread_cond_wait(&r->cv_work, &r->mu);
			}
		}
		size_t n = r->qlen < chunk ? r->qlen : chunk;
		for (size_t i = 0; i < n; i++) {
			r->batch[i] = r->q[r->qhead];
			r->qhead = (r->qhead + 1) % r->qcap;
		}
		r->qlen -= n;
		uint64_t flush_req = r->flush_req;
		int quit = r->quit;
		int failed = r->err;
		pthread_mutex_unlock(&r->mu);

		if (!failed && n)
			write_batch(r, r->batch, n);
		for (size_t i = 0; i < n; i++)
			if (r->batch[i].type != IT_EVENT)
				free_item(&r->batch[i]);
		if (!r->err)
			maybe_commit_by_time(r);

		pthread_mutex_lock(&r->mu);
		if (!r->qlen && flush_req != r->flush_done) {
			pthread_mutex_unlock(&r->mu);
			if (!r->err && r->in_txn) {
				int rc = txn_commit(r);
				if (rc != SQLITE_OK)
					fail_txn(r, rc, "cannot commit");
			}
			pthread_mutex_lock(&r->mu);
			r->flush_done = flush_req;
			pthread_cond_broadcast(&r->cv_done);
		}
		if (quit && !r->qlen)
			break;
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

static int enqueue(struct rec *r, const struct item *it)
{
	if (r->o.synchronous) {
		struct item copy = *it;
		if (r->err) {
			if (copy.type != IT_EVENT)
				free_item(&copy);
			return r->err;
		}
		write_batch(r, &copy, 1);
		if (copy.type != IT_EVENT)
			free_item(&copy);
		if (!r->err)
			maybe_commit_by_time(r);
		return r->err;
	}
	pthread_mutex_lock(&r->mu);
	int err = r->err;
	if (!err && r->qlen == r->qcap) {
		r->st.dropped++;
		err = -ENOBUFS;
	}
	if (!err) {
		r->q[(r->qhead + r->qlen) % r->qcap] = *it;
		r->qlen++;
		/* wake the writer once per half batch, not per event */
		if (r->qlen == 1 || r->qlen % (r->o.batch_events / 2 + 1) == 0)
			pthread_cond_signal(&r->cv_work);
	}
	pthread_mutex_unlock(&r->mu);
	return err;
}

int rec_event(struct rec *r, const struct ig_event *e)
{
	struct item it;
	it.type = IT_EVENT;
	it.p = NULL;
	it.e = *e;
	return enqueue(r, &it);
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

static int enqueue_cmd(struct rec *r, int type, void *p)
{
	struct item it = {.type = type, .p = p};
	int err = enqueue(r, &it);
	if (err && !r->o.synchronous)
		free_item(&it);
	return err;
}

int rec_chain(struct rec *r, const struct rec_chain *c)
{
	struct chain_cmd *cc = calloc(1, sizeof(*cc));
	if (!cc)
		return -ENOMEM;
	cc->c = *c;
	const char *src[10] = {
	    c->id,	c->severity, c->summary, c->root_cause, c->explanation, c->recommendations,
	    c->cuda_op, c->timeline, c->node,	 NULL};
	for (int i = 0; i < 9; i++)
		cc->s[i] = dup_or_empty(src[i]);
	cc->c.id = cc->s[0];
	cc->c.severity = cc->s[1];
	cc->c.summary = cc->s[2];
	cc->c.root_cause = cc->s[3];
	cc->c.explanation = cc->s[4];
	cc->c.recommendations = cc->s[5];
	cc->c.cuda_op = cc->s[6];
	cc->c.timeline = cc->s[7];
	cc->c.node = cc->s[8];
	return enqueue_cmd(r, IT_CHAIN, cc);
}

int rec_session_info(struct rec *r, const struct rec_session *s)
{
	struct session_cmd *sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -ENOMEM;
	sc->s = *s;
	const char **f[11] = {&sc->s.gpu_model,	 &sc->s.gpu_driver, &sc->s.cpu_model,
			      &sc->s.kernel,	 &sc->s.os_release, &sc->s.cuda_ver,
			      &sc->s.python_ver, &sc->s.version,    &sc->s.pid_filter,
			      &sc->s.flags,	 &sc->s.node};
	for (int i = 0; i < 11; i++) {
		if (i == 7 && !*f[i]) /* version: keep NULL for the default */
			continue;
		sc->str[i] = dup_or_empty(*f[i]);
		*f[i] = sc->str[i];
	}
	return enqueue_cmd(r, IT_SESSION, sc);
}

int rec_stack(struct rec *r, uint64_t hash, const char *ips_json, const char *frames_json)
{
	struct stack_cmd *sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -ENOMEM;
	sc->hash = hash;
	sc->ips = dup_or_empty(ips_json);
	sc->frames = dup_or_empty(frames_json);
	return enqueue_cmd(r, IT_STACK, sc);
}

int rec_set_node_name(struct rec *r, unsigned idx, const char *name)
{
	if (idx > 255)
		return -EINVAL;
	struct node_cmd *nc = calloc(1, sizeof(*nc));
	if (!nc)
		return -ENOMEM;
	nc->idx = idx;
	nc->name = dup_or_empty(name);
	return enqueue_cmd(r, IT_NODE, nc);
}

int rec_flush(struct rec *r)
{
	if (r->o.synchronous) {
		if (!r->err && r->in_txn) {
			int rc = txn_commit(r);
			if (rc != SQLITE_OK)
				fail_txn(r, rc, "cannot commit");
		}
		return r->err;
	}
	pthread_mutex_lock(&r->mu);
	uint64_t want = ++r->flush_req;
	pthread_cond_signal(&r->cv_work);
	while (r->flush_done < want)
		pthread_cond_wait(&r->cv_done, &r->mu);
	int err = r->err;
	pthread_mutex_unlock(&r->mu);
	return err;
}

const char *rec_error(const struct rec *r)
{
	struct rec *m = (struct rec *)r;
	pthread_mutex_lock(&m->mu);
	const char *e = m->err ? m->errmsg : NULL;
	pthread_mutex_unlock(&m->mu);
	return e;
}

const char *rec_path(const struct rec *r)
{
	return r->path;
}

void rec_get_stats(struct rec *r, struct rec_stats *st)
{
	pthread_mutex_lock(&r->mu);
	*st = r->st;
	pthread_mutex_unlock(&r->mu);
}

static void finalize_all(struct rec *r)
{
	sqlite3_stmt **sts[] = {&r->st_event, &r->st_snap,   &r->st_name,
				&r->st_chain, &r->st_stack,  &r->st_node,
				&r->st_begin, &r->st_commit, &r->st_rollback};
	for (size_t i = 0; i < sizeof(sts) / sizeof(sts[0]); i++) {
		sqlite3_finalize(*sts[i]);
		*sts[i] = NULL;
	}
}

static void rec_destroy(struct rec *r)
{
	finalize_all(r);
	if (r->db)
		sqlite3_close_v2(r->db);
	for (int i = 0; i < 256; i++)
		free(r->node_names[i]);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv_work);
	pthread_cond_destroy(&r->cv_done);
	free(r->q);
	free(r->batch);
	free(r->path);
	free(r);
}

/* Ingero's query indexes (timestamp, pid, source/op/stack) make inserts
 * ~6x slower, so they are built once at close -- unless that would take long
 * (more than REC_INDEX_MAX_ROWS rows) or break --max-db; schema_info
 * query_indexes says which, with the SQL to build them by hand. */
#define REC_INDEX_MAX_ROWS 4000000

static int build_query_indexes(struct rec *r)
{
	const char *why = NULL;
	if (r->rows_in_file > REC_INDEX_MAX_ROWS)
		why = "skipped: too many rows to build them at exit";
	else if (r->o.max_db_bytes && used_bytes(r) / 10 * 16 > r->o.max_db_bytes)
		why = "skipped: they would not fit in --max-db";
	int rc = SQLITE_OK;
	if (!why)
		rc = exec_sql(r->db, close_index_sql);
	char *v = why ? sqlite3_mprintf("%s; to build them: %s", why, close_index_sql) : NULL;
	char *q = sqlite3_mprintf("INSERT OR REPLACE INTO schema_info VALUES ('query_indexes', "
				  "%Q)",
				  v ? v : "built");
	if (rc == SQLITE_OK)
		rc = exec_sql(r->db, q);
	sqlite3_free(q);
	sqlite3_free(v);
	return rc;
}

int rec_close(struct rec *r)
{
	if (!r)
		return 0;
	int err = 0;
	if (r->have_thr) {
		rec_flush(r);
		pthread_mutex_lock(&r->mu);
		r->quit = 1;
		pthread_cond_signal(&r->cv_work);
		pthread_mutex_unlock(&r->mu);
		pthread_join(r->thr, NULL);
		r->have_thr = 0;
	} else {
		rec_flush(r);
	}
	/* anything left (after a stop) is discarded */
	while (r->qlen) {
		struct item *it = &r->q[r->qhead];
		if (it->type != IT_EVENT)
			free_item(it);
		r->qhead = (r->qhead + 1) % r->qcap;
		r->qlen--;
	}
	err = r->err;
	if (!r->err) {
		char sql[160];
		snprintf(sql, sizeof(sql),
			 "UPDATE sessions SET stopped_at=%" PRIu64 " WHERE id=%" PRId64, wall_ns(),
			 r->session_id);
		int rc = exec_sql(r->db, sql);
		if (rc == SQLITE_OK)
			rc = build_query_indexes(r);
		if (rc != SQLITE_OK)
			err = sqlite_errno(rc);
	}
	finalize_all(r);
	/* a single self-contained file: fold the WAL in and drop it; after a
	 * failure (disk full) leave the WAL alone: file + WAL are valid and
	 * replay recovers them, a half-done checkpoint would not help */
	if (!r->err) {
		exec_sql(r->db, "PRAGMA wal_checkpoint(TRUNCATE)");
		exec_sql(r->db, "PRAGMA journal_mode=DELETE");
	}
	if (sqlite3_close(r->db) != SQLITE_OK && !err)
		err = -EIO;
	r->db = NULL;
	rec_destroy(r);
	return err;
}

static int prepare(struct rec *r, sqlite3_stmt **st, const char *sql)
{
	return sqlite3_prepare_v3(r->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
}

/* Is this an existing file we may append to? 0 = yes or no file, else a
 * message in errbuf. */
static int check_existing(const char *path, const struct rec_opts *o, const char **err)
{
	struct stat sb;
	if (stat(path, &sb) != 0)
		return 0;
	if (S_ISDIR(sb.st_mode)) {
		*err = set_err("cannot record to %s: is a directory", path);
		return -EISDIR;
	}
	if (sb.st_size == 0)
		return 0;
	if (o->exclusive) {
		*err = set_err("cannot record to %s: file exists", path);
		return -EEXIST;
	}
	sqlite3 *db = NULL;
	int ret = 0;
	char uri[4200];
	snprintf(uri, sizeof(uri), "%s", path);
	if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		*err = set_err("cannot record to %s: exists and cannot be opened: %s", path,
			       db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return -EIO;
	}
	sqlite3_stmt *st = NULL;
	const char *writer = NULL;
	int64_t schema = 0;
	if (sqlite3_prepare_v2(db,
			       "SELECT key, value FROM schema_info WHERE key IN "
			       "('writer','ingero_top_schema')",
			       -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *k = (const char *)sqlite3_column_text(st, 0);
			if (k && !strcmp(k, "writer")) {
				const char *v = (const char *)sqlite3_column_text(st, 1);
				writer = v && !strcmp(v, "ingero-top") ? "ingero-top" : "other";
			} else if (k) {
				schema = sqlite3_column_int64(st, 1);
			}
		}
		sqlite3_finalize(st);
	}
	if (!writer || strcmp(writer, "ingero-top")) {
		*err = set_err("cannot record to %s: file exists and is not an ingero-top "
			       "recording (not appending to it)",
			       path);
		ret = -EEXIST;
	} else if (schema > REC_SCHEMA) {
		*err = set_err("cannot record to %s: written by a newer ingero-top (schema %" PRId64
			       ", this one writes %d)",
			       path, schema, REC_SCHEMA);
		ret = -EPROTO;
	}
	sqlite3_close(db);
	return ret;
}

static int setup_schema(struct rec *r)
{
	int rc = exec_sql(r->db, "BEGIN");
	if (rc == SQLITE_OK)
		rc = exec_sql(r->db, schema_sql);
	/* A file written before process_names had ppid (appending to it). */
	if (rc == SQLITE_OK && !query_int(r->db,
					  "SELECT COUNT(*) FROM pragma_table_info('process_names') "
					  "WHERE name = 'ppid'",
					  0))
		rc = exec_sql(r->db, "ALTER TABLE process_names ADD COLUMN ppid INTEGER NOT NULL "
				     "DEFAULT 0");
	char sql[1024];
	for (size_t i = 0; rc == SQLITE_OK && i < sizeof(sources) / sizeof(sources[0]); i++) {
		char *q = sqlite3_mprintf("INSERT OR IGNORE INTO sources VALUES (%d, %Q, %Q)",
					  sources[i].id, sources[i].name, sources[i].desc);
		rc = exec_sql(r->db, q);
		sqlite3_free(q);
	}
	for (size_t i = 0; rc == SQLITE_OK && i < N_OP_ROWS; i++) {
		char *q = sqlite3_mprintf("INSERT OR IGNORE INTO ops VALUES (%d, %d, %Q, %Q)",
					  op_rows[i].src, op_rows[i].id, op_rows[i].name,
					  op_rows[i].desc);
		rc = exec_sql(r->db, q);
		sqlite3_free(q);
	}
	for (size_t i = 0; rc == SQLITE_OK && i < sizeof(schema_notes) / sizeof(schema_notes[0]);
	     i++) {
		char *q = sqlite3_mprintf("INSERT OR REPLACE INTO schema_info VALUES (%Q, %Q)",
					  schema_notes[i][0], schema_notes[i][1]);
		rc = exec_sql(r->db, q);
		sqlite3_free(q);
	}
	snprintf(sql, sizeof(sql),
		 "INSERT OR REPLACE INTO schema_info VALUES ('version', '%s');"
		 "INSERT OR REPLACE INTO schema_info VALUES ('writer', 'ingero-top');"
		 "INSERT OR REPLACE INTO schema_info VALUES ('ingero_top_schema', '%d');"
		 "INSERT OR REPLACE INTO schema_info VALUES ('ingero_top_version', '%s');"
		 "INSERT INTO sessions (started_at, ingero_ver) VALUES (%" PRIu64
		 ", 'ingero-top %s');",
		 REC_INGERO_VERSION, REC_SCHEMA, IG_VERSION, wall_ns(), IG_VERSION);
	if (rc == SQLITE_OK)
		rc = exec_sql(r->db, sql);
	if (rc == SQLITE_OK)
		r->session_id = sqlite3_last_insert_rowid(r->db);
	if (rc == SQLITE_OK)
		rc = exec_sql(r->db, "COMMIT");
	else
		exec_sql(r->db, "ROLLBACK");
	return rc;
}

struct rec *rec_open(const char *path, const struct rec_opts *opts, const char **err)
{
	const char *dummy;
	if (!err)
		err = &dummy;
	*err = NULL;
	struct rec_opts o = opts ? *opts : (struct rec_opts){0};
	if (!o.batch_events)
		o.batch_events = 4096;
	if (!o.commit_ms)
		o.commit_ms = 500;
	if (!o.queue_events)
		o.queue_events = 131072;
	if (!path || !*path) {
		*err = set_err("cannot record: no file name");
		return NULL;
	}
	if (check_existing(path, &o, err))
		return NULL;

	struct rec *r = calloc(1, sizeof(*r));
	if (!r) {
		*err = set_err("cannot record to %s: out of memory", path);
		return NULL;
	}
	r->o = o;
	r->path = strdup(path);
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv_work, NULL);
	pthread_cond_init(&r->cv_done, NULL);
	r->qcap = o.queue_events;
	r->q = calloc(r->qcap, sizeof(*r->q));
	r->batch = calloc(o.batch_events, sizeof(*r->batch));
	if (!r->path || !r->q || !r->batch) {
		*err = set_err("cannot record to %s: out of memory", path);
		goto fail;
	}
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
	int rc = sqlite3_open_v2(path, &r->db, flags, NULL);
	if (rc != SQLITE_OK) {
		*err = set_err("cannot record to %s: %s", path,
			       r->db ? sqlite3_errmsg(r->db) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(r->db, 2000);
	sqlite3_stmt *st;
	char mode[16] = "";
	if (sqlite3_prepare_v2(r->db, "PRAGMA journal_mode=WAL", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			snprintf(mode, sizeof(mode), "%s",
				 (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	if (strcmp(mode, "wal")) {
		*err = set_err("cannot record to %s: %s", path,
			       mode[0] ? "cannot switch to WAL mode" : sqlite3_errmsg(r->db));
		goto fail;
	}
	r->page_size = (uint64_t)query_int(r->db, "PRAGMA page_size", 4096);
	unsigned ckpt = 1000;
	if (o.max_db_bytes && o.max_db_bytes / 8 / r->page_size < ckpt)
		ckpt = (unsigned)(o.max_db_bytes / 8 / r->page_size);
	if (ckpt < 16)
		ckpt = 16;
	char pragmas[256];
	snprintf(pragmas, sizeof(pragmas),
		 "PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=%u;"
		 "PRAGMA journal_size_limit=%" PRIu64 "; PRAGMA cache_size=-16384;",
		 ckpt, (uint64_t)ckpt * r->page_size);
	rc = exec_sql(r->db, pragmas);
	if (rc == SQLITE_OK)
		rc = setup_schema(r);
	if (rc != SQLITE_OK) {
		*err = set_err("cannot record to %s: %s", path, sqlite3_errmsg(r->db));
		goto fail;
	}
	r->rows_in_file = (uint64_t)query_int(r->db, "SELECT COUNT(*) FROM events", 0);
	if (prepare(
		r, &r->st_event,
		"INSERT INTO events (timestamp, pid, tid, source, op, duration, arg0, arg1, "
		"ret_code, stack_hash, cgroup_id, node, comm, kind, start_ns, end_ns, cpu, "
		"flags, state, stream, preempt_ns, blocked_ns, switches, other_pid, other_comm) "
		"VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,"
		"?21,?22,?23,?24,?25)") ||
	    prepare(r, &r->st_snap,
		    "INSERT OR IGNORE INTO system_snapshots (timestamp, cpu_pct, mem_pct, "
		    "mem_avail, swap_mb, load_avg, node) VALUES (?1,?2,?3,?4,?5,?6,?7)") ||
	    prepare(r, &r->st_name,
		    "INSERT INTO process_names (pid, name, seen_at, tid, node, is_event, ppid) "
		    "VALUES (?1,?2,?3,?4,?5,?6,?7)") ||
	    prepare(r, &r->st_chain,
		    "INSERT OR REPLACE INTO causal_chains (id, detected_at, severity, summary, "
		    "root_cause, explanation, recommendations, cuda_op, cuda_p99_us, cuda_p50_us, "
		    "tail_ratio, timeline, node) VALUES "
		    "(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)") ||
	    prepare(r, &r->st_stack, "INSERT OR REPLACE INTO stack_traces VALUES (?1,?2,?3)") ||
	    prepare(r, &r->st_node, "INSERT OR REPLACE INTO ingero_top_nodes VALUES (?1,?2)") ||
	    prepare(r, &r->st_begin, "BEGIN") || prepare(r, &r->st_commit, "COMMIT") ||
	    prepare(r, &r->st_rollback, "ROLLBACK")) {
		*err = set_err("cannot record to %s: %s", path, sqlite3_errmsg(r->db));
		goto fail;
	}
	/* node names already in the file (appending) */
	if (sqlite3_prepare_v2(r->db, "SELECT idx, name FROM ingero_top_nodes", -1, &st, NULL) ==
	    SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			int idx = sqlite3_column_int(st, 0);
			if (idx >= 0 && idx < 256 && !r->node_names[idx])
				r->node_names[idx] =
				    strdup((const char *)sqlite3_column_text(st, 1));
		}
		sqlite3_finalize(st);
	}
	if (o.node_name && write_node(r, 0, o.node_name) != SQLITE_OK) {
		*err = set_err("cannot record to %s: %s", path, sqlite3_errmsg(r->db));
		goto fail;
	}
	for (int i = 1; i < 256; i++) {
		if (!r->node_names[i]) {
			char nm[16];
			snprintf(nm, sizeof(nm), "node%d", i);
			r->node_names[i] = strdup(nm);
		}
	}
	r->st.db_bytes = used_bytes(r);
	if (!o.synchronous) {
		if (pthread_create(&r->thr, NULL, writer_main, r)) {
			*err = set_err("cannot record to %s: cannot start the writer thread", path);
			goto fail;
		}
		r->have_thr = 1;
	}
	return r;
fail:
	rec_destroy(r);
	return NULL;
}

int rec_parse_size(const char *s, uint64_t *bytes)
{
	if (!s)
		return -EINVAL;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || v < 0)
		return -EINVAL;
	while (*end == ' ')
		end++;
	uint64_t mult = 1;
	switch (*end) {
	case 'k':
	case 'K':
		mult = 1ull << 10;
		end++;
		break;
	case 'm':
	case 'M':
		mult = 1ull << 20;
		end++;
		break;
	case 'g':
	case 'G':
		mult = 1ull << 30;
		end++;
		break;
	case 't':
	case 'T':
		mult = 1ull << 40;
		end++;
		break;
	case 'b':
	case 'B':
	case '\0':
		break;
	default:
		return -EINVAL;
	}
	if (mult > 1 && (*end == 'i' || *end == 'I'))
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	double b = v * (double)mult;
	if (b >= 1.8e19)
		return -EINVAL;
	*bytes = (uint64_t)b;
	return 0;
}
