// SPDX-License-Identifier: GPL-2.0
/* The least a call tracer can do per call, in steps, for
 * tests/bench/bench_collect.sh: what the trap and the minimum of timing work
 * cost on this machine, next to bpftrace and ingero-top (bpf/ingero.bpf.c).
 *   count: an entry and a return program that each bump a per-CPU counter
 *          (bpftrace's counting pair, with an array instead of a hash);
 *   clock: entry reads the clock into a thread's slot in an LRU hash keyed
 *          by thread id, return reads it again and sums the duration;
 *   floor: clock, and the return writes a 48-byte record to a ring buffer.
 * No arguments, no nesting, no off-CPU attribution, no process filter. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

enum { N_ENTER, N_RETURN, N_RECORD, N_SUM_NS, N_MAX };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, N_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} entry_ts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} records SEC(".maps");

struct record {
	__u64 ts_ns;
	__u64 dur_ns;
	__u64 ret;
	__u32 pid;
	__u32 tid;
	__u64 cookie;
	__u64 cpu;
};

/* --pid: only that process's calls count (0: every process's). A constant
 * at load time, so with 0 the verifier drops the test and the floor is
 * what it was. */
const volatile __u32 only_tgid = 0;

static __always_inline bool other_process(void)
{
	return only_tgid && (__u32)(bpf_get_current_pid_tgid() >> 32) != only_tgid;
}

static __always_inline void add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&counts, &idx);
	if (v)
		*v += n;
}

SEC("uprobe")
int count_enter(struct pt_regs *ctx)
{
	if (other_process())
		return 0;
	add(N_ENTER, 1);
	return 0;
}

SEC("uretprobe")
int count_return(struct pt_regs *ctx)
{
	if (other_process())
		return 0;
	add(N_RETURN, 1);
	return 0;
}

SEC("uprobe")
int clock_enter(struct pt_regs *ctx)
{
	if (other_process())
		return 0;
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *ts = bpf_map_lookup_elem(&entry_ts, &tid);
	__u64 now = bpf_ktime_get_ns();

	if (ts)
		*ts = now;
	else
		bpf_map_update_elem(&entry_ts, &tid, &now, BPF_NOEXIST);
	return 0;
}

/* The duration of the call, or 0 when its entry was not seen. */
static __always_inline __u64 call_duration(__u64 now, __u32 tid)
{
	__u64 *ts = bpf_map_lookup_elem(&entry_ts, &tid);
	return ts ? now - *ts : 0;
}

SEC("uretprobe")
int clock_return(struct pt_regs *ctx)
{
	if (other_process())
		return 0;
	__u64 now = bpf_ktime_get_ns();
	__u64 dur = call_duration(now, (__u32)bpf_get_current_pid_tgid());

	add(N_SUM_NS, dur);
	return 0;
}

SEC("uretprobe")
int floor_return(struct pt_regs *ctx)
{
	if (other_process())
		return 0;
	__u64 now = bpf_ktime_get_ns();
	__u64 id = bpf_get_current_pid_tgid();
	__u64 dur = call_duration(now, (__u32)id);
	struct record *r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);

	if (!r)
		return 0;
	r->ts_ns = now - dur;
	r->dur_ns = dur;
	r->ret = PT_REGS_RC(ctx);
	r->pid = id >> 32;
	r->tid = (__u32)id;
	r->cookie = bpf_get_attach_cookie(ctx);
	r->cpu = bpf_get_smp_processor_id();
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}
