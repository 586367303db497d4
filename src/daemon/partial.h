/* SPDX-License-Identifier: MIT */
/*
 * partial - the copies a job left unfinished, kept for a while so that
 * the next job of the same sources sends only what they lack (a push
 * broken by a fault and retried, a sender interrupted and run again, as
 * rsync's --partial).
 *
 * A file's temporary is kept open with its name removed: nothing to sweep,
 * no name anyone sees, and the kernel frees it if the daemon dies.  It is
 * found again by the destination path, size and modification time the
 * job gives its source, with the byte ranges where its blocks landed (only
 * those are read again); which of them are good is for the block digests
 * to say (store_fill), never for the offsets it reached.  Kept
 * for `keep_ms` (the daemon's --keep-partial), PARTIALS_MAX files at
 * most, the oldest given up first.  Loop thread only.
 */
#ifndef RDMCP_DAEMON_PARTIAL_H
#define RDMCP_DAEMON_PARTIAL_H

#include <stddef.h>
#include <uv.h>

#include "proto/proto.h"

#define PARTIALS_MAX 4096

struct partials;

/* A registry that keeps files for keep_ms (0: keeps nothing).  0 or
 * -ENOMEM. */
int partials_new(uv_loop_t *loop, unsigned keep_ms, struct partials **out);

/* Keep file i of `job`, open at fds[i] (>= 0; -1: nothing to keep), with
 * goods[i], the byte ranges of it that hold the source's bytes (NULL:
 * not known); each fd and set taken over (fds[i] -1 and goods[i] NULL
 * after; closed and freed at once if nothing is kept). */
void partials_keep(struct partials *ps, const struct job *job, int *fds,
		   struct bset **goods);

/* For each file i of `job`, a file kept for its path, size and time:
 * fds[i] and goods[i] (now the caller's), else -1 and NULL.  Returns how
 * many. */
size_t partials_take(struct partials *ps, const struct job *job, int *fds,
		     struct bset **goods);

/* Files kept now. */
size_t partials_count(const struct partials *ps);

/* Stop keeping: every file is given up, its timer closed (the loop must
 * run for it to close).  NULL is a no-op. */
void partials_close(struct partials *ps);

/* Free, after partials_close and the loop's run; NULL is a no-op. */
void partials_free(struct partials *ps);

#endif
