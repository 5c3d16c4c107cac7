/* The container (or system service) a process runs in, named from its
 * cgroup path: read once per process by the collector when it first sees
 * it, carried in IG_EV_COMM events (ig_event.container), the model, the
 * batch text, the JSON and recordings. */
#ifndef IG_CONTAINER_H
#define IG_CONTAINER_H

#include <stddef.h>
#include <stdint.h>

/* Names the container of a cgroup text (the contents of /proc/PID/cgroup,
 * cgroup v2 "0::/path" or v1 "N:controllers:/path" lines; the v2 line is
 * looked at first, then the v1 lines in order, and the first that names
 * something wins):
 *
 *   "docker:<id>"        Docker (docker-<id>.scope, /docker/<id>)
 *   "containerd:<id>"    containerd outside Kubernetes (nerdctl, ctr)
 *   "crio:<id>"          CRI-O outside a pod
 *   "podman:<id>"        Podman (libpod-<id>.scope), rootful or rootless
 *   "k8s:<pod uid>/<id>" a container of a Kubernetes pod (any runtime,
 *                        kubepods cgroups of the systemd or cgroupfs driver)
 *   "k8s:<pod uid>"      a process of the pod outside its containers
 *   "<unit>.service"     a system service (system.slice)
 *   "-"                  the host: the root, login sessions, user services
 *
 * <id> is the container id's first 12 hex digits, as `docker ps` shows it;
 * the pod uid is written with dashes, as `kubectl get pod -o yaml` shows it.
 * Bytes outside printable ASCII become '?'. Writes at most n bytes (n >= 2)
 * into out and returns out. Pure: no file is read. */
char *container_from_cgroup(const char *cgroup_text, char *out, size_t n);

/* The same for process pid, from /proc/PID/cgroup. 0, or -errno with out ""
 * when the file cannot be read (the process is gone). */
int container_of_pid(uint32_t pid, char *out, size_t n);

#endif
