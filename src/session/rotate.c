/* `ingero-top record`: the recording as rotating files in a directory
 * (store/recdir.h names them). A new file starts when event time crosses a
 * multiple of --rotate (UTC: hourly files start on the hour); the file
 * rotated out is closed (flushed, indexed, its WAL folded in) and the
 * oldest files are pruned for --max-size and --retain by a thread of this
 * module, which also creates the next file a second before its boundary,
 * so that none of it stalls ingest: a rotation on the loop is a swap. A
 * recorder that stopped (a full disk) is replaced at the next boundary. */
#include "session/session_int.h"

#include "core/clock.h"
#include "core/log.h"
#include "store/rec.h"
#include "store/recdir.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define ROTOR_CLOSING 8	   /* files being closed at once, at most */
#define ROTOR_PRUNE_MS 500 /* the pruner looks at the directory this often */
#define ROTOR_AHEAD_NS                                                                             \
	5000000000ull /* an event this far past the wall clock                                     \
		       * does not rotate (the tick does) */

struct rotor {
	char dir[PATH_MAX - 64]; /* room for "/" and a name */
	uint64_t rotate_ns, max_size, retain_ns;
	uint64_t next_ns; /* event time of the next boundary */
	/* shared with the thread, under mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thr;
	int have_thr, quit;
	struct rec *closing[ROTOR_CLOSING];
	int nclosing;
	char current[PATH_MAX]; /* never pruned */
	char note[512];		/* for the status, "" when said */
	uint64_t pruned_files;	/* in all */
	int said_stop;		/* the current file's stop was said */
	/* the next file, made by the thread ahead of its boundary */
	struct rec_opts opts; /* the session's (session_rec_opts) */
	uint64_t want_ns;     /* the start to make a file for; 0: none */
	struct rec *pre;      /* made, for pre_ns; NULL: none */
	uint64_t pre_ns;
	struct rec *discard; /* made for a start that never came: removed */
};

#define ROTOR_PREOPEN_NS 1000000000ull /* how far ahead the next file is made */

/* A notice for the status: what (a path, cut to fit) and why. */
static void note(struct rotor *ro, const char *what, const char *path, const char *why)
{
	pthread_mutex_lock(&ro->mu);
	snprintf(ro->note, sizeof(ro->note), "%.60s %.280s%s%.150s", what, path, why[0] ? ": " : "",
		 why);
	pthread_mutex_unlock(&ro->mu);
}

/* Removes the oldest files over the cap or past the retention, never the
 * one being written nor one still being closed. */
static void prune(struct rotor *ro)
{
	struct recdir_list l;
	char err[512], cur[PATH_MAX];
	if (recdir_list(ro->dir, &l, err, sizeof(err)))
		return;
	size_t n = recdir_prune_count(&l, ro->max_size, ro->retain_ns, ig_unix_now_ns(), 1);
	pthread_mutex_lock(&ro->mu);
	snprintf(cur, sizeof(cur), "%s", ro->current);
	int busy = ro->nclosing;
	pthread_mutex_unlock(&ro->mu);
	uint64_t bytes = 0;
	size_t done = 0;
	for (size_t i = 0; i < n && !busy; i++) {
		if (!strcmp(l.f[i].path, cur))
			break;
		int r = recdir_remove(l.f[i].path);
		if (r && r != -ENOENT) {
			note(ro, "cannot prune", l.f[i].path, strerror(-r));
			break;
		}
		bytes += l.f[i].bytes;
		done++;
	}
	if (done) {
		char what[96];
		snprintf(what, sizeof(what), "%zu file%s (%.1f MiB)", done, done > 1 ? "s" : "",
			 (double)bytes / 1048576.0);
		snprintf(err, sizeof(err), "pruned the oldest %s, up to", what);
		note(ro, err, l.f[done - 1].path, "");
		pthread_mutex_lock(&ro->mu);
		ro->pruned_files += done;
		pthread_mutex_unlock(&ro->mu);
	}
	recdir_list_free(&l);
}

static char *start_path(const struct rotor *ro, uint64_t start, char *path, size_t n)
{
	char name[RECDIR_NAME_LEN];
	snprintf(path, n, "%s/%s", ro->dir, recdir_name(name, sizeof(name), start));
	return path;
}

/* (mu held) The next file, created ahead of its boundary; one made for a
 * start that never came, closed and removed (it holds nothing). */
