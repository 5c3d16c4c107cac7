/* The fleet client without ssh (src/fleet): host lists and their errors,
 * shell quoting, stream lines read into struct fleet_host, the NCCL join
 * with a known late rank under clock offsets, the order of the hosts,
 * what ssh's stderr and exit status mean, and the two outputs. Nothing is
 * spawned: fleet_new starts no connection, fleet_feed plays the lines. */
#include "check.h"

#include "core/json.h"
#include "fleet/fleet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void free_hosts(char **h, int n)
{
	for (int i = 0; i < n; i++)
		free(h[i]);
	free(h);
}

/* The error of one --ssh list ("" when it parses). */
static const char *split_err(const char *list)
{
	static char err[300];
	char **h = NULL;
	int n = 0;
	err[0] = 0;
	if (fleet_split_hosts(list, &h, &n, err, sizeof(err)) >= 0)
		err[0] = 0;
	free_hosts(h, n);
	return err;
}

static void test_hosts(void)
{
	char **h = NULL, err[300];
	int n = 0;
	CHECK(fleet_split_hosts("gpu1, admin@gpu2:2222,[::1]:22,gpu_4.lab-x", &h, &n, err,
				sizeof(err)) == 4);
	CHECK(n == 4 && !strcmp(h[0], "gpu1") && !strcmp(h[1], "admin@gpu2:2222") &&
	      !strcmp(h[2], "[::1]:22") && !strcmp(h[3], "gpu_4.lab-x"));
	free_hosts(h, n);

	CHECKF(!strcmp(split_err("a,,b"), "--ssh: an empty host in the list"), "%s",
	       split_err("a,,b"));
	CHECK(strstr(split_err("a,"), "an empty host"));
	CHECK(strstr(split_err(""), "an empty host"));
	CHECKF(!strcmp(split_err("gpu1:0"),
		       "--ssh: invalid host 'gpu1:0': bad port (a number from 1 to 65535)"),
	       "%s", split_err("gpu1:0"));
	CHECK(strstr(split_err("gpu1:70000"), "bad port"));
	CHECK(strstr(split_err("gpu1:22x"), "bad port"));
	CHECK(strstr(split_err("gpu1:"), "bad port"));
	CHECK(strstr(split_err("-oProxyCommand=x"), "cannot start with '-'"));
	CHECK(strstr(split_err("a b"), "letters, digits"));
	CHECK(strstr(split_err("@gpu"), "empty user"));
	CHECK(strstr(split_err("u@v@gpu"), "more than one '@'"));
	CHECK(strstr(split_err("gpu1,gpu1"), "listed twice"));
	CHECK(strstr(split_err("g\033[2Jx"), "'g\\x1b[2Jx'")); /* escaped in the message */

	/* too many: FLEET_MAX_HOSTS + 1 */
	size_t cap = (FLEET_MAX_HOSTS + 1) * 8;
	char *big = malloc(cap), *p = big;
	for (int i = 0; i <= FLEET_MAX_HOSTS; i++)
		p += sprintf(p, "%sh%d", i ? "," : "", i);
	CHECKF(!strcmp(split_err(big), "--ssh: too many hosts (512 at most)"), "%s",
	       split_err(big));
	free(big);

	/* a hosts file: comments, blank lines, spaces; then a bad line named */
	char path[] = "/tmp/test_fleet_hosts.XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	fputs("# the fleet\n\ngpu1\n  root@gpu2:2200   # rack 2\n\t\n", f);
	fclose(f);
	h = NULL;
	n = 0;
	CHECK(fleet_read_hosts_file(path, &h, &n, err, sizeof(err)) == 2);
	CHECK(n == 2 && !strcmp(h[0], "gpu1") && !strcmp(h[1], "root@gpu2:2200"));
	f = fopen(path, "a");
	fputs("gpu3:99999\n", f);
	fclose(f);
	free_hosts(h, n);
	h = NULL;
	n = 0;
	CHECK(fleet_read_hosts_file(path, &h, &n, err, sizeof(err)) == -1);
	char want[400];
	snprintf(want, sizeof(want), "%s:6: invalid host 'gpu3:99999': bad port", path);
	CHECKF(!strncmp(err, want, strlen(want)), "%s", err);
	free_hosts(h, n);
	f = fopen(path, "w");
	fputs("# nothing\n", f);
	fclose(f);
	h = NULL;
	n = 0;
	CHECK(fleet_read_hosts_file(path, &h, &n, err, sizeof(err)) == -1 &&
	      strstr(err, "lists no host"));
	unlink(path);
	CHECK(fleet_read_hosts_file(path, &h, &n, err, sizeof(err)) == -1 &&
	      strstr(err, "cannot read hosts file"));
	free_hosts(h, n);
}

