/* SPDX-License-Identifier: MIT */
/*
 * log - logging sink and error records (see log.h).
 */
#include "util/log.h"

#include <stdio.h>
#include <string.h>

static log_sink_fn log_sink;
static void *log_ctx;
static enum log_level log_max = LOG_WARN;

void
log_setup(log_sink_fn sink, void *ctx, enum log_level max_level)
{
	log_sink = sink;
	log_ctx = ctx;
	log_max = max_level;
}

int
log_enabled(enum log_level level)
{
	return log_sink != NULL && level <= log_max;
}

void
log_msg(enum log_level level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_sink(log_ctx, level, buf);
}

int
rd_errf(struct rd_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || err->code != 0)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

void
rd_err_clear(struct rd_err *err)
{
	if (err != NULL) {
		err->code = 0;
		err->msg[0] = '\0';
	}
}
