/* The full-screen viewer's entry point and its loop: one thread, one
 * session_wait() over stdin and the session (events within a time slice,
 * so keys never wait long), then the keys, then the periodic refresh; a
 * frame only when something changed. The
 * terminal lives in term.c, the screen stack and the frame in screens.c,
 * key handling in input.c. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "tui.h"
#include "tui_int.h"
#include "core/clock.h"

/* The longest the loop pumps events before it looks at the keyboard again
 * (session_set_slice). */
#define PUMP_SLICE_MS 8

uint64_t tui_now_ms(void)
{
	return ig_mono_ms();
}

void tui_message(struct tui *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
	t->msg_until_ms = tui_now_ms() + 5000;
	log_msg(LOG_INFO, "%s", t->msg);
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
	free(t->mark);
	tui_frozen_free(&t->pause);
	tui_frozen_free(&t->last);
	free(t);
}

static struct tui *tui_new(struct session *s, const struct cli *cli)
{
	struct tui *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->snap = calloc(1, sizeof(*t->snap));
	t->opd = calloc(1, sizeof(*t->opd));
	t->procd = calloc(1, sizeof(*t->procd));
	t->thd = calloc(1, sizeof(*t->thd));
	t->ald = calloc(1, sizeof(*t->ald));
	t->skd = calloc(1, sizeof(*t->skd));
	t->mark = calloc(1, sizeof(*t->mark));
	if (!t->snap || !t->opd || !t->procd || !t->thd || !t->ald || !t->skd || !t->mark) {
		tui_free(t);
		return NULL;
	}
	t->s = s;
	t->cli = cli;
	t->live = session_status(s)->mode == IG_MODE_LIVE;
	t->interval_ms = (int)(cli->interval_s * 1000 + 0.5);
	if (t->interval_ms < 50)
		t->interval_ms = 50;
	return t;
}

void tui_first_theme(struct tui *t)
{
	const struct cli *cli = t->cli;
	if (t->mono_why) {
		tui_set_theme(t, "monochrome");
		if (cli->theme && strcmp(cli->theme, "monochrome") != 0)
			log_msg(LOG_INFO, "theme %s not used: colours are off (%s)", cli->theme,
				t->mono_why);
	} else if (tui_set_theme(t, cli->theme ? cli->theme : "default")) {
		tui_set_theme(t, "default");
	}
}

/* What the loop carries from one turn to the next. */
struct loop {
	int dirty, relayout, quit, done_noted, pump_err;
};

/* One turn of the session: sleeps until a key, events, the next refresh
 * or the end of a notice, then pumps events (a time slice at most) and
 * ticks. Returns -1 when the terminal went away. */
static int wait_and_pump(struct tui *t, struct loop *L)
{
	uint64_t now = tui_now_ms(), deadline = t->next_refresh_ms;
	if (t->msg[0] && t->msg_until_ms > now && t->msg_until_ms + 1 < deadline)
		deadline = t->msg_until_ms + 1;
	struct pollfd in = {.fd = STDIN_FILENO, .events = POLLIN};
	int n = session_wait(t->s, &in, 1, deadline);
	if (in.revents & (POLLHUP | POLLERR))
		return -1;
	if (n < 0) {
		if (!L->pump_err)
			log_msg(LOG_ERROR, "reading events: %s", strerror(-n));
		L->pump_err = 1;
	}
	return 0;
}

/* Every waiting key, first, each turn. */
static void read_keys(struct tui *t, struct loop *L)
{
	for (int k = 0; k < 64; k++) {
		int ch = getch();
		if (ch == ERR)
			break;
		int f = tui_handle_key(t, ch);
		if (f & TF_QUIT) {
			L->quit = 1;
			return;
		}
		/* no resizeterm() here: ncurses sends KEY_RESIZE after its own
		 * resize, and resizing again would queue another one */
		if (f & TF_RELAYOUT)
			L->relayout = 1;
		if (f & TF_REFRESH) {
			tui_refresh(t);
			L->relayout = 1;
		}
		if (f & TF_REDRAW)
			L->dirty = 1;
	}
}

/* The end: a launched command exited, or the replay reached its last
 * event (the replay stays open so that it can seek back). */