static void test_quote(void)
{
	char b[200];
	CHECK(!fleet_shell_quote("ingero-top", b, sizeof(b)) && !strcmp(b, "ingero-top"));
	CHECK(!fleet_shell_quote("a b", b, sizeof(b)) && !strcmp(b, "'a b'"));
	CHECK(!fleet_shell_quote("it's", b, sizeof(b)) && !strcmp(b, "'it'\\''s'"));
	CHECK(!fleet_shell_quote("", b, sizeof(b)) && !strcmp(b, "''"));
	CHECK(!fleet_shell_quote("$(rm -rf /);`x`", b, sizeof(b)) &&
	      !strcmp(b, "'$(rm -rf /);`x`'"));
	CHECK(fleet_shell_quote("abcdef", b, 4) == -1);
	char *args[] = {"--pid", "12,13", "--", "python3", "train.py", "--name", "my run"};
	struct fleet_opts o = {.remote_cmd = "/opt/ig/ingero-top",
			       .sudo = true,
			       .remote_args = args,
			       .nremote_args = 7};
	CHECK(!fleet_remote_line(&o, true, b, sizeof(b)));
	CHECKF(!strcmp(b, "sudo -n /opt/ig/ingero-top --stream --pid 12,13 -- python3 train.py "
			  "--name 'my run'"),
	       "%s", b);
	CHECK(fleet_remote_line(&o, true, b, 20) == -1);
}

static const char hello[] =
    "{\"type\":\"hello\",\"stream\":1,\"version\":\"0.1.0\",\"host\":\"gpu1\",\"pid\":9,"
    "\"realtime_ns\":1,\"interval_s\":0.5,\"window_s\":10,\"target\":\"all\",\"new\":[1]}";

/* A frame of one process whose top op has this p99; chains as given. */
static void frame(char *buf, size_t len, uint64_t p99, const char *chains, const char *nccl)
{
	snprintf(buf, len,
		 "{\"type\":\"frame\",\"stream\":1,\"seq\":1,\"realtime_ns\":5,\"window_s\":10,"
		 "\"status\":{\"events_per_s\":12.5,\"drops_kernel\":3,\"drops_user\":4,\"done\":"
		 "false,\"nvml\":\"ok\"},"
		 "\"procs\":[{\"pid\":812,\"comm\":\"python3\",\"exited\":false,\"calls_per_s\":9,"
		 "\"gpu_pct\":61.5,\"cpu_pct\":20,\"pre_pct\":null,\"wait_pct\":\"x\","
		 "\"top_op\":{\"op\":\"cudaStreamSynchronize\",\"p99_ns\":%llu}},"
		 "{\"pid\":813,\"comm\":\"w\",\"top_op\":null}, 7],"
		 "\"chains\":%s,"
		 "\"gpus\":[{\"index\":0,\"util_gpu_pct\":80,\"mem_used\":100,\"mem_total\":1000},"
		 "{\"index\":1,\"util_gpu_pct\":40,\"mem_used\":50,\"mem_total\":1000}]%s%s}",
		 (unsigned long long)p99, chains, nccl ? ",\"nccl\":" : "", nccl ? nccl : "");
}

