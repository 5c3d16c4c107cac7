/* CUDA library discovery from /proc, ldconfig and the toolkit directories. */
#include "collect/discover.h"

#include "collect/elfsym.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const static_cudart_syms[] = { "cudaLaunchKernel", "cudaMalloc",
						  "cudaStreamSynchronize" };

bool discover_is_cuda_lib(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	if (!strncmp(b, "libcuda.so", 10) || !strncmp(b, "libnccl.so", 10) ||
	    !strncmp(b, "libamdhip64.so", 14))
		return true;
	if (strncmp(b, "libcudart", 9))
		return false;
	b += 9;
	if (*b == '-') /* libcudart-6d56b25a.so.12 in pip wheels */
		b = strchr(b, '.');
	return b && !strncmp(b, ".so", 3);
}

int discover_pid_alive(int pid)
{
	char p[32];
	snprintf(p, sizeof(p), "/proc/%d", pid);
	return pid > 0 && access(p, F_OK) == 0;
}

int discover_pid_libs(int pid, discover_cb cb, void *ctx)
{
	char path[64];
	int n = discover_pid_maps(pid, cb, ctx);

	if (n < 0)
		return n;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (elfsym_has_any(path, static_cudart_syms, 3) == 1) {
		cb(ctx, path, pid);
		n++;
	}
	return n;
}

int discover_pid_maps(int pid, discover_cb cb, void *ctx)
{
	char path[PATH_MAX + 64], line[PATH_MAX + 256];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');
		if (!file)
			continue;
		file[strcspn(file, "\n")] = 0;
		if (!discover_is_cuda_lib(file) || strstr(file, " (deleted)"))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/root%s", pid, file);
		cb(ctx, path, pid);
		n++;
	}
	fclose(f);
	return n;
}

static int scan_dir(const char *dir, discover_cb cb, void *ctx)
{
	char path[PATH_MAX];
	struct dirent *d;
	int n = 0;
	DIR *dp = opendir(dir);

	if (!dp)
		return 0;
	while ((d = readdir(dp))) {
		if (!discover_is_cuda_lib(d->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		cb(ctx, path, 0);
		n++;
	}
	closedir(dp);
	return n;
}

int discover_system_libs(discover_cb cb, void *ctx)
{
	char line[PATH_MAX + 128];
	int n = 0;
	FILE *f = popen("/sbin/ldconfig -p 2>/dev/null", "re");

	if (f) {
		while (fgets(line, sizeof(line), f)) {
			char *arrow = strstr(line, "=> ");
			if (!arrow)
				continue;
			char *p = arrow + 3;
			p[strcspn(p, "\n")] = 0;
			if (discover_is_cuda_lib(p)) {
				cb(ctx, p, 0);
				n++;
			}
		}
		pclose(f);
	}
	DIR *dp = opendir("/usr/local");
	if (dp) {
		struct dirent *d;
		while ((d = readdir(dp))) {
			char dir[PATH_MAX];
			if (strncmp(d->d_name, "cuda", 4))
				continue;
			snprintf(dir, sizeof(dir), "/usr/local/%s/lib64", d->d_name);
			n += scan_dir(dir, cb, ctx);
			snprintf(dir, sizeof(dir), "/usr/local/%s/targets/x86_64-linux/lib",
				 d->d_name);
			n += scan_dir(dir, cb, ctx);
		}
		closedir(dp);
	}
	/* ROCm: /opt/rocm, /opt/rocm-6.2.0 */
	dp = opendir("/opt");
	if (dp) {
		struct dirent *d;
		while ((d = readdir(dp))) {
			char dir[PATH_MAX];
			if (strncmp(d->d_name, "rocm", 4))
				continue;
			snprintf(dir, sizeof(dir), "/opt/%s/lib", d->d_name);
			n += scan_dir(dir, cb, ctx);
		}
		closedir(dp);
	}
	return n;
}

int discover_cuda_pids(int *pids, int max)
{
	char path[64], line[PATH_MAX + 256];
	struct dirent *d;
	int n = 0;
	DIR *dp = opendir("/proc");

	if (!dp)
		return 0;
	while ((d = readdir(dp)) && n < max) {
		int pid = atoi(d->d_name);
		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/maps", pid);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			char *file = strchr(line, '/');
			if (!file)
				continue;
			file[strcspn(file, "\n")] = 0;
			if (discover_is_cuda_lib(file)) {
				pids[n++] = pid;
				break;
			}
		}
		fclose(f);
	}
	closedir(dp);
	return n;
}

int discover_exe_libs(const char *exe, discover_cb cb, void *ctx)
{
	/* What ldd does: ask the dynamic loader to resolve and print the
	 * dependencies instead of running the program. Only for ELF files. */
	char line[PATH_MAX + 128];
	int pfd[2], n = 0;
	int dyn = elfsym_is_dynamic(exe);

	if (dyn == -ENOEXEC)
		return 0; /* a script: its interpreter's libraries come later */
	if (dyn < 0)
		return dyn;
	if (!dyn)
		goto static_exe;
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(pfd[1], 1);
		int dn = open("/dev/null", O_WRONLY);
		if (dn >= 0)
			dup2(dn, 2);
		setenv("LD_TRACE_LOADED_OBJECTS", "1", 1);
		execl(exe, exe, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	FILE *f = fdopen(pfd[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "=> ");
		p = p ? p + 3 : strchr(line, '/');
		if (!p || *p != '/')
			continue;
		p[strcspn(p, " (\n")] = 0;
		if (discover_is_cuda_lib(p)) {
			cb(ctx, p, 0);
			n++;
		}
	}
	if (f)
		fclose(f);
	waitpid(pid, NULL, 0);
static_exe:
	if (elfsym_has_any(exe, static_cudart_syms, 3) == 1) {
		cb(ctx, exe, 0);
		n++;
	}
	return n;
}
