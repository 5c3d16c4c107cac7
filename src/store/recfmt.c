/* The recording format: the op table shared with Ingero's files, the
 * schema, and the SQL that writes and reads each kind of row. See recfmt.h;
 * the row types' copies and JSON are in recfmt_rows.c. */
#include "store/recfmt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ops.h"
#include "store/db.h"

/* --- the op table shared with Ingero's files ------------------------------ */

enum {
	SRC_CUDA = 1,
	SRC_NVIDIA = 2,
	SRC_HOST = 3,
	SRC_DRIVER = 4,
	SRC_IO = 5,
	SRC_TCP = 6,
	SRC_NET = 7,
	SRC_GPU = 8,
	SRC_NCCL = 9,
	SRC_HIP = 10
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
    {SRC_GPU, "GPU", "GPU device samples — NVML (libnvidia-ml.so.1), ingero-top"},
    {SRC_NCCL, "NCCL", "NCCL collectives (libnccl.so) — uprobes, ingero-top"},
    {SRC_HIP, "HIP", "HIP runtime API (libamdhip64.so) — uprobes, ingero-top"},
};

/* Ingero's op ids where Ingero has the op; new ids above Ingero's for ours.
 * kind/op: what ingero-top makes of the row (kind 0: nothing). A call's
 * name is core/ops.c's (OPN: the canonical name; OPS: its short name,
 * which is Ingero's word for its two syncs); other rows spell their own. */
#define OPN NULL
#define OPS ""

