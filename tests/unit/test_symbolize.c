/* Native symbolisation (src/stacks/symbolize.c): demangling, this PIE test program,
 * libc (dynsym only), a shared library loaded from a copy (build-id cache),
 * a stripped copy (degrades to an address, never a wrong name), a deleted
 * copy, a process that exited after its mappings were captured, and a
 * non-PIE executable from a maps text. Uses build/shim/libcuda.so.1. */
#include "stacks/symbolize.h"
#include "check.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/ig-sym.XXXXXX";
static char shim[512];

static const int known_line = __LINE__ + 1;
__attribute__((noinline)) int known_function(int x)
{
	asm volatile("" ::: "memory");
	return x * 3 + 1;
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	ssize_t n;
	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			return -1;
	close(in);
	close(out);
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);
	return s && a >= b && !strcmp(s + a - b, suffix);
}

static void test_demangle(void)
{
	char *s = sym_demangle("_ZN2ns5Klass6methodEi");
	CHECKF(s && !strcmp(s, "ns::Klass::method(int)"), "%s", s ? s : "(null)");
	free(s);
	s = sym_demangle("_ZN2at6nativeL9copy_implERNS_6TensorERKS1_b.isra.0");
	CHECKF(s && !strcmp(s, "at::native::copy_impl(at::Tensor&, at::Tensor const&, bool) [clone "
			       ".isra.0]"),
	       "%s", s ? s : "(null)");
	free(s);
	CHECK(sym_demangle("main") == NULL);
	CHECK(sym_demangle("_Znot a name((") == NULL);
	CHECK(sym_demangle(NULL) == NULL);
}

static void test_self(struct sym_cache *c)
{
	int err = 0;
	struct sym_proc *p = sym_proc_capture(c, getpid(), &err);
	struct sym_info si;

	CHECKF(p != NULL, "capture self: %d", err);
	if (!p)
		return;
	CHECK(sym_proc_nmaps(p) > 2);
	uint64_t a = (uint64_t)(uintptr_t)&known_function;
	int r = sym_resolve(c, p, a + 2, false, &si);
	CHECKF(r == 0 && si.name && !strcmp(si.name, "known_function") && si.off == 2,
	       "r=%d name=%s off=%llu", r, si.name ? si.name : "-", (unsigned long long)si.off);
	CHECKF(ends_with(si.path, "/test_symbolize"), "%s", si.path ? si.path : "-");
	/* A return address just past the function's first byte still counts. */
	r = sym_resolve(c, p, a + 1, true, &si);
	CHECK(r == 0 && si.name && !strcmp(si.name, "known_function") && si.off == 1);
	/* This test is built with -g: the line tables give the source line of
	 * the function (libdw), within its few lines here. */
	r = sym_resolve(c, p, a, false, &si);
	CHECKF(r == 0 && si.src_file && ends_with(si.src_file, "test_symbolize.c") &&
		   si.src_line >= known_line && si.src_line <= known_line + 4,
	       "source line: %s:%d (want test_symbolize.c:%d)", si.src_file ? si.src_file : "-",
	       si.src_line, known_line);
	/* libc has no line tables here: no line, the symbol all the same */
	void *gp1 = dlsym(RTLD_DEFAULT, "getpid");
	r = sym_resolve(c, p, (uint64_t)(uintptr_t)gp1 + 1, false, &si);
	CHECK(r == 0 && (si.src_file == NULL) == (si.src_line == 0));

	/* libc on Debian carries .dynsym only. */
	void *gp = dlsym(RTLD_DEFAULT, "getpid");
	r = sym_resolve(c, p, (uint64_t)(uintptr_t)gp + 1, false, &si);
	CHECKF(r == 0 && si.name && strstr(si.name, "getpid"), "libc getpid: r=%d %s", r,
	       si.name ? si.name : "-");
	CHECK(si.path && strstr(si.path, "libc"));

	/* No mapping at all. */
	r = sym_resolve(c, p, 16, false, &si);
	CHECK(r == -ESRCH && si.path == NULL && si.name == NULL);
	CHECK(!sym_proc_covers(p, 16) && sym_proc_covers(p, a));
	sym_proc_free(p);
}

