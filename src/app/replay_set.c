/* `--replay DIR` and `--replay 'GLOB'` (quoted: DIR/ingero-[star].db): a
 * directory of rotated recordings (`ingero-top record`) or a glob becomes
 * the list of its files that --since/--until need, in time order, merged by the replay into one
 * session (store/recdir.h chooses them by the times in their names).
 * --since/--until are read here against the whole set, then handed on as
 * Unix ns, so "+30s" is from the start of the set, not of the first file
 * chosen. */
#include "app/replay_set.h"

#include "core/escape.h"
#include "core/timearg.h"
#include "store/recdir.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct recdir_list sets[CLI_MAX_REPLAY];
static int nsets;
static char since_ns[24], until_ns[24];

static void free_sets(void)
{
	for (int i = 0; i < nsets; i++)
		recdir_list_free(&sets[i]);
	nsets = 0;
}

/* --since or --until against [start, end] of the set, as Unix ns in buf. */
static int absolute(const char **arg, const char *opt, uint64_t start, uint64_t end, char *buf,
		    size_t n, uint64_t *ns)
{
	char err[256], e[300];
	*ns = 0;
	if (!*arg)
		return 0;
	if (timearg_parse(*arg, start, end, ns, err, sizeof(err))) {
		fprintf(stderr, "ingero-top: %s: %s\n", opt, esc_str(e, sizeof(e), err, 0));
		return 2;
	}
	snprintf(buf, n, "%" PRIu64, *ns ? *ns : 1);
	*arg = buf;
	return 0;
}

int replay_set_expand(struct cli *cli)
{
	const char *in[CLI_MAX_REPLAY];
	int nin = cli->nreplay, any = 0;
	uint64_t start = UINT64_MAX, end = 0, since, until;
	char err[512], e[600];

	for (int i = 0; i < nin; i++)
		any |= recdir_is_set(cli->replay[i]);
	if (!any)
		return 0;
	atexit(free_sets);
	memcpy(in, cli->replay, sizeof(in));
	for (int i = 0; i < nin; i++) {
		if (!recdir_is_set(in[i]))
			continue;
		if (recdir_list(in[i], &sets[nsets], err, sizeof(err))) {
			fprintf(stderr, "ingero-top: cannot replay: %s\n",
				esc_str(e, sizeof(e), err, 0));
			return 1;
		}
		struct recdir_list *l = &sets[nsets++];
		if (l->f[0].start_ns && l->f[0].start_ns < start)
			start = l->f[0].start_ns;
		if (l->f[l->n - 1].end_ns > end)
			end = l->f[l->n - 1].end_ns;
	}
	if (start == UINT64_MAX)
		start = 0;
	if (absolute(&cli->since, "--since", start, end, since_ns, sizeof(since_ns), &since) ||
	    absolute(&cli->until, "--until", start, end, until_ns, sizeof(until_ns), &until))
		return 2;
	/* the files each set needs, in its place on the command line */
	const char *out[CLI_MAX_REPLAY * 4];
	int nout = 0, set = 0, total = 0;
	for (int i = 0; i < nin; i++) {
		if (!recdir_is_set(in[i])) {
			out[nout++] = in[i];
			continue;
		}
		struct recdir_list *l = &sets[set++];
		size_t a, b;
		if (recdir_select(l, since, until, &a, &b))
			continue; /* replay_range says the range is empty */
		total += (int)(b - a + 1);
		/* more than a replay merges: the newest of the range */
		if (b - a + 1 > CLI_MAX_REPLAY)
			a = b + 1 - CLI_MAX_REPLAY;
		for (size_t k = a; k <= b && nout < (int)(sizeof(out) / sizeof(out[0])); k++)
			out[nout++] = l->f[k].path;
	}
	if (!nout) {
		fprintf(stderr, "ingero-top: no recordings in the range of --since and --until\n");
		return 2;
	}
	if (nout > CLI_MAX_REPLAY) {
		memmove(out, out + nout - CLI_MAX_REPLAY, CLI_MAX_REPLAY * sizeof(out[0]));
		nout = CLI_MAX_REPLAY;
	}
	if (nout < total || total > CLI_MAX_REPLAY)
		fprintf(stderr,
			"ingero-top: replaying the newest %d of the %d files in the range (a "
			"replay merges %d at most): narrow it with --since/--until\n",
			nout, total, CLI_MAX_REPLAY);
	memcpy(cli->replay, out, (size_t)nout * sizeof(out[0]));
	cli->nreplay = nout;
	return 0;
}
