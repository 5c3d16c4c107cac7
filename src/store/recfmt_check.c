/* The bounds of values read from a recording: every reader of the format
 * (own rows here, Ingero's in replay_ingero.c) refuses a row whose values
 * are out of range, whole; nothing is clamped. docs/recording.md lists the
 * bounds ("Values out of range"). */
#include "store/recfmt.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

int recfmt_col_in(sqlite3_stmt *st, int col, int64_t lo, int64_t hi)
{
	if (sqlite3_column_type(st, col) != SQLITE_INTEGER)
		return 0;
	int64_t v = sqlite3_column_int64(st, col);
	return v >= lo && v <= hi;
}

int recfmt_col_real_in(sqlite3_stmt *st, int col, double lo, double hi)
{
	int t = sqlite3_column_type(st, col);
	if (t != SQLITE_INTEGER && t != SQLITE_FLOAT)
		return 0;
	double v = sqlite3_column_double(st, col);
	return isfinite(v) && v >= lo && v <= hi;
}

int recfmt_row_has_null(sqlite3_stmt *st)
{
	int n = sqlite3_column_count(st);
	for (int c = 0; c < n; c++)
		if (sqlite3_column_type(st, c) == SQLITE_NULL)
			return 1;
	return 0;
}

int recfmt_ts_ok(int64_t ts)
{
	return ts >= 1 && ts <= RECFMT_TS_MAX_NS;
}

int recfmt_pid_ok(int64_t pid)
{
	return pid >= 1 && pid <= RECFMT_PID_MAX;
}

int64_t recfmt_dur_max(int64_t lo, int64_t hi)
{
	if (!recfmt_ts_ok(lo) || !recfmt_ts_ok(hi) || hi < lo)
		return RECFMT_DUR_SLACK_NS;
	return hi - lo + RECFMT_DUR_SLACK_NS;
}

/* Off-CPU time inside a call or an interval cannot exceed it: the shares
 * of a duration stay within 100 %. */
static int parts_ok(int64_t dur, int64_t pre, int64_t blk)
{
	return pre >= 0 && blk >= 0 && pre <= dur && blk <= dur - pre;
}

/* Columns of recfmt_event_select_sql, by index. */
enum {
	EC_PID = 1,
	EC_TID = 2,
	EC_DUR = 3,
	EC_ARG0 = 4,
	EC_ARG1 = 5,
	EC_RET = 6,
	EC_STACK = 7,
	EC_CGROUP = 8,
	EC_KIND = 11,
	EC_START = 12,
	EC_CPU = 13,
	EC_FLAGS = 14,
	EC_STATE = 15,
	EC_STREAM = 16,
	EC_PRE = 17,
	EC_BLK = 18,
	EC_SW = 19,
	EC_OTHER = 20,
	EC_END = 24,
	EC_ARG2 = 25
};

static int in(int64_t v, int64_t lo, int64_t hi)
{
	return v >= lo && v <= hi;
}

