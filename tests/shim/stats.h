/* SHIM_STATS, shared by every shim library: per exported symbol call
 * counters written at exit. Internal (hidden symbols). */
#ifndef SHIM_STATS_H
#define SHIM_STATS_H

#pragma GCC visibility push(hidden)

/* SHIM_STATS=FILE: appends "PID SYMBOL COUNT" for every non-zero counter, in
 * one write so that processes sharing the file do not interleave. */
void shim_write_stats(const char *const *names, _Atomic unsigned long long *counts, int n);

#pragma GCC visibility pop

/* Counters that also keep every exported body distinct: gcc's identical code
 * folding would otherwise turn one exported function into a jump to another,
 * and a uprobe on each would then fire twice for one call. */
#define SHIM_SYM_ENUM(s) SYM_##s,
#define SHIM_SYM_NAME(s) #s,
/* The nop keeps the counter's locked add from being a function's first
 * instruction: the kernel refuses to place a uprobe on a LOCK-prefixed
 * instruction (arch/x86/kernel/uprobes.c, is_prefix_bad), and the probe
 * then never fires. NVIDIA's functions start with a plain prologue. */
#define SHIM_COUNT(arr, s)                                                                         \
	do {                                                                                       \
		__asm__ volatile("nop" ::: "memory");                                              \
		atomic_fetch_add_explicit(&arr[SYM_##s], 1, memory_order_relaxed);                 \
	} while (0)

#endif
