/* Text form of an event for --events. */
#include "report/evfmt.h"

#include "core/escape.h"
#include "core/ops.h"
#include "core/waits.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

static const char *const kinds[IG_EV_KIND_MAX] = {
    [IG_EV_NONE] = "none",	  [IG_EV_CALL] = "call",	[IG_EV_OFFCPU] = "offcpu",
    [IG_EV_FORK] = "fork",	  [IG_EV_EXEC] = "exec",	[IG_EV_EXIT] = "exit",
    [IG_EV_PAGE_ALLOC] = "pages", [IG_EV_BLOCK_IO] = "blockio", [IG_EV_SNAPSHOT] = "snapshot",
    [IG_EV_COMM] = "comm",	  [IG_EV_GPU] = "gpu",		[IG_EV_GPU_PROC] = "gpuproc",
    [IG_EV_KTIME] = "ktime",	  [IG_EV_CGROUP] = "cgroup",	[IG_EV_ENV] = "env",
    [IG_EV_SAMPLE] = "sample",
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

/* " type=float32 redop=sum peer=1 comm=1a2b3c rank=0/2" of an NCCL call
 * (core/ops.h); "" for other calls. */
static const char *nccl_fields(char *b, size_t n, const struct ig_event *e)
{
	const struct ig_op_info *oi = ig_op_info(e->op);
	b[0] = 0;
	if (!oi || oi->group != IG_GRP_NCCL)
		return b;
	size_t k = 0;
	if (oi->kind & IG_OPK_COLL) {
		unsigned op = IG_NCCL_REDOP(e->arg1);
		uint32_t peer = IG_NCCL_PEER(e->arg1);
		k += (size_t)snprintf(b, n, " type=%s", ig_nccl_type_name(IG_NCCL_TYPE(e->arg1)));
		if (op != IG_NCCL_NONE8 && k < n)
			k += (size_t)snprintf(b + k, n - k, " redop=%s", ig_nccl_redop_name(op));
		if (peer != IG_NCCL_NONE32 && k < n)
			k += (size_t)snprintf(b + k, n - k, " peer=%u", peer);
	}
	if (k < n && IG_NCCL_COMM_NRANKS(e->arg2))
		snprintf(b + k, n - k, " nccl_comm=%06x rank=%u/%u", IG_NCCL_COMM_KEY(e->arg2),
			 IG_NCCL_COMM_RANK(e->arg2), IG_NCCL_COMM_NRANKS(e->arg2));
	else if (k < n)
		snprintf(b + k, n - k, " nccl_comm=-");
	return b;
}

/* The values of a device sample, "-" for those it lacks. */
static void gpu_line(char *p, size_t left, const struct ig_event *e, char *c)
{
	struct ig_gpu_dev d;
	char v[8][24];
	ig_gpu_dev_unpack(e, &d);
#define V(i, bit, fmt, ...)                                                                        \
	((d.valid & (bit)) ? (snprintf(v[i], sizeof(v[i]), fmt, __VA_ARGS__), v[i]) : "-")
	snprintf(
	    p, left,
	    " dev=%u util_gpu=%s util_mem=%s mem_used=%s mem_total=%s power_mw=%s "
	    "limit_mw=%s temp_c=%s sm_mhz=%s err=%d name=%s",
	    d.index, V(0, IG_GPU_V_UTIL, "%u", d.util_gpu_pct),
	    V(1, IG_GPU_V_UTIL, "%u", d.util_mem_pct), V(2, IG_GPU_V_MEM, "%" PRIu64, d.mem_used),
	    V(3, IG_GPU_V_MEM, "%" PRIu64, d.mem_total), V(4, IG_GPU_V_POWER, "%u", d.power_mw),
	    V(5, IG_GPU_V_LIMIT, "%u", d.power_limit_mw), V(6, IG_GPU_V_TEMP, "%u", d.temp_c),
	    V(7, IG_GPU_V_CLOCK, "%u", d.sm_mhz), d.err, name(c, d.name));
#undef V
}

/* A name as one field's value: "-" when empty, '_' for its spaces. */
static const char *token(char b[32], const char *s)
{
	snprintf(b, 32, "%s", s[0] ? s : "-");
	for (char *c = b; *c; c++)
		if (*c == ' ')
			*c = '_';
	return b;
}

/* " sys=read fd=pipe fault=- wchan=pipe_read waker_tid=12 obj=0x..." of an
 * off-CPU interval with the kernel's evidence (core/waits.h); "" without. */
static void wait_fields(char *p, size_t left, const struct ig_event *e)
{
	if (e->flags & IG_F_THROTTLED)
		snprintf(p, left, " throttled=1");
	if (!(e->flags & IG_F_DETAIL))
		return;
	int sys = IG_WAIT_SYS(e->arg1), fdk = IG_WAIT_FDK(e->arg1), flt = IG_WAIT_FLT(e->arg1);
	int wfn = IG_WAIT_WFN(e->arg1);
	char v[4][32];
	snprintf(p, left, " sys=%s fd=%s fault=%s wchan=%s waker_tid=%u obj=0x%" PRIx64 "%s%s%s%s",
		 token(v[0], ig_sys_name(sys)), token(v[1], ig_fdk_name(fdk)),
		 token(v[2], ig_flt_name(flt)), token(v[3], ig_wfn_name(wfn)),
		 IG_WAIT_WAKER(e->arg1), e->arg2, e->flags & IG_F_DSTATE ? " dstate=1" : "",
		 e->flags & IG_F_TIMER ? " timer=1" : "",
		 e->flags & IG_F_RECLAIM ? " reclaim=1" : "", e->flags & IG_F_GIL ? " gil=1" : "");
}

char *evfmt_line(char *buf, size_t len, const struct ig_event *e)
{
	char c[NAME_LEN], o[NAME_LEN], ct[IG_DETAIL_LEN * 4];
	int n = snprintf(buf, len, "%" PRIu64 " %s pid=%u tid=%u", e->ts_ns, evfmt_kind(e->kind),
			 e->pid, e->tid);
	if (n < 0 || (size_t)n >= len)
		return buf;
	char *p = buf + n;
	size_t left = len - (size_t)n;

	switch (e->kind) {
	case IG_EV_CALL: {
		char nc[96];
		snprintf(p, left,
			 " op=%s dur_ns=%" PRIu64 " ret=%d arg0=%" PRIu64 " arg1=%" PRIu64
			 " stream=0x%" PRIx64 " preempt_ns=%" PRIu64 " blocked_ns=%" PRIu64
			 " switches=%u other=%u:%s cpu=%u cgroup=%" PRIu64 " comm=%s%s",
			 ig_op_name(e->op), e->dur_ns, e->ret, e->arg0, e->arg1, e->stream,
			 e->preempt_ns, e->blocked_ns, e->switches, e->other_pid,
			 name(o, e->other_comm), e->cpu, e->cgroup_id, name(c, e->comm),
			 nccl_fields(nc, sizeof(nc), e));
		break;
	}
	case IG_EV_GPU:
		gpu_line(p, left, e, c);
		break;
	case IG_EV_GPU_PROC:
		if (e->flags & IG_GPU_V_MEM)
			snprintf(p, left, " dev=%u mem_used=%" PRIu64, e->cpu, e->arg0);
		else
			snprintf(p, left, " dev=%u mem_used=-", e->cpu);
		break;
	case IG_EV_OFFCPU: {
		int k = snprintf(p, left,
				 " dur_ns=%" PRIu64 " state=%s preempt_ns=%" PRIu64
				 " blocked_ns=%" PRIu64 " other=%u:%s cpu=%u in_call=%d comm=%s",
				 e->dur_ns, state_name(e->state), e->preempt_ns, e->blocked_ns,
				 e->other_pid, name(o, e->other_comm), e->cpu,
				 !!(e->flags & IG_F_IN_CALL), name(c, e->comm));
		if (k > 0 && (size_t)k < left)
			wait_fields(p + k, left - (size_t)k, e);
		break;
	}
	case IG_EV_KTIME: {
		struct ig_ktime kt;
		ig_ktime_unpack(e, &kt);
		int k = snprintf(p, left, " comm=%s", name(c, e->comm));
		for (int i = 0; i < IG_K_N && k > 0 && (size_t)k < left; i++)
			k += snprintf(p + k, left - (size_t)k, " %s_ns=%" PRIu64, ig_kcat_name(i),
				      kt.ns[i]);
		if (k > 0 && (size_t)k < left)
			snprintf(p + k, left - (size_t)k, " majors=%u n=%u", kt.majors, kt.n);
		break;
	}
	case IG_EV_CGROUP:
		snprintf(p, left,
			 " quota_us=%" PRIu64 " period_us=%" PRIu64 " throttled_ns=%" PRIu64
			 " nr_throttled=%u nr_periods=%u v2=%u dir=%s",
			 e->arg0, e->arg1, e->arg2, (unsigned)(e->stream >> 32),
			 (unsigned)e->stream, e->flags & 1, container(ct, sizeof(ct), e));
		break;
	case IG_EV_SAMPLE:
		snprintf(p, left, " stack=%016" PRIx64 " period_ns=%" PRIu64, e->stack_id,
			 e->dur_ns);
		break;
	case IG_EV_ENV:
		snprintf(p, left,
			 " launch_blocking=%u no_alloc_cache=%u live=%u initial=%" PRIu64
			 " cpus=%u online=%u cpuset=%u",
			 !!(e->arg0 & IG_ENV_LAUNCH_BLOCKING), !!(e->arg0 & IG_ENV_NO_ALLOC_CACHE),
			 e->arg1 == IG_ENV_SRC_LIVE, e->arg2, IG_CPUS_ALLOWED(e->stream),
			 IG_CPUS_ONLINE(e->stream), IG_CPUS_CPUSET(e->stream));
		break;
	case IG_EV_FORK:
		snprintf(p, left, " child=%" PRIu64 " comm=%s", e->arg0, name(c, e->comm));
		break;
	case IG_EV_BLOCK_IO:
		snprintf(p, left, " op=%s bytes=%" PRIu64 " dur_ns=%" PRIu64,
			 e->op == IG_IO_READ	? "read"
			 : e->op == IG_IO_WRITE ? "write"
						: "other",
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
		snprintf(p, left,
			 " cpu_pct=%.1f mem_pct=%.1f avail_mb=%" PRIu64 " swap_mb=%" PRIu64
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
	const struct ig_op_info *oi = ig_op_info(e->op);
	if (!oi || oi->group != IG_GRP_NCCL)
		return;
	if (oi->kind & IG_OPK_COLL) {
		unsigned op = IG_NCCL_REDOP(e->arg1);
		uint32_t peer = IG_NCCL_PEER(e->arg1);
		jint(o, "bytes", e->arg0);
		jstr(o, "type", ig_nccl_type_name(IG_NCCL_TYPE(e->arg1)));
		if (op != IG_NCCL_NONE8)
			jstr(o, "redop", ig_nccl_redop_name(op));
		if (peer != IG_NCCL_NONE32)
			jint(o, "peer", peer);
	}
	if (IG_NCCL_COMM_NRANKS(e->arg2)) {
		char key[16];
		snprintf(key, sizeof(key), "%06x", IG_NCCL_COMM_KEY(e->arg2));
		jstr(o, "nccl_comm", key);
		jint(o, "rank", IG_NCCL_COMM_RANK(e->arg2));
		jint(o, "nranks", IG_NCCL_COMM_NRANKS(e->arg2));
	}
}

static void json_gpu(json_t *o, const struct ig_event *e)
{
	struct ig_gpu_dev d;
	ig_gpu_dev_unpack(e, &d);
	jint(o, "dev", d.index);
	jname(o, "name", d.name);
	if (d.valid & IG_GPU_V_UTIL) {
		jint(o, "util_gpu_pct", d.util_gpu_pct);
		jint(o, "util_mem_pct", d.util_mem_pct);
	}
	if (d.valid & IG_GPU_V_MEM) {
		jint(o, "mem_used", d.mem_used);
		jint(o, "mem_total", d.mem_total);
	}
	if (d.valid & IG_GPU_V_POWER)
		jint(o, "power_mw", d.power_mw);
	if (d.valid & IG_GPU_V_LIMIT)
		jint(o, "power_limit_mw", d.power_limit_mw);
	if (d.valid & IG_GPU_V_TEMP)
		jint(o, "temp_c", d.temp_c);
	if (d.valid & IG_GPU_V_CLOCK)
		jint(o, "sm_mhz", d.sm_mhz);
	json_object_set_new(o, "err", json_integer(d.err));
}

/* The wait evidence of an off-CPU interval (core/waits.h), when it has it. */
static void json_wait(json_t *o, const struct ig_event *e)
{
	if (e->flags & IG_F_THROTTLED)
		json_object_set_new(o, "throttled", json_true());
	if (!(e->flags & IG_F_DETAIL))
		return;
	jstr(o, "sys", ig_sys_name(IG_WAIT_SYS(e->arg1)));
	jstr(o, "fd", ig_fdk_name(IG_WAIT_FDK(e->arg1)));
	jstr(o, "fault", ig_flt_name(IG_WAIT_FLT(e->arg1)));
	jstr(o, "wchan", ig_wfn_name(IG_WAIT_WFN(e->arg1)));
	jint(o, "waker_tid", IG_WAIT_WAKER(e->arg1));
	jint(o, "obj", e->arg2);
	json_object_set_new(o, "dstate", json_boolean(e->flags & IG_F_DSTATE));
	json_object_set_new(o, "timer", json_boolean(e->flags & IG_F_TIMER));
	json_object_set_new(o, "reclaim", json_boolean(e->flags & IG_F_RECLAIM));
	json_object_set_new(o, "gil", json_boolean(e->flags & IG_F_GIL));
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
		json_wait(o, e);
		break;
	case IG_EV_KTIME: {
		struct ig_ktime kt;
		char key[32];
		ig_ktime_unpack(e, &kt);
		jname(o, "comm", e->comm);
		for (int i = 0; i < IG_K_N; i++) {
			snprintf(key, sizeof(key), "%s_ns", ig_kcat_name(i));
			jint(o, key, kt.ns[i]);
		}
		jint(o, "majors", kt.majors);
		jint(o, "n", kt.n);
		break;
	}
	case IG_EV_CGROUP: {
		char u[IG_DETAIL_LEN * 3];
		jint(o, "quota_us", e->arg0);
		jint(o, "period_us", e->arg1);
		jint(o, "throttled_ns", e->arg2);
		jint(o, "nr_throttled", e->stream >> 32);
		jint(o, "nr_periods", (uint32_t)e->stream);
		jint(o, "v2", e->flags & 1);
		esc_utf8_valid(u, sizeof(u), e->container ? e->container : "");
		jstr(o, "dir", u);
		break;
	}
	case IG_EV_SAMPLE: {
		char id[24];
		snprintf(id, sizeof(id), "%016" PRIx64, e->stack_id);
		jstr(o, "stack", id);
		jint(o, "period_ns", e->dur_ns);
		break;
	}
	case IG_EV_ENV:
		jint(o, "launch_blocking", !!(e->arg0 & IG_ENV_LAUNCH_BLOCKING));
		jint(o, "no_alloc_cache", !!(e->arg0 & IG_ENV_NO_ALLOC_CACHE));
		jint(o, "live", e->arg1 == IG_ENV_SRC_LIVE);
		jint(o, "initial", e->arg2);
		jint(o, "cpus", IG_CPUS_ALLOWED(e->stream));
		jint(o, "online", IG_CPUS_ONLINE(e->stream));
		jint(o, "cpuset", IG_CPUS_CPUSET(e->stream));
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
	case IG_EV_GPU:
		json_gpu(o, e);
		break;
	case IG_EV_GPU_PROC:
		jint(o, "dev", e->cpu);
		if (e->flags & IG_GPU_V_MEM)
			jint(o, "mem_used", e->arg0);
		break;
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
