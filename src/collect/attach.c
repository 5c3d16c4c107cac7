/* Attaching the live collector's uprobes: the CUDA API functions of each
 * library file (uprobe_multi links, or one perf-event uprobe per probe) and
 * the dynamic loader's _dl_debug_state for libraries loaded at run time. */
#include "collect/collector_priv.h"

#include "collect/elfsym.h"
#include "core/event.h"
#include <linux/types.h>
#include "ingero.h"
#include "ingero.skel.h"
#include "core/log.h"
#include "core/ops.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

int coll_add_link(struct collector *c, struct bpf_link *l)
{
	if (c->nlinks == c->caplinks) {
		int cap = c->caplinks ? c->caplinks * 2 : 64;
		struct bpf_link **n = realloc(c->links, sizeof(*n) * (size_t)cap);
		if (!n) {
			bpf_link__destroy(l);
			return -ENOMEM;
		}
		c->links = n;
		c->caplinks = cap;
	}
	c->links[c->nlinks++] = l;
	return 0;
}

/* BPF_LINK_CREATE for a uprobe_multi link (Linux 6.6). libbpf 1.1 has no
 * API for it, so the attribute is laid out here as in the kernel's uapi. */
#define IG_BPF_LINK_CREATE 28
#define IG_BPF_F_UPROBE_MULTI_RETURN 1

union ig_link_attr {
	struct {
		uint32_t prog_fd;
		uint32_t target_fd;
		uint32_t attach_type;
		uint32_t flags;
		struct {
			uint64_t path;
			uint64_t offsets;
			uint64_t ref_ctr_offsets;
			uint64_t cookies;
			uint32_t cnt;
			uint32_t flags;
			uint32_t pid;
		} um;
	} lc;
	char pad[160];
};

int collector_uprobe_multi_link(int prog_fd, const char *path, const uint64_t *offs,
				const uint64_t *cookies, int n, bool ret)
{
	union ig_link_attr a;

	memset(&a, 0, sizeof(a));
	a.lc.prog_fd = (uint32_t)prog_fd;
	a.lc.attach_type = IG_BPF_TRACE_UPROBE_MULTI;
	a.lc.um.path = (uint64_t)(uintptr_t)path;
	a.lc.um.offsets = (uint64_t)(uintptr_t)offs;
	a.lc.um.cookies = (uint64_t)(uintptr_t)cookies;
	a.lc.um.cnt = (uint32_t)n;
	a.lc.um.flags = ret ? IG_BPF_F_UPROBE_MULTI_RETURN : 0;
	int fd = (int)syscall(__NR_bpf, IG_BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

/* Attaches entry and return probes at all offsets of one file with two
 * uprobe_multi links: detaching them later costs one grace period, not one
 * per probe (perf-event uprobes took 12-25 s to detach for 100 probes).
 * Returns first: in a process already running, a call entered between the
 * two would otherwise leave a frame whose return never fires, and every
 * later off-CPU interval of the thread would count as inside a call. A
 * return without its entry is dropped (call_exit). */
static int attach_multi(struct collector *c, const char *path, const uint64_t *offs,
			const uint64_t *cookies, int n)
{
	struct bpf_program *ret =
	    c->stacks ? c->skel->progs.call_exit_stk : c->skel->progs.call_exit;
	int fe, fr;

	if (c->nmfds + 2 > 2 * MAX_LIBS)
		return -ENOSPC;
	fr = collector_uprobe_multi_link(bpf_program__fd(ret), path, offs, cookies, n, true);
	if (fr < 0) {
		fe = fr;
		goto fail_e;
	}
	fe = collector_uprobe_multi_link(bpf_program__fd(c->skel->progs.call_enter), path, offs,
					 cookies, n, false);
	if (fe < 0) {
		close(fr);
		goto fail_e;
	}
	c->mfds[c->nmfds++] = fe;
	c->mfds[c->nmfds++] = fr;
	c->nprobes += 2 * n;
	return 0;
fail_e:
	c->probes_failed += 2 * n;
	log_msg(LOG_WARN, "cannot attach %d uprobes in %s: %s", n, path, strerror(-fe));
	return fe;
}

static int attach_pair(struct collector *c, const char *path, uint64_t off, uint64_t cookie,
		       const char *sym)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookie);
	struct bpf_link *l;
	int err;

	uo.retprobe = true; /* the return first: attach_multi says why */
	l = bpf_program__attach_uprobe_opts(c->stacks ? c->skel->progs.call_exit_stk
						      : c->skel->progs.call_exit,
					    -1, path, off, &uo);
	if (!l) {
		err = -errno;
		goto fail;
	}
	coll_add_link(c, l);
	c->nprobes++;
	uo.retprobe = false;
	l = bpf_program__attach_uprobe_opts(c->skel->progs.call_enter, -1, path, off, &uo);
	if (!l) {
		err = -errno;
		goto fail;
	}
	coll_add_link(c, l);
	c->nprobes++;
	return 0;
fail:
	c->probes_failed++;
	log_msg(LOG_WARN, "cannot attach uprobe %s in %s: %s", sym, path, strerror(-err));
	return err;
}

