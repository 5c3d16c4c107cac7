/* The /metrics endpoint: one thread, one poll() over a wake-up pipe, the
 * listening socket and at most max_conns connections plus the reserved
 * one, each with a deadline; published snapshots are immutable and
 * reference-counted. Then the process-wide endpoint the loops publish to.
 * See promsrv.h. */
#include "serve/promsrv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/clock.h"

#define NOTES 16 /* refusal lines waiting for the log */
#define NOTE_LEN 200
#define MAX_CONNS_LIMIT 64
#define RESERVED_WAIT_MS 1000 /* the reserved slot waits this long for a whole request */
/* a connection that sent nothing yet: its request is on its way. 100 ms
 * was too short for a scraper on a loaded 2-CPU machine (a 503 in one
 * test_prometheus run of two in full suites) */
#define RESERVED_GRACE_MS 500

/* A published snapshot: immutable, freed by whoever drops the last reference. */
struct blob {
	int refs; /* under the server's mutex */
	size_t len;
	char *data;
};

enum { C_FREE = 0, C_READ, C_WRITE };

struct conn {
	int fd, state;
	uint64_t deadline_ms, opened_ms;
	char *in;
	size_t inlen;
	char head[320];
	size_t headlen, off; /* off: bytes of head + body written */
	const char *body;    /* the blob's data or a static text */
	size_t bodylen;
	struct blob *blob; /* the reference held, NULL for static texts */
	int scrape;	   /* a GET /metrics answered 200: counts when complete */
	char peer[64];
};

struct promsrv {
	struct promsrv_cfg cfg;
	int lfd, wake[2];
	pthread_t th;
	int running;
	char addr[80];
	struct conn *conns; /* max_conns slots, then the reserved one */
	pthread_mutex_t mu; /* guards cur, the refs of every blob, st and the notes */
	struct blob *cur;
	struct prom_server_stats st;
	char notes[NOTES][NOTE_LEN];
	int nnotes;
	uint64_t lost_notes;
	uint64_t last_note_ms[PROM_REF_MAX];
	uint64_t quiet[PROM_REF_MAX]; /* refusals not logged since the last line */
	atomic_int stop;	      /* set by promsrv_stop, read by the thread */
	uint64_t accept_after_ms;     /* accept() failed for want of resources: not before */
};

void promsrv_cfg_default(struct promsrv_cfg *c)
{
	*c = (struct promsrv_cfg){
	    .listen = NULL,
	    .max_conns = 8,
	    .read_timeout_ms = 5000,
	    .write_timeout_ms = 10000,
	    .max_request = 8192,
	};
}

/* --- the address ------------------------------------------------------------------ */

static int host_ok(const char *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = h[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '-' || c == ':' || c == '%' || c == '_'))
			return 0;
	}
	return n > 0;
}

int promsrv_parse_listen(const char *s, char *host, size_t hostlen, char *port, size_t portlen,
			 const char **why)
{
	const char *dummy, *h = NULL, *p;
	size_t hn = 0;
	if (!why)
		why = &dummy;
	*why = NULL;
	if (!s || !*s) {
		*why = "expected [HOST:]PORT";
		return -EINVAL;
	}
	if (s[0] == '[') {
		const char *end = strchr(s, ']');
		if (!end || end[1] != ':') {
			*why = "expected [IPv6]:PORT";
			return -EINVAL;
		}
		h = s + 1;
		hn = (size_t)(end - h);
		p = end + 2;
	} else {
		const char *colon = strrchr(s, ':');
		if (colon && strchr(s, ':') != colon) {
			*why = "write an IPv6 address in brackets, e.g. [::1]:9400";
			return -EINVAL;
		}
		if (colon) {
			h = s;
			hn = (size_t)(colon - s);
			p = colon + 1;
			if (!hn) {
				*why = "empty host: give 0.0.0.0:PORT to listen on every interface";
				return -EINVAL;
			}
		} else {
			p = s;
		}
	}
	size_t pn = strlen(p);
	if (!pn || pn > 5 || strspn(p, "0123456789") != pn || atol(p) > 65535) {
		*why = "the port must be a number from 0 to 65535";
		return -EINVAL;
	}
	if (h && !host_ok(h, hn)) {
		*why = "not a host name or address";
		return -EINVAL;
	}
	if (!h) {
		h = "127.0.0.1";
		hn = strlen(h);
	}
	if (hn + 1 > hostlen || pn + 1 > portlen) {
		*why = "too long";
		return -EINVAL;
	}
	memcpy(host, h, hn);
	host[hn] = 0;
	memcpy(port, p, pn + 1);
	return 0;
}

