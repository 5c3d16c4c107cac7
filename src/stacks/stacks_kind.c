/* What a lock wait's user stack says it waited on (stacks.h,
 * stacks_lock_kind): a futex is a mutex, a condition variable, a
 * semaphore or a queue underneath, and only the code around it tells.
 *
 * With Python frames, the innermost ones of the threading and queue
 * modules say it (CPython's own locks are semaphores underneath, so the
 * C library's frame says nothing there): Queue.get is a queue's get,
 * Queue.put a full queue's put, Condition.wait, Event.wait,
 * Semaphore.acquire, Barrier.wait and Thread.join a condition; a wait
 * under the program's own Python code (lock.acquire, `with lock`) or a C
 * extension's queue is not said. Without them, the C library's wait
 * function (the innermost frame: glibc without frame pointers stops the
 * walk there): __lll_lock_wait and pthread_mutex_lock are a mutex,
 * pthread_rwlock_* a read-write lock, pthread_cond_* and sem_*wait a
 * condition or semaphore. A stack taken before the interpreter was found
 * (a Python process without its frames) is not said either.
 *
 * glibc's condition, semaphore, read-write lock and timed mutex waits
 * share one futex wait (__futex_abstimed_wait_common), so that frame
 * alone says little; the stack of the thread that ended the wait says
 * the rest (stacks_frames_lock_kind2): its unlock or signal is its
 * innermost frame, as it wakes the waiter from the futex syscall
 * (__lll_lock_wake a mutex, pthread_rwlock_unlock a read-write lock,
 * pthread_cond_signal, _broadcast or sem_post a condition or semaphore),
 * and a Python waker's frames say what it did (Queue.put, Condition.notify,
 * the program's own code letting go of a lock it held). */
#include "stacks/stacks.h"

#include <stdlib.h>
#include <string.h>

#include "core/waits.h"
#include "stacks/stacks_int.h" /* base_name */

#define KIND_FRAMES 64

static int is_any(const char *s, const char *const *names)
{
	for (; *names; names++)
		if (!strcmp(s, *names))
			return 1;
	return 0;
}

static int has_any(const char *s, const char *const *parts)
{
	for (; *parts; parts++)
		if (strstr(s, *parts))
			return 1;
	return 0;
}

/* The Python frames: the standard library's waits, innermost first, up to
 * the program's own code. */
static int py_kind(const struct stacks_frame *fr, int n)
{
	static const char *const cond[] = {"Condition.wait",
					   "Condition.wait_for",
					   "Event.wait",
					   "Semaphore.acquire",
					   "Barrier.wait",
					   "Barrier._wait",
					   "Thread.join",
					   "Thread._wait_for_tstate_lock",
					   NULL};
	int kind = IG_LOCK_UNKNOWN;
	for (int k = 0; k < n; k++) {
		if (fr[k].kind != STACKS_PY)
			continue;
		const char *f = base_name(fr[k].file), *s = fr[k].sym;
		if (!strcmp(f, "queue.py")) {
			if (!strcmp(s, "Queue.get"))
				return IG_LOCK_QGET;
			if (!strcmp(s, "Queue.put"))
				return IG_LOCK_QPUT;
			return kind;
		}
		if (strcmp(f, "threading.py"))
			return kind; /* the program's own code */
		if (is_any(s, cond))
			kind = IG_LOCK_COND;
	}
	return kind;
}

/* The kind a native symbol names: one of a mutex's, a read-write lock's or
 * a condition's functions (their names' parts), IG_LOCK_UNKNOWN none. */
static int named_kind(const char *sym, const char *const *mutex, const char *const *rwlock,
		      const char *const *cond)
{
	return has_any(sym, mutex)    ? IG_LOCK_MUTEX
	       : has_any(sym, rwlock) ? IG_LOCK_RWLOCK
	       : has_any(sym, cond)   ? IG_LOCK_COND
				      : IG_LOCK_UNKNOWN;
}

/* The C library's and C++'s wait functions by name (the innermost named
 * frame decides): a mutex's, a read-write lock's, a condition's or a
 * semaphore's; *weak when only the futex wait they share says it. */
static int native_wait_kind(const struct stacks_frame *fr, int n, int *weak)
{
	static const char *const mutex[] = {"lll_lock_wait",	       "pthread_mutex_lock",
					    "pthread_mutex_clocklock", "pthread_mutex_timedlock",
					    "std::mutex::lock",	       NULL};
	static const char *const rwlock[] = {"pthread_rwlock_", "shared_mutex", NULL};
	static const char *const cond[] = {"pthread_cond_", "condition_variable", "sem_wait",
					   "sem_timedwait", "sem_clockwait",	  NULL};
	int shared = 0;
	*weak = 0;
	for (int k = 0; k < n; k++) {
		if (fr[k].kind != STACKS_NATIVE || !fr[k].sym[0])
			continue;
		int kind = named_kind(fr[k].sym, mutex, rwlock, cond);
		if (kind)
			return kind;
		/* a condition's and a semaphore's, a timed mutex's and a
		 * read-write lock's too */
		shared |= strstr(fr[k].sym, "futex_abstimed_wait") != NULL;
	}
	*weak = shared;
	return shared ? IG_LOCK_COND : IG_LOCK_UNKNOWN;
}

