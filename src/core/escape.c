/* The escaping rule for untrusted text in text outputs (see escape.h). */
#include "core/escape.h"

#include <stdlib.h>
#include <string.h>

int esc_utf8_len_n(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if (n < 3 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if (c == 0xe0 && s[1] < 0xa0)
			return 0; /* overlong */
		if (c == 0xed && s[1] >= 0xa0)
			return 0; /* surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if (n < 4 || (s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 ||
		    (s[3] & 0xc0) != 0x80)
			return 0;
		if (c == 0xf0 && s[1] < 0x90)
			return 0; /* overlong */
		if (c == 0xf4 && s[1] >= 0x90)
			return 0; /* > U+10FFFF */
		return 4;
	}
	return 0;
}

/* A NUL ends a sequence early (it is no continuation byte), so reading up
 * to four bytes of a NUL-terminated string never passes its end. */
int esc_utf8_len(const unsigned char *s)
{
	return esc_utf8_len_n(s, 4);
}

/* The escaped form of the unit at s: writes it into u (at least 9 bytes)
 * and returns its length; *in is set to the number of input bytes taken. */
static int unit(const unsigned char *s, unsigned flags, char *u, int *in)
{
	static const char hex[] = "0123456789abcdef";
	unsigned c = s[0];
	int n = 0;

	*in = 1;
	if (c == '\\' || c == '\n' || c == '\r' || c == '\t') {
		u[0] = '\\';
		u[1] = c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
		return 2;
	}
	if (c == ' ' && (flags & ESC_FIELD)) {
		u[0] = '_';
		return 1;
	}
	if (c >= 0x20 && c < 0x7f) {
		u[0] = (char)c;
		return 1;
	}
	int len = c < 0x80 ? 0 : esc_utf8_len(s);
	if (len && !(c == 0xc2 && s[1] < 0xa0)) { /* valid and not a C1 control */
		for (int k = 0; k < len; k++)
			u[k] = (char)s[k];
		*in = len;
		return len;
	}
	int bytes = len ? len : 1; /* a C1 control is escaped whole */
	for (int k = 0; k < bytes; k++) {
		u[n++] = '\\';
		u[n++] = 'x';
		u[n++] = hex[s[k] >> 4];
		u[n++] = hex[s[k] & 15];
	}
	*in = bytes;
	return n;
}

size_t esc_text(char *dst, size_t cap, const char *src, unsigned flags)
{
	const unsigned char *s = (const unsigned char *)(src ? src : "");
	size_t o = 0;
	int cut = 0;

	while (*s) {
		char u[16];
		int in, n = unit(s, flags, u, &in);
		if (!cut && o + (size_t)n < cap) {
			for (int k = 0; k < n; k++)
				dst[o + (size_t)k] = u[k];
		} else if (!cut && cap) {
			dst[o] = 0; /* no room for the whole unit: stop writing here */
			cut = 1;
		}
		o += (size_t)n;
		s += in;
	}
	if (cap && !cut)
		dst[o] = 0;
	return o;
}

const char *esc_str(char *buf, size_t cap, const char *s, unsigned flags)
{
	esc_text(buf, cap, s, flags);
	return buf;
}

void esc_fputs(FILE *f, const char *s, unsigned flags)
{
	char buf[512];
	size_t need = esc_text(buf, sizeof(buf), s, flags);
	if (need < sizeof(buf)) {
		fputs(buf, f);
		return;
	}
	char *big = malloc(need + 1);
	if (big) {
		esc_text(big, need + 1, s, flags);
		fputs(big, f);
		free(big);
		return;
	}
	/* No memory: one unit at a time. */
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		char u[16];
		int in, n = unit(p, flags, u, &in);
		fwrite(u, 1, (size_t)n, f);
		p += in;
	}
}

size_t esc_utf8_valid(char *dst, size_t cap, const char *src)
{
	static const char fffd[] = "\xef\xbf\xbd";
	const unsigned char *s = (const unsigned char *)(src ? src : "");
	size_t o = 0;
	int cut = 0;

	while (*s) {
		int len = esc_utf8_len(s);
		const char *u = len ? (const char *)s : fffd;
		int n = len ? len : 3;
		if (!cut && o + (size_t)n < cap) {
			memcpy(dst + o, u, (size_t)n);
		} else if (!cut && cap) {
			dst[o] = 0;
			cut = 1;
		}
		o += (size_t)n;
		s += len ? len : 1;
	}
	if (cap && !cut)
		dst[o] = 0;
	return o;
}

void fput_quoted(FILE *f, char q, const char *s)
{
	fputc(q, f);
	for (; *s; s++) {
		if (*s == q)
			fputc(q, f);
		fputc(*s, f);
	}
	fputc(q, f);
}
