/* Live collection: BPF skeleton life cycle (open, configure, load, attach),
 * library discovery and uprobe attachment, ring-buffer decoding. */
#include "collect/collector_priv.h"

#include "collect/container.h"
#include "collect/discover.h"
#include "collect/ksyms.h"
#include "collect/kwait.h"
#include "collect/elfsym.h"
#include "core/escape.h"
#include "core/clock.h"
#include "core/event.h"
#include <linux/types.h>
#include "ingero.h"
#include "ingero.skel.h"
#include "core/log.h"
#include "core/ops.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

_Static_assert((int)IGB_CALL == (int)IG_EV_CALL && (int)IGB_OFFCPU == (int)IG_EV_OFFCPU &&
		   (int)IGB_FORK == (int)IG_EV_FORK && (int)IGB_EXEC == (int)IG_EV_EXEC &&
		   (int)IGB_EXIT == (int)IG_EV_EXIT && (int)IGB_BLOCK_IO == (int)IG_EV_BLOCK_IO &&
		   (int)IGB_COMM == (int)IG_EV_COMM,
	       "record kinds of bpf/ingero.h and src/core/event.h differ");
_Static_assert((int)IGB_ARGS_LAUNCH_CU == (int)IG_ARGS_LAUNCH_CU &&
		   (int)IGB_ARGS_COPY_RT == (int)IG_ARGS_COPY_RT &&
		   (int)IGB_ARGS_SIZE3_STREAM4 == (int)IG_ARGS_SIZE3_STREAM4 &&
		   (int)IGB_ARGS_NCCL_INIT == (int)IG_ARGS_NCCL_INIT &&
		   (int)IGB_ARGS_NCCL_INIT + 1 == (int)IG_ARGS_MAX,
	       "argument modes of bpf/ingero.h and src/core/ops.h differ");

uint64_t collector_now_ns(struct collector *c)
{
	return ig_mono_to_unix(ig_mono_ns());
}

/* waiting: the process makes no CUDA call until after this (a library it
 * maps already is not a late attach). */
static int add_pid(struct collector *c, int pid, bool waiting)
{
	uint32_t key = (uint32_t)pid;
	uint8_t one = 1;
	char exe[64];

	if (!discover_pid_alive(pid))
		return -ESRCH;
	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.targets), &key, &one, BPF_ANY))
		return -errno;
	coll_watch_loader(c, pid);
	int r = discover_pid_libs(pid, coll_attach_found, c);
	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	coll_resolve_path(c, exe); /* looked at: no hold at its next mapping */
	if (r > 0 && !waiting)	   /* it may have called them already */
		coll_late(c, pid, "a CUDA library was already mapped", false);
	return r < 0 ? r : 0;
}

int collector_add_pid(struct collector *c, int pid)
{
	return add_pid(c, pid, false);
}

/* ---- ring buffer ------------------------------------------------------- */

/* The name (the main thread's comm) and the parent of pid, from one read
 * of /proc/PID/stat: "PID (COMM) STATE PPID ...", COMM up to the last ')'.
 * 0, or -1 when the process is gone or the line does not parse. */
static int read_stat(uint32_t pid, char comm[IG_COMM_LEN], uint32_t *ppid)
{
	char path[48], buf[512];

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *open = strchr(buf, '('), *close = strrchr(buf, ')');
	if (!open || !close || close < open || sscanf(close + 1, " %*c %u", ppid) != 1)
		return -1;
	size_t len = (size_t)(close - open - 1);
	if (len > IG_COMM_LEN - 1)
		len = IG_COMM_LEN - 1;
	memset(comm, 0, IG_COMM_LEN);
	memcpy(comm, open + 1, len);
	return 0;
}

/* Remembers that pid was named: false when it was already. */
static bool mark_named(struct collector *c, uint32_t pid)
{
	uint32_t h = (pid * 2654435761u) & 4095;

	while (c->named[h]) {
		if (c->named[h] == pid)
			return false;
		h = (h + 1) & 4095;
	}
	if (c->nnamed >= 3072) { /* keep probes short: start over */
		memset(c->named, 0, sizeof(c->named));
		c->nnamed = 0;
		h = (pid * 2654435761u) & 4095;
	}
	c->named[h] = pid;
	c->nnamed++;
	return true;
}