uint64_t coll_kdev(dev_t d)
{
	return ((uint64_t)major(d) << 20) | minor(d);
}

void coll_resolve_key(struct collector *c, uint64_t kdev, uint64_t ino)
{
	struct igb_file k = {.dev = kdev, .ino = ino};
	uint8_t one = 1;

	if (ino)
		bpf_map_update_elem(bpf_map__fd(c->skel->maps.resolved), &k, &one, BPF_ANY);
}

void coll_resolve_path(struct collector *c, const char *path)
{
	struct stat sb;

	if (!stat(path, &sb))
		coll_resolve_key(c, coll_kdev(sb.st_dev), sb.st_ino);
}

/* Every symbol of every op, in one list (one pass over the file's symbol
 * tables instead of one per op): names[first[op] .. first[op + 1]). */
struct op_syms {
	const char *names[IG_OP_MAX * 6];
	int first[IG_OP_MAX + 1];
	int n;
};

static void op_syms_fill(struct op_syms *t)
{
	t->n = 0;
	for (int op = 0; op < IG_OP_MAX; op++) {
		t->first[op] = t->n;
		if (op == IG_OP_NONE)
			continue;
		const struct ig_op_info *oi = ig_op_info(op);
		for (int k = 0; k < 6 && oi->symbols[k]; k++)
			t->names[t->n++] = oi->symbols[k];
	}
	t->first[IG_OP_MAX] = t->n;
}

/* Whether the kernel can place a uprobe on the instruction at off of the
 * open file fd: x86's uprobes refuse an instruction with a segment or LOCK
 * prefix (arch/x86/kernel/uprobes.c: is_prefix_bad), and a uprobe_multi
 * link with one such offset fails as a whole, losing every probe of the
 * file. An unreadable file is given the benefit of the doubt. */
static bool probe_ok(int fd, uint64_t off)
{
	unsigned char b[15];
	ssize_t n = fd < 0 ? -1 : pread(fd, b, sizeof(b), (off_t)off);
	for (ssize_t i = 0; i < n; i++) {
		switch (b[i]) {
		case 0x26:
		case 0x2e:
		case 0x36:
		case 0x3e:
		case 0xf0: /* ES CS SS DS LOCK */
			return false;
		case 0x64:
		case 0x65:
		case 0x66:
		case 0x67:
		case 0xf2:
		case 0xf3:
			continue; /* other legacy prefixes: the next byte decides */
		default:
			return true;
		}
	}
	return true;
}

/* The probes of one op at offs[0..nsym): one per distinct address (aliases
 * at the same address are one function). 1 when any was attached, 0 when
 * the file has none of its symbols, -1 when it has but none could be. */
static int attach_op(struct collector *c, struct lib *lib, int op, const uint64_t *offs, int nsym,
		     uint64_t *m_offs, uint64_t *m_cookies, int *nm, int fd)
{
	const struct ig_op_info *oi = ig_op_info(op);
	uint64_t seen[6];
	int nseen = 0, refused = 0;
	bool attached = false;

	for (int k = 0; k < nsym && k < 6; k++) {
		bool dup = false;
		if (!offs[k])
			continue;
		for (int j = 0; j < nseen; j++)
			dup |= seen[j] == offs[k];
		if (dup)
			continue;
		seen[nseen++] = offs[k];
		if (!probe_ok(fd, offs[k])) {
			c->probes_failed += 2;
			refused = 1;
			log_msg(
			    LOG_WARN,
			    "cannot attach uprobe %s in %s: it starts with an instruction uprobes "
			    "refuse (a LOCK or segment prefix)",
			    oi->symbols[k], lib->path);
			continue;
		}
		uint64_t cookie = IGB_COOKIE(op, oi->argmode, oi->dir);
		if (c->multi) { /* attached together by the caller */
			m_offs[*nm] = offs[k];
			m_cookies[(*nm)++] = cookie;
		} else if (attach_pair(c, lib->path, offs[k], cookie, oi->symbols[k])) {
			continue;
		}
		attached = true;
		lib->probes += 2;
	}
	return attached ? 1 : refused ? -1 : 0;
}

