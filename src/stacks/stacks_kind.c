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
 * pthread_cond_*, sem_*wait and the futex wait they share
 * (__futex_abstimed_wait_common, which a timed mutex lock uses too) a
 * condition or semaphore. A stack taken before the interpreter was found
 * (a Python process without its frames) is not said either. */
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

int stacks_frames_lock_kind(const struct stacks_frame *fr, int n)
{
	static const char *const mutex[] = {"lll_lock_wait", "pthread_mutex_lock",
					    "pthread_mutex_clocklock", "std::mutex::lock", NULL};
	static const char *const cond[] = {
	    "pthread_cond_", "condition_variable",  "sem_wait", "sem_timedwait",
	    "sem_clockwait", "futex_abstimed_wait", NULL};
	int py = 0;
	for (int k = 0; k < n; k++) {
		py |= fr[k].kind == STACKS_PY;
		if (fr[k].kind == STACKS_NOTE && strstr(fr[k].text, "interpreter"))
			return IG_LOCK_UNKNOWN; /* a Python process seen without its frames */
	}
	if (py)
		return py_kind(fr, n);
	for (int k = 0; k < n; k++) {
		if (fr[k].kind != STACKS_NATIVE || !fr[k].sym[0])
			continue;
		if (has_any(fr[k].sym, mutex))
			return IG_LOCK_MUTEX;
		if (has_any(fr[k].sym, cond))
			return IG_LOCK_COND;
	}
	return IG_LOCK_UNKNOWN;
}

int stacks_lock_kind(struct stacks *st, uint64_t id)
{
	struct stacks_frame *fr = st && id ? malloc(sizeof(*fr) * KIND_FRAMES) : NULL;
	int n = fr ? stacks_frames(st, id, fr, KIND_FRAMES, NULL) : 0;
	int kind = stacks_frames_lock_kind(fr, n);
	free(fr);
	return kind;
}
