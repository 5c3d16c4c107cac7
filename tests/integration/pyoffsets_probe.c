/* Compiled by test_pyoffsets.sh against one CPython's own headers
 * (Py_BUILD_CORE internals): prints the offsets src/pyframes.c uses, in
 * the format of "stacktrace --py-offsets X.Y". */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#if PY_VERSION_HEX >= 0x030b0000
#include "internal/pycore_frame.h"
#endif
#include "internal/pycore_interp.h"
#include "internal/pycore_runtime.h"
#if PY_VERSION_HEX < 0x030b0000
#include <frameobject.h>
#endif

#define P(name, expr) printf("%s %zu\n", name, (size_t)(expr))

int main(void)
{
	P("runtime_interp_head", offsetof(_PyRuntimeState, interpreters.head));
#if PY_VERSION_HEX >= 0x030b0000
	P("interp_tstate_head", offsetof(PyInterpreterState, threads.head));
	P("tstate_tid", offsetof(PyThreadState, native_thread_id));
	P("tstate_frame", offsetof(PyThreadState, cframe));
	P("cframe_current", offsetof(_PyCFrame, current_frame));
	P("frame_code", offsetof(_PyInterpreterFrame, f_code));
	P("frame_previous", offsetof(_PyInterpreterFrame, previous));
	P("frame_instr", offsetof(_PyInterpreterFrame, prev_instr));
#if PY_VERSION_HEX >= 0x030c0000
	P("frame_owner", offsetof(_PyInterpreterFrame, owner));
	P("owner_cstack", FRAME_OWNED_BY_CSTACK);
#else
	P("frame_is_entry", offsetof(_PyInterpreterFrame, is_entry));
#endif
	P("code_qualname", offsetof(PyCodeObject, co_qualname));
	P("code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
#else
	P("interp_tstate_head", offsetof(PyInterpreterState, tstate_head));
	P("tstate_tid", offsetof(PyThreadState, thread_id));
	P("tstate_frame", offsetof(PyThreadState, frame));
	P("frame_code", offsetof(PyFrameObject, f_code));
	P("frame_previous", offsetof(PyFrameObject, f_back));
	P("frame_instr", offsetof(PyFrameObject, f_lasti));
#endif
	P("tstate_next", offsetof(PyThreadState, next));
	P("tstate_interp", offsetof(PyThreadState, interp));
	P("code_filename", offsetof(PyCodeObject, co_filename));
	P("code_name", offsetof(PyCodeObject, co_name));
	P("code_firstlineno", offsetof(PyCodeObject, co_firstlineno));
	P("code_linetable", offsetof(PyCodeObject, co_linetable));
	P("ascii_size", sizeof(PyASCIIObject));
	P("compact_size", sizeof(PyCompactUnicodeObject));
	/* Fixed offsets src/pyframes.c assumes for every version. */
	P("ob_type", offsetof(PyObject, ob_type));
	P("var_size", offsetof(PyVarObject, ob_size));
	P("bytes_data", offsetof(PyBytesObject, ob_sval));
	P("unicode_length", offsetof(PyASCIIObject, length));
	P("unicode_state", offsetof(PyASCIIObject, state));
	return 0;
}
