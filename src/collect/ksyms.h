/* Kernel text ranges the BPF programs compare stack addresses against, from
 * /proc/kallsyms: why a target thread slept (inside a page fault) and what
 * woke it (a timer). Zeros when kallsyms hides addresses or lacks a symbol;
 * the programs then do without that detail. Read once per process. */
#ifndef IG_KSYMS_H
#define IG_KSYMS_H

#include <stdint.h>

struct ksym_ranges {
	uint64_t fault[2];   /* exc_page_fault: [start, end) */
	uint64_t hrtimer[2]; /* hrtimer_wakeup: a sleep or timeout on an hrtimer ended */
	uint64_t timeout[2]; /* process_timeout: a schedule_timeout() ended */
	/* posix_timer_fn, it_real_fn: a POSIX timer (timer_create) or an
	 * interval timer (setitimer, alarm) expired and sends its signal */
	uint64_t posix_timer[2], itimer[2];
};

/* Fills r (zeros where unknown); returns how many of the five were found. */
int ksym_ranges(struct ksym_ranges *r);

/* [__irqentry_text_start, _end) and [__softirqentry_text_start, _end): the
 * interrupt entry code, for the waker of a wake-up (bpf/sched.bpf.h
 * wake_ctx). Zeros when kallsyms hides addresses or lacks them. */
void ksym_irq_ranges(uint64_t r[4]);

#endif
