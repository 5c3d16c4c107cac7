/* What the chains of the kernel's evidence say (core/waits.h): a lock or
 * condition and the thread that let go of it, the GIL and its holder, a
 * full pipe and its slow reader, the network and its peer, a CPU quota,
 * file I/O and its device, cold reads of a mapped file, memory pressure
 * (page faults: words_fault.c); and the classes worded anew by mechanism:
 * input waits (a data loader only when its workers feed the thread) and
 * loops paced by their own timer. Each recommendation fits its mechanism
 * and, where it is a command, does what it says when pasted. */
#include "detect/detect_int.h"

#include <stdio.h>
#include <string.h>

#include "core/fmt.h"
#include "core/waits.h"

const char *detect_thread_name(const struct ctx *x, const struct cause *c, char *b, size_t n)
{
	char p[40];
	if (!c->culprit_tid || (c->culprit_tid == c->culprit_pid && !c->culprit_self))
		return detect_who(b, n, c->culprit_comm,
				  c->culprit_pid); /* another process's main thread */
	if (c->culprit_self || !c->culprit_pid)
		detect_put(b, n, "%s (tid %u)", c->culprit_comm[0] ? c->culprit_comm : "?",
			   c->culprit_tid);
	else
		detect_put(
		    b, n, "%s (tid %u) of %s", c->culprit_comm[0] ? c->culprit_comm : "?",
		    c->culprit_tid,
		    detect_who(p, sizeof(p), detect_win_comm(x, c->culprit_pid), c->culprit_pid));
	return b;
}

/* A process's name in the window, "" when it is not there. */
const char *detect_win_comm(const struct ctx *x, uint32_t pid)
{
	for (int i = 0; i < x->w->nall; i++)
		if (x->w->all[i].pid == pid)
			return x->w->all[i].comm;
	return "";
}

/* The waker is a worker process of the feeder's: its child. */
static int worker_process(const struct ctx *x, uint32_t pid)
{
	for (int i = 0; i < x->w->nall; i++)
		if (x->w->all[i].pid == pid)
			return x->w->all[i].ppid == x->p->pid;
	return 0;
}

void detect_culprit_ev(struct finding *f, const struct cause *c)
{
	if (!c->culprit_pid && !c->culprit_tid)
		return;
	detect_ev(f, "culprit_share_pct", c->culprit_share * 100, "%");
	if (c->culprit_tid)
		detect_ev(f, "culprit_tid", c->culprit_tid, "");
}

/* Whether most of the feeder's time in part on its timeline (its last
 * off-CPU intervals, by duration) was in waits match says. */
static int tl_most(const struct ctx *x, int part, int (*match)(const struct ig_offcpu_rec *r))
{
	uint64_t yes = 0, all = 0;
	for (int i = 0; x->wp->nthr && i < x->wp->thr[0].ntl; i++) {
		const struct ig_offcpu_rec *r = &x->wp->thr[0].tl[i];
		if (r->part != part)
			continue;
		all += r->dur_ns;
		if (match(r))
			yes += r->dur_ns;
	}
	return all && yes * 2 > all;
}

/* A send: room in a socket's buffer (write, send, sendfile). */
static int is_send(const struct ig_offcpu_rec *r)
{
	int sys = IG_WAIT_SYS(r->wait);
	return sys == IG_SYS_SEND || sys == IG_SYS_WRITE || sys == IG_SYS_SPLICE ||
	       IG_WAIT_WFN(r->wait) == IG_WFN_SOCK_SEND;
}

/* A wait for a signal (sigwait, sigsuspend, pause, a signalfd read). */
static int is_signal(const struct ig_offcpu_rec *r)
{
	return IG_WAIT_SYS(r->wait) == IG_SYS_SIGNAL || IG_WAIT_FDK(r->wait) == IG_FDK_SIGNALFD;
}

/* A write to a character device: a terminal (a pty of ssh or tmux, a
 * console). */
static int is_tty(const struct ig_offcpu_rec *r)
{
	return IG_WAIT_FDK(r->wait) == IG_FDK_CHR;
}

/* --- another thread or task ---------------------------------------------- */

/* Whether most of the feeder's waits for another task (on its timeline)
 * were for a program it ran (ig_offcpu_rec.child): its end (wait4,
 * waitid), or its output (woken by a young child of another name); the
 * last such child in *last. */
static int child_waits(const struct ctx *x, const struct ig_offcpu_rec **last)
{
	uint64_t child = 0, all = 0;
	*last = NULL;
	for (int i = 0; x->wp->nthr && i < x->wp->thr[0].ntl; i++) {
		const struct ig_offcpu_rec *r = &x->wp->thr[0].tl[i];
		if (r->part != IG_PART_TASK_WAIT)
			continue;
		all += r->dur_ns;
		if (r->child) {
			child += r->dur_ns;
			if (!*last || r->ts_ns > (*last)->ts_ns)
				*last = r;
		}
	}
	return all && child * 2 > all;
}

/* The feeder runs a program each step and waits for it to end
 * (subprocess.run, os.system): each child wakes it once, at its exit. */
