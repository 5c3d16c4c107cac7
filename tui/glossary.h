/* Words for the numbers: what each part of the wall time is called and
 * means, and a one-line explanation of every evidence key the detector
 * writes, shown beside the value on the alert screen. Pure data;
 * tests/unit/test_tui_figures.c checks that every key the detector emits
 * on the synthetic streams has one. */
#ifndef TUI_GLOSSARY_H
#define TUI_GLOSSARY_H

/* A part of the wall time (enum ig_part): its label in a legend ("GPU
 * wait"), its short label ("gpu"), a letter for ASCII bars ('G'), and what it
 * means. NULL / 0 when out of range. */
const char *gloss_part_label(int part);
const char *gloss_part_short(int part);
char gloss_part_letter(int part);
const char *gloss_part_help(int part);

/* What an evidence key means (impact_pct, task_wait_pct, p99_ns, ...), or
 * NULL when the glossary does not know it. */
const char *gloss_evidence(const char *key);

#endif
