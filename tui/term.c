/* The terminal: curses setup and restore on every path (q, signals, a crash,
 * exit()), the signal flags the loop reads, resizing, Ctrl-Z, and the choice
 * of colours and characters. Nothing here draws a screen. */
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "core/log.h"
#include "tui_int.h"

volatile sig_atomic_t term_sig_quit, term_sig_winch, term_sig_tstp, term_sig_cont;

static struct termios saved_tio;
static int saved_tio_ok;
static int curses_on;
static char restore_seq[128]; /* leave the alternate screen, show the cursor, reset attributes */
static size_t restore_len;

static void on_quit(int sig)
{
	term_sig_quit = sig;
}
static void on_winch(int sig)
{
	term_sig_winch = 1;
}
static void on_tstp(int sig)
{
	term_sig_tstp = 1;
}
static void on_cont(int sig)
{
	term_sig_cont = 1;
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
	mousemask(0, NULL);
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

/* clicks on rows, titles and the hint bar; no motion events, so the
 * terminal's own selection still works with Shift */
#define MOUSE_MASK (BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED)

void term_leave(void)
{
	mousemask(0, NULL);
	curs_set(1);
	def_prog_mode();
	endwin();
}

void term_resume(void)
{
	reset_prog_mode();
	keypad(stdscr, TRUE);
	mousemask(MOUSE_MASK, NULL);
	curs_set(0);
	term_resize();
}

void term_resize(void)
{
	struct winsize ws;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
		resizeterm(ws.ws_row, ws.ws_col);
	clearok(curscr, TRUE);
}

void term_suspend(void)
{
	endwin();
	signal(SIGTSTP, SIG_DFL);
	raise(SIGTSTP);
	/* continued */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_tstp;
	sigaction(SIGTSTP, &sa, NULL);
	term_resize();
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

int term_open(struct tui *t)
{
	setlocale(LC_CTYPE, "");
	t->ascii = want_ascii(t->cli);
	if (tcgetattr(STDIN_FILENO, &saved_tio) == 0)
		saved_tio_ok = 1;
	SCREEN *scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		fprintf(stderr, "ingero-top: cannot use the terminal (TERM=%s); use --batch\n",
			getenv("TERM") ? getenv("TERM") : "");
		return -1;
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
	mousemask(MOUSE_MASK, NULL);
	mouseinterval(200);

	t->mono_why = choose_mono(t->cli);
	t->colors = !t->mono_why;
	if (t->colors) {
		start_color();
		use_default_colors();
	}
	return 0;
}

void term_close(void)
{
	term_restore();
	reset_signals();
}
