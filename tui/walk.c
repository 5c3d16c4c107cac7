/* Walking a replay, as in below and atop: a step of one window back or
 * forward (t, T), a jump to a typed time (j and its prompt), the start and
 * the end (Home, End). Every move leaves the replay paused where it went:
 * the screens show that moment until p resumes. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/timearg.h"
#include "tui_int.h"

#define SEC 1000000000ull

/* Moves the replay to event time `to` and pauses there, showing the model
 * at that moment (not the copy of the last activity kept at the end). */
static int walk_to(struct tui *t, uint64_t to, const char *what)
{
	int r = session_seek_to(t->s, to);
	if (r < 0) {
		tui_message(t, "cannot move: %s", strerror(-r));
		return TF_REDRAW;
	}
	t->ended = 0;
	tui_pause(t, 1);
	const struct ig_status *st = session_status(t->s);
	char a[32];
	uint64_t pos =
	    st->replay_pos_ns > st->replay_start_ns ? st->replay_pos_ns - st->replay_start_ns : 0;
	tui_message(t, "%s: at %s, paused (p plays on)", what, fmt_age(a, sizeof(a), pos));
	return TF_REDRAW | TF_RELAYOUT | TF_REFRESH;
}

/* Enter in the jump prompt: parse, jump, or say what is wrong in the
 * prompt and leave it open. */
static int jump_enter(struct tui *t)
{
	const struct ig_status *st = session_status(t->s);
	uint64_t to;
	char err[sizeof(t->jump_err)];
	if (!t->prompt_buf[0]) {
		snprintf(t->jump_err, sizeof(t->jump_err),
			 "type a time: 14:02, +30s, -5m, ISO 8601 or Unix ns");
		return TF_REDRAW;
	}
	if (timearg_parse_local(t->prompt_buf, st->replay_start_ns, st->replay_end_ns, &to, err,
				sizeof(err))) {
		snprintf(t->jump_err, sizeof(t->jump_err), "%s", err);
		return TF_REDRAW;
	}
	char what[96];
	snprintf(what, sizeof(what), "jump to %.60s", t->prompt_buf);
	tui_modal_close(t);
	if (st->replay_end_ns && to > st->replay_end_ns)
		snprintf(what, sizeof(what), "%.60s is after the end", t->prompt_buf);
	else if (to < st->replay_start_ns)
		snprintf(what, sizeof(what), "%.60s is before the start", t->prompt_buf);
	return walk_to(t, to, what);
}

int tui_jump_key(struct tui *t, int ch)
{
	size_t n = strlen(t->prompt_buf);
	t->jump_err[0] = 0;
	if (ch == 27) {
		tui_modal_close(t);
		tui_message(t, "jump cancelled");
	} else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		return jump_enter(t);
	} else if (ch == KEY_BACKSPACE || ch == 127 || ch == '\b') {
		if (n)
			t->prompt_buf[n - 1] = 0;
	} else if (ch == 0x15) { /* Ctrl-U */
		t->prompt_buf[0] = 0;
	} else if (ch >= 0x20 && ch < 0x7f && n + 1 < sizeof(t->prompt_buf)) {
		t->prompt_buf[n] = (char)ch;
		t->prompt_buf[n + 1] = 0;
	} else if (ch == KEY_RESIZE) {
		return TF_RELAYOUT;
	} else {
		return 0;
	}
	return TF_REDRAW;
}

int tui_walk_action(struct tui *t, int action)
{
	const struct ig_status *st = session_status(t->s);
	if (st->mode != IG_MODE_REPLAY) {
		char k[32];
		const struct tui_binding *b = tui_action_binding(action);
		tui_message(t, "%s: replay only",
			    b ? tui_key_name(b->keys[0], k, sizeof(k)) : "key");
		return TF_REDRAW;
	}
	uint64_t win = (uint64_t)model_cfg(session_model(t->s))->window_s * SEC;
	uint64_t pos = st->replay_pos_ns;
	char what[64];
	switch (action) {
	case ACT_STEP_BACK:
	case ACT_STEP_FWD:
		snprintf(what, sizeof(what), "one window (%us) %s",
			 model_cfg(session_model(t->s))->window_s,
			 action == ACT_STEP_BACK ? "back" : "forward");
		if (action == ACT_STEP_BACK)
			return walk_to(t, pos > win ? pos - win : 0, what);
		return walk_to(t, pos + win, what);
	case ACT_REPLAY_START:
		return walk_to(t, st->replay_start_ns, "the start");
	case ACT_REPLAY_END:
		if (!st->replay_end_ns) {
			tui_message(t, "the end of this replay is not known");
			return TF_REDRAW;
		}
		return walk_to(t, st->replay_end_ns, "the end");
	case ACT_JUMP:
		t->modal = MODAL_JUMP;
		t->prompt_buf[0] = 0;
		t->jump_err[0] = 0;
		curs_set(1);
		return TF_REDRAW;
	}
	return 0;
}
