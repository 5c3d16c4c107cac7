/* One line of a host's stream (docs/json.md, "Stream") read into its
 * struct fleet_host: hello, frame, pong, error, end. Unknown members and
 * unknown line types are ignored (forward compatible within stream 1); a
 * member of the wrong type reads as absent. */
#include "fleet/fleet_int.h"

#include "core/escape.h"
#include "core/json.h"

#include <math.h>
#include <string.h>
#include <time.h>

uint64_t fleet_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void copy_str(char *dst, size_t cap, const json_t *o, const char *key)
{
	snprintf(dst, cap, "%s", ig_json_get_str(o, key, ""));
}

/* An integer member exactly (times are ns since 1970: beyond a double's
 * 53 bits), a real one rounded; 0 when absent, negative or not a number. */
static uint64_t num_u64(const json_t *v)
{
	if (json_is_integer(v))
		return json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
	double d = json_is_real(v) ? json_real_value(v) : 0;
	return d > 0 && d < 9.2e18 ? (uint64_t)d : 0;
}

static uint64_t get_u64(const json_t *o, const char *key)
{
	return num_u64(json_is_object(o) ? json_object_get(o, key) : NULL);
}

/* A share 0..100, or -1 when null, absent or out of range. */
static double get_pct(const json_t *o, const char *key)
{
	double v = ig_json_get_num(o, key, -1);
	return isfinite(v) && v >= 0 && v <= 100 ? v : -1;
}

static void read_procs(struct fleet_host *h, const json_t *arr)
{
	struct fleet_proc old[FLEET_MAX_PROCS];
	int nold = h->nprocs;
	memcpy(old, h->procs, sizeof(old));
	h->nprocs = 0;
	size_t k;
	json_t *p;
	json_array_foreach(arr, k, p)
	{
		if (!json_is_object(p) || h->nprocs == FLEET_MAX_PROCS)
			continue;
		struct fleet_proc *fp = &h->procs[h->nprocs++];
		memset(fp, 0, sizeof(*fp));
		fp->pid = (uint32_t)ig_json_get_int(p, "pid", 0);
		copy_str(fp->comm, sizeof(fp->comm), p, "comm");
		fp->exited = json_is_true(json_object_get(p, "exited"));
		fp->calls_per_s = ig_json_get_num(p, "calls_per_s", 0);
		fp->gpu_pct = get_pct(p, "gpu_pct");
		fp->cpu_pct = get_pct(p, "cpu_pct");
		fp->pre_pct = get_pct(p, "pre_pct");
		fp->wait_pct = get_pct(p, "wait_pct");
		const json_t *op = json_object_get(p, "top_op");
		if (json_is_object(op)) {
			copy_str(fp->top_op, sizeof(fp->top_op), op, "op");
			fp->p99_ns = get_u64(op, "p99_ns");
		}
		for (int j = 0; j < nold; j++)
			if (old[j].pid == fp->pid && fp->top_op[0] &&
			    !strcmp(old[j].top_op, fp->top_op))
				fp->p99_prev_ns = old[j].p99_ns;
	}
}

static void read_chain(struct fleet_chain *c, const json_t *o)
{
	memset(c, 0, sizeof(*c));
	copy_str(c->id, sizeof(c->id), o, "id");
	copy_str(c->severity, sizeof(c->severity), o, "severity");
	copy_str(c->cls, sizeof(c->cls), o, "class");
	copy_str(c->op, sizeof(c->op), o, "op");
	copy_str(c->comm, sizeof(c->comm), o, "comm");
	copy_str(c->culprit_comm, sizeof(c->culprit_comm), o, "culprit_comm");
	copy_str(c->summary, sizeof(c->summary), o, "summary");
	copy_str(c->advice, sizeof(c->advice), o, "advice");
	c->pid = (uint32_t)ig_json_get_int(o, "pid", 0);
	c->culprit_pid = (uint32_t)ig_json_get_int(o, "culprit_pid", 0);
	double v = ig_json_get_num(o, "impact", 0);
	c->impact = isfinite(v) && v > 0 ? (v > 1 ? 1 : v) : 0;
}