static void words_child_wait(struct ctx *x, const struct cause *c, struct finding *f,
			     const struct ig_offcpu_rec *last)
{
	char fn[64], cn[64], pct[16];
	detect_feeder_name(x, fn, sizeof(fn));
	detect_who(cn, sizeof(cn), last->other_comm, last->other_pid);
	fmt_pct(pct, sizeof(pct), c->impact);
	detect_put(f->c.summary, sizeof(f->c.summary),
		   "child-process wait in %s: blocked %s of its time on programs it started, until "
		   "they ended (the last: %s)",
		   fn, pct, cn);
	detect_put(f->c.explanation, sizeof(f->c.explanation),
		   "Between CUDA calls the feeding thread starts another program (or forks) and "
		   "waits for it: for its exit (wait4, waitid: subprocess.run, os.system, a shell "
		   "command) or for its output until it exits (subprocess.check_output, "
		   "capture_output=True, os.popen). The children ran while it waited, and the GPU "
		   "had nothing queued. Not a data loader: no worker produces ahead of it.");
	/* each step's child ends a wait once: the last one is the culprit
	 * named, the same live and in a replay (the top waker is any of them) */
	f->c.culprit_pid = last->other_pid;
	f->c.culprit_tid = 0;
	memcpy(f->c.culprit_comm, last->other_comm, sizeof(f->c.culprit_comm));
	detect_rec(f, "Do not wait for it in the loop (start it with subprocess.Popen and collect "
		      "it later, or from a thread), or run it every N steps instead of each");
	detect_rec(f,
		   "See which programs it starts, as they start: strace -f -qq -e trace=execve -e "
		   "signal=none -p %u",
		   x->p->pid);
}

static void detect_words_input(struct ctx *x, const struct cause *c, struct finding *f)
{
	char fn[64], cn[96], pct[16];
	const struct ig_offcpu_rec *last;
	if (child_waits(x, &last)) {
		words_child_wait(x, c, f, last);
		return;
	}
	detect_feeder_name(x, fn, sizeof(fn));
	detect_thread_name(x, c, cn, sizeof(cn));
	fmt_pct(pct, sizeof(pct), c->impact);
	int worker = c->culprit_pid && !c->culprit_self && worker_process(x, c->culprit_pid);
	if (worker)
		detect_put(
		    f->c.summary, sizeof(f->c.summary),
		    "data-loader wait on %s: %s blocked %s of its time until a worker fed it", cn,
		    fn, pct);
	else if (c->culprit_pid)
		detect_put(f->c.summary, sizeof(f->c.summary),
			   "input wait on %s%s: %s blocked %s of its time until it was sent data",
			   cn, c->culprit_self && !c->culprit_tid ? "'s own threads" : "", fn, pct);
	else
		detect_put(f->c.summary, sizeof(f->c.summary),
			   "input wait: %s blocked %s of its time waiting for another task", fn,
			   pct);
	detect_put(
	    f->c.explanation, sizeof(f->c.explanation),
	    "Between CUDA calls the feeding thread sleeps reading input (a pipe, a socket, an "
	    "eventfd, a poll) until a producer sends it%s%s; that producer woke it for %.0f%% of "
	    "the time. While it waits, the GPU has nothing queued: the producer does not keep up.",
	    c->culprit_pid ? ": " : "", c->culprit_pid ? cn : "", c->culprit_share * 100);
	detect_culprit_ev(f, c);
	if (worker) {
		detect_rec(
		    f,
		    "Make the workers keep up: more DataLoader workers (num_workers, at most the "
		    "free cores), persistent_workers=True, prefetch_factor >= 2");
		detect_rec(f,
			   "Make each batch cheaper to produce: decode/augment on the GPU (DALI, "
			   "torchvision.transforms.v2 on CUDA) or pre-process the dataset offline");
	} else {
		detect_rec(
		    f, "Make the producer keep up: give it more threads or processes, or cheaper "
		       "work per item, and queue several items ahead of the feeding thread");
	}
	if (c->culprit_pid)
		detect_rec(f,
			   "Look at what %s does (ingero-top process screen, its CPU and its own "
			   "waits): a slow or starved producer shows there",
			   cn);
}

/* The mechanism of the feeder's lock waits: futex, file lock, semaphore,
 * kernel lock (from its last waits on the timeline). */
static const char *lock_kind(const struct ctx *x)
{
	int futex = 0, flock = 0, sem = 0, klock = 0;
	for (int i = 0; x->wp->nthr && i < x->wp->thr[0].ntl; i++) {
		const struct ig_offcpu_rec *r = &x->wp->thr[0].tl[i];
		if (r->part != IG_PART_LOCK_WAIT)
			continue;
		int sys = IG_WAIT_SYS(r->wait);
		futex += sys == IG_SYS_FUTEX;
		flock += sys == IG_SYS_FLOCK;
		sem += sys == IG_SYS_SEMOP;
		klock += IG_WAIT_WFN(r->wait) == IG_WFN_KLOCK;
	}
	if (flock > futex && flock >= sem && flock >= klock)
		return "a file lock (flock, fcntl)";
	if (sem > futex && sem >= klock)
		return "a System V semaphore";
	if (klock > futex)
		return "a kernel lock (an inode's, the address space's)";
	return "a futex (a mutex, a condition variable, a Python lock or queue)";
}