static const struct op_row {
	int src, id;
	const char *name, *desc;
	int kind, op;
} op_rows[] = {
    {1, 1, OPN, "GPU memory allocation", IG_EV_CALL, IG_OP_CUDA_MALLOC},
    {1, 2, OPN, "GPU memory free", IG_EV_CALL, IG_OP_CUDA_FREE},
    {1, 3, OPN, "Launch GPU kernel via runtime API", IG_EV_CALL, IG_OP_CUDA_LAUNCH_KERNEL},
    {1, 4, OPN, "Synchronous host<->device memory copy", IG_EV_CALL, IG_OP_CUDA_MEMCPY},
    {1, 5, OPS, "Wait for all ops in a CUDA stream to complete", IG_EV_CALL,
     IG_OP_CUDA_STREAM_SYNC},
    {1, 6, OPS, "Wait for all GPU work on device to complete", IG_EV_CALL, IG_OP_CUDA_DEVICE_SYNC},
    {1, 7, OPN, "Asynchronous host<->device memory copy", IG_EV_CALL, IG_OP_CUDA_MEMCPY_ASYNC},
    {1, 8, OPN, "Unified Memory allocation via runtime API", IG_EV_CALL, IG_OP_CUDA_MALLOC_MANAGED},
    {1, 9, OPN, "Begin CUDA graph capture (ingero-top)", IG_EV_CALL,
     IG_OP_CUDA_STREAM_BEGIN_CAPTURE},
    {1, 10, OPN, "End CUDA graph capture (ingero-top)", IG_EV_CALL, IG_OP_CUDA_STREAM_END_CAPTURE},
    {1, 11, OPN, "Instantiate a CUDA graph (ingero-top)", IG_EV_CALL, IG_OP_CUDA_GRAPH_INSTANTIATE},
    {1, 12, OPN, "Launch a CUDA graph (ingero-top)", IG_EV_CALL, IG_OP_CUDA_GRAPH_LAUNCH},
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
    {3, 13, "kernel_time",
     "Kernel CPU of a thread between CUDA calls, by what it served: arg0 "
     "file syscalls, arg1 other syscalls, arg2 minor faults, stream file faults, preempt_ns "
     "swap-in, blocked_ns reclaim, cgroup_id copy-on-write faults (ns; ingero-top, "
     "docs/recording.md)",
     IG_EV_KTIME, 0},
    {3, 14, "cgroup_cpu",
     "CPU quota of a process's cgroup, once a second: arg0 quota us, "
     "arg1 period us, arg2 throttled ns, stream throttled << 32 | periods, detail the "
     "cgroup's directory (ingero-top, docs/recording.md)",
     IG_EV_CGROUP, 0},
    {3, 15, "process_env",
     "CUDA and PyTorch settings of a process's environment: arg0 1 CUDA_LAUNCH_BLOCKING=1, "
     "2 PYTORCH_NO_CUDA_MEMORY_CACHING=1; arg1 1 read in its live environ, 2 in "
     "/proc/PID/environ; arg2 the same of the environment it was started with; stream "
     "its CPUs: allowed | online << 20 | its cpuset's << 40 (ingero-top, docs/recording.md)",
     IG_EV_ENV, 0},
    {3, 16, "cpu_sample",
     "A thread that makes CUDA calls, caught by the sampling tick running its own code "
     "between calls: stack_hash its user stack, duration the tick's period (ingero-top, "
     "docs/recording.md)",
     IG_EV_SAMPLE, 0},
    {4, 1, OPN, "Launch GPU kernel via driver API (cuBLAS/cuDNN path)", IG_EV_CALL,
     IG_OP_CU_LAUNCH_KERNEL},
    {4, 2, OPN, "Synchronous memory copy via driver API", IG_EV_CALL, IG_OP_CU_MEMCPY},
    {4, 3, OPN, "Asynchronous memory copy via driver API", IG_EV_CALL, IG_OP_CU_MEMCPY_ASYNC},
    {4, 4, OPN, "Wait for all GPU work in context to complete", IG_EV_CALL, IG_OP_CU_CTX_SYNC},
    {4, 5, OPN, "GPU memory allocation via driver API", IG_EV_CALL, IG_OP_CU_MEM_ALLOC},
    {4, 6, OPN, "Unified Memory allocation via driver API", IG_EV_CALL, IG_OP_CU_MEM_ALLOC_MANAGED},
    {4, 7, OPN, "Synchronous host-to-device copy via driver API (ingero-top)", IG_EV_CALL,
     IG_OP_CU_MEMCPY_HTOD},
    {4, 8, OPN, "Synchronous device-to-host copy via driver API (ingero-top)", IG_EV_CALL,
     IG_OP_CU_MEMCPY_DTOH},
    {4, 9, OPN, "GPU memory free via driver API (ingero-top)", IG_EV_CALL, IG_OP_CU_MEM_FREE},
    {4, 10, OPN, "Wait for a stream via driver API (ingero-top)", IG_EV_CALL, IG_OP_CU_STREAM_SYNC},
    {4, 11, OPN, "Launch a CUDA graph via driver API (ingero-top)", IG_EV_CALL,
     IG_OP_CU_GRAPH_LAUNCH},
    {5, 1, "block_read", "Block device read request", IG_EV_BLOCK_IO, IG_IO_READ},
    {5, 2, "block_write", "Block device write request", IG_EV_BLOCK_IO, IG_IO_WRITE},
    {5, 3, "block_discard", "Block device discard/trim request", IG_EV_BLOCK_IO, IG_IO_DISCARD},
    {5, 4, "block_other", "Other block request: flush, ... (ingero-top)", IG_EV_BLOCK_IO,
     IG_IO_OTHER},
    /* ingero-top's additions: CUDA calls of frameworks, NCCL, HIP, GPU samples */
    {1, 13, OPN, "Launch a kernel with a launch config (ingero-top)", IG_EV_CALL,
     IG_OP_CUDA_LAUNCH_KERNEL_EX},
    {1, 14, OPN, "Stream-ordered allocation (ingero-top)", IG_EV_CALL, IG_OP_CUDA_MALLOC_ASYNC},
    {1, 15, OPN, "Stream-ordered free (ingero-top)", IG_EV_CALL, IG_OP_CUDA_FREE_ASYNC},
    {1, 16, OPN, "Page-locked host allocation (ingero-top)", IG_EV_CALL, IG_OP_CUDA_MALLOC_HOST},
    {1, 17, OPN, "Page-locked host allocation with flags (ingero-top)", IG_EV_CALL,
     IG_OP_CUDA_HOST_ALLOC},
    {1, 18, OPN, "Free page-locked host memory (ingero-top)", IG_EV_CALL, IG_OP_CUDA_FREE_HOST},
    {1, 19, OPN, "Fill device memory (ingero-top)", IG_EV_CALL, IG_OP_CUDA_MEMSET},
    {1, 20, OPN, "Fill device memory on a stream (ingero-top)", IG_EV_CALL,
     IG_OP_CUDA_MEMSET_ASYNC},
    {1, 21, OPN, "Record an event on a stream (ingero-top)", IG_EV_CALL, IG_OP_CUDA_EVENT_RECORD},
    {1, 22, OPN, "Poll an event (ingero-top)", IG_EV_CALL, IG_OP_CUDA_EVENT_QUERY},
    {1, 23, OPN, "Wait for an event (ingero-top)", IG_EV_CALL, IG_OP_CUDA_EVENT_SYNC},
    {1, 24, OPN, "Make a stream wait for an event (ingero-top)", IG_EV_CALL,
     IG_OP_CUDA_STREAM_WAIT_EVENT},
    {4, 12, OPN, "Launch a kernel with a launch config (ingero-top)", IG_EV_CALL,
     IG_OP_CU_LAUNCH_KERNEL_EX},
    {4, 13, OPN, "Stream-ordered allocation via driver API (ingero-top)", IG_EV_CALL,
     IG_OP_CU_MEM_ALLOC_ASYNC},
    {4, 14, OPN, "Stream-ordered free via driver API (ingero-top)", IG_EV_CALL,
     IG_OP_CU_MEM_FREE_ASYNC},
    {4, 15, OPN, "Device-to-device copy via driver API (ingero-top)", IG_EV_CALL,
     IG_OP_CU_MEMCPY_DTOD},
    {4, 16, OPN, "Async host-to-device copy via driver API (ingero-top)", IG_EV_CALL,
     IG_OP_CU_MEMCPY_HTOD_ASYNC},
    {4, 17, OPN, "Async device-to-host copy via driver API (ingero-top)", IG_EV_CALL,
     IG_OP_CU_MEMCPY_DTOH_ASYNC},
    {4, 18, OPN, "Async device-to-device copy via driver API (ingero-top)", IG_EV_CALL,
     IG_OP_CU_MEMCPY_DTOD_ASYNC},
    {4, 19, OPN, "Load a module image: cold start (ingero-top)", IG_EV_CALL,
     IG_OP_CU_MODULE_LOAD_DATA},
    {4, 20, OPN, "Load a library image: cold start (ingero-top)", IG_EV_CALL,
     IG_OP_CU_LIBRARY_LOAD_DATA},
    {SRC_GPU, 1, "gpu_device",
     "NVML device sample: utilisation, memory, power, temperature, "
     "SM clock (arg0 used bytes, arg1 total bytes; docs/recording.md)",
     IG_EV_GPU, 0},
    {SRC_GPU, 2, "gpu_process",
     "NVML: GPU memory of a process on a device (arg0 bytes, cpu = "
     "device)",
     IG_EV_GPU_PROC, 0},
    {SRC_NCCL, 1, OPN, "Make a communicator (arg2: its key, rank, nranks)", IG_EV_CALL,
     IG_OP_NCCL_COMM_INIT_RANK},
    {SRC_NCCL, 2, OPN, "Destroy a communicator", IG_EV_CALL, IG_OP_NCCL_COMM_DESTROY},
    {SRC_NCCL, 3, OPN, "AllReduce enqueued (arg0 bytes)", IG_EV_CALL, IG_OP_NCCL_ALL_REDUCE},
    {SRC_NCCL, 4, OPN, "AllGather enqueued (arg0 bytes per rank)", IG_EV_CALL,
     IG_OP_NCCL_ALL_GATHER},
    {SRC_NCCL, 5, OPN, "ReduceScatter enqueued (arg0 bytes per rank)", IG_EV_CALL,
     IG_OP_NCCL_REDUCE_SCATTER},
    {SRC_NCCL, 6, OPN, "Broadcast enqueued (arg0 bytes)", IG_EV_CALL, IG_OP_NCCL_BROADCAST},
    {SRC_NCCL, 7, OPN, "In-place broadcast enqueued (arg0 bytes)", IG_EV_CALL, IG_OP_NCCL_BCAST},
    {SRC_NCCL, 8, OPN, "Reduce enqueued (arg0 bytes)", IG_EV_CALL, IG_OP_NCCL_REDUCE},
    {SRC_NCCL, 9, OPN, "Send enqueued (arg0 bytes)", IG_EV_CALL, IG_OP_NCCL_SEND},
    {SRC_NCCL, 10, OPN, "Receive enqueued (arg0 bytes)", IG_EV_CALL, IG_OP_NCCL_RECV},
    {SRC_NCCL, 11, OPN, "Start a group of NCCL calls", IG_EV_CALL, IG_OP_NCCL_GROUP_START},
    {SRC_NCCL, 12, OPN, "End a group: its calls are enqueued together", IG_EV_CALL,
     IG_OP_NCCL_GROUP_END},
    {SRC_HIP, 1, OPN, "Launch a kernel", IG_EV_CALL, IG_OP_HIP_LAUNCH_KERNEL},
    {SRC_HIP, 2, OPN, "Launch a module kernel", IG_EV_CALL, IG_OP_HIP_MODULE_LAUNCH_KERNEL},
    {SRC_HIP, 3, OPN, "Launch a module kernel (extended)", IG_EV_CALL,
     IG_OP_HIP_EXT_MODULE_LAUNCH_KERNEL},
    {SRC_HIP, 4, OPN, "Synchronous copy", IG_EV_CALL, IG_OP_HIP_MEMCPY},
    {SRC_HIP, 5, OPN, "Asynchronous copy", IG_EV_CALL, IG_OP_HIP_MEMCPY_ASYNC},
    {SRC_HIP, 6, OPN, "Synchronous host-to-device copy", IG_EV_CALL, IG_OP_HIP_MEMCPY_HTOD},
    {SRC_HIP, 7, OPN, "Synchronous device-to-host copy", IG_EV_CALL, IG_OP_HIP_MEMCPY_DTOH},
    {SRC_HIP, 8, OPN, "Device allocation", IG_EV_CALL, IG_OP_HIP_MALLOC},
    {SRC_HIP, 9, OPN, "Device free", IG_EV_CALL, IG_OP_HIP_FREE},
    {SRC_HIP, 10, OPN, "Stream-ordered allocation", IG_EV_CALL, IG_OP_HIP_MALLOC_ASYNC},
    {SRC_HIP, 11, OPN, "Wait for a stream", IG_EV_CALL, IG_OP_HIP_STREAM_SYNC},
    {SRC_HIP, 12, OPN, "Wait for the device", IG_EV_CALL, IG_OP_HIP_DEVICE_SYNC},
    {SRC_HIP, 13, OPN, "Wait for an event", IG_EV_CALL, IG_OP_HIP_EVENT_SYNC},
    {SRC_HIP, 14, OPN, "Launch a graph", IG_EV_CALL, IG_OP_HIP_GRAPH_LAUNCH},
    {6, 1, "tcp_retransmit", "TCP segment retransmission", 0, 0},
    {7, 1, "net_send", "Socket send/sendto syscall", 0, 0},
    {7, 2, "net_recv", "Socket recv/recvfrom syscall", 0, 0},
};

