/* The full-screen viewer: terminal setup and restore (on every path,
 * signals included), the one-threaded poll loop over stdin and the
 * session, key dispatch through the key table, and the frame function that
 * draws everything and calls doupdate() once. */
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "tui.h"
#include "tui_int.h"

const struct tui_pane *const tui_panes[] = {&pane_ops, &pane_procs, &pane_alerts, &pane_gpu, NULL};

/* Events ingested per session_pump() call, and the wall time the loop may
 * spend pumping before it looks at the keyboard again. */
#define PUMP_BUDGET 2048
#define PUMP_SLICE_MS 8

/* --- terminal state that signal handlers may need --------------------------------- */

#ifndef CTRL
#define CTRL(c) ((c)&0x1f)
#endif

static volatile sig_atomic_t sig_quit, sig_winch, sig_tstp, sig_cont;
static struct termios saved_tio;
static int saved_tio_ok;
static int curses_on;
static char restore_seq[128]; /* leave the alternate screen, show the cursor, reset attributes */
static size_t restore_len;

static void on_quit(int sig)
{
	sig_quit = sig;
}
static void on_winch(int sig)
{
	sig_winch = 1;
}
static void on_tstp(int sig)
{
	sig_tstp = 1;
}
static void on_cont(int sig)
{
	sig_cont = 1;
}

/* A crash must not leave the terminal raw: restore it with async-signal-safe
 * calls, then die of the same signal. */
