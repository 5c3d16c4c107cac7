/* --record DIR with --ssh: each host recorded to a file of its own under
 * /tmp (the path the stream was given); at the end the file is copied here
 * with `ssh HOST [sudo -n] cat PATH` into DIR/NAME.db (store/safefile: made
 * 0600 beside its final name, never through a link, renamed into place
 * when whole), then removed there with `rm -f`. */
#include "fleet/fleet_int.h"

#include "core/clock.h"
#include "core/escape.h"
#include "store/safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FETCH_WAIT_MS 600000 /* ten minutes for one copy at most */

/* DIR/NAME.db with NAME the host's display name (its spec, user
 * included, when another host has the same name), bytes outside
 * [A-Za-z0-9._-] as '_' (':' of a port included). */
static void dest_path(const struct fleet *f, int i, char *buf, size_t len)
{
	char name[FLEET_NAME_LEN];
	const char *s = f->hosts[i].name;
	for (int k = 0; k < f->n; k++)
		if (k != i && !strcmp(f->hosts[k].name, s))
			s = f->hosts[i].spec;
	size_t k = 0;
	for (; s[k] && k + 1 < sizeof(name); k++) {
		char c = s[k];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
		name[k] = ok && !(k == 0 && c == '.') ? c : '_';
	}
	name[k] = 0;
	snprintf(buf, len, "%s/%s.db", f->o.record_dir, name);
}

/* Runs `ssh HOST -- [sudo -n] WORDS PATH` with stdout to out_fd (-1: to
 * /dev/null) and waits for it; its stderr's last line in why. Returns the
 * wait status, or -1. */
static int run_remote(struct fleet *f, int i, const char *what, int out_fd, char *why, size_t len)
{
	char line[512], q[200];
	char **argv = NULL;
	fleet_shell_quote(f->conns[i].record_path, q, sizeof(q));
	snprintf(line, sizeof(line), "%s%s %s", f->o.sudo ? "sudo -n " : "", what, q);
	if (fleet_ssh_argv(f, i, false, line, &argv) < 0)
		return -1;
	int err = -1, null_fd = -1, status = -1;
	if (out_fd < 0)
		out_fd = null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	pid_t pid = fleet_spawn(argv, NULL, NULL, &err, out_fd, why, len);
	fleet_argv_free(argv);
	if (null_fd >= 0)
		close(null_fd);
	if (pid < 0)
		return -1;
	char ebuf[1024];
	size_t elen = 0;
	uint64_t t0 = ig_mono_ms();
	for (;;) {
		struct pollfd p = {.fd = err, .events = POLLIN};
		poll(&p, 1, 200);
		ssize_t r = read(err, ebuf + elen, sizeof(ebuf) - 1 - elen);
		if (r > 0) {
			elen += (size_t)r;
			if (elen > sizeof(ebuf) / 2) { /* keep the end */
				memmove(ebuf, ebuf + elen - 256, 256);
				elen = 256;
			}
			continue;
		}
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
			break;
		if (ig_mono_ms() - t0 > FETCH_WAIT_MS) {
			kill(pid, SIGTERM);
			break;
		}
	}
	close(err);
	waitpid(pid, &status, 0);
	ebuf[elen] = 0;
	while (elen && (ebuf[elen - 1] == '\n' || ebuf[elen - 1] == '\r'))
		ebuf[--elen] = 0;
	const char *last = strrchr(ebuf, '\n');
	esc_text(why, len, last ? last + 1 : ebuf, 0);
	return status;
}

/* One host's copy: 0, or -1 with a line on err. */
static int fetch_one(struct fleet *f, int i, FILE *err)
{
	char dest[1024], e[600], why[400], a[1100];
	struct safefile *sf = NULL;
	dest_path(f, i, dest, sizeof(dest));
	esc_str(a, sizeof(a), dest, 0);
	if (safefile_out_open(dest, &sf, e, sizeof(e))) {
		fprintf(err, "ingero-top: %s: %s\n", f->hosts[i].name, e);
		return -1;
	}
	int st = run_remote(f, i, "cat", safefile_fd(sf), why, sizeof(why));
	struct stat sb;
	bool ok = st >= 0 && WIFEXITED(st) && !WEXITSTATUS(st) && !fstat(safefile_fd(sf), &sb) &&
		  sb.st_size > 0;
	if (!ok) {
		fprintf(err, "ingero-top: %s: cannot copy its recording to %s: %s\n",
			f->hosts[i].name, a, why[0] ? why : "ssh failed or the file is empty");
		safefile_unlink(sf);
		safefile_close(sf);
		return -1;
	}
	if (safefile_out_commit(sf, e, sizeof(e))) {
		fprintf(err, "ingero-top: %s: %s\n", f->hosts[i].name, e);
		safefile_unlink(sf);
		safefile_close(sf);
		return -1;
	}
	safefile_close(sf);
	run_remote(f, i, "rm -f", -1, why, sizeof(why));
	return 0;
}

int fleet_fetch_recordings(struct fleet *f, FILE *err)
{
	int copied = 0;
	if (!f->o.record_dir)
		return 0;
	fleet_stop(f, 30000); /* each remote ends and closes its recording */
	for (int i = 0; i < f->n; i++) {
		struct fleet_host *h = &f->hosts[i];
		if (!h->frames) { /* never traced: nothing was recorded */
			fprintf(err, "ingero-top: %s: no recording (%s)\n", h->name,
				h->why[0] ? h->why : "no frame arrived");
			continue;
		}
		copied += !fetch_one(f, i, err);
	}
	return copied;
}