static void fmt_addr(const struct sockaddr *sa, socklen_t len, char *out, size_t n)
{
	char h[NI_MAXHOST] = "?", p[NI_MAXSERV] = "?";
	getnameinfo(sa, len, h, sizeof(h), p, sizeof(p), NI_NUMERICHOST | NI_NUMERICSERV);
	if (sa->sa_family == AF_INET6)
		snprintf(out, n, "[%s]:%s", h, p);
	else
		snprintf(out, n, "%s:%s", h, p);
}

static int listen_on(struct promsrv *s, char *err, size_t errlen)
{
	char host[256], port[8];
	const char *why;
	if (promsrv_parse_listen(s->cfg.listen, host, sizeof(host), port, sizeof(port), &why)) {
		snprintf(err, errlen, "invalid --prometheus address: %s", why);
		return -EINVAL;
	}
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	int rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "cannot listen on %s:%s: %s", host, port, gai_strerror(rc));
		return -EINVAL;
	}
	int e = 0;
	for (struct addrinfo *a = res; a; a = a->ai_next) {
		int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			e = errno;
			continue;
		}
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, a->ai_addr, a->ai_addrlen) || listen(fd, 16)) {
			e = errno;
			close(fd);
			continue;
		}
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		getsockname(fd, (struct sockaddr *)&ss, &sl);
		fmt_addr((struct sockaddr *)&ss, sl, s->addr, sizeof(s->addr));
		s->lfd = fd;
		freeaddrinfo(res);
		return 0;
	}
	freeaddrinfo(res);
	snprintf(err, errlen, "cannot listen on %s:%s: %s", host, port, strerror(e ? e : EINVAL));
	return -(e ? e : EINVAL);
}

/* --- snapshots and notes (under s->mu) -------------------------------------------------- */

static void blob_put_locked(struct blob *b, struct blob **to_free)
{
	*to_free = NULL;
	if (b && --b->refs == 0)
		*to_free = b;
}

static void blob_free(struct blob *b)
{
	if (b) {
		free(b->data);
		free(b);
	}
}

/* Counts a refusal and queues its line (one per reason per second). */
static void refuse(struct promsrv *s, int reason, const char *peer, const char *what)
{
	uint64_t now = ig_mono_ms();
	pthread_mutex_lock(&s->mu);
	s->st.refused[reason]++;
	if (s->last_note_ms[reason] && now - s->last_note_ms[reason] < 1000) {
		s->quiet[reason]++;
	} else if (s->nnotes == NOTES) {
		s->lost_notes++;
	} else {
		char more[80] = "";
		if (s->quiet[reason])
			snprintf(more, sizeof(more), " (and %llu more since the last such line)",
				 (unsigned long long)s->quiet[reason]);
		snprintf(s->notes[s->nnotes++], NOTE_LEN, "metrics endpoint: %s %s: %s%s",
			 reason == PROM_REF_BUSY ? "refused" : "dropped", peer, what, more);
		s->quiet[reason] = 0;
		s->last_note_ms[reason] = now;
	}
	pthread_mutex_unlock(&s->mu);
}

void promsrv_flush_log(struct promsrv *s)
{
	char lines[NOTES][NOTE_LEN];
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	int n = s->nnotes;
	memcpy(lines, s->notes, sizeof(lines[0]) * (size_t)n);
	s->nnotes = 0;
	uint64_t lost = s->lost_notes;
	s->lost_notes = 0;
	pthread_mutex_unlock(&s->mu);
	for (int i = 0; i < n; i++)
		log_msg(LOG_WARN, "%s", lines[i]);
	if (lost)
		log_msg(LOG_WARN, "metrics endpoint: %llu more refusals not logged",
			(unsigned long long)lost);
}

void promsrv_publish(struct promsrv *s, char *body, size_t len)
{
	struct blob *b = malloc(sizeof(*b)), *old;
	if (!s || !b) {
		free(body);
		free(b);
		return;
	}
	*b = (struct blob){.refs = 1, .len = len, .data = body};
	pthread_mutex_lock(&s->mu);
	struct blob *prev = s->cur;
	s->cur = b;
	s->st.published++;
	blob_put_locked(prev, &old);
	pthread_mutex_unlock(&s->mu);
	blob_free(old);
}