static const char chain_hog[] =
    "[{\"id\":\"chain-0001\",\"severity\":\"INFO\",\"class\":\"note\",\"impact\":0.9},"
    "{\"id\":\"chain-0002\",\"severity\":\"HIGH\",\"class\":\"cpu_contention\","
    "\"op\":\"cudaStreamSynchronize\",\"pid\":812,\"comm\":\"python3\",\"culprit_pid\":2231,"
    "\"culprit_comm\":\"stress-ng\",\"impact\":0.71,\"summary\":\"preempted\",\"advice\":"
    "\"move it\"}]";

static struct fleet *new_fleet(const char **hosts, int n)
{
	struct fleet_opts o = {.hosts = hosts, .nhosts = n, .interval_s = 1};
	return fleet_new(&o);
}

static void test_lines(void)
{
	const char *hosts[] = {"root@gpu1:2222", "gpu2", "gpu3"};
	struct fleet *f = new_fleet(hosts, 3);
	char buf[4096];
	CHECK(f && fleet_nhosts(f) == 3);
	const struct fleet_host *h = fleet_host(f, 0);
	CHECK(!strcmp(h->name, "gpu1:2222") && !strcmp(h->spec, "root@gpu1:2222"));
	CHECK(h->state == FLEET_CONNECTING);
	CHECK(fleet_feed(f, 0, hello, 100) == 0);
	CHECK(h->state == FLEET_LIVE && !strcmp(h->version, "0.1.0") &&
	      !strcmp(h->hostname, "gpu1") && h->interval_s == 0.5);
	frame(buf, sizeof(buf), 12000000, chain_hog, NULL);
	CHECK(fleet_feed(f, 0, buf, 200) == 0);
	CHECK(h->frames == 1 && h->last_frame_ms == 200 && h->drops == 7 &&
	      h->events_per_s == 12.5);
	CHECK(h->nprocs == 2 && h->procs[0].pid == 812 && !strcmp(h->procs[0].comm, "python3"));
	CHECK(h->procs[0].gpu_pct == 61.5 && h->procs[0].cpu_pct == 20);
	CHECK(h->procs[0].pre_pct < 0 && h->procs[0].wait_pct < 0); /* null, a string */
	CHECK(!strcmp(h->procs[0].top_op, "cudaStreamSynchronize") &&
	      h->procs[0].p99_ns == 12000000 && h->procs[0].p99_prev_ns == 0);
	CHECK(h->procs[1].top_op[0] == 0 && h->procs[1].p99_ns == 0);
	CHECK(h->nchains == 2 && !strcmp(h->worst.cls, "cpu_contention") &&
	      h->worst.impact == 0.71 && h->worst.culprit_pid == 2231 &&
	      !strcmp(h->worst.advice, "move it"));
	CHECK(h->gpu.n == 2 && h->gpu.util_pct == 60 && h->gpu.mem_used == 150 &&
	      h->gpu.mem_total == 2000);
	frame(buf, sizeof(buf), 15000000, "[]", NULL);
	CHECK(fleet_feed(f, 0, buf, 300) == 0);
	CHECK(h->procs[0].p99_ns == 15000000 && h->procs[0].p99_prev_ns == 12000000);
	CHECK(h->nchains == 0 && h->worst.cls[0] == 0);

	/* unknown types are ignored; what is not a stream object is not */
	CHECK(fleet_feed(f, 0, "{\"type\":\"future\",\"stream\":1}", 300) == 0);
	CHECK(fleet_feed(f, 0, "not json", 300) == -1);
	CHECK(fleet_feed(f, 0, "[1,2]", 300) == -1);
	CHECK(fleet_feed(f, 0, "{\"stream\":1}", 300) == -1);
	CHECK(h->state == FLEET_LIVE);

	/* another stream version; an error line; the end */
	CHECK(fleet_feed(f, 1, "{\"type\":\"hello\",\"stream\":2,\"version\":\"9.0\"}", 1) == 0);
	h = fleet_host(f, 1);
	CHECKF(h->state == FLEET_FAILED &&
		   !strcmp(h->why, "version mismatch: ingero-top there speaks stream 2, this "
				   "one 1: install the same version on both"),
	       "%s", h->why);
	frame(buf, sizeof(buf), 1, "[]", NULL);
	fleet_feed(f, 1, buf, 2);
	CHECK(h->frames == 0 && h->state == FLEET_FAILED); /* not read further */
	fleet_feed(f, 2, hello, 1);
	fleet_feed(f, 2, "{\"type\":\"error\",\"stream\":1,\"message\":\"not root\\n\\u001b[2J\"}",
		   2);
	h = fleet_host(f, 2);
	CHECKF(h->state == FLEET_FAILED && !strcmp(h->why, "not root\\n\\x1b[2J"), "%s", h->why);
	fleet_free(f);

	f = new_fleet(hosts, 1);
	fleet_feed(f, 0, hello, 1);
	fleet_feed(f, 0, "{\"type\":\"end\",\"stream\":1,\"reason\":\"command exited 0\"}", 2);
	CHECK(fleet_host(f, 0)->state == FLEET_ENDED &&
	      !strcmp(fleet_host(f, 0)->why, "command exited 0"));
	CHECK(fleet_done(f));
	fleet_free(f);
}