/* Reports e's process as /proc has it now: its name as the kernel has it
 * for the process (the main thread's comm, not the calling thread's), its
 * parent and its container. */
static void emit_name(struct collector *c, const struct ig_event *e)
{
	struct ig_event n = {0};
	uint32_t ppid = 0;
	char container[IG_CONTAINER_LEN];

	if (read_stat(e->pid, n.comm, &ppid))
		return;
	n.kind = IG_EV_COMM;
	n.ts_ns = e->ts_ns;
	n.pid = e->pid;
	n.tid = e->pid;
	n.arg0 = ppid;
	if (!container_of_pid(e->pid, container, sizeof(container)))
		n.container = container;
	c->emit(c->emit_ctx, &n);
}

/* The first time a process shows up, its name event. A process stays in
 * its container, but a runtime moves its first process into the
 * container's cgroup before the exec of the entrypoint: after an exec of a
 * target the name event comes again (on_record). */
static void name_process(struct collector *c, const struct ig_event *e)
{
	if (mark_named(c, e->pid))
		emit_name(c, e);
}

/* Looks at pid's mappings for CUDA libraries after delay_ns (once: a
 * pid already waiting keeps its time); maps_only: not its executable. */
void coll_add_pending(struct collector *c, int pid, uint64_t delay_ns, bool maps_only)
{
	for (int i = 0; i < c->npending; i++)
		if (c->pending[i].pid == pid) {
			c->pending[i].maps_only &= maps_only;
			return;
		}
	if (c->npending == MAX_PENDING)
		return; /* the periodic rescan finds it */
	c->pending[c->npending].pid = pid;
	c->pending[c->npending].due_ns = collector_now_ns(c) + delay_ns;
	c->pending[c->npending].maps_only = maps_only;
	c->npending++;
}

uint64_t collector_next_due_ns(struct collector *c)
{
	uint64_t due = UINT64_MAX;
	for (int i = 0; i < c->npending; i++)
		if (c->pending[i].due_ns < due)
			due = c->pending[i].due_ns;
	return due;
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct collector *c = ctx;
	const struct igb_event *b = data;
	struct ig_event e;

	if (len < sizeof(*b)) {
		c->user_drops++;
		return 0;
	}
	if (c->calib_pid && b->pid == c->calib_pid)
		return 0; /* the probe-cost measurement's own calls (calib.c) */
	if (b->kind == IGB_HOLD) {
		coll_hold(c, b);
		return 0;
	}
	if (b->kind == IGB_DL_CHANGE) {
		/* The loader has mapped (or unmapped) something: look now. */
		coll_add_pending(c, (int)b->pid, 0, true);
		return 0;
	}
	memset(&e, 0, sizeof(e));
	e.ts_ns = ig_mono_to_unix(b->ts_ns);
	e.dur_ns = b->dur_ns;
	e.pid = b->pid;
	e.tid = b->tid;
	e.kind = b->kind;
	e.op = b->op;
	e.ret = b->ret;
	e.flags = b->flags;
	e.cpu = b->cpu;
	e.arg0 = b->arg0;
	e.arg1 = b->arg1;
	if (len >= sizeof(struct igb_event_wide))
		e.arg2 = ((const struct igb_event_wide *)data)->arg2;
	e.stream = b->stream;
	e.cgroup_id = b->cgroup_id;
	e.preempt_ns = b->preempt_ns;
	e.blocked_ns = b->blocked_ns;
	e.switches = b->switches;
	e.state = b->state;
	e.other_pid = b->other_pid;
	memcpy(e.other_comm, b->other_comm, IG_COMM_LEN);
	memcpy(e.comm, b->comm, IG_COMM_LEN);
	e.other_comm[IG_COMM_LEN - 1] = e.comm[IG_COMM_LEN - 1] = 0;
	e.stack_id = b->stack_id;
	if (e.kind == IG_EV_OFFCPU)
		coll_wait_event(c, b, &e);
	else if (b->kind == IGB_KTIME) {
		c->ksys_sec += b->arg0 + b->arg1; /* in syscalls: the hooks' cue */
		kwait_ktime(b, &e, c->kentry_sys_ns, c->kentry_fault_ns);
	}

	if (e.kind == IG_EV_EXEC) /* the loader maps libraries after exec: look a little later */
		coll_add_pending(c, (int)e.pid, EXEC_RESCAN_NS, false);
	if (e.kind == IG_EV_EXEC && !b->arg0)
		return 0; /* exec of a non-target: only a rescan hint */
	if (e.kind == IG_EV_CALL || e.kind == IG_EV_OFFCPU)
		name_process(c, &e);
	if (e.kind == IG_EV_COMM && e.tid == e.pid) { /* a rename: its parent too */
		char comm[IG_COMM_LEN];
		uint32_t ppid = 0;
		if (!read_stat(e.pid, comm, &ppid))
			e.arg0 = ppid;
	}
	if (e.kind == IG_EV_CALL || e.kind == IG_EV_EXIT)
		coll_nccl_event(c, &e);
	c->emit(c->emit_ctx, &e);
	if (e.kind == IG_EV_EXEC) { /* the new program, maybe in a container now */
		mark_named(c, e.pid);
		emit_name(c, &e);
	}
	if (++c->delivered >= c->budget)
		return -E2BIG; /* stop here; the record itself was consumed */
	return 0;
}

