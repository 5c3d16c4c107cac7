/* User stacks of CUDA calls: one entry per distinct stack id (the kernel's
 * hash of the native and CPython frames, or stack_hash in a recording),
 * counts per (op, stack) (calls, total and max duration, tail calls), and a
 * resolver thread that turns raw stacks into frames off the event path:
 * native symbols (symbolize.c), CPython frames (pyframes.c) put in place of
 * the interpreter's evaluation loop, notes where something could not be
 * resolved. Recordings get the frames as JSON in Ingero's stack_traces
 * format; stacks of recordings (ours and Ingero's) load from that format.
 *
 * The module never touches the kernel itself: in live mode the session
 * gives it a struct stacks_kernel (two function pointers) through which raw
 * stacks are fetched and interpreters are announced.
 *
 * Threading: stacks_event() and the stacks_add_* calls come from the thread
 * that ingests events; a private resolver thread captures process mappings,
 * looks for interpreters (and tells the kernel about them) and symbolises;
 * the read calls copy out under a mutex that is never held while resolving,
 * so they may come from any thread and never wait for a resolution.
 * Memory is bounded (stacks_opts); the least recently seen entries go first. */
#ifndef IG_STACKS_H
#define IG_STACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/event.h"

struct stacks;
struct igb_stack;  /* bpf/ingero.h: a raw stack as the kernel stores it */
struct igb_pyproc; /* bpf/ingero.h: where a CPython keeps its frames */

struct stacks_opts {
	unsigned max_stacks;	/* distinct stacks kept, 0 = 4096 */
	unsigned max_series;	/* (op, stack) series kept, 0 = 8192 */
	unsigned max_procs;	/* processes whose mappings are kept, 0 = 512 */
	bool inline_resolve;	/* resolve inside the calls (no thread): tests, benchmarks */
	bool no_python;		/* do not look for CPython interpreters */
	uint64_t max_sym_bytes; /* symbol table memory (symbolize.h), 0 = 256 MiB */
};

/* NULL when out of memory or the thread cannot start. o may be NULL. */
struct stacks *stacks_new(const struct stacks_opts *o);
/* Stops the resolver and frees everything. stacks_free(NULL) is a no-op. */
void stacks_free(struct stacks *st);

/* The kernel side of live mode, as plain functions (the session adapts
 * the collector to it; tests pass fakes). ctx is given back to both.
 *
 * fetch_stack copies the raw stack with this id (ig_event.stack_id) out of
 * the kernel into *out (the module's memory): 0, or -errno (-ENOENT: not,
 * or no longer, there). Called on the ingesting thread, the first time an
 * id is seen, without the module's lock held.
 *
 * set_python tells the kernel where the CPython of pid keeps its frames
 * (cfg, built by pyframes.c; valid during the call); NULL cfg forgets it.
 * 0 or -errno (the error goes into the process's note). Called on the
 * resolver thread. May be NULL: interpreters are still found and their
 * frames decoded, the kernel is just not told. */
struct stacks_kernel {
	int (*fetch_stack)(void *ctx, uint64_t id, struct igb_stack *out);
	int (*set_python)(void *ctx, int pid, const struct igb_pyproc *cfg);
	void *ctx;
};

/* Live mode: k is copied; whatever k->ctx points to must stay valid until
 * stacks_set_kernel(st, NULL) or stacks_free(st). With a kernel (its
 * fetch_stack set), processes are followed: mappings are read at a
 * process's first call, fork, exec and exit. NULL: no kernel (replay,
 * tests): stacks come from stacks_add_raw and stacks_add_json only. */
void stacks_set_kernel(struct stacks *st, const struct stacks_kernel *k);

/* Every ingested event, in order. Calls with a stack id are counted per
 * (op, stack); a stack id seen for the first time is copied out of the
 * kernel (stacks_kernel.fetch_stack) and queued for resolution; fork, exec
 * and exit keep the process table right. Never waits for resolution. */
void stacks_event(struct stacks *st, const struct ig_event *e);

/* Reads pid's mappings and looks for its interpreter now (queued), before
 * its first stack: for processes enrolled at start (--pid, the launched
 * command) so that stacks of one that exits soon still resolve. */
void stacks_watch_pid(struct stacks *st, uint32_t pid);

/* A raw stack, as the kernel stored it, produced by pid (copied; tests
 * and tools). 0, -EINVAL (id 0), -EEXIST when id is known, -ENOMEM. */
int stacks_add_raw(struct stacks *st, uint64_t id, uint32_t pid, const struct igb_stack *raw);
/* A resolved stack from a recording (a stack_traces row, which the session
 * reads with replay_stacks): frames_json in Ingero's stack_traces format
 * (an array of {"s": symbol+offset, "f": file, "i": address,
 * "pf"/"pfn"/"pl": Python file, function, line}; ours: "n" a note, "o"
 * the offset in "f" of an unresolved address), or only ips_json (an array
 * of "0x..." strings). store/recfmt.h encodes and decodes the format;
 * mangled names are demangled here.
 * 0, -EEXIST, -EINVAL (neither parses), -ENOMEM. */
int stacks_add_json(struct stacks *st, uint64_t id, const char *ips_json, const char *frames_json);

/* Forgets the counts (the r key, a replay seek); stacks stay. */
void stacks_reset(struct stacks *st);
/* The per-op stack counts and tail thresholds at a replay checkpoint
 * (stacks_ckpt.c): stacks_restore puts them back; the stacks themselves
 * (frames, names) stay. Owned by the caller; stacks_ckpt_free(NULL) is a
 * no-op. NULL when out of memory. */
