/* CPython frames (src/stacks/pyframes.c) against real interpreters: for every
 * CPython found (Debian's python3.11, pyenv's 3.10/3.11/3.12/3.13, and
 * IG_TEST_PYTHONS=path:path), a script blocks at a known line four frames
 * deep; the user-space walk with the version's offsets must give exactly
 * those frames (file, function, line) and the kernel's entry markers.
 * 3.13 must be refused with a note, never walked. No root needed: the
 * interpreters are our children. */
#include "stacks/pyframes.h"
#include "stacks/symbolize.h"
#include "check.h"

#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char script[] =
    "import sys\n"								     /* 1 */
    "def inner(x):\n"								     /* 2 */
    "    # the frame stays on the next line from 'ready' on\n"			     /* 3 */
    "    (sys.stdout.write('ready\\n'), sys.stdout.flush(), sys.stdin.readline())\n" /* 4 */
    "    return x\n"								     /* 5 */
    "class K:\n"								     /* 6 */
    "    def middle(self):\n"							     /* 7 */
    "        return inner(1) + 1\n"						     /* 8 */
    "def outer():\n"								     /* 9 */
    "    y = K()\n"								     /* 10 */
    "    return y.middle()\n"							     /* 11 */
    "outer()\n";								     /* 12 */

static char path[64];

