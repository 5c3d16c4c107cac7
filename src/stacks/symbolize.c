/* Native symbolisation: /proc/PID/maps capture, ELF symbol tables through
 * libelf cached per build-id, address translation through PT_LOAD segments,
 * libiberty demangling, source file:line through libdw's line tables when
 * the file (or its debug file) has DWARF. See symbolize.h. */
#include "stacks/symbolize_int.h"
#include "stacks/srcline.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <libiberty/demangle.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* ---- cache --------------------------------------------------------------- */

struct sym_cache *sym_cache_new(uint64_t max_bytes)
{
	struct sym_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->max_bytes = max_bytes ? max_bytes : DEFAULT_MAX_BYTES;
	c->lines = srclines_new(MAX_DWARF); /* NULL: no lines, symbols all the same */
	elf_version(EV_CURRENT);
	return c;
}

static void elf_unload(struct sym_cache *c, struct elf_ent *e)
{
	free(e->syms);
	free(e->names);
	e->syms = NULL;
	e->names = NULL;
	e->nsyms = 0;
	if (c->st.bytes >= e->bytes)
		c->st.bytes -= e->bytes;
	e->bytes = 0;
	if (e->state == ELF_LOADED) {
		e->state = ELF_NEW;
		c->st.loaded--;
	}
}

void sym_cache_free(struct sym_cache *c)
{
	if (!c)
		return;
	srclines_free(c->lines);
	for (int i = 0; i < c->nelfs; i++) {
		elf_unload(c, c->elfs[i]);
		free(c->elfs[i]);
	}
	free(c->elfs);
	free(c->inos);
	free(c->demangled);
	free(c);
}

void sym_cache_stats(const struct sym_cache *c, struct sym_cache_stats *st)
{
	*st = c->st;
	st->files = (uint64_t)c->nelfs;
}

static int add_elf(struct sym_cache *c, struct elf_ent *e)
{
	if (c->nelfs == c->capelfs) {
		int cap = c->capelfs ? c->capelfs * 2 : 32;
		struct elf_ent **n = realloc(c->elfs, sizeof(*n) * (size_t)cap);
		if (!n)
			return -ENOMEM;
		c->elfs = n;
		c->capelfs = cap;
	}
	c->elfs[c->nelfs] = e;
	return c->nelfs++;
}

static void add_ino(struct sym_cache *c, uint64_t dev, uint64_t ino, int elf)
{
	if (!ino)
		return;
	if (c->ninos == c->capinos) {
		int cap = c->capinos ? c->capinos * 2 : 64;
		struct ino_ent *n = realloc(c->inos, sizeof(*n) * (size_t)cap);
		if (!n)
			return;
		c->inos = n;
		c->capinos = cap;
	}
	c->inos[c->ninos++] = (struct ino_ent){dev, ino, elf};
}

static int find_ino(struct sym_cache *c, uint64_t dev, uint64_t ino)
{
	for (int i = c->ninos - 1; i >= 0; i--)
		if (c->inos[i].ino == ino && c->inos[i].dev == dev)
			return c->inos[i].elf;
	return -1;
}

/* Drops least recently used symbol tables until the cache fits. */
static void trim(struct sym_cache *c, int keep)
{
	while (c->st.bytes > c->max_bytes) {
		int victim = -1;
		for (int i = 0; i < c->nelfs; i++) {
			struct elf_ent *e = c->elfs[i];
			if (i == keep || e->state != ELF_LOADED)
				continue;
			if (victim < 0 || e->last_use < c->elfs[victim]->last_use)
				victim = i;
		}
		if (victim < 0)
			return;
		elf_unload(c, c->elfs[victim]);
		c->st.evictions++;
	}
}

/* ---- reading ELF files -------------------------------------------------- */

static void read_build_id(Elf *elf, char *out)
{
	size_t n;
	out[0] = 0;
	if (elf_getphdrnum(elf, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *d =
		    elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (!d)
			continue;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)d->d_buf + name_off, "GNU", 4))
				continue;
			size_t len = nh.n_descsz > 20 ? 20 : nh.n_descsz;
			const unsigned char *b = (const unsigned char *)d->d_buf + desc_off;
			for (size_t k = 0; k < len; k++)
				sprintf(out + 2 * k, "%02x", b[k]);
			return;
		}
	}
}

