/* Processes held until their libraries are attached (bpf/libs.bpf.h:
 * hold): the handling of IGB_HOLD records, the processes attached late,
 * and the guardian that continues held processes should ingero-top die. */
#include "collect/collector_priv.h"

#include "collect/discover.h"
#include "core/log.h"
#include <linux/types.h>
#include "ingero.h"
#include "ingero.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "core/clock.h"

/* The longest a hold lasts: the guardian continues a process held longer
 * (ingero-top stopped with ^Z, blocked on a frozen terminal, overloaded),
 * and ingero-top then reports it as attached late. A hold normally takes
 * about a millisecond. */
#define HOLD_MAX_NS 1000000000ULL
#define GUARD_PERIOD_MS 100

/* The state letter of a thread ("R", "S", "T" ...); 0 when it is gone. */
static char thread_state(int pid, int tid)
{
	char path[64], buf[512];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* the name may hold anything */
	return p && p[1] == ' ' ? p[2] : 0;
}

/* The kernel sent SIGSTOP while the thread was still in the kernel (in
 * mmap or exec): it stops on the way back to user space, and only then is
 * the new mapping in place. Wait for that (bounded: a thread stuck in a
 * slow mmap is looked at anyway). */
static void wait_stopped(int pid, int tid)
{
	uint64_t end = ig_mono_ns() + HOLD_MAX_NS;
	useconds_t pause = 20;

	for (;;) {
		char st = thread_state(pid, tid);
		if (!st || st == 'T' || st == 't' || st == 'Z' || st == 'X')
			return;
		if (ig_mono_ns() > end) {
			log_msg(LOG_WARN, "process %d did not stop within 1 s of a hold", pid);
			return;
		}
		usleep(pause);
		if (pause < 2000)
			pause *= 2;
	}
}

/* Whether an `ig_held` map lists pid as held and not answered. Knows the
 * layout of this version (struct igb_held keys) and of the first one
 * (tgid keys, a time stamp as value, the top bit for "answered"). */
static bool lists_held(int fd, uint32_t key_size, int pid)
{
	struct igb_held k, next, *prev = NULL;
	uint8_t st;

	if (key_size == sizeof(uint32_t)) {
		uint32_t key = (uint32_t)pid;
		uint64_t v;
		return !bpf_map_lookup_elem(fd, &key, &v) && !(v >> 63);
	}
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (k.tgid == (uint32_t)pid && !bpf_map_lookup_elem(fd, &k, &st) && st == IGB_HELD)
			return true;
	}
	return false;
}

/* Whether another ingero-top (its own `ig_held` map) still holds pid. */
static bool held_elsewhere(int own_fd, int pid)
{
	struct bpf_map_info own = {0}, info;
	uint32_t id = 0, len = sizeof(own);
	bool found = false;

	if (bpf_obj_get_info_by_fd(own_fd, &own, &len))
		return false;
	while (!found && !bpf_map_get_next_id(id, &id)) {
		if (id == own.id)
			continue;
		int fd = bpf_map_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, "ig_held") &&
		    ((info.key_size == 4 && info.value_size == 8) ||
		     (info.key_size == sizeof(struct igb_held) && info.value_size == 1)))
			found = lists_held(fd, info.key_size, pid);
		close(fd);
	}
	return found;
}

/* Ends this instance's hold of pid made at ts (one entry per hold: a newer
 * hold of the process is left alone). When no other ingero-top holds it:
 * SIGCONT, then forget the hold (in that order, so that should ingero-top
 * die in between, the guardian still finds it). Otherwise the last one to
 * answer continues it: mark ours answered and look again (of two instances
 * that answer together, at least one sees the other done). Whether our
 * hold was still there (the guardian ends holds older than 1 s). */
static bool release_fd(int map_fd, int pid, uint64_t ts)
{
	struct igb_held k = {.tgid = (uint32_t)pid, .ts_ns = ts};
	uint8_t st, shared = IGB_HELD_SHARED;
	bool ours = !bpf_map_lookup_elem(map_fd, &k, &st);

	if (held_elsewhere(map_fd, pid)) {
		if (ours)
			bpf_map_update_elem(map_fd, &k, &shared, BPF_EXIST);
		if (held_elsewhere(map_fd, pid))
			return ours; /* the other one continues it, or our guardian */
	}
	kill(pid, SIGCONT);
	if (ours)
		bpf_map_delete_elem(map_fd, &k);
	return ours;
}

/* Our hold gone before we end it: the guardian ended it (held too long),
 * so the process ran before its libraries were attached. (Or it was
 * killed while held, rarer, and then nothing was missed: said anyway.) */