static void read_chains(struct fleet_host *h, const json_t *arr)
{
	size_t k;
	json_t *c;
	h->nchains = 0;
	memset(&h->worst, 0, sizeof(h->worst));
	json_array_foreach(arr, k, c)
	{
		if (json_is_object(c) && h->nchains < FLEET_MAX_CHAINS)
			read_chain(&h->chains[h->nchains++], c);
	}
	for (int j = 0; j < h->nchains; j++)
		if (strcmp(h->chains[j].severity, "INFO")) {
			h->worst = h->chains[j];
			return;
		}
	if (h->nchains)
		h->worst = h->chains[0];
}

static void read_gpus(struct fleet_host *h, const json_t *arr)
{
	size_t k;
	json_t *g;
	double util = 0;
	memset(&h->gpu, 0, sizeof(h->gpu));
	json_array_foreach(arr, k, g)
	{
		if (!json_is_object(g))
			continue;
		h->gpu.n++;
		double u = ig_json_get_num(g, "util_gpu_pct", 0);
		util += isfinite(u) && u > 0 ? (u > 100 ? 100 : u) : 0;
		h->gpu.mem_used += get_u64(g, "mem_used");
		h->gpu.mem_total += get_u64(g, "mem_total");
	}
	h->gpu.util_pct = h->gpu.n ? util / h->gpu.n : 0;
}

static void read_arrivals(struct fleet *f, int i, const json_t *r, const struct fleet_rank *fr)
{
	size_t k;
	json_t *a;
	json_array_foreach(json_object_get(r, "arrivals"), k, a)
	{
		uint64_t seq = num_u64(json_array_get(a, 0)), tn = num_u64(json_array_get(a, 1));
		if (!seq || !tn || tn > INT64_MAX)
			continue;
		fjoin_add(f, i, fr->key, fr->rank, fr->nranks, fr->pid, seq, (int64_t)tn);
	}
}

static void read_nccl(struct fleet *f, int i, const json_t *arr)
{
	struct fleet_host *h = &f->hosts[i];
	size_t k;
	json_t *r;
	h->nranks = 0;
	json_array_foreach(arr, k, r)
	{
		if (!json_is_object(r))
			continue;
		/* an older stream without "known": the rank is taken as known */
		const json_t *kn = json_object_get(r, "known");
		struct fleet_rank fr = {
		    .known = !json_is_false(kn),
		    .pid = (uint32_t)ig_json_get_int(r, "pid", 0),
		    .key = (uint32_t)ig_json_get_int(r, "key", 0),
		    .rank = (uint32_t)ig_json_get_int(r, "rank", 0),
		    .nranks = (uint32_t)ig_json_get_int(r, "nranks", 0),
		    .ops_win = get_u64(r, "ops_win"),
		    .wait_mean_ns = get_u64(r, "wait_mean_ns"),
		    .wait_ns_win = get_u64(r, "wait_ns_win"),
		};
		if (h->nranks < FLEET_MAX_RANKS)
			h->ranks[h->nranks++] = fr;
		h->arrivals_lost += get_u64(r, "arrivals_lost");
		/* a rank whose communicator was not seen made has no key to join
		 * on, and its count did not start with the others' */
		if (fr.known)
			read_arrivals(f, i, r, &fr);
	}
}

static void read_frame(struct fleet *f, int i, const json_t *o, uint64_t now_ms)
{
	struct fleet_host *h = &f->hosts[i];
	const json_t *st = json_object_get(o, "status");
	h->frames++;
	h->last_frame_ms = now_ms ? now_ms : 1;
	h->realtime_ns = get_u64(o, "realtime_ns");
	h->events_per_s = ig_json_get_num(st, "events_per_s", 0);
	h->drops = get_u64(st, "drops_kernel") + get_u64(st, "drops_user");
	h->done = json_is_true(json_object_get(st, "done"));
	read_procs(h, json_object_get(o, "procs"));
	read_chains(h, json_object_get(o, "chains"));
	read_gpus(h, json_object_get(o, "gpus"));
	read_nccl(f, i, json_object_get(o, "nccl"));
	if (h->state != FLEET_FAILED && h->state != FLEET_ENDED) {
		h->state = FLEET_LIVE;
		h->why[0] = 0;
	}
	f->conns[i].backoff_s = 0;
}

