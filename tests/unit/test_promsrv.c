/* The /metrics endpoint (serve/promsrv.c) over real loopback sockets: the
 * [HOST:]PORT syntax, the responses (200 with the exposition content type,
 * HEAD, 404, 405, 400, 503 before the first snapshot), and the limits: an
 * oversized request gets 431, an idle client is dropped at the read
 * timeout, a client that does not read is dropped at the write timeout, a
 * connection over the cap gets 503; each refusal is counted and logged. A
 * NUL byte in the request head gets 400 at once (not a close at the read
 * timeout). With every slot held by slow clients, a whole request still
 * gets through in the reserved slot, and what waits there without one
 * gives way. A
 * client that reads slowly gets the whole snapshot it asked for while newer
 * ones are published. Out of descriptors, the thread waits instead of
 * spinning and serves the connection once it can. Deadlines here are
 * generous; nothing asserts speed. */
#include "check.h"
#include "core/log.h"
#include "serve/promsrv.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void test_parse(void)
{
	static const struct {
		const char *in;
		int ok;
		const char *host, *port;
	} c[] = {
	    {"9400", 1, "127.0.0.1", "9400"},
	    {"0", 1, "127.0.0.1", "0"},
	    {"0.0.0.0:9400", 1, "0.0.0.0", "9400"},
	    {"localhost:1", 1, "localhost", "1"},
	    {"[::1]:9400", 1, "::1", "9400"},
	    {"[::]:65535", 1, "::", "65535"},
	    {"", 0, NULL, NULL},
	    {":9400", 0, NULL, NULL},
	    {"65536", 0, NULL, NULL},
	    {"94a0", 0, NULL, NULL},
	    {"host:", 0, NULL, NULL},
	    {"::1:9400", 0, NULL, NULL},
	    {"[::1]9400", 0, NULL, NULL},
	    {"ho st:9400", 0, NULL, NULL},
	    {"h\x1b:9400", 0, NULL, NULL},
	    {"-1", 0, NULL, NULL},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char h[64] = "", p[8] = "";
		const char *why = NULL;
		int r = promsrv_parse_listen(c[i].in, h, sizeof(h), p, sizeof(p), &why);
		CHECKF((r == 0) == c[i].ok, "case %zu '%s': %d", i, c[i].in, r);
		if (c[i].ok && !r)
			CHECKF(!strcmp(h, c[i].host) && !strcmp(p, c[i].port), "case %zu: %s %s", i,
			       h, p);
		if (!c[i].ok)
			CHECKF(why && *why, "case %zu: no reason", i);
	}
}

/* --- a client ----------------------------------------------------------------------------- */

static int dial(const char *addr)
{
	const char *colon = strrchr(addr, ':');
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)atoi(colon + 1))};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int send_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Reads until the server closes (deadline 20 s). Returns the bytes (caller
 * frees) and their count in *n; NULL when the deadline passed. */
static char *read_all(int fd, size_t *n)
{
	size_t cap = 1 << 16, len = 0;
	char *b = malloc(cap + 1);
	uint64_t end = now_ms() + 20000;
	while (now_ms() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 200) <= 0)
			continue;
		if (len == cap)
			b = realloc(b, (cap *= 2) + 1);
		ssize_t r = recv(fd, b + len, cap - len, 0);
		if (r <= 0) {
			b[len] = 0;
			*n = len;
			return b;
		}
		len += (size_t)r;
	}
	free(b);
	return NULL;
}

