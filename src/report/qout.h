/* Results of read-only queries (store/query.h) for people and programs: an
 * aligned table, CSV, or one JSON object. Text values come from recordings:
 * in the table and CSV forms they go through the one escaping rule
 * (core/escape.h), in JSON through jansson. */
#ifndef IG_QOUT_H
#define IG_QOUT_H

#include <stdio.h>

#include "core/json.h"
#include "store/query.h"

enum qout_fmt { QOUT_TABLE = 0, QOUT_CSV, QOUT_JSON };

/* Writes r in fmt to f. The table: a header, a rule, one line per row,
 * numbers right-aligned, NULL as "NULL", widths in characters. CSV: RFC
 * 4180 quoting (a field with a comma, a quote or a blank is quoted, quotes
 * doubled), a header line, NULL as an empty field. JSON: qout_json on one
 * line. Returns 0 or -EIO / -ENOMEM. */
int qout_write(FILE *f, const struct query_result *r, int fmt);

/* {"columns": [names], "rows": [[values]], "row_count": n, "truncated":
 * false | "rows" | "bytes"}: integers as integers, reals as numbers, NULL
 * as null, text as strings (text(s, n) when given: the MCP server marks
 * them as data), blobs as hex strings "x'0a1b'". NULL when out of memory.
 * The caller owns the result. */
typedef json_t *(*qout_text_fn)(const char *s, size_t n);
json_t *qout_json(const struct query_result *r, qout_text_fn text);

/* One line for stderr when r was cut by a cap ("result cut at 100000 rows:
 * ..."), "" when it was not. Returns buf. */
char *qout_cut_msg(char *buf, size_t n, const struct query_result *r);

#endif