/* Attaches every op variant that path exports. Returns the number of ops
 * attached, 0 when the file has none of the symbols, -errno when it cannot
 * be read. A file already attached (same device and inode) returns its
 * previous count. The file is marked resolved whatever the outcome: a
 * target that maps it is not held for it again. */
int coll_attach_lib(struct collector *c, const char *path)
{
	static struct op_syms syms;
	uint64_t offs[IG_OP_MAX * 6], m_offs[IG_OP_MAX * 6], m_cookies[IG_OP_MAX * 6];
	struct stat sb;
	struct lib *lib;
	int nops = 0, nm = 0;

	if (stat(path, &sb))
		return -errno;
	coll_resolve_key(c, coll_kdev(sb.st_dev), sb.st_ino);
	for (int i = 0; i < c->nlibs; i++)
		if (c->libs[i].dev == sb.st_dev && c->libs[i].ino == sb.st_ino)
			return c->libs[i].nops;
	if (c->nlibs == MAX_LIBS) {
		log_msg(LOG_WARN, "too many CUDA libraries, not attaching %s", path);
		return -ENOSPC;
	}
	if (!syms.n)
		op_syms_fill(&syms);
	int r = elfsym_offsets(path, syms.names, syms.n, offs);
	if (r <= 0)
		return r;
	lib = &c->libs[c->nlibs];
	memset(lib, 0, sizeof(*lib));
	lib->dev = sb.st_dev;
	lib->ino = sb.st_ino;
	snprintf(lib->path, sizeof(lib->path), "%s", path);

	bool absent[IG_OP_MAX] = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	for (int op = IG_OP_NONE + 1; op < IG_OP_MAX; op++) {
		int f = syms.first[op];
		int got = attach_op(c, lib, op, offs + f, syms.first[op + 1] - f, m_offs, m_cookies,
				    &nm, fd);
		if (got > 0) {
			nops++;
			lib->ops[ig_op_lib(op)]++;
		} else if (!got) {
			absent[op] = true;
		}
	}
	/* missing: the ops of the APIs this file provides that it lacks */
	for (int op = IG_OP_NONE + 1; op < IG_OP_MAX; op++) {
		if (!absent[op] || !lib->ops[ig_op_lib(op)])
			continue;
		size_t len = strlen(lib->missing);
		snprintf(lib->missing + len, sizeof(lib->missing) - len, "%s%s", len ? " " : "",
			 ig_op_name(op));
	}
	lib->nops = nops;
	if (fd >= 0)
		close(fd);
	if (!nops)
		return 0;
	if (c->multi) {
		r = attach_multi(c, path, m_offs, m_cookies, nm);
		if (r)
			return r;
	}
	c->nlibs++;
	if (lib->missing[0])
		c->probes_missing += 1;
	log_msg(LOG_INFO, "attached %d ops (%d probes) in %s", nops, lib->probes, path);
	return nops;
}

void coll_attach_found(void *ctx, const char *path, int pid)
{
	struct collector *c = ctx;
	int r = coll_attach_lib(c, path);
	if (r == 0)
		log_msg(LOG_INFO, "%s exports no traced CUDA symbol", path);
}

/* Watches the dynamic loader of pid (the ELF interpreter of its
 * executable; pid 0: ingero-top's own, the host's) for libraries loaded at
 * run time: a uprobe on _dl_debug_state (bpf/libs.bpf.h dl_change). Once
 * per loader file; statically linked executables have none. */
int collector_loader_hook(int pid, char *path, size_t len, uint64_t *off)
{
	static const char *const sym[] = {"_dl_debug_state"};
	char exe[64], interp[PATH_MAX];

	snprintf(exe, sizeof(exe), pid ? "/proc/%d/exe" : "/proc/self/exe", pid);
	if (elfsym_interp(exe, interp, sizeof(interp)) != 1 || interp[0] != '/')
		return -ENOENT;
	if (pid)
		snprintf(path, len, "/proc/%d/root%s", pid, interp);
	else
		snprintf(path, len, "%s", interp);
	return elfsym_offsets(path, sym, 1, off) == 1 ? 0 : -ENOSYS;
}

