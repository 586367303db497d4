/* SPDX-License-Identifier: MIT */
/*
 * manifest - what a sender sends: files, directories and symbolic links,
 * each with its destination, in tree order (a directory before what it
 * holds), read from the local file system.
 *
 * Sources named by the caller are followed if they are links (as cp and
 * rsync do with their arguments); inside a tree nothing is followed: links
 * are sent as links, whatever they point to.  Devices, FIFOs and sockets
 * are refused.  Hard links are sent as separate files.
 */
#ifndef RDMCP_MANIFEST_H
#define RDMCP_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/log.h"
#include "proto/proto.h"

struct manifest;

/* An empty manifest, or NULL (ENOMEM). */
struct manifest *mf_new(void);

/* Add a directory that need not exist anywhere here, a place the job
 * lands in, e.g. the DIR of `-d DIR/`: created on the receivers if
 * missing, with the current time as its modification time, and merged
 * into where it is, through a symbolic link too (job_file.place), as
 * the parents of every destination are.  0 or -errno. */
int mf_add_dir(struct manifest *m, const char *dest, uint32_t mode);

/* Add source `src` (a file; with `recursive` also a directory and all it
 * holds) to land at `dest`, a clean absolute path.  Returns 0, or -errno
 * with a one-line reason in `err` (-EISDIR: a directory without
 * recursion; -EINVAL: a special file; -E2BIG: more than PROTO_MAX_FILES
 * entries). */
int mf_add(struct manifest *m, const char *src, const char *dest,
	   bool recursive, struct rd_err *err);

/* The entries so far: mf_count() of them, as job entries (sizes, modes and
 * times as read) and the local path of each regular file (NULL for
 * directories and links).  Valid until the next mf_add. */
size_t mf_count(const struct manifest *m);
const struct job_file *mf_entries(const struct manifest *m);
const char *const *mf_sources(const struct manifest *m);

/* Free; NULL is a no-op. */
void mf_free(struct manifest *m);

#endif
