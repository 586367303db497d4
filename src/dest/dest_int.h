/* SPDX-License-Identifier: MIT */
/*
 * dest_int - what the parts of dest share: the state of a job's entries,
 * between dest.c (resolving, checking and creating them), made.c (acting
 * on what the job made, and on nothing else) and land.c (landing them,
 * or removing what was made).  Not for other modules.
 */
#ifndef RDMCP_DEST_INT_H
#define RDMCP_DEST_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "dest/dest.h"

struct dent {
	char *lex;		/* destination with the prefix, as sent */
	char *final;		/* where it lands, resolved, for messages */
	char *dir;		/* directory holding it now, below its root */
	char *inside;		/* a merged directory: itself, below its root */
	char *name;		/* its name there: temporary or final */
	const char *base;	/* its final name (in final) */
	size_t root;
	long parent;		/* its directory's entry, or -1 if on disk */
	uint8_t type;
	uint32_t mode;
	struct timespec mtime;
	uid_t uid;		/* on the sender */
	gid_t gid;
	bool made;		/* created by this job */
	bool top;		/* under a temporary name: renamed at commit */
	bool merged;		/* a directory that existed: merged into */
	bool placed;		/* renamed into place */
	bool exists;		/* probing: something stands at its name */
	bool regular;		/* ... and it is a regular file */
	bool present;		/* ... as the job says (a file: its size and
				 * mode; its content is the caller's to say) */
	bool same_time;		/* ... with the job's modification time */
	bool keep;		/* found identical (dest_policy.seen): left
				 * as it is; a file's temporary is dropped */
	dev_t dev;		/* made: what was made (dest_note_made) */
	ino_t ino;
};

struct dest {
	struct dent *e;
	size_t n;
	size_t *dirs;		/* directory entries, by lex */
	size_t ndirs;
	struct dest_policy pol;	/* the daemon's; strings are its too */
	int *rootfd;
	struct stat *rootst;
	bool times;		/* the job's JOB_TIMES */
	uint32_t mask;		/* mode bits we may set */
	bool owners;		/* the entries' own owners (keep_owners) */
	bool committed;
	bool probing;		/* dest_look: look, never refuse or create */
	const struct job *job;
	struct pending *record;	/* temporaries made, for a later sweep */
	/* the last directory opened */
	int cache_fd;
	size_t cache_root;
	char *cache_dir;
	/* the last directory of the job's own opened (dest_holder_fd) */
	int made_fd;
	long made_ent;
};

/* A dest for `job` under policy `pol`, nothing resolved yet: 0 or
 * -ENOMEM. */
int dest_alloc(const struct job *job, const struct dest_policy *pol,
	       struct dest **out);

/* Everything before creating: the roots, the record of temporaries (not
 * when probing), the entries resolved and checked against what is on
 * disk.  0, or -errno with `err` saying why. */
int dest_resolve(struct dest *d, struct rd_err *err);

/* Is there free space for the job's files on each file system they
 * would land on (the one of the directory that exists where each would
 * be made), all of a file system's files together?  0, or -ENOSPC with
 * `err` naming the first file that lands there; nothing with the
 * policy's `sparse` (holes need no space).  A check, not a hold. */
int dest_check_space(struct dest *d, struct rd_err *err);

/* Free space for `size` more bytes on the file system of directory fd:
 * 0, or ENOSPC (a positive errno): a check, not a hold. */
int dest_check_free(int fd, uint64_t size);

/* Entry e's path as the job gives it, the user's (as written with -d,
 * without the daemon's --prefix or the links it resolves): what messages
 * to the sender name, the same on every host, so that one failure of
 * many hosts reads as one line.  The daemon's log names e->final. */
static inline const char *
dest_upath(const struct dest *d, const struct dent *e)
{
	return d->job->files[e - d->e].path;
}

/* The directory `dir` below root `root` (relative, "" for the root),
 * opened beneath it once and cached: a descriptor the dest owns, or
 * -errno. */
int dest_dir_fd(struct dest *d, size_t root, const char *dir);

/* Entry e was just made as e->name in directory `holder` (file: its open
 * descriptor, else -1): remember what it is, so that nothing else is ever
 * taken for it.  0, -ESTALE if something else already stands there, or
 * -errno. */
int dest_note_made(struct dent *e, int holder, int file);

/* The directory that holds entry e now: one that existed (dest_dir_fd), or
 * one this job made, reached from there through no link and checked to be
 * the very directory made.  A descriptor the dest owns (valid until the
 * next call), -ESTALE if a directory made was replaced, or -errno. */
int dest_holder_fd(struct dest *d, const struct dent *e);

/* Entry e, made by this job, opened O_PATH without following a link and
 * checked to be the entry made: a new descriptor (the caller closes it),
 * -ESTALE if something else stands at its name, or -errno.  *holder is
 * dest_holder_fd()'s. */
int dest_open_made(struct dest *d, const struct dent *e, int *holder);

/* Is `name` in `holder` entry e as made?  0, -ESTALE, or -errno. */
int dest_is_made_at(const struct dent *e, int holder, const char *name);

/* With times, a directory that existed (merged into) gets its source's
 * time too, as rsync -a gives it, once nothing more lands in it.  It is
 * not ours: a failure (not its owner) is logged, and what landed stays
 * (land.c). */
void dest_time_merged(struct dest *d, const struct dent *e);
/* rc, a job's failure with err saying why: if it is "Permission denied"
 * (-EACCES) where a daemon without CAP_DAC_OVERRIDE may not write, or
 * "Read-only file system" (-EROFS, a root systemd keeps read-only), say
 * in err how to deploy it so that it may (access.c).  Returns rc. */
int dest_access_hint(int rc, struct rd_err *err);

/* Mode, times, owner of what dest_open_made()'s `fd` refers to (a file
 * or directory for the first two; any entry for the owner).  0 or
 * -errno. */
int dest_chmod_made(int fd, mode_t mode);
int dest_time_made(int fd, const struct timespec ts[2]);
int dest_chown_made(int fd, uid_t uid, gid_t gid);

#endif
