/* Shim libnccl.so.2: NCCL's communicator, collective and point-to-point calls
 * over the shim's simulated GPU, with ranks in separate processes. A call
 * returns once enqueued; the operation is an item on the CUDA stream
 * (libcuda's shimExt*) that completes when every rank has reached it on its
 * own stream, plus the transfer time, so a later stream synchronisation
 * waits for the slowest rank. Ranks of one unique id meet in a shared memory
 * file named from the id; a proxy thread per communicator (real NCCL has
 * proxy threads too) publishes this rank's arrivals and posts the
 * completions, in the communicator's operation order. docs/shim.md. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "nccl.h"
#include "stats.h"

#define NC_SYMS(X)                                                                                 \
	X(ncclGetVersion)                                                                          \
	X(ncclGetUniqueId)                                                                         \
	X(ncclCommInitRank)                                                                        \
	X(ncclCommDestroy)                                                                         \
	X(ncclCommCount)                                                                           \
	X(ncclCommUserRank)                                                                        \
	X(ncclGetErrorString)                                                                      \
	X(ncclAllReduce)                                                                           \
	X(ncclAllGather)                                                                           \
	X(ncclReduceScatter)                                                                       \
	X(ncclBroadcast)                                                                           \
	X(ncclBcast)                                                                               \
	X(ncclReduce)                                                                              \
	X(ncclSend)                                                                                \
	X(ncclRecv)                                                                                \
	X(ncclGroupStart)                                                                          \
	X(ncclGroupEnd)

enum nc_sym { NC_SYMS(SHIM_SYM_ENUM) NC_NSYMS };
static const char *const nc_sym_names[NC_NSYMS] = {NC_SYMS(SHIM_SYM_NAME)};
static _Atomic unsigned long long nc_calls[NC_NSYMS];

#define NC_ENTER(s) SHIM_COUNT(nc_calls, s)

typedef unsigned long long u64;

#define NC_MAX_RANKS 8
#define NC_RING 32 /* ranks are never more than one operation apart */
#define NC_MAX_GROUP 128
#define NC_COMM_MAGIC 0x4e43434cu
static const char nc_id_magic[8] = "SHIMNCCL";

/* One rank's arrival at one operation: t first, then seq1 = seq + 1. */
struct nc_cell {
	_Atomic u64 seq1;
	_Atomic u64 t;
};

/* The shared file; all zero when created, which is its initial state. */
struct nc_shm {
	_Atomic unsigned int nranks;
	_Atomic unsigned int joined; /* bit per rank */
	_Atomic unsigned int futex;  /* bumped at every join and arrival */
	unsigned int pad;
	struct nc_cell coll[NC_RING][NC_MAX_RANKS];
	struct nc_cell p2p[NC_MAX_RANKS][NC_MAX_RANKS][NC_RING][2]; /* [src][dst][.][send, recv] */
};

struct ncclComm {
	unsigned int magic;
	int rank, nranks;
	struct nc_shm *shm;
	u64 coll_seq;
	u64 send_seq[NC_MAX_RANKS], recv_seq[NC_MAX_RANKS];
	u64 delay_ns;	       /* this rank's scripted lateness on the device */
	unsigned int inflight; /* members queued to a proxy, not done; nc_lock */
	int failed;
	/* Its proxy thread and the jobs queued to it, under nc_lock. */
	pthread_t proxy;
	pthread_cond_t cond;
	struct nc_job *head, *tail;
	int stop;
};

enum { NC_COLL, NC_SEND, NC_RECV };

struct nc_member {
	ncclComm_t comm;
	int kind, peer;
	u64 seq, bytes;
	cudaStream_t stream;
	int ext; /* index in the job's exts */
};

/* What one call outside a group, or one group, enqueues. */
struct nc_job {
	int n, next_ext;
	struct nc_member m[NC_MAX_GROUP];
	shimExt ext[NC_MAX_GROUP];
	cudaStream_t ext_stream[NC_MAX_GROUP];
	struct nc_job *next;
};

static struct {
	u64 launch_ns, fixed_ns, timeout_ns;
	double gbps;
	u64 delay_ns[NC_MAX_RANKS];
} nc_cfg;

static pthread_once_t nc_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t nc_lock = PTHREAD_MUTEX_INITIALIZER; /* the proxy queues */
static pthread_cond_t nc_done = PTHREAD_COND_INITIALIZER;   /* a job is done */
static __thread int nc_depth;
static __thread struct nc_job *nc_group;

