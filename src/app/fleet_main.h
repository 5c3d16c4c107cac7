/* ingero-top --ssh HOSTS (docs/fleet.md): main() and `explain` hand the
 * command line over here when it names hosts. Each returns the exit
 * status; argv[0] is the program (fleet_main) or "explain". */
#ifndef IG_FLEET_MAIN_H
#define IG_FLEET_MAIN_H

#include <stdbool.h>

/* true when argv (before a "--") has --ssh or --hosts-file. */
bool fleet_wanted(int argc, char **argv);
int fleet_main(int argc, char **argv);
int fleet_explain_main(int argc, char **argv);

#endif
