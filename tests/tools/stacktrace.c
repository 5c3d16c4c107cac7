/* Test and benchmark helper for user stacks: runs a command under the live
 * collector with stacks on (or off) and the stacks module, prints every
 * call like --events plus its stack id, and at the end every (op, stack)
 * series with its resolved frames (or, with --raw, the raw stacks). Used
 * by tests/integration/test_stacks.sh and tests/bench/bench_stacks.sh,
 * independently of how the session wires the same pieces.
 *
 *   stacktrace [--no-stacks] [--raw] [--bpf-stats] [--quiet] [--lib PATH]... -- CMD ARGS
 *   stacktrace --py-offsets X.Y */
#include "collect/collector.h"
#include "report/evfmt.h"
#include "core/log.h"
#include "core/ops.h"
#include "stacks/pyframes.h"
#include "session/live_stacks.h"
#include "stacks/stacks.h"

#include <linux/types.h>
#include "ingero.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_IDS 65536

static uint64_t ids[MAX_IDS];
static uint32_t id_pid[MAX_IDS];
static int nids;
static int quiet;
static uint64_t calls, with_stack;
static struct stacks *stk;

static void on_event(void *ctx, const struct ig_event *e)
{
	char line[640];
	if (stk)
		stacks_event(stk, e);
	if (e->kind != IG_EV_CALL)
		return;
	calls++;
	if (e->stack_id) {
		with_stack++;
		int seen = 0;
		for (int i = 0; i < nids && !seen; i++)
			seen = ids[i] == e->stack_id;
		if (!seen && nids < MAX_IDS) {
			id_pid[nids] = e->pid;
			ids[nids++] = e->stack_id;
		}
	}
	if (!quiet)
		printf("%s stack=0x%" PRIx64 "\n", evfmt_line(line, sizeof(line), e), e->stack_id);
}

static pid_t spawn_stopped(char **argv, int *go_fd)
{
	int go[2];
	if (pipe2(go, O_CLOEXEC))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	*go_fd = go[1];
	return pid;
}

/* The offsets table of a CPython version, in the format of
 * tests/integration/pyoffsets_probe.c. */
