/* GPU device meters from NVML, as nvtop gets them: libnvidia-ml.so.1 is
 * loaded with dlopen at start (no build dependency) and sampled on a thread
 * of its own, so a slow or hanging NVML call never holds up the caller.
 * Each sampling round becomes IG_EV_GPU and IG_EV_GPU_PROC events
 * (core/event.h) that the session ingests like any other. */
#ifndef IG_NVML_H
#define IG_NVML_H

#include <stddef.h>
#include <stdint.h>

#include "core/source.h"
#include "core/status.h"

enum nvml_state {
	NVML_STARTING = 0, /* loading and initialising */
	NVML_OK = 1,	   /* sampling */
	NVML_ABSENT = 2,   /* no library (no NVIDIA driver) */
	NVML_FAILED = 3,   /* the library is there but NVML does not work */
};

struct nvml;

/* Starts the sampler. path: the library (NULL: $INGERO_TOP_NVML, else
 * "libnvidia-ml.so.1" from the loader's search path); interval_ms between
 * rounds (clamped to 100..10000). NULL only when out of memory; the caller
 * owns the result (nvml_stop). */
struct nvml *nvml_start(const char *path, unsigned interval_ms);
/* Stops the sampler and frees it. Waits for the thread at most ~300 ms: a
 * thread stuck in an NVML call is left behind, detached, and frees what it
 * uses if the call ever returns. nvml_stop(NULL) is a no-op. */
void nvml_stop(struct nvml *n);

/* The state (enum nvml_state) and one line for people into line[len]:
 * "driver 580.95.05, 2 devices (H100, H100)" when sampling, why not
 * otherwise ("libnvidia-ml.so.1 not found", "nvmlInit_v2: Driver Not
 * Loaded"). *stuck_ns (may be NULL): how long the call in progress has
 * taken when that is longer than a round should, else 0; the line then
 * names the call. */
int nvml_status(struct nvml *n, char *line, size_t len, uint64_t *stuck_ns);
/* Waits up to timeout_ms for the state to leave NVML_STARTING; returns it. */
int nvml_wait_ready(struct nvml *n, unsigned timeout_ms);

/* Emits the latest round if it is new: one IG_EV_GPU per device, then one
 * IG_EV_GPU_PROC per process NVML lists, stamped with the round's time (at
 * most now_ns, Unix ns: the caller's event clock). Returns the events
 * emitted (0 when nothing new). */
int nvml_take(struct nvml *n, uint64_t now_ns, ig_emit_fn emit, void *ctx);

/* The session's periodic call: nvml_take, then the state, line and stuck
 * time into st (nvml_state, nvml, nvml_stuck_ns). */
void nvml_tick(struct nvml *n, uint64_t now_ns, ig_emit_fn emit, void *ctx, struct ig_status *st);

#endif
