/* Finding CUDA libraries: in the mappings of processes (through
 * /proc/PID/root, so copies inside containers and venvs are found), in the
 * ldconfig cache and under /usr/local/cuda*. */
#ifndef IG_DISCOVER_H
#define IG_DISCOVER_H

#include <stdbool.h>

/* Called with a path that can be opened from this mount namespace, and the
 * pid it was found in (0 for system locations). */
typedef void (*discover_cb)(void *ctx, const char *path, int pid);

/* True when the file name looks like a GPU library ingero-top traces: the
 * CUDA runtime or driver (libcudart.so*, libcudart-HASH.so* in pip wheels,
 * libcuda.so*), NCCL (libnccl.so*) or HIP (libamdhip64.so*). */
bool discover_is_cuda_lib(const char *path);

/* Reports the CUDA libraries mapped by pid, and its executable when that
 * defines CUDA runtime symbols itself (static cudart). Returns the number
 * reported or -errno (-ESRCH when the process does not exist). */
int discover_pid_libs(int pid, discover_cb cb, void *ctx);
/* Only the mapped libraries (after a dlopen the executable is the same). */
int discover_pid_maps(int pid, discover_cb cb, void *ctx);

/* Reports GPU libraries from the ldconfig cache, /usr/local/cuda* and /opt/rocm*. */
int discover_system_libs(discover_cb cb, void *ctx);

/* Fills pids with up to max processes that map a CUDA library; returns how many. */
int discover_cuda_pids(int *pids, int max);

/* Reports the CUDA libraries an executable would load (its DT_NEEDED closure
 * as the dynamic loader resolves it), without running its code. */
int discover_exe_libs(const char *exe, discover_cb cb, void *ctx);

/* 1 when /proc/PID exists, 0 when not. */
int discover_pid_alive(int pid);

#endif