#define N_OP_ROWS (sizeof(op_rows) / sizeof(op_rows[0]))

static const char *row_name(const struct op_row *r)
{
	if (r->name && r->name[0])
		return r->name;
	const struct ig_op_info *o = ig_op_info(r->op);
	return !o ? "?" : r->name ? o->short_name : o->name;
}

static const struct op_row *op_row_for(int kind, int op)
{
	for (size_t i = 0; i < N_OP_ROWS; i++)
		if (op_rows[i].kind == kind &&
		    (kind == IG_EV_CALL || kind == IG_EV_BLOCK_IO ? op_rows[i].op == op : 1))
			return &op_rows[i];
	return NULL;
}

int recfmt_ingero_op(int kind, int op, const char **name, int *op_id)
{
	const struct op_row *r = op_row_for(kind, op);
	if (!r)
		return 0;
	if (name)
		*name = row_name(r);
	if (op_id)
		*op_id = r->id;
	return r->src;
}

int recfmt_end_stamped(int kind)
{
	return kind == IG_EV_OFFCPU || kind == IG_EV_BLOCK_IO;
}

int recfmt_ingero_kind(int source, const char *name, int *kind, int *op)
{
	if (!name)
		return -ENOENT;
	if (source == SRC_CUDA || source == SRC_DRIVER || source == SRC_NCCL || source == SRC_HIP) {
		int o = ig_op_by_name(name);
		if (o == IG_OP_NONE)
			return -ENOENT;
		*kind = IG_EV_CALL;
		*op = o;
		return 0;
	}
	for (size_t i = 0; i < N_OP_ROWS; i++)
		if (op_rows[i].src == source && op_rows[i].kind && !strcmp(row_name(&op_rows[i]), name)) {
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
    "  other_comm TEXT NOT NULL DEFAULT '',\n"
    "  arg2 INTEGER NOT NULL DEFAULT 0,\n"
    "  detail TEXT NOT NULL DEFAULT ''\n"
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
    "  ppid INTEGER NOT NULL DEFAULT 0,\n"
    "  container TEXT NOT NULL DEFAULT ''\n"
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
    "CREATE TABLE IF NOT EXISTS ingero_top_summaries (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  pid INTEGER NOT NULL,\n"
    "  tid INTEGER NOT NULL,\n"
    "  from_ns INTEGER NOT NULL,\n"
    "  to_ns INTEGER NOT NULL,\n"
    "  calls INTEGER NOT NULL,\n"
    "  cgroup_id INTEGER NOT NULL DEFAULT 0,\n"
    "  node TEXT NOT NULL DEFAULT '',\n"
    "  units TEXT NOT NULL\n"
    ");\n"
    "CREATE INDEX IF NOT EXISTS idx_summaries_from ON ingero_top_summaries(from_ns);\n"
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
const char recfmt_query_index_sql[] =
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
			   "(seen_at = when the name was seen; ppid = parent pid, 0 = unknown; "
			   "container = docker:<id>, k8s:<pod uid>/<id>, <unit>.service, - for "
			   "the host, '' unknown)."},
    {"ingero_top_columns_note",
     "events.start_ns/end_ns: interval in Unix ns (call entry/exit, switch-out/back on CPU, "
     "I/O issue/completion); timestamp follows Ingero (entry for calls, end for sched_switch "
     "and block I/O). kind: ingero-top event kind. cpu, flags (1 in call, 2 no split), state "
     "(0 unknown, 1 preempted, 2 blocked), stream, preempt_ns/blocked_ns/switches (off-CPU "
     "during a call), other_pid/other_comm (preemptor or waker). arg2: NCCL communicator "
     "(rank, nranks, key); NCCL calls also fill rank and world_size. GPU device samples "
     "(source GPU) pack their values into arg0, arg1, stream, preempt_ns, flags, cpu. See "
     "docs/recording.md."},
};