/* Collectives 1..n of comm 0x1a2b3c: rank r on host r, at base + r ms,
 * rank late_rank late_ms later, each host's clock ahead by skew[r]. */
static void feed_collectives(struct fleet *f, int nranks, int late_rank, int late_ms,
			     const int64_t *skew, int from, int n)
{
	size_t cap = 64 + (size_t)n * 48;
	for (int r = 0; r < nranks; r++) {
		char *arr = malloc(cap), *p = arr;
		p += sprintf(p, "[");
		for (int s = from; s < from + n; s++) {
			int64_t t = 1800000000000000000LL + (int64_t)s * 100000000 +
				    (int64_t)r * 1000000 +
				    (r == late_rank ? late_ms * 1000000LL : 0) + skew[r];
			p += sprintf(p, "%s[%d,%lld]", s > from ? "," : "", s, (long long)t);
		}
		sprintf(p, "]");
		char *line = malloc(cap + 4096), nccl[200];
		snprintf(nccl, sizeof(nccl),
			 "[{\"pid\":%d,\"key\":1715004,\"rank\":%d,\"nranks\":%d,\"ops_win\":%d,"
			 "\"arrivals\":",
			 800 + r, r, nranks, n);
		char *ncc = malloc(cap + 300);
		sprintf(ncc, "%s%s}]", nccl, arr);
		frame(line, cap + 4096, 1000, "[]", ncc);
		fleet_feed(f, r, line, 10);
		free(arr);
		free(ncc);
		free(line);
	}
}