static void prepare(struct rotor *ro)
{
	char path[PATH_MAX], err[512];
	struct rec *gone = ro->discard;
	uint64_t want = ro->pre ? 0 : ro->want_ns;
	ro->discard = NULL;
	ro->want_ns = 0;
	if (!gone && !want)
		return;
	pthread_mutex_unlock(&ro->mu);
	if (gone) {
		snprintf(path, sizeof(path), "%s", rec_path(gone));
		rec_close(gone);
		recdir_remove(path);
	}
	struct rec *r = want && !ro->quit
			    ? session_rec_create(start_path(ro, want, path, sizeof(path)),
						 &ro->opts, err, sizeof(err))
			    : NULL; /* on failure the loop tries, and says why */
	pthread_mutex_lock(&ro->mu);
	if (r) {
		ro->pre = r;
		ro->pre_ns = want;
	}
}

static void *rotor_main(void *arg)
{
	struct rotor *ro = arg;
	pthread_mutex_lock(&ro->mu);
	for (;;) {
		if (!ro->nclosing && !ro->quit) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += ROTOR_PRUNE_MS * 1000000l;
			if (ts.tv_nsec >= 1000000000l) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000l;
			}
			pthread_cond_timedwait(&ro->cv, &ro->mu, &ts);
		}
		while (ro->nclosing) {
			struct rec *r = ro->closing[0];
			pthread_mutex_unlock(&ro->mu);
			char path[PATH_MAX];
			snprintf(path, sizeof(path), "%s", rec_path(r));
			int c = rec_close(r);
			if (c)
				note(ro, "cannot finish", path, strerror(-c));
			pthread_mutex_lock(&ro->mu);
			memmove(ro->closing, ro->closing + 1,
				--ro->nclosing * sizeof(ro->closing[0]));
		}
		prepare(ro);
		int quit = ro->quit;
		pthread_mutex_unlock(&ro->mu);
		prune(ro);
		pthread_mutex_lock(&ro->mu);
		if (quit)
			break;
	}
	pthread_mutex_unlock(&ro->mu);
	return NULL;
}

/* The file for event time t, named by the boundary at or before t (the
 * first one, by its own second: the service started then). */
static struct rec *open_at(struct session *s, uint64_t t, int first, char *err, size_t errlen)
{
	struct rotor *ro = s->rotor;
	char path[PATH_MAX];
	uint64_t start = first ? t - t % 1000000000ull : t - t % ro->rotate_ns;
	start_path(ro, start, path, sizeof(path));
	ro->next_ns = (t / ro->rotate_ns + 1) * ro->rotate_ns;
	pthread_mutex_lock(&ro->mu);
	struct rec *r = ro->pre && ro->pre_ns == start ? ro->pre : NULL;
	if (ro->pre && !r && !ro->discard) /* made for a start that never came */
		ro->discard = ro->pre;
	ro->pre = NULL;
	pthread_mutex_unlock(&ro->mu);
	if (r)
		session_rec_begin(s, r);
	else
		r = session_rec_open(s, path, err, errlen);
	if (r) {
		pthread_mutex_lock(&ro->mu);
		snprintf(ro->current, sizeof(ro->current), "%s", path);
		pthread_mutex_unlock(&ro->mu);
	}
	return r;
}

/* A new file from event time t on; the one rotated out goes to the thread. */
static void rotate(struct session *s, uint64_t t)
{
	struct rotor *ro = s->rotor;
	char err[512];
	struct rec *old = s->rec;
	if (old) {
		rec_tick(old, t); /* its runs and units, now, into it */
		pthread_mutex_lock(&ro->mu);
		if (ro->nclosing == ROTOR_CLOSING) { /* the disk is far behind: wait */
			pthread_mutex_unlock(&ro->mu);
			rec_close(old);
		} else {
			ro->closing[ro->nclosing++] = old;
			pthread_cond_signal(&ro->cv);
			pthread_mutex_unlock(&ro->mu);
		}
	}
	uint64_t t0 = ig_mono_ns();
	ro->said_stop = 0;
	s->rec = open_at(s, t, 0, err, sizeof(err));
	if (!s->rec) {
		snprintf(s->st.record_error, sizeof(s->st.record_error),
			 "recording stopped: %.100s", err);
		ig_status_say(&s->st, "recording stopped: %s (trying again with the next file)",
			      err);
		return;
	}
	s->st.record_error[0] = 0;
	/* the one step of a rotation on the loop: said, to be watched */
	ig_status_say(&s->st, "recording to %s (opened in %.1f ms)", s->st.recording,
		      (double)(ig_mono_ns() - t0) / 1e6);
}

