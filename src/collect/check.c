/* Host checks: privileges, kernel, BTF, ring buffer, tp_btf, uprobes, and
 * the CUDA libraries and processes present. */
#include "collect/check.h"

#include "collect/collector.h"
#include "collect/ksyms.h"
#include "collect/discover.h"
#include "collect/nvml.h"
#include "core/escape.h"
#include "core/log.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static int has_cap(int cap)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return 0;
	return !!(d[cap / 32].effective & (1u << (cap % 32)));
}

int check_privileges(char *why, size_t len)
{
	if (geteuid() == 0 || has_cap(CAP_SYS_ADMIN) || (has_cap(CAP_BPF) && has_cap(CAP_PERFMON)))
		return 0;
	snprintf(why, len,
		 "live tracing needs root (or CAP_BPF and CAP_PERFMON): run it with sudo, or "
		 "view a recording with --replay FILE.db");
	return -EPERM;
}

int check_btf(char *why, size_t len)
{
	if (!access("/sys/kernel/btf/vmlinux", R_OK))
		return 0;
	snprintf(why, len,
		 "this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): ingero-top needs a "
		 "kernel built with CONFIG_DEBUG_INFO_BTF=y (5.15 or later)");
	return -ENOENT;
}

/* The libraries found, one per file: the paths that name the same file
 * (symbolic links, the same directory by two names) are its aliases. */
#define LIBS_MAX 32
#define ALIASES_MAX 12
struct libs_seen {
	FILE *f;
	int n;
	struct {
		dev_t dev;
		ino_t ino;
		int naliases;
		char path[256];			 /* the file itself (its real path) */
		char aliases[ALIASES_MAX][256]; /* the names it was found by */
	} lib[LIBS_MAX];
};

static void print_lib(void *ctx, const char *path, int pid)
{
	struct libs_seen *ls = ctx;
	struct stat st;
	char real[PATH_MAX];
	int have = stat(path, &st) == 0;
	for (int i = 0; i < ls->n; i++) {
		if (have ? (ls->lib[i].dev != st.st_dev || ls->lib[i].ino != st.st_ino)
			 : strcmp(ls->lib[i].path, path))
			continue;
		int k = ls->lib[i].naliases;
		for (int j = 0; j < k; j++)
			if (!strcmp(ls->lib[i].aliases[j], path))
				return;
		if (strcmp(ls->lib[i].path, path) && k < ALIASES_MAX)
			snprintf(ls->lib[i].aliases[ls->lib[i].naliases++], 256, "%s", path);
		return;
	}
	if (ls->n >= LIBS_MAX)
		return;
	int i = ls->n++;
	ls->lib[i].dev = have ? st.st_dev : 0;
	ls->lib[i].ino = have ? st.st_ino : 0;
	ls->lib[i].naliases = 0;
	/* a path inside another process's root (/proc/PID/root/...) stays as it
	 * is: resolved here, it would name a file of this mount namespace */
	int own_ns = strncmp(path, "/proc/", 6) != 0;
	snprintf(ls->lib[i].path, 256, "%.255s",
		 have && own_ns && realpath(path, real) ? real : path);
	if (strcmp(ls->lib[i].path, path))
		snprintf(ls->lib[i].aliases[ls->lib[i].naliases++], 256, "%s", path);
}

/* GPU device meters: one line, whatever NVML does (a hanging call is left
 * behind after 3 s). */
static void check_nvml(FILE *f)
{
	struct nvml *nv = nvml_start(NULL, 1000);
	char nl[256] = "out of memory", nesc[1024];
	int ns = nv ? nvml_wait_ready(nv, 3000) : NVML_FAILED;
	if (nv)
		nvml_status(nv, nl, sizeof(nl), NULL);
	fprintf(f, "INFO %-14s %s%s\n", "nvml",
		ns == NVML_OK	      ? "device meters on: "
		: ns == NVML_STARTING ? "no device meters: NVML did not answer within 3 s: "
				      : "no device meters: ",
		esc_str(nesc, sizeof(nesc), nl, 0));
	nvml_stop(nv);
}

