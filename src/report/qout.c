/* Query results as an aligned table, CSV or JSON (qout.h). */
#include "report/qout.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/escape.h"

/* A value as the table and CSV show it, escaped; malloc'd. */
static char *cell_text(const struct query_cell *v)
{
	char num[64];
	switch (v->type) {
	case QV_INT:
		snprintf(num, sizeof(num), "%" PRId64, v->i);
		return strdup(num);
	case QV_REAL:
		snprintf(num, sizeof(num), "%.10g", v->r);
		return strdup(num);
	case QV_TEXT: {
		size_t need = esc_text(NULL, 0, v->s, 0) + 1;
		char *b = malloc(need);
		if (b)
			esc_text(b, need, v->s, 0);
		return b;
	}
	case QV_BLOB: {
		char *b = malloc(v->n * 2 + 4);
		if (!b)
			return NULL;
		char *p = b + sprintf(b, "x'");
		for (size_t k = 0; k < v->n; k++)
			p += sprintf(p, "%02x", (unsigned char)v->s[k]);
		strcpy(p, "'");
		return b;
	}
	}
	return strdup("NULL");
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

static int write_table(FILE *f, const struct query_result *r)
{
	int nc = r->ncol;
	size_t *w = calloc((size_t)(nc ? nc : 1), sizeof(*w));
	char **txt = calloc(r->nrows * (size_t)nc + 1, sizeof(*txt));
	char **hdr = calloc((size_t)(nc ? nc : 1), sizeof(*hdr));
	int rc = !w || !txt || !hdr ? -ENOMEM : 0;
	for (int c = 0; !rc && c < nc; c++) {
		size_t need = esc_text(NULL, 0, r->cols[c], 0) + 1;
		if (!(hdr[c] = malloc(need)))
			rc = -ENOMEM;
		else
			w[c] = width(esc_str(hdr[c], need, r->cols[c], 0));
	}
	for (uint64_t k = 0; !rc && k < r->nrows * (uint64_t)nc; k++) {
		if (!(txt[k] = cell_text(&r->cells[k])))
			rc = -ENOMEM;
		else if (width(txt[k]) > w[k % (uint64_t)nc])
			w[k % (uint64_t)nc] = width(txt[k]);
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
		for (int c = 0; c < nc; c++) {
			uint64_t k = row * (uint64_t)nc + (uint64_t)c;
			int num = r->cells[k].type == QV_INT || r->cells[k].type == QV_REAL;
			size_t gap = w[c] - width(txt[k]);
			if (num)
				pad(f, gap);
			fputs(txt[k], f);
			if (c + 1 < nc)
				pad(f, (num ? 0 : gap) + 2);
			else
				fputc('\n', f);
		}
	for (uint64_t k = 0; txt && k < r->nrows * (uint64_t)nc; k++)
		free(txt[k]);
	for (int c = 0; hdr && c < nc; c++)
		free(hdr[c]);
	free(txt);
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
				char *t = cell_text(v);
				if (!t)
					return -ENOMEM;
				csv_field(f, t);
				free(t);
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
		char *t = cell_text(v);
		json_t *j = t ? json_string(t) : NULL;
		free(t);
		return j;
	}
	}
	return json_null();
}

json_t *qout_json(const struct query_result *r, qout_text_fn text)
{
	json_t *o = json_object(), *cols = json_array(), *rows = json_array();
	int bad = !o || !cols || !rows;
	for (int c = 0; c < r->ncol; c++)
		bad |= ig_json_push(cols, ig_json_str(r->cols[c]));
	for (uint64_t row = 0; !bad && row < r->nrows; row++) {
		json_t *a = json_array();
		for (int c = 0; c < r->ncol; c++)
			bad |= ig_json_push(
			    a, json_cell(&r->cells[row * (uint64_t)r->ncol + (uint64_t)c], text));
		bad |= ig_json_push(rows, a);
	}
	bad |= ig_json_set(o, "columns", cols);
	bad |= ig_json_set(o, "rows", rows);
	bad |= ig_json_set(o, "row_count", ig_json_u64(r->nrows));
	bad |= ig_json_set(o, "truncated",
			   r->cut == QUERY_CUT_ROWS    ? json_string("rows")
			   : r->cut == QUERY_CUT_BYTES ? json_string("bytes")
						       : json_false());
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
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
	if (fmt == QOUT_JSON) {
		json_t *o = qout_json(r, NULL);
		rc = o ? ig_json_write_line(f, o) : -ENOMEM;
		json_decref(o);
	} else if (fmt == QOUT_CSV) {
		rc = write_csv(f, r);
	} else {
		rc = write_table(f, r);
	}
	if (!rc && ferror(f))
		rc = -EIO;
	return rc;
}
