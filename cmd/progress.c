/* SPDX-License-Identifier: MIT */
/*
 * The progress of a push, on stderr, and what an interrupted push says.
 *
 * On a terminal: one line, redrawn in place at most 10 times a second and
 * erased before anything else is printed and at the end.  Elsewhere, with
 * --progress (a pipe, a log file): plain lines "rdmcp: progress: ...", the
 * first at the first report, then at most one every LOG_EVERY seconds,
 * without carriage returns or terminal escapes.  -q shows none.
 *
 * A push interrupted by SIGINT, SIGTERM or SIGHUP ends the progress line
 * with a newline, says so, and dies of the signal (the shell's status is
 * 128 + its number: 130, 143, 129).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"

#define TTY_EVERY 0.1	/* seconds between redraws on a terminal */
#define LOG_EVERY 5.0	/* seconds between lines elsewhere */

static enum { PROGRESS_OFF, PROGRESS_TTY, PROGRESS_LOG } mode;
static volatile sig_atomic_t drawn;	/* a terminal line is on screen */
static double shown_at = -1;		/* when the last one was shown */

static double
now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Write a constant string to stderr; async-signal-safe. */
static void
say_raw(const char *s)
{
	if (write(STDERR_FILENO, s, strlen(s)) < 0)
		return;
}

static void
on_interrupt(int sig)
{
	if (drawn)
		say_raw("\n");	/* keep the last progress, end its line */
	say_raw(sig == SIGINT ? "rdmcp: interrupted (SIGINT)"
		: sig == SIGTERM ? "rdmcp: interrupted (SIGTERM)"
		: "rdmcp: interrupted (SIGHUP)");
	say_raw("; hosts without a complete copy discard what they "
		"received\n");
	signal(sig, SIG_DFL);
	raise(sig);
}

/* SIGINT, SIGTERM and SIGHUP say that the push was interrupted; a signal
 * ignored when rdmcp started (nohup, a background job) stays ignored. */
static void
catch_interrupts(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
}

void
progress_start(const struct opts *o)
{
	catch_interrupts();
	if (o->verbose < 0)
		mode = PROGRESS_OFF;
	else if (isatty(STDERR_FILENO))
		mode = PROGRESS_TTY;
	else
		mode = o->progress ? PROGRESS_LOG : PROGRESS_OFF;
}

bool
progress_on(void)
{
	return mode != PROGRESS_OFF;
}

void
progress_clear(void)
{
	if (drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		drawn = 0;
	}
}

static void
format_eta(char *buf, size_t len, double seconds)
{
	long s = (long)(seconds + 0.5);

	if (seconds < 0 || seconds > 359999)
		snprintf(buf, len, "--:--");
	else if (s >= 3600)
		snprintf(buf, len, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60,
			 s % 60);
	else
		snprintf(buf, len, "%ld:%02ld", s / 60, s % 60);
}

/* "37.5 MiB of 100.0 MiB (37%)  12.3 MiB/s  ETA 0:05  2/8 hosts done" */
static void
format_progress(char *buf, size_t len, const struct push_progress *pr,
		const char *sep)
{
	char done[32], total[32], rate[48], eta[32], failed[48] = "";
	double each = (double)pr->bytes_done / (double)pr->hosts;
	double all = (double)pr->bytes_total / (double)pr->hosts;
	double per_s = pr->seconds > 0 ? each / pr->seconds : 0;

	format_bytes(done, sizeof(done), each);
	format_bytes(total, sizeof(total), all);
	format_rate(rate, sizeof(rate), each, pr->seconds);
	format_eta(eta, sizeof(eta), per_s > 0 ? (all - each) / per_s : -1);
	if (pr->failed)
		snprintf(failed, sizeof(failed), ", %zu failed", pr->failed);
	snprintf(buf, len, "%s of %s (%.0f%%)%s%s%sETA %s%s%zu/%zu hosts "
		 "done%s", done, total, 100.0 * (double)pr->bytes_done /
		 (double)pr->bytes_total, sep, rate, sep, eta, sep, pr->done,
		 pr->hosts, failed);
}

void
progress_show(const struct push_progress *pr)
{
	char line[256];
	double now = now_seconds();

	if (mode == PROGRESS_OFF || pr->hosts == 0 || pr->bytes_total == 0)
		return;
	if (shown_at >= 0 &&
	    now - shown_at < (mode == PROGRESS_TTY ? TTY_EVERY : LOG_EVERY))
		return;
	shown_at = now;
	if (mode == PROGRESS_LOG) {
		format_progress(line, sizeof(line), pr, ", ");
		fprintf(stderr, "rdmcp: progress: %s\n", line);
	} else {
		format_progress(line, sizeof(line), pr, "  ");
		fprintf(stderr, "\r\033[K%s", line);
		drawn = 1;
	}
	fflush(stderr);
}
