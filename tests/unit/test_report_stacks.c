/* Batch output of the top stacks (src/report/report_stacks.c): the text section
 * (order, numbers, frames, the frame limit with notes kept) and the JSON
 * line, which Python's json module must accept with the same numbers. */
#include "report/report_stacks.h"
#include "core/ops.h"
#include "stacks/stacks.h"
#include "check.h"

#include <linux/types.h>
#include "ingero.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NS 1000000000ull

__attribute__((noinline)) int rs_inner(int x)
{
	asm volatile("" ::: "memory");
	return x + 1;
}

__attribute__((noinline)) int rs_outer(int x)
{
	asm volatile("" ::: "memory");
	return x + 2;
}

static void feed(struct stacks *st, int op, uint64_t id, int n, uint64_t dur, uint64_t *t)
{
	for (int i = 0; i < n; i++) {
		struct ig_event e = {0};
		e.kind = IG_EV_CALL;
		e.op = (uint16_t)op;
		e.pid = e.tid = (uint32_t)getpid();
		e.ts_ns = *t;
		e.dur_ns = dur + (uint64_t)(i * 37 % 50) * 1000;
		e.stack_id = id;
		stacks_event(st, &e);
		*t += NS / 50;
	}
}

int main(void)
{
	struct stacks *st =
	    stacks_new(&(struct stacks_opts){.inline_resolve = true, .no_python = true});
	struct igb_stack raw;
	char *buf = NULL;
	size_t len = 0;
	uint64_t t = 100 * NS;

	CHECK(st != NULL);
	if (!st)
		return check_done("test_report_stacks");

	FILE *f = open_memstream(&buf, &len);
	CHECK(report_stacks_text(f, st, NULL) == 0);
	fclose(f);
	CHECK(!strcmp(buf, "STACKS none\n"));
	free(buf);

	memset(&raw, 0, sizeof(raw));
	raw.nips = 2;
	raw.ips[0] = (uint64_t)(uintptr_t)&rs_inner + 1;
	raw.ips[1] = (uint64_t)(uintptr_t)&rs_outer + 1;
	CHECK(stacks_add_raw(st, 0x1111, (uint32_t)getpid(), &raw) == 0);
	raw.ips[0] = (uint64_t)(uintptr_t)&rs_outer + 1;
	raw.nips = 1;
	CHECK(stacks_add_raw(st, 0x2222, (uint32_t)getpid(), &raw) == 0);
	feed(st, IG_OP_CUDA_STREAM_SYNC, 0x1111, 100, 1000000, &t);
	feed(st, IG_OP_CUDA_STREAM_SYNC, 0x2222, 8, 40000000, &t);
	feed(st, IG_OP_CUDA_MALLOC, 0x2222, 10, 5000, &t);

	f = open_memstream(&buf, &len);
	CHECK(report_stacks_text(f, st, &(struct report_stacks_opts){.per_op = 2, .frames = 1}) ==
	      0);
	fclose(f);
	printf("%s", buf);
	/* Sync first (more time), its slow stack first (tail time). */
	const char *sync =
	    strstr(buf, "\ncudaStreamSynchronize  stack 0x0000000000002222  calls 8 ");
	const char *sync2 =
	    strstr(buf, "\ncudaStreamSynchronize  stack 0x0000000000001111  calls 100 ");
	const char *mal = strstr(buf, "\ncudaMalloc  stack 0x0000000000002222  calls 10 ");
	CHECK(!strncmp(buf, "STACKS  top 2 per op by tail time\n", 34));
	CHECK(sync && sync2 && mal && sync < sync2 && sync2 < mal);
	CHECK(strstr(buf, "  tail 8 ") != NULL);
	/* built with -g: each frame ends in its source file:line (libdw) */
	CHECK(strstr(buf, "\n    rs_inner+0x1 (test_report_stacks) test_report_stacks.c:") !=
	      NULL);
	CHECK(strstr(buf, "\n    (1 more frames)\n") != NULL);
	CHECK(strstr(buf, "rs_outer+0x1 (test_report_stacks) test_report_stacks.c:") != NULL);
	free(buf);

	f = open_memstream(&buf, &len);
	CHECK(report_stacks_json(f, st, &(struct report_stacks_opts){.per_op = 5}) == 0);
	fclose(f);
	CHECK(len > 0 && buf[len - 1] == '\n' && strchr(buf, '\n') == buf + len - 1);
	CHECK(strstr(buf, "{\"type\":\"stacks\",\"order\":\"tail\",\"ops\":[{\"op\":"
			  "\"cudaStreamSynchronize\"") == buf);
	CHECK(strstr(buf, "\"sym\":\"rs_inner\"") && strstr(buf, "\"tail_calls\":8"));
	if (!access("/usr/bin/python3", X_OK)) {
		char path[64];
		snprintf(path, sizeof(path), "/tmp/ig-rs-%d.json", (int)getpid());
		FILE *o = fopen(path, "w");
		if (o) {
			fputs(buf, o);
			fclose(o);
			char cmd[512];
			snprintf(
			    cmd, sizeof(cmd),
			    "/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
			    "s=d[\"ops\"][0][\"stacks\"]; sys.exit(not (len(d[\"ops\"])==2 and "
			    "s[0][\"calls\"]==8 and s[1][\"calls\"]==100 and "
			    "s[1][\"frames\"][1][\"sym\"]==\"rs_outer\"))' %s",
			    path);
			CHECK(system(cmd) == 0);
			unlink(path);
		}
	}
	free(buf);

	/* A call site: the program's frames after the C library's; a stack
	 * with only the C library's frame and the note that the walk stopped
	 * there (an address no mapping covers after it) shows both, not
	 * nothing. */
	char site[3][REPORT_SITE_LEN];
	raw.nips = 2;
	raw.ips[0] = (uint64_t)(uintptr_t)&nanosleep + 1;
	raw.ips[1] = (uint64_t)(uintptr_t)&rs_outer + 1;
	CHECK(stacks_add_raw(st, 0x3333, (uint32_t)getpid(), &raw) == 0);
	int ns = report_call_site(st, 0x3333, site, 3);
	CHECKF(ns == 1 && strstr(site[0], "rs_outer+0x1 (test_report_stacks)"), "%d: %s", ns,
	       ns ? site[0] : "");
	raw.ips[1] = 0x10;
	CHECK(stacks_add_raw(st, 0x4444, (uint32_t)getpid(), &raw) == 0);
	ns = report_call_site(st, 0x4444, site, 3);
	CHECKF(ns == 2 && strstr(site[0], "libc.so") && strstr(site[1], "[note] native frames stop"),
	       "%d: %s | %s", ns, ns ? site[0] : "", ns > 1 ? site[1] : "");
	CHECK(report_call_site(st, 0x5555, site, 3) == 0); /* not known */
	stacks_free(st);
	return check_done("test_report_stacks");
}