int64_t collector_rdebug_delta(const char *loader)
{
	static const char *const sym[] = {"_dl_debug_state", "_r_debug"};
	uint64_t v[2];

	if (elfsym_values(loader, sym, 2, v) != 2)
		return 0;
	return (int64_t)(v[1] - v[0]);
}

void coll_watch_loader(struct collector *c, int pid)
{
	char path[PATH_MAX + 64];
	struct stat sb;
	uint64_t off = 0;
	int r = collector_loader_hook(pid, path, sizeof(path), &off);

	if (r == -ENOENT || stat(path, &sb))
		return;
	for (int i = 0; i < c->nloaders; i++)
		if (c->loaders[i].dev == sb.st_dev && c->loaders[i].ino == sb.st_ino)
			return;
	if (c->nloaders == MAX_LOADERS)
		return;
	c->loaders[c->nloaders].dev = sb.st_dev;
	c->loaders[c->nloaders].ino = sb.st_ino;
	c->nloaders++; /* also when it fails: not tried again */
	const char *interp = strstr(path, "/root/") && pid ? strstr(path, "/root/") + 5 : path;
	if (r) {
		log_msg(LOG_INFO,
			"%s has no _dl_debug_state: libraries loaded at run time are found "
			"by the periodic rescan",
			interp);
		return;
	}
	uint64_t cookie = c->walk ? (uint64_t)collector_rdebug_delta(path) : 0;
	struct bpf_program *prog =
	    c->walk ? c->skel->progs.dl_change : c->skel->progs.dl_change_hint;
	const char *how = "held until attached";
	if (!c->walk)
		how = "attached when seen: the kernel cannot read the loader's objects";
	else if (!cookie)
		how = "attached when seen: no _r_debug";
	else if (!c->hold_on)
		how = "attached when seen: holds off";
	if (c->multi) {
		int fd = collector_uprobe_multi_link(bpf_program__fd(prog), path, &off, &cookie, 1,
						     false);
		if (fd >= 0) {
			c->ldfds[c->nldfds++] = fd;
			c->loader_walk += cookie != 0;
			log_msg(LOG_INFO, "watching %s for libraries loaded at run time (%s)",
				interp, how);
			return;
		}
		log_msg(LOG_WARN, "cannot watch %s: %s", interp, strerror(-fd));
		return;
	}
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = cookie);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, -1, path, (size_t)off, &uo);
	if (!l) {
		log_msg(LOG_WARN, "cannot watch %s: %s", interp, strerror(errno));
		return;
	}
	coll_add_link(c, l);
	c->loader_walk += cookie != 0;
	log_msg(LOG_INFO, "watching %s for libraries loaded at run time (%s)", interp, how);
}

struct detach_job {
	struct bpf_link **links;
	int n, next;
	pthread_mutex_t lock;
};

static void *detach_worker(void *arg)
{
	struct detach_job *j = arg;
	for (;;) {
		pthread_mutex_lock(&j->lock);
		int i = j->next++;
		pthread_mutex_unlock(&j->lock);
		if (i >= j->n)
			return NULL;
		bpf_link__destroy(j->links[i]);
	}
}

/* Detaching a uprobe waits for an SRCU grace period in the kernel (tens to
 * hundreds of ms on a VM), one link after the other: 100 probes took 12-25 s
 * to detach serially. Detaching from several threads lets the waits overlap. */
int coll_attach_ticks(struct collector *c)
{
	int ncpu = libbpf_num_possible_cpus(), n = 0, r = 0;
	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct perf_event_attr a = {.type = PERF_TYPE_SOFTWARE,
					    .size = sizeof(a),
					    .config = PERF_COUNT_SW_CPU_CLOCK,
					    .sample_period = KTICK_NS};
		int fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) { /* an offline CPU: the others still count */
			r = -errno;
			continue;
		}
		struct bpf_link *l = bpf_program__attach_perf_event(c->skel->progs.w_tick, fd);
		if (!l) {
			r = -errno;
			close(fd);
			continue;
		}
		coll_add_link(c, l); /* the link closes the event with it */
		n++;
	}
	return n ? n : r;
}

void coll_destroy_links(struct bpf_link **links, int n)
{
	struct detach_job j = {.links = links, .n = n, .lock = PTHREAD_MUTEX_INITIALIZER};
	pthread_t t[DETACH_THREADS];
	int started = 0;

	for (int i = 0; i < DETACH_THREADS && i < n / 4 + 1; i++)
		if (!pthread_create(&t[started], NULL, detach_worker, &j))
			started++;
	detach_worker(&j);
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
}
