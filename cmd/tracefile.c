/* SPDX-License-Identifier: MIT */
/*
 * --trace FILE: the push's timeline as Chrome trace events (JSON), which
 * Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 * One process per host (pid 0: the sender, pid i + 1: the i-th host of
 * the list), one row per kind of span: the set-up and commit, the waits,
 * and one row per neighbour for the blocks received from it and sent to
 * it.  Spans of one row never overlap: a block is shown from when the one
 * before it on that row ended (a receive posted ahead waits its turn).
 * Times are microseconds from the start of the push, on the sender's
 * clock: each member's times are moved by the offset push_run measured
 * from the round trip of its JOB and ACCEPT, shown as its label.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "proto/trace.h"

/* Rows (tids) of a host. */
#define ROW_CONTROL 1
#define ROW_WAIT 2
#define ROW_RECV 10000	/* + the peer's rank */
#define ROW_SEND 20000

/* One row of the host being written: where its last span ended. */
struct row {
	uint32_t tid;
	uint64_t end;
};

struct rows {
	struct row *r;
	size_t n, cap;
};

struct tracefile {
	FILE *f;
	char *path;
	uint64_t t0;
	bool first;
	int err;	/* the first write error (errno), 0: none */
};

int
tracefile_open(const char *path, struct tracefile **out)
{
	struct tracefile *tf = calloc(1, sizeof(*tf));
	int rc = -ENOMEM;

	*out = NULL;
	if (tf == NULL || (tf->path = strdup(path)) == NULL)
		goto fail;
	tf->f = fopen(path, "w");
	if (tf->f == NULL) {
		rc = -errno;
		warnx_("--trace: cannot write %s: %s", path, strerror(errno));
		goto fail;
	}
	tf->t0 = trace_now();
	tf->first = true;
	fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", tf->f);
	*out = tf;
	return 0;
fail:
	if (tf != NULL)
		free(tf->path);
	free(tf);
	return rc;
}

/* The row `tid` of this host: NULL if out of memory; *fresh when it was
 * not used before. */
static struct row *
row_get(struct rows *rs, uint32_t tid, bool *fresh)
{
	struct row *grown;
	size_t i;

	*fresh = false;
	for (i = 0; i < rs->n; i++)
		if (rs->r[i].tid == tid)
			return &rs->r[i];
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 16;
		grown = realloc(rs->r, rs->cap * sizeof(*grown));
		if (grown == NULL)
			return NULL;
		rs->r = grown;
	}
	*fresh = true;
	rs->r[rs->n] = (struct row){ tid, 0 };
	return &rs->r[rs->n++];
}

static void
event_sep(struct tracefile *tf)
{
	if (!tf->first)
		fputs(",\n", tf->f);
	tf->first = false;
}

static void
name_row(struct tracefile *tf, uint32_t pid, uint32_t tid, const char *what,
	 uint32_t peer)
{
	event_sep(tf);
	fprintf(tf->f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,"
		"\"tid\":%u,\"args\":{\"name\":\"%s", pid, tid, what);
	if (peer != UINT32_MAX)
		fprintf(tf->f, " %u", peer);
	fputs("\"}}", tf->f);
}

static uint32_t
tid_of(const struct trace_span *s)
{
	switch (s->kind) {
	case TR_RECV:
	case TR_WAIT_SENDER:
		return ROW_RECV + s->peer;
	case TR_SEND:
		return ROW_SEND + s->peer;
	case TR_WAIT_READY:
	case TR_WAIT_BLOCK:
		return ROW_WAIT;
	default:
		return ROW_CONTROL;
	}
}