static int read_segs(Elf *elf, struct elf_ent *e)
{
	size_t n;
	e->nsegs = 0;
	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (size_t i = 0; i < n && e->nsegs < MAX_SEGS; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		e->segs[e->nsegs++] = (struct seg){ph.p_vaddr, ph.p_offset, ph.p_filesz};
	}
	return e->nsegs ? 0 : -ENOEXEC;
}

struct symvec {
	struct symbol *v;
	size_t n, cap;
	char *names;
	size_t nlen, ncap;
	unsigned char *global; /* binding per symbol, for alias choice */
};

static int symvec_add(struct symvec *sv, uint64_t addr, uint64_t size, const char *name,
		      bool global)
{
	size_t len = strlen(name) + 1;
	if (sv->n == sv->cap) {
		size_t cap = sv->cap ? sv->cap * 2 : 1024;
		struct symbol *v = realloc(sv->v, cap * sizeof(*v));
		unsigned char *g = v ? realloc(sv->global, cap) : NULL;
		if (!v || !g) {
			if (v)
				sv->v = v;
			return -ENOMEM;
		}
		sv->v = v;
		sv->global = g;
		sv->cap = cap;
	}
	if (sv->nlen + len > sv->ncap || sv->nlen + len > UINT32_MAX) {
		size_t cap = sv->ncap ? sv->ncap * 2 : 65536;
		while (cap < sv->nlen + len)
			cap *= 2;
		if (cap > UINT32_MAX)
			return -E2BIG;
		char *nn = realloc(sv->names, cap);
		if (!nn)
			return -ENOMEM;
		sv->names = nn;
		sv->ncap = cap;
	}
	memcpy(sv->names + sv->nlen, name, len);
	sv->v[sv->n] = (struct symbol){addr, size > UINT32_MAX ? UINT32_MAX : (uint32_t)size,
				       (uint32_t)sv->nlen};
	sv->global[sv->n] = global;
	sv->n++;
	sv->nlen += len;
	return 0;
}

/* Adds the function symbols of every section of type want. */
static int read_symtab(Elf *elf, Elf64_Word want, struct symvec *sv)
{
	Elf_Scn *scn = NULL;
	int found = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != want || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s))
				break;
			int type = GELF_ST_TYPE(s.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
			    s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			int r = symvec_add(sv, s.st_value, s.st_size, name,
					   GELF_ST_BIND(s.st_info) != STB_LOCAL);
			if (r)
				return r;
		}
		found = 1;
	}
	return found;
}

static int sym_cmp(const void *a, const void *b, void *arg)
{
	const struct symvec *sv = arg;
	size_t i = (size_t)(*(const uint32_t *)a), j = (size_t)(*(const uint32_t *)b);
	const struct symbol *x = &sv->v[i], *y = &sv->v[j];
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (sv->global[i] != sv->global[j]) /* an exported alias first */
		return sv->global[i] ? -1 : 1;
	if (x->size != y->size) /* then the one with a size */
		return x->size > y->size ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* Sorts by address and keeps one symbol per address. */
static int finish_symbols(struct symvec *sv, struct elf_ent *e)
{
	uint32_t *idx = malloc((sv->n ? sv->n : 1) * sizeof(*idx));
	struct symbol *out = malloc((sv->n ? sv->n : 1) * sizeof(*out));
	size_t n = 0;

	if (!idx || !out) {
		free(idx);
		free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < sv->n; i++)
		idx[i] = (uint32_t)i;
	qsort_r(idx, sv->n, sizeof(*idx), sym_cmp, sv);
	for (size_t i = 0; i < sv->n; i++) {
		const struct symbol *s = &sv->v[idx[i]];
		if (n && out[n - 1].addr == s->addr)
			continue;
		out[n++] = *s;
	}
	free(idx);
	free(sv->v);
	free(sv->global);
	e->syms = out;
	e->nsyms = n;
	e->names = sv->names;
	e->bytes = n * sizeof(*out) + sv->ncap;
	return 0;
}

int open_elf(int fd, Elf **elf)
{
	*elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!*elf)
		return -ENOEXEC;
	if (elf_kind(*elf) != ELF_K_ELF) {
		elf_end(*elf);
		*elf = NULL;
		return -ENOEXEC;
	}
	return 0;
}

/* Reads the symbols of e from fd (and from a debug file found by build-id
 * under root when fd has no .symtab). */
