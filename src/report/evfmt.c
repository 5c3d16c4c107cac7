/* Text form of an event for --events. */
#include "report/evfmt.h"

#include "core/escape.h"
#include "core/ops.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

static const char *const kinds[IG_EV_KIND_MAX] = {
	[IG_EV_NONE] = "none",     [IG_EV_CALL] = "call",       [IG_EV_OFFCPU] = "offcpu",
	[IG_EV_FORK] = "fork",     [IG_EV_EXEC] = "exec",       [IG_EV_EXIT] = "exit",
	[IG_EV_PAGE_ALLOC] = "pages", [IG_EV_BLOCK_IO] = "blockio", [IG_EV_SNAPSHOT] = "snapshot",
	[IG_EV_COMM] = "comm",
};

const char *evfmt_kind(int kind)
{
	return kind >= 0 && kind < IG_EV_KIND_MAX && kinds[kind] ? kinds[kind] : "?";
}

static const char *state_name(int s)
{
	return s == IG_OFF_PREEMPTED ? "preempted" : s == IG_OFF_BLOCKED ? "blocked" : "unknown";
}

/* A name as one key=value field: escaped (core/escape.h), "-" when empty.
 * comm need not be NUL-terminated within IG_COMM_LEN. */
#define NAME_LEN (IG_COMM_LEN * 4 + 1)
static const char *name(char *b, const char *comm)
{
	char t[IG_COMM_LEN + 1];
	size_t n = strnlen(comm, IG_COMM_LEN);
	memcpy(t, comm, n);
	t[n] = 0;
	return n ? esc_str(b, NAME_LEN, t, ESC_FIELD) : "-";
}

/* A name event's container as one field: escaped, "?" when unknown. */
static const char *container(char *b, size_t n, const struct ig_event *e)
{
	return e->container && e->container[0] ? esc_str(b, n, e->container, ESC_FIELD) : "?";
}

char *evfmt_line(char *buf, size_t len, const struct ig_event *e)
{
	char c[NAME_LEN], o[NAME_LEN], ct[IG_CONTAINER_LEN * 4];
	int n = snprintf(buf, len, "%" PRIu64 " %s pid=%u tid=%u", e->ts_ns, evfmt_kind(e->kind),
			 e->pid, e->tid);
	if (n < 0 || (size_t)n >= len)
		return buf;
	char *p = buf + n;
	size_t left = len - (size_t)n;

	switch (e->kind) {
	case IG_EV_CALL:
		snprintf(p, left,
			 " op=%s dur_ns=%" PRIu64 " ret=%d arg0=%" PRIu64 " arg1=%" PRIu64
			 " stream=0x%" PRIx64 " preempt_ns=%" PRIu64 " blocked_ns=%" PRIu64
			 " switches=%u other=%u:%s cpu=%u cgroup=%" PRIu64 " comm=%s",
			 ig_op_name(e->op), e->dur_ns, e->ret, e->arg0, e->arg1, e->stream,
			 e->preempt_ns, e->blocked_ns, e->switches, e->other_pid,
			 name(o, e->other_comm), e->cpu, e->cgroup_id, name(c, e->comm));
		break;
	case IG_EV_OFFCPU:
		snprintf(p, left,
			 " dur_ns=%" PRIu64 " state=%s preempt_ns=%" PRIu64 " blocked_ns=%" PRIu64
			 " other=%u:%s cpu=%u in_call=%d comm=%s",
			 e->dur_ns, state_name(e->state), e->preempt_ns, e->blocked_ns,
			 e->other_pid, name(o, e->other_comm), e->cpu, !!(e->flags & IG_F_IN_CALL),
			 name(c, e->comm));
		break;
	case IG_EV_FORK:
		snprintf(p, left, " child=%" PRIu64 " comm=%s", e->arg0, name(c, e->comm));
		break;
	case IG_EV_BLOCK_IO:
		snprintf(p, left, " op=%s bytes=%" PRIu64 " dur_ns=%" PRIu64,
			 e->op == IG_IO_READ ? "read" : e->op == IG_IO_WRITE ? "write" : "other",
			 e->arg0, e->dur_ns);
		break;
	case IG_EV_PAGE_ALLOC:
		snprintf(p, left, " bytes=%" PRIu64, e->arg0);
		break;
	case IG_EV_COMM:
		snprintf(p, left, " comm=%s ppid=%" PRIu64 " container=%s", name(c, e->comm),
			 e->arg0, container(ct, sizeof(ct), e));
		break;
	case IG_EV_SNAPSHOT:
		snprintf(p, left, " cpu_pct=%.1f mem_pct=%.1f avail_mb=%" PRIu64 " swap_mb=%" PRIu64
				  " load=%.2f",
			 (double)e->arg0 / 10.0, (double)e->arg1 / 10.0, e->stream, e->preempt_ns,
			 (double)e->blocked_ns / 100.0);
		break;
	default:
		snprintf(p, left, " comm=%s", name(c, e->comm));
		break;
	}
	return buf;
}

