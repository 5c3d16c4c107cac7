/* Events made by hand for the unit tests that feed a model or a detector
 * (test_model, test_gpu_model, test_gpu_report, test_scenario_rules, ...):
 * the time units, a fixed start (2026-01-01 in Unix ns) and the two records
 * most tests build, a call and an off-CPU interval. */
#ifndef IG_TEST_EVMAKE_H
#define IG_TEST_EVMAKE_H

#include "core/event.h"

#include <stdint.h>
#include <string.h>

#define US 1000ull
#define MS 1000000ull
#define SEC 1000000000ull
#define T0 (1767225600ull * SEC)

static inline struct ig_event ev_call(uint32_t pid, uint32_t tid, int op, uint64_t ts,
				      uint64_t dur, const char *comm)
{
	struct ig_event e = {0};
	e.kind = IG_EV_CALL;
	e.pid = pid;
	e.tid = tid;
	e.op = (uint16_t)op;
	e.ts_ns = ts;
	e.dur_ns = dur;
	if (comm)
		strncpy(e.comm, comm, sizeof(e.comm) - 1);
	return e;
}

/* Off CPU from ts for dur: state IG_OFF_*, flags IG_F_*, the preemptor or
 * waker other (and its name, or NULL). */
static inline struct ig_event ev_off(uint32_t pid, uint32_t tid, uint64_t ts, uint64_t dur,
				     int state, uint32_t flags, uint32_t other,
				     const char *other_comm)
{
	struct ig_event e = ev_call(pid, tid, 0, ts, dur, NULL);
	e.kind = IG_EV_OFFCPU;
	e.state = (uint8_t)state;
	e.flags = flags;
	e.other_pid = other;
	if (other_comm)
		strncpy(e.other_comm, other_comm, sizeof(e.other_comm) - 1);
	return e;
}

#endif
