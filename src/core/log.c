/* The message ring behind log.h. Single-threaded by design: only the main
 * loop logs (the flight-recorder thread reports through its own poll). */
#include "core/log.h"

#include "core/escape.h"

#include <stdarg.h>
#include <string.h>

static char lines[LOG_LINES][LOG_LINE_LEN];
static int levels[LOG_LINES];
static int head, count;
static FILE *echo_f;
static int echo_min = LOG_ERROR;

void log_vmsg(int level, const char *fmt, va_list ap)
{
	char *l = lines[head];
	vsnprintf(l, LOG_LINE_LEN, fmt, ap);
	l[strcspn(l, "\n")] = 0;
	levels[head] = level;
	head = (head + 1) % LOG_LINES;
	if (count < LOG_LINES)
		count++;
	if (echo_f && level >= echo_min) { /* messages may quote names and paths */
		fputs("ingero-top: ", echo_f);
		esc_fputs(echo_f, l, 0);
		fputc('\n', echo_f);
	}
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

void log_echo(FILE *f, int min_level)
{
	echo_f = f;
	echo_min = min_level;
}

int log_count(void)
{
	return count;
}

const char *log_line(int i, int *level)
{
	if (i < 0 || i >= count)
		return NULL;
	int idx = (head - count + i + LOG_LINES) % LOG_LINES;
	if (level)
		*level = levels[idx];
	return lines[idx];
}