int check_run(FILE *f)
{
	char why[256];
	struct utsname u;
	int fail = 0, maj = 0, min = 0;

#define LINE(ok, what, ...)                                                                \
	do {                                                                               \
		fprintf(f, "%s %-14s ", (ok) ? "PASS" : "FAIL", what);                    \
		fprintf(f, __VA_ARGS__);                                                   \
		fputc('\n', f);                                                            \
		fail |= !(ok);                                                             \
	} while (0)

	int priv = check_privileges(why, sizeof(why));
	LINE(!priv, "privileges", "%s",
	     !priv ? (geteuid() == 0 ? "root" : "CAP_BPF and CAP_PERFMON") : why);
	uname(&u);
	sscanf(u.release, "%d.%d", &maj, &min);
	bool kok = maj > 5 || (maj == 5 && min >= 15);
	LINE(kok, "kernel", "%s %s (5.15 or later needed: ring buffer, uprobe cookies)", u.sysname,
	     u.release);
	int btf = check_btf(why, sizeof(why));
	LINE(!btf, "BTF", "%s", !btf ? "/sys/kernel/btf/vmlinux" : why);
	if (!priv) {
		int rb = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL);
		LINE(rb == 1, "ring buffer", "%s",
		     rb == 1 ? "BPF_MAP_TYPE_RINGBUF supported" : "not supported by this kernel");
		/* tp_btf: load the real programs once, as a live session would. */
		struct collector_opts o = { .target = COLL_PIDS, .no_system_libs = true };
		char err[256] = "";
		log_capture_libbpf(0);
		struct collector *c = btf ? NULL : collector_new(&o, err, sizeof(err));
		if (c) {
			struct ig_status st = { 0 };
			collector_status(c, &st);
			LINE(1, "tp_btf", "BPF programs load and attach (%d tracepoints)",
			     st.probes_attached);
			collector_free(c);
		} else {
			LINE(0, "tp_btf", "%s", btf ? "needs BTF" : err);
		}
	} else {
		LINE(0, "ring buffer", "cannot probe without privileges");
		LINE(0, "tp_btf", "cannot probe without privileges");
	}
	bool up = !access("/sys/bus/event_source/devices/uprobe", F_OK);
	LINE(up, "uprobes", "%s", up ? "uprobe PMU present" : "no uprobe PMU (CONFIG_UPROBE_EVENTS)");

	/* Degraded modes that need no action, said so that a user knows them. */
	uint64_t irq[4];
	ksym_irq_ranges(irq);
	fprintf(f, "INFO %-14s %s\n", "wakers",
		irq[1] ? "a wake-up from an interrupt is named [irq]"
		       : "a wake-up from an interrupt names the interrupted task "
			 "(/proc/kallsyms hides kernel addresses)");
	char ld[PATH_MAX + 64];
	uint64_t ldoff;
	int lr = collector_loader_hook(0, ld, sizeof(ld), &ldoff);
	if (lr)
		fprintf(f, "INFO %-14s %s\n", "dlopen",
			"no _dl_debug_state in the dynamic loader: libraries loaded at run time "
			"are found by the 2 s rescan");
	else if (!collector_rdebug_delta(ld))
		fprintf(f,
			"INFO %-14s libraries loaded at run time are seen at once, a few calls may "
			"be missed (_dl_debug_state but no _r_debug in %s)\n",
			"dlopen", ld);
	else
		fprintf(
		    f,
		    "INFO %-14s libraries loaded at run time are attached before their code runs "
		    "(_dl_debug_state, _r_debug in %s)\n",
		    "dlopen", ld);
	fprintf(f, "INFO %-14s %s\n", "holds",
		getenv("INGERO_TOP_NO_HOLD")
		    ? "off (INGERO_TOP_NO_HOLD): calls made before an attach are missed, and "
		      "counted as attached late"
		    : "a target that loads a CUDA library or starts a program not yet examined "
		      "is stopped (SIGSTOP) until its probes are live, about a millisecond, "
		      "1 s at most; jobs of interactive shells are not");

	check_nvml(f);
	static struct libs_seen ls;
	memset(&ls, 0, sizeof(ls));
	ls.f = f;
	discover_system_libs(print_lib, &ls);
	int pids[256];
	char esc[1024]; /* paths and names of other processes: untrusted */
	int np = discover_cuda_pids(pids, 256);
	for (int i = 0; i < np; i++)
		discover_pid_libs(pids[i], print_lib, &ls);
	fprintf(f, "%s %-14s %d found%s\n", ls.n ? "PASS" : "INFO", "CUDA libraries", ls.n,
		ls.n ? ":" : " (processes that load one later are found while running)");
	for (int i = 0; i < ls.n; i++) {
		fprintf(f, "     %-14s %s\n", "", esc_str(esc, sizeof(esc), ls.lib[i].path, 0));
		for (int k = 0; k < ls.lib[i].naliases; k++)
			fprintf(f, "     %-14s   also as %s\n", "",
				esc_str(esc, sizeof(esc), ls.lib[i].aliases[k], 0));
	}
	fprintf(f, "INFO %-14s %d process%s using CUDA%s\n", "processes", np, np == 1 ? "" : "es",
		np ? ":" : "");
	for (int i = 0; i < np; i++) {
		char path[64], comm[64] = "?";
		snprintf(path, sizeof(path), "/proc/%d/comm", pids[i]);
		FILE *cf = fopen(path, "re");
		if (cf) {
			if (fgets(comm, sizeof(comm), cf))
				comm[strcspn(comm, "\n")] = 0;
			fclose(cf);
		}
		fprintf(f, "     %-14s %d %s\n", "", pids[i], esc_str(esc, sizeof(esc), comm, 0));
	}
#undef LINE
	return fail ? 1 : 0;
}

static int libbpf_verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !libbpf_verbose)
		return 0;
	log_vmsg(level == LIBBPF_WARN ? LOG_WARN : LOG_DEBUG, fmt, ap);
	return 0;
}

void log_capture_libbpf(int verbose)
{
	libbpf_verbose = verbose;
	libbpf_set_print(libbpf_print);
}