static int src_fd(struct ig_source *s)
{
	struct collector *c = s->priv;
	return ring_buffer__epoll_fd(c->rb);
}

static int src_poll(struct ig_source *s, ig_emit_fn emit, void *ctx, int max)
{
	struct collector *c = s->priv;
	c->emit = emit;
	c->emit_ctx = ctx;
	c->budget = max > 0 ? max : 1;
	c->delivered = 0;
	int r = ring_buffer__consume(c->rb);
	if (r < 0 && r != -E2BIG && r != -EINTR)
		return r;
	return c->delivered;
}

static void src_free(struct ig_source *s)
{
	(void)s; /* owned by the collector */
}

static const struct ig_source_ops collector_source_ops = {
    .name = "live",
    .fd = src_fd,
    .poll = src_poll,
    .peek_ts = NULL,
    .free = src_free,
};

struct ig_source *collector_source(struct collector *c)
{
	return &c->src;
}

/* ---- periodic work ------------------------------------------------------- */

/* Looks at a target's mappings (and executable unless maps_only) outside
 * a hold. A library attached here for the first time was already loaded,
 * and maybe called, without its probes: the process is attached late,
 * unless it is held right now. */
static void scan_pid(struct collector *c, int pid, bool maps_only)
{
	int before = c->nlibs;

	if (maps_only)
		discover_pid_maps(pid, coll_attach_found, c);
	else
		discover_pid_libs(pid, coll_attach_found, c);
	/* A process held right now has not run since: its hold record, still
	 * in the ring buffer, is handled next. */
	if (c->nlibs > before && !coll_holding(c, pid))
		coll_late(c, pid, "its library was found after it was loaded", false);
}

static void rescan_targets(struct collector *c)
{
	int fd = bpf_map__fd(c->skel->maps.targets);
	uint32_t key, next, *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!discover_pid_alive((int)key)) {
			bpf_map_delete_elem(fd, &key);
			prev = NULL; /* restart: the iteration order changed */
			continue;
		}
		scan_pid(c, (int)key, false);
	}
}

/* Default mode: processes that map a CUDA library and are not targets
 * yet (at start, those already running; later, any the kernel's mmap hook
 * did not see). */
static void scan_all(struct collector *c)
{
	static int pids[4096];
	int fd = bpf_map__fd(c->skel->maps.targets);
	int n = discover_cuda_pids(pids, 4096);
	uint8_t v;

	for (int i = 0; i < n; i++) {
		uint32_t key = (uint32_t)pids[i];
		if (bpf_map_lookup_elem(fd, &key, &v))
			collector_add_pid(c, pids[i]);
	}
}

