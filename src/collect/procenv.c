/* The traced processes' CUDA and PyTorch settings from their environment
 * (procenv.h). */
#include "collect/procenv.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "collect/cpuaff.h"
#include "collect/elfsym.h"

#define ENV_MAX 4096 /* variables read at most */
#define VAR_READ 40  /* bytes read of each: the longest name and its value */
#define BATCH 64     /* strings per process_vm_readv */

static const struct {
	const char *name; /* with its '=' */
	uint32_t flag;
} known[] = {
    {"CUDA_LAUNCH_BLOCKING=", IG_ENV_LAUNCH_BLOCKING},
    {"PYTORCH_NO_CUDA_MEMORY_CACHING=", IG_ENV_NO_ALLOC_CACHE},
};

/* CUDA and PyTorch take "1" (CUDA: "Disables (when set to 1) or enables
 * (when set to 0) asynchronous kernel launches"); anything else is off. */
uint32_t procenv_var(const char *s, size_t len)
{
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		size_t l = strlen(known[i].name);
		if (len >= l + 1 && !memcmp(s, known[i].name, l) && s[l] == '1' &&
		    (len == l + 1 || !s[l + 1]))
			return known[i].flag;
	}
	return 0;
}

static int read_remote(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};
	ssize_t n = process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0);
	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EFAULT;
}

/* The address of environ in the file mapped first at start in pid (seen
 * through the process's root: containers), 0 when it defines none. */
static uint64_t environ_in(uint32_t pid, const char *file, uint64_t start)
{
	static const char *const names[] = {"__environ", "environ", "_environ"};
	char path[480];
	uint64_t v[3], base = 0;
	snprintf(path, sizeof(path), "/proc/%u/root%s", pid, file);
	if (elfsym_values(path, names, 3, v) <= 0 || elfsym_load_base(path, &base))
		return 0;
	uint64_t sym = v[0] ? v[0] : v[1] ? v[1] : v[2];
	return sym >= base ? start + (sym - base) : 0;
}

/* Where pid's environ pointer lives: in the executable when it refers to
 * environ itself (the linker then copies the variable there, and the C
 * library uses that copy), else in the C library. at[0], at[1]: 0 none. */
static void environ_addrs(uint32_t pid, uint64_t at[2])
{
	char path[96], line[512], exe[400] = "";
	at[0] = at[1] = 0;
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	ssize_t n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && !(at[0] && at[1])) {
		unsigned long long lo, hi, off;
		int pos = 0;
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &lo, &hi, &off, &pos) != 3 ||
		    !pos || off)
			continue;
		char *file = line + pos, *nl = strchr(file, '\n');
		if (nl)
			*nl = 0;
		const char *base = strrchr(file, '/');
		base = base ? base + 1 : file;
		if (file[0] != '/')
			continue;
		if (!at[0] && exe[0] && !strcmp(file, exe))
			at[0] = environ_in(pid, file, lo);
		else if (!at[1] && (!strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5) ||
				    !strncmp(base, "ld-musl-", 8)))
			at[1] = environ_in(pid, file, lo);
	}
	fclose(f);
}

/* Up to BATCH pointers of the environ array from at: a read of them all,
 * else one at a time up to the first that cannot be read; 0 ends them. */
static void read_ptrs(uint32_t pid, uint64_t at, uint64_t *ptr)
{
	if (!read_remote(pid, at, ptr, BATCH * sizeof(*ptr)))
		return;
	for (int k = 0; k < BATCH; k++)
		if (read_remote(pid, at + (uint64_t)k * 8, &ptr[k], 8) || !ptr[k]) {
			ptr[k] = 0;
			return;
		}
}

/* The flag of the string at addr, whose first len bytes are in buf (len
 * short of VAR_READ at a page's end: the rest is read when it goes on). */
static uint32_t var_at(uint32_t pid, uint64_t addr, char *buf, size_t len)
{
	if (len < VAR_READ && !memchr(buf, 0, len) && !read_remote(pid, addr, buf, VAR_READ))
		len = VAR_READ;
	return procenv_var(buf, strnlen(buf, len));
}

