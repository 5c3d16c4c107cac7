/* CPython frames of traced calls. At the call, the kernel
 * (bpf/stacks.bpf.h, py_capture) copies the code object pointer and the
 * instruction pointer of each interpreter frame of the calling thread; this
 * module does the rest in user space:
 *
 *   py_detect   finds the interpreter of a process: the file that defines
 *               _PyRuntime (python3.X or libpython3.X.so), its version
 *               (the Py_Version word, 3.11+, else the file name), and the
 *               structure offsets of that version (py_offsets_for, taken
 *               from the CPython headers of each version and checked
 *               against the real headers and interpreters by the tests); the
 *               offsets are then checked on the live process (the
 *               interpreter's first thread state must point back at it);
 *   py_resolve  decodes a code object from process memory
 *               (process_vm_readv): file, qualified name and the line of
 *               the instruction (3.10 line table, 3.11+ location table),
 *               cached per code object, which CPython never changes;
 *   py_walk_thread  the same walk as the kernel's, from user space (tests).
 *
 * Versions other than 3.10, 3.11 and 3.12 are reported (-ENOTSUP and a
 * note), never guessed at. Not thread-safe: one thread per py_proc. */
#ifndef IG_PYFRAMES_H
#define IG_PYFRAMES_H

#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>
#include "ingero.h"

struct sym_cache;
struct sym_proc;
struct py_proc;

#define PY_NONE 0xffff /* an offset this version does not have */

/* Byte offsets of the fields the walk and the decoder read (x86-64 and
 * other LP64 targets, release builds). */
struct py_offsets {
	unsigned version; /* major << 8 | minor, e.g. 0x030b */
	uint16_t runtime_interp_head, interp_tstate_head;
	uint16_t tstate_next, tstate_interp, tstate_tid, tstate_frame, cframe_current;
	uint16_t frame_code, frame_previous, frame_instr, frame_owner, frame_is_entry;
	uint8_t owner_cstack; /* owner of 3.12 C-stack shim frames, 0xff none */
	uint8_t tid_kind;     /* enum igb_py_tid */
	uint8_t instr_int;    /* frame_instr is f_lasti (int, code units) */
	uint16_t code_filename, code_name, code_qualname, code_firstlineno, code_linetable;
	uint16_t code_adaptive;		   /* co_code_adaptive (3.11+), PY_NONE for 3.10 */
	uint16_t ascii_size, compact_size; /* sizeof(PyASCIIObject), (PyCompactUnicodeObject) */
};

/* The table of a version (major << 8 | minor); NULL when unsupported. */
const struct py_offsets *py_offsets_for(unsigned version);

/* Looks for a CPython interpreter in the process of sp (which must be
 * live). Returns 0 with *out (owned by the caller); -ENOENT: no CPython;
 * -ENOTSUP: a CPython this module does not support (note says which and
 * why); -EAGAIN: not initialised yet (try again later); other -errno. note
 * (may be NULL) receives one line in every case but -ENOENT. */
int py_detect(struct sym_cache *c, struct sym_proc *sp, struct py_proc **out, char *note,
	      size_t notelen);
void py_proc_free(struct py_proc *p);
int py_pid(const struct py_proc *p);
/* PY_VERSION_HEX of the interpreter (e.g. 0x030b02f0), or major.minor << 16
 * when only the file name told. */
unsigned py_version_hex(const struct py_proc *p);
const struct py_offsets *py_offsets(const struct py_proc *p);
/* The file that holds the interpreter (python3.X or libpython3.X.so), as
 * the process maps it. Owned by p. */
const char *py_path(const struct py_proc *p);

/* The kernel's view of p (bpf/ingero.h, map py_procs). */
void py_bpf_config(const struct py_proc *p, struct igb_pyproc *cfg);

struct py_frame {
	char file[256]; /* co_filename */
	char func[128]; /* co_qualname (3.11+) or co_name */
	int line;	/* line of the instruction, 0 when unknown */
};

/* Decodes one captured frame: code is the PyCodeObject address (the
 * IGB_PY_ENTRY bit ignored), instr the frame's prev_instr (3.11+) or
 * f_lasti (3.10). 0, -EINVAL when code is not a code object of this
 * interpreter, -ESRCH when the process is gone, -EFAULT when unreadable. */
int py_resolve(struct py_proc *p, uint64_t code, uint64_t instr, struct py_frame *out);

/* The interpreter frames of thread tid, innermost first, as the kernel
 * captures them. Returns the number written, or -errno (-ENOENT: tid has
 * no thread state). */
int py_walk_thread(struct py_proc *p, int tid, struct igb_pyframe *out, int max);

/* Line of byte offset addr in a code object's line table, for the table
 * format of version (3.10: pairs, 3.11+: location table); tests. */
int py_line_of(unsigned version, const uint8_t *table, size_t len, int firstlineno, int addr);

#endif