void promsrv_stats(struct promsrv *s, struct prom_server_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	*out = s->st;
	pthread_mutex_unlock(&s->mu);
}

const char *promsrv_address(const struct promsrv *s)
{
	return s ? s->addr : NULL;
}

/* --- connections ------------------------------------------------------------------------ */

static void conn_close(struct promsrv *s, struct conn *c)
{
	struct blob *f = NULL;
	if (c->blob) {
		pthread_mutex_lock(&s->mu);
		blob_put_locked(c->blob, &f);
		pthread_mutex_unlock(&s->mu);
	}
	blob_free(f);
	shutdown(c->fd, SHUT_WR);
	close(c->fd);
	c->fd = -1;
	c->state = C_FREE;
	c->blob = NULL;
	c->inlen = 0;
}

static void respond(struct promsrv *s, struct conn *c, int code, const char *status,
		    const char *type, const char *body, size_t len, int head_only)
{
	c->headlen =
	    (size_t)snprintf(c->head, sizeof(c->head),
			     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			     "%sConnection: close\r\n\r\n",
			     code, status, type, len, code == 405 ? "Allow: GET, HEAD\r\n" : "");
	c->body = head_only ? "" : body;
	c->bodylen = head_only ? 0 : len;
	c->off = 0;
	c->state = C_WRITE;
	c->deadline_ms = ig_mono_ms() + (uint64_t)s->cfg.write_timeout_ms;
	pthread_mutex_lock(&s->mu);
	s->st.requests++;
	pthread_mutex_unlock(&s->mu);
}

#define TEXT "text/plain; charset=utf-8"

/* The request is complete in c->in: choose the response. */
static void answer(struct promsrv *s, struct conn *c)
{
	char method[16], target[256], version[16];
	c->in[c->inlen] = 0;
	if (sscanf(c->in, "%15[A-Z] %255[^ \r\n] %15[^\r\n]", method, target, version) != 3 ||
	    strncmp(version, "HTTP/1.", 7)) {
		refuse(s, PROM_REF_BAD_REQUEST, c->peer, "not an HTTP/1 request");
		static const char m[] = "bad request\n";
		respond(s, c, 400, "Bad Request", TEXT, m, sizeof(m) - 1, 0);
		return;
	}
	int head = !strcmp(method, "HEAD");
	if (!head && strcmp(method, "GET")) {
		static const char m[] = "only GET and HEAD\n";
		respond(s, c, 405, "Method Not Allowed", TEXT, m, sizeof(m) - 1, 0);
		return;
	}
	target[strcspn(target, "?#")] = 0;
	if (!strcmp(target, "/")) {
		static const char m[] = "ingero-top: the metrics are at /metrics\n";
		respond(s, c, 200, "OK", TEXT, m, sizeof(m) - 1, head);
		return;
	}
	if (strcmp(target, "/metrics")) {
		static const char m[] = "not found: the metrics are at /metrics\n";
		respond(s, c, 404, "Not Found", TEXT, m, sizeof(m) - 1, head);
		return;
	}
	pthread_mutex_lock(&s->mu);
	struct blob *b = s->cur;
	if (b)
		b->refs++;
	pthread_mutex_unlock(&s->mu);
	if (!b) {
		static const char m[] = "no metrics yet\n";
		respond(s, c, 503, "Service Unavailable", TEXT, m, sizeof(m) - 1, head);
		return;
	}
	c->blob = b;
	c->scrape = !head;
	respond(s, c, 200, "OK", PROM_CONTENT_TYPE, b->data, b->len, head);
}

/* Where the request head of the n bytes of in ends (just past its blank
 * line), looking from byte from on; 0 while it has not ended. Counts
 * bytes, so a NUL byte ends nothing. */
static size_t head_end(const char *in, size_t n, size_t from)
{
	const char *crlf = memmem(in + from, n - from, "\r\n\r\n", 4);
	const char *lf = memmem(in + from, n - from, "\n\n", 2);
	if (lf && (!crlf || lf < crlf))
		return (size_t)(lf - in) + 2;
	return crlf ? (size_t)(crlf - in) + 4 : 0;
}