static int load_symbols(struct sym_cache *c, struct elf_ent *e, int fd, const char *root)
{
	struct symvec sv = {0};
	Elf *elf;
	int r, have_symtab;

	if ((r = open_elf(fd, &elf)))
		return r;
	have_symtab = read_symtab(elf, SHT_SYMTAB, &sv);
	if (have_symtab == 0 && e->build_id[0]) {
		char dbg[PATH_MAX];
		snprintf(dbg, sizeof(dbg), "%s%s/%.2s/%s.debug", root ? root : "", DEBUG_DIR,
			 e->build_id, e->build_id + 2);
		int dfd = open(dbg, O_RDONLY | O_CLOEXEC);
		if (dfd < 0 && root) {
			snprintf(dbg, sizeof(dbg), "%s/%.2s/%s.debug", DEBUG_DIR, e->build_id,
				 e->build_id + 2);
			dfd = open(dbg, O_RDONLY | O_CLOEXEC);
		}
		if (dfd >= 0) {
			Elf *delf;
			if (!open_elf(dfd, &delf)) {
				have_symtab = read_symtab(delf, SHT_SYMTAB, &sv);
				elf_end(delf);
			}
			close(dfd);
		}
	}
	if (have_symtab < 0) {
		r = have_symtab;
		goto out;
	}
	e->dynsym = have_symtab == 0;
	if (e->dynsym && (r = read_symtab(elf, SHT_DYNSYM, &sv)) < 0)
		goto out;
	r = finish_symbols(&sv, e);
	if (!r) {
		sv.names = NULL; /* now owned by e */
		e->state = ELF_LOADED;
		c->st.loaded++;
		c->st.reads++;
		c->st.bytes += e->bytes;
	}
out:
	if (r) {
		free(sv.v);
		free(sv.global);
	}
	free(sv.names);
	elf_end(elf);
	return r;
}

/* ---- processes --------------------------------------------------------------- */

static int parse_maps(struct sym_proc *p, FILE *f)
{
	char line[PATH_MAX + 256];
	int cap = 0;

	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff, ino;
		unsigned int maj, min;
		char perms[8];
		int pos = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff,
			   &maj, &min, &ino, &pos) < 7)
			continue;
		if (!strchr(perms, 'x'))
			continue;
		char *path = line + pos;
		path[strcspn(path, "\n")] = 0;
		if (p->nmaps == cap) {
			cap = cap ? cap * 2 : 64;
			struct sym_map *n = realloc(p->maps, sizeof(*n) * (size_t)cap);
			if (!n)
				return -ENOMEM;
			p->maps = n;
		}
		struct sym_map *m = &p->maps[p->nmaps];
		memset(m, 0, sizeof(*m));
		m->start = start;
		m->end = end;
		m->pgoff = pgoff;
		m->dev = makedev(maj, min);
		m->ino = ino;
		m->elf = -1;
		size_t len = strlen(path);
		const char *del = " (deleted)";
		if (len > strlen(del) && !strcmp(path + len - strlen(del), del)) {
			m->deleted = true;
			path[len - strlen(del)] = 0;
		}
		m->anon = path[0] != '/';
		if (m->anon)
			m->elf = -2;
		m->path = strdup(path[0] ? path : "[anon]");
		if (!m->path)
			return -ENOMEM;
		p->nmaps++;
	}
	return 0;
}

/* Opens the file behind m; writes the root prefix used for debug files. */
int open_mapped(const struct sym_proc *p, const struct sym_map *m, char *root, size_t rlen)
{
	char path[PATH_MAX + 64];
	struct stat sb;
	int fd;

	root[0] = 0;
	if (p->live) {
		snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, p->pid,
			 m->start, m->end);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0)
			goto opened;
		snprintf(path, sizeof(path), "/proc/%d/root%s", p->pid, m->path);
		if (!m->deleted && (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0)
			goto opened;
	}
	if (m->deleted || (p->foreign_root && !p->live))
		return -ENOENT;
	fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* A path reopened later must still be the file that was mapped. */
	if (m->ino && (fstat(fd, &sb) || sb.st_ino != m->ino || sb.st_dev != m->dev)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
opened:
	if (p->foreign_root)
		snprintf(root, rlen, "/proc/%d/root", p->pid);
	return fd;
}

