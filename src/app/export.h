/* `ingero-top export`: recordings to other tools' formats (for now the
 * Perfetto / Chrome trace-event JSON of report/perfetto.h). */
#ifndef IG_EXPORT_H
#define IG_EXPORT_H

/* argv[0] is "export". Returns the process exit code: 0, 1 when the export
 * failed (after a one-line reason on stderr), 2 on bad usage. */
int export_main(int argc, char **argv);

#endif
