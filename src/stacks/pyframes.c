/* CPython 3.10-3.12: interpreter detection, per-version structure offsets,
 * code object decoding from process memory, line tables. See pyframes.h. */
#include "stacks/pyframes.h"

#include "stacks/symbolize.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define CODE_CACHE 4096	    /* decoded code objects kept per process (power of 2) */
#define MAX_LINETABLE 65536 /* bytes of a line table read */
#define OB_TYPE 8	    /* PyObject.ob_type */
#define VAR_SIZE 16	    /* PyVarObject.ob_size */
#define BYTES_DATA 32	    /* PyBytesObject.ob_sval */
#define UNI_LENGTH 16	    /* PyASCIIObject.length */
#define UNI_STATE 32	    /* PyASCIIObject.state */

/* From the CPython headers of each version (Include/internal/pycore_*.h,
 * Include/cpython/code.h ...), LP64 release builds; tests/integration/
 * test_pyoffsets.sh compares them with offsetof() on the installed headers
 * and tests/unit/test_pyframes.c walks real interpreters with them. */
static const struct py_offsets tables[] = {
    {
	.version = 0x030a,
	.runtime_interp_head = 32, /* _PyRuntimeState.interpreters.head */
	.interp_tstate_head = 8,   /* PyInterpreterState.tstate_head */
	.tstate_next = 8,
	.tstate_interp = 16,
	.tstate_tid = 176,  /* thread_id: pthread_self() */
	.tstate_frame = 24, /* frame (PyFrameObject *) */
	.cframe_current = PY_NONE,
	.frame_code = 32,     /* PyFrameObject.f_code */
	.frame_previous = 24, /* f_back */
	.frame_instr = 96,    /* f_lasti (int, code units) */
	.frame_owner = PY_NONE,
	.frame_is_entry = PY_NONE,
	.owner_cstack = 0xff,
	.tid_kind = IGB_PY_TID_PTHREAD,
	.instr_int = 1,
	.code_filename = 104,
	.code_name = 112,
	.code_qualname = PY_NONE,
	.code_firstlineno = 40,
	.code_linetable = 120,
	.code_adaptive = PY_NONE,
	.ascii_size = 48,
	.compact_size = 72,
    },
    {
	.version = 0x030b,
	.runtime_interp_head = 40,
	.interp_tstate_head = 16, /* threads.head */
	.tstate_next = 8,
	.tstate_interp = 16,
	.tstate_tid = 160,  /* native_thread_id */
	.tstate_frame = 56, /* cframe */
	.cframe_current = 8,
	.frame_code = 32, /* _PyInterpreterFrame.f_code */
	.frame_previous = 48,
	.frame_instr = 56, /* prev_instr */
	.frame_owner = PY_NONE,
	.frame_is_entry = 68,
	.owner_cstack = 0xff,
	.tid_kind = IGB_PY_TID_NATIVE,
	.instr_int = 0,
	.code_filename = 112,
	.code_name = 120,
	.code_qualname = 128,
	.code_firstlineno = 72,
	.code_linetable = 136,
	.code_adaptive = 184,
	.ascii_size = 48,
	.compact_size = 72,
    },
    {
	.version = 0x030c,
	.runtime_interp_head = 40,
	.interp_tstate_head = 72, /* threads.head */
	.tstate_next = 8,
	.tstate_interp = 16,
	.tstate_tid = 144,  /* native_thread_id */
	.tstate_frame = 56, /* cframe */
	.cframe_current = 0,
	.frame_code = 0,
	.frame_previous = 8,
	.frame_instr = 56, /* prev_instr */
	.frame_owner = 70,
	.frame_is_entry = PY_NONE,
	.owner_cstack = 3, /* FRAME_OWNED_BY_CSTACK */
	.tid_kind = IGB_PY_TID_NATIVE,
	.instr_int = 0,
	.code_filename = 112,
	.code_name = 120,
	.code_qualname = 128,
	.code_firstlineno = 68,
	.code_linetable = 136,
	.code_adaptive = 192,
	.ascii_size = 40,
	.compact_size = 56,
    },
};

const struct py_offsets *py_offsets_for(unsigned version)
{
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (tables[i].version == version)
			return &tables[i];
	return NULL;
}

struct code_info {
	uint64_t addr; /* 0 = empty slot */
	char *file, *func;
	int firstlineno;
	uint8_t *table;
	uint32_t tlen;
};

