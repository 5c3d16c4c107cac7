/* The stream (`--stream`, docs/json.md "Stream"): what ingero-top writes
 * on each host of a fleet (docs/fleet.md) for the client to read. Versioned
 * JSON lines: a hello at once, a frame per refresh (the busiest processes
 * with the processes pane's GPU% CPU% PRE% WAIT%, the top chains, the GPUs,
 * the NCCL ranks with the collectives enqueued since the previous frame),
 * a pong to each ping read on stdin, an end or an error. Built with jansson
 * from the model, the detector and the status; the objects other outputs
 * have (report.h) are reused member for member. The caller owns every
 * json_t returned (NULL when out of memory). */
#ifndef IG_REPORT_STREAM_H
#define IG_REPORT_STREAM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/json.h"

#define STREAM_VERSION 1    /* the "stream" member of every object */
#define STREAM_PROCS 8	    /* processes in a frame, busiest first */
#define STREAM_CHAINS 3	    /* active chains in a frame, in display order */
#define STREAM_ARRIVALS 256 /* arrivals per rank and frame, at most */

struct ig_model;
struct ig_detect;
struct ig_status;

/* What a hello says. */
struct stream_hello {
	const char *version;  /* IG_VERSION */
	const char *host;     /* the host's name (uname's nodename) */
	uint32_t pid;	      /* ingero-top's own */
	uint64_t realtime_ns; /* CLOCK_REALTIME */
	double interval_s;    /* -d */
	double window_s;      /* --window */
	const char *target; /* "all CUDA processes", "pid 1,2", "command X", "demo X", "replay F" */
};
json_t *stream_hello_json(const struct stream_hello *h);

/* The writer's memory from one frame to the next: the frame count, and per
 * NCCL rank the sequence number of the last arrival written. */
struct stream_writer;
struct stream_writer *stream_writer_new(void);
void stream_writer_free(struct stream_writer *w); /* NULL: no-op */

/* The next frame (seq 1, 2, ...). done: nothing more will come (the
 * command ended, every traced process exited, the replay ended);
 * realtime_ns: the wall clock now. */
json_t *stream_frame_json(struct stream_writer *w, const struct ig_model *m,
			  const struct ig_detect *d, const struct ig_status *st, bool done,
			  uint64_t realtime_ns);

/* The answer to one line read on stdin: a pong for a ping
 * ({"type":"ping","id":N}: the same id), NULL for anything else (other
 * types, lines that are not JSON: ignored, as later versions may send
 * requests). */
json_t *stream_answer(const char *line, uint64_t realtime_ns);

/* {"type":"end",...,"reason":reason,"exit":code} */
json_t *stream_end_json(const char *reason, int code);
/* {"type":"error",...,"message":msg}: the one-line error of a failure
 * before tracing (msg without the "ingero-top: " prefix). */
json_t *stream_error_json(const char *msg);

/* Writes o as one line and flushes; takes o (NULL: out of memory, -ENOMEM).
 * Returns 0, -EPIPE when the reader went away, -EIO. */
int stream_put(FILE *f, json_t *o);

/* The wall clock (CLOCK_REALTIME), Unix ns. */
uint64_t stream_realtime_ns(void);

#endif