/* Loads a copy of the shim driver library and resolves into it. */
static void test_library(struct sym_cache *c)
{
	char a[600], b[600], st[600], cmd[1400];
	struct sym_info si;
	struct sym_cache_stats s0, s1;
	int err;

	snprintf(a, sizeof(a), "%s/liba.so", tmpdir);
	snprintf(b, sizeof(b), "%s/libb.so", tmpdir);
	snprintf(st, sizeof(st), "%s/libstripped.so", tmpdir);
	CHECK(copy_file(shim, a) == 0 && copy_file(shim, b) == 0 && copy_file(shim, st) == 0);
	snprintf(cmd, sizeof(cmd), "strip --strip-all %s 2>/dev/null", st);
	int stripped = system(cmd) == 0;

	void *ha = dlopen(a, RTLD_NOW | RTLD_LOCAL), *hb = dlopen(b, RTLD_NOW | RTLD_LOCAL);
	void *hs = stripped ? dlopen(st, RTLD_NOW | RTLD_LOCAL) : NULL;
	CHECK(ha && hb);
	if (!ha || !hb)
		return;
	struct sym_proc *p = sym_proc_capture(c, getpid(), &err);
	CHECK(p != NULL);
	if (!p)
		return;
	sym_cache_stats(c, &s0);
	uint64_t fa = (uint64_t)(uintptr_t)dlsym(ha, "cuInit");
	uint64_t fb = (uint64_t)(uintptr_t)dlsym(hb, "cuInit");
	int r = sym_resolve(c, p, fa + 2, true, &si);
	CHECKF(r == 0 && si.name && !strcmp(si.name, "cuInit") && si.off == 2, "r=%d %s", r,
	       si.name ? si.name : "-");
	CHECK(ends_with(si.path, "/liba.so") && !(si.flags & SYM_F_DYNSYM));
	r = sym_resolve(c, p, fb + 2, true, &si);
	CHECK(r == 0 && si.name && !strcmp(si.name, "cuInit"));
	sym_cache_stats(c, &s1);
	CHECKF(s1.reads - s0.reads == 1, "two copies, one build-id: %llu symbol table reads",
	       (unsigned long long)(s1.reads - s0.reads));
	CHECK(s1.build_id_hits > s0.build_id_hits);

	/* A static (local) function: in .symtab only. */
	uint64_t local = 0;
	r = sym_find_in(c, p, a, "drv_atfork_prepare", &local);
	CHECK(r == 0 && local > fa - (1 << 20) && local < fa + (1 << 20));
	r = sym_resolve(c, p, local + 1, true, &si);
	CHECK(r == 0 && si.name && !strcmp(si.name, "drv_atfork_prepare"));

	if (hs) {
		/* The stripped copy has the same build-id: with the full copy
		 * known, its static functions resolve too. */
		uint64_t fs = (uint64_t)(uintptr_t)dlsym(hs, "cuInit");
		r = sym_resolve(c, p, local - fa + fs + 1, true, &si);
		CHECK(r == 0 && si.name && !strcmp(si.name, "drv_atfork_prepare"));
		/* Alone: exported names resolve (dynsym); a static function gives
		 * no name rather than a wrong one. */
		struct sym_cache *alone = sym_cache_new(0);
		struct sym_proc *pa = alone ? sym_proc_capture(alone, getpid(), &err) : NULL;
		CHECK(pa != NULL);
		if (pa) {
			r = sym_resolve(alone, pa, fs + 2, true, &si);
			CHECK(r == 0 && si.name && !strcmp(si.name, "cuInit") &&
			      (si.flags & SYM_F_DYNSYM));
			uint64_t v_cuinit = si.file_vaddr;
			r = sym_resolve(alone, pa, local - fa + fs + 1, true, &si);
			CHECKF(r == -ENOENT && si.name == NULL &&
				   ends_with(si.path, "/libstripped.so"),
			       "stripped static function: r=%d name=%s", r,
			       si.name ? si.name : "-");
			/* ... with its place in the file, for "libstripped.so+0x..." */
			CHECK(si.file_vaddr - v_cuinit == local - fa + 1 - 2);
		}
		sym_proc_free(pa);
		sym_cache_free(alone);
	} else {
		CHECKF(0, "strip (binutils, with gcc) not available for the stripped-library case");
	}
	sym_proc_free(p);
}