/* One request of len bytes, the whole response; the status code in *code. */
static char *request_n(const char *addr, const char *req, size_t len, int *code, size_t *n)
{
	*code = 0;
	int fd = dial(addr);
	if (fd < 0 || send_all(fd, req, len)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	char *r = read_all(fd, n);
	close(fd);
	if (r && !strncmp(r, "HTTP/1.1 ", 9))
		*code = atoi(r + 9);
	return r;
}

static char *request(const char *addr, const char *req, int *code, size_t *n)
{
	return request_n(addr, req, strlen(req), code, n);
}

static const char *body_of(const char *resp)
{
	const char *b = strstr(resp, "\r\n\r\n");
	return b ? b + 4 : "";
}

/* Waits (20 s at most) until the counter of reason reaches want. */
static int wait_refused(struct promsrv *s, int reason, uint64_t want)
{
	uint64_t end = now_ms() + 20000;
	struct prom_server_stats st;
	do {
		promsrv_stats(s, &st);
		if (st.refused[reason] >= want)
			return 1;
		usleep(20000);
	} while (now_ms() < end);
	return 0;
}

static int log_has(const char *what)
{
	for (int i = 0; i < log_count(); i++)
		if (strstr(log_line(i, NULL), what))
			return 1;
	return 0;
}

/* --- the responses ------------------------------------------------------------------------- */

static void test_responses(void)
{
	struct promsrv_cfg cfg;
	promsrv_cfg_default(&cfg);
	cfg.listen = "127.0.0.1:0";
	char err[256];
	struct promsrv *s = promsrv_start(&cfg, err, sizeof(err));
	CHECKF(s != NULL, "%s", err);
	if (!s)
		return;
	const char *addr = promsrv_address(s);
	CHECK(!strncmp(addr, "127.0.0.1:", 10) && atoi(addr + 10) > 0);
	int code;
	size_t n;
	char *r = request(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &code, &n);
	CHECK(r && code == 503);
	free(r);
	static const char body[] = "# HELP a b\n# TYPE a gauge\na 1\n";
	promsrv_publish(s, strdup(body), sizeof(body) - 1);
	r = request(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n", &code, &n);
	CHECK(r && code == 200);
	CHECK(r && strstr(r, "\r\nContent-Type: " PROM_CONTENT_TYPE "\r\n"));
	CHECK(r && strstr(r, "\r\nContent-Length: 30\r\n"));
	CHECK(r && !strcmp(body_of(r), body));
	free(r);
	r = request(addr, "GET /metrics?name[]=a HTTP/1.0\n\n", &code, &n); /* bare LFs, a query */
	CHECK(r && code == 200 && !strcmp(body_of(r), body));
	free(r);
	r = request(addr, "HEAD /metrics HTTP/1.1\r\n\r\n", &code, &n);
	CHECK(r && code == 200 && strstr(r, "Content-Length: 30\r\n") && !*body_of(r));
	free(r);
	r = request(addr, "GET / HTTP/1.1\r\n\r\n", &code, &n);
	CHECK(r && code == 200 && strstr(body_of(r), "/metrics"));
	free(r);
	r = request(addr, "GET /secret HTTP/1.1\r\n\r\n", &code, &n);
	CHECK(r && code == 404);
	free(r);
	r = request(addr, "POST /metrics HTTP/1.1\r\n\r\n", &code, &n);
	CHECK(r && code == 405 && strstr(r, "\r\nAllow: GET, HEAD\r\n"));
	free(r);
	r = request(addr, "\x16\x03\x01 hello\r\n\r\n", &code, &n); /* TLS or noise */
	CHECK(r && code == 400);
	free(r);
	CHECK(wait_refused(s, PROM_REF_BAD_REQUEST, 1));
	struct prom_server_stats st;
	promsrv_stats(s, &st);
	CHECK(st.scrapes == 2);	 /* the two complete GETs of the metrics */
	CHECK(st.requests == 8); /* 503, 200 x2, HEAD, /, 404, 405, 400 */
	CHECK(st.published == 1);
	int before = log_count();
	promsrv_flush_log(s);
	CHECK(log_count() == before + 1 && log_has("not an HTTP/1 request"));
	promsrv_stop(s);
}

/* --- the limits ---------------------------------------------------------------------------- */

static void test_limits(void)
{
	struct promsrv_cfg cfg;
	promsrv_cfg_default(&cfg);
	cfg.listen = "0";
	cfg.max_conns = 2;
	cfg.read_timeout_ms = 300;
	cfg.max_request = 1024;
	char err[256];
	struct promsrv *s = promsrv_start(&cfg, err, sizeof(err));
	CHECKF(s != NULL, "%s", err);
	if (!s)
		return;
	const char *addr = promsrv_address(s);
	promsrv_publish(s, strdup("a 1\n"), 4);
	int code;
	size_t n;
	/* over the size limit: 431 without waiting for the end of the headers */
	char big[2048];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	memcpy(big, "GET /metrics HTTP/1.1\r\nX: ", 26);
	char *r = request(addr, big, &code, &n);
	CHECK(r && code == 431);
	free(r);
	CHECK(wait_refused(s, PROM_REF_TOO_LARGE, 1));
	/* an idle client is dropped at the read timeout */
	int idle = dial(addr);
	r = read_all(idle, &n);
	CHECK(r && n == 0); /* closed without a response */
	free(r);
	close(idle);
	CHECK(wait_refused(s, PROM_REF_READ_TIMEOUT, 1));
	promsrv_flush_log(s);
	CHECK(log_has("request over the size limit"));
	CHECK(log_has("no complete request in time"));
	promsrv_stop(s);
	/* two idle connections fill the slots: a third, idle too, gets 503
	 * (from the reserved slot, at most 1 s later). A long read timeout
	 * keeps the first two in their slots however slow this machine is. */
	cfg.read_timeout_ms = 60000;
	s = promsrv_start(&cfg, err, sizeof(err));
	CHECKF(s != NULL, "%s", err);
	if (!s)
		return;
	addr = promsrv_address(s);
	promsrv_publish(s, strdup("a 1\n"), 4);
	int a = dial(addr), b = dial(addr), c = dial(addr);
	r = read_all(c, &n);
	CHECK(r && !strncmp(r, "HTTP/1.1 503 ", 13));
	free(r);
	close(c);
	CHECK(wait_refused(s, PROM_REF_BUSY, 1));
	close(a);
	close(b);
	/* once they are gone, scrapes work again */
	uint64_t end = now_ms() + 20000;
	do {
		r = request(addr, "GET /metrics HTTP/1.1\r\n\r\n", &code, &n);
		free(r);
	} while (code != 200 && now_ms() < end && !usleep(50000));
	CHECK(code == 200);
	promsrv_flush_log(s);
	CHECK(log_has("too many connections (2 open)"));
	promsrv_stop(s);
}

/* A client that reads slowly gets the snapshot it asked for, whole, while
 * newer ones are published; one that never reads is dropped. */
static void test_slow_reader(void)
{
	struct promsrv_cfg cfg;
	promsrv_cfg_default(&cfg);
	cfg.listen = "127.0.0.1:0";
	cfg.write_timeout_ms = 20000;
	char err[256];
	struct promsrv *s = promsrv_start(&cfg, err, sizeof(err));
	CHECKF(s != NULL, "%s", err);
	if (!s)
		return;
	const char *addr = promsrv_address(s);
	size_t big = 32u << 20;
	char *first = malloc(big);
	for (size_t i = 0; i < big; i++)
		first[i] = (char)('a' + i % 26);
	char *copy = malloc(big);
	memcpy(copy, first, big);
	promsrv_publish(s, first, big);
	int fd = dial(addr);
	const char *req = "GET /metrics HTTP/1.1\r\n\r\n";
	CHECK(send_all(fd, req, strlen(req)) == 0);
	/* the server is now blocked on this client: publishing goes on */
	uint64_t end = now_ms() + 20000;
	struct prom_server_stats st;
	do {
		promsrv_stats(s, &st);
	} while (st.requests < 1 && now_ms() < end && !usleep(10000));
	for (int i = 0; i < 10; i++)
		promsrv_publish(s, strdup("newer 1\n"), 8);
	size_t n;
	char *r = read_all(fd, &n);
	close(fd);
	const char *body = r ? body_of(r) : "";
	CHECK(r && n - (size_t)(body - r) == big && !memcmp(body, copy, big));
	free(r);
	free(copy);
	int code;
	r = request(addr, "GET /metrics HTTP/1.1\r\n\r\n", &code, &n);
	CHECK(r && code == 200 && !strcmp(body_of(r), "newer 1\n"));
	free(r);
	promsrv_stop(s);

	/* a client that never reads is dropped at the write timeout */
	cfg.write_timeout_ms = 300;
	s = promsrv_start(&cfg, err, sizeof(err));
	CHECKF(s != NULL, "%s", err);
	if (!s)
		return;
	addr = promsrv_address(s);
	char *huge = malloc(big);
	memset(huge, 'z', big);
	promsrv_publish(s, huge, big);
	fd = dial(addr);
	int small = 4096;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	CHECK(send_all(fd, req, strlen(req)) == 0);
	CHECK(wait_refused(s, PROM_REF_WRITE_TIMEOUT, 1));
	close(fd);
	promsrv_flush_log(s);
	CHECK(log_has("response not taken in time"));
	promsrv_stats(s, &st);
	CHECK(st.scrapes == 0);
	promsrv_stop(s);
}

/* The stat files of the threads of this process but the main one, opened
 * once (reading them needs no descriptor later, when there is none). */
#define MAXTH 16
static int th_fd[MAXTH], nth;

static void open_thread_stats(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	nth = 0;
	while (d && (de = readdir(d)) && nth < MAXTH) {
		int tid = atoi(de->d_name);
		if (tid <= 0 || tid == (int)getpid())
			continue;
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			th_fd[nth++] = fd;
	}
	if (d)
		closedir(d);
}

/* CPU time (s) of those threads. */
static double other_threads_cpu(void)
{
	double t = 0;
	for (int i = 0; i < nth; i++) {
		char line[1024];
		ssize_t n = pread(th_fd[i], line, sizeof(line) - 1, 0);
		if (n <= 0)
			continue;
		line[n] = 0;
		char *close = strrchr(line, ')');
		unsigned long ut = 0, st = 0;
		if (close &&
		    sscanf(close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
			   &st) == 2)
			t += (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
	}
	return t;
}

/* Out of descriptors: accept() fails with EMFILE while a connection waits.
 * The thread must not spin on the ready listening socket, and must serve
 * the connection once descriptors are free again. */
static void test_out_of_fds(void)
{
	struct promsrv_cfg cfg;
	promsrv_cfg_default(&cfg);
	cfg.listen = "127.0.0.1:0";
	char err[256];
	struct promsrv *s = promsrv_start(&cfg, err, sizeof(err));
	CHECKF(s != NULL, "%s", err);
	if (!s)
		return;
	promsrv_publish(s, strdup("a 1\n"), 4);
	open_thread_stats();
	CHECK(nth == 1); /* the server's */
	struct rlimit old, low;
	getrlimit(RLIMIT_NOFILE, &old);
	int probe = dup(0); /* the lowest free descriptor: the client's socket gets it */
	close(probe);
	low = old;
	low.rlim_cur = (rlim_t)probe + 1;
	CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
	int fd = dial(promsrv_address(s));
	CHECK(fd == probe);
	const char *req = "GET /metrics HTTP/1.1\r\n\r\n";
	CHECK(fd >= 0 && send_all(fd, req, strlen(req)) == 0);
	double c0 = other_threads_cpu();
	usleep(1000000); /* the server sees the connection and cannot take it */
	double spent = other_threads_cpu() - c0;
	CHECKF(spent < 0.5, "the server thread used %.2f s of CPU in 1 s without descriptors",
	       spent);
	CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
	size_t n;
	char *r = read_all(fd, &n);
	CHECK(r && !strncmp(r, "HTTP/1.1 200 ", 13) && !strcmp(body_of(r), "a 1\n"));
	free(r);
	close(fd);
	for (int i = 0; i < nth; i++)
		close(th_fd[i]);
	promsrv_stop(s);
}

static void test_bind_error(void)
{
	struct promsrv_cfg cfg;
	promsrv_cfg_default(&cfg);
	cfg.listen = "127.0.0.1:0";
	char err[256];
	struct promsrv *a = promsrv_start(&cfg, err, sizeof(err));
	CHECK(a != NULL);
	if (!a)
		return;
	char again[64];
	snprintf(again, sizeof(again), "%s", promsrv_address(a));
	cfg.listen = again;
	struct promsrv *b = promsrv_start(&cfg, err, sizeof(err));
	CHECK(b == NULL);
	CHECKF(strstr(err, "cannot listen on 127.0.0.1:") && strstr(err, "in use"), "%s", err);
	promsrv_stop(b);
	cfg.listen = "9x";
	CHECK(promsrv_start(&cfg, err, sizeof(err)) == NULL);
	CHECKF(strstr(err, "invalid --prometheus address"), "%s", err);
	promsrv_stop(a);
	promsrv_stop(NULL);
}

/* A NUL byte in the request head is not HTTP: 400 at once. Before, the
 * end of the head was looked for with strstr, which stops at the NUL: the
 * connection held its slot until the read timeout and got no answer. The
 * status code tells which happened; the read timeout is long here, so no
 * slow machine can make the 400 come by way of it. */
static void test_nul(void)
{
	struct promsrv_cfg cfg;
	promsrv_cfg_default(&cfg);
	cfg.listen = "127.0.0.1:0";
	cfg.read_timeout_ms = 15000;
	char err[256];
	struct promsrv *s = promsrv_start(&cfg, err, sizeof(err));
	CHECKF(s != NULL, "%s", err);
	if (!s)
		return;
	const char *addr = promsrv_address(s);
	promsrv_publish(s, strdup("a 1\n"), 4);
	static const struct {
		const char *req;
		size_t len;
	} bad[] = {
	    {"GET /metrics HTTP/1.1\r\nX: a\0b\r\n\r\n", 33}, /* a whole head */
	    {"\0GET /metrics HTTP/1.1\r\n\r\n", 26},
	    {"GET /met\0", 9}, /* no end of the head: answered all the same */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int code;
		size_t n;
		uint64_t t0 = now_ms();
		char *r = request_n(addr, bad[i].req, bad[i].len, &code, &n);
		CHECKF(r && code == 400, "case %zu: status %d after %llu ms", i, code,
		       (unsigned long long)(now_ms() - t0));
		CHECKF(r && strstr(body_of(r), "NUL"), "case %zu: %s", i, r ? r : "(none)");
		free(r);
	}
	/* bytes after the head are not read as part of it */
	int code;
	size_t n;
	char *r = request_n(addr, "GET /metrics HTTP/1.1\r\n\r\n\0", 26, &code, &n);
	CHECK(r && code == 200 && !strcmp(body_of(r), "a 1\n"));
	free(r);
	CHECK(wait_refused(s, PROM_REF_BAD_REQUEST, 3));
	struct prom_server_stats st;
	promsrv_stats(s, &st);
	CHECK(st.refused[PROM_REF_BAD_REQUEST] == 3);
	CHECK(st.refused[PROM_REF_READ_TIMEOUT] == 0);
	CHECK(st.requests == 4 && st.scrapes == 1);
	promsrv_flush_log(s);
	CHECK(log_has("NUL byte in the request"));
	promsrv_stop(s);
}

/* Reads the status line of fd's response (20 s at most): its code, 0 when
 * closed without one. */
static int status_of(int fd)
{
	size_t n;
	char *r = read_all(fd, &n);
	int code = r && !strncmp(r, "HTTP/1.1 ", 9) ? atoi(r + 9) : 0;
	free(r);
	return code;
}

/* Every slot held by a slow client (a request begun, never finished): a
 * scraper, whose request is whole, still gets 200 in the reserved slot;
 * slow clients that come on top get 503, either when a newer connection
 * takes the reserved slot from them or when it has waited its while. */
static void test_reserved(void)
{
	struct promsrv_cfg cfg;
	promsrv_cfg_default(&cfg);
	cfg.listen = "127.0.0.1:0";
	cfg.read_timeout_ms = 60000; /* the slow ones hold their slots all along */
	char err[256];
	struct promsrv *s = promsrv_start(&cfg, err, sizeof(err));
	CHECKF(s != NULL, "%s", err);
	if (!s)
		return;
	const char *addr = promsrv_address(s);
	promsrv_publish(s, strdup("a 1\n"), 4);
	static const char part[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
	int slow[10];
	for (int i = 0; i < 10; i++) {
		slow[i] = dial(addr);
		CHECK(slow[i] >= 0 && send_all(slow[i], part, sizeof(part) - 1) == 0);
	}
	/* the 9th went to the reserved slot, the 10th took it over (or the 9th
	 * waited its while there): the 8 slots are full */
	CHECK(wait_refused(s, PROM_REF_BUSY, 1));
	CHECK(status_of(slow[8]) == 503);
	for (int k = 0; k < 3; k++) {
		int code;
		size_t n;
		char *r = request(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &code, &n);
		CHECKF(r && code == 200 && !strcmp(body_of(r), "a 1\n"), "scrape %d: %d", k, code);
		free(r);
	}
	CHECK(status_of(slow[9]) == 503);
	/* a request that comes a little after its connection still makes it */
	int late = dial(addr);
	usleep(100000);
	static const char req[] = "GET /metrics HTTP/1.1\r\n\r\n";
	CHECK(late >= 0 && send_all(late, req, sizeof(req) - 1) == 0);
	CHECK(status_of(late) == 200);
	close(late);
	struct prom_server_stats st;
	promsrv_stats(s, &st);
	CHECK(st.scrapes == 4);
	CHECK(st.refused[PROM_REF_BUSY] == 2);
	CHECK(st.refused[PROM_REF_READ_TIMEOUT] == 0); /* the 8 still held */
	/* a slow client that connects after a scraper, before the scraper's
	 * request comes, does not take the slot from it */
	int lag = dial(addr), intruder = dial(addr);
	CHECK(intruder >= 0 && send_all(intruder, part, sizeof(part) - 1) == 0);
	CHECK(status_of(intruder) == 503);
	CHECK(lag >= 0 && send_all(lag, req, sizeof(req) - 1) == 0);
	CHECK(status_of(lag) == 200);
	close(lag);
	close(intruder);
	promsrv_flush_log(s);
	CHECK(log_has("too many connections (8 open)"));
	for (int i = 0; i < 10; i++)
		close(slow[i]);
	/* once they are gone, the slots serve again */
	uint64_t end = now_ms() + 20000;
	int code;
	do {
		size_t n;
		char *r = request(addr, "GET /metrics HTTP/1.1\r\n\r\n", &code, &n);
		free(r);
	} while (code != 200 && now_ms() < end && !usleep(50000));
	CHECK(code == 200);
	promsrv_stop(s);
}

int main(void)
{
	test_parse();
	test_responses();
	test_limits();
	test_slow_reader();
	test_nul();
	test_reserved();
	test_out_of_fds();
	test_bind_error();
	return check_done("test_promsrv");
}
