/* The last line: key hints for the screen on top, generated from the key
 * table; or the filter prompt; or a notice for a few seconds. */
#include <stdio.h>
#include <string.h>

#include "tui_int.h"

static void hint_draw(struct tui *t, struct tui_view *v, const struct tui_rect *r, int focused)
{
	char buf[192];
	int x = 0;

	draw_fill(t, r, 0, TH_HINT_LABEL);
	if (t->prompt) {
		x += draw_text(t, r, 0, x, -1, TH_PROMPT, "Filter: ");
		x += draw_text(t, r, 0, x, -1, TH_PROMPT, t->prompt_buf);
		int cx = x;
		x += draw_text(t, r, 0, x, -1, TH_HINT_KEY, " ");
		draw_text(t, r, 0, x + 1, -1, TH_HINT_LABEL, "Enter keep  Esc clear");
		move(r->y, r->x + (cx < r->w ? cx : r->w - 1));
		return;
	}
	if (t->menu) {
		draw_text(t, r, 0, 0, -1, TH_HINT_LABEL,
			  " Sort by: Up/Down choose, Enter sort, I invert, Esc cancel");
		return;
	}
	if (t->msg[0] && tui_now_ms() < t->msg_until_ms) {
		draw_fill(t, r, 0, TH_MESSAGE);
		draw_text(t, r, 0, 1, -1, TH_MESSAGE, t->msg);
		return;
	}
	unsigned ctx = tui_context(t);
	int replay = session_status(t->s)->mode == IG_MODE_REPLAY;
	for (int i = 0; i < tui_nbindings && x < r->w; i++) {
		const struct tui_binding *b = &tui_bindings[i];
		if (!b->hint || !(b->where & ctx) || (b->replay_only && !replay))
			continue;
		/* Back is the way out of every screen but the main one */
		if (b->action == ACT_BACK && ctx == KC_MAIN)
			continue;
		if (b->action == ACT_ENTER && ctx == KC_TEXT)
			continue;
		/* htop users look for F1, F6, F10: show the F-key of a letter binding */
		int key = b->keys[0];
		int letter = (key >= 'a' && key <= 'z') || (key >= 'A' && key <= 'Z');
		for (int k = 0; letter && k < KEYS_PER_ACTION && b->keys[k]; k++)
			if (b->keys[k] >= KEY_F(1) && b->keys[k] <= KEY_F(12)) {
				key = b->keys[k];
				break;
			}
		tui_key_name(key, buf, sizeof(buf));
		int kw = tui_text_cols(buf);
		int lw = (int)strlen(b->hint);
		if (x + kw + lw > r->w)
			break;
		x += draw_text(t, r, 0, x, -1, TH_HINT_KEY, buf);
		x += draw_text(t, r, 0, x, -1, TH_HINT_LABEL, b->hint);
		x += 1;
	}
}

const struct tui_pane pane_hint = {
    .name = "hints",
    .area = AREA_HINT,
    .min_w = TUI_FLOOR_W,
    .min_h = 1,
    .want = NULL,
    .draw = hint_draw,
    .key = NULL,
};
