/* The fleet's host lists (--ssh LIST, --hosts-file FILE) and the command
 * lines made from them: the ssh argv of a host (docs/fleet.md), the remote
 * command as one shell-quoted string, the interactive viewer's argv. */
#include "fleet/fleet_int.h"

#include "core/escape.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool name_char(int c)
{
	return isalnum(c) || c == '.' || c == '-' || c == '_';
}

/* Checks one [user@]host[:port] (host may be [v6addr]): NULL, or why not. */
static const char *spec_invalid(const char *s)
{
	const char *at = strchr(s, '@'), *h = at ? at + 1 : s;
	if (at && at == s)
		return "empty user before '@'";
	for (const char *p = s; at && p < at; p++)
		if (!name_char((unsigned char)*p))
			return "a user name has letters, digits, '.', '-' and '_' only";
	if (strchr(h, '@'))
		return "more than one '@'";
	const char *port = NULL;
	if (*h == '[') {
		const char *e = strchr(h, ']');
		if (!e || e == h + 1)
			return "an address in brackets needs its closing ']'";
		for (const char *p = h + 1; p < e; p++)
			if (!isxdigit((unsigned char)*p) && *p != ':' && *p != '.')
				return "not an IPv6 address in brackets";
		if (e[1] && e[1] != ':')
			return "text after ']'";
		port = e[1] ? e + 1 : NULL;
	} else {
		port = strchr(h, ':');
		size_t hl = port ? (size_t)(port - h) : strlen(h);
		if (!hl)
			return "no host name";
		if (*h == '-')
			return "a host name cannot start with '-'";
		for (size_t k = 0; k < hl; k++)
			if (!name_char((unsigned char)h[k]))
				return "a host name has letters, digits, '.', '-' and '_' only";
	}
	if (port) {
		char *end;
		errno = 0;
		long v = strtol(port + 1, &end, 10);
		if (!port[1] || *end || errno || v < 1 || v > 65535 ||
		    !isdigit((unsigned char)port[1]))
			return "bad port (a number from 1 to 65535)";
	}
	return NULL;
}

/* Appends one item (trimmed) to *hosts. where: "--ssh" or "FILE:LINE". */
static int add_host(const char *item, size_t len, const char *where, char ***hosts, int *n,
		    char *err, size_t errlen)
{
	char buf[FLEET_NAME_LEN], a[FLEET_NAME_LEN * 4];
	while (len && isspace((unsigned char)*item))
		item++, len--;
	while (len && isspace((unsigned char)item[len - 1]))
		len--;
	if (!len) {
		snprintf(err, errlen, "%s: an empty host in the list", where);
		return -1;
	}
	if (len >= sizeof(buf)) {
		snprintf(err, errlen, "%s: a host name longer than %d bytes", where,
			 FLEET_NAME_LEN - 1);
		return -1;
	}
	memcpy(buf, item, len);
	buf[len] = 0;
	const char *why = spec_invalid(buf);
	if (why) {
		snprintf(err, errlen, "%s: invalid host '%s': %s", where,
			 esc_str(a, sizeof(a), buf, 0), why);
		return -1;
	}
	for (int k = 0; k < *n; k++)
		if (!strcmp((*hosts)[k], buf)) {
			snprintf(err, errlen, "%s: host '%s' is listed twice", where, buf);
			return -1;
		}
	if (*n >= FLEET_MAX_HOSTS) {
		snprintf(err, errlen, "%s: too many hosts (%d at most)", where, FLEET_MAX_HOSTS);
		return -1;
	}
	char **nh = realloc(*hosts, (size_t)(*n + 1) * sizeof(*nh));
	if (!nh || !(nh[*n] = strdup(buf))) {
		if (nh)
			*hosts = nh;
		snprintf(err, errlen, "%s: out of memory", where);
		return -1;
	}
	*hosts = nh;
	(*n)++;
	return 0;
}

int fleet_split_hosts(const char *list, char ***hosts, int *n, char *err, size_t errlen)
{
	int before = *n;
	const char *p = list ? list : "";
	for (;;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);
		if (add_host(p, len, "--ssh", hosts, n, err, errlen))
			return -1;
		if (!c)
			break;
		p = c + 1;
	}
	return *n - before;
}

int fleet_read_hosts_file(const char *path, char ***hosts, int *n, char *err, size_t errlen)
{
	char a[256], where[300], line[1024];
	FILE *fp = fopen(path, "r");
	esc_str(a, sizeof(a), path, 0);
	if (!fp) {
		snprintf(err, errlen, "cannot read hosts file %s: %s", a, strerror(errno));
		return -1;
	}
	int before = *n, lineno = 0;
	while (fgets(line, sizeof(line), fp)) {
		lineno++;
		size_t len = strcspn(line, "#\n");
		if (!strchr(line, '\n') && !feof(fp)) {
			snprintf(err, errlen, "%s:%d: a line longer than %zu bytes", a, lineno,
				 sizeof(line) - 2);
			fclose(fp);
			return -1;
		}
		size_t k = 0;
		while (k < len && isspace((unsigned char)line[k]))
			k++;
		if (k == len)
			continue; /* blank or a comment */
		snprintf(where, sizeof(where), "%s:%d", a, lineno);
		if (add_host(line, len, where, hosts, n, err, errlen)) {
			fclose(fp);
			return -1;
		}
	}
	fclose(fp);
	if (*n == before) {
		snprintf(err, errlen, "hosts file %s lists no host", a);
		return -1;
	}
	return *n - before;
}

