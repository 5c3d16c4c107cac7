/* `ingero-top record`: the always-on recorder (app/cmd_record.c). argv[0]
 * is "record"; returns the exit status. */
#ifndef IG_CMD_RECORD_H
#define IG_CMD_RECORD_H

int record_main(int argc, char **argv);

#endif
