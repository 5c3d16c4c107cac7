/* The fleet's insides, shared by the files of src/fleet only: one connection per
 * host (the ssh process, its pipes, the line buffers, the clock pings) and
 * the NCCL join table of the cross-host straggler. */
#ifndef IG_FLEET_INT_H
#define IG_FLEET_INT_H

#include "fleet/fleet.h"

#include <jansson.h>
#include <sys/types.h>

#define FLEET_ERR_KEEP 2048	 /* the last bytes of ssh's stderr kept */
#define FLEET_PINGS_AT_CONNECT 4 /* pings sent at connection */
#define FLEET_PING_EVERY_MS 30000
#define FLEET_PING_FAST_MS 2000	     /* ... while the clock is known worse than: */
#define FLEET_PING_GOOD_NS 1000000ULL /* 1 ms */
#define FLEET_BACKOFF_MAX_S 60
#define FLEET_REFUSED_RETRY_MS 60000
#define FLEET_HELLO_WAIT_MS 30000 /* a connection without a hello by then is ended */
#define FLEET_JOIN_EVERY_MS 250	  /* the straggler is judged again at most this often */
#define FLEET_JOIN_SLOTS 1024	  /* recent collectives kept per communicator, at most */
#define FLEET_JOIN_RANKS 1024	  /* ranks of a communicator joined, at most */
#define FLEET_JOIN_ARRIVALS 65536 /* arrivals kept per communicator: slots x ranks */
#define FLEET_JOIN_KEYS 8	  /* communicators joined */

struct fleet_conn {
	pid_t pid;	  /* the ssh process, 0 none */
	int in, out, err; /* its stdin, stdout, stderr (ours), -1 closed */
	char *line;	  /* stdout bytes of the line being read */
	size_t len, cap;
	bool skipping; /* the line is over FLEET_LINE_MAX: dropped up to its end */
	char errbuf[FLEET_ERR_KEEP + 1];
	size_t errlen;
	uint64_t started_ms;
	int backoff_s; /* the next back-off (1, 2, 4 ... 60) */
	bool hello, got_error, got_end, mismatch;
	bool no_hello;		     /* ended by us: no hello within FLEET_HELLO_WAIT_MS */
	char message[FLEET_WHY_LEN]; /* the error line's message / end's reason */
	int pings_left;		     /* of the pings at connection */
	uint32_t ping_id;
	uint64_t ping_sent_ns; /* realtime ns of the ping awaiting its pong, 0 none */
	uint64_t next_ping_ms;
	uint64_t best_rtt_ns;  /* the smallest round trip so far (0 none) */
	char record_path[160]; /* the remote recording (--record), "" none */
};

/* One arrival of a rank at a collective, on our clock. */
struct fleet_arrival {
	uint16_t rank, host;
	uint32_t pid;
	int64_t t_ns;
};

struct fleet_slot {
	uint64_t seq; /* 0: empty */
	uint16_t n;
	struct fleet_arrival *a; /* cap of them, in the communicator's pool */
};

/* The latest seq each rank reported on a communicator. */
struct fleet_seen {
	uint32_t rank, pid;
	int host;
	uint64_t latest;
};

/* One communicator: its recent collectives, nslots of them with room for
 * cap arrivals each (cap: its nranks when first seen; nslots: as many as
 * FLEET_JOIN_ARRIVALS allow, 64 to FLEET_JOIN_SLOTS). */
struct fleet_join {
	uint32_t key, nranks;
	int nseen, cap, nslots;
	struct fleet_seen seen[FLEET_JOIN_RANKS];
	struct fleet_slot *slots;
	struct fleet_arrival *pool; /* nslots x cap */
};

struct fleet {
	struct fleet_opts o;
	int n;
	struct fleet_host *hosts;
	struct fleet_conn *conns;
	int nkeys;
	struct fleet_join keys[FLEET_JOIN_KEYS];
	struct fleet_straggler strag;
	bool join_dirty;  /* arrivals added since the straggler was judged */
	uint64_t join_ms; /* when it was */
	char **vargv;	  /* the viewer's argv strings (fleet_viewer_argv) */
	int nvargv;
	char local[64]; /* this host's name, for the remote recording paths */
};

/* fleet_conn.c */
void fconn_init(struct fleet_conn *c);
void fconn_close(struct fleet *f, int i, bool kill_it);
void fconn_read(struct fleet *f, int i, uint64_t now_ms);
void fconn_reap(struct fleet *f, int i, uint64_t now_ms);
int fconn_start(struct fleet *f, int i, uint64_t now_ms);
void fconn_ping(struct fleet *f, int i, uint64_t now_ms);
void fleet_host_addr(const char *spec, char *user, size_t ulen, char *host, size_t hlen, int *port);
int fleet_ssh_argv(const struct fleet *f, int i, bool tty, const char *remote_line,
		   char ***argv_out);
void fleet_argv_free(char **argv);
pid_t fleet_spawn(char **argv, int *in, int *out, int *err, int out_fd, char *why, size_t len);

/* fleet_parse.c: one line of host i's stream */
int fparse_line(struct fleet *f, int i, const char *line, uint64_t now_ms);

/* fleet_out.c: the pieces explain reuses */
json_t *fout_json(const struct fleet *f);
json_t *fout_chain_json(const struct fleet_chain *c);
void fout_straggler_words(const struct fleet *f, char *buf, size_t len);
void fout_chain_words(const struct fleet_chain *c, char *buf, size_t len);
void fout_proc_cols(const struct fleet_proc *p, char *buf, size_t len);

/* fleet_join.c */
void fjoin_add(struct fleet *f, int host, uint32_t key, uint32_t rank, uint32_t nranks,
	       uint32_t pid, uint64_t seq, int64_t t_remote_ns);
void fjoin_update(struct fleet *f);
void fjoin_free(struct fleet *f);

#endif