/* Finds (or creates, reading its identity) the elf_ent of m. */
int identify(struct sym_cache *c, struct sym_proc *p, struct sym_map *m, bool load)
{
	char root[64];
	int i = m->elf;

	if (i == -2)
		return -ENOENT;
	if (i < 0)
		i = find_ino(c, m->dev, m->ino);
	if (i >= 0 && (!load || c->elfs[i]->state != ELF_NEW)) {
		m->elf = i;
		return c->elfs[i]->state == ELF_FAILED ? -ENOEXEC : i;
	}

	int fd = open_mapped(p, m, root, sizeof(root));
	if (fd < 0) {
		if (i < 0)
			m->elf = -2;
		return fd;
	}
	if (i < 0) {
		struct elf_ent *e = calloc(1, sizeof(*e));
		Elf *elf;
		if (!e) {
			close(fd);
			return -ENOMEM;
		}
		e->dev = m->dev;
		e->ino = m->ino;
		snprintf(e->path, sizeof(e->path), "%s", m->path);
		if (open_elf(fd, &elf) || read_segs(elf, e)) {
			if (elf)
				elf_end(elf);
			e->state = ELF_FAILED;
		} else {
			read_build_id(elf, e->build_id);
			elf_end(elf);
		}
		/* The same build-id under another path or inode is the same
		 * code: reuse what is known about it. */
		if (e->build_id[0]) {
			for (int k = 0; k < c->nelfs; k++)
				if (!strcmp(c->elfs[k]->build_id, e->build_id)) {
					i = k;
					c->st.build_id_hits++;
					break;
				}
		}
		if (i < 0) {
			i = add_elf(c, e);
			if (i < 0) {
				free(e);
				close(fd);
				return i;
			}
		} else {
			free(e);
		}
		add_ino(c, m->dev, m->ino, i);
	}
	m->elf = i;
	struct elf_ent *e = c->elfs[i];
	if (load && e->state == ELF_NEW) {
		if (load_symbols(c, e, fd, root[0] ? root : NULL))
			e->state = ELF_FAILED;
		trim(c, i);
	}
	close(fd);
	return e->state == ELF_FAILED ? -ENOEXEC : i;
}

/* ---- source lines (srcline.h) --------------------------------------------------- */

struct open_ctx {
	struct sym_proc *p;
	struct sym_map *m;
	char root[64];
};

static int open_for_lines(void *ctx)
{
	struct open_ctx *o = ctx;
	return open_mapped(o->p, o->m, o->root, sizeof(o->root));
}

/* The source file and line of vaddr (an ELF address of c->elfs[i]). */
static void src_line(struct sym_cache *c, struct sym_proc *p, struct sym_map *m, int i,
		     uint64_t vaddr, struct sym_info *out)
{
	struct open_ctx o = {p, m, ""};
	const char *file;
	int line;
	if (!srclines_lookup(c->lines, i, open_for_lines, &o, c->elfs[i]->build_id, o.root, vaddr,
			     &file, &line)) {
		out->src_file = file;
		out->src_line = line;
	}
}

static struct sym_proc *proc_new(int pid)
{
	struct sym_proc *p = calloc(1, sizeof(*p));
	if (p)
		p->pid = pid;
	return p;
}

struct sym_proc *sym_proc_capture(struct sym_cache *c, int pid, int *err)
{
	char path[64];
	struct sym_proc *p = proc_new(pid);
	struct stat a, b;
	FILE *f;
	int r;

	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (!(f = fopen(path, "re"))) {
		*err = errno == ENOENT ? -ESRCH : -errno;
		free(p);
		return NULL;
	}
	p->live = true;
	r = parse_maps(p, f);
	fclose(f);
	if (r) {
		*err = r;
		sym_proc_free(p);
		return NULL;
	}
	snprintf(path, sizeof(path), "/proc/%d/root", pid);
	if (!stat(path, &a) && !stat("/", &b))
		p->foreign_root = a.st_dev != b.st_dev || a.st_ino != b.st_ino;
	char exe[PATH_MAX];
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	ssize_t n = readlink(path, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		char *d = strstr(exe, " (deleted)");
		if (d)
			*d = 0;
		p->exe = strdup(exe);
	}
	/* What cannot be reopened after the process is gone is read now. */
	for (int i = 0; i < p->nmaps; i++)
		if (!p->maps[i].anon && (p->maps[i].deleted || p->foreign_root))
			identify(c, p, &p->maps[i], true);
	return p;
}

