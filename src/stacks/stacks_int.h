/* Internals of the stacks module shared by its files: stacks.c (life cycle,
 * the ingest-side entry points), stacks_table.c (stack and series tables,
 * frame lists, the read API), stacks_resolve.c (job queue, resolver thread,
 * mappings, native frames), stacks_python.c (interpreters: finding them,
 * telling the kernel, decoding and placing their frames), stacks_rec.c
 * (the recording format in and out). Nothing outside src/stacks/ includes
 * this; its functions carry the prefix stk_. */
#ifndef IG_STACKS_INT_H
#define IG_STACKS_INT_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/hist.h"
#include "core/htab.h"
#include "core/lru.h"
#include "core/ops.h"
#include "stacks/stacks.h"

#include <linux/types.h>
#include "ingero.h"
#include "core/clock.h"

#define QUEUE_CAP 8192
#define DELAY_CAP 256
#define KNOWN_PIDS 4096		   /* pids already sent to the resolver */
#define EXEC_DELAY_NS 150000000ull /* the loader maps libraries after exec */
#define RECAPTURE_NS 100000000ull  /* mappings re-read at most this often */
#define TAIL_MIN_CALLS 20
#define NS 1000000000ull
#define MAX_FRAMES (IGB_STACK_MAX + IGB_PY_MAX + 8)

struct sym_cache;
struct sym_proc;
struct py_proc;

/* ---- tables (stacks_table.c), under stacks.mu ------------------------------ */

/* A frame as stored: strings are offsets into the stack's blob. */
struct iframe {
	uint8_t kind; /* enum stacks_kind */
	int line;     /* Python: the line; native: the source line (src), 0 = none */
	uint64_t ip, off;
	uint32_t sym, file, text;
	uint32_t src; /* native: source file of line (base name), 0 = none */
};

/* One stack id; slot of stacks.stk_lru. */
struct stk {
	uint64_t id;
	uint32_t pid;
	uint8_t state;	       /* enum stacks_state */
	bool loaded;	       /* from a recording */
	bool drained;	       /* given to stacks_drain */
	struct igb_stack *raw; /* until the resolver takes it */
	uint64_t *ips;
	int nips;
	struct iframe *fr;
	int nfr;
	char *blob;
	int headline; /* frame index, -1 none */
};

/* One (op, stack) series; slot of stacks.ser_lru. */
struct series {
	uint64_t id;
	int op;
	uint32_t pid;
	uint64_t calls, total_ns, max_ns, tail_calls, tail_ns, last_ns;
};

struct optail {
	struct hist h;
	uint64_t thr; /* tail threshold, UINT64_MAX until known */
	uint64_t sec; /* event second of the last evaluation */
};

/* A frame list being built (by the resolver or from a recording). */
struct builder {
	struct iframe fr[MAX_FRAMES];
	int n;
	char *blob;
	size_t len, cap;
};

/* ---- resolver (stacks_resolve.c) ---------------------------------------------- */

enum job_type { J_STACK = 1, J_PROC, J_EXEC, J_EXIT };

struct job {
	uint8_t type;
	uint32_t pid;
	uint64_t id;
	uint64_t due_ns; /* CLOCK_MONOTONIC, delayed jobs */
	/* J_PROC: the text of /proc/PID/maps when the job was posted (owned,
	 * NULL none), for a process that is gone by the time the resolver
	 * gets to it (a short run on a busy machine) */
	char *maps;
};

enum py_state { PYS_UNKNOWN = 0, PYS_NONE, PYS_ON, PYS_UNSUPPORTED, PYS_AGAIN };

/* A process, owned by the resolver thread. */
struct rproc {
	uint32_t pid;
	struct sym_proc *maps;
	uint64_t maps_ns;
	struct py_proc *py;
	int py_state, py_tries; /* enum py_state */
	bool exited;
	uint64_t last_use;
	char note[200];
};

struct stacks {
	struct stacks_opts o;
	pthread_mutex_t mu;
	pthread_cond_t work, idle;
	pthread_t thread;
	bool threaded, stop, busy;

	struct stacks_kernel kern; /* fetch_stack NULL: no kernel (replay, tests) */