static void release(struct collector *c, int pid, uint64_t ts)
{
	if (!release_fd(bpf_map__fd(c->skel->maps.ig_held), pid, ts))
		coll_late(c, pid, "held over 1 s: continued before its libraries were attached",
			  true);
}

static const char *not_held_why(uint8_t flags)
{
	if (flags & IGB_HOLD_F_SKIPPED)
		return "not stopped: a job of an interactive shell";
	if (flags & IGB_HOLD_F_OFF)
		return "not stopped: holds are off";
	return "could not be stopped";
}

void coll_late(struct collector *c, int pid, const char *why, bool exact_why)
{
	int shown = c->nlate < MAX_LATE ? c->nlate : MAX_LATE;
	bool known = false;

	for (int i = 0; i < shown && !known; i++)
		known = c->late[i] == pid;
	if (known && !exact_why)
		return;
	if (!known) {
		if (c->nlate < MAX_LATE)
			c->late[c->nlate] = pid;
		c->nlate++;
	}
	char *n = c->notice[c->notice_gen % IG_STATUS_NOTES];
	snprintf(n, sizeof(c->notice[0]),
		 "attached to PID %d late (%s): its calls before now are not known", pid, why);
	/* to the status line (and so to stderr in batch mode); the same words
	 * again (a hold refused at each exec of the process) are not news */
	if (!c->notice_gen || strcmp(n, c->notice[(c->notice_gen - 1) % IG_STATUS_NOTES]))
		c->notice_gen++;
}

bool coll_holding(struct collector *c, int pid)
{
	return lists_held(bpf_map__fd(c->skel->maps.ig_held), sizeof(struct igb_held), pid);
}

void coll_hold(struct collector *c, const struct igb_event *b)
{
	int pid = (int)b->pid;
	bool stopped = b->flags & IGB_HOLD_F_STOPPED;
	bool not_held = b->flags & (IGB_HOLD_F_SKIPPED | IGB_HOLD_F_FAILED | IGB_HOLD_F_OFF);

	if (stopped)
		wait_stopped(pid, (int)b->tid);
	if (b->state == IGB_HOLD_EXEC || (b->flags & IGB_HOLD_F_NEW))
		coll_watch_loader(c, pid); /* a new program: maybe another loader */
	/* The maps (the libraries just loaded) and, when not examined yet, the
	 * executable (the CUDA runtime may be linked into it). */
	struct igb_file exe = {.dev = b->stream, .ino = b->dur_ns};
	uint8_t v;
	bool exe_known = !bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.resolved), &exe, &v);
	int n = exe_known ? discover_pid_maps(pid, coll_attach_found, c)
			  : discover_pid_libs(pid, coll_attach_found, c);
	coll_resolve_key(c, b->arg0, b->arg1);
	coll_resolve_key(c, b->stream, b->dur_ns);
	if (stopped) {
		char comm[IGB_COMM_LEN];
		release(c, pid, b->ts_ns);
		/* The name is the traced program's: printable bytes only. */
		for (size_t i = 0; i < sizeof(comm); i++)
			comm[i] =
			    b->comm[i] && (b->comm[i] < ' ' || b->comm[i] > '~') ? '?' : b->comm[i];
		comm[sizeof(comm) - 1] = 0;
		log_msg(LOG_INFO, "held %s[%d] for %.1f ms (%s)", comm, pid,
			(double)(ig_mono_ns() - b->ts_ns) / 1e6,
			b->state == IGB_HOLD_EXEC ? "a new program" : "libraries loaded");
		return;
	}
	if (!not_held)
		return; /* a new target whose files were all known */
	/* It ran on: the mapping may not be complete yet; look again soon. */
	if (b->state == IGB_HOLD_LOAD)
		coll_add_pending(c, pid, 0, true);
	if (b->state == IGB_HOLD_LOAD || n > 0)
		coll_late(c, pid, not_held_why(b->flags), true);
}

/* ---- the guardian ----------------------------------------------------------- */

static void continue_all(int map_fd)
{
	struct igb_held k, next;

	while (!bpf_map_get_next_key(map_fd, NULL, &next)) {
		k = next;
		kill((pid_t)k.tgid, SIGCONT);
		bpf_map_delete_elem(map_fd, &k);
	}
}

/* Ends the holds older than HOLD_MAX_NS: no process waits longer than that
 * for any ingero-top. One we have not answered (ingero-top stopped or
 * stuck) is continued; one we answered but left to another instance is
 * continued if that one still holds it. */
