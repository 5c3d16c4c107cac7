/* The session's notices (status.h). */
#include "core/status.h"

#include <stdarg.h>
#include <stdio.h>

void ig_status_said(struct ig_status *st)
{
	snprintf(st->notes[st->notes_n % IG_STATUS_NOTES], sizeof(st->notes[0]), "%s",
		 st->message);
	st->notes_n++;
}

void ig_status_say(struct ig_status *st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(st->message, sizeof(st->message), fmt, ap);
	va_end(ap);
	ig_status_said(st);
}
