/* The fleet: ingero-top on many hosts over the user's own ssh
 * (docs/fleet.md). One `ssh HOST ingero-top --stream ...` per host, started
 * in parallel with a bounded concurrency and reconnected with back-off; the
 * hosts' stream frames (docs/json.md, "Stream") read into plain data that
 * the views (the fleet screen in tui/fleet*.c, the batch table, the JSON,
 * explain --ssh) draw. Pure plumbing and bookkeeping: no curses, no
 * credentials (ssh has them), never a host-key or BatchMode override.
 *
 * Driven like a session: the caller polls the fds of fleet_pollfds() and
 * calls fleet_step() after each poll (and at least every
 * fleet_timeout_ms()). The caller ignores SIGPIPE (pings are written to
 * the ssh processes' stdin).
 *
 * Text: the strings a host sent (hostname, version, comm, op, chain
 * texts) are kept as they came and must go through core/escape.h (or
 * ig_json_str) on their way out; `why` is already escaped, one line. */
#ifndef IG_FLEET_H
#define IG_FLEET_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FLEET_STREAM_VERSION 1 /* the "stream" field the client reads */
#define FLEET_MAX_HOSTS 512
#define FLEET_MAX_PROCS 8	/* traced processes kept per host (busiest first) */
#define FLEET_MAX_RANKS 8	/* NCCL ranks kept per host */
#define FLEET_NAME_LEN 128
#define FLEET_WHY_LEN 200
#define FLEET_MAX_CHAINS 3	/* active chains kept per host (display order) */
#define FLEET_LINE_MAX (4u << 20) /* longest stream line read; longer ones are dropped */

enum fleet_state {
	FLEET_CONNECTING,  /* ssh started, no hello yet */
	FLEET_LIVE,	   /* frames arriving */
	FLEET_STALE,	   /* live, but no frame for 3 intervals (a slow host) */
	FLEET_RETRY,	   /* unreachable or dropped: why; reconnecting at next_try_ms */
	FLEET_REFUSED,	   /* host key mismatch or authentication refused: why (retried slowly) */
	FLEET_FAILED,	   /* no ingero-top, an older one, no sudo rights: why (not retried) */
	FLEET_ENDED,	   /* the remote session ended (its command exited) */
};

/* One traced process of a host, from its latest frame. Shares are percent
 * of the feeding threads' wall time (the processes pane's GPU% CPU% PRE%
 * WAIT%); negative when not known (no scheduler split). */
struct fleet_proc {
	uint32_t pid;
	char comm[16];
	bool exited;
	double calls_per_s;
	double gpu_pct, cpu_pct, pre_pct, wait_pct;
	char top_op[32];		/* the op with the most time in the window */
	uint64_t p99_ns, p99_prev_ns;	/* its window p99 now and one frame before (0: none) */
};

/* The worst active chain of a host (class "" when none). */
struct fleet_chain {
	char id[16], severity[8], cls[24], op[32];
	uint32_t pid, culprit_pid;
	char comm[16], culprit_comm[16];
	double impact;			/* share of the feeding threads' wall time, 0..1 */
	char summary[200];
	char advice[200];		/* the first recommendation */
};

/* One NCCL rank on a host. */
struct fleet_rank {
	bool known; /* the communicator was seen made: key, rank, seq mean something */
	uint32_t pid, key, rank, nranks;
	uint64_t ops_win, wait_mean_ns, wait_ns_win;
};

struct fleet_gpu_sum {
	int n;				/* devices (0: no NVML) */
	double util_pct;		/* mean utilisation of the devices */
	uint64_t mem_used, mem_total;	/* summed */
};

struct fleet_host {
	char spec[FLEET_NAME_LEN];	/* as given: [user@]host[:port] */
	char name[FLEET_NAME_LEN];	/* its display name: the spec without the user */
	enum fleet_state state;
	char why[FLEET_WHY_LEN];	/* state's reason, one line ("" when live) */
	char version[32];		/* the remote's ingero-top version (hello) */
	char hostname[64];		/* the remote's own name (hello) */
	uint64_t frames, connects;	/* frames read, connections made */
	uint64_t last_frame_ms;		/* monotonic ms of the latest frame, 0 none */
	uint64_t next_try_ms;		/* FLEET_RETRY/REFUSED: when it reconnects */
	double interval_s;		/* the remote's refresh interval */
	/* from the latest frame */
	double events_per_s;
	uint64_t drops;			/* kernel + user drops, lifetime */
	int nprocs;
	struct fleet_proc procs[FLEET_MAX_PROCS];
	struct fleet_chain worst;	/* the first actionable chain (else the first one) */
	int nchains;			/* the frame's chains, display order */
	struct fleet_chain chains[FLEET_MAX_CHAINS];
	struct fleet_gpu_sum gpu;
	int nranks;
	struct fleet_rank ranks[FLEET_MAX_RANKS];
	/* the clock: remote wall clock minus ours, from the ping with the
	 * smallest round trip; unc_ns is half that round trip (0: not measured) */
	int64_t offset_ns;
	uint64_t unc_ns;
	uint64_t lines_dropped;		/* stream lines over FLEET_LINE_MAX or not JSON */
	uint64_t arrivals_lost;		/* NCCL arrivals the remote could not list */
	uint64_t realtime_ns;		/* the latest frame's wall time (remote clock) */
	bool done;			/* the latest frame said the target ended */
	bool straggler;			/* the rank the others wait for is here */
	int score_rank;			/* position in fleet_order (0 = worst) */
};

/* The cross-host straggler of one communicator: per collective (key, seq)
 * seen on two or more hosts, the rank that arrived last and by how much
 * after the median arrival (clock-corrected); over the recent collectives,
 * the rank most often last. */
