/* Session facts: the parsers on fixed texts, and a read of this machine. */
#include "check.h"
#include "collect/sysinfo.h"

#include <errno.h>
#include <string.h>

int main(void)
{
	char out[128];
	uint64_t mb = 0;
	CHECK(sysinfo_parse_os_release("NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 "
				       "(bookworm)\"\nID=debian\n",
				       out, sizeof(out)) == 0 &&
	      !strcmp(out, "Debian GNU/Linux 12 (bookworm)"));
	CHECK(sysinfo_parse_os_release("NAME=x\n", out, sizeof(out)) == -ENOENT);
	CHECK(sysinfo_parse_cpu_model("processor\t: 0\nmodel name\t: AMD EPYC 7713 64-Core "
				      "Processor\nflags: x\n",
				      out, sizeof(out)) == 0 &&
	      !strcmp(out, "AMD EPYC 7713 64-Core Processor"));
	CHECK(sysinfo_parse_mem_total_mb("MemTotal:       16372504 kB\nMemFree: 1 kB\n", &mb) ==
		  0 &&
	      mb == 15988);
	CHECK(sysinfo_parse_mem_total_mb("MemFree: 1 kB\n", &mb) == -ENOENT);
	struct sysinfo_facts f;
	CHECK(sysinfo_read(&f) == 0);
	CHECK(f.host[0] && f.kernel[0] && f.cpu_cores > 0 && f.mem_total_mb > 0);
	return check_done("test_sysinfo");
}
