/* The workload's NCCL calls (--nccl): one communicator per worker thread,
 * ranks as processes (--fork, or started once per rank with --nccl-rank and
 * --nccl-id), and per step one call of each chosen op for each chosen data
 * type, with a count that differs per type so that the bytes of an op are
 * exact for every type. docs/shim.md. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nccl.h"
#include "workload.h"

struct wl_nccl {
	ncclComm_t comm;
};

static ncclUniqueId *wl_ids;
static int wl_nranks = 1, wl_rank;
static _Atomic unsigned long long wl_wait_ns, wl_wait_n;

static const char *const wl_type_names[ncclNumTypes] = {
    "int8",    "uint8",	  "int32",   "uint32",	 "int64",   "uint64",
    "float16", "float32", "float64", "bfloat16", "fp8e4m3", "fp8e5m2",
};

static const char *const wl_op_names[WL_NCCL_NOPS] = {
    "allreduce", "allgather", "reducescatter", "broadcast", "bcast", "reduce", "sendrecv",
};

/* "all" or a comma-separated list of names; a bit per name's index. */
static int wl_parse_list(const char *list, const char *const *names, int n, unsigned int *out)
{
	char *copy = strdup(list), *save = NULL;
	unsigned int bits = 0;

	if (!copy)
		return -1;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int i;

		if (!strcmp(tok, "all")) {
			bits |= (1u << n) - 1;
			continue;
		}
		for (i = 0; i < n && strcmp(tok, names[i]); i++)
			;
		if (i == n) {
			free(copy);
			return -1;
		}
		bits |= 1u << i;
	}
	free(copy);
	if (!bits)
		return -1;
	*out = bits;
	return 0;
}

int wl_nccl_parse_types(const char *list, unsigned int *out)
{
	return wl_parse_list(list, wl_type_names, ncclNumTypes, out);
}

int wl_nccl_parse_ops(const char *list, unsigned int *out)
{
	return wl_parse_list(list, wl_op_names, WL_NCCL_NOPS, out);
}

static void wl_check_nccl(ncclResult_t r, const char *what)
{
	if (r != ncclSuccess) {
		fprintf(stderr, "workload: %s failed: %s (%d)\n", what, ncclGetErrorString(r), r);
		exit(1);
	}
}

/* Rank 0 writes the ids to the file (complete, by rename); the others wait
 * for it (up to 30 s). */
static int wl_share_ids(int nthreads)
{
	size_t len = (size_t)nthreads * sizeof(*wl_ids);
	char tmp[4096];
	FILE *f;

	if (wl_rank == 0) {
		snprintf(tmp, sizeof(tmp), "%s.tmp", wl_opt.nccl_id);
		f = fopen(tmp, "w");
		if (!f || fwrite(wl_ids, 1, len, f) != len || fclose(f) ||
		    rename(tmp, wl_opt.nccl_id)) {
			fprintf(stderr, "workload: cannot write %s: %s\n", wl_opt.nccl_id,
				strerror(errno));
			return -1;
		}
		return 0;
	}
	for (int tries = 0; tries < 3000; tries++) {
		struct timespec ts = {0, 10000000};

		f = fopen(wl_opt.nccl_id, "r");
		if (f) {
			size_t got = fread(wl_ids, 1, len, f);

			fclose(f);
			if (got == len)
				return 0;
			fprintf(stderr, "workload: %s holds %zu bytes, want %zu\n", wl_opt.nccl_id,
				got, len);
			return -1;
		}
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "workload: no NCCL id file %s after 30 s\n", wl_opt.nccl_id);
	return -1;
}

int wl_nccl_prepare(int nthreads)
{
	wl_nranks = wl_opt.nccl_ranks;
	wl_rank = wl_opt.nccl_rank;
	wl_ids = calloc((size_t)nthreads, sizeof(*wl_ids));
	if (!wl_ids)
		return -1;
	if (wl_rank == 0 || !wl_opt.nccl_id)
		for (int i = 0; i < nthreads; i++)
			wl_check_nccl(ncclGetUniqueId(&wl_ids[i]), "ncclGetUniqueId");
	if (wl_opt.nccl_id && !wl_opt.fork)
		return wl_share_ids(nthreads);
	return 0;
}

void wl_nccl_set_rank(int rank)
{
	wl_rank = rank;
}

int wl_nccl_rank(void)
{
	return wl_rank;
}

/* Blocks until every rank of the thread's id has joined. */
struct wl_nccl *wl_nccl_setup(int thread_idx)
{
	struct wl_nccl *n = calloc(1, sizeof(*n));
	int count = 0, rank = -1;

