/* What a lock wait's call site says it waited on (src/stacks/stacks_kind.c),
 * from frames as the stacks module gives them: Python's queue and
 * threading waits, the program's own Python code, glibc's mutex and
 * condition waits (with and without the frames above the futex wait), a
 * Python process seen before its interpreter was found, nothing known;
 * and with the stack of the thread that ended the wait (its unlock,
 * signal, post, or Python frames). */
#include "stacks/stacks.h"
#include "core/waits.h"
#include "check.h"

#include <string.h>

/* A frame as the stacks module gives it: a Python one (file, qualified
 * name) or a native one (symbol, mapped file). */
static struct stacks_frame frame(int kind, const char *file, const char *sym)
{
	struct stacks_frame f;
	memset(&f, 0, sizeof(f));
	f.kind = (uint8_t)kind;
	snprintf(f.file, sizeof(f.file), "%s", file);
	snprintf(f.sym, sizeof(f.sym), "%s", sym);
	if (kind == STACKS_PY)
		snprintf(f.text, sizeof(f.text), "[py] %s:1 in %s()", file, sym);
	else
		snprintf(f.text, sizeof(f.text), "%s+0x10 (%s)", sym, file);
	return f;
}

#define py(file, fn) frame(STACKS_PY, file, fn)
#define native(sym, file) frame(STACKS_NATIVE, file, sym)

static struct stacks_frame note(const char *text)
{
	struct stacks_frame f;
	memset(&f, 0, sizeof(f));
	f.kind = STACKS_NOTE;
	snprintf(f.text, sizeof(f.text), "[note] %s", text);
	return f;
}

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define TH "/usr/lib/python3.11/threading.py"
#define QU "/usr/lib/python3.11/queue.py"
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