static void conn_read(struct promsrv *s, struct conn *c)
{
	for (;;) {
		size_t room = s->cfg.max_request - c->inlen;
		if (!room) {
			refuse(s, PROM_REF_TOO_LARGE, c->peer, "request over the size limit");
			static const char m[] = "request too large\n";
			respond(s, c, 431, "Request Header Fields Too Large", TEXT, m,
				sizeof(m) - 1, 0);
			return;
		}
		ssize_t n = recv(c->fd, c->in + c->inlen, room, MSG_DONTWAIT);
		if (n == 0) { /* the client went away */
			conn_close(s, c);
			return;
		}
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				conn_close(s, c);
			return;
		}
		size_t old = c->inlen;
		c->inlen += (size_t)n;
		c->in[c->inlen] = 0;
		size_t end = head_end(c->in, c->inlen, old > 3 ? old - 3 : 0);
		size_t head = end ? end : c->inlen;
		if (head > old && memchr(c->in + old, 0, head - old)) {
			/* not HTTP: answered at once, not at the read timeout */
			refuse(s, PROM_REF_BAD_REQUEST, c->peer, "NUL byte in the request");
			static const char m[] = "bad request: NUL byte\n";
			respond(s, c, 400, "Bad Request", TEXT, m, sizeof(m) - 1, 0);
			return;
		}
		if (end) {
			answer(s, c);
			return;
		}
	}
}

static void conn_write(struct promsrv *s, struct conn *c)
{
	while (c->off < c->headlen + c->bodylen) {
		const char *p;
		size_t n;
		if (c->off < c->headlen) {
			p = c->head + c->off;
			n = c->headlen - c->off;
		} else {
			p = c->body + (c->off - c->headlen);
			n = c->bodylen - (c->off - c->headlen);
		}
		ssize_t w = send(c->fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				conn_close(s, c);
			return;
		}
		c->off += (size_t)w;
	}
	if (c->scrape) {
		pthread_mutex_lock(&s->mu);
		s->st.scrapes++;
		pthread_mutex_unlock(&s->mu);
	}
	conn_close(s, c);
}

