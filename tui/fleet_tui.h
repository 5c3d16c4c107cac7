/* The fleet screen (--ssh without --batch or --json): one row per host,
 * worst first, Enter opens a host's own viewer over ssh -t (docs/fleet.md).
 * Implemented in tui/fleet*.c; app/fleet_main.c calls it with a fleet
 * whose connections it has not started yet (the screen drives fleet_step)
 * and frees the fleet after. Returns the exit status. */
#ifndef IG_FLEET_TUI_H
#define IG_FLEET_TUI_H

#include "fleet/fleet.h"

#include <stdbool.h>

int tui_fleet_run(struct fleet *f, const struct fleet_opts *o);
/* The screen's display options (--theme NAME, --no-color, --ascii; NULL,
 * false, false: the defaults), set before tui_fleet_run. */
void tui_fleet_display(const char *theme, bool no_color, bool ascii);

#endif
