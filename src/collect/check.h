/* `ingero-top check`: can this host trace CUDA? One PASS/FAIL line each. */
#ifndef IG_CHECK_H_
#define IG_CHECK_H_

#include <stdio.h>

/* Prints the checks to f; returns 0 when all required checks pass, 1 else. */
int check_run(FILE *f);

/* 0 when the process may load BPF programs and attach probes (root, or
 * CAP_BPF + CAP_PERFMON, or CAP_SYS_ADMIN); else a reason in why. */
int check_privileges(char *why, size_t len);

/* 0 when the kernel exposes BTF (/sys/kernel/btf/vmlinux). */
int check_btf(char *why, size_t len);

/* Routes libbpf's messages into core/log.h's log (debug ones only when
 * verbose). */
void log_capture_libbpf(int verbose);

#endif
