/* `ingero-top export --perfetto`: a recording (or several, or a flight
 * recorder save) as a Chrome trace-event JSON file that ui.perfetto.dev and
 * chrome://tracing open. Streaming: each event is written as the replay
 * source delivers it; only small tables (processes, threads, stacks, the
 * last slices of each track) stay in memory, so the size of the recording
 * does not matter.
 *
 * What the file holds (docs/perfetto.md):
 *   - one track per thread, with the real pid and tid and their names
 *     (process_name / thread_name metadata); with several nodes, the ids of
 *     node n are moved to n << 22 + id so they cannot collide, and the names
 *     carry the real id and the node;
 *   - CUDA calls as complete slices ("X", cat "cuda") named by op, with the
 *     arguments, the off-CPU split, the preemptor and the stack frames when
 *     the recording has stack_traces;
 *   - off-CPU intervals as slices (cat "offcpu") named by state
 *     ("preempted", "blocked", "blocked: I/O", ...; cname for Chrome), with
 *     the preemptor or the waker;
 *   - a flow arrow (ph "s" / "f" with bp "e", cat "wakeup") from the task
 *     that woke a thread to that thread's blocked interval: the wakeup is a
 *     short slice on a "wake-ups" track of the waker's process (the waker's
 *     thread is not recorded, only its process);
 *   - chains as global instant events with their summary;
 *   - process events (fork, exec, exit) as process instants, host snapshots
 *     as counters of a "host" process per node.
 * Timestamps are microseconds from ts_base_unix_ns (otherData), on a grid of
 * 1/8 us so that every value is exact in binary; slices on one track are
 * nested or disjoint (a slice that overlaps an earlier one partially, which
 * only clock skew in a recording can cause, starts where the earlier one
 * ends: counted as trimmed).
 *
 * With max_events, the trace holds the first max_events events (calls,
 * off-CPU intervals, process events, host snapshots) that pass the filters
 * and the chains detected before the first event left out; the rest is
 * still read, not written, so that what was left out is counted exactly.
 * A cut trace says so: a process instant "export cut" (cat "export") on
 * the first node's track at the time of the first event left out, and
 * otherData.cut {max_events, left_out, at_unix_ns}. */
#ifndef IG_PERFETTO_H
#define IG_PERFETTO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ig_source;

struct perfetto_opts {
	uint64_t since_ns, until_ns; /* keep what overlaps [since, until]; 0 = open */
	const uint32_t *pids;	     /* keep these processes (real pids, any node) */
	int npids;		     /* 0 = all */
	uint64_t max_events;	     /* events written at most (see above); 0 = all */
};

/* What was written, also in otherData.counts. */
struct perfetto_stats {
	uint64_t read;		/* events delivered by the source */
	uint64_t calls;		/* CUDA call slices */
	uint64_t offcpu;	/* off-CPU slices */
	uint64_t flows;		/* wake-up arrows (s + f pairs) */
	uint64_t flows_skipped; /* wake-ups without room for an arrow (too short or crowded) */
	uint64_t chains;	/* chain instants */
	uint64_t chains_ingero; /* of them, Ingero's (the recording's writer's, not ingero-top's) */
	uint64_t instants;	/* fork, exec and exit instants */
	uint64_t counters;	/* host snapshot counters */
	uint64_t trimmed;	/* slices started later to stay nested or disjoint */
	uint64_t clipped;	/* slices that began before the time base */
	uint64_t filtered;	/* events outside the time range or the pids */
	uint64_t other;		/* events of kinds not exported (pages, block I/O, names) */
	uint64_t summarised;	/* calls the files summarised (--record-rate): not in the trace */
	uint64_t processes, threads;
	uint64_t left_out; /* events and chains past max_events: not in the trace */
	uint64_t cut_ns;   /* Unix ns of the first event left out; 0 = not cut */
};

/* Writes the whole trace of src (a replay source, store/replay.h) to out.
 * Returns 0, or -errno with one line in err (-EIO: writing or reading
 * failed; -E2BIG: more nodes than the pid namespaces allow, 128). */
int perfetto_export(FILE *out, struct ig_source *src, const struct perfetto_opts *o,
		    struct perfetto_stats *st, char *err, size_t errlen);

#endif