void collector_tick(struct collector *c, uint64_t now_ns, ig_emit_fn emit, void *ctx)
{
	uint64_t wall = collector_now_ns(c); /* now_ns may lag behind (event time) */
	for (int i = 0; i < c->npending;) {
		if (c->pending[i].due_ns > wall) {
			i++;
			continue;
		}
		int pid = c->pending[i].pid;
		bool maps_only = c->pending[i].maps_only;
		c->pending[i] = c->pending[--c->npending];
		if (!maps_only)
			coll_watch_loader(c, pid); /* after an exec: maybe another loader */
		scan_pid(c, pid, maps_only);
	}
	if (now_ns - c->last_pages_ns >= 1000000000ULL) {
		coll_poll_pages(c, now_ns, emit, ctx);
		c->last_pages_ns = now_ns;
	}
	if (now_ns - c->last_cg_ns >= 1000000000ULL) { /* their CPU quotas, environments */
		uint32_t pids[CGCPU_PROCS];
		int n = coll_target_pids(c, pids, CGCPU_PROCS);
		cgcpu_tick(&c->cg, pids, n, now_ns, emit, ctx);
		procenv_tick(&c->env, pids, n, now_ns, emit, ctx);
		c->last_cg_ns = now_ns;
		if (c->waits)
			coll_sys_hooks_tick(c);
	}
	if (now_ns - c->last_rescan_ns >= RESCAN_TARGETS_NS) {
		rescan_targets(c);
		c->last_rescan_ns = now_ns;
	}
	if (c->target == COLL_ALL_CUDA && now_ns - c->last_scan_all_ns >= RESCAN_ALL_NS) {
		scan_all(c);
		c->last_scan_all_ns = now_ns;
	}
}

void collector_count_user_drop(struct collector *c, uint64_t n)
{
	c->user_drops += n;
}

static uint64_t counter_sum(struct collector *c, uint32_t idx)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t vals[512], sum = 0;

	if (ncpu <= 0 || ncpu > 512)
		return 0;
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.counters), &idx, vals))
		return 0;
	for (int i = 0; i < ncpu; i++)
		sum += vals[i];
	return sum;
}

void collector_status(struct collector *c, struct ig_status *st)
{
	st->drops_kernel = counter_sum(c, IGB_CNT_RB_DROPS);
	st->drops_user = c->user_drops;
	st->probes_attached = c->nprobes + c->tracepoints_ok;
	st->probes_failed = c->probes_failed + c->tracepoints_failed;
	st->probe_ns = c->probe_ns;
	st->probes_missing = c->probes_missing;
	st->libs = c->nlibs;
	st->stacks_on = c->stacks;
	uint64_t now_ms = ig_mono_ms();
	if (!c->targets_counted_ms || now_ms - c->targets_counted_ms >= 250) {
		c->ntargets = coll_target_pids(c, NULL, 0);
		c->targets_counted_ms = now_ms;
	}
	st->targets = c->ntargets;
	st->late_pids = c->nlate;
	st->late_pid = c->nlate ? c->late[(c->nlate < MAX_LATE ? c->nlate : MAX_LATE) - 1] : 0;
	st->calls_partial = counter_sum(c, IGB_CNT_UNMATCHED_RET);
	st->calls_too_deep = counter_sum(c, IGB_CNT_DEPTH_OVERFLOW);
	st->holds = counter_sum(c, IGB_CNT_HOLDS);
	/* every notice since the last look (the last IG_STATUS_NOTES of them) */
	if (c->notice_gen - c->notice_said > IG_STATUS_NOTES)
		c->notice_said = c->notice_gen - IG_STATUS_NOTES;
	for (; c->notice_said != c->notice_gen; c->notice_said++)
		ig_status_say(st, "%s", c->notice[c->notice_said % IG_STATUS_NOTES]);
}

