/* The fleet screen (--ssh; docs/fleet.md, "The fleet screen"): the loop,
 * one poll() over the keyboard and every ssh connection of the fleet, a
 * frame when a host sent a new one (at most every 250 ms) and on keys;
 * the keys (the viewer's key table, context KC_FLEET), the help, and a
 * host's own viewer (Enter: ssh -t, in the foreground with the terminal,
 * while the other hosts keep being read). The table is fleet_table.c. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fleet_int.h"
#include "fleet_tui.h"

#define FRAME_MIN_MS 250  /* new frames redraw the screen at most this often */
#define TICK_MS 1000	  /* and it redraws at least this often (ages, retries) */
#define VIEWER_POLL_MS 50 /* a host's viewer running: how often its end is looked for */
#define MAX_FDS (2 * FLEET_MAX_HOSTS + 1)

static struct fleet_ui *the_ui; /* for the key handler (one fleet screen a process) */

/* --- the help ---------------------------------------------------------------- */

static struct tui_lines help_lines;

/* What a key does here, where the viewer's words do not fit the fleet. */
static const char *fleet_key_help(const struct tui_binding *b)
{
	switch (b->action) {
	case ACT_HELP:
		return "Show this help (any list key scrolls it; Esc closes it)";
	case ACT_QUIT:
		return "Quit the fleet: every ssh connection ends, and with it ingero-top on every "
		       "host";
	case ACT_ENTER:
		return "Open the selected host's full viewer (on a process row too): ssh -t to "
		       "it, with its own keys; q there comes back here";
	case ACT_BACK:
		return "Close the help; on the table, clear the filter";
	case ACT_THEME:
		return "Next theme: default, light, high-contrast, monochrome (colour themes are "
		       "disabled by NO_COLOR and --no-color)";
	case ACT_FILTER:
		return "Filter the hosts by text (a host's name, a state, a chain): Enter keeps "
		       "the filter, Esc clears it";
	default:
		return b->help;
	}
}

static void help_build(struct fleet_ui *u, int width)
{
	struct tui_lines *L = &help_lines;
	lines_reset(L);
	lines_add(L, TH_TITLE, 0, " ingero-top %s  help (fleet screen)", IG_VERSION);
	lines_wrap(L, TH_NORMAL, 1, width,
		   "One row per host (and per traced process under a host with several), worst "
		   "first: the host of the straggler rank, then hosts with an active chain by its "
		   "impact, then hosts that are not live, then the healthy ones. Each host runs "
		   "ingero-top --stream over your own ssh; nothing else is installed or left "
		   "running there.");
	lines_add(L, TH_SECTION, 0, "Keys");
	for (int i = 0; i < tui_nbindings; i++) {
		const struct tui_binding *b = &tui_bindings[i];
		char keys[64], text[400];
		if (!(b->where & KC_FLEET))
			continue;
		tui_binding_keys(b, " ", keys, sizeof(keys));
		snprintf(text, sizeof(text), "%-22s %s", keys, fleet_key_help(b));
		lines_wrap_hang(L, TH_NORMAL, 1, 24, width, text);
	}
	lines_wrap_hang(L, TH_NORMAL, 1, 24, width,
			"mouse                  A click selects a row, a double click opens the "
			"host, a click on a column title sorts by it, on a key of the hint bar "
			"presses it");
	lines_add(L, TH_SECTION, 0, "Columns");
	for (int i = 0; i < fleet_ncols; i++) {
		char text[400];
		if (!strcmp(fleet_cols[i].title, "NAME")) /* the filter's, never shown */
			continue;
		snprintf(text, sizeof(text), "%-13s %s", fleet_cols[i].title, fleet_cols[i].help);
		lines_wrap_hang(L, TH_NORMAL, 1, 15, width, text);
	}
	lines_add(L, TH_SECTION, 0, "The straggler");
	lines_wrap(L, TH_NORMAL, 1, width,
		   "NCCL collectives of one communicator seen on several hosts are joined by "
		   "their sequence number; the rank that arrives last most often makes the others "
		   "wait. The header names it (rank, communicator, host, how often last, by how "
		   "much after the others' median arrival, and the clock uncertainty between the hosts); "
		   "its host is first in the table, marked with a character and in red, and its "
		   "chain says why.");
	lines_add(L, TH_SECTION, 0, "Display");
	char why[96] = "";
	if (u->t->mono_why)
		snprintf(why, sizeof(why), " (colours off: %s)", u->t->mono_why);
	lines_add(L, TH_NORMAL, 1, "theme %s%s, %s characters, %d host%s", u->t->theme.name, why,
		  u->t->ascii ? "ASCII" : "UTF-8", fleet_nhosts(u->f),
		  fleet_nhosts(u->f) == 1 ? "" : "s");
	lines_add(L, TH_DIM, 1, "%s", "Esc, Backspace or h closes this help.");
}

