/* Source lines from DWARF with libdw (see srcline.h). */
#include "stacks/srcline.h"

#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define DEBUG_DIR "/usr/lib/debug/.build-id"

struct dw_ent {
	int id;	   /* the caller's identity of the file; -1 = free */
	int state; /* 1: open, -1: no line information */
	Dwarf *dw;
	int fd;
	uint64_t last_use;
};

struct srclines {
	int max, n;
	uint64_t clock;
	struct dw_ent *e; /* n known files; those open are at most max */
	int nopen;
};

struct srclines *srclines_new(int max)
{
	struct srclines *s = calloc(1, sizeof(*s));
	if (s)
		s->max = max > 0 ? max : 16;
	return s;
}

static void dw_close(struct srclines *s, struct dw_ent *e)
{
	if (e->state != 1)
		return;
	dwarf_end(e->dw);
	close(e->fd);
	e->dw = NULL;
	e->state = 0; /* may be opened again */
	s->nopen--;
}

void srclines_free(struct srclines *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++)
		dw_close(s, &s->e[i]);
	free(s->e);
	free(s);
}

static struct dw_ent *find(struct srclines *s, int id)
{
	for (int i = 0; i < s->n; i++)
		if (s->e[i].id == id)
			return &s->e[i];
	void *p = realloc(s->e, (size_t)(s->n + 1) * sizeof(*s->e));
	if (!p)
		return NULL;
	s->e = p;
	s->e[s->n] = (struct dw_ent){.id = id, .fd = -1};
	return &s->e[s->n++];
}

/* The mapped file's own DWARF, else its debug file by build-id. */
static void dw_open(struct srclines *s, struct dw_ent *e, srclines_open_fn open_fd, void *ctx,
		    const char *build_id, const char *root)
{
	char dbg[PATH_MAX];
	e->state = -1;
	if (s->nopen >= s->max) {
		struct dw_ent *old = NULL;
		for (int i = 0; i < s->n; i++)
			if (s->e[i].state == 1 && (!old || s->e[i].last_use < old->last_use))
				old = &s->e[i];
		if (old)
			dw_close(s, old);
	}
	int fd = open_fd(ctx);
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	if (!dw && build_id && build_id[0]) {
		if (fd >= 0)
			close(fd);
		snprintf(dbg, sizeof(dbg), "%s%s/%.2s/%s.debug", root ? root : "", DEBUG_DIR,
			 build_id, build_id + 2);
		fd = open(dbg, O_RDONLY | O_CLOEXEC);
		dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	}
	if (!dw) {
		if (fd >= 0)
			close(fd);
		return;
	}
	e->dw = dw;
	e->fd = fd;
	e->state = 1;
	s->nopen++;
}

int srclines_lookup(struct srclines *s, int id, srclines_open_fn open_fd, void *ctx,
		    const char *build_id, const char *root, uint64_t vaddr, const char **file,
		    int *line)
{
	Dwarf_Die cu;
	struct dw_ent *e = s ? find(s, id) : NULL;
	if (!e)
		return -ENOENT;
	if (!e->state)
		dw_open(s, e, open_fd, ctx, build_id, root);
	if (e->state != 1)
		return -ENOENT;
	e->last_use = ++s->clock;
	if (!dwarf_addrdie(e->dw, vaddr, &cu))
		return -ENOENT;
	Dwarf_Line *l = dwarf_getsrc_die(&cu, vaddr);
	const char *src = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
	if (!src || dwarf_lineno(l, line) || *line <= 0)
		return -ENOENT;
	*file = src;
	return 0;
}