struct stacks_ckpt;
struct stacks_ckpt *stacks_save(struct stacks *st);
void stacks_restore(struct stacks *st, const struct stacks_ckpt *s);
void stacks_ckpt_free(struct stacks_ckpt *s);
/* Waits until every queued stack is resolved, at most timeout_ms. 0 or
 * -ETIMEDOUT. */
int stacks_flush(struct stacks *st, int timeout_ms);

/* --- reading ---------------------------------------------------------- */

enum stacks_state {
	STACKS_UNKNOWN = 0, /* id never seen or evicted */
	STACKS_PENDING,	    /* queued for resolution */
	STACKS_RESOLVED,
	STACKS_MISSING, /* id seen but its frames are not available (not in
			 * the kernel's map any more, not in the recording) */
};

enum stacks_kind {
	STACKS_NATIVE = 1, /* a return address */
	STACKS_PY = 2,	   /* a CPython frame */
	STACKS_NOTE = 3,   /* why something is missing: text only */
};

struct stacks_frame {
	uint8_t kind;	/* enum stacks_kind */
	uint64_t ip;	/* native: the address (0 when loaded from a recording) */
	uint64_t off;	/* native: offset in sym, or in the file when sym is "" */
	int line;	/* Python: line of the instruction */
	char sym[192];	/* native: demangled function; Python: qualified name; "" = unresolved */
	char file[192]; /* native: mapped file; Python: co_filename; "" = unknown */
	char text[320]; /* the display line: "cudaMalloc+0x1b (libcudart.so.12)",
			 * "[py] train.py:142 in forward()", "0x7f0012345678
			 * (libfoo.so+0x1234)", "[note] ..." */
};

/* The frames of stack id, innermost (the caller of the CUDA function)
 * first, copied into out[max]. Returns the number written; *state (may be
 * NULL) gets enum stacks_state. */
int stacks_frames(struct stacks *st, uint64_t id, struct stacks_frame *out, int max, int *state);

/* What the user stack id of a lock wait, and wake_id of the thread that
 * ended it (0 none), say it waited on (enum ig_lock_kind, stacks_kind.c):
 * IG_LOCK_UNKNOWN until they are resolved. The same from frames already
 * read: the waiter's alone, the waker's alone, both. */
int stacks_lock_kind(struct stacks *st, uint64_t id, uint64_t wake_id);
int stacks_frames_lock_kind(const struct stacks_frame *fr, int n);
int stacks_frames_wake_kind(const struct stacks_frame *fr, int n);
int stacks_frames_lock_kind2(const struct stacks_frame *wait, int n,
			     const struct stacks_frame *wake, int m);

/* One (op, stack) series; times in ns. "Tail" calls last at least the
 * op's p95, as in the model's tail, but over the calls seen so far (since
 * start or reset), re-evaluated every second of event time. */
struct stacks_stat {
	uint64_t id;
	int op;
	uint32_t pid; /* first process seen calling through it */
	uint64_t calls, total_ns, max_ns, tail_calls, tail_ns;
	uint64_t last_ns;   /* event time of its last call */
	int state;	    /* enum stacks_state of the stack */
	char headline[320]; /* the most telling frame: the innermost Python frame,
			     * else the innermost resolved native frame outside
			     * the CUDA libraries, else the first frame */
};

enum stacks_order { STACKS_BY_TAIL = 0, STACKS_BY_TOTAL = 1, STACKS_BY_CALLS = 2 };

/* The top series of op (-1: every op) in order (ties: more calls, lower
 * id), at most max. Returns the number written. */
int stacks_top(struct stacks *st, int op, int order, struct stacks_stat *out, int max);
/* One series; 0 or -ENOENT. */
int stacks_series(struct stacks *st, int op, uint64_t id, struct stacks_stat *out);

/* The stack as JSON in Ingero's stack_traces format: *ips (array of "0x..."
 * strings, "" when none) and *frames (array of objects, "" while not
 * resolved). malloc'd, the caller frees both. 0, 1 (still queued for
 * resolution: *frames is ""), or -ENOENT / -ENOMEM. */
int stacks_json(struct stacks *st, uint64_t id, char **ips, char **frames);

/* Calls fn, on the caller's thread, for each stack resolved since the last
 * call (for rec_stack); the strings are valid during the call. Stacks
 * loaded from a recording are not repeated. Returns the number passed. */
typedef void (*stacks_json_fn)(void *ctx, uint64_t id, const char *ips, const char *frames);
int stacks_drain(struct stacks *st, stacks_json_fn fn, void *ctx);

struct stacks_stats {
	uint64_t calls;		 /* call events seen */
	uint64_t calls_no_stack; /* ... without a stack id */
	uint64_t stacks;	 /* distinct stacks known now */
	uint64_t resolved, pending, missing;
	uint64_t evicted;			     /* stacks dropped to stay under max_stacks */
	uint64_t queue_full;			     /* stacks not queued: resolver queue full */
	uint64_t resolve_ns;			     /* time spent resolving, total */
	uint64_t frames_resolved, frames_unresolved; /* native frames */
	uint64_t py_frames;			     /* Python frames decoded */
	unsigned procs, py_procs, py_unsupported;
};
void stacks_get_stats(struct stacks *st, struct stacks_stats *out);

/* The note about pid's interpreter ("CPython 3.11 (/usr/bin/python3.11):
 * Python frames on", "... is not supported ...") or "" when none. */
void stacks_proc_note(struct stacks *st, uint32_t pid, char *buf, int len);

#endif