static u64 nc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

static u64 nc_env(const char *name, double def)
{
	const char *s = getenv(name);
	char *end;
	double v;

	if (!s || !*s)
		return (u64)(def * 1000.0);
	v = strtod(s, &end);
	if (*end || !(v >= 0) || v > 1e12) {
		fprintf(stderr, "shim nccl: ignoring %s=%s: not a number\n", name, s);
		return (u64)(def * 1000.0);
	}
	return (u64)(v * 1000.0 + 0.5);
}

/* SHIM_NCCL_DELAY_US="RANK:US,RANK:US": that rank reaches every operation
 * US later on its device than its stream would (a straggler). */
static void nc_parse_delays(void)
{
	const char *s = getenv("SHIM_NCCL_DELAY_US");
	char *copy, *save = NULL;

	if (!s || !*s || !(copy = strdup(s)))
		return;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long r = strtol(tok, &end, 10);
		double us = *end == ':' ? strtod(end + 1, &end) : -1;

		if (*end || r < 0 || r >= NC_MAX_RANKS || !(us >= 0))
			fprintf(stderr, "shim nccl: ignoring '%s' in SHIM_NCCL_DELAY_US\n", tok);
		else
			nc_cfg.delay_ns[r] = (u64)(us * 1000.0 + 0.5);
	}
	free(copy);
}

/* The proxy threads stayed in the parent, with the parent's communicators:
 * a child makes its own. */
static void nc_atfork_child(void)
{
	pthread_mutex_init(&nc_lock, NULL);
	pthread_cond_init(&nc_done, NULL);
	for (int i = 0; i < NC_NSYMS; i++)
		atomic_store(&nc_calls[i], 0);
}

static void nc_init_once(void)
{
	const char *s = getenv("SHIM_NCCL_GBPS");

	nc_cfg.launch_ns = nc_env("SHIM_NCCL_LAUNCH_US", 5);
	nc_cfg.fixed_ns = nc_env("SHIM_NCCL_US", 10);
	nc_cfg.timeout_ns = nc_env("SHIM_NCCL_TIMEOUT_MS", 30000) * 1000;
	nc_cfg.gbps = 10.0;
	if (s && *s) {
		char *end;
		double v = strtod(s, &end);

		if (*end || !(v > 0))
			fprintf(stderr, "shim nccl: ignoring SHIM_NCCL_GBPS=%s\n", s);
		else
			nc_cfg.gbps = v;
	}
	nc_parse_delays();
	pthread_atfork(NULL, NULL, nc_atfork_child);
}

static void nc_init(void)
{
	pthread_once(&nc_once, nc_init_once);
}

static void nc_spin(u64 ns)
{
	u64 end = nc_now() + ns;

	while (nc_now() < end)
		;
}

static u64 nc_xfer_ns(u64 bytes)
{
	return nc_cfg.fixed_ns + (u64)((double)bytes / nc_cfg.gbps);
}

/* Waits while *word == val, at most until deadline (shared futex: the word
 * is in a MAP_SHARED file, so other processes wake us). */
static void nc_futex_wait(_Atomic unsigned int *word, unsigned int val, u64 deadline)
{
	u64 now = nc_now();
	struct timespec ts;

	if (now >= deadline)
		return;
	ts.tv_sec = (time_t)((deadline - now) / 1000000000ULL);
	ts.tv_nsec = (long)((deadline - now) % 1000000000ULL);
	syscall(SYS_futex, (unsigned int *)word, FUTEX_WAIT, val, &ts, NULL, 0);
}