static void test_straggler(void)
{
	const char *hosts[] = {"h0", "h1", "h2"};
	struct fleet *f = new_fleet(hosts, 3);
	struct fleet_straggler s;
	int64_t skew[3] = {0, 5000000000LL, -2000000000LL}; /* h1 5 s ahead, h2 2 s behind */
	for (int i = 0; i < 3; i++)
		fleet_feed(f, i, hello, 1);
	fleet_set_clock(f, 1, skew[1], 200000);
	fleet_set_clock(f, 2, skew[2], 50000);
	feed_collectives(f, 3, 2, 12, skew, 1, 50);
	fleet_straggler(f, &s);
	CHECK(s.found && s.key == 1715004 && s.rank == 2 && s.nranks == 3 && s.host == 2 &&
	      s.pid == 802);
	CHECKF(s.collectives == 50 && s.last_count == 50, "%llu %llu",
	       (unsigned long long)s.collectives, (unsigned long long)s.last_count);
	/* arrivals at 0, 1 and 2+12 ms: 13.5 ms after the others' median (0.5 ms) */
	CHECKF(s.late_mean_ns == 13500000 && s.late_max_ns == 13500000, "%llu",
	       (unsigned long long)s.late_mean_ns);
	CHECK(s.unc_ns == 200000);
	CHECK(fleet_host(f, 2)->straggler && !fleet_host(f, 0)->straggler);

	char buf[8192];
	FILE *m = fmemopen(buf, sizeof(buf), "w");
	fleet_print_text(m, f);
	fclose(m);
	CHECKF(strstr(buf, "\nstraggler: rank 2 of comm 0x1a2b3c on h2 (pid 802): last in 50 of "
			   "50 collectives, 13.5ms after the others' median (clock \u00b1200us)\n"),
	       "%s", buf);
	CHECK(strstr(buf, "\n*h2 "));
	/* a host with two processes: its row, then one per process */
	CHECKF(strstr(buf, "\n  812/python3                      62%   20%     -     - "
			   "cudaStreamSynchronize      1.00us (new)\n"),
	       "%s", buf);
	CHECK(strstr(buf, "\n  813/w                              -     -     -     - -"
			  "                               -\n"));
	if (getenv("TEST_FLEET_SHOW"))
		fputs(buf, stderr);

	/* the table is bounded: 3000 more collectives, the recent 1024 kept */
	feed_collectives(f, 3, 2, 12, skew, 51, 3000);
	fleet_straggler(f, &s);
	CHECKF(s.found && s.collectives == 1024 && s.last_count == 1024, "%llu",
	       (unsigned long long)s.collectives);
	fleet_free(f);

	/* without the clock correction, the host 5 s ahead looks last */
	f = new_fleet(hosts, 3);
	for (int i = 0; i < 3; i++)
		fleet_feed(f, i, hello, 1);
	feed_collectives(f, 3, 2, 12, skew, 1, 20);
	fleet_straggler(f, &s);
	CHECK(s.found && s.rank == 1);
	fleet_free(f);

	/* no one late: the last rank changes, no straggler named */
	f = new_fleet(hosts, 2);
	int64_t none[3] = {0, 0, 0};
	for (int k = 0; k < 20; k++)
		feed_collectives(f, 2, k % 2, 2, none, 1 + k, 1);
	fleet_straggler(f, &s);
	CHECK(!s.found && s.collectives == 20);
	fleet_free(f);
}

/* a host in a given state with a chain of this impact (<0: none) */
static void make_host(struct fleet *f, int i, const char *state_line, double impact)
{
	char chain[300], buf[4096];
	if (state_line) {
		fleet_feed(f, i, state_line, 1);
		return;
	}
	fleet_feed(f, i, hello, 1);
	snprintf(chain, sizeof(chain),
		 "[{\"id\":\"c\",\"severity\":\"HIGH\",\"class\":\"io_stall\",\"impact\":%g}]",
		 impact);
	frame(buf, sizeof(buf), 1000, impact < 0 ? "[]" : chain, NULL);
	fleet_feed(f, i, buf, 1);
}

static void test_order(void)
{
	const char *hosts[] = {"b-healthy", "c-chain3",	    "d-chain7",
			       "e-failed",  "a-connecting", "a-healthy"};
	struct fleet *f = new_fleet(hosts, 6);
	make_host(f, 0, NULL, -1);
	make_host(f, 1, NULL, 0.3);
	make_host(f, 2, NULL, 0.7);
	make_host(f, 3, "{\"type\":\"hello\",\"stream\":7}", 0);
	make_host(f, 5, NULL, -1);
	int idx[6];
	CHECK(fleet_order(f, idx, 6) == 6);
	CHECKF(idx[0] == 2 && idx[1] == 1 && idx[2] == 3 && idx[3] == 4 && idx[4] == 5 &&
		   idx[5] == 0,
	       "%d %d %d %d %d %d", idx[0], idx[1], idx[2], idx[3], idx[4], idx[5]);
	CHECK(fleet_host(f, 2)->score_rank == 0 && fleet_host(f, 0)->score_rank == 5);
	CHECK(fleet_order(f, idx, 2) == 2 && idx[0] == 2);

	/* JSON: one line, worst first, nulls where nothing is known */
	char buf[16384];
	FILE *m = fmemopen(buf, sizeof(buf), "w");
	CHECK(fleet_print_json(m, f) == 0);
	fclose(m);
	CHECK(strchr(buf, '\n') == buf + strlen(buf) - 1);
	json_t *o = ig_json_parse(buf);
	CHECK(o && !strcmp(ig_json_get_str(o, "type", ""), "fleet") &&
	      ig_json_get_int(o, "stream", 0) == 1 && ig_json_get_int(o, "total", 0) == 6 &&
	      ig_json_get_int(o, "live", 0) == 4);
	json_t *hs = json_object_get(o, "hosts");
	CHECK(json_array_size(hs) == 6 &&
	      !strcmp(ig_json_get_str(json_array_get(hs, 0), "host", ""), "d-chain7") &&
	      !strcmp(ig_json_get_str(json_array_get(hs, 2), "state", ""), "failed"));
	json_t *p0 = json_array_get(json_object_get(json_array_get(hs, 0), "procs"), 0);
	CHECK(json_is_null(json_object_get(p0, "pre_pct")) &&
	      ig_json_get_num(p0, "gpu_pct", 0) == 61.5);
	CHECK(json_is_null(json_object_get(o, "straggler")));
	json_decref(o);
	fleet_free(f);
}

