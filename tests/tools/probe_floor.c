/* probe_floor [--pid PID] MODE LIB...: attaches the programs of tests/tools/probe_floor.bpf.c
 * (MODE count, clock or floor) to every CUDA function ingero-top traces in
 * the given libraries, with uprobe_multi links as ingero-top does, and runs
 * until SIGINT or SIGTERM, draining the ring buffer every 100 ms. Prints
 * "attached" when the links are in place, "hits N" every 100 ms (N > 0 once
 * the probes fire) and, at the end, the entries, returns and records seen.
 * --pid: only that process's calls count (tests/integration/test_probe_floor
 * runs beside other tests). Used by tests/bench/bench_collect.sh. */
#include <stdlib.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "collect/collector.h"
#include "collect/elfsym.h"
#include "core/ops.h"
#include "probe_floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static long nrecords;

static int on_record(void *ctx, void *data, size_t len)
{
	(void)ctx;
	(void)data;
	(void)len;
	nrecords++;
	return 0;
}

/* File offsets of every traced function in path (aliases once). */
static int traced_offsets(const char *path, uint64_t *out, int max)
{
	int n = 0;

	for (int op = IG_OP_NONE + 1; op < IG_OP_MAX; op++) {
		const struct ig_op_info *oi = ig_op_info(op);
		uint64_t offs[8];
		int nsym = 0;

		while (oi->symbols[nsym] && nsym < 8)
			nsym++;
		if (elfsym_offsets(path, oi->symbols, nsym, offs) < 0)
			return -1;
		for (int k = 0; k < nsym; k++) {
			bool dup = !offs[k];
			for (int j = 0; j < n && !dup; j++)
				dup = out[j] == offs[k];
			if (!dup && n < max)
				out[n++] = offs[k];
		}
	}
	return n;
}

static uint64_t counter(struct probe_floor_bpf *skel, uint32_t idx)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t v[ncpu > 0 ? ncpu : 1], sum = 0;

	if (ncpu <= 0 || bpf_map_lookup_elem(bpf_map__fd(skel->maps.counts), &idx, v))
		return 0;
	for (int i = 0; i < ncpu; i++)
		sum += v[i];
	return sum;
}

int main(int argc, char **argv)
{
	struct probe_floor_bpf *skel;
	struct bpf_program *enter, *ret;
	struct ring_buffer *rb = NULL;
	int links[64], nlinks = 0, rc = 1;

	unsigned long pid = 0;
	if (argc > 2 && !strcmp(argv[1], "--pid")) {
		char *end;
		pid = strtoul(argv[2], &end, 10);
		if (*end || !pid || pid > 4194304) {
			fprintf(stderr, "probe_floor: --pid: not a process id: '%s'\n", argv[2]);
			return 2;
		}
		argc -= 2;
		argv += 2;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: probe_floor [--pid PID] count|clock|floor LIB...\n");
		return 2;
	}
	skel = probe_floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "probe_floor: cannot open the BPF object\n");
		return 1;
	}
	skel->rodata->only_tgid = (__u32)pid;
	if (!strcmp(argv[1], "count")) {
		enter = skel->progs.count_enter;
		ret = skel->progs.count_return;
	} else if (!strcmp(argv[1], "clock")) {
		enter = skel->progs.clock_enter;
		ret = skel->progs.clock_return;
	} else if (!strcmp(argv[1], "floor")) {
		enter = skel->progs.clock_enter;
		ret = skel->progs.floor_return;
	} else {
		fprintf(stderr, "probe_floor: unknown mode '%s' (count, clock or floor)\n",
			argv[1]);
		goto out;
	}
	struct bpf_program *p;
	bpf_object__for_each_program(p, skel->obj)
	{
		bpf_program__set_autoload(p, p == enter || p == ret);
		bpf_program__set_expected_attach_type(p, 48 /* BPF_TRACE_UPROBE_MULTI */);
	}
	if (probe_floor_bpf__load(skel)) {
		fprintf(stderr, "probe_floor: cannot load the BPF programs (root, Linux 6.6+)\n");
		goto out;
	}
	for (int i = 2; i < argc && nlinks + 2 <= 64; i++) {
		uint64_t offs[IG_OP_MAX * 6];
		int n = traced_offsets(argv[i], offs, IG_OP_MAX * 6);
		if (n <= 0) {
			fprintf(stderr, "probe_floor: no traced CUDA function in %s\n", argv[i]);
			goto out;
		}
		int fe = collector_uprobe_multi_link(bpf_program__fd(enter), argv[i], offs, NULL, n,
						     false);
		int fr =
		    collector_uprobe_multi_link(bpf_program__fd(ret), argv[i], offs, NULL, n, true);
		if (fe < 0 || fr < 0) {
			fprintf(stderr, "probe_floor: cannot attach to %s: %s\n", argv[i],
				strerror(-(fe < 0 ? fe : fr)));
			goto out;
		}
		links[nlinks++] = fe;
		links[nlinks++] = fr;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.records), on_record, NULL, NULL);
	if (!rb) {
		fprintf(stderr, "probe_floor: cannot open the ring buffer\n");
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("attached\n");
	fflush(stdout);
	while (!stop) {
		ring_buffer__consume(rb);
		/* hits: the probes fire (entries counted, durations summed or records) */
		printf("hits %llu\n", (unsigned long long)(counter(skel, 0) + counter(skel, 3) +
							   (uint64_t)nrecords));
		fflush(stdout);
		usleep(100000);
	}
	ring_buffer__consume(rb);
	printf("entries %llu returns %llu records %ld\n", (unsigned long long)counter(skel, 0),
	       (unsigned long long)counter(skel, 1), nrecords);
	rc = 0;
out:
	for (int i = 0; i < nlinks; i++)
		close(links[i]);
	ring_buffer__free(rb);
	probe_floor_bpf__destroy(skel);
	return rc;
}