	if (!n)
		wl_fail("out of memory", 0);
	wl_count(WL_ncclCommInitRank);
	wl_check_nccl(ncclCommInitRank(&n->comm, wl_nranks, wl_ids[thread_idx], wl_rank),
		      "ncclCommInitRank");
	/* Not traced, not counted. */
	wl_check_nccl(ncclCommCount(n->comm, &count), "ncclCommCount");
	wl_check_nccl(ncclCommUserRank(n->comm, &rank), "ncclCommUserRank");
	if (count != wl_nranks || rank != wl_rank) {
		fprintf(stderr, "workload: communicator says rank %d of %d, want %d of %d\n", rank,
			count, wl_rank, wl_nranks);
		exit(1);
	}
	return n;
}

/* One call per chosen op and data type; type t moves --nccl-count + t
 * elements (per rank for AllGather and ReduceScatter). */
void wl_nccl_step(struct wl_nccl *n, cudaStream_t stream, void *dbuf)
{
	int next = (wl_rank + 1) % wl_nranks, prev = (wl_rank + wl_nranks - 1) % wl_nranks;

	if (wl_opt.straggler_us > 0 && wl_rank == wl_opt.straggler_rank)
		wl_spin_us(wl_opt.straggler_us); /* a slow host: late to every collective */
	for (int t = 0; t < ncclNumTypes; t++) {
		ncclDataType_t type = (ncclDataType_t)t;
		size_t count = (size_t)wl_opt.nccl_count + (size_t)t;
		unsigned long long bytes = (unsigned long long)count * shimNcclTypeSize(type);

		if (!(wl_opt.nccl_types & (1u << t)))
			continue;
#define WL_NCCL(op, call)                                                                          \
	do {                                                                                       \
		wl_count(WL_##op);                                                                 \
		wl_count_bytes(WL_##op, bytes);                                                    \
		wl_check_nccl(call, #op);                                                          \
	} while (0)
		if (wl_opt.nccl_ops & (1u << WL_NCCL_ALLREDUCE))
			WL_NCCL(ncclAllReduce,
				ncclAllReduce(dbuf, dbuf, count, type, ncclSum, n->comm, stream));
		if (wl_opt.nccl_ops & (1u << WL_NCCL_ALLGATHER))
			WL_NCCL(ncclAllGather,
				ncclAllGather(dbuf, dbuf, count, type, n->comm, stream));
		if (wl_opt.nccl_ops & (1u << WL_NCCL_REDUCESCATTER))
			WL_NCCL(ncclReduceScatter, ncclReduceScatter(dbuf, dbuf, count, type,
								     ncclMax, n->comm, stream));
		if (wl_opt.nccl_ops & (1u << WL_NCCL_BROADCAST))
			WL_NCCL(ncclBroadcast,
				ncclBroadcast(dbuf, dbuf, count, type, 0, n->comm, stream));
		if (wl_opt.nccl_ops & (1u << WL_NCCL_BCAST))
			WL_NCCL(ncclBcast, ncclBcast(dbuf, count, type, 0, n->comm, stream));
		if (wl_opt.nccl_ops & (1u << WL_NCCL_REDUCE))
			WL_NCCL(ncclReduce,
				ncclReduce(dbuf, dbuf, count, type, ncclProd, 0, n->comm, stream));
		if (wl_opt.nccl_ops & (1u << WL_NCCL_SENDRECV)) {
			/* A ring exchange: send to the next rank, receive from the
			 * previous, in one group as NCCL requires. */
			wl_count(WL_ncclGroupStart);
			wl_check_nccl(ncclGroupStart(), "ncclGroupStart");
			WL_NCCL(ncclSend, ncclSend(dbuf, count, type, next, n->comm, stream));
			WL_NCCL(ncclRecv, ncclRecv(dbuf, count, type, prev, n->comm, stream));
			wl_count(WL_ncclGroupEnd);
			wl_check_nccl(ncclGroupEnd(), "ncclGroupEnd");
		}
#undef WL_NCCL
	}
}

void wl_nccl_teardown(struct wl_nccl *n)
{
	wl_count(WL_ncclCommDestroy);
	wl_check_nccl(ncclCommDestroy(n->comm), "ncclCommDestroy");
	free(n);
}

void wl_nccl_wait_add(unsigned long long ns)
{
	atomic_fetch_add(&wl_wait_ns, ns);
	atomic_fetch_add(&wl_wait_n, 1);
}

double wl_nccl_wait_ms(void)
{
	unsigned long long n = atomic_load(&wl_wait_n);

	return n ? (double)atomic_load(&wl_wait_ns) / (double)n / 1e6 : 0.0;
}
