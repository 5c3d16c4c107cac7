/* The stacks module (src/stacks/) without the kernel: raw stacks of this
 * process resolve to its functions (inline and on the resolver thread),
 * per-(op, stack) counts and tails, ordering, eviction, JSON out and back
 * in (Ingero's format, and the real Ingero recording), drain for the
 * recorder, CPython frames put in place of the evaluation loop with a
 * real interpreter, and live mode through a fake kernel (struct
 * stacks_kernel): raw stacks fetched once per id, interpreters told to it. */
#include "stacks/stacks.h"
#include "core/ops.h"
#include "stacks/pyframes.h"
#include "stacks/symbolize.h"
#include "store/replay.h"
#include "check.h"

#include <linux/types.h>
#include "ingero.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NS 1000000000ull

__attribute__((noinline)) int leaf_fn(int x)
{
	asm volatile("" ::: "memory");
	return x + 1;
}

__attribute__((noinline)) int mid_fn(int x)
{
	asm volatile("" ::: "memory");
	return x * 2;
}

__attribute__((noinline)) int top_fn(int x)
{
	asm volatile("" ::: "memory");
	return x - 3;
}

static struct igb_stack raw_of(const uint64_t *ips, int n)
{
	struct igb_stack r;
	memset(&r, 0, sizeof(r));
	r.tgid = (uint32_t)getpid();
	r.nips = (uint16_t)n;
	for (int i = 0; i < n; i++)
		r.ips[i] = ips[i];
	return r;
}

/* Return addresses one byte into each function: as a call would leave. */
static void chain(uint64_t *ips)
{
	ips[0] = (uint64_t)(uintptr_t)&leaf_fn + 1;
	ips[1] = (uint64_t)(uintptr_t)&mid_fn + 1;
	ips[2] = (uint64_t)(uintptr_t)&top_fn + 1;
}

static struct ig_event call(int op, uint64_t id, uint64_t ts, uint64_t dur)
{
	struct ig_event e;
	memset(&e, 0, sizeof(e));
	e.kind = IG_EV_CALL;
	e.op = (uint16_t)op;
	e.pid = (uint32_t)getpid();
	e.tid = e.pid;
	e.ts_ns = ts;
	e.dur_ns = dur;
	e.stack_id = id;
	return e;
}

static void check_chain(struct stacks *st, uint64_t id, const char *what)
{
	struct stacks_frame f[8];
	int state = -1;
	int n = stacks_frames(st, id, f, 8, &state);
	CHECKF(state == STACKS_RESOLVED && n == 3, "%s: state %d, %d frames", what, state, n);
	const char *want[3] = {"leaf_fn", "mid_fn", "top_fn"};
	for (int i = 0; i < n && i < 3; i++) {
		CHECKF(f[i].kind == STACKS_NATIVE && !strcmp(f[i].sym, want[i]) && f[i].off == 1,
		       "%s: frame %d is %s", what, i, f[i].text);
		CHECK(strstr(f[i].text, want[i]) && strstr(f[i].text, "+0x1 (test_stacks)"));
	}
}

