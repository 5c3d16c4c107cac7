/* What the views show about the session itself (not the traced workload):
 * mode, collection health, recording. Filled by the session and its source,
 * read by batch, JSON and the TUI. Plain data. */
#ifndef IG_STATUS_H
#define IG_STATUS_H

#include <stdint.h>

enum ig_mode { IG_MODE_LIVE = 0, IG_MODE_REPLAY = 1 };

#define IG_STATUS_NOTES 4

struct ig_status {
	int mode;              /* enum ig_mode */
	int paused;            /* view frozen (live) or replay paused */
	double replay_speed;   /* 0 = as fast as possible */
	uint64_t replay_pos_ns;   /* event time of the replay position */
	uint64_t replay_start_ns; /* first and last event time of the recording */
	uint64_t replay_end_ns;
	uint64_t rows_refused;	 /* replay: rows of the recordings refused so far (values
				  * out of range, ops the file does not name; their count
				  * grows as the replay reads; docs/recording.md) */
	uint64_t replay_next_ns; /* replay: event time of the next event, 0 at the end */
	char host[64];
	uint64_t now_ns;          /* event time now (Unix ns) */
	double events_per_s;      /* events ingested per second, last interval */
	uint64_t events_total;	  /* events ingested; a replay: up to its position (a seek
				   * back counts again from the start) */
	uint64_t drops_kernel;    /* ring-buffer reservation failures, all CPUs */
	uint64_t drops_user;      /* events read but not processed */
	int probes_attached;      /* uprobe/uretprobe links attached */
	int probes_failed;        /* attach attempts that failed */
	int probes_missing;       /* optional symbols not exported by any library */
	uint32_t probe_ns;        /* cost of tracing one call on this machine (the
				   * traps outside the measured time), 0 unknown */
	int libs;                 /* distinct library files attached */
	int targets;              /* processes being traced */
	int stacks_on;
	/* Live only: calls missed, or possibly missed, by the collector, so that
	 * a loss is never a silent 0 (docs/collector.md, "What is still not
	 * exact"). */
	int late_pids;		  /* processes attached late: they had a CUDA library
				   * mapped before its probes were live for them, so
				   * their earlier calls are not known */
	int late_pid;		  /* the most recent of them, 0 when none */
	uint64_t calls_partial;	  /* calls seen in part: a return without its entry (the
				   * call began before the attach) or an entry whose
				   * return never came; not in the call counts */
	uint64_t calls_too_deep;  /* calls nested deeper than the kernel keeps: lost */
	uint64_t holds;		  /* times a process was stopped at an exec or a library
				   * load until its libraries were attached (no loss) */
	int cmd_status;		  /* exit status of the launched command (-- CMD; a --demo
				   * scenario: 0 once it finished), -1 while it runs or
				   * when there is none */
	/* Live only: the GPU device meters (collect/nvml.h). nvml_state: 0
	 * loading, 1 sampling, 2 no NVML library, 3 NVML failed; -1 none (replay).
	 * nvml: its line ("driver 580.95.05, 1 device (H100)", or why not, or
	 * the call that is not answering); nvml_stuck_ns: how long that call has
	 * taken, 0 when none is stuck. */
	int nvml_state;
	uint64_t nvml_stuck_ns;
	char nvml[192];
	char recording[256];      /* recording file, "" when not recording */
	char record_error[128];   /* why recording stopped, "" when fine */
	uint64_t record_dropped;  /* events the recording lost: its writer made no room
				   * for them in 2 s (a stuck disk); 0 when complete */
	uint64_t record_waits;    /* times the reader waited for the writer (a full
				   * queue): no loss, the kernel buffers meanwhile */
	uint64_t record_wait_ns;  /* how long it waited, in all */
	uint64_t record_summarised; /* calls the recording counted, not kept (--record-rate) */
	int record_rate_hint;     /* a full recording whose writer fell behind (waits or
				   * losses): --record-rate would have kept every count */
	uint64_t replay_summarised; /* replay: calls laid out from a --record-rate file's runs
				     * (counts exact, durations estimated) */
	char message[640];        /* last one-line notice for the user */
	/* Every notice in order, message the latest: notes_n counts them,
	 * notes[] holds the last IG_STATUS_NOTES. Two notices in one tick (a
	 * process attached late, then the command's exit) are both there; a
	 * reader keeps the count it has shown (ig_status_say writes them). */
	uint32_t notes_n;
	char notes[IG_STATUS_NOTES][640];
	int failed;		  /* the source cannot go on (a replay's damaged file):
				   * message says why */
};

/* A notice: into message and the notes (printf format). */
void ig_status_say(struct ig_status *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* message, written by other means, as the next notice. */
void ig_status_said(struct ig_status *st);

#endif
