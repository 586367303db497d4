/* SPDX-License-Identifier: MIT */
/*
 * dest - where a job's entries land on a receiver, made safely.
 *
 * Every entry of the manifest (file, directory, symbolic link) is resolved
 * against the daemon's roots: its parent directory is either a directory of
 * the same job or one that exists on disk, found with realpath() and then
 * opened beneath the root that holds it (openat2 RESOLVE_BENEATH, or a walk
 * that follows no link where openat2 is missing), so nothing is ever
 * created outside the roots, even if the tree changes under us.
 *
 * Nothing appears under a final name before dest_commit():
 *   - an entry whose parent exists is created under a temporary name
 *     (".NAME.rdmcp-XXXXXX") next to its final name;
 *   - an entry inside a directory the job creates is made under its own
 *     name inside that directory's temporary, so a new tree appears at
 *     once, with one rename, when it is complete;
 *   - directories that exist already are merged into, never replaced, and
 *     keep their own mode and owner, and their times unless JOB_TIMES.
 * dest_commit() gives entries their modes (and times, with JOB_TIMES),
 * deepest first, then renames the temporaries into place; then, with
 * JOB_TIMES, gives the merged directories their times (as rsync -a).  dest_free()
 * before a commit removes everything the job created.
 */
#ifndef RDMCP_DEST_H
#define RDMCP_DEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/log.h"
#include "proto/proto.h"

/* What a daemon lets a job do. */
struct dest_policy {
	const char *const *roots;	/* clean absolute directories */
	size_t nroots;
	const char *prefix;		/* prepended to paths, or NULL */
	bool force;			/* replace existing files and links */
	bool allow_setid;		/* keep set-user/group-ID bits */
	/* Ownership of what the job creates (only root can give it away):
	 * with set_owner, uid/gid; with owner_of_root, the owner of the root
	 * the entry lands under; else the daemon's own. */
	bool set_owner;
	uid_t uid;
	gid_t gid;
	bool owner_of_root;
	/* jobs that ask (JOB_OWNERS) give entries their owners on the
	 * sender instead */
	bool keep_owners;
	/* where to record the temporaries made (pending.h), or NULL */
	const char *state_dir;
	/* a real directory no entry may be or land in, or NULL: the
	 * daemon's state directory, where only the daemon writes records */
	const char *reserved;
	/* files get their size but no space reserved: the caller keeps
	 * holes where the data is zero (JOB_SPARSE) */
	bool sparse;
	/* what dest_look saw at each entry, its candidates settled (DS_SAME
	 * or DS_DIFFERENT), or NULL: an entry DS_SAME is kept as it is.  A
	 * file kept still gets a temporary for its bytes (the group's
	 * stream carries them), dropped at commit, when (JOB_TIMES) the file
	 * kept gets the job's time; a link kept is left alone. */
	const uint8_t *seen;
	/* a dry run's: space the unfinished copies kept hold on each file
	 * system, which a real run gives up when the job has no room
	 * beside them; dest_check counts it free (NULL: none) */
	const struct dest_room *freeable;
	size_t nfreeable;
};

/* Bytes on the file system `dev`. */
struct dest_room {
	dev_t dev;
	uint64_t bytes;
};

/* What stands where an entry of a job lands (dest_look). */
enum dest_seen {
	DS_MISSING = 0,		/* nothing: it is made */
	DS_SAME,		/* what the job would leave there: a directory
				 * (merged into), a link to the job's target,
				 * or a file found identical to its source */
	DS_CANDIDATE,		/* a regular file of the job's size and mode:
				 * identical if its content is the source's */
	DS_DIFFERENT,		/* a file or link that differs from the job's
				 * entry: replaced only with force */
	DS_OLD_FILE,		/* a regular file where a file of the job
				 * lands, of another size or mode: as
				 * DS_DIFFERENT, and its blocks may serve a
				 * delta (dest_bases) */
};

struct dest;

/* Called for each regular file once its temporary exists with its space
 * reserved: `fd` is open read-write and is closed after the call.  Return
 * 0 or -errno. */
typedef int (*dest_file_fn)(void *ctx, size_t i, int fd);

/* Resolve, check and create every entry of `job` (see above), calling
 * `file` for each regular file.  Refuses, with a reason in `err`: paths
 * outside the roots, "..", entries whose parent is neither in the job nor
 * on disk, existing files and links without force, anything where a
 * directory should be or a directory where a file should be, devices,
 * FIFOs and sockets in the way, no space (all the files of a file system
 * together, unless the policy is sparse).  On failure nothing is left. */
int dest_prepare(const struct job *job, const struct dest_policy *pol,
		 dest_file_fn file, void *ctx, struct dest **out,
		 struct rd_err *err);

/* What stands where each entry of `job` would land, into seen[i] (enum
 * dest_seen), calling `file` with each DS_CANDIDATE open for reading (in
 * job order), for the caller to compare its content with the source's.
 * Creates and changes nothing.  Returns 0, or -errno with `err` saying
 * what stands in the way whatever --force says (a directory where a
 * file goes, a link where a tree's directory goes, a parent missing or
 * outside the roots: what dest_prepare would refuse), or `file`'s
 * error. */
int dest_look(const struct job *job, const struct dest_policy *pol,
	      dest_file_fn file, void *ctx, uint8_t *seen,
	      struct rd_err *err);

/* Call `file` with each regular file that stands where a file of `job`
 * lands (an old version, or the same), open for reading, following no
 * link, in job order: what a delta copies blocks from.  An entry that is
 * gone or no longer a regular file is passed over.  Creates and changes
 * nothing.  0, or -errno with `err` (dest_look's refusals, `file`'s
 * error). */
int dest_bases(const struct job *job, const struct dest_policy *pol,
	       dest_file_fn file, void *ctx, struct rd_err *err);

/* Every entry of `job` is there and identical (pol->seen: dest_look's,
 * settled): with JOB_TIMES, give the files and directories that differ
 * in time alone the job's times (as a commit would have).  0, or -errno
 * with `err` saying why. */
int dest_settle(const struct job *job, const struct dest_policy *pol,
		struct rd_err *err);

/* Would dest_prepare take `job`?  The same checks (paths, roots, what
 * exists, --force, enough free space on each file system the files land
 * on: a check, not a hold) and write access where entries would be made,
 * but nothing is created or recorded.  0, or -errno with `err` saying
 * why. */
int dest_check(const struct job *job, const struct dest_policy *pol,
	       struct rd_err *err);

/* With JOB_PARENTS (-d DIR/), the directories missing above the job's
 * first entry (DIR) join the job before it, top first, as directories
 * like it (mode, times, owner): dest_prepare then makes them with DIR,
 * as a new tree, and dest_check checks that it could.  Called before
 * them, on the daemon's copy of the job; nothing is made here.  0, or
 * -errno with `err` set (-E2BIG: more entries than a job may have). */
int dest_add_parents(struct job *job, const struct dest_policy *pol,
		     struct rd_err *err);

/* Modes, times, then renames into place.  0 or -errno with `err` set. */
int dest_commit(struct dest *d, struct rd_err *err);

/* Remove what was not committed and free; NULL is a no-op. */
void dest_free(struct dest *d);

#endif