static void on_fatal(int sig)
{
	if (curses_on) {
		if (restore_len) {
			ssize_t w = write(STDOUT_FILENO, restore_seq, restore_len);
			(void)w;
		}
		if (saved_tio_ok)
			tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void add_restore(const char *capname)
{
	char *s = tigetstr((char *)capname);
	if (!s || s == (char *)-1)
		return;
	size_t n = strlen(s);
	if (restore_len + n < sizeof(restore_seq)) {
		memcpy(restore_seq + restore_len, s, n);
		restore_len += n;
	}
}

static void term_restore(void)
{
	if (!curses_on)
		return;
	curses_on = 0;
	curs_set(1);
	endwin();
}

/* The handlers main() had, given back when the viewer ends. */
static const int kept_sigs[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction old_sa[3];

static void install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_quit; /* no SA_RESTART: poll() returns EINTR */
	for (int i = 0; i < 3; i++)
		sigaction(kept_sigs[i], &sa, &old_sa[i]);
	sa.sa_handler = on_winch;
	sigaction(SIGWINCH, &sa, NULL);
	sa.sa_handler = on_tstp;
	sigaction(SIGTSTP, &sa, NULL);
	sa.sa_handler = on_cont;
	sigaction(SIGCONT, &sa, NULL);
	sa.sa_handler = on_fatal;
	sa.sa_flags = SA_RESETHAND;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGABRT, &sa, NULL);
}

static void reset_signals(void)
{
	for (int i = 0; i < 3; i++)
		sigaction(kept_sigs[i], &old_sa[i], NULL);
	signal(SIGWINCH, SIG_DFL);
	signal(SIGTSTP, SIG_DFL);
	signal(SIGCONT, SIG_DFL);
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	signal(SIGFPE, SIG_DFL);
	signal(SIGILL, SIG_DFL);
	signal(SIGABRT, SIG_DFL);
}

/* --- helpers used by the panes ----------------------------------------------------- */

uint64_t tui_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void tui_message(struct tui *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
	t->msg_until_ms = tui_now_ms() + 3000;
	log_msg(LOG_DEBUG, "ui: %s", t->msg);
}

struct tui_view *tui_top(struct tui *t)
{
	return &t->stack[t->depth - 1];
}

const struct tui_screen *tui_screen_ops(int id)
{
	switch (id) {
	case SCR_OP:
		return &screen_op;
	case SCR_PROC:
		return &screen_proc;
	case SCR_THREAD:
		return &screen_thread;
	case SCR_ALERT:
		return &screen_alert;
	case SCR_STACK:
		return &screen_stack;
	case SCR_HELP:
		return &screen_help;
	case SCR_LOG:
		return &screen_log;
	default:
		return NULL;
	}
}

unsigned tui_context(struct tui *t)
{
	const struct tui_screen *sc = tui_screen_ops(tui_top(t)->screen);
	return sc ? sc->where : KC_MAIN;
}

static void view_update(struct tui *t, struct tui_view *v)
{
	const struct tui_screen *sc = tui_screen_ops(v->screen);
	if (sc && sc->update)
		sc->update(t, v);
}

/* Default sort of each list of each screen: (column, inverted). */
static void view_init_lists(struct tui_view *v)
{
	static const int sorts[SCR_MAX][TUI_LISTS] = {
	    [SCR_MAIN] = {1, 3, 0, 0}, /* ops: API order; procs: calls/s; alerts: detector order */
	    [SCR_OP] = {2, 3, 0, 0},   /* breakdown: calls/s; slow calls: duration; stacks: tail */
	    [SCR_PROC] = {1, 1, 0, 0}, /* ops: API order; threads: calls/s; chains */
	    [SCR_THREAD] = {0, 0, 0, 0},
	};
	for (int i = 0; i < TUI_LISTS; i++)
		list_init(&v->lists[i], sorts[v->screen][i], 0);
}

int tui_push(struct tui *t, const struct tui_view *nv)
{
	if (t->depth >= TUI_STACK) {
		/* keep the main screen and drop the oldest drill-down */
		for (int i = 0; i < TUI_LISTS; i++)
			list_free(&t->stack[1].lists[i]);
		memmove(&t->stack[1], &t->stack[2], sizeof(t->stack[0]) * (TUI_STACK - 2));
		t->depth--;
		memset(&t->stack[t->depth], 0, sizeof(t->stack[0]));
	}
	struct tui_view *v = &t->stack[t->depth++];
	*v = *nv;
	memset(v->lists, 0, sizeof(v->lists));
	view_init_lists(v);
	v->focus = 0;
	view_update(t, v);
	return TF_REDRAW;
}

static int tui_pop(struct tui *t)
{
	if (t->depth <= 1)
		return 0;
	struct tui_view *v = &t->stack[t->depth - 1];
	for (int i = 0; i < TUI_LISTS; i++)
		list_free(&v->lists[i]);
	t->depth--;
	t->prompt = t->menu = 0;
	view_update(t, tui_top(t)); /* its data is one screen's worth old */
	return TF_REDRAW;
}

/* --- themes ------------------------------------------------------------------------ */

static int set_theme(struct tui *t, const char *name)
{
	char err[256];
	struct tui_theme th;
	int r = tui_theme_load(&th, name, err, sizeof(err));
	if (r) {
		log_msg(LOG_WARN, "%s", err);
		tui_message(t, "%s", err);
		return r;
	}
	t->theme = th;
	t->theme_idx = -1;
	for (int i = 0; i < TUI_THEME_NSTD; i++)
		if (strcmp(th.name, tui_theme_std[i]) == 0)
			t->theme_idx = i;
	draw_apply_theme(t);
	return 0;
}

/* --- main-screen focus ------------------------------------------------------------- */

/* List index of each main pane (ops 0, procs 1, alerts 2) and its area. */
static int main_focusable(struct tui *t, int *lists)
{
	int n = 0;
	for (int i = 0; tui_panes[i]; i++)
		if (t->lay.visible[tui_panes[i]->area] && tui_panes[i]->key) /* lists only */
			lists[n++] = i;
	return n;
}

static void main_fix_focus(struct tui *t, struct tui_view *v)
{
	int lists[4], n = main_focusable(t, lists);
	v->nfocus = n;
	for (int i = 0; i < n; i++)
		if (lists[i] == v->focus)
			return;
	v->focus = n ? lists[0] : 0;
}

static int focus_move(struct tui *t, struct tui_view *v, int dir)
{
	if (v->screen == SCR_MAIN) {
		int lists[4], n = main_focusable(t, lists), cur = 0;
		if (n <= 1)
			return 0;
		for (int i = 0; i < n; i++)
			if (lists[i] == v->focus)
				cur = i;
		v->focus = lists[(cur + dir + n) % n];
		return TF_REDRAW;
	}
	if (v->nfocus <= 1)
		return 0;
	v->focus = (v->focus + dir + v->nfocus) % v->nfocus;
	return TF_REDRAW;
}

/* --- keys ----------------------------------------------------------------------------- */

static struct tui_list *focused_list(struct tui *t)
{
	struct tui_view *v = tui_top(t);
	if (v->focus < 0 || v->focus >= TUI_LISTS)
		return NULL;
	return &v->lists[v->focus];
}

static int prompt_key(struct tui *t, int ch)
{
	struct tui_list *l = focused_list(t);
	size_t n = strlen(t->prompt_buf);
	if (ch == 27) { /* Esc: clear and close */
		t->prompt_buf[0] = 0;
		t->prompt = 0;
	} else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		t->prompt = 0;
	} else if (ch == KEY_BACKSPACE || ch == 127 || ch == '\b') {
		if (n)
			t->prompt_buf[n - 1] = 0;
	} else if (ch == CTRL('u')) {
		t->prompt_buf[0] = 0;
	} else if (ch >= 0x20 && ch < 0x7f && n + 1 < sizeof(t->prompt_buf)) {
		t->prompt_buf[n] = (char)ch;
		t->prompt_buf[n + 1] = 0;
	} else if (ch == KEY_RESIZE) {
		return TF_RELAYOUT;
	} else {
		return 0;
	}
	if (l)
		snprintf(l->filter, sizeof(l->filter), "%s", t->prompt_buf);
	if (!t->prompt)
		curs_set(0);
	return TF_REDRAW;
}