static void classify(const char *err, int code, enum fleet_state want, const char *why_has)
{
	char why[FLEET_WHY_LEN];
	enum fleet_state s = fleet_classify(err, code << 8, NULL, why, sizeof(why));
	CHECKF(s == want && strstr(why, why_has), "%s -> %s: %s", err, fleet_state_name(s), why);
}

static void test_classify(void)
{
	classify("@@@\n@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @\n"
		 "Host key verification failed.\n",
		 255, FLEET_REFUSED,
		 "host key does not match known_hosts: refused (ssh said: Host key verification "
		 "failed.)");
	classify("No ED25519 host key is known for gpu4 and you have requested strict "
		 "checking.\nHost key verification failed.\n",
		 255, FLEET_REFUSED,
		 "host key is not in known_hosts: refused (ssh said: Host key verification failed.)");
	classify("Host key verification failed.\n", 255, FLEET_REFUSED,
		 "host key was not verified: refused (ssh said: Host key verification failed.)");
	classify("root@gpu4: Permission denied (publickey,password).\n", 255, FLEET_REFUSED,
		 "authentication refused (BatchMode: no password prompt; ssh said: root@gpu4: "
		 "Permission denied (publickey,password).)");
	classify("ssh: connect to host gpu4 port 22: Connection refused\n", 255, FLEET_RETRY,
		 "ssh: connect to host gpu4 port 22: Connection refused");
	classify("ssh: connect to host 10.0.0.9 port 22: Connection timed out\n", 255, FLEET_RETRY,
		 "Connection timed out");
	classify("ssh: connect to host gpu4 port 22: No route to host\n", 255, FLEET_RETRY,
		 "No route to host");
	classify("ssh: Could not resolve hostname gpu9: Name or service not known\n", 255,
		 FLEET_RETRY, "Could not resolve hostname gpu9");
	classify("bash: line 1: ingero-top: command not found\n", 127, FLEET_FAILED,
		 "ingero-top is not installed there (not on the remote PATH)");
	classify("sh: 1: /opt/ingero-top: No such file or directory\n", 2, FLEET_FAILED,
		 "is not installed there");
	classify("ingero-top: invalid option '--stream': unknown option\n", 2, FLEET_FAILED,
		 "ingero-top there is older (no --stream; stream 1 needed)");
	classify("ingero-top: unrecognized option '--stream'\n", 1, FLEET_FAILED, "is older");
	classify("ingero-top: unknown or ambiguous option '--stream' (see --help)\n", 2, FLEET_FAILED,
		 "is older");
	classify("sudo: a password is required\n", 1, FLEET_FAILED,
		 "sudo -n refused: no passwordless sudo for ingero-top (sudo said: sudo: a "
		 "password is required)");
	classify("sudo: a terminal is required to read the password\n", 1, FLEET_FAILED,
		 "no passwordless sudo");
	classify("alice is not in the sudoers file.  This incident will be reported.\n", 1,
		 FLEET_FAILED, "no passwordless sudo");
	classify("Connection to gpu4 closed by remote host.\n", 255, FLEET_RETRY,
		 "Connection to gpu4 closed by remote host.");
	classify("", 0, FLEET_RETRY, "the connection ended (exit 0)");
	classify("weird\033[2J\n", 3, FLEET_RETRY, "the connection ended (exit 3): weird\\x1b[2J");
	char why[FLEET_WHY_LEN];
	CHECK(fleet_classify("", SIGKILL, NULL, why, sizeof(why)) == FLEET_RETRY &&
	      strstr(why, "ssh ended by signal 9"));
	CHECK(fleet_classify("x: command not found", 127 << 8, "/opt/ig", why, sizeof(why)) ==
		  FLEET_FAILED &&
	      strstr(why, "/opt/ig is not installed there"));
}