/* A deleted file, and a process that exits before its stacks resolve. */
static void test_deleted_and_exited(struct sym_cache *c)
{
	char d[600], e[600];
	int fds[2], err;
	uint64_t addr[2] = {0, 0};
	struct sym_info si;

	snprintf(d, sizeof(d), "%s/libdeleted.so", tmpdir);
	snprintf(e, sizeof(e), "%s/libexited.so", tmpdir);
	CHECK(copy_file(shim, d) == 0 && copy_file(shim, e) == 0);
	CHECK(pipe(fds) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		void *hd = dlopen(d, RTLD_NOW | RTLD_LOCAL), *he = dlopen(e, RTLD_NOW | RTLD_LOCAL);
		unlink(d);
		uint64_t out[2] = {hd ? (uint64_t)(uintptr_t)dlsym(hd, "cuInit") : 0,
				   he ? (uint64_t)(uintptr_t)dlsym(he, "cuInit") : 0};
		if (write(fds[1], out, sizeof(out)) != sizeof(out))
			_exit(1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	CHECK(read(fds[0], addr, sizeof(addr)) == sizeof(addr));
	close(fds[0]);
	struct sym_cache *fresh = sym_cache_new(0);
	struct sym_proc *p = sym_proc_capture(c, pid, &err);
	struct sym_proc *p2 = fresh ? sym_proc_capture(fresh, pid, &err) : NULL;
	CHECK(p != NULL && p2 != NULL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (!p || !p2)
		return;
	/* Both resolve after the process is gone: the deleted file was read
	 * at capture, the other is reopened by path (same inode). */
	int r = sym_resolve(c, p, addr[0] + 3, true, &si);
	CHECKF(r == 0 && si.name && !strcmp(si.name, "cuInit") && (si.flags & SYM_F_DELETED),
	       "deleted: r=%d %s flags=%x", r, si.name ? si.name : "-", si.flags);
	CHECK(ends_with(si.path, "/libdeleted.so"));
	r = sym_resolve(c, p, addr[1] + 3, true, &si);
	CHECKF(r == 0 && si.name && !strcmp(si.name, "cuInit"), "exited: r=%d", r);

	/* A file replaced after the process exited is not trusted: an address,
	 * not a name from the new file. */
	unlink(e);
	CHECK(copy_file(shim, e) == 0);
	r = sym_resolve(fresh, p2, addr[1] + 3, true, &si);
	CHECKF(r == -ENOENT && !si.name && (si.flags & SYM_F_NOFILE), "replaced: r=%d flags=%x", r,
	       si.flags);
	r = sym_resolve(fresh, p2, addr[0] + 3, true, &si);
	CHECK(r == 0 && si.name && !strcmp(si.name, "cuInit"));
	sym_proc_free(p2);
	sym_proc_free(p);
	sym_cache_free(fresh);
	CHECK(sym_proc_capture(c, pid, &err) == NULL && err == -ESRCH);
}

/* A non-PIE executable (Debian's python3.11) from a maps text: file
 * addresses are process addresses. */
static void test_non_pie(struct sym_cache *c)
{
	const char *py = "/usr/bin/python3.11";
	char maps[1024];
	struct sym_info si;
	uint64_t a = 0, f = 0;
	const char *path = NULL;

	if (access(py, R_OK)) {
		/* Debian 12's python3 package (make deps) */
		CHECKF(0, "%s missing for the non-PIE case (install python3: make deps)", py);
		return;
	}
	/* Its text segment (readelf -l): file offset 0x1f000 at 0x41f000. */
	snprintf(maps, sizeof(maps),
		 "00400000-0041f000 r--p 00000000 00:00 0 %s\n"
		 "0041f000-006d2000 r-xp 0001f000 00:00 0 %s\n",
		 py, py);
	struct sym_proc *p = sym_proc_from_maps(c, 0, maps);
	CHECK(p && sym_proc_nmaps(p) == 1);
	if (!p)
		return;
	int r = sym_find(c, p, "_PyRuntime", "python", &a, &path);
	CHECKF(r == 0 && a >= 0x400000 && a < 0x2000000 && path && !strcmp(path, py),
	       "_PyRuntime r=%d at %llx", r, (unsigned long long)a);
	r = sym_find(c, p, "PyObject_Call", "python", &f, &path);
	CHECK(r == 0 && f >= 0x41f000 && f < 0x6d2000);
	r = sym_resolve(c, p, f + 4, true, &si);
	CHECKF(r == 0 && si.name && !strcmp(si.name, "PyObject_Call") && si.off == 4 &&
		   si.file_vaddr == f + 4,
	       "r=%d %s", r, si.name ? si.name : "-");
	CHECK(sym_find(c, p, "no_such_symbol_anywhere", "python", &a, &path) == -ENOENT);
	sym_proc_free(p);
}

int main(void)
{
	const char *build = getenv("BUILD");
	struct sym_cache *c = sym_cache_new(0);

	snprintf(shim, sizeof(shim), "%s/shim/libcuda.so.1", build ? build : "build");
	CHECK(c != NULL);
	test_demangle();
	test_self(c);
	if (mkdtemp(tmpdir) && !access(shim, R_OK)) {
		test_library(c);
		test_deleted_and_exited(c);
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
		if (system(cmd))
			printf("note: could not remove %s\n", tmpdir);
	} else {
		printf("note: %s missing, library cases skipped\n", shim);
	}
	test_non_pie(c);
	struct sym_cache_stats st;
	sym_cache_stats(c, &st);
	printf("files %llu, loaded %llu, reads %llu, %llu KiB of symbols, %llu lookups\n",
	       (unsigned long long)st.files, (unsigned long long)st.loaded,
	       (unsigned long long)st.reads, (unsigned long long)(st.bytes >> 10),
	       (unsigned long long)st.lookups);
	sym_cache_free(c);
	sym_cache_free(NULL);
	sym_proc_free(NULL);
	return check_done("test_symbolize");
}