int main(void)
{
	/* Python: the waits of queue.Queue and of threading's objects */
	struct stacks_frame get[] = {native("__futex_abstimed_wait_common", LIBC),
				     py(TH, "Condition.wait"), py(QU, "Queue.get"),
				     py("/srv/train.py", "next_batch"),
				     py("/srv/train.py", "<module>")};
	CHECK(stacks_frames_lock_kind(get, N(get)) == IG_LOCK_QGET);
	struct stacks_frame put[] = {py(TH, "Condition.wait"), py(QU, "Queue.put"),
				     py("/srv/load.py", "produce")};
	CHECK(stacks_frames_lock_kind(put, N(put)) == IG_LOCK_QPUT);
	struct stacks_frame ev[] = {py(TH, "Condition.wait"), py(TH, "Event.wait"),
				    py("/srv/train.py", "step")};
	CHECK(stacks_frames_lock_kind(ev, N(ev)) == IG_LOCK_COND);
	struct stacks_frame join[] = {py(TH, "Thread._wait_for_tstate_lock"), py(TH, "Thread.join"),
				      py("/srv/train.py", "main")};
	CHECK(stacks_frames_lock_kind(join, N(join)) == IG_LOCK_COND);
	/* a Python lock under the program's own code (lock.acquire, `with
	 * lock`: a semaphore underneath) and a Condition's own lock: not said */
	struct stacks_frame own[] = {native("__futex_abstimed_wait_common", LIBC),
				     py("/srv/train.py", "update_stats"),
				     py("/srv/train.py", "main")};
	CHECK(stacks_frames_lock_kind(own, N(own)) == IG_LOCK_UNKNOWN);
	struct stacks_frame enter[] = {py(TH, "Condition.__enter__"), py("/srv/a.py", "f")};
	CHECK(stacks_frames_lock_kind(enter, N(enter)) == IG_LOCK_UNKNOWN);
	/* a queue of the program's own named queue.py is not the standard one's
	 * get unless the function is Queue.get */
	struct stacks_frame other_q[] = {py("/srv/queue.py", "Ring.pop"), py("/srv/a.py", "f")};
	CHECK(stacks_frames_lock_kind(other_q, N(other_q)) == IG_LOCK_UNKNOWN);

	/* native: glibc's mutex and condition waits */
	struct stacks_frame mu[] = {native("__GI___lll_lock_wait", LIBC),
				    native("mech_main", "/srv/causegen")};
	CHECK(stacks_frames_lock_kind(mu, N(mu)) == IG_LOCK_MUTEX);
	struct stacks_frame mu_fp[] = {native("__futex_wait", LIBC),
				       native("pthread_mutex_lock@@GLIBC_2.2.5", LIBC),
				       native("take_lock", "/srv/app")};
	CHECK(stacks_frames_lock_kind(mu_fp, N(mu_fp)) == IG_LOCK_MUTEX);
	struct stacks_frame cv[] = {native("__futex_abstimed_wait_common", LIBC),
				    note("native frames stop here: the frame-pointer chain breaks "
					 "after libc.so.6 (built without frame pointers?)")};
	CHECK(stacks_frames_lock_kind(cv, N(cv)) == IG_LOCK_COND);
	struct stacks_frame cv_cpp[] = {
	    native("__futex_wait", LIBC),
	    native("std::condition_variable::wait(std::unique_lock<std::mutex>&)",
		   "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
	    native("Loader::next()", "/srv/app")};
	CHECK(stacks_frames_lock_kind(cv_cpp, N(cv_cpp)) == IG_LOCK_COND);
	struct stacks_frame sem[] = {native("sem_clockwait", LIBC),
				     native("wait_item", "/srv/app")};
	CHECK(stacks_frames_lock_kind(sem, N(sem)) == IG_LOCK_COND);

	/* a Python process's stack taken before its interpreter was found: its
	 * locks are semaphores too, so the C library's frame says nothing */
	struct stacks_frame early[] = {native("__futex_abstimed_wait_common", LIBC),
				       note("captured before the interpreter was found: no Python "
					    "frames")};
	CHECK(stacks_frames_lock_kind(early, N(early)) == IG_LOCK_UNKNOWN);
	/* flock, unresolved frames, nothing */
	struct stacks_frame fl[] = {native("flock", LIBC), native("main", "/srv/app")};
	CHECK(stacks_frames_lock_kind(fl, N(fl)) == IG_LOCK_UNKNOWN);
	struct stacks_frame unres[] = {native("", "/srv/app")};
	CHECK(stacks_frames_lock_kind(unres, N(unres)) == IG_LOCK_UNKNOWN);
	CHECK(stacks_frames_lock_kind(NULL, 0) == IG_LOCK_UNKNOWN);
	CHECK(stacks_lock_kind(NULL, 0x1234, 0x5678) == IG_LOCK_UNKNOWN);

	/* the waker's stack: its innermost frame, as it woke the waiter */
	struct stacks_frame w_rw[] = {native("__pthread_rwlock_unlock", LIBC)};
	struct stacks_frame w_mu[] = {native("__GI___lll_lock_wake", LIBC),
				      native("release", "/srv/app")};
	struct stacks_frame w_cv[] = {native("pthread_cond_signal@@GLIBC_2.3.2", LIBC)};
	struct stacks_frame w_sem[] = {native("sem_post@@GLIBC_2.2.5", LIBC)};
	struct stacks_frame w_other[] = {native("syscall", LIBC), native("main", "/srv/app")};
	CHECK(stacks_frames_wake_kind(w_rw, N(w_rw)) == IG_LOCK_RWLOCK);
	CHECK(stacks_frames_wake_kind(w_mu, N(w_mu)) == IG_LOCK_MUTEX);
	CHECK(stacks_frames_wake_kind(w_cv, N(w_cv)) == IG_LOCK_COND);
	CHECK(stacks_frames_wake_kind(w_sem, N(w_sem)) == IG_LOCK_COND);
	CHECK(stacks_frames_wake_kind(w_other, N(w_other)) == IG_LOCK_UNKNOWN);
	/* glibc's shared futex wait says little: the waker decides (a
	 * read-write lock, a timed mutex, a semaphore), else it stays a
	 * condition as before */
	CHECK(stacks_frames_lock_kind2(cv, N(cv), w_rw, N(w_rw)) == IG_LOCK_RWLOCK);
	CHECK(stacks_frames_lock_kind2(cv, N(cv), w_mu, N(w_mu)) == IG_LOCK_MUTEX);
	CHECK(stacks_frames_lock_kind2(cv, N(cv), w_sem, N(w_sem)) == IG_LOCK_COND);
	CHECK(stacks_frames_lock_kind2(cv, N(cv), w_other, N(w_other)) == IG_LOCK_COND);
	CHECK(stacks_frames_lock_kind2(cv, N(cv), NULL, 0) == IG_LOCK_COND);
	/* a waiter's own frames that name it win */
	CHECK(stacks_frames_lock_kind2(mu, N(mu), w_cv, N(w_cv)) == IG_LOCK_MUTEX);
	CHECK(stacks_frames_lock_kind2(cv_cpp, N(cv_cpp), w_mu, N(w_mu)) == IG_LOCK_COND);
	struct stacks_frame rd_fp[] = {native("__futex_abstimed_wait_common", LIBC),
				       native("__pthread_rwlock_rdlock_full64", LIBC),
				       native("read_table", "/srv/app")};
	CHECK(stacks_frames_lock_kind2(rd_fp, N(rd_fp), w_sem, N(w_sem)) == IG_LOCK_RWLOCK);
	CHECK(stacks_frames_lock_kind2(unres, N(unres), w_rw, N(w_rw)) == IG_LOCK_RWLOCK);

	/* Python: only frames tell (its locks are semaphores: sem_post says
	 * nothing); a queue's put ends a get, a notify a condition's wait, the
	 * program's own code letting go a lock it held */
	struct stacks_frame own_lock[] = {native("__futex_abstimed_wait_common", LIBC),
					  py("/srv/train.py", "step")};
	struct stacks_frame w_put[] = {native("sem_post", LIBC), py(TH, "Condition.notify"),
				       py(QU, "Queue.put"), py("/srv/train.py", "produce")};
	struct stacks_frame w_notify[] = {native("sem_post", LIBC), py(TH, "Condition.notify"),
					  py("/srv/train.py", "produce")};
	struct stacks_frame w_release[] = {native("sem_post", LIBC),
					   py("/srv/train.py", "update_stats")};
	struct stacks_frame w_early[] = {native("sem_post", LIBC),
					 note("captured before the interpreter was found: no "
					      "Python frames")};
	CHECK(stacks_frames_wake_kind(w_put, N(w_put)) == IG_LOCK_QGET);
	CHECK(stacks_frames_wake_kind(w_notify, N(w_notify)) == IG_LOCK_COND);
	CHECK(stacks_frames_wake_kind(w_release, N(w_release)) == IG_LOCK_MUTEX);
	CHECK(stacks_frames_wake_kind(w_early, N(w_early)) == IG_LOCK_UNKNOWN);
	CHECK(stacks_frames_lock_kind2(own_lock, N(own_lock), w_release, N(w_release)) ==
	      IG_LOCK_MUTEX);
	CHECK(stacks_frames_lock_kind2(own_lock, N(own_lock), w_put, N(w_put)) == IG_LOCK_QGET);
	CHECK(stacks_frames_lock_kind2(get, N(get), w_release, N(w_release)) == IG_LOCK_QGET);
	CHECK(stacks_frames_lock_kind2(early, N(early), w_early, N(w_early)) == IG_LOCK_UNKNOWN);
	/* a Python waiter seen without frames, a native waker's sem_post: not said */
	CHECK(stacks_frames_lock_kind2(early, N(early), w_sem, N(w_sem)) == IG_LOCK_UNKNOWN);
	return check_done("test_stacks_kind");
}
