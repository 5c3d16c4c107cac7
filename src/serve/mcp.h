/* Inside `ingero-top mcp`: the server's state, the tool table and the tools.
 * mcp.c runs the JSON-RPC loop on stdio and owns the session; mcp_spec.c
 * holds the tools' arguments (one table gives the JSON Schemas and the
 * validation), the prompt and the tools/list answer; mcp_tools.c answers
 * the tools from the session (or from a model of a time range). */
#ifndef IG_MCP_H
#define IG_MCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve/ho_run.h"
#include "core/json.h"

#define MCP_PROTOCOL "2025-11-25"

struct ig_source;
struct query;

struct mcp {
	struct ho_run run;
	struct ho_target target;
	struct ig_source *range_src; /* recordings: a second reader for time ranges */
	struct query *sql;	     /* recordings: the read-only SQL handle */
	bool initialized;
	char protocol[16]; /* the version agreed in initialize */
	double sql_timeout_s;
};

/* --- arguments (mcp_spec.c) ------------------------------------------------------- */

enum mcp_arg_type { A_STRING = 1, A_INT, A_BOOL, A_TIME, A_ENUM };

struct mcp_arg {
	const char *name;
	int type; /* enum mcp_arg_type */
	bool required;
	int64_t min, max;	    /* A_INT bounds; A_STRING: max length (min, max) */
	const char *const *choices; /* A_ENUM */
	const char *desc;
};

#define MCP_MAX_ARGS 8

struct mcp_tool {
	const char *name, *title, *desc;
	struct mcp_arg args[MCP_MAX_ARGS];
	/* The answer: a result object (structuredContent) or NULL with a
	 * sentence in err (an isError result). */
	json_t *(*call)(struct mcp *s, const json_t *args, char *err, size_t len);
};

/* `ingero-top mcp ARGS` (argv[0] is "mcp"): the server until stdin ends;
 * returns the exit status. */
int mcp_main(int argc, char **argv);

extern const struct mcp_tool mcp_tools[];
extern const int mcp_ntools;

/* The tools/list result, the prompts/list result. The caller owns them. */
json_t *mcp_tools_list(void);
json_t *mcp_prompts_list(void);
/* prompts/get: the messages of a prompt, or NULL with err (-32602). */
json_t *mcp_prompt_get(const char *name, const json_t *args, char *err, size_t len);
/* Checks args against the tool's table: 0, or -1 with a sentence in err
 * (a JSON-RPC -32602 error). */
int mcp_check_args(const struct mcp_tool *t, const json_t *args, char *err, size_t len);
const struct mcp_tool *mcp_tool_find(const char *name);

/* --- helpers for the tools (mcp_tools.c) ----------------------------------------- */

/* The time range of since/until arguments: 0 for absent; -1 with err when
 * one cannot be read. */
int mcp_range_args(struct mcp *s, const json_t *args, uint64_t *since, uint64_t *until, char *err,
		   size_t len);

#endif
