/* Which handover subcommand argv names (handover.h). */
#include "app/handover.h"

#include <string.h>

handover_main_fn handover_command(int argc, char **argv)
{
	static const struct {
		const char *name;
		handover_main_fn fn;
	} cmds[] = {
	    {"explain", explain_main},
	    {"query", query_main},
	    {"mcp", mcp_main},
	};
	if (argc < 2)
		return NULL;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn;
	return NULL;
}
