/* Text from traced programs in the answers of the MCP server (process and
 * thread names, command lines, symbols, file paths, chain texts that quote
 * them, rows of run_sql): stripped of every control character and marked
 * as data, so that a hostile process name cannot pass for an instruction to
 * the agent reading the answer. docs/explain.md ("MCP") documents the
 * marking. Pure. */
#ifndef IG_MCPMARK_H
#define IG_MCPMARK_H

#include <stddef.h>

#include "core/json.h"

/* Copies s into dst as valid UTF-8 without control characters: C0 (but
 * none is kept, not even TAB or LF: each becomes a space), DEL, C1,
 * U+2028/U+2029 and the bidirectional controls (U+200E/F, U+202A..E,
 * U+2066..9) become a space; bytes that are not UTF-8 become U+FFFD.
 * The marker brackets U+27E6/U+27E7 become U+FFFD too (see mcp_mark).
 * Returns the length the whole result needs, like snprintf. */
size_t mcp_strip(char *dst, size_t cap, const char *s);

/* {"untrusted_text": stripped s}. NULL when out of memory. */
json_t *mcp_untrusted(const char *s);

enum mcp_mark_how {
	MARK_OBJECT = 1,   /* "x" -> {"untrusted_text": "x"} (JSON answers) */
	MARK_BRACKETS = 2, /* "x" -> "⟦x⟧" (text answers, e.g. the Markdown report) */
};

/* Marks, in place, every string of v except those that ingero-top itself
 * spells: the values of the members named in a short list of enumerations
 * (op, class, severity, id, kind, state, time, ...) and everything under
 * evidence, evidence_text, parts, range and filter. Array elements count
 * under the member that holds the array. Returns v. */
json_t *mcp_mark(json_t *v, int how);

#endif