static void nc_futex_bump(struct nc_shm *shm)
{
	atomic_fetch_add(&shm->futex, 1);
	syscall(SYS_futex, (unsigned int *)&shm->futex, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* ---- the proxy thread ------------------------------------------------------ */

static struct nc_cell *nc_cell(const struct nc_member *m, int side_rank, int send_side)
{
	struct nc_shm *shm = m->comm->shm;
	unsigned int slot = (unsigned int)(m->seq % NC_RING);

	if (m->kind == NC_COLL)
		return &shm->coll[slot][side_rank];
	if (m->kind == NC_SEND) /* this rank sends to peer */
		return &shm->p2p[m->comm->rank][m->peer][slot][send_side ? 0 : 1];
	return &shm->p2p[m->peer][m->comm->rank][slot][send_side ? 0 : 1];
}

static void nc_publish(const struct nc_member *m, u64 arrival)
{
	struct nc_cell *c =
	    m->kind == NC_COLL ? nc_cell(m, m->comm->rank, 0) : nc_cell(m, 0, m->kind == NC_SEND);

	atomic_store(&c->t, arrival);
	atomic_store(&c->seq1, m->seq + 1);
	nc_futex_bump(m->comm->shm);
}

/* 1 with the latest arrival of the member's ranks in *latest when all have
 * arrived. */
static int nc_all_arrived(const struct nc_member *m, u64 *latest)
{
	u64 t = 0;

	if (m->kind == NC_COLL) {
		for (int r = 0; r < m->comm->nranks; r++) {
			struct nc_cell *c = nc_cell(m, r, 0);

			if (atomic_load(&c->seq1) < m->seq + 1)
				return 0;
			t = atomic_load(&c->t) > t ? atomic_load(&c->t) : t;
		}
	} else {
		for (int side = 0; side < 2; side++) {
			struct nc_cell *c = nc_cell(m, 0, side);

			if (atomic_load(&c->seq1) < m->seq + 1)
				return 0;
			t = atomic_load(&c->t) > t ? atomic_load(&c->t) : t;
		}
	}
	*latest = t;
	return 1;
}

/* When the member completes on the device: all its ranks there, plus the
 * transfer. A peer that never comes fails the communicator at the timeout. */
static u64 nc_member_end(struct nc_member *m)
{
	u64 deadline = nc_now() + nc_cfg.timeout_ns, latest;

	for (;;) {
		unsigned int v = atomic_load(&m->comm->shm->futex);

		if (nc_all_arrived(m, &latest))
			return latest + nc_xfer_ns(m->bytes);
		if (m->comm->failed || nc_now() >= deadline)
			break;
		nc_futex_wait(&m->comm->shm->futex, v, deadline);
	}
	if (!m->comm->failed)
		fprintf(stderr,
			"shim nccl: rank %d: operation %llu: peers did not arrive in %llu ms\n",
			m->comm->rank, m->seq, nc_cfg.timeout_ns / 1000000);
	m->comm->failed = 1;
	return nc_now();
}

static void nc_run_job(struct nc_job *job)
{
	u64 start[NC_MAX_GROUP], end[NC_MAX_GROUP];

	for (int e = 0; e < job->next_ext; e++) {
		start[e] = shimExtStart(job->ext[e]);
		end[e] = start[e];
	}
	/* Every member's arrival first: a group's members run together. */
	for (int i = 0; i < job->n; i++)
		nc_publish(&job->m[i], start[job->m[i].ext] + job->m[i].comm->delay_ns);
	for (int i = 0; i < job->n; i++) {
		u64 t = nc_member_end(&job->m[i]);

		if (t > end[job->m[i].ext])
			end[job->m[i].ext] = t;
	}
	for (int e = 0; e < job->next_ext; e++)
		shimExtComplete(job->ext[e], end[e]);
}

/* One communicator's proxy: its jobs in order, until it is destroyed. A job
 * of a group that spans communicators goes to its first member's. */
static void *nc_proxy(void *arg)
{
	struct ncclComm *comm = arg;

	for (;;) {
		struct nc_job *job;

		pthread_mutex_lock(&nc_lock);
		while (!comm->head && !comm->stop)
			pthread_cond_wait(&comm->cond, &nc_lock);
		job = comm->head;
		if (!job) {
			pthread_mutex_unlock(&nc_lock);
			return NULL;
		}
		comm->head = job->next;
		if (!comm->head)
			comm->tail = NULL;
		pthread_mutex_unlock(&nc_lock);
		nc_run_job(job);
		pthread_mutex_lock(&nc_lock);
		for (int i = 0; i < job->n; i++)
			job->m[i].comm->inflight--;
		pthread_cond_broadcast(&nc_done);
		pthread_mutex_unlock(&nc_lock);
		free(job);
	}
}

/* Puts the job's stream items in place and hands it to its proxy. */
static ncclResult_t nc_submit(struct nc_job *job)
{
	struct ncclComm *owner = job->m[0].comm;

	for (int i = 0; i < job->n; i++) {
		struct nc_member *m = &job->m[i];
		int e;

		for (e = 0; e < job->next_ext; e++)
			if (job->ext_stream[e] == m->stream)
				break;
		if (e == job->next_ext) {
			CUresult r = shimExtEnqueue(m->stream, &job->ext[e]);

			if (r != CUDA_SUCCESS) {
				/* Items already queued complete at once. */
				for (int k = 0; k < e; k++)
					shimExtComplete(job->ext[k], shimExtStart(job->ext[k]));
				free(job);
				return r == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED ? ncclInvalidUsage
										 : ncclUnhandledCudaError;
			}
			job->ext_stream[e] = m->stream;
			job->next_ext++;
			/* The kernel launch of the operation. */
			nc_spin(nc_cfg.launch_ns);
		}
		m->ext = e;
	}
	pthread_mutex_lock(&nc_lock);
	for (int i = 0; i < job->n; i++)
		job->m[i].comm->inflight++;
	if (owner->tail)
		owner->tail->next = job;
	else
		owner->head = job;
	owner->tail = job;
	pthread_cond_signal(&owner->cond);
	pthread_mutex_unlock(&nc_lock);
	return ncclSuccess;
}

/* ---- enqueueing ------------------------------------------------------------------ */

static int nc_comm_ok(ncclComm_t comm)
{
	return comm && comm->magic == NC_COMM_MAGIC;
}

/* Checks one operation, numbers it in program order (ranks must issue the
 * same sequence) and enqueues it, or adds it to the open group. */
static ncclResult_t nc_enqueue(ncclComm_t comm, int kind, int peer, size_t count,
			       ncclDataType_t type, int has_bufs, cudaStream_t stream)
{
	struct nc_job *job;
	struct nc_member *m;

	nc_init();
	if (!nc_comm_ok(comm) || !shimNcclTypeSize(type) || !has_bufs)
		return ncclInvalidArgument;
	if (comm->failed)
		return ncclRemoteError;
	if (kind != NC_COLL && (peer < 0 || peer >= comm->nranks))
		return ncclInvalidArgument;
	if (count > (1ULL << 46))
		return ncclInvalidArgument;
	job = nc_depth ? nc_group : calloc(1, sizeof(*job));
	if (!job)
		return ncclSystemError;
	if (job->n == NC_MAX_GROUP)
		return ncclInvalidUsage;
	m = &job->m[job->n++];
	m->comm = comm;
	m->kind = kind;
	m->peer = peer;
	m->bytes = (u64)count * shimNcclTypeSize(type);
	m->stream = stream;
	m->seq = kind == NC_COLL   ? comm->coll_seq++
		 : kind == NC_SEND ? comm->send_seq[peer]++
				   : comm->recv_seq[peer]++;
	return nc_depth ? ncclSuccess : nc_submit(job);
}

static int nc_op_ok(ncclRedOp_t op)
{
	return (unsigned int)op < ncclNumOps;
}

ncclResult_t pncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
			    ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
			    cudaStream_t stream)
{
	NC_ENTER(ncclAllReduce);
	if (!nc_op_ok(op))
		return ncclInvalidArgument;
	return nc_enqueue(comm, NC_COLL, 0, count, datatype, !count || (sendbuff && recvbuff),
			  stream);
}

ncclResult_t pncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
			    ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
	NC_ENTER(ncclAllGather);
	return nc_enqueue(comm, NC_COLL, 0, sendcount, datatype,
			  !sendcount || (sendbuff && recvbuff), stream);
}