/* What the call site of the feeder's lock waits says they were
 * (detect_set_lock_kind), IG_LOCK_UNKNOWN when nothing says. */
static int site_kind(const struct ctx *x)
{
	if (!x->d->lock_kind || !x->p->lock_stack)
		return IG_LOCK_UNKNOWN;
	return x->d->lock_kind(x->d->lock_kind_ctx, x->p->lock_stack, x->p->lock_wake_stack);
}

/* A lock another thread held (a mutex, a read-write lock: kind), or a
 * lock or condition nothing tells apart. */
static void words_lock_held(struct ctx *x, const struct cause *c, struct finding *f, int kind)
{
	int mutex = kind == IG_LOCK_MUTEX || kind == IG_LOCK_RWLOCK;
	char fn[64], cn[96], pct[16];
	detect_feeder_name(x, fn, sizeof(fn));
	detect_thread_name(x, c, cn, sizeof(cn));
	fmt_pct(pct, sizeof(pct), c->impact);
	detect_put(f->c.summary, sizeof(f->c.summary),
		   "lock contention with %s: %s blocked %s of its time on %s",
		   c->culprit_pid ? cn : "another thread", fn, pct,
		   kind == IG_LOCK_MUTEX    ? "a mutex it held"
		   : kind == IG_LOCK_RWLOCK ? "a read-write lock it held"
					    : "a lock or condition it released");
	detect_put(
	    f->c.explanation, sizeof(f->c.explanation),
	    "Between CUDA calls the feeding thread sleeps on %s until another thread lets go "
	    "of it (unlocks, signals): %s did for %.0f%% of that time. Timed waits that ran "
	    "out before it did are counted with it. While the feeder waits, the GPU has "
	    "nothing queued.",
	    kind == IG_LOCK_MUTEX    ? "a mutex (pthread_mutex_lock, std::mutex, threading.Lock)"
	    : kind == IG_LOCK_RWLOCK ? "a read-write lock (pthread_rwlock, std::shared_mutex)"
				     : lock_kind(x),
	    c->culprit_pid ? cn : "no thread was recorded", c->culprit_share * 100);
	detect_culprit_ev(f, c);
	uint32_t pid = c->culprit_pid ? c->culprit_pid : x->p->pid;
	if (f->c.stack_id)
		detect_rec(f, "The call site it waits at most is under \"call site\": which %s%s",
			   mutex ? "lock"
				 : "lock or condition (a queue's get, a condition's wait: "
				   "the producer's pace)",
			   f->c.wake_stack_id
			       ? "; where the other thread let go, under \"waker at\""
			       : "");
	detect_rec(f,
		   "See what the holder does while it holds it: py-spy dump --pid %u (Python), or "
		   "gdb -p %u -batch -ex 'thread apply all bt'",
		   pid, pid);
	detect_rec(f, "Shorten the critical section, or take the shared state out of the feeding "
		      "thread's path (a copy per thread, a lock-free queue)");
	if (!mutex)
		detect_rec(f, "If it is a condition (a queue the feeder waits on), the thread that "
			      "signals it is the producer: make it keep up");
}

/* A condition, a semaphore or a queue another thread signals: the feeder
 * waits for what that thread produces (or, at a full queue, consumes). */
static void words_lock_signal(struct ctx *x, const struct cause *c, struct finding *f, int kind)
{
	char fn[64], cn[96], pct[16];
	detect_feeder_name(x, fn, sizeof(fn));
	detect_thread_name(x, c, cn, sizeof(cn));
	fmt_pct(pct, sizeof(pct), c->impact);
	const char *who = c->culprit_pid ? cn : "another thread";
	const char *what = kind == IG_LOCK_QGET ? "in a queue's get until it put the next item"
			   : kind == IG_LOCK_QPUT
			       ? "in a full queue's put until it took an item"
			       : "on a condition or semaphore until it signalled";
	detect_put(f->c.summary, sizeof(f->c.summary), "%s %s: %s blocked %s of its time %s",
		   kind == IG_LOCK_QPUT ? "held up by the consumer" : "waiting on the producer",
		   who, fn, pct, what);
	detect_put(f->c.explanation, sizeof(f->c.explanation),
		   "Between CUDA calls the feeding thread waits %s (its call site: %s), and %s "
		   "ended %.0f%% of that time. Not a lock held too long: that thread does not keep "
		   "up with the feeder. Timed waits that ran out before it did are counted with "
		   "it. While the feeder waits, the GPU has nothing queued.",
		   kind == IG_LOCK_QGET	  ? "for the next item of a queue"
		   : kind == IG_LOCK_QPUT ? "for room in a full queue"
					  : "for another thread's signal",
		   kind == IG_LOCK_QGET	  ? "Queue.get"
		   : kind == IG_LOCK_QPUT ? "Queue.put"
					  : "a condition's or a semaphore's wait",
		   c->culprit_pid ? cn : "no thread that was recorded", c->culprit_share * 100);
	detect_culprit_ev(f, c);
	uint32_t pid = c->culprit_pid ? c->culprit_pid : x->p->pid;
	detect_rec(f, "The call site it waits at most is under \"call site\"%s",
		   f->c.wake_stack_id ? "; where the other thread signalled, under \"waker at\""
				      : "");
	detect_rec(f,
		   "See what %s does for each item: py-spy dump --pid %u (Python), or gdb -p %u "
		   "-batch -ex 'thread apply all bt'",
		   kind == IG_LOCK_QPUT ? "the consumer" : "the producer", pid, pid);
	if (kind == IG_LOCK_QPUT)
		detect_rec(f, "Take items faster (more consumer threads, less work per item), or "
			      "put fewer; a larger maxsize only absorbs bursts");
	else
		detect_rec(f, "Produce ahead: more producer threads or processes (PyTorch: a "
			      "DataLoader with num_workers > 0, prefetch_factor), so that the next "
			      "item is ready when asked; a bigger queue only absorbs bursts");
}