/* --- a host's own viewer ---------------------------------------------------------- */

/* The child: the signals as a shell leaves them, no fd of the fleet, then
 * ssh -t. */
static void viewer_exec(char **argv)
{
	static const int sigs[] = {SIGINT,   SIGQUIT, SIGTSTP, SIGTERM, SIGHUP,
				   SIGWINCH, SIGCONT, SIGPIPE, SIGCHLD};
	sigset_t none;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	long max = sysconf(_SC_OPEN_MAX);
	for (int fd = 3; fd < (max > 0 && max < 65536 ? max : 1024); fd++)
		close(fd);
	execvp(argv[0], argv);
	fprintf(stderr, "ingero-top: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Reads the other hosts until the child ends: a host's viewer must not
 * stall the fleet's pipes. Returns its wait status, -1 when it was not
 * ours to reap. */
static int viewer_wait(struct fleet_ui *u, pid_t pid)
{
	struct pollfd pfd[MAX_FDS];
	int told = 0;
	for (;;) {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return st;
		if (r < 0 && errno != EINTR)
			return -1;
		if (term_sig_quit && !told) /* SIGTERM or SIGHUP for us: for it too */
			told = kill(pid, SIGTERM) == 0;
		int n = fleet_pollfds(u->f, pfd, MAX_FDS);
		int to = fleet_timeout_ms(u->f);
		if (to < 0 || to > VIEWER_POLL_MS)
			to = VIEWER_POLL_MS;
		poll(pfd, (nfds_t)(n > 0 ? n : 0), to);
		fleet_step(u->f, tui_now_ms());
	}
}

/* After a viewer that failed: its words stay on the screen until Enter
 * (the fleet is read meanwhile). */
static void wait_enter(struct fleet_ui *u)
{
	struct pollfd pfd[MAX_FDS];
	for (;;) {
		pfd[0] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
		int n = 1 + fleet_pollfds(u->f, pfd + 1, MAX_FDS - 1);
		int to = fleet_timeout_ms(u->f);
		if (poll(pfd, (nfds_t)n, to < 0 || to > TICK_MS ? TICK_MS : to) < 0 &&
		    errno != EINTR)
			return;
		fleet_step(u->f, tui_now_ms());
		if (term_sig_quit || (pfd[0].revents & (POLLHUP | POLLERR)))
			return;
		if (pfd[0].revents & POLLIN) {
			char buf[256];
			ssize_t k = read(STDIN_FILENO, buf, sizeof(buf));
			if (k <= 0 || memchr(buf, '\n', (size_t)k))
				return;
		}
	}
}

/* Enter: the host's full viewer over ssh -t, in the foreground with the
 * terminal; the fleet screen comes back when it ends (q in it). */
static int open_host(struct fleet_ui *u, int h)
{
	struct tui *t = u->t;
	char *argv[64];
	const struct fleet_host *H = fleet_host(u->f, h);
	if (H && (H->state == FLEET_RETRY || H->state == FLEET_REFUSED ||
		  H->state == FLEET_FAILED)) {
		/* its ssh would fail the same way, after a time-out for some:
		 * the reason is already known */
		tui_message(t, "%.60s is %s, no viewer: %.150s", H->name,
			    fleet_state_name(H->state), H->why);
		return TF_REDRAW;
	}
	if (!H || fleet_viewer_argv(u->f, h, argv, 64) < 1) {
		tui_message(t, "cannot make the ssh command for that host");
		return TF_REDRAW;
	}
	term_leave();
	printf("ingero-top: %s's viewer over %s -t (q in it comes back to the fleet)\n", H->name,
	       argv[0]);
	fflush(stdout);
	/* Ctrl-C and Ctrl-Z belong to the viewer while it runs */
	struct sigaction ign = {.sa_handler = SIG_IGN}, old[3];
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old[0]);
	sigaction(SIGQUIT, &ign, &old[1]);
	sigaction(SIGTSTP, &ign, &old[2]);
	pid_t pid = fork();
	if (pid == 0)
		viewer_exec(argv);
	int st = pid > 0 ? viewer_wait(u, pid) : -1;
	int err = pid < 0 ? errno : 0;
	sigaction(SIGINT, &old[0], NULL);
	sigaction(SIGQUIT, &old[1], NULL);
	sigaction(SIGTSTP, &old[2], NULL);
	term_sig_tstp = 0;
	if (pid < 0 || (st != -1 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))) {
		if (pid < 0)
			printf("ingero-top: cannot start ssh: %s\n", strerror(err));
		else if (WIFEXITED(st))
			printf("ingero-top: the viewer on %s ended with status %d\n", H->name,
			       WEXITSTATUS(st));
		else
			printf("ingero-top: the viewer on %s ended by signal %d\n", H->name,
			       WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		printf("Enter: back to the fleet ");
		fflush(stdout);
		wait_enter(u);
	}
	term_resume();
	tui_message(t, "back from %.100s's viewer", H->name);
	return TF_RELAYOUT | TF_REDRAW;
}

/* --- keys ----------------------------------------------------------------------- */

static int list_key(struct fleet_ui *u, int action)
{
	struct tui *t = u->t;
	struct tui_list *l = &t->stack[0].lists[0];
	switch (action) {
	case ACT_UP:
	case ACT_DOWN:
	case ACT_PGUP:
	case ACT_PGDN:
	case ACT_HOME:
	case ACT_END:
		return list_move(u->help ? &u->help_list : l, action);
	case ACT_ENTER: {
		uint64_t k = list_selected(l);
		return u->help || !k ? 0 : open_host(u, FLEET_KEY_HOST(k));
	}
	case ACT_FILTER:
		if (u->help)
			return 0;
		t->modal = MODAL_FILTER;
		snprintf(t->prompt_buf, sizeof(t->prompt_buf), "%s", l->filter);
		curs_set(1);
		return TF_REDRAW;
	case ACT_FLEET_SORT:
		u->sort = (u->sort + 1) % FSORT_N;
		l->sort_col = 0; /* HOST: the sort's order */
		l->sort_inv = 0;
		l->moved = 0; /* the selection: the first host again */
		tui_message(t, "hosts sorted %s (s: %s next)", fleet_sort_name(u->sort),
			    fleet_sort_name((u->sort + 1) % FSORT_N));
		return TF_REDRAW;
	case ACT_BACK:
		if (u->help) {
			u->help = 0;
			return TF_REDRAW;
		}
		if (l->filter[0]) {
			l->filter[0] = 0;
			tui_message(t, "filter cleared");
		}
		return TF_REDRAW;
	}
	return 0;
}

static int fleet_key(struct tui *t, int ch)
{
	struct fleet_ui *u = the_ui;
	if (ch == KEY_RESIZE)
		return TF_RELAYOUT | TF_REDRAW;
	if (t->modal != MODAL_NONE)
		return tui_handle_key(t, ch); /* the filter prompt */
	if (ch == KEY_MOUSE)
		return t->lay.too_small ? 0 : tui_mouse(t);
	const struct tui_binding *b = tui_key_lookup(ch, KC_FLEET);
	if (t->lay.too_small)
		return b && b->action == ACT_QUIT ? TF_QUIT : 0;
	if (!b) {
		char k[32];
		tui_message(t, "%s: no such key here (h for help)", tui_key_name(ch, k, sizeof(k)));
		return TF_REDRAW;
	}
	switch (b->action) {
	case ACT_QUIT:
		return TF_QUIT;
	case ACT_HELP:
		u->help = !u->help;
		u->help_list.top = 0;
		return TF_REDRAW;
	case ACT_THEME:
		return tui_next_theme(t);
	case ACT_REDRAW:
		clearok(curscr, TRUE);
		return TF_REDRAW | TF_RELAYOUT;
	}
	return list_key(u, b->action);
}

/* --- the frame ---------------------------------------------------------------------- */

static void fleet_frame(struct fleet_ui *u)
{
	struct tui *t = u->t;
	struct tui_rect all = {0, 0, LINES, COLS};
	erase();
	tui_hits_reset(t);
	t->lay.cols = COLS, t->lay.lines = LINES;
	t->lay.need_w = TUI_FLOOR_W, t->lay.need_h = TUI_FLOOR_H;
	t->lay.too_small = COLS < TUI_FLOOR_W || LINES < TUI_FLOOR_H;
	if (t->lay.too_small) {
		tui_draw_too_small(t);
	} else {
		fleet_ui_rows(u);
		int hdr = fleet_ui_header(u, &all, 0);
		if (hdr > 3)
			hdr = 3;
		struct tui_rect hr = {0, 0, hdr, COLS};
		fleet_ui_header(u, &hr, 1);
		int y = hdr;
		if (t->msg[0]) { /* a notice: under the header for a while (and in the log) */
			struct tui_rect mr = {y++, 0, 1, COLS};
			draw_text(t, &mr, 0, 0, -1, TH_MESSAGE, t->msg);
		}
		struct tui_rect body = {y, 0, LINES - 1 - y, COLS};
		if (u->help) {
			help_build(u, body.w - 1);
			lines_draw(t, &help_lines, &u->help_list, &body);
		} else {
			fleet_ui_table(u, &body);
		}
		t->lay.r[AREA_HINT] = (struct tui_rect){LINES - 1, 0, 1, COLS};
		pane_hint.draw(t, &t->stack[0], &t->lay.r[AREA_HINT], 0);
	}
	leaveok(stdscr, t->modal == MODAL_FILTER ? FALSE : TRUE);
	wnoutrefresh(stdscr);
	doupdate();
	t->frames++;
}

/* Changes the screen would show: frames read, states, connections. */
static uint64_t fleet_signature(struct fleet *f)
{
	uint64_t sig = (uint64_t)fleet_nhosts(f);
	for (int i = 0; i < fleet_nhosts(f); i++) {
		const struct fleet_host *h = fleet_host(f, i);
		sig = sig * 1000003u + h->frames * 131u + (uint64_t)h->state * 7u + h->connects;
	}
	return sig;
}

/* Until the next thing to do: a frame due, the fleet's own timer, the end
 * of a notice. */
static int loop_timeout(struct fleet_ui *u, uint64_t now, uint64_t last_draw, int pending)
{
	uint64_t due = last_draw + (pending ? FRAME_MIN_MS : TICK_MS);
	int to = due > now ? (int)(due - now) : 0;
	int ft = fleet_timeout_ms(u->f);
	if (ft >= 0 && ft < to)
		to = ft;
	if (u->t->msg[0] && u->t->msg_until_ms > now && (int)(u->t->msg_until_ms - now) < to)
		to = (int)(u->t->msg_until_ms - now) + 1;
	return to;
}

static void run_loop(struct fleet_ui *u)
{
	struct tui *t = u->t;
	struct pollfd pfd[MAX_FDS];
	uint64_t last_draw = 0, drawn_sig = 0;
	int dirty = 1, quit = 0;
	while (!quit && !term_sig_quit) {
		if (term_sig_tstp) {
			term_sig_tstp = 0;
			term_suspend();
			dirty = 1;
		}
		if (term_sig_winch || term_sig_cont) {
			term_sig_winch = term_sig_cont = 0;
			term_resize();
			dirty = 1;
		}
		uint64_t now = tui_now_ms(), sig = fleet_signature(u->f);
		if ((sig != drawn_sig && now - last_draw >= FRAME_MIN_MS) ||
		    now - last_draw >= TICK_MS)
			dirty = 1;
		if (t->msg[0] && now >= t->msg_until_ms)
			t->msg[0] = 0, dirty = 1;
		if (dirty) {
			fleet_frame(u);
			last_draw = now, drawn_sig = sig, dirty = 0;
		}
		pfd[0] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
		int n = 1 + fleet_pollfds(u->f, pfd + 1, MAX_FDS - 1);
		int to = loop_timeout(u, now, last_draw, sig != drawn_sig);
		if (poll(pfd, (nfds_t)n, to) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents & (POLLHUP | POLLERR))
			break; /* the terminal went away */
		for (int k = 0; k < 64 && !quit; k++) {
			int ch = getch();
			if (ch == ERR)
				break;
			int fl = fleet_key(t, ch);
			quit = (fl & TF_QUIT) != 0;
			if (fl & (TF_REDRAW | TF_RELAYOUT))
				dirty = 1;
		}
		fleet_step(u->f, tui_now_ms());
	}
}

static struct cli display; /* what the screen reads of the options: theme, colours, ASCII */

void tui_fleet_display(const char *theme, bool no_color, bool ascii)
{
	display.theme = theme;
	display.no_color = no_color;
	display.ascii = ascii;
}

int tui_fleet_run(struct fleet *f, const struct fleet_opts *o)
{
	struct fleet_ui *u = calloc(1, sizeof(*u));
	struct tui *t = calloc(1, sizeof(*t));
	struct tui_mark *mark = calloc(1, sizeof(*mark));
	struct fleet_row *rows = calloc(FLEET_MAX_HOSTS * (1 + FLEET_MAX_PROCS), sizeof(*rows));
	int rc = 1;
	if (!u || !t || !mark || !rows) {
		fprintf(stderr, "ingero-top: out of memory\n");
		goto out;
	}
	t->cli = &display;
	t->mark = mark;
	t->ctx = KC_FLEET;
	t->on_key = fleet_key;
	t->interval_ms = 1000;
	t->depth = 1;
	t->stack[0].screen = SCR_MAIN;
	list_init(&t->stack[0].lists[0], 0, 0); /* HOST: the sort's order */
	*u = (struct fleet_ui){.t = t, .f = f, .o = o, .rows = rows};
	the_ui = u;
	if (term_open(t))
		goto out;
	tui_first_theme(t);
	run_loop(u);
	term_close();
	rc = 0;
out:
	if (t)
		list_free(&t->stack[0].lists[0]);
	if (u)
		list_free(&u->help_list);
	lines_free(&help_lines);
	the_ui = NULL;
	free(rows);
	free(mark);
	free(t);
	free(u);
	return rc;
}