static int menu_key(struct tui *t, int ch)
{
	struct tui_view *v = tui_top(t);
	struct tui_list *l = focused_list(t);
	if (!l || !v->ft_cols) {
		t->menu = 0;
		return TF_REDRAW;
	}
	const struct tui_binding *b = tui_key_lookup(ch, KC_MAIN);
	int act = b ? b->action : ACT_NONE;
	if (act == ACT_UP || act == ACT_DOWN) {
		t->menu_sel += act == ACT_UP ? -1 : 1;
		t->menu_sel = (t->menu_sel + v->ft_ncols) % v->ft_ncols;
	} else if (act == ACT_HOME || act == ACT_PGUP) {
		t->menu_sel = 0;
	} else if (act == ACT_END || act == ACT_PGDN) {
		t->menu_sel = v->ft_ncols - 1;
	} else if (act == ACT_ENTER) {
		l->sort_col = t->menu_sel;
		t->menu = 0;
		tui_message(t, "sorted by %s", v->ft_cols[l->sort_col].title);
	} else if (act == ACT_SORT_INVERT) {
		l->sort_inv = !l->sort_inv;
	} else if (act == ACT_BACK || act == ACT_SORT_MENU) {
		t->menu = 0;
	} else if (act == ACT_QUIT) {
		return TF_QUIT;
	} else if (ch == KEY_RESIZE) {
		return TF_RELAYOUT;
	}
	return TF_REDRAW;
}

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
		sp = sp / 2 < 1.0 / 16 ? 1.0 / 16 : sp / 2;
	int r = session_set_speed(t->s, sp);
	if (r)
		tui_message(t, "cannot change the speed: %s", strerror(-r));
	else if (sp <= 0)
		tui_message(t, "speed: as fast as possible");
	else
		tui_message(t, "speed: x%g", sp);
	return TF_REDRAW | TF_REFRESH;
}

