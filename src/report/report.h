/* Batch-mode frames (`--batch`, `--json`, `--summary`): plain text like
 * `top -b`, or one JSON object per line, written from the model and the
 * session status. Pure: the caller owns the FILE*. Also the number formatting
 * the other writers use. JSON goes through jansson (core/json.h). */
#ifndef IG_REPORT_H
#define IG_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/json.h"

struct ig_model;
struct ig_detect;
struct ig_status;

struct stacks;

struct report_opts {
	int summary;	/* lifetime statistics instead of the rolling window */
	int max_ops;	/* rows in the op table, 0 = all */
	int max_procs;	/* rows in the process table, 0 = all */
	int max_chains; /* chains listed, 0 = all active */
	int details;	/* text: explanation, evidence and recommendations under each chain */
	int resolved;	/* also list resolved (inactive) chains */
	struct stacks *stacks; /* the chains' call sites' frames (NULL: their ids only) */
};

/* One text frame. Format (stable; tests grep it; fields are separated by
 * runs of spaces, comm has its blanks replaced by '_'):
 *
 *   ingero-top <live|replay> <YYYY-MM-DDTHH:MM:SSZ> window <W>s events/s <r> events <n> drops
 * kernel <k> user <u> probes attached <a> failed <f> missing <m> host cpu 35.0% mem 40.0% swap 0MiB
 * load 2.10          (when snapshots were seen) replay <start> .. <end> speed <x> [paused] (replay
 * only) recording <file> [error: <why>]                       (when recording) message <text> (when
 * set) <blank> OP  CALLS  RATE  P50  P95  P99  MAX                   (column titles)
 *   cudaLaunchKernel          400    39.8/s  p50 12.3us    p95 20.1us    p99 31.0us    max 1.20ms
 *   ...                       (ops by time spent, canonical op name in column 1)
 *   <blank>
 *   PID  COMM  CALLS/S  OFFCPU-PREEMPTED ...              (column titles)
 *   pid 4821   python3  calls/s 398.0  preempted 712ms 7.1%  blocked 80.0ms 0.8%  unknown 0ns 0.0%
 * between 40.0ms 0.4%  top stress-ng[2231] 64%
 *   ...                       ("top -" when no preemptor; % of the feeding threads' wall time)
 *   <blank>
 *   CHAINS <n active>
 *   [HIGH] chain-0001 cpu_contention <summary>
 *       why: / evidence: / missing: / do: / at <time> <text>    (with o->details)
 *
 * With o->summary the header says "summary <seconds>s" instead of
 * "window <W>s" and the tables use lifetime numbers. Durations use
 * report_fmt_ns. Returns 0, -ENOMEM or -EIO. */
int report_text(FILE *f, const struct ig_model *m, const struct ig_detect *d,
		const struct ig_status *st, const struct report_opts *o);

/* The same frame as one JSON object on one line, terminated by '\n':
 * {"type":"frame"|"summary","time_ns":..,"mode":"live"|"replay","status":{..},
 *  "ops":[{"op":..,"calls":..,"calls_win":..,"rate":..,"p50_ns":..,...}],
 *  "procs":[{"pid":..,"comm":..,...}],"host":{..},"chains":[{"id":"chain-0001",...}]}
 * Built with jansson and written as one compact line (core/json.h: strings
 * from untrusted bytes, DEL/C1/U+2028 escaped, reals with 6 significant
 * digits). Returns 0, -ENOMEM or -EIO. */
int report_json(FILE *f, const struct ig_model *m, const struct ig_detect *d,
		const struct ig_status *st, const struct report_opts *o);

/* The objects of the JSON frame, for other JSON outputs that must agree
 * with it (explain, the MCP server): a chain; the ops array (summary:
 * lifetime numbers) of every process (pid 0) or of one process's (op,
 * process) series; a process (summary: lifetime numbers). The caller owns
 * the result; NULL when out of memory. */
struct ig_chain;
struct ig_proc_stats;
json_t *report_json_chain(const struct ig_chain *c, struct stacks *stk);
json_t *report_json_ops(const struct ig_model *m, const struct ig_detect *d, int summary,
			uint32_t pid);
json_t *report_json_proc(const struct ig_model *m, const struct ig_proc_stats *p, int summary);

/* The value of a chain's evidence spelt by its unit ("4.49ms", "12.0MiB",
 * "42%", "8.9x", "650/s", a plain number). Returns buf. */
struct ig_evidence;
char *report_fmt_evidence(char *buf, size_t n, const struct ig_evidence *e);

/* Formats a duration: "850ns", "12.3us", "4.56ms", "1.23s", "2m03s". Returns buf. */
char *report_fmt_ns(char *buf, size_t n, uint64_t ns);
/* Formats a byte count: "512B", "1.5KiB", "12.0MiB", "3.2GiB". Returns buf. */
char *report_fmt_bytes(char *buf, size_t n, uint64_t bytes);

#endif