static void
write_span(struct tracefile *tf, uint32_t pid, struct rows *rs,
	   const struct trace_span *s, int64_t offset)
{
	uint64_t t0 = s->t0 + (uint64_t)offset, t1 = s->t1 + (uint64_t)offset;
	uint32_t tid = tid_of(s);
	struct row *row;
	bool fresh;

	row = row_get(rs, tid, &fresh);
	if (row == NULL)
		return;
	if (fresh && (s->kind == TR_RECV || s->kind == TR_WAIT_SENDER))
		name_row(tf, pid, tid, "blocks from rank", s->peer);
	else if (fresh && s->kind == TR_SEND)
		name_row(tf, pid, tid, "blocks to rank", s->peer);
	if (tid != ROW_CONTROL && row->end > t0)
		t0 = row->end < t1 ? row->end : t1;
	if (t0 < tf->t0)
		t0 = tf->t0;
	if (t1 < t0)
		t1 = t0;
	if (t1 > row->end)
		row->end = t1;
	event_sep(tf);
	fprintf(tf->f, "{\"name\":\"%s", trace_kind_name(s->kind));
	if (s->kind != TR_BOOT && s->kind != TR_SETUP && s->kind != TR_GO &&
	    s->kind != TR_COMMIT)
		fprintf(tf->f, " %llu", (unsigned long long)s->block);
	fprintf(tf->f, "\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.1f,"
		"\"dur\":%.1f,\"pid\":%u,\"tid\":%u,\"args\":{\"block\":%llu",
		trace_kind_name(s->kind), (double)(t0 - tf->t0),
		(double)(t1 - t0), pid, tid, (unsigned long long)s->block);
	if (s->peer != UINT32_MAX)
		fprintf(tf->f, ",\"peer\":%u", s->peer);
	fputs("}}", tf->f);
}

/* A member's label: how its times were put on the sender's clock, e.g.
 * "times moved -0.012 ms (± 0.180 ms)"; no error is shown when no round
 * trip was measured. */
static void
label_clock(struct tracefile *tf, uint32_t pid, int64_t offset,
	    uint64_t error_us)
{
	event_sep(tf);
	fprintf(tf->f, "{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":%u,"
		"\"args\":{\"labels\":\"times moved %+.3f ms", pid,
		(double)offset / 1000.0);
	if (error_us > 0)
		fprintf(tf->f, " (\u00b1 %.3f ms)", (double)error_us / 1000.0);
	fputs("\"}}", tf->f);
}

/* Keep the first write error, while errno still says what it was. */
static void
note_error(struct tracefile *tf)
{
	if (tf->err == 0 && ferror(tf->f))
		tf->err = errno != 0 ? errno : EIO;
}

void
tracefile_add(struct tracefile *tf, const char *host, size_t index,
	      uint32_t rank, const struct trace *t, int64_t offset,
	      uint64_t error_us)
{
	uint32_t pid = index == SIZE_MAX ? 0 : (uint32_t)index + 1;
	const struct trace_span *s = trace_spans(t);
	size_t i, n = trace_count(t);
	struct rows rs = { 0 };

	if (tf == NULL)
		return;
	event_sep(tf);
	fprintf(tf->f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,"
		"\"args\":{\"name\":\"%s (rank %u)\"}}", pid,
		host != NULL ? host : "sender", rank);
	if (index != SIZE_MAX)
		label_clock(tf, pid, offset, error_us);
	name_row(tf, pid, ROW_CONTROL, "set-up and commit", UINT32_MAX);
	name_row(tf, pid, ROW_WAIT, "waits before sends", UINT32_MAX);
	for (i = 0; i < n; i++)
		write_span(tf, pid, &rs, &s[i], offset);
	free(rs.r);
	note_error(tf);
	if (trace_dropped(t) > 0)
		warnx_("--trace: %s kept its first %zu spans, dropped %zu",
		       host != NULL ? host : "the sender", n,
		       trace_dropped(t));
}

/* A trace that could not be written whole is no valid JSON: a regular
 * file is removed, so that nothing reads half of one (a device such as
 * /dev/full is left alone).  Returns whether it went. */
static bool
remove_partial(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       unlink(path) == 0;
}

int
tracefile_close(struct tracefile *tf)
{
	int rc = 0;

	if (tf == NULL)
		return 0;
	errno = 0;
	fputs("\n]}\n", tf->f);
	if (fflush(tf->f) != 0)
		note_error(tf);
	if (fclose(tf->f) != 0 && tf->err == 0)
		tf->err = errno != 0 ? errno : EIO;
	if (tf->err != 0) {
		rc = -tf->err;
		warnx_("--trace: cannot write %s: %s (%s); the push's outcome "
		       "is reported as it went", tf->path, strerror(tf->err),
		       remove_partial(tf->path) ? "removed, as no valid trace"
						: "left as it is");
	}
	free(tf->path);
	free(tf);
	return rc;
}
