/* F7/F8/F9 act on the process the screen named, or not at all (issue 28):
 * the start time is read from /proc/PID/stat (field 22, after a name with
 * spaces and parentheses), a zombie or a gone process reads as exited, and
 * a pid whose start time changed is another process. */
#include "check.h"

#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../tui/pidcheck.c"

static void test_parse(void)
{
	uint64_t st = 0;
	const char *line = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 3 0 "
			   "987654 12345678 300 18446744073709551615";
	CHECK(pid_stat_start(line, &st) == 0);
	CHECKF(st == 987654, "start %llu", (unsigned long long)st);
	const char *zombie = "4243 (hog) Z 1 4243 4243 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 "
			     "5555 0 0";
	CHECK(pid_stat_start(zombie, &st) == -ESRCH);
	CHECK(pid_stat_start("4244 (cut) S 1 2", &st) == -EINVAL);
	CHECK(pid_stat_start("garbage", &st) == -EINVAL);
}

static void test_check(void)
{
	static struct pidseen s;
	uint64_t st = 0, mine = 0;
	uint32_t me = (uint32_t)getpid();
	CHECK(pid_start(me, &mine) == 0 && mine > 0);
	/* first seen now: the same process */
	pidseen_note(&s, me);
	CHECK(pidseen_get(&s, me, &st) == 0 && st == mine);
	CHECK(pidseen_check(&s, me, &st) == 0 && st == mine);
	/* a pid seen with another start time: another process has it now */
	s.start[0] = mine - 1;
	CHECK(pidseen_check(&s, me, &st) == -ESTALE);
	s.start[0] = mine;
	/* a process that exited (reaped) */
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	/* not reaped yet: a zombie reads as exited */
	for (int i = 0; i < 200; i++) {
		if (pid_start((uint32_t)c, &st) == -ESRCH)
			break;
		usleep(10000);
	}
	CHECK(pidseen_check(&s, (uint32_t)c, &st) == -ESRCH);
	waitpid(c, NULL, 0);
	CHECK(pidseen_check(&s, (uint32_t)c, &st) == -ESRCH);
	CHECK(pidseen_check(&s, 0, &st) == -ESRCH);
	/* a pid never noted is kept at the check: later checks compare with it */
	static struct pidseen e;
	CHECK(pidseen_check(&e, me, &st) == 0 && e.n == 1);
	/* the ring forgets the oldest */
	static struct pidseen r;
	for (int i = 0; i < PIDSEEN_MAX + 3; i++) {
		r.pid[r.n < PIDSEEN_MAX ? r.n : r.next] = 0;
		keep(&r, 100000u + (uint32_t)i, 1);
	}
	CHECK(r.n == PIDSEEN_MAX);
	CHECK(pidseen_get(&r, 100000u, &st) == -ENOENT);
	CHECK(pidseen_get(&r, 100000u + PIDSEEN_MAX + 2, &st) == 0);
}

int main(void)
{
	test_parse();
	test_check();
	return check_done("test_tui_pidcheck");
}