static void read_hello(struct fleet *f, int i, const json_t *o)
{
	struct fleet_host *h = &f->hosts[i];
	struct fleet_conn *c = &f->conns[i];
	int64_t stream = ig_json_get_int(o, "stream", -1);
	copy_str(h->version, sizeof(h->version), o, "version");
	copy_str(h->hostname, sizeof(h->hostname), o, "host");
	double iv = ig_json_get_num(o, "interval_s", 1);
	h->interval_s = isfinite(iv) && iv >= 0.01 && iv <= 3600 ? iv : 1;
	if (stream != FLEET_STREAM_VERSION) {
		c->mismatch = true;
		snprintf(c->message, sizeof(c->message),
			 "version mismatch: ingero-top there speaks stream %lld, this one %d: "
			 "install the same version on both",
			 (long long)stream, FLEET_STREAM_VERSION);
		h->state = FLEET_FAILED;
		snprintf(h->why, sizeof(h->why), "%s", c->message);
		fconn_close(f, i, true);
		return;
	}
	c->hello = true;
	if (h->state == FLEET_CONNECTING) {
		h->state = FLEET_LIVE;
		h->why[0] = 0;
	}
}

/* A pong: the clock sample of its ping, kept when its round trip is the
 * shortest so far. */
static void read_pong(struct fleet *f, int i, const json_t *o)
{
	struct fleet_conn *c = &f->conns[i];
	struct fleet_host *h = &f->hosts[i];
	uint64_t t1 = fleet_now_ns(), t0 = c->ping_sent_ns;
	int64_t remote = ig_json_get_int(o, "realtime_ns", 0);
	if (!t0 || (uint32_t)ig_json_get_int(o, "id", -1) != c->ping_id || remote <= 0 || t1 < t0)
		return;
	c->ping_sent_ns = 0;
	uint64_t rtt = t1 - t0;
	if (c->best_rtt_ns && rtt >= c->best_rtt_ns)
		return;
	c->best_rtt_ns = rtt ? rtt : 1;
	h->offset_ns = remote - (int64_t)(t0 + rtt / 2);
	h->unc_ns = rtt / 2 ? rtt / 2 : 1;
}

int fparse_line(struct fleet *f, int i, const char *line, uint64_t now_ms)
{
	json_t *o = ig_json_parse(line);
	const char *type = ig_json_get_str(o, "type", NULL);
	struct fleet_host *h = &f->hosts[i];
	struct fleet_conn *c = &f->conns[i];
	if (!json_is_object(o) || !type) {
		json_decref(o);
		return -1;
	}
	if (!strcmp(type, "hello")) {
		read_hello(f, i, o);
	} else if (c->mismatch) {
		/* nothing more is read from a stream we do not speak */
	} else if (!strcmp(type, "frame")) {
		read_frame(f, i, o, now_ms);
	} else if (!strcmp(type, "pong")) {
		read_pong(f, i, o);
	} else if (!strcmp(type, "error")) {
		char m[FLEET_WHY_LEN];
		esc_text(m, sizeof(m), ig_json_get_str(o, "message", "an error without a message"),
			 0);
		c->got_error = true;
		snprintf(c->message, sizeof(c->message), "%s", m);
		h->state = FLEET_FAILED;
		snprintf(h->why, sizeof(h->why), "%s", m);
	} else if (!strcmp(type, "end")) {
		char m[FLEET_WHY_LEN];
		esc_text(m, sizeof(m), ig_json_get_str(o, "reason", "ended"), 0);
		c->got_end = true;
		snprintf(c->message, sizeof(c->message), "%s", m);
		if (h->state != FLEET_FAILED) {
			h->state = FLEET_ENDED;
			snprintf(h->why, sizeof(h->why), "%s", m);
		}
	}
	json_decref(o);
	return 0;
}