static int do_alert_step(struct tui *t, int dir)
{
	if (session_status(t->s)->mode == IG_MODE_REPLAY) {
		int r = session_jump_chain(t->s, dir);
		if (r == -ENOENT || r == -ENODATA)
			tui_message(t, "no %s alert", dir > 0 ? "next" : "previous");
		else if (r < 0)
			tui_message(t, "cannot jump: %s", strerror(-r));
		else
			tui_message(t, "jumped to the %s alert", dir > 0 ? "next" : "previous");
		return TF_REDRAW | TF_REFRESH;
	}
	/* live: select the next alert in the alerts pane */
	while (t->depth > 1)
		tui_pop(t);
	struct tui_view *v = tui_top(t);
	if (!t->lay.visible[AREA_ALERTS]) {
		tui_message(t, "the alerts pane is hidden at this size");
		return TF_REDRAW;
	}
	if (!t->snap->nchains) {
		tui_message(t, "no alerts");
		return TF_REDRAW;
	}
	v->focus = 2;
	if (!list_move(&v->lists[2], dir > 0 ? ACT_DOWN : ACT_UP))
		tui_message(t, "no %s alert", dir > 0 ? "next" : "previous");
	return TF_REDRAW;
}

static int handle_action(struct tui *t, int action, int ch)
{
	struct tui_view *v = tui_top(t);
	struct tui_list *l = focused_list(t);
	const struct ig_status *st = session_status(t->s);
	int r;

	switch (action) {
	case ACT_QUIT:
		return TF_QUIT;
	case ACT_HELP:
		if (v->screen == SCR_HELP)
			return tui_pop(t);
		return tui_push(t, &(struct tui_view){.screen = SCR_HELP});
	case ACT_LOG:
		if (v->screen == SCR_LOG)
			return tui_pop(t);
		return tui_push(t, &(struct tui_view){.screen = SCR_LOG});
	case ACT_PAUSE:
		t->paused = !t->paused;
		session_set_paused(t->s, t->paused);
		tui_message(t, t->paused
				   ? (st->mode == IG_MODE_REPLAY
					  ? "paused: replay stopped (p resumes)"
					  : "paused: view frozen, collection continues (p resumes)")
				   : "resumed");
		return TF_REDRAW | (t->paused ? 0 : TF_REFRESH);
	case ACT_RESET:
		session_reset(t->s);
		tui_message(t, "statistics and alerts reset");
		return TF_REDRAW | TF_REFRESH;
	case ACT_THEME: {
		if (t->mono_why) {
			tui_message(t, "colours are off (%s): monochrome only", t->mono_why);
			return TF_REDRAW;
		}
		int next = (t->theme_idx + 1) % TUI_THEME_NSTD;
		if (set_theme(t, tui_theme_std[next]) == 0)
			tui_message(t, "theme: %s", t->theme.name);
		return TF_REDRAW;
	}
	case ACT_FLIGHT:
		r = session_flight_save(t->s);
		if (r < 0)
			tui_message(t, "cannot save the flight recorder: %s", strerror(-r));
		else
			tui_message(t, "saving the flight recorder (the header says where)");
		return TF_REDRAW;
	case ACT_REDRAW:
		clearok(curscr, TRUE);
		return TF_REDRAW | TF_RELAYOUT;
	case ACT_FOCUS_NEXT:
	case ACT_FOCUS_PREV:
		return focus_move(t, v, action == ACT_FOCUS_NEXT ? 1 : -1);
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
	case ACT_SORT_PREV:
	case ACT_SORT_NEXT:
		if (!l || !v->ft_cols)
			return 0;
		l->sort_col =
		    (l->sort_col + (action == ACT_SORT_NEXT ? 1 : -1) + v->ft_ncols) % v->ft_ncols;
		tui_message(t, "sorted by %s",
			    v->ft_cols[l->sort_col].title[0] == '!'
				? "severity"
				: v->ft_cols[l->sort_col].title);
		return TF_REDRAW;
	case ACT_SORT_MENU:
		if (!l || !v->ft_cols)
			return 0;
		t->menu = 1;
		t->menu_sel = l->sort_col;
		return TF_REDRAW;
	case ACT_SORT_INVERT:
		if (!l || !v->ft_cols)
			return 0;
		l->sort_inv = !l->sort_inv;
		tui_message(t, "sort order inverted");
		return TF_REDRAW;
	case ACT_FILTER:
		if (!l || !v->ft_cols)
			return 0;
		t->prompt = 1;
		snprintf(t->prompt_buf, sizeof(t->prompt_buf), "%s", l->filter);
		curs_set(1);
		return TF_REDRAW;
	case ACT_SPEED_UP:
	case ACT_SPEED_DOWN:
		if (replay_only(t, action))
			return TF_REDRAW;
		return do_speed(t, action == ACT_SPEED_UP);
	case ACT_SEEK_FWD:
	case ACT_SEEK_BACK:
		if (replay_only(t, action))
			return TF_REDRAW;
		r = session_seek(t->s, action == ACT_SEEK_FWD ? 10000000000ll : -10000000000ll);
		if (r < 0)
			tui_message(t, "cannot seek: %s", strerror(-r));
		else
			tui_message(t, "seek %s 10 s", action == ACT_SEEK_FWD ? "forward" : "back");
		return TF_REDRAW | TF_REFRESH;
	case ACT_NEXT_ALERT:
	case ACT_PREV_ALERT:
		return do_alert_step(t, action == ACT_NEXT_ALERT ? 1 : -1);
	}
	return 0;
}