static void test_resolve_and_counts(void)
{
	struct stacks_opts o = {.inline_resolve = true, .no_python = true};
	struct stacks *st = stacks_new(&o);
	uint64_t ips[3];
	struct stacks_stat top[8];

	CHECK(st != NULL);
	if (!st)
		return;
	chain(ips);
	struct igb_stack a = raw_of(ips, 3), b = raw_of(ips + 1, 2);
	CHECK(stacks_add_raw(st, 0xa, (uint32_t)getpid(), &a) == 0);
	CHECK(stacks_add_raw(st, 0xa, (uint32_t)getpid(), &a) == -EEXIST);
	CHECK(stacks_add_raw(st, 0xb, (uint32_t)getpid(), &b) == 0);
	check_chain(st, 0xa, "inline");

	/* 200 fast calls through a, 6 slow ones through b, 50 on another op. */
	uint64_t t = 1000 * NS;
	for (int i = 0; i < 200; i++) {
		struct ig_event e =
		    call(IG_OP_CUDA_MALLOC, 0xa, t, 1000000 + (uint64_t)(i * 37 % 100) * 1000);
		stacks_event(st, &e);
		t += NS / 100;
		if (i % 40 == 39) {
			e = call(IG_OP_CUDA_MALLOC, 0xb, t, 50000000);
			stacks_event(st, &e);
		}
	}
	struct ig_event e = call(IG_OP_CUDA_MALLOC, 0xb, t, 60000000);
	stacks_event(st, &e);
	for (int i = 0; i < 50; i++) {
		e = call(IG_OP_CUDA_FREE, 0xa, t + (uint64_t)i, 2000);
		stacks_event(st, &e);
	}
	e = call(IG_OP_CUDA_FREE, 0, t, 5); /* no stack */
	stacks_event(st, &e);

	int n = stacks_top(st, IG_OP_CUDA_MALLOC, STACKS_BY_TAIL, top, 8);
	CHECK(n == 2);
	CHECKF(top[0].id == 0xb && top[0].calls == 6 && top[0].tail_calls == 6 &&
		   top[0].max_ns == 60000000 && top[0].total_ns == 5 * 50000000ull + 60000000,
	       "slow stack: id %llx calls %llu tail %llu", (unsigned long long)top[0].id,
	       (unsigned long long)top[0].calls, (unsigned long long)top[0].tail_calls);
	/* The fast stack's own slowest ~5 % reach the op's p95 too. */
	CHECKF(top[1].id == 0xa && top[1].calls == 200 && top[1].tail_calls <= 20 &&
		   top[1].tail_ns < top[0].tail_ns,
	       "fast stack: %llu tail calls", (unsigned long long)top[1].tail_calls);
	CHECK(strstr(top[0].headline, "mid_fn+0x1") && top[0].state == STACKS_RESOLVED);
	n = stacks_top(st, IG_OP_CUDA_MALLOC, STACKS_BY_CALLS, top, 8);
	CHECK(n == 2 && top[0].id == 0xa);
	n = stacks_top(st, -1, STACKS_BY_CALLS, top, 8);
	CHECK(n == 3 && top[0].id == 0xa && top[0].op == IG_OP_CUDA_MALLOC &&
	      top[1].op == IG_OP_CUDA_FREE && top[1].calls == 50);
	n = stacks_top(st, IG_OP_CUDA_MALLOC, STACKS_BY_TAIL, top, 1);
	CHECK(n == 1 && top[0].id == 0xb);
	struct stacks_stat one;
	CHECK(stacks_series(st, IG_OP_CUDA_FREE, 0xa, &one) == 0 && one.calls == 50);
	CHECK(stacks_series(st, IG_OP_CUDA_FREE, 0xb, &one) == -ENOENT);

	/* An id nobody can provide (replay without the stack). */
	e = call(IG_OP_CUDA_MALLOC, 0xdead, t, 10);
	stacks_event(st, &e);
	int state;
	struct stacks_frame fr[4];
	CHECK(stacks_frames(st, 0xdead, fr, 4, &state) == 0 && state == STACKS_MISSING);
	CHECK(stacks_frames(st, 0xbeef, fr, 4, &state) == 0 && state == STACKS_UNKNOWN);

	struct stacks_stats ss;
	stacks_get_stats(st, &ss);
	CHECK(ss.calls == 258 && ss.calls_no_stack == 1 && ss.stacks == 3 && ss.resolved == 2 &&
	      ss.missing == 1 && ss.frames_resolved == 5);

	stacks_reset(st);
	CHECK(stacks_top(st, -1, STACKS_BY_CALLS, top, 8) == 0);
	CHECK(stacks_frames(st, 0xa, fr, 4, &state) == 3); /* stacks stay */
	stacks_free(st);
}

static int drained;
static char drained_frames[4096];

