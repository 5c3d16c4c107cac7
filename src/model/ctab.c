/* Culprit tables: who preempted a series or a process, who woke it, per
 * 1-second slice of the window, in CTAB_N entries (the smallest in the
 * window makes room for a newcomer). */
#include "model/model_int.h"

#include <stdint.h>

static uint64_t ctab_sum(const struct ig_model *m, const struct ctab *t, int k)
{
	uint64_t s = 0;
	for (unsigned j = 0; j < m->W; j++)
		if (in_window(m, t->sec[j]))
			s += t->e[k].ns[j];
	return s;
}

/* A culprit recorded by pid alone (the task that held the CPU a woken
 * thread waited for: the kernel's record of the wait names only the waker)
 * takes the name it was last seen with as a culprit elsewhere (preempting
 * a call, waking a thread); names seen are remembered. */
static const char *culprit_name(struct ig_model *m, uint32_t pid, const char *comm)
{
	struct name_slot *s = &m->names[pid % NAME_SLOTS];
	if (comm && comm[0]) {
		s->pid = pid;
		copy_comm(s->comm, comm);
		return comm;
	}
	return s->pid == pid ? s->comm : comm;
}

void ctab_add(struct ig_model *m, struct ctab *t, uint32_t pid, uint32_t aux, const char *comm,
	      uint64_t ns, uint64_t sec)
{
	comm = culprit_name(m, pid, comm);
	unsigned j = (unsigned)(sec % m->W);
	if (t->sec[j] != sec) {
		for (int k = 0; k < CTAB_N; k++)
			t->e[k].ns[j] = 0;
		t->sec[j] = sec;
	}
	int k, free_k = -1;
	for (k = 0; k < CTAB_N; k++) {
		if (t->e[k].pid == pid)
			break;
		if (!t->e[k].pid && free_k < 0)
			free_k = k;
	}
	if (k == CTAB_N) {
		if (free_k < 0) { /* replace the smallest in the window */
			uint64_t best = UINT64_MAX;
			for (int i = 0; i < CTAB_N; i++) {
				uint64_t s = ctab_sum(m, t, i);
				if (s < best) {
					best = s;
					free_k = i;
				}
			}
			memset(t->e[free_k].ns, 0, sizeof(t->e[free_k].ns));
			t->e[free_k].aux = 0;
			t->e[free_k].comm[0] = 0;
		}
		k = free_k;
		t->e[k].pid = pid;
	}
	if (comm && comm[0])
		copy_comm(t->e[k].comm, comm);
	if (aux)
		t->e[k].aux = aux;
	t->e[k].ns[j] += ns;
}

void ctab_sub(struct ig_model *m, struct ctab *t, uint32_t pid, uint64_t ns, uint64_t sec)
{
	unsigned j = (unsigned)(sec % m->W);
	if (t->sec[j] != sec)
		return;
	for (int k = 0; k < CTAB_N; k++)
		if (t->e[k].pid == pid) {
			t->e[k].ns[j] = t->e[k].ns[j] > ns ? t->e[k].ns[j] - ns : 0;
			return;
		}
}

/* The seconds of [end_ns - ns, end_ns) that the window can hold, from the
 * last: a culprit's time is kept in the second it was spent in, so that a
 * wait longer than the window counts only its part in the window (woken
 * by X after 22 s counts 9 s in a 9 s window) and leaves it a second at a
 * time. Calls f for each second's part; ctab_add and ctab_sub share it so
 * that a moved wait is taken back as it was added. */
static void wait_seconds(const struct ig_model *m, uint64_t end_ns, uint64_t ns,
			 void (*f)(struct ig_model *, struct ctab *, uint32_t, uint32_t,
				   const char *, uint64_t, uint64_t),
			 struct ig_model *mm, struct ctab *t, uint32_t pid, uint32_t aux,
			 const char *comm)
{
	uint64_t start = end_ns > ns ? end_ns - ns : 0;
	uint64_t last = end_ns / NS, first = start / NS;
	if (last >= m->W && first < last - m->W + 1)
		first = last - m->W + 1; /* older seconds have no slot */
	for (uint64_t sec = last + 1; sec-- > first;) {
		uint64_t lo = sec * NS > start ? sec * NS : start;
		uint64_t hi = (sec + 1) * NS < end_ns ? (sec + 1) * NS : end_ns;
		if (hi > lo || (sec == last && !ns))
			f(mm, t, pid, aux, comm, hi > lo ? hi - lo : 0, sec);
	}
}

static void sub_one(struct ig_model *m, struct ctab *t, uint32_t pid, uint32_t aux,
		    const char *comm, uint64_t ns, uint64_t sec)
{
	ctab_sub(m, t, pid, ns, sec);
}

void ctab_add_wait(struct ig_model *m, struct ctab *t, uint32_t pid, uint32_t aux,
		   const char *comm, uint64_t end_ns, uint64_t ns)
{
	/* only the seconds still in the window: an older one's slot may
	 * already hold a second of the window */
	uint64_t ws = win_start_sec(m) * NS;
	if (end_ns > ws && end_ns - ws < ns)
		ns = end_ns - ws;
	wait_seconds(m, end_ns, ns, ctab_add, m, t, pid, aux, comm);
}

void ctab_sub_wait(struct ig_model *m, struct ctab *t, uint32_t pid, uint64_t end_ns, uint64_t ns)
{
	wait_seconds(m, end_ns, ns, sub_one, m, t, pid, 0, NULL);
}

/* Top n of a table, largest first; shares of `total` (or of the table sum). */
int ctab_top(const struct ig_model *m, const struct ctab *t, struct ig_culprit *out, int n,
		    uint64_t total)
{
	struct ig_culprit all[CTAB_N];
	int c = 0;
	uint64_t sum = 0;
	for (int k = 0; k < CTAB_N; k++) {
		if (!t->e[k].pid)
			continue;
		uint64_t s = ctab_sum(m, t, k);
		if (!s)
			continue;
		all[c].pid = t->e[k].pid;
		all[c].aux = t->e[k].aux;
		const struct name_slot *ns = &m->names[t->e[k].pid % NAME_SLOTS];
		copy_comm(all[c].comm, t->e[k].comm[0] || ns->pid != t->e[k].pid ? t->e[k].comm
										     : ns->comm);
		all[c].ns = s;
		sum += s;
		c++;
	}
	/* insertion sort: largest first, then pid */
	for (int i = 1; i < c; i++)
		for (int j = i;
		     j > 0 && (all[j].ns > all[j - 1].ns ||
			       (all[j].ns == all[j - 1].ns && all[j].pid < all[j - 1].pid));
		     j--) {
			struct ig_culprit x = all[j];
			all[j] = all[j - 1];
			all[j - 1] = x;
		}
	if (total < sum)
		total = sum;
	int w = c < n ? c : n;
	for (int i = 0; i < w; i++) {
		out[i] = all[i];
		out[i].share = total ? (double)all[i].ns / (double)total : 0;
	}
	return w;
}
