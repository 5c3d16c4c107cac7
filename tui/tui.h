/* The full-screen viewer's entry point, for src/app/main.c. No curses types
 * here: src/ never includes curses. */
#ifndef TUI_TUI_H
#define TUI_TUI_H

struct session;
struct session_publish;
struct cli;

/* Runs the viewer on a session until the user quits (q, F10, SIGINT,
 * SIGTERM, SIGHUP or the terminal going away). The terminal is restored on
 * every path, fatal signals included. Returns the process exit code: 0, or
 * 1 when the terminal cannot be used (after printing why). */
int tui_run(struct session *s, const struct cli *cli, const struct session_publish *pub);

/* Checks the viewer's options before anything else runs (before the
 * privileges and the terminal): a --theme that cannot be loaded. Returns
 * 0, or -1 with a one-line reason in err. */
int tui_check_options(const struct cli *cli, char *err, size_t errlen);

#endif
