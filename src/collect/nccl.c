/* NCCL communicators seen live: ncclCommInitRank's record says which
 * (process, ncclComm_t) is which rank of which communicator; the collector
 * puts that into every later NCCL record of the process, and turns an NCCL
 * call's element count into bytes (core/ops.h: the event's NCCL layout).
 * Recordings keep the result, so a replay needs no communicator table. */
#include "collect/collector_priv.h"

#include "core/event.h"
#include "core/ops.h"

#include <string.h>

static struct coll_comm *comm_find(struct collector *c, uint32_t pid, uint64_t handle)
{
	for (int i = 0; i < c->ncomms; i++)
		if (c->comms[i].pid == pid && c->comms[i].handle == handle)
			return &c->comms[i];
	return NULL;
}

static void comm_forget(struct collector *c, struct coll_comm *k)
{
	*k = c->comms[--c->ncomms];
}

/* The 24-bit key of a communicator from the hash of its unique id. */
static uint32_t comm_key(uint64_t h)
{
	return (uint32_t)((h ^ (h >> 24) ^ (h >> 48)) & 0xffffff);
}

void coll_nccl_event(struct collector *c, struct ig_event *e)
{
	const struct ig_op_info *oi = ig_op_info(e->op);
	struct coll_comm *k;

	if (e->kind == IG_EV_EXIT) {
		for (int i = c->ncomms - 1; i >= 0; i--)
			if (c->comms[i].pid == e->pid)
				comm_forget(c, &c->comms[i]);
		return;
	}
	if (e->kind != IG_EV_CALL || !oi || oi->group != IG_GRP_NCCL)
		return;
	if (e->op == IG_OP_NCCL_COMM_INIT_RANK) {
		uint32_t nranks = (uint32_t)e->arg1, rank = (uint32_t)(e->arg1 >> 32);
		uint64_t handle = e->arg0;
		if (nranks > IG_NCCL_MAX_RANKS || rank >= nranks)
			nranks = rank = 0; /* not a communicator NCCL would make */
		e->arg2 = nranks ? IG_NCCL_COMM(comm_key(e->arg2), rank, nranks) : 0;
		e->arg0 = e->arg1 = 0;
		if (e->ret || !handle || !nranks)
			return;
		k = comm_find(c, e->pid, handle);
		if (!k) {
			if (c->ncomms == MAX_COMMS)
				comm_forget(c, &c->comms[0]); /* the oldest makes room */
			k = &c->comms[c->ncomms++];
		}
		k->pid = e->pid;
		k->handle = handle;
		k->comm = e->arg2;
		return;
	}
	if (e->op == IG_OP_NCCL_COMM_DESTROY) {
		k = comm_find(c, e->pid, e->arg0);
		e->arg2 = k ? k->comm : 0;
		e->arg0 = 0;
		if (k && !e->ret)
			comm_forget(c, k);
		return;
	}
	if (!(oi->kind & IG_OPK_COLL))
		return;
	k = comm_find(c, e->pid, e->arg2);
	e->arg2 = k ? k->comm : 0;
	unsigned size = ig_nccl_type_size(IG_NCCL_TYPE(e->arg1));
	if (size)
		e->arg0 *= size; /* an unknown type leaves the count (NCCL refuses the call) */
}
