/* The stacks module's interpreters (resolver thread): finding the CPython
 * of a process in its mappings, telling the kernel through
 * stacks_kernel.set_python, publishing the process's note, and decoding a
 * raw stack's Python frames into the places of the interpreter's
 * evaluation loop among its native frames. */
#include "stacks/stacks_int.h"

#include "stacks/pyframes.h"

#include <errno.h>

#define PY_RETRY_NS 200000000ull /* an interpreter still starting */
#define PY_TRIES 25

/* p's note for stacks_proc_note, and the interpreter counts. */
static void publish_note(struct stacks *st, struct rproc *p)
{
	pthread_mutex_lock(&st->mu);
	unsigned i;
	for (i = 0; i < st->npnotes; i++)
		if (st->pnotes[i].pid == p->pid)
			break;
	if (i == st->npnotes) {
		if (st->npnotes == st->o.max_procs)
			i = (unsigned)(p->pid % st->o.max_procs);
		else
			st->npnotes++;
	}
	st->pnotes[i].pid = p->pid;
	snprintf(st->pnotes[i].note, sizeof(st->pnotes[i].note), "%s", p->note);
	unsigned on = 0, unsup = 0;
	for (unsigned k = 0; k < st->nprocs; k++) {
		on += st->procs[k].py_state == PYS_ON;
		unsup += st->procs[k].py_state == PYS_UNSUPPORTED;
	}
	st->stats.py_procs = on;
	st->stats.py_unsupported = unsup;
	st->stats.procs = st->nprocs;
	pthread_mutex_unlock(&st->mu);
}

/* Tells the kernel where p's interpreter keeps its frames; a failure goes
 * into p's note. */
static void tell_kernel(struct stacks *st, struct rproc *p)
{
	struct stacks_kernel k;
	struct igb_pyproc cfg;

	pthread_mutex_lock(&st->mu);
	k = st->kern;
	pthread_mutex_unlock(&st->mu);
	if (!k.set_python)
		return;
	py_bpf_config(p->py, &cfg);
	int e = k.set_python(k.ctx, (int)p->pid, &cfg);
	if (e)
		snprintf(p->note + strlen(p->note), sizeof(p->note) - strlen(p->note),
			 " (kernel map: %s)", strerror(-e));
}

void stk_py_find(struct stacks *st, struct rproc *p)
{
	if (st->o.no_python || !p->maps || p->exited)
		return;
	py_proc_free(p->py);
	p->py = NULL;
	int r = py_detect(st->sym, p->maps, &p->py, p->note, sizeof(p->note));
	if (r == 0) {
		p->py_state = PYS_ON;
		tell_kernel(st, p);
	} else if (r == -EAGAIN && ++p->py_tries < PY_TRIES) {
		p->py_state = PYS_AGAIN;
		pthread_mutex_lock(&st->mu);
		stk_job_post(
		    st,
		    (struct job){.type = J_PROC, .pid = p->pid, .due_ns = ig_mono_ns() + PY_RETRY_NS});
		pthread_mutex_unlock(&st->mu);
	} else if (r == -ENOTSUP || r == -EAGAIN) {
		p->py_state = PYS_UNSUPPORTED;
	} else {
		p->py_state = PYS_NONE;
		p->note[0] = 0;
	}
	publish_note(st, p);
}

void stk_py_forget(struct rproc *p)
{
	py_proc_free(p->py);
	p->py = NULL;
	p->py_state = PYS_UNKNOWN;
	p->py_tries = 0;
	p->note[0] = 0;
}

/* ---- Python frames among the native ones ------------------------------------ */

/* Python frames go in groups, one per call of the evaluation loop
 * (IGB_PY_ENTRY ends a group), each in place of its native
 * _PyEval_EvalFrameDefault frame; groups with no such frame (the
 * interpreter has no frame pointers) go where the interpreter's own code
 * first appears, else after the last native frame. */
void stk_py_merge_begin(struct py_merge *m, struct stacks *st, struct rproc *p,
			const struct igb_stack *raw)
{
	memset(m, 0, sizeof(*m));
	m->st = st;
	m->p = p;
	m->raw = raw;
	m->npy = raw->npy > IGB_PY_MAX ? IGB_PY_MAX : raw->npy;
	m->on = m->npy > 0 && p && p->py;
	m->rest_placed = !m->on;
	if (!m->on)
		return;
	for (int i = 0; i < m->npy; i++)
		if ((raw->py[i].code & IGB_PY_ENTRY) || i == m->npy - 1)
			m->gend[m->ng++] = i + 1;
	m->interp = py_path(p->py);
}

/* The Python frames from..to-1 (one or more evaluation loop calls). */
static void add_py_group(struct py_merge *m, int from, int to, struct builder *b)
{
	for (int i = from; i < to; i++) {
		struct py_frame pf;
		char text[320];
		int r = py_resolve(m->p->py, m->raw->py[i].code, m->raw->py[i].instr, &pf);
		if (r) {
			m->failed = true;
			continue;
		}
		tfmt(text, sizeof(text), "[py] %s:%d in %s()", pf.file, pf.line, pf.func);
		stk_badd(b, STACKS_PY, 0, 0, pf.line, pf.func, pf.file, text);
		m->st->stats.py_frames++;
	}
}

static bool is_eval_frame(const char *sym)
{
	return sym && !strncmp(sym, "_PyEval_EvalFrameDefault", 24);
}

void stk_py_merge_native(struct py_merge *m, struct builder *b, int before)
{
	if (!m->on || m->g >= m->ng || before >= b->n)
		return;
	struct iframe *f = &b->fr[before];
	const char *sym = f->sym ? b->blob + f->sym : NULL;
	const char *file = f->file ? b->blob + f->file : NULL;
	if (is_eval_frame(sym)) {
		b->n = before; /* the Python frames replace it */
		add_py_group(m, m->gstart, m->gend[m->g], b);
		m->gstart = m->gend[m->g++];
		return;
	}
	if (!m->rest_placed && file && m->interp && !strcmp(file, m->interp)) {
		struct iframe nf = *f; /* its strings stay in the blob */
		b->n = before;
		add_py_group(m, m->gstart, m->npy, b);
		m->g = m->ng;
		m->rest_placed = true;
		if (b->n < MAX_FRAMES)
			b->fr[b->n++] = nf;
	}
}

void stk_py_merge_end(struct py_merge *m, struct builder *b)
{
	const struct igb_stack *raw = m->raw;
	const struct rproc *p = m->p;

	if (m->on && m->g < m->ng)
		add_py_group(m, m->gstart, m->npy, b);
	if (m->npy > 0 && !m->on)
		stk_bnote(b, "[note] %s", "Python frames captured but the interpreter is unknown");
	if (m->failed)
		stk_bnote(b, "[note] %s",
			  p && p->exited
			      ? "Python frames lost: the process exited before they were read"
			      : "some Python frames could not be read");
	if (raw->flags & IGB_STK_PY_TRUNC)
		stk_bnote(b, "[note] more than %s Python frames: the outermost are not shown",
			  "32");
	if (raw->flags & IGB_STK_PY_ERR)
		stk_bnote(b, "[note] %s", "the interpreter's frames could not all be read");
	if (p && p->py_state == PYS_UNSUPPORTED && p->note[0])
		stk_bnote(b, "[note] %s", p->note);
	else if (p && p->py_state == PYS_ON && !(raw->flags & IGB_STK_PY))
		stk_bnote(b, "[note] %s",
			  "captured before the interpreter was found: no Python frames");
}