/* The variables of the live environment: 0 with *flags, or -errno. */
static int read_live(uint32_t pid, uint32_t *flags)
{
	uint64_t at[2], envp = 0;
	environ_addrs(pid, at);
	for (int i = 0; i < 2 && !envp; i++)
		if (at[i] && read_remote(pid, at[i], &envp, sizeof(envp)))
			envp = 0;
	if (!envp)
		return -ENOENT;
	*flags = 0;
	for (int i = 0; i < ENV_MAX; i += BATCH) {
		uint64_t ptr[BATCH + 1];
		char buf[BATCH][VAR_READ];
		struct iovec l[BATCH], r[BATCH];
		int n = 0;
		ptr[BATCH] = 0;
		read_ptrs(pid, envp + (uint64_t)i * 8, ptr);
		/* each string up to its page's end: a read never crosses into a
		 * page that may not be mapped (the stack's top) */
		while (n < BATCH && ptr[n]) {
			size_t len = 4096 - (ptr[n] & 4095);
			r[n].iov_base = (void *)(uintptr_t)ptr[n];
			r[n].iov_len = len < VAR_READ ? len : VAR_READ;
			l[n].iov_base = buf[n];
			l[n].iov_len = r[n].iov_len;
			n++;
		}
		ssize_t got =
		    n ? process_vm_readv((pid_t)pid, l, (unsigned long)n, r, (unsigned long)n, 0)
		      : 0;
		for (int k = 0; k < n; k++) {
			size_t len = r[k].iov_len;
			if (got >= (ssize_t)len) /* read in the batch */
				got -= (ssize_t)len;
			else if ((got = 0), read_remote(pid, ptr[k], buf[k], len))
				continue; /* the batch stopped before it: alone */
			*flags |= var_at(pid, ptr[k], buf[k], len);
		}
		if (n < BATCH)
			return 0;
	}
	return 0;
}

/* What it was started with: /proc/PID/environ. */
static int read_initial(uint32_t pid, uint32_t *flags)
{
	char path[64], buf[65536];
	snprintf(path, sizeof(path), "/proc/%u/environ", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return -EIO;
	*flags = 0;
	for (ssize_t i = 0; i < n;) {
		const char *end = memchr(buf + i, 0, (size_t)(n - i));
		size_t len = end ? (size_t)(end - (buf + i)) : (size_t)(n - i);
		*flags |= procenv_var(buf + i, len);
		i += (ssize_t)len + 1;
	}
	return 0;
}

int procenv_read(uint32_t pid, uint32_t *flags, uint32_t *initial)
{
	int r = read_initial(pid, initial);
	if (r)
		*initial = 0;
	if (!read_live(pid, flags))
		return IG_ENV_SRC_LIVE;
	*flags = *initial;
	return r ? r : IG_ENV_SRC_INITIAL;
}

static struct procenv_proc *proc_of(struct procenv *pe, uint32_t pid)
{
	for (int i = 0; i < pe->n; i++)
		if (pe->p[i].pid == pid)
			return &pe->p[i];
	struct procenv_proc *p = NULL;
	for (int i = 0; i < pe->n && !p; i++) /* a process no longer followed makes room */
		if (pe->p[i].seen + 2 < pe->ticks)
			p = &pe->p[i];
	if (!p && pe->n < PROCENV_PROCS)
		p = &pe->p[pe->n++];
	if (p) {
		memset(p, 0, sizeof(*p));
		p->pid = pid;
		p->first = pe->ticks;
	}
	return p;
}

void procenv_tick(struct procenv *pe, const uint32_t *pids, int n, uint64_t now_ns, ig_emit_fn emit,
		  void *ctx)
{
	pe->ticks++;
	for (int i = 0; i < n; i++) {
		struct procenv_proc *p = proc_of(pe, pids[i]);
		if (!p)
			break;
		p->seen = pe->ticks;
		uint64_t age = pe->ticks - p->first;
		if (!age || (age > 10 && age % 5))
			continue;
		uint32_t flags, initial;
		int src = procenv_read(p->pid, &flags, &initial);
		if (src < 0)
			continue;
		struct cpuaff a;
		uint64_t cpus =
		    cpuaff_read(p->pid, &a) ? 0 : IG_CPUS_PACK(a.allowed, a.online, a.cpuset);
		int narrow = cpus && a.allowed < a.online; /* confined: worth saying */
		int changed = !p->src
				  ? (flags | initial) != 0 || narrow
				  : flags != p->flags || initial != p->initial || cpus != p->cpus;
		p->flags = flags;
		p->initial = initial;
		p->src = src;
		p->cpus = cpus;
		if (!changed && !((flags | initial || narrow) && pe->ticks >= p->sent + 10))
			continue;
		struct ig_event e;
		memset(&e, 0, sizeof(e));
		e.kind = IG_EV_ENV;
		e.ts_ns = now_ns;
		e.pid = e.tid = p->pid;
		e.arg0 = flags;
		e.arg1 = (uint64_t)src;
		e.arg2 = initial;
		e.stream = cpus;
		p->sent = pe->ticks;
		emit(ctx, &e);
	}
}