ncclResult_t pncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
				ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
				cudaStream_t stream)
{
	NC_ENTER(ncclReduceScatter);
	if (!nc_op_ok(op))
		return ncclInvalidArgument;
	return nc_enqueue(comm, NC_COLL, 0, recvcount, datatype,
			  !recvcount || (sendbuff && recvbuff), stream);
}

static int nc_root_ok(ncclComm_t comm, int root)
{
	return nc_comm_ok(comm) && root >= 0 && root < comm->nranks;
}

ncclResult_t pncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
			    ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
{
	NC_ENTER(ncclBroadcast);
	if (!nc_root_ok(comm, root))
		return ncclInvalidArgument;
	return nc_enqueue(comm, NC_COLL, 0, count, datatype,
			  !count || (recvbuff && (sendbuff || comm->rank != root)), stream);
}

ncclResult_t pncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root,
			ncclComm_t comm, cudaStream_t stream)
{
	NC_ENTER(ncclBcast);
	if (!nc_root_ok(comm, root))
		return ncclInvalidArgument;
	return nc_enqueue(comm, NC_COLL, 0, count, datatype, !count || buff, stream);
}

ncclResult_t pncclReduce(const void *sendbuff, void *recvbuff, size_t count,
			 ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
			 cudaStream_t stream)
{
	NC_ENTER(ncclReduce);
	if (!nc_op_ok(op) || !nc_root_ok(comm, root))
		return ncclInvalidArgument;
	return nc_enqueue(comm, NC_COLL, 0, count, datatype,
			  !count || (sendbuff && (recvbuff || comm->rank != root)), stream);
}