static int handle_key(struct tui *t, int ch)
{
	if (ch == KEY_RESIZE)
		return TF_RELAYOUT | TF_REDRAW;
	if (t->prompt)
		return prompt_key(t, ch);
	if (t->menu)
		return menu_key(t, ch);
	if (t->lay.too_small) {
		/* only quitting makes sense on a screen that shows nothing */
		const struct tui_binding *b = tui_key_lookup(ch, KC_ALL);
		return b && b->action == ACT_QUIT ? TF_QUIT : 0;
	}
	const struct tui_binding *b = tui_key_lookup(ch, tui_context(t));
	if (!b) {
		char k[32];
		if (ch != ERR && ch != KEY_MOUSE)
			tui_message(t, "%s: no such key here (h for help)",
				    tui_key_name(ch, k, sizeof(k)));
		return TF_REDRAW;
	}
	return handle_action(t, b->action, ch);
}

/* --- frame --------------------------------------------------------------------------- */

static void layout(struct tui *t)
{
	int want[AREA_MAX] = {0};
	for (int i = 0; tui_panes[i]; i++)
		if (tui_panes[i]->want)
			want[tui_panes[i]->area] = tui_panes[i]->want(t);
	tui_layout_main(COLS, LINES, want, &t->lay);
	t->cols = COLS;
	t->lines = LINES;
}

static void draw_too_small(struct tui *t)
{
	struct tui_rect all = {0, 0, LINES, COLS};
	char need[64];
	snprintf(need, sizeof(need), "(need %dx%d)", t->lay.need_w, t->lay.need_h);
	const char *msg[3] = {"terminal too small", need, "q quits"};
	int y0 = LINES / 2 - 1;
	if (y0 < 0)
		y0 = 0;
	for (int i = 0; i < 3; i++) {
		int len = (int)strlen(msg[i]);
		int x = (COLS - len) / 2;
		draw_text(t, &all, y0 + i, x < 0 ? 0 : x, -1, i ? TH_NORMAL : TH_ERROR, msg[i]);
	}
}