void collector_summary(struct collector *c, FILE *f)
{
	fprintf(f,
		"attach: %d libraries, %d probes attached, %d failed; tracepoints %d (%s), %d "
		"failed\n",
		c->nlibs, c->nprobes, c->probes_failed, c->tracepoints_ok,
		c->raw_tp ? "raw_tp" : "tp_btf", c->tracepoints_failed);
	for (int i = 0; i < c->nlibs; i++) {
		const struct lib *l = &c->libs[i];
		fputs("attach: ", f); /* a path inside a target's mount namespace: untrusted */
		esc_fputs(f, l->path, 0);
		static const char *const api[IG_LIB_MAX] = {"runtime", "driver", "NCCL", "HIP"};
		fputs(":", f);
		for (int k = 0, n = 0; k < IG_LIB_MAX; k++)
			if (l->ops[k])
				fprintf(f, "%s %d %s", n++ ? " +" : "", l->ops[k], api[k]);
		fprintf(f, " ops, %d probes%s%s\n", l->probes, l->missing[0] ? "; missing: " : "",
			l->missing);
	}
	if (!c->nlibs)
		fprintf(f, "attach: no CUDA library found yet (rescanning every %llu s)\n",
			(unsigned long long)(RESCAN_TARGETS_NS / 1000000000ULL));
	if (!c->hold_on)
		fprintf(f, "attach: holds off (INGERO_TOP_NO_HOLD): calls made before a library is "
			   "attached are missed, and the process is reported as attached late\n");
	else if (!c->walk)
		fprintf(f,
			"attach: holds at exec only: this kernel cannot read the loader's objects "
			"(bpf_loop, bpf_find_vma: Linux 5.17); a library loaded at run time is "
			"attached a few ms late, uncounted if the process ends first\n");
	else
		fprintf(f,
			"attach: holds on: a target is stopped at an exec or a CUDA library load "
			"until its probes are live%s\n",
			c->loader_walk ? "" : " (no dynamic loader watched yet)");
	if (c->nlate) {
		int shown = c->nlate < 8 ? c->nlate : 8;
		fprintf(f, "attach: attached late to %d process%s (PID", c->nlate,
			c->nlate == 1 ? "" : "es");
		for (int i = 0; i < shown; i++)
			fprintf(f, " %d", c->late[i]);
		fprintf(f, "%s): a CUDA library was mapped before; earlier calls are not known\n",
			c->nlate > shown ? " ..." : "");
	}
	if (c->waits)
		fprintf(f, "attach: wait evidence on (syscalls, page faults, wait channels, CPU "
			   "quota of the traced threads)\n");
	else
		fprintf(f, "attach: wait evidence off%s%s%s: causes from the scheduler only\n",
			c->waits_off_why[0] ? " (" : "", c->waits_off_why,
			c->waits_off_why[0] ? ")"
			: c->raw_tp	    ? " (raw_tp)"
					    : "");
	if (c->stacks && c->stack_sample)
		fprintf(f,
			"attach: user stacks of the tail (calls longer than their op's p95, and 1 "
			"in %u of the others; up to %d frames, CPython 3.10-3.12 frames)\n",
			c->stack_sample, IGB_STACK_MAX);
	else if (c->stacks)
		fprintf(f, "attach: user stacks on (up to %d frames, CPython 3.10-3.12 frames)\n",
			IGB_STACK_MAX);
	else if (c->stacks_off_why[0])
		fprintf(f, "attach: user stacks off (cannot load the stack capture: %s)\n",
			c->stacks_off_why);
	else
		fprintf(f, "attach: user stacks off\n");
}

/* ---- user stacks ------------------------------------------------------------ */

int collector_stack(struct collector *c, uint64_t id, struct igb_stack *out)
{
	if (!c->stacks)
		return -ENOENT;
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.stacks), &id, out))
		return -errno;
	if (out->nips > IGB_STACK_MAX)
		out->nips = IGB_STACK_MAX;
	if (out->npy > IGB_PY_MAX)
		out->npy = IGB_PY_MAX;
	return 0;
}

int collector_set_stack_tail(struct collector *c, int op, uint64_t tail_ns)
{
	if (!c->stacks || !c->stack_sample || !c->skel->bss)
		return -ENOENT;
	if (op < 0 || op >= (int)(sizeof(c->skel->bss->stack_tail_ns) / sizeof(uint64_t)))
		return -EINVAL;
	/* one aligned 64-bit store: the kernel reads the old or the new value */
	__atomic_store_n(&c->skel->bss->stack_tail_ns[op], tail_ns, __ATOMIC_RELAXED);
	return 0;
}

int collector_set_python(struct collector *c, int pid, const struct igb_pyproc *cfg)
{
	uint32_t key = (uint32_t)pid;
	int fd = bpf_map__fd(c->skel->maps.py_procs);

	coll_python_range(c, pid, cfg);
	if (!cfg)
		return bpf_map_delete_elem(fd, &key) && errno != ENOENT ? -errno : 0;
	return bpf_map_update_elem(fd, &key, cfg, BPF_ANY) ? -errno : 0;
}

