/* The key table: every action bound once, no key bound twice in the same
 * context, the keys the issues promise are there (htop's F2 F3 F5 F7 F8 F9
 * M P T among them), names are readable, and
 * docs/keys.md is generated from the table (`--write` regenerates it). */
#include "check.h"

#include <stdlib.h>
#include <string.h>

#include "../../tui/keys.c"

static char *md_text(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	tui_keys_markdown(f);
	fclose(f);
	return buf;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = calloc(1, 1 << 17);
	size_t n = fread(buf, 1, (1 << 17) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static void expect(int key, unsigned where, int action)
{
	const struct tui_binding *b = tui_key_lookup(key, where);
	char name[32];
	CHECKF(b && b->action == action, "key %s in context %u: want action %d, got %d",
	       tui_key_name(key, name, sizeof(name)), where, action, b ? b->action : -1);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--write") == 0) {
		FILE *f = fopen("docs/keys.md", "w");
		if (!f || tui_keys_markdown(f) || fclose(f)) {
			perror("docs/keys.md");
			return 1;
		}
		printf("wrote docs/keys.md\n");
		return 0;
	}

	/* each action has exactly one binding, with help text and a key */
	for (int a = 1; a < ACT_MAX; a++) {
		int n = 0;
		for (int i = 0; i < tui_nbindings; i++)
			if (tui_bindings[i].action == a) {
				n++;
				CHECK(tui_bindings[i].keys[0] != 0);
				CHECK(tui_bindings[i].help && strlen(tui_bindings[i].help) > 8);
				CHECK(tui_bindings[i].where != 0);
				CHECK(!tui_bindings[i].hint || strlen(tui_bindings[i].hint) <= 8);
			}
		CHECKF(n == 1, "action %d has %d bindings", a, n);
	}
	CHECK(tui_bindings[0].section != NULL);

	/* no key means two things in one context */
	const unsigned ctxs[] = {KC_MAIN, KC_DRILL, KC_TEXT, KC_FLEET};
	for (unsigned c = 0; c < 4; c++)
		for (int i = 0; i < tui_nbindings; i++)
			for (int k = 0; k < KEYS_PER_ACTION && tui_bindings[i].keys[k]; k++) {
				int key = tui_bindings[i].keys[k];
				if (!(tui_bindings[i].where & ctxs[c]))
					continue;
				for (int j = i + 1; j < tui_nbindings; j++) {
					if (!(tui_bindings[j].where & ctxs[c]))
						continue;
					/* a replay's key may shadow another in a replay
					 * (t steps there, changes the theme elsewhere) */
					if (!tui_bindings[i].replay_only !=
					    !tui_bindings[j].replay_only)
						continue;
					for (int l = 0;
					     l < KEYS_PER_ACTION && tui_bindings[j].keys[l]; l++)
						CHECKF(tui_bindings[j].keys[l] != key,
						       "key %d bound twice", key);
				}
			}

	/* the keys the issue promises */
	expect('q', KC_MAIN, ACT_QUIT);
	/* the fleet screen (--ssh): its own context, the viewer's keys for the same things */
	expect('q', KC_FLEET, ACT_QUIT);
	expect(KEY_F(10), KC_FLEET, ACT_QUIT);
	expect(KEY_F(1), KC_FLEET, ACT_HELP);
	expect('\n', KC_FLEET, ACT_ENTER);
	expect('/', KC_FLEET, ACT_FILTER);
	expect('s', KC_FLEET, ACT_FLEET_SORT);
	expect(KEY_NPAGE, KC_FLEET, ACT_PGDN);
	CHECK(tui_key_lookup('p', KC_FLEET) == NULL); /* nothing to pause there */
	CHECK(tui_key_lookup('s', KC_MAIN) == NULL);
	expect(KEY_F(10), KC_DRILL, ACT_QUIT);
	expect('h', KC_MAIN, ACT_HELP);
	expect('?', KC_MAIN, ACT_HELP);
	expect(KEY_F(1), KC_TEXT, ACT_HELP);
	expect('p', KC_MAIN, ACT_PAUSE);
	expect(' ', KC_DRILL, ACT_PAUSE);
	expect('r', KC_MAIN, ACT_RESET);
	expect('t', KC_MAIN, ACT_THEME);
	expect('w', KC_MAIN, ACT_FLIGHT);
	expect('l', KC_MAIN, ACT_LOG);
	expect('+', KC_MAIN, ACT_SPEED_UP);
	expect('-', KC_MAIN, ACT_SPEED_DOWN);
	expect(']', KC_MAIN, ACT_SEEK_FWD);
	expect('[', KC_MAIN, ACT_SEEK_BACK);
	expect('n', KC_MAIN, ACT_NEXT_ALERT);
	expect('N', KC_MAIN, ACT_PREV_ALERT);
	expect('<', KC_MAIN, ACT_SORT_PREV);
	expect('>', KC_MAIN, ACT_SORT_NEXT);
	expect(KEY_F(6), KC_MAIN, ACT_SORT_MENU);
	expect('/', KC_MAIN, ACT_FILTER);
	expect('\t', KC_MAIN, ACT_FOCUS_NEXT);
	expect(KEY_UP, KC_MAIN, ACT_UP);
	expect('k', KC_MAIN, ACT_UP);
	expect(KEY_DOWN, KC_TEXT, ACT_DOWN);
	expect('j', KC_DRILL, ACT_DOWN);
	expect(KEY_PPAGE, KC_MAIN, ACT_PGUP);
	expect(KEY_NPAGE, KC_MAIN, ACT_PGDN);
	expect(KEY_HOME, KC_MAIN, ACT_HOME);
	expect(KEY_END, KC_MAIN, ACT_END);
	expect('\n', KC_MAIN, ACT_ENTER);
	expect(KEY_ENTER, KC_DRILL, ACT_ENTER);
	expect(27, KC_DRILL, ACT_BACK);
	expect(KEY_BACKSPACE, KC_TEXT, ACT_BACK);
	expect(127, KC_DRILL, ACT_BACK);
	/* htop's habits and the keys of issue 14 */
	expect(KEY_F(2), KC_MAIN, ACT_SETUP);
	expect(KEY_F(3), KC_MAIN, ACT_SEARCH);
	expect(KEY_F(4), KC_DRILL, ACT_FILTER);
	expect(KEY_F(5), KC_MAIN, ACT_TREE);
	expect(KEY_F(7), KC_MAIN, ACT_NICE_DOWN);
	expect(KEY_F(8), KC_DRILL, ACT_NICE_UP);
	expect(KEY_F(9), KC_MAIN, ACT_KILL);
	expect('M', KC_MAIN, ACT_SORT_MEM);
	expect('P', KC_MAIN, ACT_SORT_CPU);
	expect('T', KC_DRILL, ACT_SORT_TIME);
	expect('z', KC_MAIN, ACT_LIFETIME);
	expect('z', KC_DRILL, ACT_LIFETIME);
	expect('n', KC_DRILL, ACT_NEXT_ALERT);
	expect('n', KC_TEXT, ACT_NEXT_ALERT);
	expect('e', KC_MAIN, ACT_EXPLAIN);
	expect('}', KC_MAIN, ACT_SEEK_ALERT_NEXT);
	expect('{', KC_MAIN, ACT_SEEK_ALERT_PREV);
	/* walking a replay, as in below and atop: its keys win there, and only
	 * there (live, t is still the theme and Home the first row) */
	expect('t', KC_MAIN | KC_REPLAY, ACT_STEP_BACK);
	expect('T', KC_DRILL | KC_REPLAY, ACT_STEP_FWD);
	expect('j', KC_MAIN | KC_REPLAY, ACT_JUMP);
	expect(KEY_HOME, KC_MAIN | KC_REPLAY, ACT_REPLAY_START);
	expect(KEY_END, KC_DRILL | KC_REPLAY, ACT_REPLAY_END);
	expect(KEY_HOME, KC_TEXT | KC_REPLAY, ACT_HOME); /* help and log scroll */
	expect('j', KC_TEXT | KC_REPLAY, ACT_DOWN);
	expect('t', KC_DRILL, ACT_THEME);
	expect('c', KC_MAIN | KC_REPLAY, ACT_THEME);
	expect(KEY_END, KC_MAIN, ACT_END);
	expect('[', KC_MAIN | KC_REPLAY, ACT_SEEK_BACK);
	expect('o', KC_DRILL, ACT_OFFCPU);
	/* comparing two times (issue 27): m marks, live and in a replay */
	expect('m', KC_MAIN, ACT_MARK);
	expect('m', KC_MAIN | KC_REPLAY, ACT_MARK);
	expect('m', KC_DRILL | KC_REPLAY, ACT_MARK);
	CHECK(tui_key_lookup('x', KC_ALL) == NULL);
	CHECK(tui_key_lookup(0, KC_ALL) == NULL);
	CHECK(tui_key_lookup('\n', KC_TEXT) == NULL); /* Enter does nothing on help */

	/* names */
	char b[64];
	CHECK(strcmp(tui_key_name(KEY_F(10), b, sizeof(b)), "F10") == 0);
	CHECK(strcmp(tui_key_name(' ', b, sizeof(b)), "Space") == 0);
	CHECK(strcmp(tui_key_name(12, b, sizeof(b)), "Ctrl-L") == 0);
	CHECK(strcmp(tui_key_name('q', b, sizeof(b)), "q") == 0);
	CHECK(strcmp(tui_key_name(KEY_NPAGE, b, sizeof(b)), "PgDn") == 0);
	CHECK(strcmp(tui_binding_keys(tui_action_binding(ACT_QUIT), " ", b, sizeof(b)), "q F10") ==
	      0);
	CHECK(strcmp(tui_binding_keys(tui_action_binding(ACT_ENTER), " ", b, sizeof(b)), "Enter") ==
	      0);

	/* docs/keys.md is the table */
	char *want = md_text();
	char *have = slurp("docs/keys.md");
	CHECKF(have && strcmp(want, have) == 0,
	       "docs/keys.md is stale: run build/tests/unit/test_tui_keys --write");
	for (int i = 0; i < tui_nbindings; i++)
		CHECK(strstr(want, tui_bindings[i].help) != NULL);
	free(want);
	free(have);
	return check_done("test_tui_keys");
}
