/* ELF symbol lookup with libelf: virtual address -> file offset through the
 * executable PT_LOAD segment that contains it. */
#include "collect/elfsym.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

static uint64_t vaddr_to_offset(Elf *elf, uint64_t vaddr)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz)
			return vaddr - ph.p_vaddr + ph.p_offset;
	}
	return 0;
}

/* values: symbol values (virtual addresses) of any defined symbol, not
 * file offsets of functions. */
static void scan_symtab(Elf *elf, Elf_Scn *scn, const char *const *names, int n, uint64_t *offsets,
			bool values)
{
	GElf_Shdr sh;
	Elf_Data *data;

	if (!gelf_getshdr(scn, &sh) || !(data = elf_getdata(scn, NULL)) || !sh.sh_entsize)
		return;
	size_t count = sh.sh_size / sh.sh_entsize;
	for (size_t i = 0; i < count; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		if (!values && GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
		    GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
			continue;
		if (sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		for (int k = 0; k < n; k++) {
			if (offsets[k] || strcmp(name, names[k]))
				continue;
			offsets[k] = values ? sym.st_value : vaddr_to_offset(elf, sym.st_value);
		}
	}
}

/* The file open as an ELF object: its fd and *elf, or -errno / -ENOEXEC. */
static int elf_open(const char *path, Elf **elf)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF) {
		if (*elf)
			elf_end(*elf);
		close(fd);
		return -ENOEXEC;
	}
	return fd;
}

static int lookup(const char *path, const char *const *names, int n, uint64_t *offsets, bool values)
{
	int fd, found = 0;
	Elf *elf;

	memset(offsets, 0, sizeof(*offsets) * (size_t)n);
	fd = elf_open(path, &elf);
	if (fd < 0)
		return fd;
	/* dynsym first: exported names win over local aliases in symtab. */
	for (int pass = 0; pass < 2; pass++) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh))
				continue;
			if (sh.sh_type == (pass ? SHT_SYMTAB : SHT_DYNSYM))
				scan_symtab(elf, scn, names, n, offsets, values);
		}
	}
	for (int k = 0; k < n; k++)
		found += offsets[k] != 0;
	elf_end(elf);
	close(fd);
	return found;
}

int elfsym_offsets(const char *path, const char *const *names, int n, uint64_t *offsets)
{
	return lookup(path, names, n, offsets, false);
}

int elfsym_values(const char *path, const char *const *names, int n, uint64_t *values)
{
	return lookup(path, names, n, values, true);
}

int elfsym_load_base(const char *path, uint64_t *vaddr)
{
	Elf *elf;
	size_t n;
	int fd = elf_open(path, &elf), r = -ENOEXEC;
	if (fd < 0)
		return fd;
	if (!elf_getphdrnum(elf, &n))
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (r || ph.p_vaddr < *vaddr)
				*vaddr = ph.p_vaddr & ~(uint64_t)0xfff;
			r = 0;
		}
	elf_end(elf);
	close(fd);
	return r;
}

int elfsym_has_any(const char *path, const char *const *names, int n)
{
	uint64_t offs[16];

	if (n > 16)
		n = 16;
	int r = elfsym_offsets(path, names, n, offs);
	return r < 0 ? r : r > 0;
}

int elfsym_is_dynamic(const char *path)
{
	return elfsym_interp(path, NULL, 0);
}

int elfsym_interp(const char *path, char *out, size_t len)
{
	int fd, r = 0;
	size_t n;
	Elf *elf;

	fd = elf_open(path, &elf);
	if (fd < 0)
		return fd;
	if (elf_getphdrnum(elf, &n)) {
		r = -ENOEXEC;
		n = 0;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_INTERP)
			continue;
		r = 1;
		if (out && len) {
			/* PT_INTERP holds the path with its terminating NUL */
			if (ph.p_filesz > 1 && ph.p_filesz <= len &&
			    pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) ==
				(ssize_t)ph.p_filesz &&
			    memchr(out, 0, ph.p_filesz))
				out[ph.p_filesz - 1] = 0;
			else
				out[0] = 0;
		}
	}
	elf_end(elf);
	close(fd);
	return r;
}