void fleet_host_addr(const char *spec, char *user, size_t ulen, char *host, size_t hlen, int *port)
{
	const char *at = strchr(spec, '@'), *h = at ? at + 1 : spec, *p;
	snprintf(user, ulen, "%.*s", at ? (int)(at - spec) : 0, spec);
	*port = 0;
	if (*h == '[') {
		const char *e = strchr(h, ']');
		snprintf(host, hlen, "%.*s", e ? (int)(e - h - 1) : 0, h + 1);
		p = e && e[1] == ':' ? e + 1 : NULL;
	} else {
		p = strchr(h, ':');
		snprintf(host, hlen, "%.*s", p ? (int)(p - h) : (int)strlen(h), h);
	}
	if (p)
		*port = atoi(p + 1);
}

int fleet_shell_quote(const char *s, char *buf, size_t len)
{
	size_t o = 0;
	bool plain = *s != 0;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_./=:,+@%", *p))
			plain = false;
	if (plain) {
		if (strlen(s) + 1 > len)
			return -1;
		memcpy(buf, s, strlen(s) + 1);
		return 0;
	}
	if (len < 3)
		return -1;
	buf[o++] = '\'';
	for (const char *p = s; *p; p++) {
		const char *piece = *p == '\'' ? "'\\''" : NULL;
		size_t pl = piece ? 4 : 1;
		if (o + pl + 2 > len)
			return -1;
		if (piece)
			memcpy(buf + o, piece, pl);
		else
			buf[o] = *p;
		o += pl;
	}
	buf[o++] = '\'';
	buf[o] = 0;
	return 0;
}

/* Appends " WORD" (quoted) to buf at *o. */
static int append_word(char *buf, size_t len, size_t *o, const char *w)
{
	if (*o && *o + 1 < len)
		buf[(*o)++] = ' ';
	if (*o >= len || fleet_shell_quote(w, buf + *o, len - *o))
		return -1;
	*o += strlen(buf + *o);
	return 0;
}

int fleet_remote_line(const struct fleet_opts *o, bool stream, char *buf, size_t len)
{
	size_t at = 0;
	int r = 0;
	if (!len)
		return -1;
	buf[0] = 0;
	if (o->sudo)
		r |= append_word(buf, len, &at, "sudo") | append_word(buf, len, &at, "-n");
	r |= append_word(buf, len, &at, o->remote_cmd ? o->remote_cmd : "ingero-top");
	if (stream)
		r |= append_word(buf, len, &at, "--stream");
	for (int k = 0; k < o->nremote_args; k++)
		r |= append_word(buf, len, &at, o->remote_args[k]);
	return r ? -1 : 0;
}

void fleet_argv_free(char **argv)
{
	for (int k = 0; argv && argv[k]; k++)
		free(argv[k]);
	free(argv);
}

/* ssh [-t|-T] -o BatchMode=yes ... [-F FILE] [-p PORT] [-l USER] HOST -- LINE:
 * malloc'd strings in a malloc'd NULL-terminated array. Returns the count
 * or -1. */
int fleet_ssh_argv(const struct fleet *f, int i, bool tty, const char *remote_line,
		   char ***argv_out)
{
	char user[FLEET_NAME_LEN], host[FLEET_NAME_LEN], port[16], ct[40];
	int p;
	const char *w[32];
	int n = 0;
	fleet_host_addr(f->hosts[i].spec, user, sizeof(user), host, sizeof(host), &p);
	snprintf(port, sizeof(port), "%d", p);
	snprintf(ct, sizeof(ct), "ConnectTimeout=%d",
		 f->o.connect_timeout_s > 0 ? (int)(f->o.connect_timeout_s + 0.5) : 10);
	w[n++] = f->o.ssh_program ? f->o.ssh_program : "ssh";
	w[n++] = tty ? "-t" : "-T";
	const char *opts[] = {"BatchMode=yes", "ServerAliveInterval=5", "ServerAliveCountMax=3",
			      ct};
	for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
		w[n++] = "-o";
		w[n++] = opts[k];
	}
	if (f->o.ssh_config) {
		w[n++] = "-F";
		w[n++] = f->o.ssh_config;
	}
	if (p) {
		w[n++] = "-p";
		w[n++] = port;
	}
	if (user[0]) {
		w[n++] = "-l";
		w[n++] = user;
	}
	w[n++] = host;
	w[n++] = "--";
	w[n++] = remote_line;
	char **argv = calloc((size_t)n + 1, sizeof(*argv));
	if (!argv)
		return -1;
	for (int k = 0; k < n; k++)
		if (!(argv[k] = strdup(w[k]))) {
			fleet_argv_free(argv);
			return -1;
		}
	*argv_out = argv;
	return n;
}

int fleet_viewer_argv(struct fleet *f, int i, char **argv, int max)
{
	char line[8192];
	char **a;
	if (i < 0 || i >= f->n || fleet_remote_line(&f->o, false, line, sizeof(line)))
		return -1;
	int n = fleet_ssh_argv(f, i, true, line, &a);
	if (n < 0)
		return -1;
	if (n + 1 > max) {
		fleet_argv_free(a);
		return -1;
	}
	fleet_argv_free(f->vargv);
	f->vargv = a;
	f->nvargv = n;
	for (int k = 0; k <= n; k++)
		argv[k] = a[k];
	return n;
}
