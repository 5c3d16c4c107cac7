/* NCCL calls, the new CUDA and HIP ops and GPU device samples in
 * recordings: every field round-trips through a file (arg2, the packed
 * device values, the process samples); a file written before events had
 * arg2 replays, and a recording appended to it gets the column. */
#include "check.h"
#include "core/event.h"
#include "core/ops.h"
#include "store/rec.h"
#include "store/replay.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEC 1000000000ull
#define T0 (1767225600ull * SEC)

static struct ig_event evs[8];
static int nevs;

static void make_events(void)
{
	struct ig_event e = {0};
	e.kind = IG_EV_CALL;
	e.pid = e.tid = 42;
	strcpy(e.comm, "trainer");
	e.op = IG_OP_NCCL_ALL_GATHER;
	e.ts_ns = T0 + 1000;
	e.dur_ns = 5000;
	e.arg0 = 2066;
	e.arg1 = IG_NCCL_ARG1(9, IG_NCCL_NONE8, IG_NCCL_NONE32);
	e.arg2 = IG_NCCL_COMM(0xfeed, 1, 2);
	e.stream = 0x10;
	evs[nevs++] = e;
	e.op = IG_OP_HIP_MEMCPY_DTOH;
	e.ts_ns = T0 + 20000;
	e.arg0 = 4096;
	e.arg1 = IG_DIR_D2H;
	e.arg2 = 0;
	evs[nevs++] = e;
	e.op = IG_OP_CUDA_LAUNCH_KERNEL_EX;
	e.ts_ns = T0 + 40000;
	e.arg0 = 0x7f00aa;
	e.arg1 = (64ull << 16) | 256;
	evs[nevs++] = e;
	struct ig_gpu_dev d = {.ts_ns = T0 + 60000,
			       .index = 3,
			       .valid = IG_GPU_V_UTIL | IG_GPU_V_MEM | IG_GPU_V_LIMIT,
			       .util_gpu_pct = 87,
			       .util_mem_pct = 41,
			       .mem_used = 1ull << 35,
			       .mem_total = 80ull << 30,
			       .power_limit_mw = 700000,
			       .err = 3};
	strcpy(d.name, "H100 80GB HBM3");
	ig_gpu_dev_pack(&e, &d);
	evs[nevs++] = e;
	memset(&e, 0, sizeof(e));
	e.kind = IG_EV_GPU_PROC;
	e.ts_ns = T0 + 60000;
	e.pid = 42;
	e.cpu = 3;
	e.arg0 = 1536ull << 20;
	e.flags = IG_GPU_V_MEM;
	evs[nevs++] = e;
}

static int record(const char *path)
{
	struct rec_opts o = {.synchronous = 1};
	const char *why = NULL;
	struct rec *r = rec_open(path, &o, &why);
	if (!r) {
		fprintf(stderr, "rec_open: %s\n", why ? why : "?");
		return -1;
	}
	for (int i = 0; i < nevs; i++)
		rec_event(r, &evs[i]);
	return rec_close(r);
}

static struct ig_event got[64];
static int ngot;

static void collect(void *ctx, const struct ig_event *e)
{
	if (ngot < 64 && e->kind != IG_EV_COMM)
		got[ngot++] = *e;
}

static int replay(const char *path)
{
	const char *why = NULL;
	struct ig_source *s = replay_open(&path, 1, &why);
	if (!s) {
		fprintf(stderr, "replay_open: %s\n", why ? why : "?");
		return -1;
	}
	ngot = 0;
	while (s->ops->poll(s, collect, NULL, 100) > 0)
		;
	s->ops->free(s);
	return 0;
}

static const struct ig_event *find(int kind, int op)
{
	for (int i = 0; i < ngot; i++)
		if (got[i].kind == kind && (kind != IG_EV_CALL || got[i].op == op))
			return &got[i];
	return NULL;
}

static void check_round_trip(const char *what, int with_arg2)
{
	const struct ig_event *a = find(IG_EV_CALL, IG_OP_NCCL_ALL_GATHER);
	CHECKF(a && a->arg0 == 2066 && a->arg1 == evs[0].arg1 && a->stream == 0x10 &&
		   a->arg2 == (with_arg2 ? evs[0].arg2 : 0),
	       "%s: ncclAllGather", what);
	a = find(IG_EV_CALL, IG_OP_HIP_MEMCPY_DTOH);
	CHECKF(a && a->arg0 == 4096 && a->arg1 == IG_DIR_D2H, "%s: hipMemcpyDtoH", what);
	a = find(IG_EV_CALL, IG_OP_CUDA_LAUNCH_KERNEL_EX);
	CHECKF(a && a->arg1 == evs[2].arg1, "%s: cudaLaunchKernelExC", what);
	a = find(IG_EV_GPU, 0);
	struct ig_gpu_dev in, out;
	ig_gpu_dev_unpack(&evs[3], &in);
	if (a)
		ig_gpu_dev_unpack(a, &out);
	CHECKF(a && !memcmp(&in, &out, sizeof(in)), "%s: device sample", what);
	a = find(IG_EV_GPU_PROC, 0);
	CHECKF(a && a->pid == 42 && a->cpu == 3 && a->arg0 == 1536ull << 20 &&
		   a->flags == IG_GPU_V_MEM,
	       "%s: process sample", what);
}

static int sql(const char *path, const char *q)
{
	sqlite3 *db;
	if (sqlite3_open(path, &db) != SQLITE_OK)
		return -1;
	int rc = sqlite3_exec(db, q, NULL, NULL, NULL);
	sqlite3_close(db);
	return rc;
}

int main(void)
{
	char dir[] = "/tmp/test_gpu_rec.XXXXXX", path[256];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/run.db", dir);
	make_events();
	CHECK(record(path) == 0);
	CHECK(replay(path) == 0);
	CHECKF(ngot == nevs, "%d events back, %d recorded", ngot, nevs);
	check_round_trip("new file", 1);
	/* Ingero's rank and world_size columns on NCCL rows only */
	CHECK(sql(path, "SELECT 1 FROM events WHERE rank = 1 AND world_size = 2 AND source = 9") ==
	      SQLITE_OK);
	/* a file from before arg2: replays without it, appending adds it */
	CHECK(sql(path, "ALTER TABLE events DROP COLUMN arg2") == SQLITE_OK);
	CHECK(replay(path) == 0);
	check_round_trip("file without arg2", 0);
	CHECK(record(path) == 0);
	CHECK(replay(path) == 0);
	CHECKF(ngot == 2 * nevs, "appended: %d events", ngot);
	int with = 0;
	for (int i = 0; i < ngot; i++)
		with += got[i].op == IG_OP_NCCL_ALL_GATHER && got[i].arg2 == evs[0].arg2;
	CHECKF(with == 1, "appended: %d ncclAllGather rows with their communicator", with);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	return check_done("test_gpu_rec");
}
