/* Text form of an event for --events. */
#include "report/evfmt.h"

#include "core/ops.h"

#include <inttypes.h>
#include <stdio.h>

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

char *evfmt_line(char *buf, size_t len, const struct ig_event *e)
{
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
			 e->other_comm[0] ? e->other_comm : "-", e->cpu, e->cgroup_id,
			 e->comm[0] ? e->comm : "-");
		break;
	case IG_EV_OFFCPU:
		snprintf(p, left,
			 " dur_ns=%" PRIu64 " state=%s preempt_ns=%" PRIu64 " blocked_ns=%" PRIu64
			 " other=%u:%s cpu=%u in_call=%d comm=%s",
			 e->dur_ns, state_name(e->state), e->preempt_ns, e->blocked_ns, e->other_pid,
			 e->other_comm[0] ? e->other_comm : "-", e->cpu, !!(e->flags & IG_F_IN_CALL),
			 e->comm[0] ? e->comm : "-");
		break;
	case IG_EV_FORK:
		snprintf(p, left, " child=%" PRIu64 " comm=%s", e->arg0, e->comm[0] ? e->comm : "-");
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
		snprintf(p, left, " comm=%s ppid=%" PRIu64, e->comm[0] ? e->comm : "-", e->arg0);
		break;
	case IG_EV_SNAPSHOT:
		snprintf(p, left, " cpu_pct=%.1f mem_pct=%.1f avail_mb=%" PRIu64 " swap_mb=%" PRIu64
				  " load=%.2f",
			 (double)e->arg0 / 10.0, (double)e->arg1 / 10.0, e->stream, e->preempt_ns,
			 (double)e->blocked_ns / 100.0);
		break;
	default:
		snprintf(p, left, " comm=%s", e->comm[0] ? e->comm : "-");
		break;
	}
	return buf;
}
