/* The one escaping rule for text that came from traced programs or from a
 * recording (process and thread names, stack symbols, file paths, chain
 * text) on its way to a text output: batch frames, --events lines, --stacks,
 * messages on stderr. No byte that a terminal interprets reaches it raw.
 *
 * The rule (docs/batch.md):
 *   '\\'                        -> \\
 *   LF, CR, TAB                 -> \n, \r, \t
 *   other bytes < 0x20, 0x7f    -> \xNN (two lowercase hex digits)
 *   C1 controls U+0080..U+009F  -> \xc2\xNN (their two UTF-8 bytes)
 *   bytes that are not valid UTF-8 (stray continuation, overlong,
 *   surrogate, > U+10FFFF, cut sequence) -> \xNN, one per byte
 *   every other valid UTF-8 sequence passes unchanged.
 * With ESC_FIELD the text is one whitespace-separated field: a space also
 * becomes '_' (as the text tables always did), so it cannot split a field. */
#ifndef IG_ESCAPE_H
#define IG_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

enum esc_flags {
	ESC_FIELD = 1, /* ' ' -> '_' (one field of a whitespace-separated line) */
};

/* Writes s (NULL: "") escaped into dst, NUL-terminated when cap > 0, never
 * cutting an escape or a UTF-8 sequence in two. Returns the length the whole
 * escaped text needs (without the NUL), like snprintf: the output was cut
 * when the result is >= cap. */
size_t esc_text(char *dst, size_t cap, const char *s, unsigned flags);

/* esc_text into buf (cap bytes) and returns buf, for printf arguments. */
const char *esc_str(char *buf, size_t cap, const char *s, unsigned flags);

/* Writes s escaped to f, whole (no length limit). */
void esc_fputs(FILE *f, const char *s, unsigned flags);

/* Length (1..4) of the valid UTF-8 sequence at s, or 0 when the byte at s
 * does not start one (s must be NUL-terminated: a cut sequence is invalid). */
int esc_utf8_len(const unsigned char *s);
/* The same within the n bytes at s (a buffer with a length, maybe no NUL):
 * the rules jansson checks too (no overlong forms, no surrogates, nothing
 * above U+10FFFF). */
int esc_utf8_len_n(const unsigned char *s, size_t n);

/* s between two q characters, each q inside doubled: an SQL identifier
 * ('"') or literal ('\''), a CSV field ('"'). s is written as it is: escape
 * it first where it goes to a terminal. */
void fput_quoted(FILE *f, char q, const char *s);

/* Copies s into dst as valid UTF-8 for JSON strings: every byte that does
 * not belong to a valid sequence becomes U+FFFD; nothing else changes (JSON
 * writers escape control characters their own way). Returns the length the
 * whole result needs, like esc_text; never cuts a sequence. */
size_t esc_utf8_valid(char *dst, size_t cap, const char *s);

#endif
