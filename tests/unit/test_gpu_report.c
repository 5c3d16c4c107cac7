/* The GPU and NCCL parts of the batch frames: the text sections and JSON
 * members appear with device samples and NCCL operations (values NVML did
 * not give are "-" and null), never without; the process rows carry their
 * GPU memory; --events lines spell the NCCL arguments and device samples. */
#include "analysis.h"
#include "check.h"
#include "core/json.h"
#include "core/ops.h"
#include "evmake.h"
#include "model/model.h"
#include "report/evfmt.h"
#include "report/report.h"

#include <stdlib.h>
#include <string.h>


static char *render(struct ig_model *m, int json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct report_opts o = {0};
	if (json)
		report_json(f, m, an_detect(m), NULL, &o);
	else
		report_text(f, m, an_detect(m), NULL, &o);
	fclose(f);
	return buf;
}

static void feed(struct ig_model *m)
{
	struct ig_event e = {0};
	for (int s = 0; s < 3; s++) {
		uint64_t t = T0 + (uint64_t)s * SEC;
		struct ig_gpu_dev d = {.ts_ns = t,
				       .index = 0,
				       .valid = IG_GPU_V_UTIL | IG_GPU_V_MEM | IG_GPU_V_LIMIT |
						IG_GPU_V_TEMP | IG_GPU_V_CLOCK,
				       .util_gpu_pct = 87,
				       .util_mem_pct = 41,
				       .mem_used = 32ull << 30,
				       .mem_total = 80ull << 30,
				       .power_limit_mw = 700000,
				       .temp_c = 65,
				       .sm_mhz = 1980,
				       .err = 3};
		strcpy(d.name, "H100 80GB HBM3");
		ig_gpu_dev_pack(&e, &d);
		model_ingest(m, &e);
		memset(&e, 0, sizeof(e));
		e.kind = IG_EV_GPU_PROC;
		e.ts_ns = t;
		e.pid = 42;
		e.arg0 = 1536ull << 20;
		e.flags = IG_GPU_V_MEM;
		model_ingest(m, &e);
		memset(&e, 0, sizeof(e));
		e.kind = IG_EV_CALL;
		e.pid = e.tid = 42;
		strcpy(e.comm, "trainer");
		e.op = IG_OP_NCCL_ALL_REDUCE;
		e.ts_ns = t + MS;
		e.dur_ns = 10 * US;
		e.arg0 = 4096;
		e.arg1 = IG_NCCL_ARG1(7, 0, IG_NCCL_NONE32);
		e.arg2 = IG_NCCL_COMM(0x123456, 0, 2);
		e.stream = 0x10;
		model_ingest(m, &e);
		e.op = IG_OP_CUDA_STREAM_SYNC;
		e.ts_ns = t + 2 * MS;
		e.dur_ns = 3 * MS;
		e.arg0 = e.arg1 = e.arg2 = 0;
		model_ingest(m, &e);
	}
}

