/* The fleet: its hosts and their connections driven by the caller's poll
 * (fleet.h), the concurrency bound, reconnection, staleness and the order
 * the views show the hosts in. */
#include "fleet/fleet_int.h"

#include "core/clock.h"
#include "core/fmt.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *fleet_state_name(enum fleet_state s)
{
	static const char *const names[] = {
	    [FLEET_CONNECTING] = "connecting", [FLEET_LIVE] = "live",
	    [FLEET_STALE] = "stale",	       [FLEET_RETRY] = "unreachable",
	    [FLEET_REFUSED] = "refused",       [FLEET_FAILED] = "failed",
	    [FLEET_ENDED] = "ended",
	};
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/* The display name: the spec without its user. */
static void display_name(const char *spec, char *out, size_t len)
{
	const char *at = strchr(spec, '@');
	snprintf(out, len, "%s", at ? at + 1 : spec);
}

/* name with every byte but [A-Za-z0-9._-] as '_', no leading '.'. */
static void safe_name(const char *name, char *out, size_t len)
{
	size_t k = 0;
	for (; name[k] && k + 1 < len; k++) {
		char c = name[k];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
		out[k] = ok && !(k == 0 && c == '.') ? c : '_';
	}
	out[k] = 0;
}

struct fleet *fleet_new(const struct fleet_opts *o)
{
	struct fleet *f = calloc(1, sizeof(*f));
	if (!f || o->nhosts < 0 || o->nhosts > FLEET_MAX_HOSTS)
		goto fail;
	f->o = *o;
	if (f->o.jobs <= 0)
		f->o.jobs = 16;
	f->n = o->nhosts;
	f->hosts = calloc((size_t)(f->n ? f->n : 1), sizeof(*f->hosts));
	f->conns = calloc((size_t)(f->n ? f->n : 1), sizeof(*f->conns));
	if (!f->hosts || !f->conns)
		goto fail;
	char local[64] = "local";
	gethostname(local, sizeof(local) - 1);
	safe_name(local, f->local, sizeof(f->local));
	for (int i = 0; i < f->n; i++) {
		struct fleet_host *h = &f->hosts[i];
		snprintf(h->spec, sizeof(h->spec), "%s", o->hosts[i]);
		display_name(h->spec, h->name, sizeof(h->name));
		h->state = FLEET_CONNECTING;
		h->interval_s = o->interval_s > 0 ? o->interval_s : 1;
		fconn_init(&f->conns[i]);
		if (o->record_dir)
			snprintf(f->conns[i].record_path, sizeof(f->conns[i].record_path),
				 "/tmp/ingero-fleet-%s-%d-%d.db", f->local, (int)getpid(), i);
	}
	return f;
fail:
	fleet_free(f);
	return NULL;
}

void fleet_stop(struct fleet *f, int wait_ms)
{
	if (!f)
		return;
	for (int i = 0; i < f->n; i++)
		fconn_close(f, i, false); /* stdin ends: the remote stops */
	uint64_t t0 = ig_mono_ms();
	bool termed = false;
	for (;;) {
		int alive = 0;
		uint64_t now = ig_mono_ms();
		for (int i = 0; i < f->n; i++) {
			fconn_reap(f, i, now);
			alive += f->conns[i].pid > 0;
		}
		if (!alive)
			break;
		if (!termed && now - t0 >= (uint64_t)wait_ms) {
			for (int i = 0; i < f->n; i++)
				if (f->conns[i].pid > 0)
					kill(f->conns[i].pid, SIGTERM);
			termed = true;
		} else if (termed && now - t0 >= (uint64_t)wait_ms + 2000) {
			for (int i = 0; i < f->n; i++)
				if (f->conns[i].pid > 0) {
					kill(f->conns[i].pid, SIGKILL);
					waitpid(f->conns[i].pid, NULL, 0);
					f->conns[i].pid = 0;
					fconn_read(f, i, now);
				}
		}
		struct timespec ts = {0, 20 * 1000000};
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < f->n; i++) {
		struct fleet_host *h = &f->hosts[i];
		if (h->state == FLEET_LIVE || h->state == FLEET_STALE ||
		    h->state == FLEET_CONNECTING || h->state == FLEET_RETRY) {
			if (h->state != FLEET_RETRY || !h->why[0])
				snprintf(h->why, sizeof(h->why), "closed by the viewer");
			h->state = FLEET_ENDED;
		}
		h->next_try_ms = 0;
	}
}

void fleet_free(struct fleet *f)
{
	if (!f)
		return;
	if (f->conns) {
		fleet_stop(f, 2000);
		for (int i = 0; i < f->n; i++) {
			struct fleet_conn *c = &f->conns[i];
			if (c->out >= 0)
				close(c->out);
			if (c->err >= 0)
				close(c->err);
			free(c->line);
		}
	}
	fjoin_free(f);
	fleet_argv_free(f->vargv);
	free(f->hosts);
	free(f->conns);
	free(f);
}

int fleet_pollfds(struct fleet *f, struct pollfd *pfd, int max)
{
	int n = 0;
	for (int i = 0; i < f->n; i++) {
		struct fleet_conn *c = &f->conns[i];
		if (c->out >= 0 && n < max)
			pfd[n++] = (struct pollfd){.fd = c->out, .events = POLLIN};
		if (c->err >= 0 && n < max)
			pfd[n++] = (struct pollfd){.fd = c->err, .events = POLLIN};
	}
	return n;
}

int fleet_timeout_ms(const struct fleet *f)
{
	/* Reconnections, pings, staleness and exited processes whose pipes
	 * stay open: a quarter second is fine-grained enough for all. */
	return 250;
}

static void set_ranks(struct fleet *f);

static int connecting(const struct fleet *f)
{
	int n = 0;
	for (int i = 0; i < f->n; i++)
		n += f->hosts[i].state == FLEET_CONNECTING && f->conns[i].pid > 0;
	return n;
}

/* Starts the connections that are due, at most jobs being made at once. */
static void start_due(struct fleet *f, uint64_t now_ms)
{
	int busy = connecting(f);
	for (int i = 0; i < f->n && busy < f->o.jobs; i++) {
		struct fleet_host *h = &f->hosts[i];
		struct fleet_conn *c = &f->conns[i];
		if (c->pid > 0)
			continue;
		bool due = h->state == FLEET_CONNECTING ||
			   ((h->state == FLEET_RETRY || h->state == FLEET_REFUSED) &&
			    now_ms >= h->next_try_ms);
		if (due && !fconn_start(f, i, now_ms))
			busy++;
	}
}

/* Live hosts without a frame for 3 intervals are stale, and so are those
 * with a hello and no frame 10 s after that; a connection without its
 * hello says for how long. */
static void check_stale(struct fleet *f, uint64_t now_ms)
{
	char age[32];
	for (int i = 0; i < f->n; i++) {
		struct fleet_host *h = &f->hosts[i];
		struct fleet_conn *c = &f->conns[i];
		uint64_t limit = (uint64_t)(3 * h->interval_s * 1000);
		if (limit < 3000)
			limit = 3000;
		if ((h->state == FLEET_LIVE || h->state == FLEET_STALE) && h->last_frame_ms &&
		    now_ms - h->last_frame_ms > limit) {
			h->state = FLEET_STALE;
			fmt_age(age, sizeof(age), (now_ms - h->last_frame_ms) * 1000000);
			snprintf(h->why, sizeof(h->why), "no frame for %s", age);
		} else if ((h->state == FLEET_LIVE || h->state == FLEET_STALE) && !h->last_frame_ms &&
			   c->pid > 0 && now_ms - c->started_ms > limit + 10000) {
			/* a hello and no frame (an attach that hangs): not live */
			h->state = FLEET_STALE;
			fmt_age(age, sizeof(age), (now_ms - c->started_ms) * 1000000);
			snprintf(h->why, sizeof(h->why), "no frame for %s since the hello", age);
		} else if (h->state == FLEET_CONNECTING && c->pid > 0 && !c->no_hello &&
			   now_ms - c->started_ms > FLEET_HELLO_WAIT_MS) {
			c->no_hello = true; /* its slot goes to the others */
			fconn_close(f, i, true);
		} else if (h->state == FLEET_CONNECTING && c->pid > 0 &&
			   now_ms - c->started_ms > 10000) {
			fmt_age(age, sizeof(age), (now_ms - c->started_ms) * 1000000);
			snprintf(h->why, sizeof(h->why), "no answer for %s", age);
		}
	}
}

void fleet_step(struct fleet *f, uint64_t now_ms)
{
	for (int i = 0; i < f->n; i++) {
		if (f->conns[i].pid <= 0)
			continue;
		fconn_read(f, i, now_ms);
		fconn_ping(f, i, now_ms);
		fconn_reap(f, i, now_ms);
	}
	start_due(f, now_ms);
	check_stale(f, now_ms);
	if (f->join_dirty && now_ms - f->join_ms >= FLEET_JOIN_EVERY_MS) {
		fjoin_update(f);
		f->join_ms = now_ms;
	}
	set_ranks(f);
}

int fleet_nhosts(const struct fleet *f)
{
	return f->n;
}

const struct fleet_host *fleet_host(const struct fleet *f, int i)
{
	return i >= 0 && i < f->n ? &f->hosts[i] : NULL;
}

bool fleet_done(const struct fleet *f)
{
	for (int i = 0; i < f->n; i++)
		if (f->hosts[i].state != FLEET_FAILED && f->hosts[i].state != FLEET_ENDED)
			return false;
	return true;
}

int fleet_feed(struct fleet *f, int i, const char *line, uint64_t now_ms)
{
	if (i < 0 || i >= f->n)
		return -1;
	int r = fparse_line(f, i, line, now_ms);
	fjoin_update(f);
	set_ranks(f);
	return r;
}

void fleet_set_clock(struct fleet *f, int i, int64_t offset_ns, uint64_t unc_ns)
{
	if (i < 0 || i >= f->n)
		return;
	f->hosts[i].offset_ns = offset_ns;
	f->hosts[i].unc_ns = unc_ns;
}

/* The group of a host in the order: 0 straggler, 1 an actionable chain,
 * 2 not live, 3 connecting, 4 healthy. */
static int group_of(const struct fleet_host *h)
{
	if (h->straggler)
		return 0;
	if ((h->state == FLEET_LIVE || h->state == FLEET_STALE) && h->worst.cls[0] &&
	    strcmp(h->worst.severity, "INFO"))
		return h->state == FLEET_STALE ? 2 : 1;
	if (h->state == FLEET_CONNECTING)
		return 3;
	if (h->state != FLEET_LIVE)
		return 2;
	return 4;
}

static const struct fleet *order_f; /* qsort has no context argument */

static int cmp_hosts(const void *a, const void *b)
{
	const struct fleet_host *x = &order_f->hosts[*(const int *)a];
	const struct fleet_host *y = &order_f->hosts[*(const int *)b];
	int gx = group_of(x), gy = group_of(y);
	if (gx != gy)
		return gx - gy;
	if (gx == 1 && x->worst.impact != y->worst.impact)
		return x->worst.impact > y->worst.impact ? -1 : 1;
	int c = strcmp(x->name, y->name);
	return c ? c : *(const int *)a - *(const int *)b;
}

int fleet_order(const struct fleet *f, int *idx, int max)
{
	int *all = malloc(sizeof(int) * (size_t)(f->n ? f->n : 1));
	if (!all)
		return 0;
	for (int i = 0; i < f->n; i++)
		all[i] = i;
	order_f = f;
	qsort(all, (size_t)f->n, sizeof(int), cmp_hosts);
	int n = f->n < max ? f->n : max;
	memcpy(idx, all, sizeof(int) * (size_t)n);
	free(all);
	return n;
}

static void set_ranks(struct fleet *f)
{
	int *idx = malloc(sizeof(int) * (size_t)(f->n ? f->n : 1));
	int n = idx ? fleet_order(f, idx, f->n) : 0;
	for (int k = 0; k < n; k++)
		f->hosts[idx[k]].score_rank = k;
	free(idx);
}