/* INSERT OR <verb> INTO table VALUES (...) with %Q-quoted texts. */
static int insert_row(sqlite3 *db, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *q = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	if (!q)
		return SQLITE_NOMEM;
	int rc = db_exec(db, q);
	sqlite3_free(q);
	return rc;
}

int recfmt_create(sqlite3 *db, const char *writer_version)
{
	int rc = db_exec(db, schema_sql);
	/* A file written before process_names had ppid (appending to it). */
	if (rc == SQLITE_OK && !db_has_column(db, "process_names", "ppid"))
		rc = db_exec(db, "ALTER TABLE process_names ADD COLUMN ppid INTEGER NOT NULL "
				 "DEFAULT 0");
	if (rc == SQLITE_OK && !db_has_column(db, "process_names", "container"))
		rc = db_exec(db, "ALTER TABLE process_names ADD COLUMN container TEXT NOT NULL "
				 "DEFAULT ''");
	/* ... and before events had arg2 (NCCL communicators) */
	if (rc == SQLITE_OK && !db_has_column(db, "events", "arg2"))
		rc = db_exec(db, "ALTER TABLE events ADD COLUMN arg2 INTEGER NOT NULL DEFAULT 0");
	/* ... and before events had detail (a cgroup's directory) */
	if (rc == SQLITE_OK && !db_has_column(db, "events", "detail"))
		rc = db_exec(db, "ALTER TABLE events ADD COLUMN detail TEXT NOT NULL DEFAULT ''");
	for (size_t i = 0; rc == SQLITE_OK && i < sizeof(sources) / sizeof(sources[0]); i++)
		rc = insert_row(db, "INSERT OR IGNORE INTO sources VALUES (%d, %Q, %Q)",
				sources[i].id, sources[i].name, sources[i].desc);
	for (size_t i = 0; rc == SQLITE_OK && i < N_OP_ROWS; i++)
		rc = insert_row(db, "INSERT OR IGNORE INTO ops VALUES (%d, %d, %Q, %Q)",
				op_rows[i].src, op_rows[i].id, row_name(&op_rows[i]), op_rows[i].desc);
	const char *const keys[][2] = {{"version", REC_INGERO_VERSION},
				       {"writer", "ingero-top"},
				       {"ingero_top_version", writer_version}};
	for (size_t i = 0; rc == SQLITE_OK && i < sizeof(keys) / sizeof(keys[0]); i++)
		rc = insert_row(db, "INSERT OR REPLACE INTO schema_info VALUES (%Q, %Q)",
				keys[i][0], keys[i][1]);
	if (rc == SQLITE_OK)
		rc = insert_row(db,
				"INSERT OR REPLACE INTO schema_info SELECT 'ingero_top_schema', "
				"CAST(MAX(%d, COALESCE((SELECT CAST(value AS INTEGER) FROM "
				"schema_info WHERE key = 'ingero_top_schema'), 0)) AS TEXT)",
				REC_SCHEMA_PLAIN);
	for (size_t i = 0; rc == SQLITE_OK && i < sizeof(schema_notes) / sizeof(schema_notes[0]);
	     i++)
		rc = insert_row(db, "INSERT OR REPLACE INTO schema_info VALUES (%Q, %Q)",
				schema_notes[i][0], schema_notes[i][1]);
	return rc;
}