ncclResult_t pncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
		       ncclComm_t comm, cudaStream_t stream)
{
	NC_ENTER(ncclSend);
	return nc_enqueue(comm, NC_SEND, peer, count, datatype, !count || sendbuff, stream);
}

ncclResult_t pncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
		       ncclComm_t comm, cudaStream_t stream)
{
	NC_ENTER(ncclRecv);
	return nc_enqueue(comm, NC_RECV, peer, count, datatype, !count || recvbuff, stream);
}

ncclResult_t pncclGroupStart(void)
{
	NC_ENTER(ncclGroupStart);
	nc_init();
	if (!nc_depth) {
		nc_group = calloc(1, sizeof(*nc_group));
		if (!nc_group)
			return ncclSystemError;
	}
	nc_depth++;
	return ncclSuccess;
}

/* The outermost end enqueues the group's operations, together. */
ncclResult_t pncclGroupEnd(void)
{
	struct nc_job *job;

	NC_ENTER(ncclGroupEnd);
	if (!nc_depth)
		return ncclInvalidUsage;
	if (--nc_depth)
		return ncclSuccess;
	job = nc_group;
	nc_group = NULL;
	if (!job->n) {
		free(job);
		return ncclSuccess;
	}
	return nc_submit(job);
}

/* ---- communicators --------------------------------------------------------------- */

ncclResult_t pncclGetVersion(int *version)
{
	NC_ENTER(ncclGetVersion);
	if (!version)
		return ncclInvalidArgument;
	*version = 22809;
	return ncclSuccess;
}

/* Magic, pid, time and randomness: unique across the processes of a host. */
ncclResult_t pncclGetUniqueId(ncclUniqueId *uniqueId)
{
	static _Atomic unsigned int counter;
	u64 words[3];
	int fd;

	NC_ENTER(ncclGetUniqueId);
	if (!uniqueId)
		return ncclInvalidArgument;
	memset(uniqueId, 0, sizeof(*uniqueId));
	words[0] = ((u64)getpid() << 32) | atomic_fetch_add(&counter, 1);
	words[1] = nc_now();
	words[2] = 0;
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, &words[2], sizeof(words[2])) != (ssize_t)sizeof(words[2]))
			words[2] = (u64)(uintptr_t)&words;
		close(fd);
	}
	memcpy(uniqueId->internal, nc_id_magic, sizeof(nc_id_magic));
	memcpy(uniqueId->internal + 8, words, sizeof(words));
	return ncclSuccess;
}

/* The shared file of an id: $SHIM_NCCL_DIR (default /dev/shm)/shim-nccl-HEX. */
static void nc_shm_path(const ncclUniqueId *id, char *path, size_t len)
{
	const char *dir = getenv("SHIM_NCCL_DIR");
	u64 words[3];

	memcpy(words, id->internal + 8, sizeof(words));
	snprintf(path, len, "%s/shim-nccl-%016llx%016llx%016llx", dir && *dir ? dir : "/dev/shm",
		 words[0], words[1], words[2]);
}