/* --- JSON (--json --events) ------------------------------------------------------ */

static void jint(json_t *o, const char *k, uint64_t v)
{
	json_object_set_new(o, k, json_integer((json_int_t)v));
}

/* A name as a JSON string: its bytes as valid UTF-8 (an invalid byte becomes
 * U+FFFD); jansson escapes the control characters. */
static void jname(json_t *o, const char *k, const char *comm)
{
	char t[IG_COMM_LEN + 1], u[IG_COMM_LEN * 3 + 1];
	size_t n = strnlen(comm, IG_COMM_LEN);
	memcpy(t, comm, n);
	t[n] = 0;
	esc_utf8_valid(u, sizeof(u), t);
	json_object_set_new(o, k, json_string(u));
}

static void jstr(json_t *o, const char *k, const char *v)
{
	json_object_set_new(o, k, json_string(v));
}

static void json_call(json_t *o, const struct ig_event *e)
{
	char hex[24];
	snprintf(hex, sizeof(hex), "0x%" PRIx64, e->stream);
	jstr(o, "op", ig_op_name(e->op));
	jint(o, "dur_ns", e->dur_ns);
	json_object_set_new(o, "ret", json_integer(e->ret));
	jint(o, "arg0", e->arg0);
	jint(o, "arg1", e->arg1);
	jstr(o, "stream", hex);
	jint(o, "preempt_ns", e->preempt_ns);
	jint(o, "blocked_ns", e->blocked_ns);
	jint(o, "switches", e->switches);
	jint(o, "other_pid", e->other_pid);
	jname(o, "other_comm", e->other_comm);
	jint(o, "cpu", e->cpu);
	jint(o, "cgroup_id", e->cgroup_id);
	jname(o, "comm", e->comm);
}

json_t *evfmt_json_obj(const struct ig_event *e)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	jstr(o, "type", "event");
	jint(o, "ts_ns", e->ts_ns);
	jstr(o, "kind", evfmt_kind(e->kind));
	jint(o, "pid", e->pid);
	jint(o, "tid", e->tid);
	switch (e->kind) {
	case IG_EV_CALL:
		json_call(o, e);
		break;
	case IG_EV_OFFCPU:
		jint(o, "dur_ns", e->dur_ns);
		jstr(o, "state", state_name(e->state));
		jint(o, "preempt_ns", e->preempt_ns);
		jint(o, "blocked_ns", e->blocked_ns);
		jint(o, "other_pid", e->other_pid);
		jname(o, "other_comm", e->other_comm);
		jint(o, "cpu", e->cpu);
		json_object_set_new(o, "in_call", json_boolean(e->flags & IG_F_IN_CALL));
		jname(o, "comm", e->comm);
		break;
	case IG_EV_FORK:
		jint(o, "child", e->arg0);
		jname(o, "comm", e->comm);
		break;
	case IG_EV_BLOCK_IO:
		jstr(o, "op",
		     e->op == IG_IO_READ    ? "read"
		     : e->op == IG_IO_WRITE ? "write"
					    : "other");
		jint(o, "bytes", e->arg0);
		jint(o, "dur_ns", e->dur_ns);
		break;
	case IG_EV_PAGE_ALLOC:
		jint(o, "bytes", e->arg0);
		break;
	case IG_EV_COMM: {
		char u[IG_CONTAINER_LEN * 3];
		jname(o, "comm", e->comm);
		jint(o, "ppid", e->arg0);
		esc_utf8_valid(u, sizeof(u), e->container ? e->container : "");
		jstr(o, "container", u); /* "" unknown */
		break;
	}
	case IG_EV_SNAPSHOT:
		json_object_set_new(o, "cpu_pct", json_real((double)e->arg0 / 10.0));
		json_object_set_new(o, "mem_pct", json_real((double)e->arg1 / 10.0));
		jint(o, "avail_mb", e->stream);
		jint(o, "swap_mb", e->preempt_ns);
		json_object_set_new(o, "load", json_real((double)e->blocked_ns / 100.0));
		break;
	default:
		jname(o, "comm", e->comm);
		break;
	}
	return o;
}

int evfmt_json(FILE *f, const struct ig_event *e)
{
	json_t *o = evfmt_json_obj(e);
	if (!o)
		return -ENOMEM;
	int r = json_dumpf(o, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (r || fputc('\n', f) == EOF)
		return -EIO;
	return 0;
}