/* --- rows in SQL ---------------------------------------------------------------- */

static void bind_str(sqlite3_stmt *st, int i, const char *s)
{
	sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_STATIC);
}

static void bind_comm(sqlite3_stmt *st, int i, const char *c)
{
	sqlite3_bind_text(st, i, c, (int)strnlen(c, IG_COMM_LEN), SQLITE_STATIC);
}

const char recfmt_event_insert_sql[] =
    "INSERT INTO events (timestamp, pid, tid, source, op, duration, arg0, arg1, ret_code, "
    "stack_hash, cgroup_id, node, comm, kind, start_ns, end_ns, cpu, flags, state, stream, "
    "preempt_ns, blocked_ns, switches, other_pid, other_comm, arg2, rank, world_size, detail) "
    "VALUES "
    "(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23,?24,"
    "?25,?26,?27,?28,?29)";

void recfmt_event_bind(sqlite3_stmt *st, const struct ig_event *e, int source, int op_id,
		       const char *node)
{
	uint64_t end = e->ts_ns + e->dur_ns;
	sqlite3_bind_int64(st, 1, (int64_t)(recfmt_end_stamped(e->kind) ? end : e->ts_ns));
	sqlite3_bind_int64(st, 2, e->pid);
	sqlite3_bind_int64(st, 3, e->tid);
	sqlite3_bind_int(st, 4, source);
	sqlite3_bind_int(st, 5, op_id);
	sqlite3_bind_int64(st, 6, (int64_t)e->dur_ns);
	sqlite3_bind_int64(st, 7, (int64_t)e->arg0);
	sqlite3_bind_int64(st, 8, (int64_t)e->arg1);
	sqlite3_bind_int64(st, 9, e->ret);
	sqlite3_bind_int64(st, 10, (int64_t)e->stack_id);
	sqlite3_bind_int64(st, 11, (int64_t)e->cgroup_id);
	bind_str(st, 12, node);
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
	sqlite3_bind_int64(st, 26, (int64_t)e->arg2);
	/* Ingero's columns of distributed training: the NCCL rank, nranks */
	if (e->kind == IG_EV_CALL && IG_NCCL_COMM_NRANKS(e->arg2) &&
	    ig_op_lib(e->op) == IG_LIB_NCCL) {
		sqlite3_bind_int64(st, 27, IG_NCCL_COMM_RANK(e->arg2));
		sqlite3_bind_int64(st, 28, IG_NCCL_COMM_NRANKS(e->arg2));
	} else {
		sqlite3_bind_null(st, 27);
		sqlite3_bind_null(st, 28);
	}
	bind_str(st, 29, e->kind == IG_EV_CGROUP && e->container ? e->container : "");
}

/* Last, a column NULL when a column of the row that replay does not use is
 * NULL: the row is refused (recfmt_row_has_null), as for any other. */
#define UNREAD "nullif(timestamp IS NULL OR gpu_id IS NULL OR stack_ips IS NULL, 1)"