static void detect_words_lock(struct ctx *x, const struct cause *c, struct finding *f)
{
	f->c.stack_id = x->p->lock_stack; /* where it waits most: shown with the chain */
	if (f->c.stack_id) /* and where its wakers were: the holder's unlock, a producer's put */
		f->c.wake_stack_id = x->p->lock_wake_stack;
	int kind = site_kind(x);
	if (kind == IG_LOCK_COND || kind == IG_LOCK_QGET || kind == IG_LOCK_QPUT)
		words_lock_signal(x, c, f, kind);
	else
		words_lock_held(x, c, f, kind);
}

static void detect_words_gil(struct ctx *x, const struct cause *c, struct finding *f)
{
	char fn[64], cn[96], pct[16];
	detect_feeder_name(x, fn, sizeof(fn));
	detect_thread_name(x, c, cn, sizeof(cn));
	fmt_pct(pct, sizeof(pct), c->impact);
	detect_put(f->c.summary, sizeof(f->c.summary),
		   "GIL contention with %s: %s waited %s of its time for Python's GIL",
		   c->culprit_pid ? cn : "another thread", fn, pct);
	detect_put(
	    f->c.explanation, sizeof(f->c.explanation),
	    "The feeding thread runs Python and must hold the interpreter lock to go on; another "
	    "Python thread holds it (%s gave it back for %.0f%% of the waits). CPython makes a "
	    "waiter ask every 5 ms and the holder yield then: each step of the feeder waits up "
	    "to that long while the GPU has nothing queued.",
	    c->culprit_pid ? cn : "not recorded", c->culprit_share * 100);
	detect_culprit_ev(f, c);
	f->c.stack_id = x->p->gil_stack; /* where it waits most: shown with the chain */
	if (f->c.stack_id)
		detect_rec(f, "The call site it waits for the GIL at most is under \"call site\"");
	detect_rec(f, "See what the other thread runs: py-spy dump --pid %u", x->p->pid);
	detect_rec(f,
		   "Move that pure-Python work out of the process (multiprocessing, a DataLoader "
		   "worker), or into code that releases the GIL (NumPy, torch ops, I/O)");
	detect_rec(
	    f, "Python 3.13's free-threaded build removes the GIL; sys.setswitchinterval() only "
	       "shortens each wait");
}

/* The feeder prints to a terminal whose reader does not keep up (an ssh
 * session over a slow link, tmux, a serial console). */
static void words_tty(struct ctx *x, const struct cause *c, struct finding *f, const char *fn,
		      const char *cn, const char *pct)
{
	detect_put(f->c.summary, sizeof(f->c.summary),
		   "terminal back-pressure from %s: %s blocked %s of its time writing to a "
		   "terminal",
		   c->culprit_pid ? cn : "its reader", fn, pct);
	detect_put(f->c.explanation, sizeof(f->c.explanation),
		   "Between CUDA calls the feeding thread prints to a terminal (a pseudo-terminal "
		   "of ssh, tmux or screen, a console) whose output buffer is full, and sleeps "
		   "until the terminal's reader takes it: %s did for %.0f%% of that time. A slow "
		   "ssh link or a busy terminal holds the training loop back.",
		   c->culprit_pid ? cn : "not recorded", c->culprit_share * 100);
	detect_culprit_ev(f, c);
	detect_rec(f, "Print less often (a progress line every N steps, tqdm's mininterval), or "
		      "log to a file and follow it with tail -f");
	detect_rec(f, "Run it with its output in a file instead of the terminal (nohup, or "
		      "> train.log 2>&1 after the command) and follow the file");
}