static pid_t start(const char *py, int *to, int *from)
{
	int in[2], out[2];
	if (pipe(in) || pipe(out))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(py, py, "-S", path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	*to = in[1];
	*from = out[0];
	return pid;
}

static void test_one(struct sym_cache *c, const char *py)
{
	int to, from, err = 0;
	char buf[64] = "", note[256];
	pid_t pid = start(py, &to, &from);

	if (pid < 0)
		return;
	ssize_t n = read(from, buf, sizeof(buf) - 1);
	if (n <= 0 || strncmp(buf, "ready", 5)) {
		CHECKF(0, "%s did not start", py);
		goto out;
	}
	struct sym_proc *sp = sym_proc_capture(c, pid, &err);
	struct py_proc *p = NULL;
	CHECK(sp != NULL);
	if (!sp)
		goto out;
	int r = py_detect(c, sp, &p, note, sizeof(note));
	printf("%s: %s (%d)\n", py, note, r);
	if (strstr(py, "3.13") || strstr(py, "3.14")) {
		CHECKF(r == -ENOTSUP && strstr(note, "not supported") && !p, "%s: r=%d", py, r);
		sym_proc_free(sp);
		goto out;
	}
	CHECKF(r == 0 && p, "%s: detect r=%d %s", py, r, note);
	if (!p) {
		sym_proc_free(sp);
		goto out;
	}
	unsigned v = py_version_hex(p) >> 16;
	CHECK(v >= 0x030a && v <= 0x030c && py_offsets(p)->version == v);

	struct igb_pyframe f[IGB_PY_MAX];
	int nf = py_walk_thread(p, pid, f, IGB_PY_MAX);
	CHECKF(nf == 4, "%s: %d frames", py, nf);
	const char *want_func[4] = {"inner", v >= 0x030b ? "K.middle" : "middle", "outer",
				    "<module>"};
	int want_line[4] = {4, 8, 11, 12};
	for (int i = 0; i < nf && i < 4; i++) {
		struct py_frame pf;
		r = py_resolve(p, f[i].code, f[i].instr, &pf);
		CHECKF(r == 0 && !strcmp(pf.file, path) && !strcmp(pf.func, want_func[i]) &&
			   pf.line == want_line[i],
		       "%s frame %d: r=%d %s:%d in %s()", py, i, r, pf.file, pf.line, pf.func);
		/* The outermost frame ends a C-level evaluation loop call; in
		 * 3.11+ Python-to-Python calls share it, in 3.10 each has its own. */
		bool entry = f[i].code & IGB_PY_ENTRY;
		CHECKF(entry == (i == 3 || v == 0x030a), "%s frame %d entry=%d", py, i, entry);
	}
	/* Something that is not a code object is refused, not decoded. */
	struct py_frame pf;
	if (nf > 0)
		CHECKF(py_resolve(p, (f[0].code & ~7ull) + 8, 0, &pf) != 0 &&
			   py_resolve(p, 0, 0, &pf) == -EINVAL,
		       "%s: a non-code address decoded as %s %s", py, pf.file, pf.func);
	struct igb_pyproc cfg;
	py_bpf_config(p, &cfg);
	CHECK(cfg.runtime && cfg.frame_previous == py_offsets(p)->frame_previous);
	py_proc_free(p);
	sym_proc_free(sp);
out:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(to);
	close(from);
}

static void test_tables(void)
{
	/* 3.10: (bytes, line delta) pairs; -128 = no line. */
	const uint8_t t10[] = {6, 1, 4, 2, 2, (uint8_t)-128, 4, 3};
	CHECK(py_line_of(0x030a, t10, sizeof(t10), 10, 0) == 11);
	CHECK(py_line_of(0x030a, t10, sizeof(t10), 10, 5) == 11);
	CHECK(py_line_of(0x030a, t10, sizeof(t10), 10, 6) == 13);
	CHECK(py_line_of(0x030a, t10, sizeof(t10), 10, 10) == -1);
	CHECK(py_line_of(0x030a, t10, sizeof(t10), 10, 12) == 16);
	CHECK(py_line_of(0x030a, t10, sizeof(t10), 10, -2) == 10);
	/* 3.11: a one-line-delta-1 entry of 2 units (2 column bytes), a short
	 * form of 1 unit, a no-column entry of 3 units with delta -2 (svarint
	 * 5), a no-location entry. */
	const uint8_t t11[] = {
	    0x80 | 11 << 3 | 1, 4, 9, 0x80 | 0 << 3 | 0, 7, 0x80 | 13 << 3 | 2, 5,
	    0x80 | 15 << 3 | 0};
	CHECK(py_line_of(0x030b, t11, sizeof(t11), 20, 0) == 21);
	CHECK(py_line_of(0x030b, t11, sizeof(t11), 20, 2) == 21);
	CHECK(py_line_of(0x030b, t11, sizeof(t11), 20, 4) == 21);
	CHECK(py_line_of(0x030b, t11, sizeof(t11), 20, 6) == 19);
	CHECK(py_line_of(0x030b, t11, sizeof(t11), 20, 10) == 19);
	CHECK(py_line_of(0x030b, t11, sizeof(t11), 20, 12) == -1);
	CHECK(py_line_of(0x030c, t11, sizeof(t11), 20, 40) == -1);
	CHECK(py_offsets_for(0x030d) == NULL && py_offsets_for(0x0309) == NULL);
	CHECK(py_offsets_for(0x030a) && py_offsets_for(0x030b) && py_offsets_for(0x030c));
}

int main(void)
{
	struct sym_cache *c = sym_cache_new(0);
	const char *pats[] = {"/usr/bin/python3.1[0-9]", "/usr/local/bin/python3.1[0-9]",
			      "/root/.pyenv/versions/3.1*/bin/python3.1[0-9]"};
	char *extra = getenv("IG_TEST_PYTHONS") ? strdup(getenv("IG_TEST_PYTHONS")) : NULL;
	int tested = 0, err;

	test_tables();
	snprintf(path, sizeof(path), "/tmp/ig-pyframes-%d.py", (int)getpid());
	FILE *f = fopen(path, "w");
	CHECK(f && fwrite(script, 1, sizeof(script) - 1, f) == sizeof(script) - 1);
	if (f)
		fclose(f);

	/* Not a Python process. */
	struct sym_proc *self = sym_proc_capture(c, getpid(), &err);
	struct py_proc *none = NULL;
	CHECK(self && py_detect(c, self, &none, NULL, 0) == -ENOENT && !none);
	sym_proc_free(self);

	for (size_t k = 0; k < sizeof(pats) / sizeof(pats[0]); k++) {
		glob_t g;
		if (glob(pats[k], 0, NULL, &g))
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++, tested++)
			test_one(c, g.gl_pathv[i]);
		globfree(&g);
	}
	for (char *s = extra, *save = NULL, *t; extra && (t = strtok_r(s, ":", &save));
	     s = NULL, tested++)
		test_one(c, t);
	free(extra);
	/* Debian's python3 (a build dependency, make deps) is one of them */
	CHECKF(tested > 0, "no CPython 3.1x found (install python3: make deps)");
	unlink(path);
	sym_cache_free(c);
	return check_done("test_pyframes");
}
