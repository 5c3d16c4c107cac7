/* What the keys do (the bindings are in keys.c, the modal input in
 * input.c): one handler per group of actions, each changing state and
 * returning TF_* flags; plus the things asked about first (reset, signals,
 * renice) once the user said y. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/log.h"
#include "tui_int.h"

const struct tui_signal tui_signals[] = {
    {SIGTERM, "SIGTERM", "ask it to end (it may clean up)"},
    {SIGINT, "SIGINT", "interrupt, as Ctrl-C does"},
    {SIGHUP, "SIGHUP", "hang up"},
    {SIGKILL, "SIGKILL", "end it at once (no clean-up)"},
    {SIGSTOP, "SIGSTOP", "stop it (SIGCONT resumes)"},
    {SIGCONT, "SIGCONT", "resume a stopped process"},
    {SIGUSR1, "SIGUSR1", "user signal 1"},
};
const int tui_nsignals = (int)(sizeof(tui_signals) / sizeof(tui_signals[0]));

static int replay_only(struct tui *t, int action)
{
	if (session_status(t->s)->mode == IG_MODE_REPLAY)
		return 0;
	char k[32];
	const struct tui_binding *b = tui_action_binding(action);
	tui_message(t, "%s: replay only", b ? tui_key_name(b->keys[0], k, sizeof(k)) : "key");
	return 1;
}

static int do_speed(struct tui *t, int up)
{
	double sp = session_status(t->s)->replay_speed;
	if (sp <= 0 && up) {
		tui_message(t, "already replaying as fast as possible");
		return TF_REDRAW;
	}
	if (sp <= 0)
		sp = 512;
	else if (up)
		sp = sp * 2 > 1024 ? 0 : sp * 2;
	else
		sp = sp / 2 < 0.25 ? 0.25 : sp / 2; /* the floor of --speed (docs/tui.md) */
	int r = session_set_speed(t->s, sp);
	if (r)
		tui_message(t, "cannot change the speed: %s", strerror(-r));
	else if (sp <= 0)
		tui_message(t, "speed: as fast as possible");
	else if (sp <= 0.25 && !up)
		tui_message(t, "speed: x%g (the slowest)", sp);
	else
		tui_message(t, "speed: x%g", sp);
	return TF_REDRAW | TF_REFRESH;
}

/* } and {: the replay moves to where the next (previous) alert was first
 * detected. */
static int seek_alert(struct tui *t, int dir)
{
	int r = session_jump_chain(t->s, dir);
	if (r == -ENOENT || r == -ENODATA)
		tui_message(t, "no %s alert", dir > 0 ? "next" : "previous");
	else if (r < 0)
		tui_message(t, "cannot jump: %s", strerror(-r));
	else
		tui_message(t, "at the %s alert's first detection", dir > 0 ? "next" : "previous");
	return TF_REDRAW | TF_REFRESH;
}

/* n: the top alert from anywhere; on an alert screen, the next one (N: the
 * previous one). The alerts in the detector's order: the worst first. */
static int alert_step(struct tui *t, int dir)
{
	const struct tui_snap *sn = t->snap;
	struct tui_view *v = tui_top(t);
	if (!sn->nchains) {
		tui_message(t, "no alerts");
		return TF_REDRAW;
	}
	int i = 0;
	if (v->screen == SCR_ALERT) {
		int cur = -1;
		for (int k = 0; k < sn->nchains; k++)
			if (sn->chains[k].id == v->chain_id)
				cur = k;
		i = cur < 0 ? 0 : cur + dir;
		if (i < 0 || i >= sn->nchains) {
			tui_message(t, "no %s alert", dir > 0 ? "next" : "previous");
			return TF_REDRAW;
		}
		v->chain_id = sn->chains[i].id;
		v->lists[0].top = 0;
		tui_view_update(t, v);
		tui_message(t, "alert %d of %d", i + 1, sn->nchains);
		return TF_REDRAW;
	}
	return tui_push(t, &(struct tui_view){.screen = SCR_ALERT, .chain_id = sn->chains[0].id});
}

