/* Container names from cgroup texts (collect/container.c): the paths that
 * Docker, containerd, CRI-O, Podman, kubelet and systemd make, in cgroup v1
 * and v2, and what is not a container. */
#include "check.h"
#include "collect/container.h"

#include <string.h>
#include <unistd.h>

#define ID "4f1e2d3c4b5a69788796a5b4c3d2e1f04f1e2d3c4b5a69788796a5b4c3d2e1f0"
#define UID "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9"
#define UID_ "0a1b2c3d_4e5f_6071_8293_a4b5c6d7e8f9"

static char buf[64];

static const char *name(const char *text)
{
	memset(buf, 'x', sizeof(buf));
	return container_from_cgroup(text, buf, sizeof(buf));
}

static const char *shown(const char *text)
{
	return text ? text : "(null)";
}

#define IS(text, want)                                                                             \
	CHECKF(!strcmp(name(text), want), "%s: got '%s', want '%s'", shown(text), buf, want)

int main(void)
{
	/* Docker: systemd driver (v2), cgroupfs driver (v1), rootless */
	IS("0::/system.slice/docker-" ID ".scope\n", "docker:4f1e2d3c4b5a");
	IS("12:pids:/docker/" ID "\n11:memory:/docker/" ID "\n0::/\n", "docker:4f1e2d3c4b5a");
	IS("0::/docker/" ID "\n", "docker:4f1e2d3c4b5a");
	IS("0::/user.slice/user-1000.slice/user@1000.service/app.slice/docker-" ID ".scope\n",
	   "docker:4f1e2d3c4b5a");
	/* containerd without Kubernetes: nerdctl (systemd), ctr (namespace dir) */
	IS("0::/system.slice/nerdctl-" ID ".scope\n", "containerd:4f1e2d3c4b5a");
	IS("0::/default/" ID "\n", "containerd:4f1e2d3c4b5a");
	/* CRI-O outside a pod, Podman rootful and rootless; conmon is not in
	 * the container */
	IS("0::/machine.slice/crio-" ID ".scope\n", "crio:4f1e2d3c4b5a");
	IS("0::/machine.slice/libpod-" ID ".scope\n", "podman:4f1e2d3c4b5a");
	IS("0::/machine.slice/libpod-" ID ".scope/container\n", "podman:4f1e2d3c4b5a");
	IS("0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope\n",
	   "podman:4f1e2d3c4b5a");
	IS("0::/libpod_parent/libpod-" ID "\n", "podman:4f1e2d3c4b5a");
	IS("0::/machine.slice/libpod-conmon-" ID ".scope\n", "-");

	/* Kubernetes, systemd driver: burstable, besteffort, guaranteed (no QoS
	 * slice), containerd, CRI-O and cri-dockerd; kind's nested kubelet */
	IS("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	   ".slice/cri-containerd-" ID ".scope\n",
	   "k8s:" UID "/4f1e2d3c4b5a");
	IS("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
	   ".slice/crio-" ID ".scope\n",
	   "k8s:" UID "/4f1e2d3c4b5a");
	IS("0::/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" ID ".scope\n",
	   "k8s:" UID "/4f1e2d3c4b5a");
	IS("0::/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
	   "kubelet-kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" ID ".scope\n",
	   "k8s:" UID "/4f1e2d3c4b5a");
	/* cgroupfs driver (v1): bare ids under the pod's directory */
	IS("11:cpu,cpuacct:/kubepods/burstable/pod" UID "/" ID "\n", "k8s:" UID "/4f1e2d3c4b5a");
	IS("4:memory:/kubepods/pod" UID "/" ID "\n", "k8s:" UID "/4f1e2d3c4b5a");
	/* a static pod's uid is a plain hash; a process of the pod outside its
	 * containers (CRI-O's conmon) names the pod only */
	IS("0::/kubepods/besteffort/pod0123456789abcdef0123456789abcdef/" ID "\n",
	   "k8s:0123456789abcdef0123456789abcdef/4f1e2d3c4b5a");
	IS("0::/kubepods.slice/kubepods-pod" UID_ ".slice/crio-conmon-" ID ".scope\n", "k8s:" UID);
	IS("0::/kubepods.slice/kubepods-pod" UID_ ".slice\n", "k8s:" UID);
	/* not a pod: the QoS slices themselves, a "pod" outside kubepods */
	IS("0::/kubepods.slice/kubepods-burstable.slice\n", "-");
	IS("0::/pod" UID "/x\n", "-");

	/* systemd services (nested too); sessions, user services, root: host */
	IS("0::/system.slice/ollama.service\n", "ollama.service");
	IS("0::/system.slice/app.slice/trainer.service\n", "trainer.service");
	IS("0::/system.slice/trainer.service/worker\n", "trainer.service");
	IS("0::/user.slice/user-0.slice/session-3.scope\n", "-");
	IS("0::/user.slice/user-1000.slice/user@1000.service/app.slice/x.service\n", "-");
	IS("0::/init.scope\n", "-");
	IS("0::/\n", "-");
	/* hybrid: systemd's v2 line says nothing, a v1 line names docker */
	IS("0::/\n12:pids:/docker/" ID "\n1:name=systemd:/docker/" ID "\n", "docker:4f1e2d3c4b5a");

	/* not ids: too short, not hex, upper case */
	IS("0::/docker/4f1e2d3c4b5a\n", "-");
	IS("0::/system.slice/docker-" ID "x.scope\n", "-");
	IS("0::/docker/4F1E2D3C4B5A69788796A5B4C3D2E1F04F1E2D3C4B5A69788796A5B4C3D2E1F0\n", "-");
	/* nothing, garbage, no newline at the end */
	IS("", "-");
	IS(NULL, "-");
	IS("garbage", "-");
	IS("0::", "-");
	IS("0::/system.slice/docker-" ID ".scope", "docker:4f1e2d3c4b5a");
	/* a unit name with control bytes is made safe; a long one is cut */
	IS("0::/system.slice/a\x1b[2Jb.service\n", "a?[2Jb.service");
	char lng[200] = "0::/system.slice/";
	memset(lng + strlen(lng), 'u', 100);
	strcat(lng, ".service\n");
	CHECK(strlen(name(lng)) == sizeof(buf) - 1 && buf[0] == 'u');
	/* a small buffer */
	char small[8];
	container_from_cgroup("0::/docker/" ID "\n", small, sizeof(small));
	CHECK(!strcmp(small, "docker:"));

	/* this process, from /proc: whatever it is, one of the forms */
	char me[64];
	CHECK(container_of_pid((uint32_t)getpid(), me, sizeof(me)) == 0 && me[0]);
	CHECK(container_of_pid(0x7fffffff, me, sizeof(me)) < 0 && !me[0]);
	return check_done("test_container");
}
