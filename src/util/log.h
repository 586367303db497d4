/* SPDX-License-Identifier: MIT */
/*
 * log - the one place src/ reports through.
 *
 * Library code never writes to the terminal: it logs through log_msg(), whose
 * sink the program installs (cmd/ prints to stderr; tests may capture), and it
 * returns errors as -errno with an optional human-readable reason in a
 * struct rd_err that the caller decides what to do with.
 */
#ifndef RDMCP_LOG_H
#define RDMCP_LOG_H

#include <stdarg.h>

enum log_level {
	LOG_ERR = 0,
	LOG_WARN,
	LOG_INFO,	/* shown with -v */
	LOG_DEBUG,	/* shown with -vv */
	LOG_TRACE,	/* shown with -vvv */
};

typedef void (*log_sink_fn)(void *ctx, enum log_level level, const char *msg);

/* Install the sink and the most verbose level passed to it.  Without a sink
 * messages are dropped. */
void log_setup(log_sink_fn sink, void *ctx, enum log_level max_level);

/* True if messages at `level` reach the sink (to skip costly formatting). */
int log_enabled(enum log_level level);

/* Log a formatted message. */
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_trace(...)                                                        \
	do {                                                                  \
		if (log_enabled(LOG_TRACE))                                   \
			log_msg(LOG_TRACE, __VA_ARGS__);                      \
	} while (0)

/* An error with its reason, for errors that must reach a user (possibly on
 * another host).  `code` is a negative errno, 0 when no error was set. */
struct rd_err {
	int code;
	char msg[512];
};

/* Record an error (first one wins) and return `code` (negative errno), so
 * that `return rd_errf(err, -ENOENT, "...")` reads naturally.  `err` may be
 * NULL. */
int rd_errf(struct rd_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Clear an error record. */
void rd_err_clear(struct rd_err *err);

#endif
