/* SPDX-License-Identifier: MIT */
/*
 * pending - a daemon's record of the temporaries its running jobs have
 * made, so that after it was killed (SIGKILL, OOM, a crash) it removes
 * them when it starts again instead of leaving them on the disk for ever.
 *
 * One file per job in the daemon's state directory, "job-TOKEN", one
 * absolute temporary path per line, written before the temporary is made
 * and removed once the job has landed or cleaned up after itself; it is
 * locked (flock) while the job runs, so that daemons may share the
 * directory: a sweep passes over the records of live jobs.  Only
 * top-level temporaries are recorded: a new tree's entries live inside
 * its temporary directory and go with it.
 */
#ifndef RDMCP_PENDING_H
#define RDMCP_PENDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/log.h"

struct pending;

/* Start the record of job `token` (len bytes) in `dir`.  0 or -errno. */
int pending_open(const char *dir, const uint8_t *token, size_t len,
		 struct pending **out);

/* Record `path` (before making it).  0 or -errno. */
int pending_add(struct pending *p, const char *path);

/* The job needs its record no more: remove it.  NULL is a no-op. */
void pending_done(struct pending *p);

/* At start: remove what the unlocked records in `dir` name, if it still
 * looks like a temporary of ours (".NAME.rdmcp-XXXXXXXX") below one of
 * the roots, directories with what they hold (never following a link),
 * then the records.  *removed counts what was removed.  0 or -errno. */
int pending_sweep(const char *dir, const char *const *roots, size_t nroots,
		  size_t *removed);

/* A daemon's start with state directory `dir`: made if missing (0700),
 * and the records of dead jobs in it swept (pending_sweep; what was
 * removed is logged).  `own`: the directory must be the daemon's own, a
 * directory (no link) of its user that no one else may write to, as a
 * default one in a tree that jobs write to must be.  Its real path, which
 * jobs must not write into, goes to *real (the caller frees it).  0, or
 * -errno after a warning (*real NULL: jobs then record nothing). */
int pending_start(const char *dir, bool own, const char *const *roots,
		  size_t nroots, char **real);

#endif
