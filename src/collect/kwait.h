/* The wait evidence's user side (bpf/waits.bpf.h, core/waits.h): this
 * architecture's syscall numbers in ingero-top's codes, the kernel's wait
 * functions by name (/proc/kallsyms, read once), and the BPF records of
 * blocked intervals and kernel time made into events. */
#ifndef IG_KWAIT_H
#define IG_KWAIT_H

#include <stdint.h>

#include "core/event.h"

struct igb_event;

/* The BPF programs' class of each syscall number (IGB_SC_*): 512 entries. */
void kwait_sys_classes(uint8_t *cls);
/* ingero-top's code (enum ig_sys) of this architecture's syscall nr. */
int kwait_sys(long nr);
/* [__sched_text_start, __sched_text_end), zeros when kallsyms hides it. */
void kwait_sched_text(uint64_t r[2]);
/* What a thread sleeping with wait channel wchan, in the scheduler's
 * function how, waits for (enum ig_wfn). */
int kwait_wfn(uint64_t wchan, uint64_t how);

/* e was filled from the record b as any other: make its wait evidence
 * ingero-top's (an IGB_OFFCPU record), or its kernel time (IGB_KTIME). */
void kwait_offcpu(const struct igb_event *b, struct ig_event *e);
/* sys_ns, fault_ns: the kernel time of each syscall and page fault the
 * tracepoints do not see (collector calibration), added per one timed */
void kwait_ktime(const struct igb_event *b, struct ig_event *e, uint32_t sys_ns, uint32_t fault_ns);

#endif
