/* One event as one line of text (--events): key=value fields, greppable;
 * or as one JSON object (--json --events). Names are escaped
 * (core/escape.h): a line never holds a control byte or a second event. */
#ifndef IG_EVFMT_H
#define IG_EVFMT_H

#include <stddef.h>
#include <stdio.h>

#include "core/event.h"
#include "core/json.h"

/* Name of an event kind: "call", "offcpu", "fork", ... */
const char *evfmt_kind(int kind);
/* Writes e as one line (no newline) into buf; returns buf. Format:
 *   <ts_ns> <kind> pid=P tid=T op=NAME dur_ns=D ret=R arg0=A arg1=B stream=S
 *   preempt_ns=X blocked_ns=Y switches=N state=preempted|blocked|unknown
 *   other=PID:COMM cpu=C flags=F comm=COMM
 * (fields that do not apply to the kind are left out). */
char *evfmt_line(char *buf, size_t len, const struct ig_event *e);
/* Writes e to f as one JSON object and a newline (--json --events), with the
 * same fields as evfmt_line as JSON members (docs/json.md). Names are strings
 * of valid UTF-8. Returns 0, -ENOMEM or -EIO. */
int evfmt_json(FILE *f, const struct ig_event *e);
/* The same object, for other JSON outputs (the MCP tool get_timeline); the
 * caller owns it. NULL when out of memory. */
json_t *evfmt_json_obj(const struct ig_event *e);

#endif