void collector_stack_stats(struct collector *c, struct collector_stack_stats *st)
{
	st->captured = counter_sum(c, IGB_CNT_STACKS);
	st->distinct = counter_sum(c, IGB_CNT_STACK_NEW);
	st->errors = counter_sum(c, IGB_CNT_STACK_ERR);
	st->lost = counter_sum(c, IGB_CNT_STACK_MAPFAIL);
	st->py_nothread = counter_sum(c, IGB_CNT_PY_NOTHREAD);
	st->py_readfail = counter_sum(c, IGB_CNT_PY_READFAIL);
}

/* ---- life cycle -------------------------------------------------------------- */

static void select_programs(struct ingero_bpf *skel, bool raw, bool stacks, bool walk, bool waits)
{
	bpf_program__set_autoload(skel->progs.call_exit, !stacks);
	bpf_program__set_autoload(skel->progs.call_exit_stk, stacks);
	bpf_program__set_autoload(skel->progs.dl_change, walk);
	bpf_program__set_autoload(skel->progs.dl_change_hint, !walk);
	struct bpf_program *p;
	bpf_object__for_each_program(p, skel->obj)
	{
		const char *sec = bpf_program__section_name(p);
		if (!strncmp(sec, "tp_btf/", 7))
			bpf_program__set_autoload(p, !raw);
		else if (!strncmp(sec, "raw_tp/", 7))
			bpf_program__set_autoload(p, raw);
		if (!strncmp(bpf_program__name(p), "w_", 2)) /* bpf/waits.bpf.h, tp_btf only */
			bpf_program__set_autoload(p, waits && !raw);
	}
}

/* Opens and loads the programs the way c says (raw_tp, stacks, multi,
 * walk). */
