/* Symbols by name (see symbolize.h: sym_find, sym_find_in): a defined
 * function or object of a process's mappings, at its runtime address. */
#include "stacks/symbolize_int.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

static int find_in_map(struct sym_cache *c, struct sym_proc *p, struct sym_map *m, const char *name,
		       uint64_t *addr)
{
	int i = identify(c, p, m, true);
	if (i < 0)
		return -ENOENT;
	struct elf_ent *e = c->elfs[i];
	e->last_use = ++c->clock;
	uint64_t vaddr0;
	/* Load bias from this mapping: its start is the vaddr of its offset. */
	if (!to_vaddr(e, m->pgoff, &vaddr0))
		return -ENOENT;
	for (size_t k = 0; k < e->nsyms; k++)
		if (!strcmp(e->names + e->syms[k].name, name)) {
			*addr = e->syms[k].addr - vaddr0 + m->start;
			return 0;
		}
	return -ENOENT;
}

/* sym_find looks at data symbols too: _PyRuntime is an object. */
static int find_object(struct sym_cache *c, struct sym_proc *p, struct sym_map *m, const char *name,
		       uint64_t *addr, uint64_t *size)
{
	char root[64];
	int i = identify(c, p, m, false);
	if (i < 0)
		return -ENOENT;
	struct elf_ent *e = c->elfs[i];
	uint64_t vaddr0;
	if (!to_vaddr(e, m->pgoff, &vaddr0))
		return -ENOENT;
	int fd = open_mapped(p, m, root, sizeof(root));
	if (fd < 0)
		return fd;
	Elf *elf;
	int r = -ENOENT;
	if (!open_elf(fd, &elf)) {
		Elf_Scn *scn = NULL;
		while (r && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
			    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB))
				continue;
			Elf_Data *d = elf_getdata(scn, NULL);
			size_t n = sh.sh_size / sh.sh_entsize;
			for (size_t k = 0; d && k < n; k++) {
				GElf_Sym s;
				if (!gelf_getsym(d, (int)k, &s))
					break;
				if (s.st_shndx == SHN_UNDEF || !s.st_value)
					continue;
				const char *nm = elf_strptr(elf, sh.sh_link, s.st_name);
				if (nm && !strcmp(nm, name)) {
					*addr = s.st_value - vaddr0 + m->start;
					if (size)
						*size = s.st_size;
					r = 0;
					break;
				}
			}
		}
		elf_end(elf);
	}
	close(fd);
	return r;
}

int sym_find_in(struct sym_cache *c, struct sym_proc *p, const char *path, const char *name,
		uint64_t *addr)
{
	for (int i = 0; i < p->nmaps; i++) {
		struct sym_map *m = &p->maps[i];
		if (m->anon || strcmp(m->path, path))
			continue;
		if (!find_object(c, p, m, name, addr, NULL) || !find_in_map(c, p, m, name, addr))
			return 0;
		return -ENOENT; /* one mapping per file is enough */
	}
	return -ENOENT;
}

int sym_find(struct sym_cache *c, struct sym_proc *p, const char *name, const char *hint,
	     uint64_t *addr, const char **path)
{
	return sym_find_sized(c, p, name, hint, addr, NULL, path);
}

int sym_find_sized(struct sym_cache *c, struct sym_proc *p, const char *name, const char *hint,
		   uint64_t *addr, uint64_t *size, const char **path)
{
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < p->nmaps; i++) {
			struct sym_map *m = &p->maps[i];
			const char *base = strrchr(m->path, '/');
			base = base ? base + 1 : m->path;
			if (m->anon)
				continue;
			bool dup = false;
			for (int k = 0; k < i && !dup; k++)
				dup = !strcmp(p->maps[k].path, m->path);
			if (dup)
				continue;
			if (pass == 0 && !(hint && strstr(base, hint)))
				continue;
			if (pass == 1 && !(p->exe && !strcmp(p->exe, m->path)))
				continue;
			if (!find_object(c, p, m, name, addr, size)) {
				*path = m->path;
				return 0;
			}
		}
	}
	return -ENOENT;
}
