/* The incident report (`ingero-top explain`, the MCP tool explain): when and
 * where (hosts, kernel, time range, processes and their command lines), the
 * causal chains ranked by impact, each with its evidence, a short timeline
 * of the events that prove it and what to do; the slowest calls with their
 * stacks and source lines; the per-op table and where the feeding threads'
 * time went. Built once as a JSON object (explain_build, documented in
 * docs/json.md) from the model, the detector, the stacks and the slowest
 * calls of the run; the text and Markdown forms are written from that
 * object, so the three forms agree by construction. Pure: the caller owns
 * the FILE* and the JSON. */
#ifndef IG_EXPLAIN_H
#define IG_EXPLAIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/json.h"

struct ig_model;
struct ig_detect;
struct ig_status;
struct stacks;
struct slowcalls;

/* Facts about one host of the data (a recording's sessions row, or the
 * live host). Strings may be "" (not known); they come from recordings:
 * untrusted. */
struct explain_host {
	const char *node, *kernel, *os, *cpu_model, *writer, *command;
	unsigned cpu_cores;
	uint64_t mem_total_mb;
	uint64_t started_ns, stopped_ns; /* 0 = not known / still running */
};

/* What the report reads. Everything but m and d may be NULL / 0. */
struct explain_in {
	const struct ig_model *m;	/* statistics over the range (lifetime = the range) */
	const struct ig_detect *d;	/* the chains of the range */
	struct stacks *st;		/* frames of the slowest calls */
	const struct slowcalls *slow;	/* the slowest calls of the range */
	const struct ig_status *status; /* mode, drops */
	const struct explain_host *hosts;
	int nhosts;
	const char *const *files; /* the recordings read ("" live) */
	int nfiles;
	uint64_t first_ns, last_ns;  /* first and last event time of the range's data */
	uint64_t since_ns, until_ns; /* the range asked for, 0 = open */
	/* The command line of pid ("" when not known, NULL: none), e.g. read
	 * from /proc while the process ran. Untrusted. */
	const char *(*cmdline)(void *ctx, uint32_t pid);
	void *cmdline_ctx;
};

struct explain_opts {
	uint32_t pid;	   /* only this process (its chains, calls, ops), 0 = all */
	const char *chain; /* only this chain ("chain-0003" or "3"), NULL = all */
	int max_chains;	   /* chains listed, 0 = every one */
	int max_slow;	   /* slowest calls listed, 0 = 5, -1 = none */
	int frames;	   /* stack frames per slow call, 0 = 8 */
};

/* The report as one JSON object (docs/json.md, "explain"). NULL with a
 * one-line reason in err when o names a chain or a process the data does
 * not hold (the reason lists what it holds) or when out of memory. */
json_t *explain_build(const struct explain_in *in, const struct explain_opts *o, char *err,
		      size_t errlen);

/* The report for a terminal, wrapped to width columns (< 40: 40), or as
 * Markdown for a ticket. Untrusted text goes through the one escaping rule
 * (core/escape.h); in Markdown its special characters are escaped too, so
 * a name cannot open a link, a table cell or HTML. 0, or -EIO. */
int explain_text(FILE *f, const json_t *report, int width);
int explain_md(FILE *f, const json_t *report);

/* "; N rows of the recording refused (...)" for n > 0, else "": the words
 * every handover output uses for replay_stats.refused. */
void explain_refused_words(char *buf, size_t len, uint64_t n);

/* One slow call as the report lists it ({op, ts_ns, time, dur_ns, pid, tid,
 * comm, thread_comm, preempt_ns, blocked_ns (null without the split),
 * switches, other_pid, other_comm, stack_id, stack_state, frames}), with
 * at most frames stack frames. The caller owns it; NULL when out of memory. */
struct ig_event;
json_t *explain_slow_call_json(const struct explain_in *in, const struct ig_event *e, int frames);

/* The share of the feeding threads' wall time that a chain class explains
 * over a whole range, from their time parts: the part(s) the class's
 * impact is made of (docs/detection.md), or -1 for the classes whose
 * impact is not a part (tail and INFO classes but GPU-bound). */
struct ig_time_parts;
double explain_class_share(int cls, const struct ig_time_parts *t);

#endif