	/* tables, under mu */
	struct stk *stks;
	struct lru stk_lru;
	struct series *ser;
	struct lru ser_lru;
	struct optail *tails;
	uint64_t seq;	   /* calls seen: the tables' clock */
	struct htab known; /* pids already sent to the resolver */
	unsigned nknown;
	struct stacks_stats stats;
	/* published for stacks_proc_note, under mu */
	struct {
		uint32_t pid;
		char note[200];
	} * pnotes;
	unsigned npnotes;

	/* job queue, under mu */
	struct job *queue;
	unsigned qhead, qlen;
	struct job delayed[DELAY_CAP];
	unsigned ndelayed;

	/* resolver-owned */
	struct rproc *procs;
	unsigned nprocs;
	uint64_t use_clock;
	struct sym_cache *sym;
};

/* snprintf that may truncate (display text), without the warning. */
static inline void __attribute__((format(printf, 3, 4)))
tfmt(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, n, fmt, ap);
	va_end(ap);
}

static inline const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p ? p : "";
}

/* stacks_table.c: the tables. Init (0 or -ENOMEM) and free run alone;
 * callers of the others hold mu. */
int stk_tab_init(struct stacks *st);
void stk_tab_free(struct stacks *st);
/* Slot of stack id, or -1. */
int stk_find(struct stacks *st, uint64_t id);
/* The slot of a new entry for id (not in the table), evicting the least
 * recently seen stack when full; seen now. */
int stk_insert(struct stacks *st, uint64_t id, uint32_t pid);
/* Slot i was seen now (stacks.seq). */
void stk_seen(struct stacks *st, int i);
/* Counts one call with a stack in its (op, stack) series. */
void stk_series_count(struct stacks *st, const struct ig_event *e);
void stk_series_reset(struct stacks *st);
/* Was pid sent to the resolver already? add: remember it. */
bool stk_pid_known(struct stacks *st, uint32_t pid, bool add);
void stk_pid_forget(struct stacks *st, uint32_t pid);

/* stacks_table.c: frame lists. */
void stk_binit(struct builder *b);
void stk_badd(struct builder *b, int kind, uint64_t ip, uint64_t off, int line, const char *sym,
	      const char *file, const char *text);
/* A native frame with its source file:line (DWARF line tables; src NULL or
 * "" when not known). */
void stk_badd_src(struct builder *b, uint64_t ip, uint64_t off, const char *sym, const char *file,
		  const char *text, const char *src, int line);
/* A STACKS_NOTE frame: fmt with one %s. */
void stk_bnote(struct builder *b, const char *fmt, const char *arg);
/* Moves b's frames into s (b->blob is s's now) and picks the headline. */
void stk_publish(struct stk *s, struct builder *b);

/* stacks_resolve.c: the job queue (callers hold mu) and the resolver. */
bool stk_job_post(struct stacks *st, struct job j);
/* The queue, the process table and the symbol cache: 0 or -ENOMEM;
 * stk_resolver_free undoes it (safe on a half-initialised module). */
int stk_resolver_init(struct stacks *st);
void stk_resolver_free(struct stacks *st);
/* The resolver thread (stacks.threaded): 0 or -errno; stop joins it. */
int stk_resolver_start(struct stacks *st);
void stk_resolver_stop(struct stacks *st);
/* Runs the queued jobs on the caller's thread (opts.inline_resolve). */
void stk_resolver_run_inline(struct stacks *st);

/* stacks_python.c: interpreters (resolver thread). */
/* Looks for p's interpreter in its mappings and tells the kernel. */
void stk_py_find(struct stacks *st, struct rproc *p);
/* p exec'd: its interpreter is unknown again. */
void stk_py_forget(struct rproc *p);

/* Placing the Python frames of one raw stack among its native frames:
 * stk_py_merge_begin, stk_py_merge_native after each native frame added
 * at index before, stk_py_merge_end once the native frames are done (the
 * rest of the Python frames, then the notes about them). */
struct py_merge {
	struct stacks *st;
	struct rproc *p;
	const struct igb_stack *raw;
	int npy, gend[IGB_PY_MAX + 1], ng, g, gstart;
	const char *interp;
	bool on, rest_placed, failed;
};
void stk_py_merge_begin(struct py_merge *m, struct stacks *st, struct rproc *p,
			const struct igb_stack *raw);
void stk_py_merge_native(struct py_merge *m, struct builder *b, int before);
void stk_py_merge_end(struct py_merge *m, struct builder *b);

#endif