static void test_viewer(void)
{
	const char *hosts[] = {"alice@gpu2:2200"};
	char *args[] = {"--pid", "42"};
	struct fleet_opts o = {.hosts = hosts,
			       .nhosts = 1,
			       .ssh_config = "/etc/cfg",
			       .sudo = true,
			       .remote_args = args,
			       .nremote_args = 2};
	struct fleet *f = fleet_new(&o);
	char *argv[40], joined[1000] = "";
	int n = fleet_viewer_argv(f, 0, argv, 40);
	CHECK(n > 0 && argv[n] == NULL);
	for (int k = 0; k < n; k++)
		snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s%s",
			 k ? "|" : "", argv[k]);
	CHECKF(!strcmp(joined, "ssh|-t|-o|BatchMode=yes|-o|ServerAliveInterval=5|-o|"
			       "ServerAliveCountMax=3|-o|ConnectTimeout=10|-F|/etc/cfg|-p|2200|-l|"
			       "alice|gpu2|--|sudo -n ingero-top --pid 42"),
	       "%s", joined);
	CHECK(fleet_viewer_argv(f, 0, argv, 5) == -1);
	CHECK(fleet_viewer_argv(f, 1, argv, 40) == -1);
	fleet_free(f);
}

/* Staleness through fleet_step (its ssh program cannot run: nothing starts). */
static void test_stale(void)
{
	const char *hosts[] = {"h0"};
	struct fleet_opts o = {.hosts = hosts, .nhosts = 1, .ssh_program = "/nonexistent/ssh"};
	struct fleet *f = fleet_new(&o);
	char buf[4096];
	fleet_feed(f, 0, hello, 1000);
	frame(buf, sizeof(buf), 1000, "[]", NULL);
	fleet_feed(f, 0, buf, 1000);
	fleet_step(f, 4000);
	CHECK(fleet_host(f, 0)->state == FLEET_LIVE);
	fleet_step(f, 4001);
	CHECKF(fleet_host(f, 0)->state == FLEET_STALE &&
		       !strcmp(fleet_host(f, 0)->why, "no frame for 3s"),
	       "%s", fleet_host(f, 0)->why);
	fleet_feed(f, 0, buf, 4100);
	CHECK(fleet_host(f, 0)->state == FLEET_LIVE && !fleet_host(f, 0)->why[0]);
	fleet_free(f);

	/* a host whose ssh cannot start fails with why */
	f = fleet_new(&o);
	fleet_step(f, 1);
	CHECKF(fleet_host(f, 0)->state == FLEET_FAILED &&
		       !strcmp(fleet_host(f, 0)->why,
			       "cannot run /nonexistent/ssh: No such file or directory"),
	       "%s", fleet_host(f, 0)->why);
	CHECK(fleet_done(f));
	fleet_free(f);
}

/* Real processes: a stand-in ssh that reads its stdin and says nothing.
 * At most jobs of them connect at once; one without a hello for 30 s (of
 * the clock the test hands fleet_step) is ended and tried again later. */
