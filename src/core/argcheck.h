/* Checked option values for every command line (the main one and the
 * explain, query, mcp and export subcommands): one way to refuse a value
 * and one reading of a number, so "nan", "inf", trailing text and values
 * out of range are refused alike everywhere. */
#ifndef IG_ARGCHECK_H
#define IG_ARGCHECK_H

/* One line on stderr: "PREFIX: invalid WHAT 'ARG': WHY (see HELP --help)",
 * the argument escaped (it may hold any byte). */
void arg_bad(const char *prefix, const char *help, const char *what, const char *arg,
	     const char *why);

/* A finite number in [lo, hi] and nothing after it: 0 and *out, or -1. */
int arg_double(const char *s, double lo, double hi, double *out);

#endif