static void draw_menu(struct tui *t, struct tui_view *v)
{
	if (!v->ft_cols)
		return;
	int n = v->ft_ncols, w = 24;
	int h = n + 2;
	/* over the focused pane on the main screen, else at the top of the body */
	const struct tui_rect *body = &t->lay.r[AREA_BODY];
	if (v->screen == SCR_MAIN && v->focus >= 0 && v->focus < 3 &&
	    t->lay.visible[tui_panes[v->focus]->area]) {
		const struct tui_rect *pr = &t->lay.r[tui_panes[v->focus]->area];
		if (pr->h >= 4)
			body = pr;
	}
	if (h > body->h)
		h = body->h;
	struct tui_rect box = {body->y, body->x + 1, h, w};
	if (box.w > body->w)
		box.w = body->w;
	struct tui_rect inner = {box.y + 1, box.x + 1, box.h - 2, box.w - 2};
	for (int y = 0; y < box.h; y++)
		draw_fill(t, &box, y, TH_PROMPT);
	draw_box(t, &box, TH_PROMPT);
	draw_text(t, &box, 0, 2, box.w - 4, TH_PROMPT, " Sort by ");
	int top = t->menu_sel >= inner.h ? t->menu_sel - inner.h + 1 : 0;
	struct tui_list *l = focused_list(t);
	for (int i = 0; i < inner.h && top + i < n; i++) {
		int c = top + i;
		char line[64];
		snprintf(line, sizeof(line), "%c %s", l && l->sort_col == c ? '*' : ' ',
			 v->ft_cols[c].title[0] == '!' ? "! severity" : v->ft_cols[c].title);
		if (c == t->menu_sel)
			draw_fill(t, &inner, i, TH_CURSOR);
		draw_text(t, &inner, i, 0, -1, c == t->menu_sel ? TH_CURSOR : TH_PROMPT, line);
	}
}

static void frame(struct tui *t)
{
	struct tui_view *v = tui_top(t);
	erase();
	if (t->lay.too_small) {
		draw_too_small(t);
	} else {
		pane_header.draw(t, v, &t->lay.r[AREA_HEADER], 0);
		if (v->screen == SCR_MAIN) {
			main_fix_focus(t, v);
			for (int i = 0; tui_panes[i]; i++) {
				const struct tui_pane *p = tui_panes[i];
				if (t->lay.visible[p->area])
					p->draw(t, v, &t->lay.r[p->area], v->focus == i);
			}
		} else {
			const struct tui_screen *sc = tui_screen_ops(v->screen);
			const struct tui_rect *b = &t->lay.r[AREA_BODY];
			if (sc && b->w >= sc->min_w && b->h >= 3)
				sc->draw(t, v, b);
		}
		if (t->menu)
			draw_menu(t, v);
		pane_hint.draw(t, v, &t->lay.r[AREA_HINT], 0);
	}
	if (!t->prompt)
		leaveok(stdscr, TRUE);
	else
		leaveok(stdscr, FALSE);
	wnoutrefresh(stdscr);
	doupdate();
	t->frames++;
}

static void refresh_data(struct tui *t)
{
	snap_take(t);
	if (t->depth > 1)
		view_update(t, tui_top(t));
}

/* --- setup and the loop ------------------------------------------------------------------- */

static void resize(struct tui *t)
{
	struct winsize ws;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
		resizeterm(ws.ws_row, ws.ws_col);
	clearok(curscr, TRUE);
}

static void suspend(struct tui *t)
{
	endwin();
	signal(SIGTSTP, SIG_DFL);
	raise(SIGTSTP);
	/* continued */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_tstp;
	sigaction(SIGTSTP, &sa, NULL);
	resize(t);
	refresh();
}

static const char *choose_mono(const struct cli *cli)
{
	const char *nc = getenv("NO_COLOR");
	if (cli->no_color)
		return "--no-color";
	if (nc && *nc)
		return "NO_COLOR";
	if (!has_colors())
		return "terminal has no colours";
	return NULL;
}

