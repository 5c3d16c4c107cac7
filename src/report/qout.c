/* Query results as an aligned table, CSV or JSON (qout.h). */
#include "report/qout.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/escape.h"

/* A value as the table and CSV show it, escaped: a number or NULL in num
 * (nlen bytes), text and blobs malloc'd into *own (free it); NULL when out
 * of memory. One value at a time, so an output takes no more memory than
 * its largest value. */
static const char *cell_str(const struct query_cell *v, char *num, size_t nlen, char **own)
{
	*own = NULL;
	switch (v->type) {
	case QV_INT:
		snprintf(num, nlen, "%" PRId64, v->i);
		return num;
	case QV_REAL:
		snprintf(num, nlen, "%.10g", v->r);
		return num;
	case QV_TEXT: {
		size_t need = esc_text(NULL, 0, v->s, 0) + 1;
		if ((*own = malloc(need)))
			esc_text(*own, need, v->s, 0);
		return *own;
	}
	case QV_BLOB: {
		char *b = *own = malloc((size_t)v->n * 2 + 4);
		if (!b)
			return NULL;
		char *p = b + sprintf(b, "x'");
		for (size_t k = 0; k < v->n; k++)
			p += sprintf(p, "%02x", (unsigned char)v->s[k]);
		strcpy(p, "'");
		return b;
	}
	}
	snprintf(num, nlen, "NULL");
	return num;
}

/* Characters of a UTF-8 string (escaped text is valid UTF-8). */
static size_t width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static void pad(FILE *f, size_t n)
{
	while (n--)
		fputc(' ', f);
}

/* The width of cell k in characters; -1 when out of memory. */
static long cell_width(const struct query_result *r, uint64_t k)
{
	char num[64], *own;
	const char *t = cell_str(&r->cells[k], num, sizeof(num), &own);
	long w = t ? (long)width(t) : -1;
	free(own);
	return w;
}

/* Two passes over the cells: the widths, then the lines; each value is
 * formatted when it is needed, never all at once. */
static int write_table(FILE *f, const struct query_result *r)
{
	int nc = r->ncol, rc = 0;
	size_t *w = calloc((size_t)(nc ? nc : 1), sizeof(*w));
	char **hdr = calloc((size_t)(nc ? nc : 1), sizeof(*hdr));
	if (!w || !hdr)
		rc = -ENOMEM;
	for (int c = 0; !rc && c < nc; c++) {
		size_t need = esc_text(NULL, 0, r->cols[c], 0) + 1;
		if (!(hdr[c] = malloc(need)))
			rc = -ENOMEM;
		else
			w[c] = width(esc_str(hdr[c], need, r->cols[c], 0));
	}
	for (uint64_t k = 0; !rc && k < r->nrows * (uint64_t)nc; k++) {
		long cw = cell_width(r, k);
		if (cw < 0)
			rc = -ENOMEM;
		else if ((size_t)cw > w[k % (uint64_t)nc])
			w[k % (uint64_t)nc] = (size_t)cw;
	}
	for (int c = 0; !rc && c < nc; c++) {
		fputs(hdr[c], f);
		if (c + 1 < nc)
			pad(f, w[c] - width(hdr[c]) + 2);
	}
	if (!rc)
		fputc('\n', f);
	for (int c = 0; !rc && c < nc; c++) {
		for (size_t k = 0; k < w[c]; k++)
			fputc('-', f);
		fputs(c + 1 < nc ? "  " : "\n", f);
	}
	for (uint64_t row = 0; !rc && row < r->nrows; row++)
		for (int c = 0; !rc && c < nc; c++) {
			uint64_t k = row * (uint64_t)nc + (uint64_t)c;
			char num[64], *own;
			const char *t = cell_str(&r->cells[k], num, sizeof(num), &own);
			if (!t) {
				rc = -ENOMEM;
				break;
			}
			int isnum = r->cells[k].type == QV_INT || r->cells[k].type == QV_REAL;
			size_t gap = w[c] - width(t);
			if (isnum)
				pad(f, gap);
			fputs(t, f);
			free(own);
			if (c + 1 < nc)
				pad(f, (isnum ? 0 : gap) + 2);
			else
				fputc('\n', f);
		}
	for (int c = 0; hdr && c < nc; c++)
		free(hdr[c]);
	free(hdr);
	free(w);
	return rc;
}

static void csv_field(FILE *f, const char *s)
{
	if (!s[strcspn(s, ",\" \t")] && *s) {
		fputs(s, f);
		return;
	}
	fput_quoted(f, '"', s);
}

static int write_csv(FILE *f, const struct query_result *r)
{
	for (int c = 0; c < r->ncol; c++) {
		size_t need = esc_text(NULL, 0, r->cols[c], 0) + 1;
		char *h = malloc(need);
		if (!h)
			return -ENOMEM;
		csv_field(f, esc_str(h, need, r->cols[c], 0));
		free(h);
		fputc(c + 1 < r->ncol ? ',' : '\n', f);
	}
	for (uint64_t row = 0; row < r->nrows; row++)
		for (int c = 0; c < r->ncol; c++) {
			const struct query_cell *v =
			    &r->cells[row * (uint64_t)r->ncol + (uint64_t)c];
			if (v->type != QV_NULL) {
				char num[64], *own;
				const char *t = cell_str(v, num, sizeof(num), &own);
				if (!t)
					return -ENOMEM;
				csv_field(f, t);
				free(own);
			}
			fputc(c + 1 < r->ncol ? ',' : '\n', f);
		}
	return 0;
}