static void on_json(void *ctx, uint64_t id, const char *ips, const char *frames)
{
	drained++;
	snprintf(drained_frames, sizeof(drained_frames), "%s", frames);
	CHECK(id == 0xc && ips[0] == '[' && strstr(ips, "\"0x"));
}

static void test_thread_json_drain(void)
{
	struct stacks *st = stacks_new(NULL), *st2 = stacks_new(NULL);
	uint64_t ips[3];
	char *ij = NULL, *fj = NULL;

	CHECK(st && st2);
	if (!st || !st2)
		return;
	chain(ips);
	struct igb_stack a = raw_of(ips, 3);
	CHECK(stacks_add_raw(st, 0xc, (uint32_t)getpid(), &a) == 0);
	CHECK(stacks_flush(st, 5000) == 0);
	check_chain(st, 0xc, "thread");

	CHECK(stacks_drain(st, on_json, NULL) == 1 && drained == 1);
	CHECK(stacks_drain(st, on_json, NULL) == 0 && drained == 1);
	/* built with -g: the source line goes to the recording too ("sf", "l") */
	CHECKF(strstr(drained_frames,
		      "{\"s\":\"leaf_fn+0x1\",\"f\":\"test_stacks\",\"sf\":\"test_stacks.c\",\"l\":") !=
		   NULL,
	       "%s", drained_frames);
	CHECK(stacks_json(st, 0xc, &ij, &fj) == 0 && ij && fj);
	free(ij);
	free(fj);
	CHECK(stacks_json(st, 0x99, &ij, &fj) == -ENOENT && !ij && !fj);

	/* Back in through the recording format: same display lines. */
	char *ij2 = NULL, *fj2 = NULL;
	CHECK(stacks_json(st, 0xc, &ij2, &fj2) == 0);
	CHECK(stacks_add_json(st2, 0xc, ij2, fj2) == 0);
	struct stacks_frame f1[4], f2[4];
	int n1 = stacks_frames(st, 0xc, f1, 4, NULL), n2 = stacks_frames(st2, 0xc, f2, 4, NULL);
	CHECK(n1 == 3 && n2 == 3);
	for (int i = 0; i < n1 && i < n2; i++)
		CHECKF(!strcmp(f1[i].text, f2[i].text) && !strcmp(f1[i].sym, f2[i].sym),
		       "'%s' vs '%s'", f1[i].text, f2[i].text);
	CHECK(stacks_drain(st2, on_json, NULL) == 0); /* loaded stacks are not re-recorded */
	free(ij2);
	free(fj2);
	free(ij);
	free(fj);
	stacks_free(st);
	stacks_free(st2);
}

static int load_row(void *ctx, uint64_t hash, const char *ips, const char *frames)
{
	return stacks_add_json(ctx, hash, ips, frames);
}