static void detect_words_backpressure(struct ctx *x, const struct cause *c, struct finding *f)
{
	char fn[64], cn[96], pct[16];
	detect_feeder_name(x, fn, sizeof(fn));
	detect_thread_name(x, c, cn, sizeof(cn));
	fmt_pct(pct, sizeof(pct), c->impact);
	if (tl_most(x, IG_PART_BACKPRESSURE, is_tty)) {
		words_tty(x, c, f, fn, cn, pct);
		return;
	}
	detect_put(
	    f->c.summary, sizeof(f->c.summary),
	    "back-pressure from %s: %s blocked %s of its time writing to a full pipe or socket",
	    c->culprit_pid ? cn : "a slow reader", fn, pct);
	detect_put(
	    f->c.explanation, sizeof(f->c.explanation),
	    "Between CUDA calls the feeding thread writes (results, logs, samples) to a pipe or "
	    "socket whose buffer is full, and sleeps until its reader takes data out: %s did "
	    "for %.0f%% of that time. The reader is the slow side, not the feeder's producers.",
	    c->culprit_pid ? cn : "not recorded", c->culprit_share * 100);
	detect_culprit_ev(f, c);
	detect_rec(f,
		   "Make the reader keep up (more readers, cheaper processing per item), or hand "
		   "the data to a thread of the feeder's own that may block instead of it");
	detect_rec(f,
		   "A bigger buffer (fcntl F_SETPIPE_SZ, SO_SNDBUF) absorbs bursts, not a reader "
		   "that is slower on average; for logs, drop or sample instead of blocking");
}

/* The feeder sends to a peer that does not take the data as fast (its
 * socket's send buffer full): the peer's reading or the path is slow. */
static void words_net_send(struct ctx *x, const struct cause *c, struct finding *f,
			   const char *peer)
{
	char fn[64], pct[16];
	detect_feeder_name(x, fn, sizeof(fn));
	fmt_pct(pct, sizeof(pct), c->impact);
	detect_put(f->c.summary, sizeof(f->c.summary),
		   "network send wait in %s: %s of its time sending to %s%s with its send "
		   "buffer full",
		   fn, pct, peer[0] ? "a socket to " : "sockets", peer);
	detect_put(f->c.explanation, sizeof(f->c.explanation),
		   "Between CUDA calls the feeding thread writes to a network socket (results, "
		   "checkpoints, gradients, logs) whose send buffer is full, and sleeps until the "
		   "peer has taken data: the peer reads slower than it sends, or the path is slow. "
		   "The GPU has nothing queued meanwhile.");
	if (x->p->npeers) {
		detect_ev(f, "peer_share_pct", x->p->peers[0].share * 100, "%");
		detect_ev(f, "peer_port", x->p->peers[0].aux, "");
	}
	detect_rec(f, "Send from a thread of its own (or with non-blocking, asynchronous I/O), so "
		      "that the feeder queues the data and goes on");
	if (peer[0])
		detect_rec(f,
			   "See whether the peer or the path is slow (a full Send-Q, the rtt, "
			   "retransmits): ss -tin dst %.*s",
			   (int)(strchr(peer, ':') - peer), peer);
	else
		detect_rec(f, "See which sockets it sends to: ss -tanp | grep 'pid=%u,'",
			   x->p->pid);
	detect_rec(f, "A bigger SO_SNDBUF absorbs bursts, not a peer that is slower on average");
}

static void detect_words_net(struct ctx *x, const struct cause *c, struct finding *f)
{
	char fn[64], pct[16], peer[40] = "";
	detect_feeder_name(x, fn, sizeof(fn));
	fmt_pct(pct, sizeof(pct), c->impact);
	const struct ig_proc_stats *p = x->p;
	if (p->npeers) {
		uint32_t a = p->peers[0].pid;
		detect_put(peer, sizeof(peer), "%u.%u.%u.%u:%u", a >> 24, (a >> 16) & 0xff,
			   (a >> 8) & 0xff, a & 0xff, p->peers[0].aux);
	}
	if (tl_most(x, IG_PART_NET_WAIT, is_send)) {
		words_net_send(x, c, f, peer);
		return;
	}
	detect_put(f->c.summary, sizeof(f->c.summary),
		   "network wait in %s: %s of its time waiting on %s%s", fn, pct,
		   peer[0] ? "a socket to "
			   : "sockets or devices (poll, epoll woken by interrupts)",
		   peer);
	detect_put(
	    f->c.explanation, sizeof(f->c.explanation),
	    "Between CUDA calls the feeding thread sleeps until data arrives from the network "
	    "(a request, a batch, a parameter server), and the GPU has nothing queued "
	    "meanwhile%s%s.",
	    peer[0] ? "; the peer it waited on most: " : "", peer);
	if (p->npeers) {
		detect_ev(f, "peer_share_pct", p->peers[0].share * 100, "%");
		detect_ev(f, "peer_port", p->peers[0].aux, "");
	}
	detect_rec(f,
		   "Fetch ahead: read the next request or batch on another thread (or async I/O) "
		   "while the GPU works on the current one");
	if (peer[0])
		detect_rec(f, "Check the peer's latency and the path to it: ss -tin dst %.*s",
			   (int)(strchr(peer, ':') - peer), peer);
	else
		detect_rec(f, "See which sockets it waits on: ss -tanp | grep 'pid=%u,'",
			   x->p->pid);
}

/* --- the quota, the disk, memory ------------------------------------------ */

/* CPUs to ask for: the quota's CPUs over the share of the time the feeder
 * was not held off (what it would use unthrottled), 20 % over that, in
 * half CPUs. */
static double quota_need(double cpus, double impact)
{
	double unthr = impact < 0.9 ? 1.0 - impact : 0.1;
	double need = cpus / unthr * 1.2;
	double half = (double)(long)(need * 2.0 + 0.999) / 2.0;
	return half > cpus ? half : cpus + 0.5;
}