/* Whether frames are a Python process's: Python frames, or the note of a
 * stack taken before its interpreter was found. */
static int is_python(const struct stacks_frame *fr, int n)
{
	for (int k = 0; k < n; k++)
		if (fr[k].kind == STACKS_PY ||
		    (fr[k].kind == STACKS_NOTE && strstr(fr[k].text, "interpreter")))
			return 1;
	return 0;
}

int stacks_frames_lock_kind(const struct stacks_frame *fr, int n)
{
	int weak;
	for (int k = 0; k < n; k++)
		if (fr[k].kind == STACKS_NOTE && strstr(fr[k].text, "interpreter"))
			return IG_LOCK_UNKNOWN; /* a Python process seen without its frames */
	return is_python(fr, n) ? py_kind(fr, n) : native_wait_kind(fr, n, &weak);
}

/* The waker's Python frames: what the innermost ones of the standard
 * library did (a queue's put ends a get, a get ends a full queue's put, a
 * notify, set or release ends a condition's wait), or the program's own
 * code releasing a lock it held. */
static int py_wake_kind(const struct stacks_frame *fr, int n)
{
	static const char *const cond[] = {
	    "Condition.notify", "Condition.notify_all", "Event.set", "Semaphore.release",
	    "Barrier.wait",	"Barrier._release",	NULL};
	int kind = IG_LOCK_UNKNOWN;
	for (int k = 0; k < n; k++) {
		if (fr[k].kind != STACKS_PY)
			continue;
		const char *f = base_name(fr[k].file), *s = fr[k].sym;
		if (!strcmp(f, "queue.py"))
			return !strcmp(s, "Queue.put")	 ? IG_LOCK_QGET
			       : !strcmp(s, "Queue.get") ? IG_LOCK_QPUT
							 : kind;
		if (strcmp(f, "threading.py")) /* the program's own code let go of it */
			return kind ? kind : IG_LOCK_MUTEX;
		if (is_any(s, cond))
			kind = IG_LOCK_COND;
	}
	return kind;
}

int stacks_frames_wake_kind(const struct stacks_frame *fr, int n)
{
	static const char *const mutex[] = {"lll_lock_wake", "pthread_mutex_unlock",
					    "std::mutex::unlock", NULL};
	static const char *const rwlock[] = {"pthread_rwlock_unlock", "shared_mutex", NULL};
	static const char *const cond[] = {"pthread_cond_signal",
					   "pthread_cond_broadcast",
					   "sem_post",
					   "notify_one",
					   "notify_all",
					   NULL};
	if (is_python(fr, n)) /* CPython's locks are semaphores: only its frames tell */
		return py_wake_kind(fr, n);
	for (int k = 0; k < n; k++) {
		int kind = fr[k].kind == STACKS_NATIVE && fr[k].sym[0]
			       ? named_kind(fr[k].sym, mutex, rwlock, cond)
			       : IG_LOCK_UNKNOWN;
		if (kind)
			return kind;
	}
	return IG_LOCK_UNKNOWN;
}

int stacks_frames_lock_kind2(const struct stacks_frame *wait, int n,
			     const struct stacks_frame *wake, int m)
{
	int weak;
	if (is_python(wait, n) || is_python(wake, m)) {
		/* the waiter's standard-library frames, else what the waker's do */
		int k = stacks_frames_lock_kind(wait, n);
		return k || !is_python(wake, m) ? k : py_wake_kind(wake, m);
	}
	int k = native_wait_kind(wait, n, &weak);
	if (k && !weak)
		return k;
	int w = stacks_frames_wake_kind(wake, m);
	return w ? w : k;
}

int stacks_lock_kind(struct stacks *st, uint64_t id, uint64_t wake_id)
{
	struct stacks_frame *fr = st && id ? malloc(sizeof(*fr) * 2 * KIND_FRAMES) : NULL;
	int n = fr ? stacks_frames(st, id, fr, KIND_FRAMES, NULL) : 0;
	int m = fr && wake_id ? stacks_frames(st, wake_id, fr + KIND_FRAMES, KIND_FRAMES, NULL) : 0;
	int kind = stacks_frames_lock_kind2(fr, n, fr ? fr + KIND_FRAMES : NULL, m);
	free(fr);
	return kind;
}
