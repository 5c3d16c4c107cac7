/* Driving a session for the handover subcommands (explain, mcp): a live
 * session (--pid, -- CMD) or a replay (--replay FILE...), built through the
 * ordinary options (cli_parse) and driven through session.h only (which
 * keeps the slowest calls of the run); the event hook feeds the live ring
 * of recent events (mcp) and the command lines of live processes (read from /proc
 * when a process is first seen). Also the facts of the hosts for the
 * report. Reads /proc and the recordings' sessions rows. */
#ifndef IG_HO_RUN_H
#define IG_HO_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect/sysinfo.h"
#include "report/explain.h"
#include "session/cli.h"
#include "store/recfmt.h"

#define HO_HOSTS_MAX 16
#define HO_MAX_CMD 64 /* words of -- CMD ARGS */

/* What to trace or replay, as the user gave it. */
struct ho_target {
	const char *replay[CLI_MAX_REPLAY];
	int nreplay;
	const char *pids;   /* "1234,5678", NULL = none */
	char **cmd;	    /* -- CMD ARGS (NULL = none) */
	const char *record; /* live: also record to this file */
	const char *window; /* --window SECS as given, NULL = default */
	bool no_stacks;
};

struct session;
struct evring;
struct ho_cmdlines;

struct ho_run {
	struct session *s; /* keeps the slowest calls (session_slowcalls) */
	struct evring *ring; /* the events kept for range questions (mcp), else NULL */
	double ring_s;
	size_t ring_max;
	struct ho_cmdlines *cmds;
	bool live;
	char
	    *argv[CLI_MAX_REPLAY + 16 + HO_MAX_CMD]; /* what cli_parse read: outlives the session */
	struct cli cli;
	uint64_t first_ns, last_ns; /* first entry, last completion since the start or the reset */
	uint64_t events;	    /* events since the start or the reset */
	/* host facts for the report */
	struct explain_host hosts[HO_HOSTS_MAX];
	int nhosts;
	struct rec_session *sess;
	size_t nsess;
	struct sysinfo_facts facts;
	char command[512];			 /* live: -- CMD ARGS, "" none */
	char host_cmd[HO_HOSTS_MAX][160];	 /* a recording's command, its probe cost cut off */
};

/* Opens the session: live needs privileges (checked here, with the same
 * words as the main command). ring_s > 0: keep that many seconds of events
 * (at most ring_max; the newest) for range questions, live or replayed. 0,
 * or -1 with a one-line reason in err. */
int ho_open(struct ho_run *r, const struct ho_target *t, double ring_s, size_t ring_max, char *err,
	    size_t len);
void ho_close(struct ho_run *r);

/* Replay: ingests up to until (0: the end), forgetting the statistics at
 * since (0: never), stepping one second of event time at a time as the
 * batch replay does, then closes the last second. Returns 0, or -errno. */
int ho_replay(struct ho_run *r, uint64_t since, uint64_t until, volatile sig_atomic_t *stop);

/* Live: pumps and ticks the session (session_wait) until ms pass, it is
 * done, reading fails, or *stop. Returns 1 when the session is done (the
 * command exited), 0 otherwise. */
int ho_live_for(struct ho_run *r, int ms, volatile sig_atomic_t *stop);

/* The report's input from the run (the session's model, detector, stacks,
 * status; the slowest calls; hosts; command lines). */
void ho_explain_in(struct ho_run *r, struct explain_in *in);

/* The first and last event time of the data: a replay's span, or what the
 * live session saw. */
void ho_span(struct ho_run *r, uint64_t *start_ns, uint64_t *end_ns);

/* The command line of a live process ("" unknown). */
const char *ho_cmdline(void *r, uint32_t pid);

#endif
