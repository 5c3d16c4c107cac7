/* The subcommands that hand an incident over: `explain` (the incident
 * report), `query` (read-only SQL over recordings) and `mcp` (a Model
 * Context Protocol server over stdio). Each parses its own options
 * (argv[0] is the subcommand's name) and returns the exit status. */
#ifndef IG_HANDOVER_H
#define IG_HANDOVER_H

int explain_main(int argc, char **argv);
int query_main(int argc, char **argv);
int mcp_main(int argc, char **argv);

#endif