static void note_end(struct tui *t, struct loop *L, uint64_t now)
{
	const struct ig_status *st = session_status(t->s);
	int at_end = st->mode == IG_MODE_REPLAY
			 ? st->replay_end_ns && st->replay_pos_ns >= st->replay_end_ns
			 : session_done(t->s);
	if (at_end && !L->done_noted) {
		tui_refresh(t);
		if (st->mode == IG_MODE_REPLAY && t->msg[0] && now < t->msg_until_ms) {
			char prev[sizeof(t->msg)];
			snprintf(prev, sizeof(prev), "%s", t->msg);
			tui_message(t, "%.100s; end of the recording", prev);
		} else if (st->mode == IG_MODE_REPLAY) {
			tui_message(t, "end of the recording: [ seeks back, q quits");
		}
		if (st->mode == IG_MODE_LIVE) {
			tui_message(t, "the command exited (status %d): q quits",
				    session_cmd_status(t->s));
			/* what it printed on its way out went over the screen */
			clearok(curscr, TRUE);
		}
		L->relayout = L->dirty = 1;
	}
	L->done_noted = at_end;
}

/* The periodic refresh, the end of a notice, the session's notices. */
static void after_events(struct tui *t, struct loop *L)
{
	uint64_t now = tui_now_ms();
	if (now >= t->next_refresh_ms) {
		if (!t->paused)
			tui_refresh(t);
		else
			tui_watch(t);
		session_publish(t->pub, t->s);
		t->next_refresh_ms = now + (uint64_t)t->interval_ms;
		L->relayout = L->dirty = 1;
	}
	if (t->msg[0] && now >= t->msg_until_ms) {
		t->msg[0] = 0;
		L->dirty = 1;
	}
	const struct ig_status *st = session_status(t->s);
	if (st->notes_n != t->status_notes) {
		/* a new notice from the session (flight save, recording): first
		 * on the header's last row for a while (the whole path), and in
		 * row 1 as a notice on a small header; the same words again (a
		 * second save to the same file) are a new notice too */
		t->status_notes = st->notes_n;
		t->status_msg_ms = now;
		if (st->message[0] && t->lay.header_rows < 3)
			tui_message(t, "%.150s", st->message);
		L->dirty = 1;
	}
	note_end(t, L, now);
}

/* Signals the handlers noted: Ctrl-Z, resizing, continuing. */
static void take_signals(struct tui *t, struct loop *L)
{
	if (term_sig_tstp) {
		term_sig_tstp = 0;
		term_suspend();
		L->relayout = L->dirty = 1;
	}
	if (term_sig_winch || term_sig_cont) {
		term_sig_winch = term_sig_cont = 0;
		term_resize();
		L->relayout = L->dirty = 1;
	}
}

static void run_loop(struct tui *t)
{
	struct loop L = {.dirty = 1, .relayout = 1};
	while (!L.quit && !term_sig_quit) {
		take_signals(t, &L);
		if (L.relayout) {
			tui_layout(t);
			L.relayout = 0;
		}
		if (L.dirty) {
			tui_frame(t);
			L.dirty = 0;
		}
		if (wait_and_pump(t, &L) < 0)
			break; /* the terminal went away */
		read_keys(t, &L);
		if (L.quit)
			break;
		after_events(t, &L);
	}
}

int tui_check_options(const struct cli *cli, char *err, size_t errlen)
{
	struct tui_theme th;
	if (cli->theme && tui_theme_load(&th, cli->theme, err, errlen))
		return -1;
	return 0;
}

int tui_run(struct session *s, const struct cli *cli, const struct session_publish *pub)
{
	struct tui *t = tui_new(s, cli);
	if (!t) {
		fprintf(stderr, "ingero-top: out of memory\n");
		return 1;
	}
	t->pub = pub;
	if (term_open(t)) {
		tui_free(t);
		return 1;
	}
	tui_first_theme(t);
	t->depth = 1;
	t->stack[0].screen = SCR_MAIN;
	tui_view_init_lists(&t->stack[0]);
	tui_refresh(t);
	t->next_refresh_ms = tui_now_ms() + (uint64_t)t->interval_ms;
	session_set_slice(s, PUMP_SLICE_MS);
	run_loop(t);
	session_set_slice(s, 0);
	term_close();
	tui_free(t);
	return 0;
}