static struct ingero_bpf *open_and_load(const struct collector_opts *o, const struct collector *c,
					int *err)
{
	bool raw = c->raw_tp, stacks = c->stacks, multi = c->multi;
	struct ingero_bpf *skel = ingero_bpf__open();
	if (!skel) {
		*err = -errno;
		return NULL;
	}
	skel->rodata->target_all = o->target == COLL_ALL_CUDA;
	skel->rodata->exec_all = o->target == COLL_ALL_CUDA;
	skel->rodata->min_offcpu_ns = o->min_offcpu_ns;
	skel->rodata->stacks_on = stacks;
	skel->rodata->stack_sample = stacks ? c->stack_sample : 0;
	skel->rodata->hold_on = !o->no_hold;
	skel->rodata->self_tgid = (uint32_t)getpid();
	uint64_t irq[4];
	ksym_irq_ranges(irq);
	skel->rodata->irq_text_start = irq[0];
	skel->rodata->irq_text_end = irq[1];
	skel->rodata->softirq_text_start = irq[2];
	skel->rodata->softirq_text_end = irq[3];
	struct ksym_ranges kr;
	ksym_ranges(&kr);
	skel->rodata->fault_text_start = kr.fault[0];
	skel->rodata->fault_text_end = kr.fault[1];
	skel->rodata->hrtimer_text_start = kr.hrtimer[0];
	skel->rodata->hrtimer_text_end = kr.hrtimer[1];
	skel->rodata->timeout_text_start = kr.timeout[0];
	skel->rodata->timeout_text_end = kr.timeout[1];
	skel->rodata->sigtimer_text_start = kr.posix_timer[0];
	skel->rodata->sigtimer_text_end = kr.posix_timer[1];
	skel->rodata->itimer_text_start = kr.itimer[0];
	skel->rodata->itimer_text_end = kr.itimer[1];
	skel->rodata->waits_on = c->waits && !raw;
	skel->rodata->tick_ns = KTICK_NS;
	if (c->waits && !raw) {
		uint64_t sched[2];
		kwait_sched_text(sched);
		skel->rodata->sched_text_start = sched[0];
		skel->rodata->sched_text_end = sched[1];
		kwait_sys_classes((uint8_t *)skel->rodata->sys_cls);
	}
	if (o->ring_mb) /* a recording's reader pauses for its writer (store/rec.c) */
		bpf_map__set_max_entries(skel->maps.events, o->ring_mb << 20);
	if (!stacks) { /* the stack maps are preallocated: keep them tiny */
		bpf_map__set_max_entries(skel->maps.stacks, 1);
		bpf_map__set_max_entries(skel->maps.py_threads, 1);
		bpf_map__set_max_entries(skel->maps.py_procs, 1);
	}
	select_programs(skel, raw, stacks, c->walk, c->waits);
	if (multi) {
		bpf_program__set_expected_attach_type(skel->progs.call_enter,
						      IG_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.call_exit,
						      IG_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.call_exit_stk,
						      IG_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.dl_change,
						      IG_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.dl_change_hint,
						      IG_BPF_TRACE_UPROBE_MULTI);
	}
	*err = ingero_bpf__load(skel);
	if (*err) {
		ingero_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

/* Loads the programs, falling back step by step: uprobe_multi links, then
 * perf-event uprobes; without stack capture; raw_tp for tp_btf. 0 or
 * -errno of the last attempt. */
static int load_programs(struct collector *c, const struct collector_opts *o)
{
	int r = 0;

	c->raw_tp = o->force_raw_tp;
	c->walk = true;
	/* uprobe_multi links (Linux 6.6) first: they detach in one go. */
	c->multi = !o->no_multi;
	c->skel = c->multi ? open_and_load(o, c, &r) : NULL;
	if (!c->skel) {
		if (c->multi)
			log_msg(LOG_INFO,
				"uprobe_multi not available (%s), one perf event per probe",
				strerror(-r));
		c->multi = false;
		c->skel = open_and_load(o, c, &r);
	}
	if (!c->skel && c->waits) {
		/* The syscall, fault and reclaim tracepoints, tp_btf only. */
		log_msg(LOG_WARN, "wait evidence did not load (%s), causes from the scheduler only",
			strerror(-r));
		snprintf(c->waits_off_why, sizeof(c->waits_off_why), "%s", strerror(-r));
		c->waits = false;
		c->skel = open_and_load(o, c, &r);
	}
	if (!c->skel && c->stacks) {
		/* Stack capture needs bpf_loop() (Linux 5.17): go on without. */
		log_msg(LOG_WARN, "user stack capture did not load (%s), stacks off", strerror(-r));
		snprintf(c->stacks_off_why, sizeof(c->stacks_off_why), "%s", strerror(-r));
		c->stacks = false;
		c->skel = open_and_load(o, c, &r);
	}
	if (!c->skel) {
		/* So does the walk of the loader's objects (and bpf_find_vma). */
		log_msg(LOG_WARN,
			"the loader's objects cannot be read (%s): libraries loaded at run time "
			"are attached a little late",
			strerror(-r));
		c->walk = false;
		c->skel = open_and_load(o, c, &r);
	}
	if (!c->skel && !c->raw_tp) {
		log_msg(LOG_WARN, "tp_btf programs did not load (%s), falling back to raw_tp",
			strerror(-r));
		c->raw_tp = true;
		c->waits = false; /* tp_btf only */
		c->skel = open_and_load(o, c, &r);
	}
	return c->skel ? 0 : r;
}

/* Attaches the tracepoints and the library-mapping hook (the uprobes come
 * per library). The number of tracepoints attached. */
static int attach_programs(struct collector *c, const struct collector_opts *o)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, c->skel->obj)
	{
		const char *sec = bpf_program__section_name(p);
		if (!bpf_program__autoload(p) || !strncmp(sec, "uprobe", 6) ||
		    !strncmp(sec, "uretprobe", 9) || !strcmp(sec, "perf_event") ||
		    !strncmp(bpf_program__name(p), "w_sys_", 6)) /* on demand: targets.c */
			continue;
		struct bpf_link *l = bpf_program__attach(p);
		if (!l) {
			c->tracepoints_failed++;
			log_msg(LOG_WARN, "cannot attach %s: %s", sec, strerror(errno));
			continue;
		}
		coll_add_link(c, l);
		c->tracepoints_ok++;
	}
	int r = c->waits ? coll_attach_ticks(c) : 0;
	if (r < 0)
		log_msg(LOG_WARN,
			"cannot sample the CPU clock (%s): the kernel CPU of syscalls is "
			"not measured",
			strerror(-r));
	c->hold_on = !o->no_hold;
	if (c->hold_on && coll_guardian_start(c))
		log_msg(LOG_WARN, "cannot start the guardian of held processes: %s",
			strerror(errno));
	return c->tracepoints_ok;
}