static const char busy_msg[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
			       "Connection: close\r\n\r\n";

/* A connection that found every slot taken: 503, counted and closed. */
static void refuse_busy(struct promsrv *s, int fd, const char *peer, const char *why)
{
	ssize_t w = send(fd, busy_msg, sizeof(busy_msg) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	(void)w;
	char what[160];
	snprintf(what, sizeof(what), "too many connections (%d open)%s", s->cfg.max_conns, why);
	refuse(s, PROM_REF_BUSY, peer, what);
}

/* The reserved slot's occupant gives way: a 503, and the slot is free. */
static void evict_reserved(struct promsrv *s, struct conn *c, const char *why)
{
	refuse_busy(s, c->fd, c->peer, why);
	conn_close(s, c);
}

static void conn_open(struct promsrv *s, struct conn *c, int fd, const char *peer, int wait_ms)
{
	c->fd = fd;
	c->state = C_READ;
	c->inlen = 0;
	c->scrape = 0;
	c->blob = NULL;
	c->opened_ms = ig_mono_ms();
	c->deadline_ms = c->opened_ms + (uint64_t)wait_ms;
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
}

/* Whether a whole request already waits on a connection not yet read. */
static int whole_waiting(const struct promsrv *s, int fd)
{
	char buf[8192];
	size_t room = s->cfg.max_request < sizeof(buf) ? s->cfg.max_request : sizeof(buf);
	ssize_t n = recv(fd, buf, room, MSG_PEEK | MSG_DONTWAIT);
	return n > 0 && head_end(buf, (size_t)n, 0) != 0;
}

/* Every slot is taken: the reserved one is for a whole request. The
 * newcomer takes it from an occupant still reading (a whole request is
 * answered as soon as it is read, so that one is slow, or it is a newer
 * connection whose request is on its way) and is read at once: a scraper
 * sends its request with the connection, so it is answered now. What
 * stays incomplete gives way to the next newcomer, or is refused after
 * RESERVED_WAIT_MS. An occupant being answered keeps the slot, and so
 * does one that has sent nothing for less than RESERVED_GRACE_MS (a
 * client writes its request after connect() returns: a scraper delayed
 * there is not evicted by the next slow client), unless the newcomer's
 * own request is already whole. */
static void take_reserved(struct promsrv *s, int fd, const char *peer)
{
	struct conn *r = &s->conns[s->cfg.max_conns];
	if (r->state == C_READ) /* its request may have come since */
		conn_read(s, r);
	if (r->state == C_WRITE)
		conn_write(s, r);
	if (r->state == C_WRITE) {
		refuse_busy(s, fd, peer, ", the reserved one answering");
		close(fd);
		return;
	}
	if (r->state == C_READ && !r->inlen && ig_mono_ms() < r->opened_ms + RESERVED_GRACE_MS &&
	    !whole_waiting(s, fd)) {
		refuse_busy(s, fd, peer, ", the reserved one awaiting its request");
		close(fd);
		return;
	}
	if (r->state == C_READ)
		evict_reserved(s, r, " and no whole request: a newer connection took its slot");
	int wait =
	    s->cfg.read_timeout_ms < RESERVED_WAIT_MS ? s->cfg.read_timeout_ms : RESERVED_WAIT_MS;
	conn_open(s, r, fd, peer, wait);
	conn_read(s, r);
	if (r->state == C_WRITE)
		conn_write(s, r);
}

static void accept_all(struct promsrv *s)
{
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd = accept4(s->lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			/* out of descriptors or memory: the pending connection stays
			 * queued and would wake poll() at once; look again later */
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				s->accept_after_ms = ig_mono_ms() + 100;
			return;
		}
		char peer[64];
		fmt_addr((struct sockaddr *)&ss, sl, peer, sizeof(peer));
		struct conn *c = NULL;
		for (int i = 0; i < s->cfg.max_conns && !c; i++)
			if (s->conns[i].state == C_FREE)
				c = &s->conns[i];
		if (c)
			conn_open(s, c, fd, peer, s->cfg.read_timeout_ms);
		else
			take_reserved(s, fd, peer);
	}
}

static void expire(struct promsrv *s, uint64_t now)
{
	for (int i = 0; i <= s->cfg.max_conns; i++) {
		struct conn *c = &s->conns[i];
		if (c->state == C_FREE || now < c->deadline_ms)
			continue;
		if (c->state == C_READ && i == s->cfg.max_conns)
			evict_reserved(s, c, " and no whole request in the reserved slot in time");
		else if (c->state == C_READ)
			refuse(s, PROM_REF_READ_TIMEOUT, c->peer, "no complete request in time");
		else
			refuse(s, PROM_REF_WRITE_TIMEOUT, c->peer, "response not taken in time");
		if (c->state != C_FREE)
			conn_close(s, c);
	}
}

static void *serve(void *arg)
{
	struct promsrv *s = arg;
	struct pollfd *pf = calloc((size_t)s->cfg.max_conns + 3, sizeof(*pf));
	int *idx = calloc((size_t)s->cfg.max_conns + 3, sizeof(*idx));
	if (!pf || !idx) {
		free(pf);
		free(idx);
		return NULL;
	}
	while (!s->stop) {
		uint64_t now = ig_mono_ms();
		int n = 0, tmo = 1000;
		pf[n++] = (struct pollfd){.fd = s->wake[0], .events = POLLIN};
		int listening = now >= s->accept_after_ms;
		pf[n++] = (struct pollfd){.fd = listening ? s->lfd : -1, .events = POLLIN};
		if (!listening && s->accept_after_ms - now < (uint64_t)tmo)
			tmo = (int)(s->accept_after_ms - now);
		for (int i = 0; i <= s->cfg.max_conns; i++) {
			struct conn *c = &s->conns[i];
			if (c->state == C_FREE)
				continue;
			idx[n] = i;
			pf[n++] = (struct pollfd){.fd = c->fd,
						  .events = c->state == C_READ ? POLLIN : POLLOUT};
			int64_t left = (int64_t)c->deadline_ms - (int64_t)now;
			if (left < tmo)
				tmo = left < 0 ? 0 : (int)left;
		}
		if (poll(pf, (nfds_t)n, tmo) < 0 && errno != EINTR)
			break;
		if (pf[0].revents) {
			char b[64];
			while (read(s->wake[0], b, sizeof(b)) > 0)
				;
		}
		if (s->stop)
			break;
		for (int k = 2; k < n; k++) {
			struct conn *c = &s->conns[idx[k]];
			int was = c->state;
			if (was == C_READ && (pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
				conn_read(s, c);
			/* a request just answered is written at once: the socket is
			 * most likely writable */
			if (c->state == C_WRITE &&
			    (was == C_READ || (pf[k].revents & (POLLOUT | POLLHUP | POLLERR))))
				conn_write(s, c);
		}
		if (pf[1].revents & POLLIN)
			accept_all(s);
		expire(s, ig_mono_ms());
	}
	free(pf);
	free(idx);
	return NULL;
}

/* --- start and stop ------------------------------------------------------------------------ */

struct promsrv *promsrv_start(const struct promsrv_cfg *cfg, char *err, size_t errlen)
{
	struct promsrv *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	promsrv_cfg_default(&s->cfg);
	if (cfg) {
		s->cfg.listen = cfg->listen;
		if (cfg->max_conns > 0)
			s->cfg.max_conns =
			    cfg->max_conns > MAX_CONNS_LIMIT ? MAX_CONNS_LIMIT : cfg->max_conns;
		if (cfg->read_timeout_ms > 0)
			s->cfg.read_timeout_ms = cfg->read_timeout_ms;
		if (cfg->write_timeout_ms > 0)
			s->cfg.write_timeout_ms = cfg->write_timeout_ms;
		if (cfg->max_request >= 64)
			s->cfg.max_request = cfg->max_request;
	}
	s->lfd = s->wake[0] = s->wake[1] = -1;
	pthread_mutex_init(&s->mu, NULL);
	s->conns = calloc((size_t)s->cfg.max_conns + 1, sizeof(*s->conns));
	for (int i = 0; s->conns && i <= s->cfg.max_conns; i++) {
		s->conns[i].fd = -1;
		s->conns[i].in = malloc(s->cfg.max_request + 1);
		if (!s->conns[i].in) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
	}
	if (!s->conns) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (listen_on(s, err, errlen))
		goto fail;
	if (pipe2(s->wake, O_NONBLOCK | O_CLOEXEC)) {
		snprintf(err, errlen, "cannot start the metrics endpoint: %s", strerror(errno));
		goto fail;
	}
	/* the thread takes no signal: they stay with the loop, whose poll() they end */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&s->th, NULL, serve, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		snprintf(err, errlen, "cannot start the metrics endpoint: %s", strerror(rc));
		goto fail;
	}
	s->running = 1;
	return s;
fail:
	promsrv_stop(s);
	return NULL;
}

void promsrv_stop(struct promsrv *s)
{
	if (!s)
		return;
	if (s->running) {
		s->stop = 1;
		ssize_t w = write(s->wake[1], "x", 1);
		(void)w;
		pthread_join(s->th, NULL);
	}
	for (int i = 0; s->conns && i <= s->cfg.max_conns; i++) {
		if (s->conns[i].state != C_FREE)
			conn_close(s, &s->conns[i]);
		free(s->conns[i].in);
	}
	free(s->conns);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->wake[0] >= 0)
		close(s->wake[0]);
	if (s->wake[1] >= 0)
		close(s->wake[1]);
	blob_free(s->cur);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* --- an endpoint: the server and what it renders ------------------------------------------- */

struct prom_endpoint {
	struct promsrv *srv;
	int max_procs;
};

struct prom_endpoint *prom_endpoint_start(const struct promsrv_cfg *cfg, int max_procs, char *err,
					  size_t errlen)
{
	struct prom_endpoint *e = calloc(1, sizeof(*e));
	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e->srv = promsrv_start(cfg, err, errlen);
	if (!e->srv) {
		free(e);
		return NULL;
	}
	e->max_procs = max_procs;
	return e;
}

void prom_endpoint_publish(struct prom_endpoint *e, const struct ig_model *m,
			   const struct ig_detect *d, const struct ig_status *st)
{
	if (!e || !m)
		return;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return;
	struct prom_server_stats ss;
	promsrv_stats(e->srv, &ss);
	struct prom_opts o = {.max_procs = e->max_procs, .srv = &ss};
	int r = prom_write(f, m, d, st, &o);
	if (fclose(f) || r) {
		free(buf);
		log_msg(LOG_WARN, "metrics endpoint: cannot render the metrics: %s",
			strerror(r ? -r : ENOMEM));
	} else {
		promsrv_publish(e->srv, buf, len);
	}
	promsrv_flush_log(e->srv);
}

const char *prom_endpoint_address(const struct prom_endpoint *e)
{
	return e ? promsrv_address(e->srv) : NULL;
}

void prom_endpoint_stop(struct prom_endpoint *e)
{
	if (!e)
		return;
	promsrv_flush_log(e->srv);
	promsrv_stop(e->srv);
	free(e);
}
