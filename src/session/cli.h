/* Command-line options of ingero-top, parsed into plain data. */
#ifndef IG_CLI_H
#define IG_CLI_H

#include <stdbool.h>
#include <stdint.h>

#define CLI_MAX_PIDS 64
#define CLI_MAX_LIBS 16
#define CLI_MAX_REPLAY 16

struct cli {
	bool check;          /* "ingero-top check" */
	bool batch;          /* -b */
	bool json;           /* --json */
	bool summary;        /* --summary: one final lifetime frame */
	bool events;         /* --events: print every event, one line each */
	int frames;          /* -n, 0 = unlimited */
	double interval_s;   /* -d */
	double window_s;     /* --window */
	int pids[CLI_MAX_PIDS];
	int npids;
	const char *libs[CLI_MAX_LIBS];
	int nlibs;
	const char *replay[CLI_MAX_REPLAY];
	int nreplay;
	double speed;        /* replay speed, 0 = as fast as possible */
	const char *record;  /* --record FILE */
	uint64_t max_db;     /* --max-db bytes, 0 = unbounded */
	double flight_s;     /* --flight SECS */
	const char *flight_dir;
	const char *theme;
	bool no_color;
	bool ascii;
	bool raw_tp;         /* --raw-tp: force the raw tracepoint fallback */
	bool no_system_libs;
	bool no_stacks;
	bool stacks;         /* --stacks: top stacks per op in batch frames */
	int verbose;
	const char *demo;    /* --demo [SCENARIO]: NULL when absent */
	char **cmd;          /* -- CMD ARGS... (NULL when absent) */
	int ncmd;
};

/* Parses argv. Returns 0 to go on, 1 when it printed help or the version
 * (exit 0), -1 after printing a one-line error (exit 2). */
int cli_parse(struct cli *c, int argc, char **argv);

#endif