const char *recfmt_event_select_sql(int has_arg2, int has_detail)
{
	/* older files lack arg2 and detail: a 0 and '' in their places */
	static const char *const sql[2][2] = {
	    {"SELECT id, pid, tid, duration, arg0, arg1, ret_code, stack_hash, cgroup_id, "
	     "node, comm, kind, start_ns, cpu, flags, state, stream, preempt_ns, "
	     "blocked_ns, switches, other_pid, other_comm, source, op, end_ns, 0, '', " UNREAD
	     " FROM "
	     "events WHERE end_ns >= ?1 ORDER BY end_ns, id",
	     "SELECT id, pid, tid, duration, arg0, arg1, ret_code, stack_hash, cgroup_id, "
	     "node, comm, kind, start_ns, cpu, flags, state, stream, preempt_ns, "
	     "blocked_ns, switches, other_pid, other_comm, source, op, end_ns, 0, detail, " UNREAD
	     " FROM "
	     "events WHERE end_ns >= ?1 ORDER BY end_ns, id"},
	    {"SELECT id, pid, tid, duration, arg0, arg1, ret_code, stack_hash, cgroup_id, "
	     "node, comm, kind, start_ns, cpu, flags, state, stream, preempt_ns, "
	     "blocked_ns, switches, other_pid, other_comm, source, op, end_ns, arg2, '', " UNREAD
	     " FROM "
	     "events WHERE end_ns >= ?1 ORDER BY end_ns, id",
	     "SELECT id, pid, tid, duration, arg0, arg1, ret_code, stack_hash, cgroup_id, "
	     "node, comm, kind, start_ns, cpu, flags, state, stream, preempt_ns, "
	     "blocked_ns, switches, other_pid, other_comm, source, op, end_ns, arg2, "
	     "detail, " UNREAD " FROM events WHERE end_ns >= ?1 ORDER BY end_ns, id"}};
	return sql[!!has_arg2][!!has_detail];
}

void recfmt_column_comm(char dst[IG_COMM_LEN], sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	int n = sqlite3_column_bytes(st, col);
	memset(dst, 0, IG_COMM_LEN);
	if (t && n > 0)
		memcpy(dst, t, (size_t)n < IG_COMM_LEN ? (size_t)n : IG_COMM_LEN);
}

int recfmt_event_read(sqlite3_stmt *st, struct ig_event *e, int64_t *source, int64_t *op_id,
		      const char **node, const char **detail, int64_t dur_max)
{
	int64_t v[RECFMT_EVENT_COLS];
	memset(e, 0, sizeof(*e));
	*node = *detail = NULL;
	/* Every column once (the replay's hot path: one call into SQLite per
	 * column): a numeric one an integer, a text one (node, comm,
	 * other_comm, detail) and those after (UNREAD) not NULL, or the row
	 * is refused: the rows recfmt_row_has_null and a type pass refuse. */
	int ncol = sqlite3_column_count(st);
	for (int c = 0; c < ncol; c++) {
		sqlite3_value *x = sqlite3_column_value(st, c);
		int type = sqlite3_value_type(x);
		if (c >= RECFMT_EVENT_COLS || c == 9 || c == 10 || c == 21 || c == 26) {
			if (type == SQLITE_NULL)
				return -ERANGE;
			continue;
		}
		if (type != SQLITE_INTEGER)
			return -ERANGE;
		v[c] = sqlite3_value_int64(x);
	}
	if (ncol < RECFMT_EVENT_COLS)
		return -ERANGE;
	if (recfmt_event_check(v, dur_max))
		return -ERANGE;
	e->pid = (uint32_t)v[1];
	e->tid = (uint32_t)v[2];
	e->dur_ns = (uint64_t)v[3];
	e->arg0 = (uint64_t)v[4];
	e->arg1 = (uint64_t)v[5];
	e->ret = (int32_t)v[6];
	e->stack_id = (uint64_t)v[7];
	e->cgroup_id = (uint64_t)v[8];
	*node = (const char *)sqlite3_column_text(st, 9);
	recfmt_column_comm(e->comm, st, 10);
	e->kind = (uint16_t)v[11];
	e->ts_ns = (uint64_t)v[12];
	e->cpu = (uint32_t)v[13];
	e->flags = (uint32_t)v[14];
	e->state = (uint8_t)v[15];
	e->stream = (uint64_t)v[16];
	e->preempt_ns = (uint64_t)v[17];
	e->blocked_ns = (uint64_t)v[18];
	e->switches = (uint32_t)v[19];
	e->other_pid = (uint32_t)v[20];
	recfmt_column_comm(e->other_comm, st, 21);
	*source = v[22];
	*op_id = v[23];
	e->arg2 = (uint64_t)v[25];
	*detail = (const char *)sqlite3_column_text(st, 26);
	return 0;
}

const char recfmt_snapshot_insert_sql[] =
    "INSERT OR IGNORE INTO system_snapshots (timestamp, cpu_pct, mem_pct, mem_avail, swap_mb, "
    "load_avg, node) VALUES (?1,?2,?3,?4,?5,?6,?7)";

void recfmt_snapshot_bind(sqlite3_stmt *st, const struct ig_event *e, const char *node)
{
	sqlite3_bind_int64(st, 1, (int64_t)e->ts_ns);
	sqlite3_bind_double(st, 2, (double)e->arg0 / 10.0);
	sqlite3_bind_double(st, 3, (double)e->arg1 / 10.0);
	sqlite3_bind_int64(st, 4, (int64_t)e->stream);
	sqlite3_bind_int64(st, 5, (int64_t)e->preempt_ns);
	sqlite3_bind_double(st, 6, (double)e->blocked_ns / 100.0);
	bind_str(st, 7, node);
}