struct py_proc {
	int pid;
	unsigned hex;
	const struct py_offsets *o;
	uint64_t runtime;   /* &_PyRuntime */
	uint64_t runtime_size; /* its size, 0 unknown */
	uint64_t code_type; /* &PyCode_Type */
	struct code_info *codes;
	unsigned ncodes;
	char *path;
};

static int read_mem(int pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};
	ssize_t n;

	if (!addr)
		return -EFAULT;
	n = process_vm_readv(pid, &l, 1, &r, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n < 0)
		return errno == ESRCH ? -ESRCH : errno == EPERM ? -EPERM : -EFAULT;
	return -EFAULT;
}

static uint64_t get_u64(const uint8_t *b, uint16_t off)
{
	uint64_t v;
	memcpy(&v, b + off, sizeof(v));
	return v;
}

static uint32_t get_u32(const uint8_t *b, uint16_t off)
{
	uint32_t v;
	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* "python3.10", "libpython3.10.so.1.0", "python3.12d" -> 0x030a... */
static unsigned version_from_name(const char *path)
{
	const char *base = strrchr(path, '/'), *s;
	unsigned maj, min;

	base = base ? base + 1 : path;
	if (!(s = strstr(base, "python")))
		return 0;
	if (sscanf(s + 6, "%u.%u", &maj, &min) != 2 || maj != 3 || min > 99)
		return 0;
	return maj << 8 | min;
}

int py_detect(struct sym_cache *c, struct sym_proc *sp, struct py_proc **out, char *note,
	      size_t notelen)
{
	int pid = sym_proc_pid(sp);
	const char *path = NULL;
	uint64_t runtime, runtime_size = 0, vaddr, code_type, interp = 0, tstate = 0, back = 0;
	unsigned hex = 0, ver;
	char dummy[8];
	int r;

	if (!note) {
		note = dummy;
		notelen = sizeof(dummy);
	}
	note[0] = 0;
	*out = NULL;
	if (sym_find_sized(c, sp, "_PyRuntime", "python", &runtime, &runtime_size, &path))
		return -ENOENT;
	if (!sym_find_in(c, sp, path, "Py_Version", &vaddr)) {
		uint32_t v;
		if (!read_mem(pid, vaddr, &v, sizeof(v)))
			hex = v;
	}
	ver = hex ? hex >> 16 : version_from_name(path);
	if (!ver) {
		snprintf(note, notelen, "CPython of unknown version in %s: native frames only",
			 path);
		return -ENOTSUP;
	}
	const struct py_offsets *o = py_offsets_for(ver);
	if (!o) {
		snprintf(
		    note, notelen,
		    "CPython %u.%u (%s) is not supported (3.10, 3.11, 3.12): native frames only",
		    ver >> 8, ver & 0xff, path);
		return -ENOTSUP;
	}
#ifndef __x86_64__
	if (o->tid_kind == IGB_PY_TID_PTHREAD) {
		snprintf(note, notelen,
			 "CPython %u.%u needs x86-64 to find threads: native frames only", ver >> 8,
			 ver & 0xff);
		return -ENOTSUP;
	}
#endif
	if (sym_find_in(c, sp, path, "PyCode_Type", &code_type)) {
		snprintf(note, notelen,
			 "CPython %u.%u (%s) exports no PyCode_Type: native frames only", ver >> 8,
			 ver & 0xff, path);
		return -ENOTSUP;
	}
	/* The layout must hold on the live process: the first interpreter's
	 * first thread state points back at it. */
	if ((r = read_mem(pid, runtime + o->runtime_interp_head, &interp, 8)))
		return r;
	if (interp && (r = read_mem(pid, interp + o->interp_tstate_head, &tstate, 8)))
		return r;
	if (!interp || !tstate) {
		snprintf(note, notelen, "CPython %u.%u in %s is not initialised yet", ver >> 8,
			 ver & 0xff, path);
		return -EAGAIN;
	}
	if ((r = read_mem(pid, tstate + o->tstate_interp, &back, 8)))
		return r;
	if (back != interp) {
		snprintf(note, notelen,
			 "CPython %u.%u in %s does not have the expected structure layout: native "
			 "frames only",
			 ver >> 8, ver & 0xff, path);
		return -ENOTSUP;
	}

	struct py_proc *p = calloc(1, sizeof(*p));
	if (!p || !(p->codes = calloc(CODE_CACHE, sizeof(*p->codes)))) {
		free(p);
		return -ENOMEM;
	}
	p->pid = pid;
	p->path = strdup(path);
	p->hex = hex ? hex : ver << 16;
	p->o = o;
	p->runtime = runtime;
	p->runtime_size = runtime_size;
	p->code_type = code_type;
	snprintf(note, notelen, "CPython %u.%u (%s): Python frames on", ver >> 8, ver & 0xff, path);
	*out = p;
	return 0;
}

static void clear_codes(struct py_proc *p)
{
	for (unsigned i = 0; i < CODE_CACHE; i++) {
		struct code_info *ci = &p->codes[i];
		free(ci->file);
		free(ci->func);
		free(ci->table);
		memset(ci, 0, sizeof(*ci));
	}
	p->ncodes = 0;
}

void py_proc_free(struct py_proc *p)
{
	if (!p)
		return;
	clear_codes(p);
	free(p->codes);
	free(p->path);
	free(p);
}

int py_pid(const struct py_proc *p)
{
	return p->pid;
}

unsigned py_version_hex(const struct py_proc *p)
{
	return p->hex;
}

const struct py_offsets *py_offsets(const struct py_proc *p)
{
	return p->o;
}

const char *py_path(const struct py_proc *p)
{
	return p->path ? p->path : "";
}

void py_bpf_config(const struct py_proc *p, struct igb_pyproc *cfg)
{
	const struct py_offsets *o = p->o;
	memset(cfg, 0, sizeof(*cfg));
	cfg->runtime = p->runtime;
	cfg->runtime_size = p->runtime_size;
	cfg->runtime_interp_head = o->runtime_interp_head;
	cfg->interp_tstate_head = o->interp_tstate_head;
	cfg->tstate_next = o->tstate_next;
	cfg->tstate_tid = o->tstate_tid;
	cfg->tstate_frame = o->tstate_frame;
	cfg->cframe_current = o->cframe_current;
	cfg->frame_code = o->frame_code;
	cfg->frame_previous = o->frame_previous;
	cfg->frame_instr = o->frame_instr;
	cfg->frame_owner = o->frame_owner;
	cfg->frame_is_entry = o->frame_is_entry;
	cfg->owner_cstack = o->owner_cstack;
	cfg->tid_kind = o->tid_kind;
	cfg->instr_int = o->instr_int;
}

/* ---- line tables --------------------------------------------------------- */

/* 3.10 (PEP 626): pairs (bytecode delta, signed line delta), -128 = no line. */
static int line310(const uint8_t *t, size_t len, int first, int addr)
{
	int line = first, end = 0, ar_line = -1;
	for (size_t i = 0; i + 1 < len; i += 2) {
		int start = end;
		end = start + t[i];
		int8_t ld = (int8_t)t[i + 1];
		if (ld == -128) {
			ar_line = -1;
		} else {
			line += ld;
			ar_line = line;
		}
		if (addr >= start && addr < end)
			return ar_line;
	}
	return -1;
}

static int varint(const uint8_t *t, size_t len, size_t *i)
{
	unsigned val = 0, shift = 0, b;
	do {
		if (*i >= len || shift > 28)
			return 0;
		b = t[(*i)++];
		val |= (b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return (int)val;
}

static int svarint(const uint8_t *t, size_t len, size_t *i)
{
	unsigned u = (unsigned)varint(t, len, i);
	return u & 1 ? -(int)(u >> 1) : (int)(u >> 1);
}

/* 3.11+ (PEP 657 location table): entries of one marker byte (bit 7,
 * code in bits 3-6, length in code units - 1 in bits 0-2) and data. */
static int line311(const uint8_t *t, size_t len, int first, int addr)
{
	int line = first, end = 0;
	size_t i = 0;
	while (i < len) {
		uint8_t b = t[i];
		if (!(b & 0x80))
			return -1; /* not at an entry: corrupt */
		int code = (b >> 3) & 15, start = end, ar_line;
		end = start + ((b & 7) + 1) * 2;
		size_t j = i + 1;
		switch (code) {
		case 15: /* no location */
			ar_line = -1;
			break;
		case 13: /* no columns */
		case 14: /* long form */
			line += svarint(t, len, &j);
			ar_line = line;
			break;
		case 10:
		case 11:
		case 12: /* one line, delta 0..2 */
			line += code - 10;
			ar_line = line;
			break;
		default: /* short forms: same line */
			ar_line = line;
			break;
		}
		if (addr >= start && addr < end)
			return ar_line;
		i++;
		while (i < len && !(t[i] & 0x80))
			i++;
	}
	return -1;
}

int py_line_of(unsigned version, const uint8_t *table, size_t len, int firstlineno, int addr)
{
	if (addr < 0)
		return firstlineno;
	return version >= 0x030b ? line311(table, len, firstlineno, addr)
				 : line310(table, len, firstlineno, addr);
}

/* ---- code objects ---------------------------------------------------------- */

/* A str object as UTF-8 (compact ASCII, compact 1/2/4-byte kinds, legacy). */
static int read_str(struct py_proc *p, uint64_t obj, char *out, size_t cap)
{
	uint8_t h[80];
	int r;

	out[0] = 0;
	if ((r = read_mem(p->pid, obj, h, p->o->compact_size + 8)))
		return r;
	int64_t n = (int64_t)get_u64(h, UNI_LENGTH);
	uint32_t state = get_u32(h, UNI_STATE);
	unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
	uint64_t data;

	if (n < 0 || (kind != 1 && kind != 2 && kind != 4))
		return -EINVAL;
	if (compact)
		data = obj + (ascii ? p->o->ascii_size : p->o->compact_size);
	else
		data = get_u64(h, p->o->compact_size); /* PyUnicodeObject.data.any */
	if ((size_t)n > cap / 4)
		n = (int64_t)(cap / 4);
	uint8_t raw[1024];
	size_t bytes = (size_t)n * kind;
	if (bytes > sizeof(raw))
		bytes = sizeof(raw) - sizeof(raw) % kind;
	if (bytes && (r = read_mem(p->pid, data, raw, bytes)))
		return r;
	size_t o = 0;
	for (size_t i = 0; i + kind <= bytes && o + 5 < cap; i += kind) {
		uint32_t ch = kind == 1	  ? raw[i]
			      : kind == 2 ? (uint32_t)(raw[i] | raw[i + 1] << 8)
					  : get_u32(raw, (uint16_t)i);
		if (ch < 0x80) {
			out[o++] = (char)(ch ? ch : '?');
		} else if (ch < 0x800) {
			out[o++] = (char)(0xc0 | ch >> 6);
			out[o++] = (char)(0x80 | (ch & 63));
		} else if (ch < 0x10000) {
			out[o++] = (char)(0xe0 | ch >> 12);
			out[o++] = (char)(0x80 | ((ch >> 6) & 63));
			out[o++] = (char)(0x80 | (ch & 63));
		} else {
			out[o++] = (char)(0xf0 | ch >> 18);
			out[o++] = (char)(0x80 | ((ch >> 12) & 63));
			out[o++] = (char)(0x80 | ((ch >> 6) & 63));
			out[o++] = (char)(0x80 | (ch & 63));
		}
	}
	out[o] = 0;
	return 0;
}

static struct code_info *code_get(struct py_proc *p, uint64_t code, int *err)
{
	const struct py_offsets *o = p->o;
	unsigned h = (unsigned)((code >> 4) * 0x9e3779b97f4a7c15ull >> 52) & (CODE_CACHE - 1);
	struct code_info *ci;
	uint8_t hdr[256];
	char file[256], func[128];
	int r;

	for (unsigned k = 0; k < CODE_CACHE; k++) {
		ci = &p->codes[(h + k) & (CODE_CACHE - 1)];
		if (ci->addr == code)
			return ci;
		if (!ci->addr)
			break;
	}
	if (p->ncodes >= CODE_CACHE * 3 / 4)
		clear_codes(p); /* bounded: start over */

	size_t need = o->code_adaptive != PY_NONE ? o->code_adaptive : o->code_linetable + 8;
	if ((r = read_mem(p->pid, code, hdr, need))) {
		*err = r;
		return NULL;
	}
	if (get_u64(hdr, OB_TYPE) != p->code_type) {
		*err = -EINVAL;
		return NULL;
	}
	if ((r = read_str(p, get_u64(hdr, o->code_filename), file, sizeof(file))) ||
	    (r = read_str(
		 p, get_u64(hdr, o->code_qualname != PY_NONE ? o->code_qualname : o->code_name),
		 func, sizeof(func)))) {
		*err = r == -EINVAL ? -EINVAL : r;
		return NULL;
	}
	uint64_t tobj = get_u64(hdr, o->code_linetable);
	uint8_t *table = NULL;
	int64_t tlen = 0;
	if (tobj && !read_mem(p->pid, tobj + VAR_SIZE, &tlen, 8) && tlen > 0) {
		if (tlen > MAX_LINETABLE)
			tlen = MAX_LINETABLE;
		table = malloc((size_t)tlen);
		if (table && read_mem(p->pid, tobj + BYTES_DATA, table, (size_t)tlen)) {
			free(table);
			table = NULL;
			tlen = 0;
		}
	}
	for (unsigned k = 0;; k++) {
		ci = &p->codes[(h + k) & (CODE_CACHE - 1)];
		if (!ci->addr)
			break;
	}
	ci->addr = code;
	ci->file = strdup(file);
	ci->func = strdup(func);
	ci->firstlineno = (int)get_u32(hdr, o->code_firstlineno);
	ci->table = table;
	ci->tlen = table ? (uint32_t)tlen : 0;
	p->ncodes++;
	return ci;
}

int py_resolve(struct py_proc *p, uint64_t code, uint64_t instr, struct py_frame *out)
{
	const struct py_offsets *o = p->o;
	int err = 0, addr;

	memset(out, 0, sizeof(*out));
	code &= ~IGB_PY_ENTRY;
	if (!code)
		return -EINVAL;
	struct code_info *ci = code_get(p, code, &err);
	if (!ci)
		return err;
	snprintf(out->file, sizeof(out->file), "%s", ci->file ? ci->file : "?");
	snprintf(out->func, sizeof(out->func), "%s", ci->func ? ci->func : "?");
	if (o->instr_int)
		addr = (int32_t)(uint32_t)instr * 2; /* f_lasti counts code units */
	else if (instr < code + o->code_adaptive)
		addr = -1; /* a frame that has not started */
	else
		addr = (int)(instr - (code + o->code_adaptive));
	int line = py_line_of(o->version, ci->table, ci->tlen, ci->firstlineno, addr);
	out->line = line > 0 ? line : ci->firstlineno;
	return 0;
}

/* ---- the walk, from user space ----------------------------------------------- */

int py_walk_thread(struct py_proc *p, int tid, struct igb_pyframe *out, int max)
{
	const struct py_offsets *o = p->o;
	uint64_t interp = 0, ts = 0, frame = 0, v = 0, last = 0;
	uint8_t f[IGB_PY_FRAME_READ];
	int r, n = 0;

	if ((r = read_mem(p->pid, p->runtime + o->runtime_interp_head, &interp, 8)) ||
	    (r = read_mem(p->pid, interp + o->interp_tstate_head, &ts, 8)))
		return r;
	for (int i = 0; i < 256 && ts; i++) {
		if ((r = read_mem(p->pid, ts + o->tstate_tid, &v, 8)))
			return r;
		if (o->tid_kind == IGB_PY_TID_NATIVE && v == (uint64_t)tid)
			break;
		last = ts;
		if ((r = read_mem(p->pid, ts + o->tstate_next, &ts, 8)))
			return r;
	}
	/* thread_id (3.10) is a pthread_t, unknown from outside: the main
	 * thread's state is the oldest, last in the list. */
	if (o->tid_kind == IGB_PY_TID_PTHREAD)
		ts = tid == p->pid ? last : 0;
	if (!ts)
		return -ENOENT;
	if ((r = read_mem(p->pid, ts + o->tstate_frame, &frame, 8)))
		return r;
	if (frame && o->cframe_current != PY_NONE &&
	    (r = read_mem(p->pid, frame + o->cframe_current, &frame, 8)))
		return r;
	for (int i = 0; i < max + 8 && frame && n < max; i++) {
		if ((r = read_mem(p->pid, frame, f, sizeof(f))))
			return r;
		uint64_t code = get_u64(f, o->frame_code);
		uint64_t instr =
		    o->instr_int ? get_u32(f, o->frame_instr) : get_u64(f, o->frame_instr);
		frame = get_u64(f, o->frame_previous);
		if (o->frame_owner != PY_NONE && f[o->frame_owner] == o->owner_cstack) {
			if (n > 0)
				out[n - 1].code |= IGB_PY_ENTRY;
			continue;
		}
		if (o->frame_is_entry != PY_NONE) {
			if (f[o->frame_is_entry])
				code |= IGB_PY_ENTRY;
		} else if (o->frame_owner == PY_NONE) {
			code |= IGB_PY_ENTRY;
		}
		out[n].code = code;
		out[n].instr = instr;
		n++;
	}
	return n;
}