static void quota_recs(struct ctx *x, struct finding *f, const char *ct, double need)
{
	const struct ig_quota *q = &x->p->quota;
	char cmd[192], n[16] = "<N>", pc[16] = "<N>00";
	if (need > 0) { /* unknown without the quota: the user's pick */
		detect_put(n, sizeof(n), "%.1f", need);
		detect_put(pc, sizeof(pc), "%.0f", need * 100);
	}
	if (!strncmp(ct, "k8s:", 4)) {
		detect_rec(
		    f,
		    "Raise the pod's CPU limit to %s or more (resources.limits.cpu), or remove "
		    "it; the pod is %s",
		    n, ct + 4);
	} else if (!strncmp(ct, "docker:", 7)) {
		detect_put(cmd, sizeof(cmd), "docker update --cpus %s %s", n, ct + 7);
		if (detect_rec_cmd(f, cmd, "Raise the container's CPU limit"))
			detect_rec(
			    f, "Raise the container's CPU limit to %s CPUs (docker update --cpus)",
			    n);
	} else if (strstr(ct, ".service")) {
		detect_put(cmd, sizeof(cmd), "systemctl set-property %s CPUQuota=%s%%", ct, pc);
		if (detect_rec_cmd(f, cmd, "Raise the unit's CPU limit"))
			detect_rec(
			    f,
			    "Raise the unit's CPU limit to CPUQuota=%s%% (systemctl set-property)",
			    pc);
	} else if (q->quota_us && q->dir[0]) {
		uint64_t us = (uint64_t)(need * (double)q->period_us);
		int k = q->v2 ? snprintf(cmd, sizeof(cmd), "echo \"%llu %llu\" > %s/cpu.max",
					 (unsigned long long)us, (unsigned long long)q->period_us,
					 q->dir)
			      : snprintf(cmd, sizeof(cmd), "echo %llu > %s/cpu.cfs_quota_us",
					 (unsigned long long)us, q->dir);
		if (k <= 0 || (size_t)k >= sizeof(cmd) || /* a command only when whole */
		    detect_rec_cmd(f, cmd, "Raise the cgroup's CPU quota to %.1f CPUs", need))
			detect_rec(f, "Raise the CPU quota of its cgroup (%s) to %.1f CPUs",
				   q->v2 ? "cpu.max" : "cpu.cfs_quota_us", need);
	}
	if (!q->quota_us || !q->dir[0] ||
	    detect_put(cmd, sizeof(cmd), "cat %s/cpu.stat", q->dir) >= (int)sizeof(cmd) ||
	    detect_rec_cmd(f, cmd, "Watch the throttling"))
		detect_rec(
		    f,
		    "See its cgroup's limit and throttling: cat /proc/%u/cgroup, then cpu.max and "
		    "cpu.stat (v2) or cpu.cfs_quota_us and cpu.stat (v1) in that cgroup",
		    x->p->pid);
	detect_rec(
	    f, "Or make the job need less CPU per period: fewer threads (torch.set_num_threads, "
	       "OMP_NUM_THREADS) so the quota covers the feeding thread's work");
}

static void detect_words_quota(struct ctx *x, const struct cause *c, struct finding *f)
{
	char fn[64], pct[16], lim[96] = "";
	const struct ig_quota *q = &x->p->quota;
	detect_feeder_name(x, fn, sizeof(fn));
	fmt_pct(pct, sizeof(pct), c->impact);
	const char *ct = x->p->container[0] && strcmp(x->p->container, "-") ? x->p->container : "";
	double cpus = q->quota_us && q->period_us ? (double)q->quota_us / (double)q->period_us : 0;
	if (cpus > 0)
		detect_put(lim, sizeof(lim), " of %.2f CPU (%.0f ms per %.0f ms)", cpus,
			   (double)q->quota_us / 1e3, (double)q->period_us / 1e3);
	detect_put(
	    f->c.summary, sizeof(f->c.summary),
	    "CPU quota exhausted%s%s: %s throttled %s of its time by its cgroup's CPU limit%s",
	    ct[0] ? " in " : "", ct, fn, pct, lim);
	char seen[400] = "";
	if (q->quota_us && q->nr_per)
		detect_put(
		    seen, sizeof(seen),
		    " The cgroup (%s, cgroup %s) was throttled in %llu of its %llu periods in the "
		    "window, %.1f s in all by its cpu.stat.",
		    q->dir[0] ? q->dir : "?", q->v2 ? "v2" : "v1", (unsigned long long)q->nr_thr,
		    (unsigned long long)q->nr_per, (double)q->thr_ns / 1e9);
	else if (q->quota_us)
		detect_put(seen, sizeof(seen), " Its cgroup is %s.", q->dir[0] ? q->dir : "?");
	detect_put(
	    f->c.explanation, sizeof(f->c.explanation),
	    "The feeding thread was ready to run, but its cgroup had used up its CPU quota for "
	    "the period (cgroup v2 cpu.max, v1 cpu.cfs_quota_us), so the kernel held it off "
	    "every CPU until the next period: %s of its wall time. This is the limit, not "
	    "contention with other tasks: idle cores do not help.%s",
	    pct, seen);
	if (cpus > 0) {
		detect_ev(f, "quota_cpus", cpus, "CPU");
		if (q->nr_per)
			detect_ev(f, "periods_throttled_pct",
				  100.0 * (double)q->nr_thr / (double)q->nr_per, "%");
	}
	quota_recs(x, f, ct, cpus > 0 ? quota_need(cpus, c->impact) : 0);
}

