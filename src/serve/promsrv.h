/* The /metrics endpoint of `--prometheus [HOST:]PORT`: a small HTTP/1.1
 * server on a thread of its own that serves the last published snapshot.
 *
 * Threads: the loop that owns the session (the batch loop or the viewer)
 * renders the metrics (report/prom.h) and publishes the text, once per
 * refresh; publishing swaps a pointer under a mutex. The server thread
 * only ever reads published snapshots (reference-counted, immutable), so a
 * scrape never waits for the model and the model never waits for a
 * scrape, however slow the client.
 *
 * Limits against slow or hostile clients: a cap on open connections
 * (further ones get 503 and are closed), the whole request within the read
 * timeout and within a size limit (431), no NUL byte in it (400 as soon as
 * one is read), the whole response taken within the write timeout;
 * anything else is closed.
 *
 * One more slot is reserved for a whole request, so that clients that open
 * connections and never finish their requests cannot blind the scraper: a
 * connection that finds the max_conns slots taken goes there and is read
 * at once; the next such connection takes the slot from it unless its
 * request was whole (it is then being answered), and one still without a
 * whole request after a second (RESERVED_WAIT_MS, or the read timeout when
 * shorter) gets 503. A limit per peer address would not do it: every local
 * user connects from 127.0.0.1. Each refusal is counted
 * (prom_server_stats) and logged in one line through core/log.h, from the
 * publishing thread (the log is single-threaded), at most one line per
 * reason per second. */
#ifndef IG_PROMSRV_H
#define IG_PROMSRV_H

#include <stddef.h>

#include "report/prom.h"

struct promsrv_cfg {
	const char *listen;   /* "[HOST:]PORT": a bare port binds 127.0.0.1; IPv6 as [::1]:PORT */
	int max_conns;	      /* connections open at once (8), plus one reserved */
	int read_timeout_ms;  /* the whole request within (5000) */
	int write_timeout_ms; /* the whole response within (10000) */
	size_t max_request;   /* request line and headers, bytes (8192) */
};
void promsrv_cfg_default(struct promsrv_cfg *c);

/* Splits "[HOST:]PORT" into host (127.0.0.1 when absent; brackets of an
 * IPv6 literal removed) and port (0..65535 as digits; 0 = any free port).
 * 0, or -EINVAL with a reason in why (static text). */
int promsrv_parse_listen(const char *s, char *host, size_t hostlen, char *port, size_t portlen,
			 const char **why);

struct promsrv;

/* Binds, listens and starts the thread. NULL with one line in err on
 * failure ("cannot listen on 127.0.0.1:9400: Address already in use"). */
struct promsrv *promsrv_start(const struct promsrv_cfg *cfg, char *err, size_t errlen);
/* Stops the thread, closes every connection. promsrv_stop(NULL) is a no-op. */
void promsrv_stop(struct promsrv *s);
/* Publishes len bytes of body (malloc'd; the server takes and frees it).
 * Until the first publish, /metrics answers 503. */
void promsrv_publish(struct promsrv *s, char *body, size_t len);
/* The counters, a consistent copy. */
void promsrv_stats(struct promsrv *s, struct prom_server_stats *out);
/* Writes the pending refusal lines to the log (core/log.h). Call from the
 * thread that owns the log (the loop); publishing does it too. */
void promsrv_flush_log(struct promsrv *s);
/* The address bound, "127.0.0.1:9400" or "[::1]:9400" (the real port when
 * 0 was asked). Owned by s. */
const char *promsrv_address(const struct promsrv *s);

/* --- an endpoint: the server and what it renders ----------------------------------------
 * The program (app/) starts one with --prometheus and hands the loops (the
 * batch loop, the viewer) a publish callback (session/session.h) that calls
 * prom_endpoint_publish() once per refresh: no process-wide state. */
struct ig_model;
struct ig_detect;
struct ig_status;
struct prom_endpoint;

/* Starts an endpoint. max_procs as prom_opts. NULL with one line in err. */
struct prom_endpoint *prom_endpoint_start(const struct promsrv_cfg *cfg, int max_procs, char *err,
					  size_t errlen);
/* Renders the metrics of the session and publishes them; flushes the
 * refusal lines to the log. A no-op on NULL. */
void prom_endpoint_publish(struct prom_endpoint *e, const struct ig_model *m,
			   const struct ig_detect *d, const struct ig_status *st);
/* The address served ("127.0.0.1:9400"), NULL for NULL. */
const char *prom_endpoint_address(const struct prom_endpoint *e);
/* Stops it and frees it; NULL is a no-op. */
void prom_endpoint_stop(struct prom_endpoint *e);

#endif
