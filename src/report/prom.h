/* Prometheus metrics: the model, the detector and the session status in
 * the text exposition format (version 0.0.4), for `--prometheus`. Pure: the
 * caller hands plain data and a FILE*; the endpoint that serves the text
 * (serve/promsrv.h) renders it on the main loop's thread and never lets
 * its own thread near the model. The metrics, their labels and units:
 * docs/prometheus.md. */
#ifndef IG_PROM_H
#define IG_PROM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/hist.h"

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define PROM_PROCS_DEFAULT 10 /* processes with a label of their own */
#define PROM_PROCS_MAX 256    /* the model's process table cap */

/* Why the endpoint refused or dropped a connection. */
enum prom_refusal {
	PROM_REF_BUSY = 0,	/* too many connections open */
	PROM_REF_READ_TIMEOUT,	/* the request did not arrive in time */
	PROM_REF_WRITE_TIMEOUT, /* the client did not take the response in time */
	PROM_REF_TOO_LARGE,	/* request line and headers over the limit */
	PROM_REF_BAD_REQUEST,	/* not an HTTP request */
	PROM_REF_MAX,
};
/* "busy", "read_timeout", ... (the reason label); "?" when out of range. */
const char *prom_refusal_name(int r);

/* The endpoint's own counters, rendered when given. */
struct prom_server_stats {
	uint64_t scrapes;		/* responses with the metrics, complete */
	uint64_t requests;		/* requests answered (any status) */
	uint64_t refused[PROM_REF_MAX]; /* connections refused or dropped, by reason */
	uint64_t published;		/* snapshots published */
};

struct prom_opts {
	/* Processes with their own pid label: the first max_procs by calls
	 * since the start; the rest are summed under pid="other". 0 = the
	 * default (PROM_PROCS_DEFAULT); at most PROM_PROCS_MAX. */
	int max_procs;
	const struct prom_server_stats *srv; /* NULL: no endpoint metrics */
};

struct ig_model;
struct ig_detect;
struct ig_status;

/* Writes every metric family (HELP, TYPE, samples) to f. d may be NULL (no
 * chain metrics but the all-zero gauges). Returns 0, -ENOMEM or -EIO. */
int prom_write(FILE *f, const struct ig_model *m, const struct ig_detect *d,
	       const struct ig_status *st, const struct prom_opts *o);

/* A label value as the exposition format wants it, NUL-terminated in dst:
 * backslash, double quote and newline escaped (\\, \", \n). With untrusted
 * (names from traced programs) the control bytes (< 0x20, DEL, the C1
 * controls) are dropped first and bytes that are not valid UTF-8 become
 * U+FFFD, so a hostile name can neither break the line nor make
 * Prometheus refuse the scrape. Never cuts an escape or a UTF-8 sequence;
 * returns the length written (without the NUL). */
size_t prom_label(char *dst, size_t cap, const char *s, int untrusted);

/* The upper bounds of the latency histogram buckets, ns: 1 us to 10 s in
 * 1-2.5-5 steps (and +Inf after them). */
#define PROM_NBOUNDS 22
extern const uint64_t prom_bounds_ns[PROM_NBOUNDS];
/* Cumulative counts of h at each bound: out[i] = calls whose bucket's
 * representative value (the value percentiles report, core/hist.h) is at
 * or below prom_bounds_ns[i]; out[PROM_NBOUNDS] = h->n (+Inf). */
void prom_hist_cumulative(const struct hist *h, uint64_t out[PROM_NBOUNDS + 1]);

#endif