struct sym_proc *sym_proc_from_maps(struct sym_cache *c, int pid, const char *maps_text)
{
	struct sym_proc *p = proc_new(pid);
	FILE *f = fmemopen((void *)maps_text, strlen(maps_text), "r");
	if (!p || !f || parse_maps(p, f)) {
		if (f)
			fclose(f);
		sym_proc_free(p);
		return NULL;
	}
	fclose(f);
	return p;
}

void sym_proc_free(struct sym_proc *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->nmaps; i++)
		free(p->maps[i].path);
	free(p->maps);
	free(p->exe);
	free(p);
}

int sym_proc_pid(const struct sym_proc *p)
{
	return p->pid;
}

int sym_proc_nmaps(const struct sym_proc *p)
{
	return p->nmaps;
}

static struct sym_map *find_map(const struct sym_proc *p, uint64_t addr)
{
	int lo = 0, hi = p->nmaps - 1;
	while (lo <= hi) { /* /proc/PID/maps is sorted by address */
		int mid = (lo + hi) / 2;
		struct sym_map *m = &p->maps[mid];
		if (addr < m->start)
			hi = mid - 1;
		else if (addr >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

bool sym_proc_covers(const struct sym_proc *p, uint64_t addr)
{
	return find_map(p, addr) != NULL;
}

/* File offset -> ELF vaddr through the segment that holds it. */
bool to_vaddr(const struct elf_ent *e, uint64_t foff, uint64_t *vaddr)
{
	for (int i = 0; i < e->nsegs; i++) {
		const struct seg *s = &e->segs[i];
		if (foff >= s->off && foff < s->off + s->filesz) {
			*vaddr = foff - s->off + s->vaddr;
			return true;
		}
	}
	/* Page-aligned mappings start below the segment's own offset. */
	for (int i = 0; i < e->nsegs; i++) {
		const struct seg *s = &e->segs[i];
		if (foff >= (s->off & ~0xfffull) && foff < s->off + s->filesz) {
			*vaddr = foff - s->off + s->vaddr;
			return true;
		}
	}
	return false;
}

static const struct symbol *lookup(const struct elf_ent *e, uint64_t vaddr)
{
	size_t lo = 0, hi = e->nsyms;
	if (!e->nsyms || vaddr < e->syms[0].addr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (e->syms[mid].addr <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	const struct symbol *s = &e->syms[lo];
	if (s->size && vaddr >= s->addr + s->size)
		return NULL; /* past its end: a gap, or code with no symbol */
	if (!s->size && lo + 1 < e->nsyms && vaddr >= e->syms[lo + 1].addr)
		return NULL;
	return s;
}

char *sym_demangle(const char *name)
{
	if (!name || strncmp(name, "_Z", 2))
		return NULL;
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
}

int sym_resolve(struct sym_cache *c, struct sym_proc *p, uint64_t addr, bool ret_addr,
		struct sym_info *out)
{
	struct sym_map *m = find_map(p, addr);

	memset(out, 0, sizeof(*out));
	c->st.lookups++;
	if (!m)
		return -ESRCH;
	out->path = m->path;
	out->flags = (m->deleted ? SYM_F_DELETED : 0) | (m->anon ? SYM_F_ANON : 0);
	if (m->anon)
		return -ENOENT;
	int i = identify(c, p, m, true);
	if (i < 0) {
		out->flags |= SYM_F_NOFILE;
		out->file_vaddr = addr - m->start + m->pgoff;
		return -ENOENT;
	}
	struct elf_ent *e = c->elfs[i];
	e->last_use = ++c->clock;
	uint64_t vaddr;
	if (!to_vaddr(e, addr - m->start + m->pgoff, &vaddr)) {
		out->file_vaddr = addr - m->start + m->pgoff;
		return -ENOENT;
	}
	out->file_vaddr = vaddr;
	if (e->dynsym)
		out->flags |= SYM_F_DYNSYM;
	const struct symbol *s = lookup(e, ret_addr && vaddr ? vaddr - 1 : vaddr);
	if (!s)
		return -ENOENT;
	const char *name = e->names + s->name;
	free(c->demangled);
	c->demangled = sym_demangle(name);
	out->name = c->demangled ? c->demangled : name;
	out->off = vaddr - s->addr;
	src_line(c, p, m, i, ret_addr && vaddr ? vaddr - 1 : vaddr, out);
	return 0;
}