/* The libraries and processes known at start: --lib files, the command's
 * libraries, the system's, the --pid processes, every CUDA process in the
 * default mode. 0, or -1 with a one-line reason in err. */
static int attach_initial(struct collector *c, const struct collector_opts *o, char *err,
			  size_t errlen)
{
	int r;

	for (int i = 0; i < o->nlibs; i++) {
		r = coll_attach_lib(c, o->libs[i]);
		if (r == 0) {
			snprintf(
			    err, errlen,
			    "%s: exports none of the CUDA runtime or driver symbols ingero-top "
			    "traces",
			    o->libs[i]);
			return -1;
		}
		if (r < 0) {
			snprintf(err, errlen, "cannot read %s: %s", o->libs[i],
				 r == -ENOEXEC ? "not an ELF file" : strerror(-r));
			return -1;
		}
	}
	/* Not marked resolved: its exec is held, which also watches its own
	 * dynamic loader. */
	if (o->target == COLL_COMMAND && o->exe)
		discover_exe_libs(o->exe, coll_attach_found, c);
	if (o->target != COLL_PIDS && !o->no_system_libs)
		discover_system_libs(coll_attach_found, c);
	for (int i = 0; i < o->npids; i++) {
		r = add_pid(c, o->pids[i], o->pids_waiting);
		if (r == -ESRCH) {
			snprintf(err, errlen, "no process with pid %d", o->pids[i]);
			return -1;
		}
	}
	if (o->target == COLL_ALL_CUDA)
		scan_all(c);
	return 0;
}

struct collector *collector_new(const struct collector_opts *o, char *err, size_t errlen)
{
	struct collector *c = calloc(1, sizeof(*c));
	int r;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ig_clock_sync();
	c->target = o->target;
	c->stacks = o->stacks;
	/* a power of 2: the kernel draws with a mask */
	if (o->stack_sample) {
		c->stack_sample = 1;
		while (c->stack_sample < o->stack_sample && c->stack_sample < (1u << 30))
			c->stack_sample <<= 1;
	}
	c->waits = !o->no_waits && !o->force_raw_tp;
	c->src.ops = &collector_source_ops;
	c->src.priv = c;
	c->guardian_fd = -1;
	cgcpu_init(&c->cg);

	r = load_programs(c, o);
	if (r) {
		snprintf(err, errlen, "cannot load BPF programs: %s%s", strerror(-r),
			 r == -EPERM ? " (needs root, or CAP_BPF and CAP_PERFMON)" : "");
		goto cleanup;
	}
	if (!attach_programs(c, o)) {
		snprintf(err, errlen, "cannot attach any scheduler tracepoint");
		goto cleanup;
	}
	if (o->target == COLL_ALL_CUDA)
		coll_watch_loader(c, 0); /* the host's: processes started later use it */

	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.events), on_record, c, NULL);
	if (!c->rb) {
		snprintf(err, errlen, "cannot create ring buffer: %s", strerror(errno));
		goto cleanup;
	}
	coll_calibrate(c); /* before anything is attached: a quiet machine */
	if (attach_initial(c, o, err, errlen))
		goto cleanup;
	c->last_rescan_ns = c->last_scan_all_ns = c->last_pages_ns = collector_now_ns(c);
	return c;

cleanup:
	collector_free(c);
	return NULL;
}

void collector_free(struct collector *c)
{
	if (!c)
		return;
	ring_buffer__free(c->rb);
	if (c->skel)
		coll_sys_hooks(c, false);
	/* Continue held processes now (their records will not be read), and
	 * again after the detach for holds made meanwhile. */
	coll_release_all(c);
	coll_destroy_links(c->links, c->nlinks);
	coll_release_all(c);
	coll_guardian_stop(c);
	for (int i = 0; i < c->nmfds; i++)
		close(c->mfds[i]);
	for (int i = 0; i < c->nldfds; i++)
		close(c->ldfds[i]);
	free(c->links);
	ingero_bpf__destroy(c->skel);
	free(c);
}