/* Blocks until all nranks ranks of the id have joined, as NCCL does. */
ncclResult_t pncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
	struct ncclComm *c;
	struct nc_shm *shm;
	char path[4096];
	unsigned int want, expect = 0, had;
	u64 deadline;
	struct stat st;
	int fd;

	NC_ENTER(ncclCommInitRank);
	nc_init();
	if (!comm || nranks < 1 || nranks > NC_MAX_RANKS || rank < 0 || rank >= nranks ||
	    memcmp(commId.internal, nc_id_magic, sizeof(nc_id_magic)))
		return ncclInvalidArgument;
	nc_shm_path(&commId, path, sizeof(path));
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "shim nccl: cannot open %s: %s\n", path, strerror(errno));
		return ncclSystemError;
	}
	if (fstat(fd, &st) || (st.st_size < (off_t)sizeof(*shm) && ftruncate(fd, sizeof(*shm)))) {
		close(fd);
		return ncclSystemError;
	}
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (shm == MAP_FAILED)
		return ncclSystemError;
	if (!atomic_compare_exchange_strong(&shm->nranks, &expect, (unsigned int)nranks) &&
	    expect != (unsigned int)nranks) {
		munmap(shm, sizeof(*shm));
		return ncclInvalidArgument;
	}
	had = atomic_fetch_or(&shm->joined, 1u << rank);
	if (had & (1u << rank)) {
		munmap(shm, sizeof(*shm));
		return ncclInvalidUsage;
	}
	nc_futex_bump(shm);
	want = (1u << nranks) - 1;
	/* The last rank in removes the name; the mappings stay. */
	if ((had | (1u << rank)) == want)
		unlink(path);
	deadline = nc_now() + nc_cfg.timeout_ns;
	for (;;) {
		unsigned int v = atomic_load(&shm->futex);

		if (atomic_load(&shm->joined) == want)
			break;
		if (nc_now() >= deadline) {
			fprintf(stderr, "shim nccl: rank %d of %d: peers did not join in %llu ms\n",
				rank, nranks, nc_cfg.timeout_ns / 1000000);
			unlink(path);
			munmap(shm, sizeof(*shm));
			return ncclSystemError;
		}
		nc_futex_wait(&shm->futex, v, deadline);
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		munmap(shm, sizeof(*shm));
		return ncclSystemError;
	}
	c->magic = NC_COMM_MAGIC;
	c->rank = rank;
	c->nranks = nranks;
	c->shm = shm;
	c->delay_ns = nc_cfg.delay_ns[rank];
	pthread_cond_init(&c->cond, NULL);
	if (pthread_create(&c->proxy, NULL, nc_proxy, c)) {
		munmap(shm, sizeof(*shm));
		free(c);
		return ncclSystemError;
	}
	pthread_setname_np(c->proxy, "nccl-proxy");
	*comm = c;
	return ncclSuccess;
}

/* Waits until the proxies are done with the communicator's operations, then
 * stops its proxy. */
ncclResult_t pncclCommDestroy(ncclComm_t comm)
{
	NC_ENTER(ncclCommDestroy);
	if (!nc_comm_ok(comm))
		return ncclInvalidArgument;
	pthread_mutex_lock(&nc_lock);
	while (comm->inflight)
		pthread_cond_wait(&nc_done, &nc_lock);
	comm->stop = 1;
	pthread_cond_signal(&comm->cond);
	pthread_mutex_unlock(&nc_lock);
	pthread_join(comm->proxy, NULL);
	pthread_cond_destroy(&comm->cond);
	comm->magic = 0;
	munmap(comm->shm, sizeof(*comm->shm));
	free(comm);
	return ncclSuccess;
}

ncclResult_t pncclCommCount(const ncclComm_t comm, int *count)
{
	NC_ENTER(ncclCommCount);
	if (!nc_comm_ok(comm) || !count)
		return ncclInvalidArgument;
	*count = comm->nranks;
	return ncclSuccess;
}

ncclResult_t pncclCommUserRank(const ncclComm_t comm, int *rank)
{
	NC_ENTER(ncclCommUserRank);
	if (!nc_comm_ok(comm) || !rank)
		return ncclInvalidArgument;
	*rank = comm->rank;
	return ncclSuccess;
}

const char *pncclGetErrorString(ncclResult_t result)
{
	NC_ENTER(ncclGetErrorString);
	switch (result) {
	case ncclSuccess:
		return "no error";
	case ncclUnhandledCudaError:
		return "unhandled cuda error";
	case ncclSystemError:
		return "unhandled system error";
	case ncclInternalError:
		return "internal error";
	case ncclInvalidArgument:
		return "invalid argument";
	case ncclInvalidUsage:
		return "invalid usage";
	case ncclRemoteError:
		return "remote process exited or there was a network error";
	case ncclInProgress:
		return "NCCL operation in progress";
	default:
		return "unknown result code";
	}
}

/* As in NVIDIA's library, the bodies are the profiling names pncclX and ncclX
 * is a weak alias at the same address: one call, one uprobe hit, whichever
 * name a tracer attaches to. */
#define NC_ALIAS(s) extern __typeof__(p##s) s __attribute__((weak, alias("p" #s)));
NC_SYMS(NC_ALIAS)

/* SHIM_STATS=FILE: "PID SYMBOL COUNT" lines at exit, as the other shims. */
__attribute__((destructor)) static void nc_write_stats(void)
{
	shim_write_stats(nc_sym_names, nc_calls, NC_NSYMS);
}