static json_t *json_cell(const struct query_cell *v, qout_text_fn text)
{
	switch (v->type) {
	case QV_INT:
		return json_integer(v->i);
	case QV_REAL:
		return ig_json_num(v->r);
	case QV_TEXT:
		return text ? text(v->s, v->n) : ig_json_strn(v->s, v->n);
	case QV_BLOB: {
		char num[64], *own;
		const char *t = cell_str(v, num, sizeof(num), &own);
		json_t *j = t ? json_string(t) : NULL;
		free(own);
		return j;
	}
	}
	return json_null();
}

/* Row row as a JSON array. */
static json_t *json_row(const struct query_result *r, uint64_t row, qout_text_fn text)
{
	json_t *a = json_array();
	int bad = !a;
	for (int c = 0; !bad && c < r->ncol; c++)
		bad |= ig_json_push(
		    a, json_cell(&r->cells[row * (uint64_t)r->ncol + (uint64_t)c], text));
	if (bad) {
		json_decref(a);
		return NULL;
	}
	return a;
}

static json_t *json_truncated(const struct query_result *r)
{
	return r->cut == QUERY_CUT_ROWS	   ? json_string("rows")
	       : r->cut == QUERY_CUT_BYTES ? json_string("bytes")
					   : json_false();
}

json_t *qout_json(const struct query_result *r, qout_text_fn text)
{
	json_t *o = json_object(), *cols = json_array(), *rows = json_array();
	int bad = !o || !cols || !rows;
	for (int c = 0; c < r->ncol; c++)
		bad |= ig_json_push(cols, ig_json_str(r->cols[c]));
	for (uint64_t row = 0; !bad && row < r->nrows; row++)
		bad |= ig_json_push(rows, json_row(r, row, text));
	bad |= ig_json_set(o, "columns", cols);
	bad |= ig_json_set(o, "rows", rows);
	bad |= ig_json_set(o, "row_count", ig_json_u64(r->nrows));
	bad |= ig_json_set(o, "truncated", json_truncated(r));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Writes compact JSON of v and frees v; -ENOMEM or -EIO. */
static int put_json(FILE *f, json_t *v)
{
	char *s = v ? ig_json_dumps(v) : NULL;
	json_decref(v);
	if (!s)
		return -ENOMEM;
	int bad = fputs(s, f) == EOF;
	free(s);
	return bad ? -EIO : 0;
}

/* qout_json's text, written a row at a time: the same bytes without the
 * tree of the whole result (which took ten times the result's memory). */
static int write_json(FILE *f, const struct query_result *r)
{
	json_t *cols = json_array();
	int rc = cols ? 0 : -ENOMEM;
	for (int c = 0; !rc && c < r->ncol; c++)
		rc = ig_json_push(cols, ig_json_str(r->cols[c])) ? -ENOMEM : 0;
	if (rc) {
		json_decref(cols);
		return rc;
	}
	fputs("{\"columns\":", f);
	rc = put_json(f, cols);
	if (!rc)
		fputs(",\"rows\":[", f);
	for (uint64_t row = 0; !rc && row < r->nrows; row++) {
		if (row)
			fputc(',', f);
		rc = put_json(f, json_row(r, row, NULL));
	}
	if (!rc)
		fprintf(f, "],\"row_count\":%" PRIu64 ",\"truncated\":", r->nrows);
	if (!rc)
		rc = put_json(f, json_truncated(r));
	if (!rc && fputs("}\n", f) == EOF)
		rc = -EIO;
	return rc;
}

char *qout_cut_msg(char *buf, size_t n, const struct query_result *r)
{
	if (r->cut == QUERY_CUT_ROWS)
		snprintf(buf, n,
			 "result cut at %" PRIu64 " rows (the row cap): add a LIMIT or a WHERE, or "
			 "raise --max-rows",
			 r->max_rows);
	else if (r->cut == QUERY_CUT_BYTES)
		snprintf(buf, n,
			 "result cut at %" PRIu64 " rows, %" PRIu64 " bytes (the byte cap): select "
			 "fewer or shorter columns, or raise --max-bytes",
			 r->nrows, r->max_bytes);
	else if (n)
		buf[0] = 0;
	return buf;
}

int qout_write(FILE *f, const struct query_result *r, int fmt)
{
	int rc = 0;
	if (fmt == QOUT_JSON)
		rc = write_json(f, r);
	else if (fmt == QOUT_CSV)
		rc = write_csv(f, r);
	else
		rc = write_table(f, r);
	if (!rc && ferror(f))
		rc = -EIO;
	return rc;
}