/* The process a key acts on, its name in *name ("ig-hog[2771]"): the
 * selected row of the processes pane; on an alert (the alerts pane's
 * selected row, or the alert screen) its culprit, else its process; or the
 * process of the screen on top. 0 when none. */
static uint32_t target_pid(struct tui *t, char *name, size_t n, int *culprit)
{
	struct tui_view *v = tui_top(t);
	uint32_t pid = 0;
	const struct ig_chain *c = NULL;
	if (v->screen == SCR_MAIN && v->focus == 2)
		c = snap_chain(t->snap, (uint32_t)list_selected(&v->lists[2]));
	else if (v->screen == SCR_ALERT)
		c = snap_chain(t->snap, v->chain_id);
	*culprit = c && c->culprit_pid && c->culprit_pid != c->pid;
	if (*culprit) {
		tui_fmt_proc(name, n, c->culprit_comm, c->culprit_pid);
		return c->culprit_pid;
	}
	if (c)
		pid = c->pid;
	else if (v->screen == SCR_MAIN)
		pid = v->focus == 1 ? (uint32_t)procs_selected_pid(t) : 0;
	else if (v->screen == SCR_OP && !v->pid && v->focus == 0)
		pid = (uint32_t)list_selected(&v->lists[0]);
	else
		pid = v->pid;
	tui_fmt_proc(name, n, model_comm(session_model(t->s), pid), pid);
	return pid;
}

/* The model's process pid, NULL when it has none. */
static const struct ig_proc_stats *snap_proc(struct tui *t, uint32_t pid)
{
	for (int i = 0; i < t->snap->nprocs; i++)
		if (t->snap->procs[i].pid == pid)
			return &t->snap->procs[i];
	return NULL;
}

/* Is pid still the process the screen named (its start time when first
 * seen, pidcheck.h)? 0, or says why not in one line and returns -1. */
static int same_process(struct tui *t, uint32_t pid, const char *name, const char *what,
			uint64_t *start)
{
	const struct ig_proc_stats *p = snap_proc(t, pid);
	int r = p && p->exited ? -ESRCH : pidseen_check(&t->seen, pid, start);
	if (r == -ESRCH)
		tui_message(t, "%s: %s exited; nothing done", what, name);
	else if (r == -ESTALE)
		tui_message(t, "%s: pid %u is no longer %s; nothing done", what, pid, name);
	else if (r)
		tui_message(t, "%s: cannot read /proc/%u/stat: %s", what, pid, strerror(-r));
	return r ? -1 : 0;
}

/* Checks before a signal or a renice; 0 when it may go on. */
static int target_check(struct tui *t, uint32_t pid, const char *name, const char *what,
			uint64_t *start)
{
	if (!t->live) {
		tui_message(t, "%s: live only (a replayed pid is not on this host)", what);
		return -1;
	}
	if (!pid) {
		tui_message(t, "%s: select a process first (Tab to the processes or alerts pane)",
			    what);
		return -1;
	}
	if (pid == (uint32_t)getpid()) {
		tui_message(t, "%s: that is ingero-top itself (q quits)", what);
		return -1;
	}
	return same_process(t, pid, name, what, start);
}

int tui_ask_kill(struct tui *t)
{
	struct tui_confirm *c = &t->confirm;
	const char *name = "?";
	for (int i = 0; i < tui_nsignals; i++)
		if (tui_signals[i].sig == c->sig)
			name = tui_signals[i].name;
	snprintf(c->question, sizeof(c->question), "Send %s to %s%s?", name, c->name,
		 c->culprit ? " (the alert's culprit)" : "");
	t->modal = MODAL_CONFIRM;
	return TF_REDRAW;
}