const char recfmt_name_insert_sql[] =
    "INSERT INTO process_names (pid, name, seen_at, tid, node, is_event, ppid, container) "
    "VALUES (?1,?2,?3,?4,?5,?6,?7,?8)";

void recfmt_name_bind(sqlite3_stmt *st, const struct ig_event *e, const char *node, int is_event)
{
	sqlite3_bind_int64(st, 1, e->pid);
	bind_comm(st, 2, e->comm);
	sqlite3_bind_int64(st, 3, (int64_t)e->ts_ns);
	sqlite3_bind_int64(st, 4, e->tid);
	bind_str(st, 5, node);
	sqlite3_bind_int(st, 6, is_event);
	sqlite3_bind_int64(st, 7, is_event ? (int64_t)e->arg0 : 0); /* name events: the ppid */
	bind_str(st, 8, is_event ? e->container : ""); /* and the container when known */
}

const char recfmt_stack_insert_sql[] = "INSERT OR REPLACE INTO stack_traces VALUES (?1,?2,?3)";

void recfmt_stack_bind(sqlite3_stmt *st, uint64_t hash, const char *ips, const char *frames)
{
	sqlite3_bind_int64(st, 1, (int64_t)hash);
	bind_str(st, 2, ips);
	bind_str(st, 3, frames);
}

const char recfmt_stack_select_sql[] = "SELECT hash, ips, frames FROM stack_traces";

const char recfmt_node_insert_sql[] = "INSERT OR REPLACE INTO ingero_top_nodes VALUES (?1,?2)";

void recfmt_node_bind(sqlite3_stmt *st, unsigned idx, const char *name)
{
	sqlite3_bind_int(st, 1, (int)idx);
	bind_str(st, 2, name);
}

const char recfmt_chain_insert_sql[] =
    "INSERT OR REPLACE INTO causal_chains (id, detected_at, severity, summary, root_cause, "
    "explanation, recommendations, cuda_op, cuda_p99_us, cuda_p50_us, tail_ratio, timeline, "
    "node) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)";

int recfmt_chain_bind(sqlite3_stmt *st, const struct rec_chain *c)
{
	char *recs = recfmt_recs_json(c->recs, c->nrecs);
	char *tl = recfmt_timeline_json(c->timeline, c->ntimeline);
	if (!recs || !tl) {
		free(recs);
		free(tl);
		return -ENOMEM;
	}
	bind_str(st, 1, c->id);
	sqlite3_bind_int64(st, 2, (int64_t)c->detected_at_ns);
	bind_str(st, 3, c->severity);
	bind_str(st, 4, c->summary);
	bind_str(st, 5, c->root_cause);
	bind_str(st, 6, c->explanation);
	sqlite3_bind_text(st, 7, recs, -1, free);
	bind_str(st, 8, c->cuda_op);
	sqlite3_bind_int64(st, 9, (int64_t)c->p99_us);
	sqlite3_bind_int64(st, 10, (int64_t)c->p50_us);
	sqlite3_bind_double(st, 11, c->tail_ratio);
	sqlite3_bind_text(st, 12, tl, -1, free);
	bind_str(st, 13, c->node);
	return 0;
}

const char recfmt_session_update_sql[] =
    "UPDATE sessions SET started_at=?1, gpu_model=?2, gpu_driver=?3, cpu_model=?4, "
    "cpu_cores=?5, mem_total=?6, kernel=?7, os_release=?8, cuda_ver=?9, python_ver=?10, "
    "ingero_ver=?11, pid_filter=?12, flags=?13, node=?14, stopped_at=?15 WHERE id=?16";

void recfmt_session_bind(sqlite3_stmt *st, const struct rec_session *s, int64_t id,
			 const char *default_version, uint64_t now_ns)
{
	sqlite3_bind_int64(st, 1, (int64_t)(s->started_at_ns ? s->started_at_ns : now_ns));
	bind_str(st, 2, s->gpu_model);
	bind_str(st, 3, s->gpu_driver);
	bind_str(st, 4, s->cpu_model);
	sqlite3_bind_int64(st, 5, s->cpu_cores);
	sqlite3_bind_int64(st, 6, (int64_t)s->mem_total_mb);
	bind_str(st, 7, s->kernel);
	bind_str(st, 8, s->os_release);
	bind_str(st, 9, s->cuda_ver);
	bind_str(st, 10, s->python_ver);
	bind_str(st, 11, s->version ? s->version : default_version);
	bind_str(st, 12, s->pid_filter);
	bind_str(st, 13, s->flags);
	bind_str(st, 14, s->node);
	sqlite3_bind_int64(st, 15, (int64_t)s->stopped_at_ns);
	sqlite3_bind_int64(st, 16, id);
}

