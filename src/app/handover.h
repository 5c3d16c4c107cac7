/* The subcommands that hand an incident over: `explain` (the incident
 * report) and `query` (read-only SQL over recordings); `mcp` (a Model
 * Context Protocol server over stdio) is serve/mcp.h's mcp_main. Each
 * parses its own options (argv[0] is the subcommand's name) and returns
 * the exit status. */
#ifndef IG_HANDOVER_H
#define IG_HANDOVER_H

int explain_main(int argc, char **argv);
int query_main(int argc, char **argv);

#endif
