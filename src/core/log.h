/* A bounded in-memory log of messages (ours and libbpf's) that the TUI can
 * show with a key; nothing is ever written over the screen. In batch mode
 * messages at or above the echo level also go to stderr. */
#ifndef IG_LOG_H
#define IG_LOG_H

#include <stdarg.h>
#include <stdio.h>

enum log_level { LOG_DEBUG = 0, LOG_INFO = 1, LOG_WARN = 2, LOG_ERROR = 3 };

#define LOG_LINES 512
#define LOG_LINE_LEN 240

void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_vmsg(int level, const char *fmt, va_list ap);
/* Messages at level >= min are also written to f (NULL: never). */
void log_echo(FILE *f, int min_level);
/* Number of lines kept, and line i (0 = oldest). The string is owned by the
 * log and stays valid until the next log_msg. */
int log_count(void);
const char *log_line(int i, int *level);
/* libbpf's messages are routed here by collect/check.h's
 * log_capture_libbpf (core knows no library). */

#endif
