/* JSON through jansson, the one JSON library of the project. Every JSON
 * ingero-top writes or reads (the --json frames, the stacks section, the
 * JSON columns of recordings) is built and parsed with jansson; this header
 * holds what every user would otherwise repeat: strings from untrusted bytes,
 * numbers spelt the way the outputs spell them, one compact line on a FILE*,
 * members read with a default. Values are jansson's json_t: the caller owns
 * what a constructor returns and json_decref()s it. */
#ifndef IG_JSON_H
#define IG_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A JSON string holding the bytes of s (NULL = ""): valid UTF-8 is kept as
 * it is, every byte that is not part of a valid UTF-8 sequence becomes
 * U+FFFD, so text from traced programs (names, paths, symbols) always
 * encodes. NULL only when out of memory. */
json_t *ig_json_str(const char *s);
/* The same for n bytes that may hold NUL bytes (written as \u0000). */
json_t *ig_json_strn(const char *s, size_t n);

/* v as the outputs spell numbers: null for NaN and infinities, an integer
 * when v is integral and below 9e15 in magnitude, else a real (written with
 * 6 significant digits). */
json_t *ig_json_num(double v);
/* An unsigned count or time: an integer up to INT64_MAX, a real above. */
json_t *ig_json_u64(uint64_t v);

/* Adds key: v to the object o and takes v (also when it fails). Returns 0,
 * or 1 when o or v is NULL (an allocation before failed) or out of memory:
 * builders OR the results and check once. */
int ig_json_set(json_t *o, const char *key, json_t *v);
/* Appends v to the array a and takes it. Same returns. */
int ig_json_push(json_t *a, json_t *v);

/* Writes v compactly on one line ending in '\n'. Besides what JSON requires
 * (quotes, backslashes, control characters), DEL, the C1 controls and
 * U+2028/U+2029 are written as \u escapes too, so no byte of a string can
 * act on a terminal or end a JavaScript string. Returns 0 or -EIO (also
 * when out of memory). */
int ig_json_write_line(FILE *f, const json_t *v);
/* The same text without the newline, malloc'd (the caller frees it); NULL
 * when out of memory. */
char *ig_json_dumps(const json_t *v);
/* The same with reals written with 17 significant digits, so that every
 * double reads back as the same double (timestamps of trace exports). */
char *ig_json_dumps_exact(const json_t *v);

/* Parses one JSON value (arrays, objects, and scalars too). NULL when text
 * is NULL or not valid JSON. The caller json_decref()s the result. */
json_t *ig_json_parse(const char *text);

/* Members of an object, or dflt when o is not an object, the key is absent
 * or its value has another type. get_int accepts integral reals; get_num
 * integers and reals. The string is owned by o. */
int64_t ig_json_get_int(const json_t *o, const char *key, int64_t dflt);
double ig_json_get_num(const json_t *o, const char *key, double dflt);
const char *ig_json_get_str(const json_t *o, const char *key, const char *dflt);

#endif
