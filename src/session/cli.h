/* Command-line options of ingero-top, parsed into plain data. */
#ifndef IG_CLI_H
#define IG_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLI_MAX_PIDS 64
#define CLI_MAX_LIBS 16
#define CLI_MAX_REPLAY 64 /* the files a replay merges at once (store/replay_int.h) */
/* The smallest --max-db: below it the empty schema (~100 KiB) and the
 * pruning granularity (whole seconds) cannot keep a recording in bounds. */
#define CLI_MIN_MAX_DB (1ull << 20)
/* The ranges of -d and --window, for this parser and for the fleet's, which
 * checks them before it forwards them to every host (app/fleet_main.c). */
#define CLI_DELAY_MIN 0.05
#define CLI_DELAY_MAX 3600
#define CLI_WINDOW_MIN 1
#define CLI_WINDOW_MAX 300

struct cli {
	bool check;          /* "ingero-top check" */
	bool batch;          /* -b */
	bool json;           /* --json */
	bool summary;        /* --summary: one final lifetime frame */
	bool events;         /* --events: print every event, one line each */
	bool stream;         /* --stream: versioned JSON lines for the fleet (docs/json.md);
			      * implies batch (no terminal) */
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
	const char *since;   /* --since T: the replay from T (as given: app/main.c
			      * reads it against the recordings' span), NULL = start */
	const char *until;   /* --until T: the replay up to T, NULL = end */
	const char *record;  /* --record FILE */
	uint64_t max_db;     /* --max-db bytes, 0 = unbounded */
	unsigned record_rate; /* --record-rate calls/s per thread kept as rows, 0 = all */
	/* `ingero-top record` (app/cmd_record.c): rotating files in a directory */
	const char *record_dir; /* --dir: files named by store/recdir.h; NULL = --record */
	uint64_t rotate_ns;	/* --rotate: a new file at every multiple of it (UTC) */
	uint64_t max_size;	/* --max-size: all the files together, bytes; 0 = no cap */
	uint64_t retain_ns;	/* --retain: files that ended longer ago go; 0 = kept */
	double flight_s;     /* --flight SECS */
	const char *flight_dir;
	const char *theme;
	bool no_color;
	bool ascii;
	bool raw_tp;         /* --raw-tp: force the raw tracepoint fallback */
	bool no_system_libs;
	bool no_stacks;	     /* --no-stacks, --stack-mode off */
	bool stacks_all;     /* --stack-mode all: every call's stack (default: the tail) */
	bool no_waits; /* --no-waits: no wait evidence (collect/collector.h) */
	bool stacks;         /* --stacks: top stacks per op in batch frames */
	int verbose;
	const char *demo;    /* --demo [SCENARIO]: NULL when absent */
	char **cmd;          /* -- CMD ARGS... (NULL when absent) */
	int ncmd;
	const char *prometheus; /* --prometheus [HOST:]PORT, NULL = no endpoint */
	int prometheus_procs;	/* --prometheus-procs N: processes with a label (10) */
};

/* Parses argv. Returns 0 to go on, 1 when it printed help or the version
 * (exit 0), -1 after printing a one-line error on stderr (exit 2). Numbers
 * must be finite and in range ("nan", "inf", negatives refused), --pid lists
 * have no empty item, "--" needs a command, --max-db needs --record and at
 * least CLI_MIN_MAX_DB. Warnings (cli_pid_warning) go to stderr and still
 * return 0. argv must outlive c (c->replay, c->cmd... point into it). */
int cli_parse(struct cli *c, int argc, char **argv);

/* A warning for tracing pid: pid 1 (init) or a kernel thread. Writes it
 * into buf (without "warning: ") and returns 1, or returns 0 with buf "". */
int cli_pid_warning(int pid, char *buf, size_t len);

/* A --stack-mode value this parser takes: tail, all or off. */
bool cli_stack_mode_ok(const char *s);

#endif
