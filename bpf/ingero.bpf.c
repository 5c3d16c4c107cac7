// SPDX-License-Identifier: GPL-2.0
/* ingero-top kernel side: uprobe/uretprobe pairs on CUDA API functions with
 * per-call off-CPU attribution, plus scheduler, process, page-allocation and
 * block-I/O tracepoints. Only target processes (by tgid) produce records. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "ingero.h"

char LICENSE[] SEC("license") = "GPL";

/* The parts, by probe family, in dependency order; each is included once
 * (one compilation unit: one object, one skeleton, the maps shared). A new
 * probe goes into the part of its family, or into a new bpf/<family>.bpf.h
 * included here. */
#include "common.bpf.h" /* flags, knobs, thread state, shared maps, helpers */
#include "args.bpf.h"   /* call arguments: stack, launch config, NCCL */
#include "stacks.bpf.h" /* user and CPython stacks */
#include "calls.bpf.h"  /* CUDA/HIP uprobes and uretprobes */
#include "libs.bpf.h"   /* holds, dynamic loader uprobes */
#include "waits.bpf.h"  /* wait evidence: syscalls, faults, reclaim */
#include "sched.bpf.h"  /* switch, wake-up, off-CPU split */
#include "proc.bpf.h"   /* fork, exec, exit, rename */
#include "mem.bpf.h"    /* page allocations, block I/O */