static void test_ingero_json(void)
{
	struct stacks *st = stacks_new(&(struct stacks_opts){.inline_resolve = true});
	struct stacks_frame f[8];
	int state;

	CHECK(st != NULL);
	if (!st)
		return;
	/* A row of the DataLoader recording (stack_traces.frames). */
	const char *row =
	    "[{\"i\":\"0x7f993b40fb8b\",\"f\":\"libcudart.so.12\"},"
	    "{\"s\":\"_ZN2at6native5copy_ERNS_6TensorERKS1_b+0x57\",\"f\":\"libtorch_cpu.so\"},"
	    "{\"pf\":\"/w/train.py\",\"pfn\":\"forward\",\"pl\":142},"
	    "{\"n\":\"a \\\"note\\\"\"}]";
	CHECK(stacks_add_json(st, 7, "", row) == 0);
	int n = stacks_frames(st, 7, f, 8, &state);
	CHECK(n == 4 && state == STACKS_RESOLVED);
	CHECKF(!strcmp(f[0].text, "0x7f993b40fb8b (libcudart.so.12)") &&
		   f[0].ip == 0x7f993b40fb8bull,
	       "%s", f[0].text);
	CHECKF(!strcmp(f[1].sym, "at::native::copy_(at::Tensor&, at::Tensor const&, bool)") &&
		   f[1].off == 0x57 &&
		   !strcmp(f[1].text, "at::native::copy_(at::Tensor&, at::Tensor const&, "
				      "bool)+0x57 (libtorch_cpu.so)"),
	       "%s", f[1].text);
	CHECK(f[2].kind == STACKS_PY && f[2].line == 142 &&
	      !strcmp(f[2].text, "[py] /w/train.py:142 in forward()"));
	CHECK(f[3].kind == STACKS_NOTE && !strcmp(f[3].text, "a \"note\""));
	CHECK(stacks_add_json(st, 8, "", "not json") == -EINVAL);
	CHECK(stacks_add_json(
		  st, 10, "",
		  "[{\"i\":\"0x7f0012345678\",\"f\":\"libffi.so.8\",\"o\":\"0x6f7a\"}]") == 0);
	CHECK(stacks_frames(st, 10, f, 8, NULL) == 1 &&
	      !strcmp(f[0].text, "0x7f0012345678 (libffi.so.8+0x6f7a)") && f[0].off == 0x6f7a);
	CHECK(stacks_add_json(st, 9, "[\"0x10\",\"0x20\"]", "") == 0);
	CHECK(stacks_frames(st, 9, f, 8, NULL) == 2 && f[1].ip == 0x20);

	/* Ingero's own recording (shipped in tests/fixtures): every
	 * stack_traces row loads, read by the replay source. */
	const char *db[] = {"tests/fixtures/ingero/pytorch-dataloader-starvation.db"}, *err = NULL;
	struct ig_source *src = replay_open(db, 1, &err);
	CHECKF(src, "%s", err ? err : "?");
	if (src) {
		int r = replay_stacks(src, load_row, st);
		CHECKF(r == 21, "loaded %d stacks", r);
		n = stacks_frames(st, (uint64_t)-9010872670093151331ll, f, 8, &state);
		CHECKF(n == 3 && strstr(f[0].text, "at::native::copy_kernel_cuda(") &&
			   !strcmp(f[0].file, "libtorch_cuda.so"),
		       "%d %s", n, n ? f[0].text : "");
		/* a second load finds them all known */
		CHECK(replay_stacks(src, load_row, st) == 0);
		src->ops->free(src);
	}
	/* a path with URI characters loads its own stacks (it used to be
	 * opened as an unescaped URI: "%41" named another file) */
	char dir[] = "/tmp/ig-test-stacks.XXXXXX", odd[128], cmd[512];
	if (mkdtemp(dir)) {
		snprintf(odd, sizeof(odd), "%s/a%%41?b#c.db", dir);
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", db[0], odd);
		CHECK(system(cmd) == 0);
		const char *op[] = {odd};
		struct stacks *st2 = stacks_new(&(struct stacks_opts){.inline_resolve = true});
		src = replay_open(op, 1, &err);
		CHECKF(src && st2, "%s", err ? err : "?");
		if (src && st2)
			CHECK(replay_stacks(src, load_row, st2) == 21);
		if (src)
			src->ops->free(src);
		stacks_free(st2);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		CHECK(system(cmd) == 0);
	}
	stacks_free(st);
}

static void test_eviction(void)
{
	struct stacks *st = stacks_new(&(struct stacks_opts){
	    .inline_resolve = true, .max_stacks = 4, .max_series = 4, .no_python = true});
	uint64_t ips[3];
	struct stacks_stats ss;
	struct stacks_stat top[8];

	CHECK(st != NULL);
	if (!st)
		return;
	chain(ips);
	struct igb_stack a = raw_of(ips, 3);
	for (uint64_t id = 1; id <= 6; id++) {
		CHECK(stacks_add_raw(st, id, (uint32_t)getpid(), &a) == 0);
		struct ig_event e = call(IG_OP_CUDA_MEMCPY, id, id * NS, 100);
		stacks_event(st, &e);
	}
	stacks_get_stats(st, &ss);
	CHECK(ss.stacks == 4 && ss.evicted == 2);
	CHECK(stacks_frames(st, 1, NULL, 0, NULL) == 0);
	int state;
	stacks_frames(st, 1, NULL, 0, &state);
	CHECK(state == STACKS_UNKNOWN);
	stacks_frames(st, 6, NULL, 0, &state);
	CHECK(state == STACKS_RESOLVED);
	CHECK(stacks_top(st, -1, STACKS_BY_CALLS, top, 8) == 4);
	stacks_free(st);
}