/* "device 254:0" of the file it waited on. */
static void dev_words(const struct ctx *x, char *b, size_t n)
{
	uint32_t d = x->p->file_dev ? x->p->file_dev : x->p->io_dev;
	b[0] = 0;
	if (d)
		detect_put(b, n, " (device %u:%u)", d >> 20, d & 0xfffff);
}

/* A wait for asynchronous I/O to complete (io_getevents, io_uring_enter). */
static int is_aio(const struct ig_offcpu_rec *r)
{
	return IG_WAIT_SYS(r->wait) == IG_SYS_AIO;
}

static void detect_words_file(struct ctx *x, const struct cause *c, struct finding *f)
{
	char fn[64], pct[16], dev[32];
	detect_feeder_name(x, fn, sizeof(fn));
	fmt_pct(pct, sizeof(pct), c->impact);
	dev_words(x, dev, sizeof(dev));
	uint32_t d = x->p->file_dev ? x->p->file_dev : x->p->io_dev;
	if (d)
		detect_ev(f, "io_dev", (double)d, "");
	if (tl_most(x, IG_PART_FILE_IO, is_aio)) {
		detect_put(f->c.summary, sizeof(f->c.summary),
			   "file I/O in %s: %s of its time waiting for asynchronous reads and "
			   "writes (io_uring, Linux AIO)%s",
			   fn, pct, dev);
		detect_put(
		    f->c.explanation, sizeof(f->c.explanation),
		    "Between CUDA calls the feeding thread submits file I/O asynchronously and "
		    "then waits for it to complete (io_getevents, io_uring_enter) for %s of its "
		    "wall time: the disk's latency, with nothing of its own overlapping it. The "
		    "GPU idles meanwhile.",
		    pct);
		detect_rec(f, "Wait later: submit the next reads before waiting for these (more "
			      "requests in flight), or complete them on another thread, so the "
			      "disk works while the GPU does");
		detect_rec(f, "Or stage the data in RAM (/dev/shm) or on local NVMe before the "
			      "run; iostat -x 1 shows the device's latency and queue");
		return;
	}
	detect_put(f->c.summary, sizeof(f->c.summary),
		   "file I/O in %s: %s of its time in file reads, writes and syncs%s", fn, pct,
		   dev);
	detect_put(
	    f->c.explanation, sizeof(f->c.explanation),
	    "Between CUDA calls the feeding thread is in file syscalls (write, fsync, read of "
	    "files) for %s of its wall time: the kernel copying data and writing it back on the "
	    "CPU, and waiting for the disk. The GPU idles meanwhile.",
	    pct);
	detect_rec(f, "Move checkpoint and log writes off the training path: write from a separate "
		      "thread or process, and do not fsync every step");
	detect_rec(
	    f, "For reads, stage the data in RAM (/dev/shm) or on local NVMe before the run, or "
	       "read ahead on another thread");
}

static void detect_words_cold_read(struct ctx *x, const struct cause *c, struct finding *f)
{
	char fn[64], pct[16], dev[32];
	detect_feeder_name(x, fn, sizeof(fn));
	fmt_pct(pct, sizeof(pct), c->impact);
	dev_words(x, dev, sizeof(dev));
	detect_put(
	    f->c.summary, sizeof(f->c.summary),
	    "cold file reads in %s: %s of its time in page faults reading a mapped file from "
	    "disk%s",
	    fn, pct, dev);
	detect_put(
	    f->c.explanation, sizeof(f->c.explanation),
	    "The feeding thread reads a file through a memory mapping (np.memmap, mmap, "
	    "safetensors) whose pages are not in the page cache: each touch of a new page "
	    "faults and waits for the disk, %s of its wall time. This is not memory pressure.",
	    pct);
	if (x->p->file_dev)
		detect_ev(f, "io_dev", (double)x->p->file_dev, "");
	detect_rec(f,
		   "Read the file into the page cache before the run (vmtouch -t FILE, or cat FILE "
		   "> /dev/null), or ask for read-ahead: madvise(MADV_WILLNEED | MADV_SEQUENTIAL)");
	detect_rec(f,
		   "Or load it into memory instead of mapping it (np.load without mmap_mode), or "
		   "put it on faster storage");
}

/* --- loops paced by their own timer --------------------------------------- */

