/* The GPU device and NCCL parts of the batch frames (report.h): written
 * only when the model has NVML samples or NCCL operations, so frames of
 * other workloads are unchanged. */
#ifndef IG_REPORT_GPU_H
#define IG_REPORT_GPU_H

#include <jansson.h>
#include <stdio.h>

struct ig_model;

/* Text: a GPU section (one "gpu N" line per device: name, utilisation,
 * memory, power and limit, temperature, SM clock, window mean utilisation,
 * the sample's age; "-" for a value NVML did not give) and an NCCL section
 * ("nccl OP" lines: operations, bytes, bytes/s, completed, completion wait
 * mean and max; "rank" lines: one per process and communicator). summary:
 * lifetime numbers. */
void report_gpu_text(FILE *f, const struct ig_model *m, int summary);

/* JSON: the members "gpus" (devices), "gpu_procs" (GPU memory per process
 * and device) and "nccl" ({"ops": [...], "ranks": [...], "pending",
 * "dropped"}) of a frame object o; a value NVML did not give is null.
 * Returns 0, or 1 when out of memory. */
int report_gpu_json(json_t *o, const struct ig_model *m);

#endif