static int print_py_offsets(const char *ver)
{
	unsigned maj, min;
	if (sscanf(ver, "%u.%u", &maj, &min) != 2)
		return 2;
	const struct py_offsets *o = py_offsets_for(maj << 8 | min);
	if (!o) {
		printf("unsupported\n");
		return 1;
	}
#define P(f)                                                                                       \
	do {                                                                                       \
		if (o->f != PY_NONE)                                                               \
			printf("%s %u\n", #f, (unsigned)o->f);                                     \
	} while (0)
	P(runtime_interp_head);
	P(interp_tstate_head);
	P(tstate_tid);
	P(tstate_frame);
	P(cframe_current);
	P(frame_code);
	P(frame_previous);
	P(frame_instr);
	P(frame_owner);
	if (o->owner_cstack != 0xff)
		printf("owner_cstack %u\n", o->owner_cstack);
	P(frame_is_entry);
	P(code_qualname);
	P(code_adaptive);
	P(tstate_next);
	P(tstate_interp);
	P(code_filename);
	P(code_name);
	P(code_firstlineno);
	P(code_linetable);
	P(ascii_size);
	P(compact_size);
#undef P
	printf("ob_type 8\nvar_size 16\nbytes_data 32\nunicode_length 16\nunicode_state 32\n");
	return 0;
}

/* Run time of our BPF programs (kernel.bpf_stats via BPF_ENABLE_STATS). */
static void print_bpf_stats(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = atoi(de->d_name);
		memset(&info, 0, sizeof(info));
		if (fd < 3 || bpf_obj_get_info_by_fd(fd, &info, &len) || !info.run_cnt)
			continue;
		if (strncmp(info.name, "call_", 5))
			continue;
		printf("bpfstat prog=%s run_cnt=%llu run_time_ns=%llu avg_ns=%.0f\n", info.name,
		       (unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns,
		       (double)info.run_time_ns / (double)info.run_cnt);
	}
	if (d)
		closedir(d);
}

int main(int argc, char **argv)
{
	struct collector_opts o = {.target = COLL_COMMAND, .no_system_libs = true, .stacks = true};
	const char *libs[16];
	char err[256];
	int nlibs = 0, go, status = 0, i, raw_mode = 0, bpf_stats = 0, stats_fd = -1;

	if (argc == 3 && !strcmp(argv[1], "--py-offsets"))
		return print_py_offsets(argv[2]);
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--no-stacks"))
			o.stacks = false;
		else if (!strcmp(argv[i], "--quiet"))
			quiet = 1;
		else if (!strcmp(argv[i], "--raw"))
			raw_mode = 1;
		else if (!strcmp(argv[i], "--bpf-stats"))
			bpf_stats = 1;
		else if (!strcmp(argv[i], "--lib") && i + 1 < argc && nlibs < 16)
			libs[nlibs++] = argv[++i];
		else {
			fprintf(stderr,
				"usage: stacktrace [--no-stacks] [--raw] [--bpf-stats] [--quiet] "
				"[--lib PATH]... -- CMD\n");
			return 2;
		}
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "stacktrace: no command\n");
		return 2;
	}
	log_echo(stderr, LOG_WARN);
	pid_t child = spawn_stopped(argv + i + 1, &go);
	if (child < 0)
		return 1;
	int pids[1] = {child};
	o.pids = pids;
	o.npids = 1;
	o.libs = libs;
	o.nlibs = nlibs;
	o.exe = argv[i + 1];
	struct collector *c = collector_new(&o, err, sizeof(err));
	if (!c) {
		fprintf(stderr, "stacktrace: %s\n", err);
		kill(child, SIGKILL);
		return 1;
	}
	collector_summary(c, stderr);
	if (bpf_stats && (stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME)) < 0)
		fprintf(stderr, "stacktrace: cannot enable BPF run-time statistics\n");
	if (o.stacks && !raw_mode) {
		stk = stacks_new(NULL);
		if (!stk) {
			fprintf(stderr, "stacktrace: cannot start the stack resolver\n");
			return 1;
		}
		live_stacks_attach(stk, c);
	}
	struct ig_source *src = collector_source(c);
	if (write(go, "g", 1) != 1)
		return 1;
	close(go);

	for (int done = 0, drained = 0; drained < 3;) {
		struct pollfd p = {.fd = src->ops->fd(src), .events = POLLIN};
		poll(&p, 1, 50);
		while (src->ops->poll(src, on_event, NULL, 4096) > 0)
			;
		collector_tick(c, collector_now_ns(c), on_event, NULL);
		if (!done && waitpid(child, &status, WNOHANG) == child)
			done = 1;
		if (done)
			drained++;
	}
	if (stats_fd >= 0)
		print_bpf_stats();
	struct collector_stack_stats ss;
	collector_stack_stats(c, &ss);
	printf("summary calls=%" PRIu64 " with_stack=%" PRIu64
	       " distinct=%d kernel_captured=%" PRIu64 " kernel_distinct=%" PRIu64
	       " errors=%" PRIu64 " lost=%" PRIu64 " py_nothread=%" PRIu64 " py_readfail=%" PRIu64
	       "\n",
	       calls, with_stack, nids, ss.captured, ss.distinct, ss.errors, ss.lost,
	       ss.py_nothread, ss.py_readfail);
	if (stk) {
		static struct stacks_stat top[4096];
		static struct stacks_frame fr[128];
		char note[256];
		struct stacks_stats sst;
		int flushed = stacks_flush(stk, 10000);
		stacks_get_stats(stk, &sst);
		printf("resolver flush=%d stacks=%llu resolved=%llu pending=%llu missing=%llu "
		       "frames_resolved=%llu frames_unresolved=%llu py_frames=%llu resolve_ns=%llu "
		       "py_procs=%u py_unsupported=%u\n",
		       flushed, (unsigned long long)sst.stacks, (unsigned long long)sst.resolved,
		       (unsigned long long)sst.pending, (unsigned long long)sst.missing,
		       (unsigned long long)sst.frames_resolved,
		       (unsigned long long)sst.frames_unresolved, (unsigned long long)sst.py_frames,
		       (unsigned long long)sst.resolve_ns, sst.py_procs, sst.py_unsupported);
		int n = stacks_top(stk, -1, STACKS_BY_CALLS, top, 4096);
		for (int k = 0; k < n; k++) {
			int state, nf = stacks_frames(stk, top[k].id, fr, 128, &state);
			printf("series op=%s stack=0x%" PRIx64 " pid=%u calls=%" PRIu64
			       " tail=%" PRIu64 " max_ns=%" PRIu64 " state=%d frames=%d\n",
			       ig_op_name(top[k].op), top[k].id, top[k].pid, top[k].calls,
			       top[k].tail_calls, top[k].max_ns, state, nf);
			printf("  headline %s\n", top[k].headline);
			for (int f = 0; f < nf; f++)
				printf("  frame %s %s\n",
				       fr[f].kind == STACKS_PY	   ? "py"
				       : fr[f].kind == STACKS_NOTE ? "note"
								   : "native",
				       fr[f].text);
			stacks_proc_note(stk, top[k].pid, note, sizeof(note));
			if (note[0])
				printf("  pynote %s\n", note);
		}
		stacks_free(stk);
		collector_free(c);
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	static struct igb_stack s;
	for (int k = 0; k < nids; k++) {
		int r = collector_stack(c, ids[k], &s);
		printf("stack 0x%" PRIx64 " pid=%u ", ids[k], id_pid[k]);
		if (r) {
			printf("missing (%s)\n", strerror(-r));
			continue;
		}
		printf("nips=%u npy=%u flags=0x%x\n", s.nips, s.npy, s.flags);
		for (int j = 0; j < s.nips; j++)
			printf("  ip 0x%" PRIx64 "\n", (uint64_t)s.ips[j]);
		for (int j = 0; j < s.npy; j++)
			printf("  py code=0x%" PRIx64 " instr=0x%" PRIx64 "\n",
			       (uint64_t)s.py[j].code, (uint64_t)s.py[j].instr);
	}
	collector_free(c);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