int session_rotor_open(struct session *s, char *err, size_t errlen)
{
	struct rotor *ro = calloc(1, sizeof(*ro));
	if (!ro) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(ro->dir, sizeof(ro->dir), "%s", s->cli.record_dir);
	ro->rotate_ns = s->cli.rotate_ns ? s->cli.rotate_ns : 3600000000000ull;
	ro->max_size = s->cli.max_size;
	ro->retain_ns = s->cli.retain_ns;
	session_rec_opts(s, &ro->opts);
	pthread_mutex_init(&ro->mu, NULL);
	pthread_cond_init(&ro->cv, NULL);
	s->rotor = ro;
	if (mkdir(ro->dir, 0700) && errno != EEXIST) {
		snprintf(err, errlen, "cannot make the directory %s: %s", ro->dir, strerror(errno));
		return -errno;
	}
	s->rec = open_at(s, ig_unix_now_ns(), 1, err, errlen);
	if (!s->rec)
		return -EINVAL;
	if (pthread_create(&ro->thr, NULL, rotor_main, ro)) {
		snprintf(err, errlen, "cannot start the pruning thread");
		return -EAGAIN;
	}
	ro->have_thr = 1;
	ig_status_say(&s->st, "recording to %s", s->st.recording);
	return 0;
}

void session_rotor_event(struct session *s, uint64_t end_ns)
{
	struct rotor *ro = s->rotor;
	if (end_ns >= ro->next_ns && end_ns <= ig_unix_now_ns() + ROTOR_AHEAD_NS)
		rotate(s, end_ns);
}

void session_rotor_tick(struct session *s)
{
	struct rotor *ro = s->rotor;
	if (s->pos_ns >= ro->next_ns && s->pos_ns <= ig_unix_now_ns() + ROTOR_AHEAD_NS)
		rotate(s, s->pos_ns);
	pthread_mutex_lock(&ro->mu);
	if (s->pos_ns + ROTOR_PREOPEN_NS >= ro->next_ns && ro->pre_ns != ro->next_ns &&
	    ro->want_ns != ro->next_ns && !ro->pre) {
		ro->want_ns = ro->next_ns;
		pthread_cond_signal(&ro->cv);
	}
	pthread_mutex_unlock(&ro->mu);
	if (s->rec && rec_error(s->rec) && !ro->said_stop) { /* a full disk: said, whole */
		ro->said_stop = 1;
		ig_status_say(&s->st, "%s (trying again with the next file)", rec_error(s->rec));
	}
	pthread_mutex_lock(&ro->mu);
	if (ro->note[0]) {
		ig_status_say(&s->st, "%s", ro->note);
		log_msg(LOG_INFO, "%s", ro->note);
		ro->note[0] = 0;
	}
	pthread_mutex_unlock(&ro->mu);
}

void session_rotor_free(struct session *s)
{
	struct rotor *ro = s->rotor;
	if (!ro)
		return;
	if (ro->have_thr) {
		pthread_mutex_lock(&ro->mu);
		ro->quit = 1;
		pthread_cond_signal(&ro->cv);
		pthread_mutex_unlock(&ro->mu);
		pthread_join(ro->thr, NULL);
	}
	for (int i = 0; i < ro->nclosing; i++) /* no thread: closed here */
		rec_close(ro->closing[i]);
	struct rec *unused[] = {ro->pre, ro->discard}; /* made ahead, never written */
	for (size_t i = 0; i < sizeof(unused) / sizeof(unused[0]); i++) {
		char path[PATH_MAX];
		if (!unused[i])
			continue;
		snprintf(path, sizeof(path), "%s", rec_path(unused[i]));
		rec_close(unused[i]);
		recdir_remove(path);
	}
	if (ro->note[0])
		log_msg(LOG_INFO, "%s", ro->note);
	pthread_mutex_destroy(&ro->mu);
	pthread_cond_destroy(&ro->cv);
	free(ro);
	s->rotor = NULL;
}