const char *recfmt_session_select_sql(int has_node)
{
	return has_node ? "SELECT started_at, stopped_at, gpu_model, gpu_driver, cpu_model, "
			  "cpu_cores, mem_total, kernel, os_release, cuda_ver, python_ver, "
			  "ingero_ver, pid_filter, flags, node FROM sessions ORDER BY id"
			: "SELECT started_at, stopped_at, gpu_model, gpu_driver, cpu_model, "
			  "cpu_cores, mem_total, kernel, os_release, cuda_ver, python_ver, "
			  "ingero_ver, pid_filter, flags FROM sessions ORDER BY id";
}

static const char *col_text(sqlite3_stmt *st, int c)
{
	const char *t = (const char *)sqlite3_column_text(st, c);
	return t ? t : "";
}

int recfmt_session_read(sqlite3_stmt *st, int has_node, const char *default_node,
			struct rec_session *out)
{
	if (recfmt_row_has_null(st))
		return -ERANGE;
	const char *nd = has_node ? col_text(st, 14) : "";
	struct rec_session s = {
	    .started_at_ns = (uint64_t)sqlite3_column_int64(st, 0),
	    .stopped_at_ns = (uint64_t)sqlite3_column_int64(st, 1),
	    .gpu_model = col_text(st, 2),
	    .gpu_driver = col_text(st, 3),
	    .cpu_model = col_text(st, 4),
	    .cpu_cores = (unsigned)sqlite3_column_int(st, 5),
	    .mem_total_mb = (uint64_t)sqlite3_column_int64(st, 6),
	    .kernel = col_text(st, 7),
	    .os_release = col_text(st, 8),
	    .cuda_ver = col_text(st, 9),
	    .python_ver = col_text(st, 10),
	    .version = col_text(st, 11),
	    .pid_filter = col_text(st, 12),
	    .flags = col_text(st, 13),
	    .node = *nd ? nd : default_node,
	};
	return rec_session_copy(out, &s);
}

const char *recfmt_chain_select_sql(int has_node)
{
	return has_node ? "SELECT id, detected_at, severity, summary, root_cause, explanation, "
			  "recommendations, cuda_op, cuda_p99_us, cuda_p50_us, tail_ratio, "
			  "timeline, node FROM causal_chains"
			: "SELECT id, detected_at, severity, summary, root_cause, explanation, "
			  "recommendations, cuda_op, cuda_p99_us, cuda_p50_us, tail_ratio, "
			  "timeline FROM causal_chains";
}

const char *recfmt_snapshot_select_sql(int has_node)
{
	return has_node ? "SELECT timestamp, cpu_pct, mem_pct, mem_avail, swap_mb, load_avg, node "
			  "FROM system_snapshots WHERE timestamp >= ?1 ORDER BY timestamp, rowid"
			: "SELECT timestamp, cpu_pct, mem_pct, mem_avail, swap_mb, load_avg "
			  "FROM system_snapshots WHERE timestamp >= ?1 ORDER BY timestamp, rowid";
}

void recfmt_snapshot_read(sqlite3_stmt *st, struct ig_event *e, const char **node)
{
	ig_snapshot_fill(e, (uint64_t)sqlite3_column_int64(st, 0), sqlite3_column_double(st, 1),
			 sqlite3_column_double(st, 2), (uint64_t)sqlite3_column_int64(st, 3),
			 (uint64_t)sqlite3_column_int64(st, 4), sqlite3_column_double(st, 5));
	*node = sqlite3_column_count(st) > 6 ? (const char *)sqlite3_column_text(st, 6) : NULL;
}

const char *recfmt_name_select_sql(int has_ppid, int has_container)
{
	if (has_container) /* ppid came first */
		return "SELECT pid, name, seen_at, tid, node, ppid, container FROM process_names "
		       "WHERE is_event = 1 AND seen_at >= ?1 ORDER BY seen_at, rowid";
	return has_ppid ? "SELECT pid, name, seen_at, tid, node, ppid, '' FROM process_names WHERE "
			  "is_event = 1 AND seen_at >= ?1 ORDER BY seen_at, rowid"
			: "SELECT pid, name, seen_at, tid, node, 0, '' FROM process_names WHERE "
			  "is_event = 1 AND seen_at >= ?1 ORDER BY seen_at, rowid";
}

int recfmt_name_read(sqlite3_stmt *st, struct ig_event *e, const char **node,
		     const char **container)
{
	memset(e, 0, sizeof(*e));
	*node = NULL;
	if (recfmt_row_has_null(st) || !recfmt_col_in(st, 0, 1, RECFMT_PID_MAX) ||
	    !recfmt_col_in(st, 2, 1, RECFMT_TS_MAX_NS) ||
	    !recfmt_col_in(st, 3, 0, RECFMT_PID_MAX) || !recfmt_col_in(st, 5, 0, RECFMT_PID_MAX))
		return -ERANGE;
	e->kind = IG_EV_COMM;
	e->pid = (uint32_t)sqlite3_column_int64(st, 0);
	recfmt_column_comm(e->comm, st, 1);
	e->ts_ns = (uint64_t)sqlite3_column_int64(st, 2);
	e->tid = (uint32_t)sqlite3_column_int64(st, 3);
	*node = (const char *)sqlite3_column_text(st, 4);
	e->arg0 = (uint64_t)sqlite3_column_int64(st, 5); /* the ppid */
	*container = (const char *)sqlite3_column_text(st, 6);
	return 0;
}
