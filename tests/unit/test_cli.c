/* Option parsing: files after --replay, commands after --, bad values. */
#include "check.h"
#include "session/cli.h"

#include <stdio.h>
#include <string.h>

static int parse(struct cli *c, const char *line)
{
	static char buf[512];
	char *argv[32];
	int argc = 0;
	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	FILE *saved = stderr;
	stderr = fopen("/dev/null", "w");
	int r = cli_parse(c, argc, argv);
	fclose(stderr);
	stderr = saved;
	return r;
}

int main(void)
{
	struct cli c;

	CHECK(parse(&c, "ingero-top --replay a.db b.db --speed 20 --batch") == 0);
	CHECK(c.nreplay == 2 && !strcmp(c.replay[1], "b.db") && c.speed == 20 && c.batch);
	CHECK(parse(&c, "ingero-top --replay") != 0);
	CHECK(parse(&c, "ingero-top -b -n 3 -d 0.5 --pid 12,34") == 0);
	CHECK(c.frames == 3 && c.interval_s == 0.5 && c.npids == 2 && c.pids[1] == 34);
	CHECK(parse(&c, "ingero-top --summary -- ./train --lr 3") == 0);
	CHECK(c.summary && c.batch && c.ncmd == 3 && !strcmp(c.cmd[2], "3"));
	CHECK(parse(&c, "ingero-top --pid 1 -- ./x") != 0);
	CHECK(parse(&c, "ingero-top --pid abc") != 0);
	CHECK(parse(&c, "ingero-top -d -1") != 0);
	CHECK(parse(&c, "ingero-top --speed 0.1 --replay x.db") != 0);
	CHECK(parse(&c, "ingero-top --max-db 500M --record r.db") == 0 && c.max_db == 500ULL << 20);
	CHECK(parse(&c, "ingero-top --max-db lots") != 0);
	CHECK(parse(&c, "ingero-top --demo") == 0 && !strcmp(c.demo, "cpu-contention"));
	CHECK(parse(&c, "ingero-top --demo io-stall --batch") == 0 && !strcmp(c.demo, "io-stall"));
	CHECK(parse(&c, "ingero-top stray") != 0);
	CHECK(parse(&c, "ingero-top check") == 0 && c.check);
	return check_done("test_cli");
}
