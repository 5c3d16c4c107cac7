/* Session facts: the parsers on fixed texts, and a read of this machine
 * (its memory total is the host meters'). */
#include "check.h"
#include "collect/hostinfo.h"
#include "collect/sysinfo.h"

#include <errno.h>
#include <string.h>

int main(void)
{
	char out[128];
	CHECK(sysinfo_parse_os_release("NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 "
				       "(bookworm)\"\nID=debian\n",
				       out, sizeof(out)) == 0 &&
	      !strcmp(out, "Debian GNU/Linux 12 (bookworm)"));
	CHECK(sysinfo_parse_os_release("NAME=x\n", out, sizeof(out)) == -ENOENT);
	CHECK(sysinfo_parse_cpu_model("processor\t: 0\nmodel name\t: AMD EPYC 7713 64-Core "
				      "Processor\nflags: x\n",
				      out, sizeof(out)) == 0 &&
	      !strcmp(out, "AMD EPYC 7713 64-Core Processor"));
	struct sysinfo_facts f;
	struct hostinfo_mem mem;
	CHECK(sysinfo_read(&f) == 0);
	CHECK(f.kernel[0] && f.cpu_cores > 0 && f.mem_total_mb > 0);
	/* one reading of /proc/meminfo for the facts and the meters */
	CHECK(hostinfo_mem_read(&mem) == 0 && mem.total_mb == f.mem_total_mb);
	return check_done("test_sysinfo");
}