static void test_frames(void)
{
	struct ig_model *m = an_model_new(NULL);
	char *t = render(m, 0), *j = render(m, 1);
	CHECK(!strstr(t, "\nGPU ") && !strstr(t, "\nNCCL ") && !strstr(j, "\"gpus\"") &&
	      !strstr(j, "\"nccl\""));
	free(t);
	free(j);
	feed(m);
	t = render(m, 0);
	CHECKF(strstr(t, "gpu 0      H100_80GB_HBM3   util 87%  mem 41%   used 32.0GiB/80.0GiB  "
			 "   power -/700W       temp 65C sm 1980MHz") != NULL,
	       "%s", t);
	CHECK(strstr(t, "nccl ncclAllReduce") && strstr(t, "ops 3 ") && strstr(t, "done 3 "));
	CHECK(strstr(t, "rank 0/2 comm 123456") != NULL);
	CHECK(strstr(t, "gpu_mem 1.5GiB") != NULL);
	free(t);
	j = render(m, 1);
	json_t *v = ig_json_parse(j);
	CHECK(v != NULL);
	json_t *g = json_array_get(json_object_get(v, "gpus"), 0);
	CHECK(ig_json_get_int(g, "util_gpu_pct", -1) == 87 &&
	      json_is_null(json_object_get(g, "power_mw")) &&
	      ig_json_get_int(g, "power_limit_mw", -1) == 700000 &&
	      ig_json_get_int(g, "nvml_error", -1) == 3 &&
	      !strcmp(ig_json_get_str(g, "name", ""), "H100 80GB HBM3"));
	json_t *gp = json_array_get(json_object_get(v, "gpu_procs"), 0);
	CHECK(ig_json_get_int(gp, "pid", 0) == 42 &&
	      ig_json_get_int(gp, "mem_used", 0) == (int64_t)(1536ull << 20));
	json_t *n = json_object_get(v, "nccl");
	json_t *op = json_array_get(json_object_get(n, "ops"), 0);
	CHECK(!strcmp(ig_json_get_str(op, "op", ""), "ncclAllReduce") &&
	      ig_json_get_int(op, "bytes_life", 0) == 3 * 4096 &&
	      ig_json_get_int(op, "done_life", 0) == 3);
	json_t *r = json_array_get(json_object_get(n, "ranks"), 0);
	CHECK(!strcmp(ig_json_get_str(r, "communicator", ""), "123456") &&
	      ig_json_get_int(r, "nranks", 0) == 2);
	json_t *p = json_array_get(json_object_get(v, "procs"), 0);
	CHECK(ig_json_get_int(p, "gpu_mem_bytes", 0) == (int64_t)(1536ull << 20));
	json_decref(v);
	free(j);
	an_model_free(m);
}

static void test_events(void)
{
	struct ig_event e = {0};
	char b[1024];
	e.kind = IG_EV_CALL;
	e.ts_ns = T0;
	e.pid = e.tid = 7;
	e.op = IG_OP_NCCL_REDUCE;
	e.arg0 = 8192;
	e.arg1 = IG_NCCL_ARG1(8, 1, 0);
	e.arg2 = IG_NCCL_COMM(0xabcdef, 1, 4);
	evfmt_line(b, sizeof(b), &e);
	CHECKF(strstr(b, " op=ncclReduce ") &&
		   strstr(b, " type=float64 redop=prod peer=0 nccl_comm=abcdef rank=1/4"),
	       "%s", b);
	e.op = IG_OP_NCCL_GROUP_START;
	e.arg2 = 0;
	evfmt_line(b, sizeof(b), &e);
	CHECK(strstr(b, " nccl_comm=-") && !strstr(b, "type="));
	struct ig_gpu_dev d = {.ts_ns = T0, .index = 2, .valid = IG_GPU_V_UTIL, .util_gpu_pct = 5};
	ig_gpu_dev_pack(&e, &d);
	evfmt_line(b, sizeof(b), &e);
	CHECKF(strstr(b, " gpu pid=0 tid=0 dev=2 util_gpu=5 util_mem=0 mem_used=- ") != NULL, "%s",
	       b);
	/* the packing round-trips every field */
	struct ig_gpu_dev in = {.ts_ns = 5,
				.index = 15,
				.valid = 0x3f,
				.util_gpu_pct = 100,
				.util_mem_pct = 99,
				.mem_used = 1ull << 40,
				.mem_total = 3ull << 40,
				.power_mw = 4000000000u,
				.power_limit_mw = 123456,
				.temp_c = 1000,
				.sm_mhz = 3000,
				.err = -5},
			  out;
	strcpy(in.name, "a name of 15 ch");
	ig_gpu_dev_pack(&e, &in);
	ig_gpu_dev_unpack(&e, &out);
	CHECK(!memcmp(&in, &out, sizeof(in)));
}

int main(void)
{
	test_frames();
	test_events();
	return check_done("test_gpu_report");
}