static int want_ascii(const struct cli *cli)
{
	if (cli->ascii)
		return 1;
	const char *cs = nl_langinfo(CODESET);
	return !(cs && (strcasecmp(cs, "UTF-8") == 0 || strcasecmp(cs, "utf8") == 0));
}

static void tui_free(struct tui *t)
{
	for (int d = 0; d < TUI_STACK; d++)
		for (int i = 0; i < TUI_LISTS; i++)
			list_free(&t->stack[d].lists[i]);
	free(t->snap);
	free(t->opd);
	free(t->procd);
	free(t->thd);
	free(t->ald);
	free(t->skd);
	free(t);
}

int tui_run(struct session *s, const struct cli *cli)
{
	struct tui *t = calloc(1, sizeof(*t));
	if (!t) {
		fprintf(stderr, "ingero-top: out of memory\n");
		return 1;
	}
	t->snap = calloc(1, sizeof(*t->snap));
	t->opd = calloc(1, sizeof(*t->opd));
	t->procd = calloc(1, sizeof(*t->procd));
	t->thd = calloc(1, sizeof(*t->thd));
	t->ald = calloc(1, sizeof(*t->ald));
	t->skd = calloc(1, sizeof(*t->skd));
	if (!t->snap || !t->opd || !t->procd || !t->thd || !t->ald || !t->skd) {
		tui_free(t);
		fprintf(stderr, "ingero-top: out of memory\n");
		return 1;
	}
	t->s = s;
	t->cli = cli;

	t->live = session_status(s)->mode == IG_MODE_LIVE;
	t->interval_ms = (int)(cli->interval_s * 1000 + 0.5);
	if (t->interval_ms < 50)
		t->interval_ms = 50;

	setlocale(LC_CTYPE, "");
	t->ascii = want_ascii(cli);

	if (tcgetattr(STDIN_FILENO, &saved_tio) == 0)
		saved_tio_ok = 1;
	SCREEN *scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		tui_free(t);
		fprintf(stderr, "ingero-top: cannot use the terminal (TERM=%s); use --batch\n",
			getenv("TERM") ? getenv("TERM") : "");
		return 1;
	}
	curses_on = 1;
	atexit(term_restore); /* an exit() anywhere still restores the terminal */
	restore_len = 0;
	add_restore("rmcup");
	add_restore("cnorm");
	add_restore("sgr0");
	install_signals();
	set_escdelay(25);
	cbreak();
	noecho();
	nonl();
	intrflush(stdscr, FALSE);
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);

	t->mono_why = choose_mono(cli);
	t->colors = !t->mono_why;
	if (t->colors) {
		start_color();
		use_default_colors();
	}
	if (t->mono_why) {
		set_theme(t, "monochrome");
		if (cli->theme && strcmp(cli->theme, "monochrome") != 0)
			log_msg(LOG_INFO, "theme %s not used: colours are off (%s)", cli->theme,
				t->mono_why);
	} else if (set_theme(t, cli->theme ? cli->theme : "default")) {
		set_theme(t, "default");
	}

	t->depth = 1;
	t->stack[0].screen = SCR_MAIN;
	view_init_lists(&t->stack[0]);
	snap_take(t);
	t->next_refresh_ms = tui_now_ms() + (uint64_t)t->interval_ms;

	int dirty = 1, relayout = 1, backlog = 0, quit = 0, done_noted = 0, pump_err = 0;
	while (!quit) {
		if (sig_quit)
			break;
		if (sig_tstp) {
			sig_tstp = 0;
			suspend(t);
			relayout = dirty = 1;
		}
		if (sig_winch || sig_cont) {
			sig_winch = sig_cont = 0;
			resize(t);
			relayout = dirty = 1;
		}
		if (relayout) {
			layout(t);
			relayout = 0;
		}
		if (dirty) {
			frame(t);
			dirty = 0;
		}

		/* sleep until a key, events, the next refresh or the end of a notice */
		uint64_t now = tui_now_ms();
		int timeout = backlog ? 0 : session_timeout_ms(s);
		int64_t until = (int64_t)t->next_refresh_ms - (int64_t)now;
		if (until < 0)
			until = 0;
		if (timeout < 0 || timeout > until)
			timeout = (int)until;
		if (t->msg[0] && t->msg_until_ms > now &&
		    (int64_t)(t->msg_until_ms - now) < timeout)
			timeout = (int)(t->msg_until_ms - now) + 1;
		struct pollfd pfd[2] = {{.fd = STDIN_FILENO, .events = POLLIN}};
		int nfd = 1, sfd = session_fd(s);
		if (sfd >= 0) {
			pfd[1] = (struct pollfd){.fd = sfd, .events = POLLIN};
			nfd = 2;
		}
		if (poll(pfd, (nfds_t)nfd, timeout) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents & (POLLHUP | POLLERR))
			break; /* the terminal went away */

		/* keys first, every iteration */
		for (int k = 0; k < 64; k++) {
			int ch = getch();
			if (ch == ERR)
				break;
			int f = handle_key(t, ch);
			if (f & TF_QUIT) {
				quit = 1;
				break;
			}
			/* no resizeterm() here: ncurses sends KEY_RESIZE after its own
			 * resize, and resizing again would queue another one */
			if (f & TF_RELAYOUT)
				relayout = 1;
			if (f & TF_REFRESH) {
				refresh_data(t);
				relayout = 1;
			}
			if (f & TF_REDRAW)
				dirty = 1;
		}
		if (quit)
			break;

		/* events, within a time slice so that keys never wait long */
		uint64_t t0 = tui_now_ms();
		backlog = 0;
		for (;;) {
			int n = session_pump(s, PUMP_BUDGET);
			if (n < 0) {
				if (!pump_err)
					log_msg(LOG_ERROR, "reading events: %s", strerror(-n));
				pump_err = 1;
				break;
			}
			if (n < PUMP_BUDGET)
				break;
			if (tui_now_ms() - t0 >= PUMP_SLICE_MS) {
				backlog = 1;
				break;
			}
		}
		session_tick(s);

		now = tui_now_ms();
		if (now >= t->next_refresh_ms) {
			if (!t->paused)
				refresh_data(t);
			t->next_refresh_ms = now + (uint64_t)t->interval_ms;
			relayout = dirty = 1;
		}
		if (t->msg[0] && now >= t->msg_until_ms) {
			t->msg[0] = 0;
			dirty = 1;
		}
		const struct ig_status *st = session_status(s);
		if (strcmp(st->message, t->last_status_msg) != 0) {
			/* a new notice from the session (flight save, recording): the
			 * header may have no room left, the hint line always has */
			snprintf(t->last_status_msg, sizeof(t->last_status_msg), "%s", st->message);
			if (st->message[0])
				tui_message(t, "%.150s", st->message);
			dirty = 1;
		}
		/* the end: a launched command exited, or the replay reached its last
		 * event (the replay stays open so that it can seek back) */
		int at_end = st->mode == IG_MODE_REPLAY
				 ? st->replay_end_ns && st->replay_pos_ns >= st->replay_end_ns
				 : session_done(s);
		if (at_end && !done_noted) {
			refresh_data(t);
			if (st->mode == IG_MODE_REPLAY && t->msg[0] && now < t->msg_until_ms) {
				char prev[sizeof(t->msg)];
				snprintf(prev, sizeof(prev), "%s", t->msg);
				tui_message(t, "%.100s; end of the recording", prev);
			} else if (st->mode == IG_MODE_REPLAY) {
				tui_message(t, "end of the recording: [ seeks back, q quits");
			}
			if (st->mode == IG_MODE_LIVE)
				tui_message(t, "the command exited (status %d): q quits",
					    session_cmd_status(s));
			relayout = dirty = 1;
		}
		done_noted = at_end;
	}

	term_restore();
	reset_signals();
	tui_free(t);
	return 0;
}