static int ask_nice(struct tui *t, int delta)
{
	char name[64];
	uint64_t start = 0;
	int culprit = 0;
	uint32_t pid = target_pid(t, name, sizeof(name), &culprit);
	if (target_check(t, pid, name, delta < 0 ? "F7 renice" : "F8 renice", &start))
		return TF_REDRAW;
	errno = 0;
	int cur = getpriority(PRIO_PROCESS, pid);
	if (cur == -1 && errno) {
		tui_message(t, "cannot read the priority of %u: %s", pid, strerror(errno));
		return TF_REDRAW;
	}
	int nv = cur + delta;
	if (nv < -20 || nv > 19) {
		tui_message(t, "nice is already %d", cur);
		return TF_REDRAW;
	}
	t->confirm =
	    (struct tui_confirm){.what = CONFIRM_NICE, .pid = pid, .nice = nv, .start = start};
	snprintf(t->confirm.name, sizeof(t->confirm.name), "%s", name);
	snprintf(t->confirm.question, sizeof(t->confirm.question),
		 "Renice %s%s from %d to %d (%s priority)?", name,
		 culprit ? " (the alert's culprit)" : "", cur, nv, delta < 0 ? "higher" : "lower");
	t->modal = MODAL_CONFIRM;
	return TF_REDRAW;
}

/* setpriority() moves one thread: every thread of the process goes. */
static int renice_all(uint32_t pid, int nv)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	DIR *d = opendir(path);
	int r = 0, n = 0;
	if (!d)
		return setpriority(PRIO_PROCESS, pid, nv) ? -errno : 0;
	for (struct dirent *e; (e = readdir(d));) {
		int tid = atoi(e->d_name);
		if (tid <= 0)
			continue;
		if (setpriority(PRIO_PROCESS, (id_t)tid, nv) && !r)
			r = -errno;
		n++;
	}
	closedir(d);
	return n ? r : -ESRCH;
}

int tui_confirmed(struct tui *t, const struct tui_confirm *c)
{
	const char *p = c->name;
	uint64_t start = 0;
	int r = 0;
	/* the time to say y: the pid is checked again */
	if (c->what == CONFIRM_KILL || c->what == CONFIRM_NICE) {
		const char *what = c->what == CONFIRM_KILL ? "F9 kill" : "renice";
		if (same_process(t, c->pid, p, what, &start))
			return TF_REDRAW;
		if (start != c->start) {
			tui_message(t, "%s: pid %u is no longer %s; nothing done", what, c->pid, p);
			return TF_REDRAW;
		}
	}
	switch (c->what) {
	case CONFIRM_RESET:
		session_reset(t->s);
		if (t->paused)
			tui_pause(t, 1); /* the reset is what the frozen screens show */
		tui_message(t, "statistics and alerts reset");
		log_msg(LOG_INFO, "statistics and alerts reset by the user");
		return TF_REDRAW | TF_REFRESH;
	case CONFIRM_KILL:
		r = kill((pid_t)c->pid, c->sig) ? -errno : 0;
		if (r)
			tui_message(t, "cannot signal %s: %s", p, strerror(-r));
		else
			tui_message(t, "sent %s to %s", strsignal(c->sig), p);
		log_msg(LOG_INFO, "signal %d to %u: %s", c->sig, c->pid, r ? strerror(-r) : "sent");
		return TF_REDRAW;
	case CONFIRM_NICE:
		r = renice_all(c->pid, c->nice);
		if (r)
			tui_message(t, "cannot renice %s: %s", p, strerror(-r));
		else
			tui_message(t, "%s now runs at nice %d", p, c->nice);
		log_msg(LOG_INFO, "renice %u to %d: %s", c->pid, c->nice,
			r ? strerror(-r) : "done");
		return TF_REDRAW;
	}
	return TF_REDRAW;
}

/* M, P, T: htop's sort keys, on the focused table's memory, processor (p99
 * for op tables) and time columns. */
