/* NCCL arrivals in the model (model_nccl_arrivals): per rank, the
 * sequence number and entry time of each operation it enqueued, the last
 * IG_NCCL_ARRIVALS kept; asked after a sequence number, the newer ones
 * oldest first with the count not listed; a group is one operation at its
 * ncclGroupEnd's entry; a refused call is none; the copies of the model
 * (a paused view's, a checkpoint's) hold the same. */
#include "check.h"
#include "core/ops.h"
#include "evmake.h"
#include "model/model.h"

#include <errno.h>
#include <string.h>

#define KEY 0xabc

static struct ig_event coll(uint32_t pid, int op, uint64_t ts, unsigned rank)
{
	struct ig_event e = ev_call(pid, pid, op, ts, 10 * US, "trainer");
	e.arg0 = 4096;
	e.arg1 = IG_NCCL_ARG1(7, 0, IG_NCCL_NONE32);
	e.arg2 = IG_NCCL_COMM(KEY, rank, 2);
	e.stream = 0x10;
	return e;
}

/* The entry time of rank 0's operation seq (1-based). */
static uint64_t entry0(uint64_t seq)
{
	return T0 + seq * MS + 7;
}

/* Rank 0 (pid 100): 300 AllReduces, one refused among them. Rank 1
 * (pid 200): 3 groups of a Send and a Recv. */
static struct ig_model *feed(void)
{
	struct ig_model *m = model_new(NULL);
	for (uint64_t s = 1; s <= 300; s++) {
		struct ig_event e = coll(100, IG_OP_NCCL_ALL_REDUCE, entry0(s), 0);
		model_ingest(m, &e);
		if (s == 150) { /* refused: enqueues nothing */
			e = coll(100, IG_OP_NCCL_ALL_REDUCE, entry0(s) + 100 * US, 0);
			e.ret = 1;
			model_ingest(m, &e);
		}
	}
	for (uint64_t g = 0; g < 3; g++) {
		uint64_t t = T0 + g * 10 * MS + 500 * US;
		struct ig_event e = ev_call(200, 200, IG_OP_NCCL_GROUP_START, t, US, "trainer");
		model_ingest(m, &e);
		e = coll(200, IG_OP_NCCL_SEND, t + 2 * US, 1);
		model_ingest(m, &e);
		e = coll(200, IG_OP_NCCL_RECV, t + 20 * US, 1);
		model_ingest(m, &e);
		e = ev_call(200, 200, IG_OP_NCCL_GROUP_END, t + 40 * US, 5 * US, "trainer");
		model_ingest(m, &e);
	}
	return m;
}

/* after_seq, max -> n listed, the first seq, lost. */
static void expect(const struct ig_model *m, uint64_t after, int max, int n, uint64_t first,
		   uint64_t lost)
{
	uint64_t out[IG_NCCL_ARRIVALS][2], l = 99;
	int got = model_nccl_arrivals(m, 100, KEY, 0, after, out, max, &l);
	CHECKF(got == n && l == lost, "after %lu max %d: %d listed (want %d), lost %lu (want %lu)",
	       (unsigned long)after, max, got, n, (unsigned long)l, (unsigned long)lost);
	int ok = 1;
	for (int i = 0; i < got && i < n; i++)
		ok &= out[i][0] == first + (uint64_t)i && out[i][1] == entry0(first + (uint64_t)i);
	CHECKF(ok, "after %lu: seqs from %lu, contiguous, with their entry times",
	       (unsigned long)after, (unsigned long)first);
}

static void check_all(const struct ig_model *m)
{
	expect(m, 0, IG_NCCL_ARRIVALS, 256, 45, 44); /* 300 made, the last 256 kept */
	expect(m, 290, IG_NCCL_ARRIVALS, 10, 291, 0);
	expect(m, 300, IG_NCCL_ARRIVALS, 0, 0, 0);
	expect(m, 290, 4, 4, 297, 6);			/* over max: the newest, the others lost */
	expect(m, 1000, IG_NCCL_ARRIVALS, 256, 45, 44); /* a rank made again: from 0 */
	/* the group rank: one operation per group, at its ncclGroupEnd's entry */
	uint64_t out[8][2], lost = 99;
	int n = model_nccl_arrivals(m, 200, KEY, 1, 1, out, 8, &lost);
	CHECKF(n == 2 && lost == 0, "group rank: %d, lost %lu", n, (unsigned long)lost);
	CHECK(n == 2 && out[0][0] == 2 && out[0][1] == T0 + 10 * MS + 540 * US && out[1][0] == 3);
	CHECK(model_nccl_arrivals(m, 100, KEY, 1, 0, out, 8, &lost) == -ENOENT);
	CHECK(model_nccl_arrivals(m, 100, KEY + 1, 0, 0, out, 8, NULL) == -ENOENT);
	CHECK(model_nccl_arrivals(m, 999, KEY, 0, 0, out, 8, NULL) == -ENOENT);
}

int main(void)
{
	struct ig_model *m = feed();
	check_all(m);
	struct ig_model *c = model_clone(m); /* a checkpoint */
	CHECK(c != NULL);
	if (c)
		check_all(c);
	struct ig_model *p = model_copy(NULL, m); /* a paused view's */
	CHECK(p != NULL);
	if (p)
		check_all(p);
	model_reset(m);
	uint64_t out[4][2];
	CHECK(model_nccl_arrivals(m, 100, KEY, 0, 0, out, 4, NULL) == -ENOENT);
	model_free(p);
	model_free(c);
	model_free(m);
	return check_done("test_nccl_arrivals");
}