struct fleet_straggler {
	bool found;
	uint32_t key, rank, nranks;
	int host;			/* index into the hosts */
	uint32_t pid;
	uint64_t collectives;		/* joined collectives considered */
	uint64_t last_count;		/* of those, how often this rank was last */
	uint64_t late_mean_ns, late_max_ns; /* its lateness when last */
	uint64_t unc_ns;		/* the clock uncertainty of the join */
};

struct fleet_opts {
	const char **hosts;		/* [user@]host[:port], nhosts of them */
	int nhosts;
	const char *ssh_program;	/* "ssh" unless --ssh-program */
	const char *ssh_config;		/* --ssh-config FILE: ssh -F FILE, NULL none */
	const char *remote_cmd;		/* the remote ingero-top ("ingero-top") */
	bool sudo;			/* --ssh-sudo: sudo -n before it */
	int jobs;			/* connections being made at once (16) */
	char **remote_args;		/* forwarded to the remote after --stream */
	int nremote_args;
	double interval_s;		/* -d, forwarded */
	const char *record_dir;		/* --record DIR: DIR/HOST.db at the end, NULL none */
	double connect_timeout_s;	/* ssh ConnectTimeout (0: 10) */
};

struct fleet;

/* Reads a hosts file: one [user@]host[:port] a line, '#' comments and
 * blank lines skipped. Appends to *hosts (malloc'd strings). Returns the
 * count added or -1 with a one-line reason in err. */
int fleet_read_hosts_file(const char *path, char ***hosts, int *n, char *err, size_t errlen);

/* Parses a comma-separated host list the same way. */
int fleet_split_hosts(const char *list, char ***hosts, int *n, char *err, size_t errlen);

struct fleet *fleet_new(const struct fleet_opts *o);
void fleet_free(struct fleet *f); /* ends every connection (SIGTERM, then SIGKILL) */

/* The fds to poll (ssh stdouts and stderrs) into pfd[max]; returns the count. */
int fleet_pollfds(struct fleet *f, struct pollfd *pfd, int max);
/* The longest the caller may wait before fleet_step (a reconnect, a ping). */
int fleet_timeout_ms(const struct fleet *f);
/* Reads what arrived, starts and restarts connections, pings for the
 * clock, joins NCCL arrivals. now_ms: ig_mono_ms(). Never blocks. */
void fleet_step(struct fleet *f, uint64_t now_ms);

int fleet_nhosts(const struct fleet *f);
const struct fleet_host *fleet_host(const struct fleet *f, int i);
/* Host indices worst first: the straggler's host, then hosts with an
 * active chain by its impact (largest first), then hosts that are not
 * live (failed, refused, unreachable, stale), then connecting, then the
 * healthy ones by name. Returns n. */
int fleet_order(const struct fleet *f, int *idx, int max);
void fleet_straggler(const struct fleet *f, struct fleet_straggler *out);

/* argv of the interactive viewer on host i (ssh -t ... [sudo -n] ingero-top
 * <forwarded args>), NULL-terminated, into argv[max]; strings live in f.
 * Returns the count or -1. */
int fleet_viewer_argv(struct fleet *f, int i, char **argv, int max);

/* The fleet table (--batch) and its JSON object (--json, one line). */
int fleet_print_text(FILE *out, const struct fleet *f);
int fleet_print_json(FILE *out, const struct fleet *f);

/* explain --ssh: the fleet's report after seconds of observation: the
 * verdict (which host, why, what to do; the straggler) then a section per
 * host; as text or as one JSON object (docs/explain.md). 0 or -1. */
int fleet_explain_text(FILE *out, const struct fleet *f, double seconds);
int fleet_explain_json(FILE *out, const struct fleet *f, double seconds);

/* At the end with --record DIR: ends the connections (fleet_stop), copies
 * the recording of each host that sent frames to DIR/HOST.db (ssh HOST
 * [sudo -n] cat), removes the remote file; a line on err per host without
 * one, and why. Returns the count copied. */
int fleet_fetch_recordings(struct fleet *f, FILE *err);

const char *fleet_state_name(enum fleet_state s);

/* Ends every connection and waits for the ssh processes (closes their
 * stdin, so the remote ingero-top ends and writes its recording; SIGTERM
 * after wait_ms, then SIGKILL). The hosts keep their data. */
void fleet_stop(struct fleet *f, int wait_ms);
/* true when no host will send anything more (every one failed or ended). */
bool fleet_done(const struct fleet *f);
/* Wall-clock ns (CLOCK_REALTIME) of the viewing host, as the outputs stamp. */
uint64_t fleet_now_ns(void);

/* Reads one stream line as if host i had sent it (tests; a tool that
 * replays a captured stream): 0, or -1 when it is not a stream object. */
int fleet_feed(struct fleet *f, int i, const char *line, uint64_t now_ms);
/* Sets host i's clock (tests): remote wall clock minus ours. */
void fleet_set_clock(struct fleet *f, int i, int64_t offset_ns, uint64_t unc_ns);
/* What ssh's stderr (its last bytes) and its wait status say: the state
 * (FLEET_RETRY, FLEET_REFUSED or FLEET_FAILED) and one line in why.
 * remote: the remote command's name (NULL: "ingero-top"). */
enum fleet_state fleet_classify(const char *err_text, int wait_status, const char *remote,
				char *why, size_t len);
/* The remote command line ([sudo -n] REMOTE [--stream] ARGS), each word
 * shell-quoted, into buf: 0, or -1 when it does not fit. */
int fleet_remote_line(const struct fleet_opts *o, bool stream, char *buf, size_t len);
/* One word quoted for a POSIX shell ('...' with ' as '\''), into buf. */
int fleet_shell_quote(const char *s, char *buf, size_t len);

#endif