static int sort_shortcut(struct tui *t, int action)
{
	static const char *const mem[] = {"PGALLOC", "BYTES/S", "BYTES", NULL};
	static const char *const cpu[] = {"CPU%", "P99", NULL};
	static const char *const tim[] = {"WALL", "GPU%", "DURATION", "TAIL TIME", "CUDA%", NULL};
	const char *const *want = action == ACT_SORT_MEM ? mem : action == ACT_SORT_CPU ? cpu : tim;
	struct tui_view *v = tui_top(t);
	struct tui_list *l = tui_focused_list(t);
	if (!l || !v->ft_cols)
		return 0;
	for (int w = 0; want[w]; w++)
		for (int c = 0; c < v->ft_ncols; c++)
			if (!strcmp(v->ft_cols[c].title, want[w])) {
				l->sort_col = c;
				l->sort_inv = 0;
				tui_message(t, "sorted by %s: %s", want[w],
					    v->ft_cols[c].help ? v->ft_cols[c].help : "");
				return TF_REDRAW;
			}
	tui_message(t, "this table has no %s column",
		    action == ACT_SORT_MEM   ? "memory"
		    : action == ACT_SORT_CPU ? "CPU"
					     : "time");
	return TF_REDRAW;
}

/* Keys about the session and the view as a whole. */
static int general_action(struct tui *t, int action, int ch)
{
	struct tui_view *v = tui_top(t);
	const struct ig_status *st = session_status(t->s);
	int r;

	switch (action) {
	case ACT_QUIT:
		return TF_QUIT;
	case ACT_HELP:
	case ACT_LOG:
	case ACT_SETUP: {
		int scr = action == ACT_HELP ? SCR_HELP : action == ACT_LOG ? SCR_LOG : SCR_SETUP;
		if (v->screen == scr)
			return tui_pop(t);
		return tui_push(t, &(struct tui_view){.screen = scr});
	}
	case ACT_PAUSE:
		tui_pause(t, !t->paused);
		tui_message(
		    t, t->paused
			   ? (st->mode == IG_MODE_REPLAY
				  ? "paused: replay stopped, every screen frozen (p resumes)"
				  : "paused: every screen frozen, collection continues (p resumes)")
			   : "resumed");
		return TF_REDRAW | TF_RELAYOUT;
	case ACT_LIFETIME:
		t->life = !t->life;
		tui_refresh(t);
		tui_message(t, t->life ? "figures since the start (z: the window)"
				       : "figures over the window (z: since the start)");
		return TF_REDRAW | TF_RELAYOUT;
	case ACT_RESET:
		t->confirm = (struct tui_confirm){.what = CONFIRM_RESET};
		snprintf(t->confirm.question, sizeof(t->confirm.question),
			 "Reset the statistics and the alerts? (a recording keeps everything)");
		t->modal = MODAL_CONFIRM;
		return TF_REDRAW;
	case ACT_THEME:
		return tui_next_theme(t);
	case ACT_FLIGHT:
		if (st->mode == IG_MODE_REPLAY) { /* said on the notice row too, at 80 columns */
			session_flight_save(t->s);
			tui_message(
			    t, "w: no flight recorder in a replay (the file is the recording)");
			return TF_REDRAW;
		}
		r = session_flight_save(t->s);
		if (r < 0 && r != -ENOTSUP && r != -EBUSY)
			tui_message(t, "cannot save the flight recorder: %s", strerror(-r));
		return TF_REDRAW; /* the session's notice says where, or why not */
	case ACT_REDRAW:
		clearok(curscr, TRUE);
		return TF_REDRAW | TF_RELAYOUT;
	case ACT_NEXT_ALERT:
	case ACT_PREV_ALERT:
		return alert_step(t, action == ACT_NEXT_ALERT ? 1 : -1);
	}
	return 0;
}

static int replay_move(struct tui *t, int action);

int tui_next_theme(struct tui *t)
{
	if (t->mono_why) {
		tui_message(t, "colours are off (%s): monochrome only", t->mono_why);
		return TF_REDRAW;
	}
	int next = (t->theme_idx + 1) % TUI_THEME_NSTD;
	if (tui_set_theme(t, tui_theme_std[next]) == 0)
		tui_message(t, "theme: %s", t->theme.name);
	return TF_REDRAW;
}

