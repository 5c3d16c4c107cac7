/* Symbolisation throughput, for tests/bench/bench_stacks.sh (no root):
 *   1. cold: reading the symbol tables of the libraries this process maps
 *      (libc, libstdc++, libpython when present), per file;
 *   2. warm: sym_resolve of random return addresses in those files;
 *   3. stacks: distinct 24-frame stacks through the stacks module (inline);
 *   4. CPython: code objects decoded (cold) and frames of a 30-deep stack
 *      resolved again (cached) in a live interpreter.
 *
 *   symbench [ADDRESSES] */
#include "stacks/pyframes.h"
#include "stacks/stacks.h"
#include "stacks/symbolize.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct range {
	uint64_t start, end;
	char path[256];
};

static struct range ranges[256];
static int nranges;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void read_ranges(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	while (f && fgets(line, sizeof(line), f) && nranges < 256) {
		unsigned long long s, e;
		char perms[8], path[256] = "";
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %255s", &s, &e, perms, path) < 3)
			continue;
		if (!strchr(perms, 'x') || path[0] != '/')
			continue;
		ranges[nranges] = (struct range){s, e, ""};
		snprintf(ranges[nranges].path, sizeof(ranges[nranges].path), "%s", path);
		nranges++;
	}
	if (f)
		fclose(f);
}

static uint64_t rnd(void)
{
	static uint64_t x = 88172645463325252ull;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

static uint64_t random_addr(void)
{
	const struct range *r = &ranges[rnd() % (uint64_t)nranges];
	return r->start + 1 + rnd() % (r->end - r->start - 1);
}

static void bench_python(void)
{
	const char *pys[] = {"/usr/bin/python3.11", "/root/.pyenv/versions/3.12.1/bin/python3.12"};
	for (int k = 0; k < 2; k++) {
		if (access(pys[k], X_OK))
			continue;
		int in[2], out[2];
		if (pipe(in) || pipe(out))
			return;
		pid_t pid = fork();
		if (pid == 0) {
			dup2(in[0], 0);
			dup2(out[1], 1);
			execl(pys[k], pys[k], "-S", "-c",
			      "import sys\n"
			      "def f(n):\n"
			      "    if n: return f(n - 1)\n"
			      "    sys.stdout.write('r\\n'); sys.stdout.flush(); "
			      "sys.stdin.readline()\n"
			      "f(29)\n",
			      (char *)NULL);
			_exit(127);
		}
		char c[4];
		if (read(out[0], c, sizeof(c)) > 0) {
			struct sym_cache *sc = sym_cache_new(0);
			int err;
			struct sym_proc *sp = sym_proc_capture(sc, pid, &err);
			struct py_proc *pp = NULL;
			if (sp && !py_detect(sc, sp, &pp, NULL, 0)) {
				struct igb_pyframe fr[IGB_PY_MAX];
				struct py_frame pf;
				int n = py_walk_thread(pp, pid, fr, IGB_PY_MAX), rounds = 2000;
				double t0 = now_s();
				for (int i = 0; i < n; i++)
					py_resolve(pp, fr[i].code, fr[i].instr, &pf);
				double cold = now_s() - t0;
				t0 = now_s();
				for (int r = 0; r < rounds; r++)
					for (int i = 0; i < n; i++)
						py_resolve(pp, fr[i].code, fr[i].instr, &pf);
				double warm = now_s() - t0;
				printf("python %s: a %d-frame stack (2 code objects): first "
				       "resolution %.1f us, then %.0f frames/s from the cache\n",
				       pys[k], n, cold * 1e6, n * rounds / warm);
			}
			py_proc_free(pp);
			sym_proc_free(sp);
			sym_cache_free(sc);
		}
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200000, err;
	const char *extra[] = {"libstdc++.so.6", "libpython3.11.so.1.0"};

	for (int i = 0; i < 2; i++)
		dlopen(extra[i], RTLD_NOW | RTLD_GLOBAL);
	read_ranges();

	/* 1. cold loads, per file. */
	struct sym_cache *c = sym_cache_new(0);
	struct sym_proc *p = sym_proc_capture(c, getpid(), &err);
	struct sym_info si;
	if (!p)
		return 1;
	double total_cold = 0;
	for (int i = 0; i < nranges; i++) {
		bool seen = false;
		for (int k = 0; k < i; k++)
			seen |= !strcmp(ranges[k].path, ranges[i].path);
		if (seen)
			continue;
		struct sym_cache_stats a, b;
		sym_cache_stats(c, &a);
		double t0 = now_s();
		sym_resolve(c, p, ranges[i].start + 16, true, &si);
		double dt = now_s() - t0;
		sym_cache_stats(c, &b);
		total_cold += dt;
		printf("load %-60s %7.2f ms  %6" PRIu64 " KiB of symbols%s\n", ranges[i].path,
		       dt * 1e3, (b.bytes - a.bytes) >> 10,
		       si.flags & SYM_F_DYNSYM ? " (dynsym only)" : "");
	}
	printf("cold total %.1f ms\n", total_cold * 1e3);

	/* 2. warm lookups. */
	int named = 0;
	double t0 = now_s();
	for (int i = 0; i < n; i++)
		named += sym_resolve(c, p, random_addr(), true, &si) == 0;
	double dt = now_s() - t0;
	printf("warm sym_resolve: %.0f addresses/s (%.2f us each, %.0f%% named, demangling "
	       "included)\n",
	       n / dt, dt * 1e6 / n, 100.0 * named / n);

	/* 3. whole stacks through the stacks module. */
	struct stacks *st = stacks_new(
	    &(struct stacks_opts){.inline_resolve = true, .no_python = true, .max_stacks = 8192});
	int nst = n / 24 > 8000 ? 8000 : n / 24;
	struct igb_stack raw;
	memset(&raw, 0, sizeof(raw));
	raw.nips = 24;
	t0 = now_s();
	for (int i = 0; i < nst; i++) {
		for (int k = 0; k < 24; k++)
			raw.ips[k] = random_addr();
		stacks_add_raw(st, (uint64_t)i + 1, (uint32_t)getpid(), &raw);
	}
	dt = now_s() - t0;
	printf("stacks: %.0f distinct 24-frame stacks/s resolved (%.1f us each)\n", nst / dt,
	       dt * 1e6 / nst);
	stacks_free(st);
	sym_proc_free(p);
	sym_cache_free(c);

	/* 4. CPython. */
	bench_python();
	return 0;
}