int recfmt_event_check(const int64_t v[RECFMT_EVENT_COLS], int64_t dur_max)
{
	int kind = (int)v[EC_KIND];
	int gpu = kind == IG_EV_GPU || kind == IG_EV_GPU_PROC; /* NVML samples */
	if ((!in(kind, IG_EV_CALL, IG_EV_BLOCK_IO) && !gpu && kind != IG_EV_KTIME &&
	     kind != IG_EV_CGROUP && kind != IG_EV_ENV && kind != IG_EV_SAMPLE) ||
	    !in(v[EC_START], 1, RECFMT_TS_MAX_NS) || !in(v[EC_DUR], 0, dur_max) ||
	    !in(v[EC_END], 1, RECFMT_TS_MAX_NS) || v[EC_END] - v[EC_START] != v[EC_DUR] ||
	    !in(v[EC_PID], kind == IG_EV_GPU ? 0 : 1, RECFMT_PID_MAX) ||
	    !in(v[EC_TID], 0, RECFMT_PID_MAX) || !in(v[EC_OTHER], 0, RECFMT_PID_MAX) ||
	    !in(v[EC_CPU], 0, 65535) || !in(v[EC_STATE], IG_OFF_UNKNOWN, IG_OFF_BLOCKED) ||
	    !in(v[EC_SW], 0, UINT32_MAX) || !in(v[EC_FLAGS], 0, UINT32_MAX) ||
	    !in(v[EC_RET], INT32_MIN, INT32_MAX))
		return -ERANGE;
	if ((kind == IG_EV_CALL || kind == IG_EV_OFFCPU) &&
	    !parts_ok(v[EC_DUR], v[EC_PRE], v[EC_BLK]))
		return -ERANGE;
	if (kind != IG_EV_CALL && kind != IG_EV_OFFCPU && (v[EC_PRE] < 0 || v[EC_BLK] < 0))
		return -ERANGE;
	/* kernel time: seven sums, none longer than the file (core/waits.h) */
	static const int kt_cols[] = {EC_ARG0, EC_ARG1, EC_STREAM, EC_PRE,
				      EC_BLK,  EC_ARG2, EC_CGROUP};
	for (size_t i = 0; kind == IG_EV_KTIME && i < sizeof(kt_cols) / sizeof(kt_cols[0]); i++)
		if (!in(v[kt_cols[i]], 0, dur_max))
			return -ERANGE;
	/* a CPU quota: quota and period in us (the kernel's bounds: 1 s period
	 * at most), throttled ns since the last, none with a duration */
	if (kind == IG_EV_CGROUP &&
	    (!in(v[EC_ARG0], 1, INT64_MAX / 1000) || !in(v[EC_ARG1], 1, 1000000) ||
	     !in(v[EC_ARG2], 0, RECFMT_TS_MAX_NS) || v[EC_DUR] || v[EC_STREAM] < 0))
		return -ERANGE;
	if (kind == IG_EV_ENV &&
	    (!in(v[EC_ARG0], 0, IG_ENV_ALL) || !in(v[EC_ARG2], 0, IG_ENV_ALL) ||
	     !in(v[EC_ARG1], IG_ENV_SRC_LIVE, IG_ENV_SRC_INITIAL) || v[EC_DUR]))
		return -ERANGE;
	/* a sample: its stack, the tick's period (1 s at most) */
	if (kind == IG_EV_SAMPLE && (!v[EC_STACK] || !in(v[EC_DUR], 1, 1000000000)))
		return -ERANGE;
	if (kind == IG_EV_FORK && !in(v[EC_ARG0], 1, RECFMT_PID_MAX))
		return -ERANGE;
	if ((kind == IG_EV_PAGE_ALLOC || kind == IG_EV_BLOCK_IO || gpu) &&
	    !in(v[EC_ARG0], 0, RECFMT_BYTES_MAX))
		return -ERANGE;
	return 0;
}

const char *recfmt_event_span_sql(int last, int64_t dur_max)
{
	static __thread char sql[400];
	snprintf(sql, sizeof(sql),
		 "SELECT end_ns FROM events WHERE end_ns BETWEEN 1 AND %lld AND start_ns BETWEEN 1 "
		 "AND %lld AND duration BETWEEN 0 AND %lld AND end_ns = start_ns + duration AND "
		 "pid BETWEEN 1 AND %d ORDER BY end_ns %s LIMIT 1",
		 RECFMT_TS_MAX_NS, RECFMT_TS_MAX_NS, (long long)dur_max, RECFMT_PID_MAX,
		 last ? "DESC" : "ASC");
	return sql;
}

const char *recfmt_snapshot_span_sql(int last)
{
	static __thread char sql[300];
	snprintf(sql, sizeof(sql),
		 "SELECT timestamp FROM system_snapshots WHERE timestamp BETWEEN 1 AND %lld AND "
		 "cpu_pct BETWEEN 0 AND 100 AND mem_pct BETWEEN 0 AND 100 ORDER BY timestamp %s "
		 "LIMIT 1",
		 RECFMT_TS_MAX_NS, last ? "DESC" : "ASC");
	return sql;
}

int recfmt_snapshot_check(sqlite3_stmt *st)
{
	return !recfmt_row_has_null(st) && recfmt_col_in(st, 0, 1, RECFMT_TS_MAX_NS) &&
		       recfmt_col_real_in(st, 1, 0, 100) && recfmt_col_real_in(st, 2, 0, 100) &&
		       recfmt_col_in(st, 3, 0, RECFMT_MIB_MAX) &&
		       recfmt_col_in(st, 4, 0, RECFMT_MIB_MAX) &&
		       recfmt_col_real_in(st, 5, 0, RECFMT_LOAD_MAX)
		   ? 0
		   : -ERANGE;
}

int recfmt_chain_check(sqlite3_stmt *st)
{
	return !recfmt_row_has_null(st) && recfmt_col_in(st, 1, 1, RECFMT_TS_MAX_NS) &&
		       recfmt_col_in(st, 8, 0, RECFMT_CHAIN_US_MAX) &&
		       recfmt_col_in(st, 9, 0, RECFMT_CHAIN_US_MAX) &&
		       recfmt_col_real_in(st, 10, 0, RECFMT_RATIO_MAX)
		   ? 0
		   : -ERANGE;
}