static void expire_holds(int map_fd)
{
	struct igb_held k, next, *prev = NULL;
	uint64_t now = ig_mono_ns();
	uint8_t st;

	while (!bpf_map_get_next_key(map_fd, prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(map_fd, &k, &st) || k.ts_ns > now ||
		    now - k.ts_ns < HOLD_MAX_NS)
			continue;
		if (st == IGB_HELD || held_elsewhere(map_fd, (int)k.tgid))
			kill((pid_t)k.tgid, SIGCONT);
		bpf_map_delete_elem(map_fd, &k);
		prev = NULL; /* deleted: start over (each pass removes one) */
	}
}

/* The guardian's life after ingero-top died: the dying process closes its
 * descriptors one by one (a perf-event uprobe can take a grace period to
 * close), and until the last link is gone its programs can still hold a
 * process, for instance one the guardian has just continued and that
 * execs. So wait until it has exited (its pidfd becomes readable after
 * its files are closed), continue everything, and once more after the
 * programs still running on other CPUs are done. */
static void guardian_after_death(int map_fd, int pidfd)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};

	continue_all(map_fd);
	while (pidfd >= 0) {
		int r = poll(&p, 1, 100);
		if (r > 0 || (r < 0 && errno != EINTR))
			break;
		continue_all(map_fd); /* meanwhile, keep nothing stopped */
	}
	if (pidfd < 0)
		usleep(500000);
	continue_all(map_fd);
	usleep(50000);
	continue_all(map_fd);
}

/* The guardian: fd 0 the pipe from ingero-top, fd 1 the held map. Every
 * GUARD_PERIOD_MS it ends holds that last too long; a 'q' on the pipe is a
 * normal stop, its end without one the death of ingero-top. */
static void guardian_run(int pidfd)
{
	struct pollfd p = {.fd = 0, .events = POLLIN};
	char ch = 0;

	for (;;) {
		int r = poll(&p, 1, GUARD_PERIOD_MS);
		if (r < 0 && errno != EINTR)
			break;
		if (r > 0) {
			ssize_t n = read(0, &ch, 1);
			if (n == 1 && ch == 'q') { /* ingero-top is done and has let go */
				continue_all(1);
				return;
			}
			if (n == 0 || (n < 0 && errno != EINTR))
				break;
		}
		expire_holds(1);
	}
	guardian_after_death(1, pidfd);
}

int coll_guardian_start(struct collector *c)
{
	int p[2], map_fd = bpf_map__fd(c->skel->maps.ig_held);
	int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0); /* Linux 5.3 */

	c->guardian_fd = -1;
	if (pipe2(p, O_CLOEXEC)) {
		int e = errno;
		if (pidfd >= 0)
			close(pidfd);
		return -e;
	}
	pid_t g = fork();
	if (g < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		if (pidfd >= 0)
			close(pidfd);
		return -e;
	}
	if (g == 0) {
		/* Keep the pipe's read end (fd 0), the held map (fd 1) and
		 * ingero-top's pidfd (fd 2); close everything else (the BPF
		 * links must die with ingero-top). */
		static const int ignore[] = {SIGINT,  SIGTERM, SIGHUP,	SIGQUIT, SIGTSTP,
					     SIGTTIN, SIGTTOU, SIGUSR1, SIGPIPE};
		for (size_t i = 0; i < sizeof(ignore) / sizeof(ignore[0]); i++)
			signal(ignore[i], SIG_IGN);
		prctl(PR_SET_NAME, "ingero-top-hold");
		if (dup2(p[0], 0) < 0 || dup2(map_fd, 1) < 0 || (pidfd >= 0 && dup2(pidfd, 2) < 0))
			_exit(1);
		close_range(3, ~0U, 0);
		guardian_run(pidfd >= 0 ? 2 : -1);
		_exit(0);
	}
	close(p[0]);
	if (pidfd >= 0)
		close(pidfd);
	c->guardian = g;
	c->guardian_fd = p[1];
	return 0;
}

void coll_release_all(struct collector *c)
{
	if (c->skel)
		continue_all(bpf_map__fd(c->skel->maps.ig_held));
}

void coll_guardian_stop(struct collector *c)
{
	if (c->guardian_fd >= 0) {
		if (write(c->guardian_fd, "q", 1) != 1)
			log_msg(LOG_WARN, "cannot stop the guardian: %s", strerror(errno));
		close(c->guardian_fd);
	}
	c->guardian_fd = -1;
	if (c->guardian > 0)
		waitpid(c->guardian, NULL, 0);
	c->guardian = 0;
}