/* Replay controls. */
static int replay_action(struct tui *t, int action, int ch)
{
	int r = replay_move(t, action);
	/* paused, the screens show the new position, still frozen */
	if (t->paused && action != ACT_SPEED_UP && action != ACT_SPEED_DOWN)
		tui_pause(t, 1);
	return r;
}

static int replay_move(struct tui *t, int action)
{
	int r;
	if (replay_only(t, action))
		return TF_REDRAW;
	switch (action) {
	case ACT_SPEED_UP:
	case ACT_SPEED_DOWN:
		return do_speed(t, action == ACT_SPEED_UP);
	case ACT_SEEK_FWD:
	case ACT_SEEK_BACK:
		r = session_seek(t->s, action == ACT_SEEK_FWD ? 10000000000ll : -10000000000ll);
		if (r < 0)
			tui_message(t, "cannot seek: %s", strerror(-r));
		else
			tui_message(t, "seek %s 10 s", action == ACT_SEEK_FWD ? "forward" : "back");
		return TF_REDRAW | TF_REFRESH;
	case ACT_SEEK_ALERT_NEXT:
	case ACT_SEEK_ALERT_PREV:
		return seek_alert(t, action == ACT_SEEK_ALERT_NEXT ? 1 : -1);
	}
	return 0;
}

/* Keys that move in or act on the focused list. */
static int list_action(struct tui *t, int action, int ch)
{
	struct tui_view *v = tui_top(t);
	struct tui_list *l = tui_focused_list(t);

	switch (action) {
	case ACT_FOCUS_NEXT:
	case ACT_FOCUS_PREV:
		return tui_focus_move(t, v, action == ACT_FOCUS_NEXT ? 1 : -1);
	case ACT_UP:
	case ACT_DOWN:
	case ACT_PGUP:
	case ACT_PGDN:
	case ACT_HOME:
	case ACT_END:
		return l ? list_move(l, action) : 0;
	case ACT_ENTER:
	case ACT_OFFCPU: {
		if (v->screen == SCR_MAIN) {
			const struct tui_pane *p = NULL;
			for (int i = 0; tui_panes[i]; i++)
				if (i == v->focus)
					p = tui_panes[i];
			return p && p->key ? p->key(t, v, action, ch) : 0;
		}
		const struct tui_screen *sc = tui_screen_ops(v->screen);
		return sc && sc->key ? sc->key(t, v, action, ch) : 0;
	}
	case ACT_BACK:
		if (t->depth > 1)
			return tui_pop(t);
		if (l && l->filter[0]) {
			l->filter[0] = 0;
			tui_message(t, "filter cleared");
			return TF_REDRAW;
		}
		return 0;
	}
	return 0;
}

static int explain(struct tui *t)
{
	struct tui_view *v = tui_top(t);
	struct tui_list *l = tui_focused_list(t);
	if (!l || !v->ft_cols || l->sort_col >= v->ft_ncols) {
		tui_message(t, "e explains the sorted column of a table (< > choose it)");
		return TF_REDRAW;
	}
	const struct tui_col *c = &v->ft_cols[l->sort_col];
	tui_message(t, "%s: %s", c->title[0] == '!' ? "! (severity)" : c->title,
		    c->help ? c->help : "no explanation");
	return TF_REDRAW;
}