static void test_silent(void)
{
	char prog[] = "/tmp/test_fleet_ssh.XXXXXX";
	int fd = mkstemp(prog);
	FILE *f0 = fdopen(fd, "w");
	fputs("#!/bin/sh\nexec cat >/dev/null\n", f0);
	fclose(f0);
	chmod(prog, 0700);
	const char *hosts[] = {"s0", "s1", "s2"};
	struct fleet_opts o = {.hosts = hosts, .nhosts = 3, .ssh_program = prog, .jobs = 2};
	struct fleet *f = fleet_new(&o);
	fleet_step(f, 1000);
	CHECK(fleet_host(f, 0)->connects == 1 && fleet_host(f, 1)->connects == 1 &&
	      fleet_host(f, 2)->connects == 0);
	struct pollfd pfd[8];
	CHECK(fleet_pollfds(f, pfd, 8) == 4); /* stdout and stderr of two */
	fleet_step(f, 11001);
	CHECK(!strcmp(fleet_host(f, 0)->why, "no answer for 10s"));
	fleet_step(f, 31001); /* both ended: their ssh is told to stop */
	uint64_t now = 31001;
	for (int k = 0; k < 100000 && fleet_host(f, 0)->state == FLEET_CONNECTING; k++) {
		usleep(1000);
		fleet_step(f, now);
	}
	const struct fleet_host *h = fleet_host(f, 0);
	CHECKF(h->state == FLEET_RETRY &&
		       !strcmp(h->why, "no answer in 30s: ended, to be tried again") &&
		       h->next_try_ms == now + 1000,
	       "%s %s", fleet_state_name(h->state), h->why);
	/* their slots went to the third host */
	for (int k = 0; k < 100000 && !fleet_host(f, 2)->connects; k++) {
		usleep(1000);
		fleet_step(f, now);
	}
	CHECK(fleet_host(f, 2)->connects == 1 && fleet_host(f, 2)->state == FLEET_CONNECTING);
	fleet_free(f); /* stdin closes: cat ends; every child reaped */
	CHECK(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD);
	unlink(prog);
}

/* explain --ssh: the verdict of each kind. */
static void test_explain(void)
{
	const char *hosts[] = {"h0", "h1", "h2"};
	struct fleet *f = new_fleet(hosts, 3);
	char buf[16384];
	FILE *m = fmemopen(buf, sizeof(buf), "w");
	fleet_explain_text(m, f, 10);
	fclose(m);
	CHECKF(strstr(buf, "\nVERDICT\n  host h0 could not be observed (connecting): no frame "
			   "arrived\n"),
	       "%s", buf);
	make_host(f, 0, NULL, -1);
	make_host(f, 1, NULL, -1);
	make_host(f, 2, NULL, -1);
	m = fmemopen(buf, sizeof(buf), "w");
	fleet_explain_text(m, f, 10);
	fclose(m);
	CHECKF(strstr(buf, "\nVERDICT\n  nothing stands out: no actionable chain on the 3 hosts "
			   "observed, no NCCL straggler\n"),
	       "%s", buf);
	char line[4096];
	frame(line, sizeof(line), 1000, chain_hog, NULL);
	fleet_feed(f, 1, line, 2);
	m = fmemopen(buf, sizeof(buf), "w");
	fleet_explain_text(m, f, 10);
	fclose(m);
	CHECKF(strstr(buf, "\nVERDICT\n  host h1 costs the most\n  why: HIGH cpu_contention 71% "
			   "by stress-ng[2231]: preempted\n  what to do: move it\n"),
	       "%s", buf);
	CHECK(strstr(buf, "\nHOSTS (worst first)\n== h1: live, ingero-top 0.1.0, 2 frames\n"));
	m = fmemopen(buf, sizeof(buf), "w");
	CHECK(fleet_explain_json(m, f, 10) == 0);
	fclose(m);
	json_t *o = ig_json_parse(buf), *v = json_object_get(o, "verdict");
	CHECK(!strcmp(ig_json_get_str(o, "type", ""), "fleet_explain") &&
	      !strcmp(ig_json_get_str(v, "kind", ""), "chain") &&
	      !strcmp(ig_json_get_str(v, "host", ""), "h1") &&
	      !strcmp(ig_json_get_str(json_object_get(v, "chain"), "class", ""), "cpu_contention") &&
	      !strcmp(ig_json_get_str(json_object_get(o, "fleet"), "type", ""), "fleet"));
	json_decref(o);
	fleet_free(f);
}

int main(void)
{
	test_hosts();
	test_quote();
	test_lines();
	test_straggler();
	test_order();
	test_classify();
	test_viewer();
	test_stale();
	test_silent();
	test_explain();
	return check_done("test_fleet");
}
