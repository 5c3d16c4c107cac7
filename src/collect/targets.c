/* The live collector's target processes: their list (the BPF targets map)
 * and the pages they allocated (its pages map, read once a second). */
#include "collect/collector_priv.h"

#include <linux/types.h>
#include "ingero.h"
#include "ingero.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>

#include "core/log.h"

/* The target processes (up to max), the probe-cost child left out. */
int coll_target_pids(struct collector *c, uint32_t *out, int max)
{
	int fd = bpf_map__fd(c->skel->maps.targets), n = 0, k = 0;
	uint32_t key, next, *prev = NULL;
	while (!bpf_map_get_next_key(fd, prev, &next) && k < 100000) {
		key = next;
		prev = &key;
		k++;
		if (key != c->calib_pid && n < max && out)
			out[n++] = key;
	}
	return out ? n : k;
}

void coll_poll_pages(struct collector *c, uint64_t now_ns, ig_emit_fn emit, void *ctx)
{
	int fd = bpf_map__fd(c->skel->maps.pages);
	uint32_t key, next;
	uint32_t *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct igb_pages pg;
		key = next;
		prev = &key;
		if (key == c->calib_pid) /* a target for the probe-cost measurement only */
			continue;
		if (bpf_map_lookup_elem(fd, &key, &pg))
			continue;
		struct pages_last *pl = NULL;
		for (int i = 0; i < c->npages; i++)
			if (c->pages[i].pid == key)
				pl = &c->pages[i];
		if (!pl) {
			if (c->npages == MAX_PAGES_PIDS)
				continue;
			pl = &c->pages[c->npages++];
			pl->pid = key;
			pl->bytes = 0;
		}
		if (pg.bytes > pl->bytes) {
			struct ig_event e = {0};
			e.kind = IG_EV_PAGE_ALLOC;
			e.ts_ns = now_ns;
			e.pid = key;
			e.arg0 = pg.bytes - pl->bytes;
			pl->bytes = pg.bytes;
			emit(ctx, &e);
		}
	}
}

int coll_sys_hooks(struct collector *c, bool on)
{
	if (on == (c->sys_links[0] != NULL))
		return 0;
	if (!on) {
		c->skel->bss->sys_hooked = 0;
		for (int i = 0; i < 2; i++) {
			bpf_link__destroy(c->sys_links[i]);
			c->sys_links[i] = NULL;
		}
		return 0;
	}
	struct bpf_program *p[2] = {c->skel->progs.w_sys_enter, c->skel->progs.w_sys_exit};
	for (int i = 0; i < 2; i++)
		if (!(c->sys_links[i] = bpf_program__attach(p[i]))) {
			int r = -errno;
			coll_sys_hooks(c, false);
			return r;
		}
	c->skel->bss->sys_hooked = 1;
	return 0;
}

void coll_sys_hooks_tick(struct collector *c)
{
	bool busy = c->ksys_sec >= KSYS_ON_NS, on = c->sys_links[0] != NULL;
	c->ksys_sec = 0;
	c->sys_quiet = busy ? 0 : c->sys_quiet + 1;
	c->sys_busy = busy ? c->sys_busy + 1 : 0;
	if (c->sys_busy >= KSYS_ON_S && !on) {
		int r = coll_sys_hooks(c, true);
		if (r)
			log_msg(LOG_WARN,
				"cannot hook the syscalls (%s): their kernel time stays "
				"sampled",
				strerror(-r));
	} else if (on && c->sys_quiet >= KSYS_QUIET_S) {
		coll_sys_hooks(c, false);
	}
}