/* A process that exits before its stacks are resolved: the mappings read
 * while it lived are used. A forked child has our addresses. */
static void test_exited(void)
{
	struct stacks *st =
	    stacks_new(&(struct stacks_opts){.inline_resolve = true, .no_python = true});
	uint64_t ips[3];
	int fds[2];

	CHECK(st != NULL && pipe(fds) == 0);
	if (!st)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		char c = 'r';
		if (write(fds[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	char c;
	CHECK(read(fds[0], &c, 1) == 1);
	stacks_watch_pid(st, (uint32_t)pid);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	chain(ips);
	struct igb_stack a = raw_of(ips, 3);
	a.tgid = (uint32_t)pid;
	CHECK(stacks_add_raw(st, 0xe, (uint32_t)pid, &a) == 0);
	check_chain(st, 0xe, "exited");

	/* Never seen alive: addresses, and a note saying why. */
	struct stacks_frame f[8];
	pid_t gone = fork();
	if (gone == 0)
		_exit(0);
	waitpid(gone, NULL, 0);
	CHECK(stacks_add_raw(st, 0x10, (uint32_t)gone, &a) == 0);
	int n = stacks_frames(st, 0x10, f, 8, NULL);
	CHECKF(n == 4 && !f[0].sym[0] && f[3].kind == STACKS_NOTE &&
		   strstr(f[3].text, "exited before its mappings were read"),
	       "%d frames, last %s", n, n ? f[n - 1].text : "");
	close(fds[0]);
	close(fds[1]);
	stacks_free(st);
}

/* A CPython 3.10-3.12 waiting inside g() <- h() <- <module> (line 3, 5,
 * 6 of its script) until its stdin is closed. */
struct pychild {
	const char *py;
	pid_t pid;
	int in, out;
	char path[64];
};

static int py_spawn(struct pychild *c)
{
	const char *pys[] = {"/root/.pyenv/versions/3.12.1/bin/python3.12",
			     "/root/.pyenv/versions/3.11.7/bin/python3.11", "/usr/bin/python3.11",
			     "/usr/bin/python3.12", "/usr/bin/python3.10"};
	int in[2], out[2];
	char buf[16] = "";

	memset(c, 0, sizeof(*c));
	c->in = c->out = -1;
	for (size_t i = 0; i < sizeof(pys) / sizeof(pys[0]) && !c->py; i++)
		if (!access(pys[i], X_OK))
			c->py = pys[i];
	/* Debian 12's python3 (a build dependency, make deps) is 3.11 */
	CHECKF(c->py != NULL, "no CPython 3.10-3.12 (install python3: make deps)");
	if (!c->py)
		return -1;
	snprintf(c->path, sizeof(c->path), "/tmp/ig-stacks-%d.py", (int)getpid());
	FILE *f = fopen(c->path, "w");
	if (!f)
		return -1;
	fputs("import sys\n"
	      "def g():\n"
	      "    (sys.stdout.write('ready\\n'), sys.stdout.flush(), sys.stdin.readline())\n"
	      "def h():\n"
	      "    g()\n"
	      "h()\n",
	      f);
	fclose(f);
	if (pipe(in) || pipe(out))
		return -1;
	c->pid = fork();
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(c->py, c->py, "-S", c->path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in = in[1];
	c->out = out[0];
	return read(c->out, buf, sizeof(buf) - 1) > 0 ? 0 : -1;
}

static void py_reap(struct pychild *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
	if (c->in >= 0)
		close(c->in);
	if (c->out >= 0)
		close(c->out);
	if (c->path[0])
		unlink(c->path);
}

/* CPython frames take the place of _PyEval_EvalFrameDefault. */
static void test_python_merge(void)
{
	struct pychild child;
	if (py_spawn(&child))
		goto out;
	pid_t pid = child.pid;
	const char *py = child.py;

	/* The interpreter frames as the kernel would take them, and a native
	 * stack: a return address in _PyEval_EvalFrameDefault between two
	 * frames of this program. */
	struct sym_cache *c = sym_cache_new(0);
	int err;
	struct sym_proc *sp = sym_proc_capture(c, pid, &err);
	struct py_proc *pp = NULL;
	uint64_t eval = 0;
	const char *where;
	if (!sp || py_detect(c, sp, &pp, NULL, 0) ||
	    sym_find(c, sp, "_PyEval_EvalFrameDefault", "python", &eval, &where)) {
		CHECKF(0, "%s: no interpreter or no _PyEval_EvalFrameDefault symbol", py);
		goto done;
	}
	struct igb_stack raw;
	memset(&raw, 0, sizeof(raw));
	raw.tgid = (uint32_t)pid;
	int npy = py_walk_thread(pp, pid, raw.py, IGB_PY_MAX);
	CHECK(npy == 3);
	raw.npy = (uint8_t)(npy > 0 ? npy : 0);
	raw.flags = IGB_STK_PY;
	raw.nips = 2;
	raw.ips[0] = eval + 16;
	raw.ips[1] = eval + 32;

	struct stacks *st = stacks_new(&(struct stacks_opts){.inline_resolve = true});
	CHECK(st && stacks_add_raw(st, 0x51, (uint32_t)pid, &raw) == 0);
	struct stacks_frame fr[16];
	int state, n = st ? stacks_frames(st, 0x51, fr, 16, &state) : 0;
	/* One evaluation loop call runs all three frames (3.11+): they replace
	 * the first _PyEval_EvalFrameDefault; the second stays native. */
	CHECKF(n == 4 && fr[0].kind == STACKS_PY && fr[1].kind == STACKS_PY &&
		   fr[2].kind == STACKS_PY && fr[3].kind == STACKS_NATIVE,
	       "%d frames", n);
	if (n == 4) {
		CHECKF(strstr(fr[0].text, ".py:3 in g()") && strstr(fr[1].text, ".py:5 in h()") &&
			   strstr(fr[2].text, ".py:6 in <module>()"),
		       "%s | %s | %s", fr[0].text, fr[1].text, fr[2].text);
		CHECK(strstr(fr[3].text, "_PyEval_EvalFrameDefault+0x20"));
	}
	struct stacks_stat top[2];
	struct ig_event e = call(IG_OP_CUDA_LAUNCH_KERNEL, 0x51, NS, 5);
	e.pid = (uint32_t)pid;
	if (st)
		stacks_event(st, &e);
	CHECK(st && stacks_top(st, -1, 0, top, 2) == 1 && strstr(top[0].headline, "in g()"));
	char note[256];
	if (st)
		stacks_proc_note(st, (uint32_t)pid, note, sizeof(note));
	CHECKF(st && strstr(note, "Python frames on"), "%s", note);
	stacks_free(st);
done:
	py_proc_free(pp);
	sym_proc_free(sp);
	sym_cache_free(c);
out:
	py_reap(&child);
}

/* ---- the kernel interface (struct stacks_kernel), faked ---------------------- */

/* A kernel that holds a few raw stacks and records what it is told. */
struct fake_kernel {
	uint64_t ids[4];
	struct igb_stack raw[4];
	int nraw;
	int fetches[8]; /* per id 0xf0 + k */
	int set_calls, set_pid, set_err;
	struct igb_pyproc set_cfg;
};

static int fake_fetch_stack(void *ctx, uint64_t id, struct igb_stack *out)
{
	struct fake_kernel *k = ctx;
	if (id >= 0xf0 && id < 0xf8)
		k->fetches[id - 0xf0]++;
	for (int i = 0; i < k->nraw; i++)
		if (k->ids[i] == id) {
			*out = k->raw[i];
			return 0;
		}
	return -ENOENT;
}

static int fake_set_python(void *ctx, int pid, const struct igb_pyproc *cfg)
{
	struct fake_kernel *k = ctx;
	k->set_calls++;
	k->set_pid = pid;
	if (cfg)
		k->set_cfg = *cfg;
	return k->set_err;
}

/* Live mode without a collector: stacks come from fetch_stack, once per
 * id, and processes are followed (no interpreter here: nothing is set). */
static void test_kernel_fetch(void)
{
	struct fake_kernel k;
	struct stacks_kernel kern = {fake_fetch_stack, fake_set_python, &k};
	struct stacks *st = stacks_new(&(struct stacks_opts){.inline_resolve = true});
	struct stacks_frame f[80];
	struct stacks_stat one;
	struct stacks_stats ss;
	uint64_t ips[3];
	int state;

	CHECK(st != NULL);
	if (!st)
		return;
	memset(&k, 0, sizeof(k));
	chain(ips);
	k.ids[0] = 0xf1;
	k.raw[0] = raw_of(ips, 3);
	/* a kernel that says more than it holds: 200 addresses, 3 real */
	k.ids[1] = 0xf3;
	k.raw[1] = raw_of(ips, 3);
	k.raw[1].nips = 200;
	k.raw[1].npy = 200;
	k.nraw = 2;
	stacks_set_kernel(st, &kern);

	uint64_t t = 10 * NS;
	for (int i = 0; i < 3; i++) {
		struct ig_event e = call(IG_OP_CUDA_MALLOC, 0xf1, t + (uint64_t)i, 1000);
		stacks_event(st, &e);
		e = call(IG_OP_CUDA_MALLOC, 0xf2, t + (uint64_t)i, 2000); /* not in the kernel */
		stacks_event(st, &e);
	}
	struct ig_event e = call(IG_OP_CUDA_FREE, 0xf3, t, 5);
	stacks_event(st, &e);
	CHECKF(k.fetches[1] == 1 && k.fetches[2] == 1 && k.fetches[3] == 1, "fetches %d %d %d",
	       k.fetches[1], k.fetches[2], k.fetches[3]);
	check_chain(st, 0xf1, "fetched");
	CHECK(stacks_frames(st, 0xf2, f, 8, &state) == 0 && state == STACKS_MISSING);
	CHECK(stacks_series(st, IG_OP_CUDA_MALLOC, 0xf1, &one) == 0 && one.calls == 3 &&
	      one.total_ns == 3000);
	CHECK(stacks_series(st, IG_OP_CUDA_MALLOC, 0xf2, &one) == 0 && one.calls == 3 &&
	      !strcmp(one.headline, "(stack not available)"));
	/* 64 addresses at most are read, and the walk stops at the first one
	 * outside every mapping (address 0), with a note */
	int n = stacks_frames(st, 0xf3, f, 80, &state);
	CHECKF(state == STACKS_RESOLVED && n == 5 && f[3].kind == STACKS_NOTE &&
		   strstr(f[3].text, "native frames stop here") && f[4].kind == STACKS_NOTE &&
		   strstr(f[4].text, "Python frames captured but the interpreter is unknown"),
	       "%d frames, state %d", n, state);
	char *ij = NULL, *fj = NULL;
	int nip = 0;
	CHECK(stacks_json(st, 0xf3, &ij, &fj) == 0);
	for (const char *q = ij; q && (q = strstr(q, "\"0x")); q++)
		nip++;
	CHECKF(nip == IGB_STACK_MAX, "%d addresses kept", nip);
	free(ij);
	free(fj);

	/* the calling process was read, its fork too; no CPython: nothing set */
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	e = (struct ig_event){
	    .kind = IG_EV_FORK, .pid = (uint32_t)getpid(), .arg0 = (uint64_t)child};
	stacks_event(st, &e);
	stacks_get_stats(st, &ss);
	CHECKF(ss.procs == 2 && ss.py_procs == 0 && k.set_calls == 0, "procs %u, set %d", ss.procs,
	       k.set_calls);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	/* without a kernel, a new id is not fetched: it is missing */
	stacks_set_kernel(st, NULL);
	e = call(IG_OP_CUDA_MALLOC, 0xf4, t, 1000);
	stacks_event(st, &e);
	CHECK(k.fetches[4] == 0 && stacks_frames(st, 0xf4, f, 8, &state) == 0 &&
	      state == STACKS_MISSING);
	stacks_get_stats(st, &ss);
	CHECK(ss.calls == 8 && ss.stacks == 4 && ss.resolved == 2 && ss.missing == 2);
	stacks_free(st);
}

/* An interpreter found in a watched process is told to the kernel once,
 * with the layout pyframes.c derives; the kernel's refusal lands in the
 * process's note. */
static void test_kernel_set_python(void)
{
	struct fake_kernel k;
	struct stacks_kernel kern = {fake_fetch_stack, fake_set_python, &k};
	struct pychild child;
	char note[256];

	memset(&k, 0, sizeof(k));
	if (py_spawn(&child))
		goto out;
	struct sym_cache *c = sym_cache_new(0);
	int err;
	struct sym_proc *sp = sym_proc_capture(c, child.pid, &err);
	struct py_proc *pp = NULL;
	struct igb_pyproc want;
	CHECKF(sp && !py_detect(c, sp, &pp, NULL, 0), "%s: no interpreter found", child.py);
	if (pp)
		py_bpf_config(pp, &want);

	struct stacks *st = stacks_new(NULL); /* on the resolver thread */
	CHECK(st != NULL);
	if (st && pp) {
		stacks_set_kernel(st, &kern);
		stacks_watch_pid(st, (uint32_t)child.pid);
		CHECK(stacks_flush(st, 10000) == 0);
		CHECKF(k.set_calls == 1 && k.set_pid == child.pid &&
			   !memcmp(&k.set_cfg, &want, sizeof(want)),
		       "%d calls, pid %d", k.set_calls, k.set_pid);
		stacks_proc_note(st, (uint32_t)child.pid, note, sizeof(note));
		CHECKF(strstr(note, "Python frames on") && !strstr(note, "kernel map"), "%s", note);
	}
	stacks_free(st);

	/* a kernel that refuses: the note says why */
	k.set_err = -E2BIG;
	st = stacks_new(&(struct stacks_opts){.inline_resolve = true});
	if (st && pp) {
		stacks_set_kernel(st, &kern);
		stacks_watch_pid(st, (uint32_t)child.pid);
		stacks_proc_note(st, (uint32_t)child.pid, note, sizeof(note));
		CHECKF(k.set_calls == 2 &&
			   strstr(note, "Python frames on (kernel map: Argument list too long)"),
		       "%d calls, note %s", k.set_calls, note);
	}
	stacks_free(st);

	/* no set_python: the interpreter is still found, nothing is told */
	kern.set_python = NULL;
	st = stacks_new(&(struct stacks_opts){.inline_resolve = true});
	if (st && pp) {
		stacks_set_kernel(st, &kern);
		stacks_watch_pid(st, (uint32_t)child.pid);
		stacks_proc_note(st, (uint32_t)child.pid, note, sizeof(note));
		CHECKF(k.set_calls == 2 && strstr(note, "Python frames on"), "%s", note);
	}
	stacks_free(st);
	py_proc_free(pp);
	sym_proc_free(sp);
	sym_cache_free(c);
out:
	py_reap(&child);
}

int main(void)
{
	test_resolve_and_counts();
	test_thread_json_drain();
	test_ingero_json();
	test_eviction();
	test_exited();
	test_python_merge();
	test_kernel_fetch();
	test_kernel_set_python();
	stacks_free(NULL);
	return check_done("test_stacks");
}