static void detect_words_paced(struct ctx *x, const struct cause *c, struct finding *f)
{
	char fn[64], pct[16];
	detect_feeder_name(x, fn, sizeof(fn));
	fmt_pct(pct, sizeof(pct), c->impact);
	double timed = x->parts->wall_ns ? (double)x->parts->timed_wait_ns / x->parts->wall_ns : 0;
	detect_put(f->c.summary, sizeof(f->c.summary),
		   "paced by a timer: %s sleeps %s of its time between CUDA calls (%s)", fn, pct,
		   timed > c->impact / 2		  ? "waits with a timeout nobody ended"
		   : tl_most(x, IG_PART_SLEEP, is_signal) ? "waits for a timer's signal"
							  : "sleep calls");
	detect_put(
	    f->c.explanation, sizeof(f->c.explanation),
	    "The feeding thread waits on its own timers between CUDA calls for %s of its wall "
	    "time: sleeps, or waits with a timeout that no other task ended. A loop paced by "
	    "its clock (an engine idle between requests, a rate limiter) idles by design; in a "
	    "training loop it is time the GPU idles: find the sleep.",
	    pct);
	detect_ev(f, "timed_wait_pct", timed * 100, "%");
	if (x->feeder && x->feeder->slept_gaps_win)
		detect_ev(f, "sleeps_per_gap",
			  (double)x->feeder->gap_sleeps_win / (double)x->feeder->slept_gaps_win,
			  "");
	f->c.stack_id = x->p->sleep_stack; /* where it sleeps most: shown with the chain */
	if (f->c.stack_id)
		detect_rec(
		    f,
		    "The call site it sleeps at most is under \"call site\": the sleep to look at");
	else
		detect_rec(
		    f,
		    "Find the sleep in the loop: py-spy dump --pid %u (Python), or the stack of "
		    "the feeding thread",
		    x->p->pid);
	detect_rec(
	    f, "Wait on the event itself (a blocking queue get, a condition) instead of polling "
	       "with a timeout");
}

/* A loop that sleeps again and again between two calls: it polls. */
static void detect_words_poll(struct ctx *x, const struct cause *c, struct finding *f)
{
	const struct ig_thread_stats *t = x->feeder;
	char fn[64], pct[16], nap[16];
	detect_feeder_name(x, fn, sizeof(fn));
	fmt_pct(pct, sizeof(pct), c->impact);
	double per = (double)t->gap_sleeps_win / (double)t->slept_gaps_win;
	uint64_t each = x->parts->ns[IG_PART_SLEEP] / t->gap_sleeps_win;
	fmt_ns(nap, sizeof(nap), each);
	detect_put(f->c.summary, sizeof(f->c.summary),
		   "polling wait in %s: sleeps %s of its time between CUDA calls, %.1f sleeps of "
		   "%s at a time: it checks for something between its sleeps",
		   fn, pct, per, nap);
	detect_put(
	    f->c.explanation, sizeof(f->c.explanation),
	    "Between two CUDA calls the feeding thread sleeps again and again (%.1f times where "
	    "it sleeps at all, %s a sleep), checking something between its sleeps: a queue "
	    "read with get_nowait(), a flag, a file. The GPU idles while it polls. What it "
	    "waits for does not wake it (its timer does), so the kernel cannot name it: often "
	    "a data loader or producer that does not keep up. A loop that paces itself in small "
	    "sleeps looks the same.",
	    per, nap);
	detect_ev(f, "sleeps_per_gap", per, "");
	detect_ev(f, "sleep_ns", (double)each, "ns");
	f->c.stack_id = x->p->sleep_stack;
	if (f->c.stack_id)
		detect_rec(f, "The call site it sleeps at most is under \"call site\": the poll "
			      "to look at");
	else
		detect_rec(f,
			   "Find the poll in the loop: py-spy dump --pid %u (Python), or the stack "
			   "of the feeding thread",
			   x->p->pid);
	detect_rec(f, "Wait on what it polls instead of sleeping (queue.get() with a timeout, a "
		      "threading.Event, a condition): it wakes as soon as the data is there, and "
		      "its wait then names who it waited for");
	detect_rec(f, "If it polls for batches, make their producer keep up (more DataLoader "
		      "workers, prefetch_factor)");
}

void detect_words_wait(struct ctx *x, const struct cause *c, struct finding *f)
{
	switch (c->cls) {
	case IG_CC_LOADER_WAIT:
		detect_words_input(x, c, f);
		break;
	case IG_CC_LOCK_WAIT:
		detect_words_lock(x, c, f);
		break;
	case IG_CC_GIL_WAIT:
		detect_words_gil(x, c, f);
		break;
	case IG_CC_BACKPRESSURE:
		detect_words_backpressure(x, c, f);
		break;
	case IG_CC_NET_WAIT:
		detect_words_net(x, c, f);
		break;
	case IG_CC_CPU_QUOTA:
		detect_words_quota(x, c, f);
		break;
	case IG_CC_FILE_IO:
		detect_words_file(x, c, f);
		break;
	case IG_CC_COLD_READ:
		detect_words_cold_read(x, c, f);
		break;
	case IG_CC_PAGE_FAULTS:
		detect_words_faults(x, c, f);
		break;
	case IG_CC_TIMER_SLEEP:
		detect_words_paced(x, c, f);
		break;
	case IG_CC_POLL_WAIT:
		detect_words_poll(x, c, f);
		break;
	case IG_CC_STOPPED:
		detect_words_stopped(x, c, f);
		break;
	default:
		break;
	}
}