/* Sorting, filtering and searching the focused table. */
static int table_action(struct tui *t, int action, int ch)
{
	struct tui_view *v = tui_top(t);
	struct tui_list *l = tui_focused_list(t);
	if (action == ACT_EXPLAIN)
		return explain(t);
	if (!l || !v->ft_cols)
		return 0;
	switch (action) {
	case ACT_SORT_PREV:
	case ACT_SORT_NEXT:
		l->sort_col =
		    (l->sort_col + (action == ACT_SORT_NEXT ? 1 : -1) + v->ft_ncols) % v->ft_ncols;
		return explain(t);
	case ACT_SORT_MENU:
		t->modal = MODAL_SORT;
		t->menu_sel = l->sort_col;
		return TF_REDRAW;
	case ACT_SORT_INVERT:
		l->sort_inv = !l->sort_inv;
		tui_message(t, "sort order inverted");
		return TF_REDRAW;
	case ACT_SORT_MEM:
	case ACT_SORT_CPU:
	case ACT_SORT_TIME:
		return sort_shortcut(t, action);
	case ACT_FILTER:
	case ACT_SEARCH:
		t->modal = action == ACT_FILTER ? MODAL_FILTER : MODAL_SEARCH;
		snprintf(t->prompt_buf, sizeof(t->prompt_buf), "%s",
			 action == ACT_FILTER ? l->filter : l->search);
		curs_set(1);
		return TF_REDRAW;
	}
	return 0;
}

/* Processes: tree, signals, renice. */
static int proc_action(struct tui *t, int action, int ch)
{
	uint32_t pid;
	switch (action) {
	case ACT_TREE:
		t->tree = !t->tree;
		tui_message(t, t->tree ? "processes as a tree (F5: a flat list)"
				       : "processes as a flat list (F5: a tree)");
		return TF_REDRAW;
	case ACT_KILL: {
		char name[64];
		uint64_t start = 0;
		int culprit = 0;
		pid = target_pid(t, name, sizeof(name), &culprit);
		if (target_check(t, pid, name, "F9 kill", &start))
			return TF_REDRAW;
		t->confirm = (struct tui_confirm){
		    .what = CONFIRM_KILL, .pid = pid, .start = start, .culprit = culprit};
		snprintf(t->confirm.name, sizeof(t->confirm.name), "%s", name);
		t->modal = MODAL_SIGNAL;
		t->menu_sel = 0;
		return TF_REDRAW;
	}
	case ACT_NICE_DOWN:
	case ACT_NICE_UP:
		return ask_nice(t, action == ACT_NICE_DOWN ? -1 : 1);
	}
	return 0;
}

int tui_action(struct tui *t, int action, int ch)
{
	int r;
	switch (action) {
	case ACT_FOCUS_NEXT:
	case ACT_FOCUS_PREV:
	case ACT_UP:
	case ACT_DOWN:
	case ACT_PGUP:
	case ACT_PGDN:
	case ACT_HOME:
	case ACT_END:
	case ACT_ENTER:
	case ACT_OFFCPU:
	case ACT_BACK:
		r = list_action(t, action, ch);
		break;
	case ACT_SORT_PREV:
	case ACT_SORT_NEXT:
	case ACT_SORT_MENU:
	case ACT_SORT_INVERT:
	case ACT_SORT_MEM:
	case ACT_SORT_CPU:
	case ACT_SORT_TIME:
	case ACT_FILTER:
	case ACT_SEARCH:
	case ACT_EXPLAIN:
		r = table_action(t, action, ch);
		break;
	case ACT_SPEED_UP:
	case ACT_SPEED_DOWN:
	case ACT_SEEK_FWD:
	case ACT_SEEK_BACK:
	case ACT_SEEK_ALERT_NEXT:
	case ACT_SEEK_ALERT_PREV:
		r = replay_action(t, action, ch);
		break;
	case ACT_TREE:
	case ACT_KILL:
	case ACT_NICE_DOWN:
	case ACT_NICE_UP:
		r = proc_action(t, action, ch);
		break;
	case ACT_STEP_BACK:
	case ACT_STEP_FWD:
	case ACT_JUMP:
	case ACT_REPLAY_START:
	case ACT_REPLAY_END:
		r = tui_walk_action(t, action);
		break;
	case ACT_MARK:
		r = tui_mark_action(t);
		break;
	default:
		r = general_action(t, action, ch);
	}
	return r;
}
