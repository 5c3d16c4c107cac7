/* Container and pod names from cgroup paths (container.h). The runtimes
 * name their cgroups in a few known ways: a scope per container under the
 * systemd driver ("docker-<id>.scope", "cri-containerd-<id>.scope",
 * "crio-<id>.scope", "libpod-<id>.scope"), a bare 64-digit id under the
 * cgroupfs driver ("/docker/<id>", "/kubepods/burstable/pod<uid>/<id>"),
 * and kubelet puts a pod's containers under a slice or directory that
 * carries the pod's uid. */
#include "collect/container.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define MAX_COMPS 32
#define ID_HEX 64   /* a container id: 64 hex digits */
#define SHORT_ID 12 /* as docker ps, crictl ps and podman ps show it */

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return n > 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t l = strlen(s), sl = strlen(suffix);
	return l >= sl && !strcmp(s + l - sl, suffix);
}

/* The container id in one path component: "<prefix><64 hex>[.scope]" of a
 * known runtime (*runtime set), or a bare id of the cgroupfs driver
 * (*runtime NULL: the parent says whose). Copies its short id into id. */
static bool comp_container(const char *c, const char **runtime, char id[SHORT_ID + 1])
{
	static const struct {
		const char *prefix, *runtime;
	} scopes[] = {
	    {"docker-", "docker"},
	    {"cri-containerd-", "containerd"},
	    {"containerd-", "containerd"},
	    {"nerdctl-", "containerd"},
	    {"crio-", "crio"},
	    {"libpod-", "podman"},
	};
	size_t len = strlen(c);

	if (ends_with(c, ".scope"))
		len -= 6;
	*runtime = NULL;
	for (size_t k = 0; k < sizeof(scopes) / sizeof(scopes[0]) && !*runtime; k++) {
		size_t pl = strlen(scopes[k].prefix);
		if (len == pl + ID_HEX && !strncmp(c, scopes[k].prefix, pl)) {
			*runtime = scopes[k].runtime;
			c += pl;
			len -= pl;
		}
	}
	if (len != ID_HEX || !is_hex(c, len))
		return false;
	snprintf(id, SHORT_ID + 1, "%.*s", SHORT_ID, c);
	return true;
}

/* Whose bare container id this is, from the directory above it. */
static const char *runtime_of_parent(const char *parent)
{
	if (!strcmp(parent, "docker") || !strcmp(parent, "moby"))
		return "docker";
	if (!strcmp(parent, "libpod_parent"))
		return "podman";
	if (!strcmp(parent, "crio"))
		return "crio";
	return "containerd"; /* its namespace: /default/<id>, /k8s.io/<id>... */
}

/* A pod uid in one component: "...-pod<uid>.slice" (the systemd driver,
 * '_' for '-') or "pod<uid>" (cgroupfs), with 32 to 36 hex digits and
 * dashes (a static pod's uid is a plain hash). Written with dashes. */
static bool comp_pod(const char *c, char uid[40])
{
	const char *p = !strncmp(c, "pod", 3) ? c + 3 : strstr(c, "-pod");
	size_t len;

	if (!p)
		return false;
	if (p != c + 3)
		p += 4;
	len = strcspn(p, ".");
	if (len < 32 || len > 36 || (p[len] && strcmp(p + len, ".slice")))
		return false;
	for (size_t i = 0; i < len; i++) {
		char ch = p[i] == '_' ? '-' : p[i];
		if (ch != '-' && !is_hex(&ch, 1))
			return false;
		uid[i] = ch;
	}
	uid[len] = 0;
	return true;
}

/* Copies a name taken from a path (a unit name may hold any byte). */
static void put_name(char *out, size_t n, const char *name)
{
	size_t i = 0;
	for (; name[i] && i + 1 < n; i++)
		out[i] =
		    (unsigned char)name[i] < ' ' || (unsigned char)name[i] >= 0x7f ? '?' : name[i];
	out[i] = 0;
}

/* Names the container of one cgroup path (modified: split in place).
 * Returns true when it names something other than the host. */
static bool name_path(char *path, char *out, size_t n)
{
	char *comps[MAX_COMPS], *save = NULL, uid[40] = "", id[SHORT_ID + 1] = "";
	const char *runtime = NULL;
	int nc = 0, at = -1;
	bool kube = false;

	for (char *t = strtok_r(path, "/", &save); t && nc < MAX_COMPS;
	     t = strtok_r(NULL, "/", &save))
		comps[nc++] = t;
	for (int i = 0; i < nc; i++) {
		/* kubepods, kubepods.slice, kubelet-kubepods.slice (kind) */
		kube |= strstr(comps[i], "kubepods") != NULL;
		if (kube && !uid[0])
			comp_pod(comps[i], uid);
	}
	for (int i = nc - 1; i >= 0 && at < 0; i--)
		if (comp_container(comps[i], &runtime, id))
			at = i;
	if (uid[0]) {
		snprintf(out, n, "k8s:%s%s%s", uid, id[0] ? "/" : "", id);
		return true;
	}
	if (at >= 0) {
		if (!runtime)
			runtime = at > 0 ? runtime_of_parent(comps[at - 1]) : "containerd";
		snprintf(out, n, "%s:%s", runtime, id);
		return true;
	}
	/* a system service is worth naming; a login session is the host */
	for (int i = nc - 1; i > 0 && !strcmp(comps[0], "system.slice"); i--)
		if (ends_with(comps[i], ".service")) {
			put_name(out, n, comps[i]);
			return true;
		}
	return false;
}

/* Tries the path of the line l (len bytes): true when it names a container. */
static bool name_line(const char *l, size_t len, char *out, size_t n)
{
	const char *c2 = memchr(l, ':', len);
	const char *c3 = c2 ? memchr(c2 + 1, ':', len - (size_t)(c2 + 1 - l)) : NULL;
	char path[1024];

	if (!c3)
		return false;
	size_t pl = len - (size_t)(c3 + 1 - l);
	snprintf(path, sizeof(path), "%.*s", (int)pl, c3 + 1);
	return name_path(path, out, n);
}

char *container_from_cgroup(const char *text, char *out, size_t n)
{
	const char *p = text ? text : "";

	snprintf(out, n, "-");
	/* the unified hierarchy's line first ("0::/path"), then the others */
	for (int pass = 0; pass < 2; pass++) {
		for (const char *l = p; *l;) {
			const char *e = strchr(l, '\n');
			size_t len = e ? (size_t)(e - l) : strlen(l);
			bool v2 = len >= 3 && !strncmp(l, "0::", 3);
			if (v2 == (pass == 0) && name_line(l, len, out, n))
				return out;
			if (!e)
				break;
			l = e + 1;
		}
	}
	return out;
}

int container_of_pid(uint32_t pid, char *out, size_t n)
{
	char path[48], text[8192];

	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	FILE *f = fopen(path, "re");
	if (!f) {
		int e = errno;
		out[0] = 0;
		return -e;
	}
	size_t len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = 0;
	container_from_cgroup(text, out, n);
	return 0;
}
