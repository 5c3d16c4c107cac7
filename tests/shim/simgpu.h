/* The simulated GPU behind the shim's libcuda.so.1 and libamdhip64.so.6: one
 * device per library and process, per-stream timelines, fake device memory,
 * graphs, events, and stream items whose end another party posts later (an
 * NCCL collective that completes when every rank has arrived). Internal to
 * the shim libraries (hidden symbols); each library that links simgpu.c gets
 * its own device. Timing model: docs/shim.md. */
#ifndef SIMGPU_H
#define SIMGPU_H

#include <pthread.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)

typedef unsigned long long u64;

/* Results; each API maps them to its own codes. */
enum sim_status {
	SIM_OK = 0,
	SIM_EINVAL,	/* bad argument */
	SIM_ENOMEM,	/* simulated device memory exhausted */
	SIM_EHANDLE,	/* not a live stream, event, graph or module */
	SIM_ESTATE,	/* capture already running */
	SIM_ECAPTURE,	/* not allowed while capturing, or capture of the legacy stream */
	SIM_EUNMATCHED, /* end of a capture that was not started */
	SIM_ENOTREADY,	/* event or stream query: work pending */
};

#define SIM_TIME_UNSET (~0ULL)

/* Stream handles 0 and 1 are the legacy default stream, 2 the calling
 * thread's per-thread default stream (CUDA's and HIP's values). */
#define SIM_STREAM_LEGACY ((void *)0x1)
#define SIM_STREAM_PER_THREAD ((void *)0x2)

struct sim_ext;

struct sim_stream {
	unsigned int magic;
	int legacy;   /* the legacy default stream */
	int blocking; /* orders itself after legacy-stream work */
	int capturing;
	u64 busy_until; /* end of its known work, CLOCK_MONOTONIC ns */
	u64 cap_ns;	/* device time recorded by the current capture */
	unsigned int cap_nodes;
	struct sim_ext *head, *tail; /* items whose end is not known yet, oldest first */
	struct sim_stream *pend_next;
	int on_pend;
};

struct sim_event {
	unsigned int magic;
	int recorded;
	u64 t;		     /* when the recorded work ends, if dep is NULL */
	struct sim_ext *dep; /* else: dep's end + after */
	u64 after;
};

struct sim_graph {
	unsigned int magic;
	unsigned int nodes;
	u64 dur_ns;
};

/* Read once from the SHIM_* environment at the first call (sim_init). */
struct sim_config {
	u64 free_ns;
	u64 copy_fixed_ns;
	double copy_gbps; /* GB/s == bytes per ns */
	u64 spin_ns;
	int sync_mode;
	int launch_blocking; /* CUDA_LAUNCH_BLOCKING=1: launches wait for their work */
	u64 mem_limit;
	u64 module_ns;	    /* CPU cost of a module or library load */
	u64 module_cold_ns; /* extra for the first load of the process */
};
extern struct sim_config sim_cfg;

void sim_init(void);
u64 sim_now(void);
u64 sim_env_us(const char *name, double def_us);
void sim_spin(u64 ns);
void sim_wait_until(u64 deadline);

/* Per-call costs (ns): the per-thread override if set, else process-wide. */
u64 sim_kernel_ns(void);
u64 sim_launch_ns(void);
u64 sim_malloc_ns(void);
u64 sim_copy_ns(size_t bytes);
void sim_set_kernel_ns(u64 ns);
void sim_set_malloc_ns(u64 ns);
void sim_set_launch_ns(u64 ns);
void sim_set_thread_kernel_ns(u64 ns);
void sim_set_thread_malloc_ns(u64 ns);
void sim_set_thread_launch_ns(u64 ns);

/* Work of dur device ns on a stream handle, recorded instead while capturing
 * (nodes counts graph nodes). Pays launch CPU time first when spin is set. */
int sim_launch(void *h, u64 dur, unsigned int nodes, int spin);
/* A synchronous copy on the legacy stream: waits for the device's blocking
 * work then the copy; moves bytes when both sides are host memory. check_*:
 * that side must be device memory. */
int sim_copy_sync(void *dst, const void *src, size_t n, int check_dst, int check_src);
/* Device memory [p, p + n) valid? (fake or managed). */
int sim_dptr_ok(u64 p, size_t n);
int sim_is_fake(u64 p);
/* Host bytes behind a device range, or NULL for fake device memory. */
void *sim_host_bytes(u64 p);

int sim_alloc(u64 *dptr, size_t bytes, int managed, unsigned int flags, int spin_cost);
/* sync: the implicit device synchronisation of cudaFree. */
int sim_free(u64 dptr, int sync);
/* Page-locked host memory: real memory, tracked so it can be freed once. */
int sim_host_alloc(void **p, size_t bytes);
int sim_host_free(void *p);

int sim_stream_create(void **out, int nonblocking);
int sim_stream_destroy(void *h);
int sim_stream_sync(void *h);
int sim_device_sync(void);

int sim_capture_begin(void *h);
int sim_capture_end(void *h, struct sim_graph **out);
int sim_graph_instantiate(struct sim_graph **exec, struct sim_graph *g);
int sim_graph_destroy(struct sim_graph *g, unsigned int magic);
int sim_graph_launch(struct sim_graph *exec, void *h);
#define SIM_GRAPH_MAGIC 0x47525048u
#define SIM_EXEC_MAGIC 0x47455845u

int sim_event_create(struct sim_event **out);
int sim_event_destroy(struct sim_event *e);
int sim_event_record(struct sim_event *e, void *h);
int sim_event_query(struct sim_event *e);
int sim_event_sync(struct sim_event *e);
int sim_event_elapsed(struct sim_event *a, struct sim_event *b, float *ms);
int sim_stream_wait_event(void *h, struct sim_event *e);

/* Busy-spins the CPU cost of loading a module or library: SHIM_MODULE_US,
 * plus SHIM_MODULE_COLD_US for the first load of the process. */
void sim_module_load_cost(void);

/* A stream item whose end time someone posts later (NCCL): enqueue returns
 * a reference that the poster must give back with sim_ext_complete. */
int sim_ext_enqueue(void *h, struct sim_ext **out);
u64 sim_ext_start(struct sim_ext *x); /* blocks until the stream reaches it */
void sim_ext_complete(struct sim_ext *x, u64 end_ns);

/* Between simgpu.c and simmem.c only: the device lock; with it held, queue
 * dur ns on the legacy stream and return its end (waiting, lock released,
 * for items not yet posted); wait until no stream has such an item and
 * return the end of all queued work. */
extern pthread_mutex_t sim_lock;
u64 sim_legacy_queue_wait(u64 dur);
u64 sim_device_end_wait(void);

#pragma GCC visibility pop

#endif /* SIMGPU_H */
