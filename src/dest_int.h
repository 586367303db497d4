/*
 * dest_int - what the parts of dest share: the state of a job's entries,
 * between dest.c (resolving, checking and creating them) and dland.c
 * (landing them, or removing what was made).  Not for other modules.
 */
#ifndef RDMCP_DEST_INT_H
#define RDMCP_DEST_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "dest.h"

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
	bool present;		/* probing: there already, as the job says */
	bool same_time;		/* ... with the job's modification time */
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
	bool probing;		/* dest_probe: look, never refuse or create */
	const struct job *job;
	struct pending *record;	/* temporaries made, for a later sweep */
	/* the last directory opened */
	int cache_fd;
	size_t cache_root;
	char *cache_dir;
};

/* The directory `dir` below root `root` (relative, "" for the root),
 * opened beneath it once and cached: a descriptor the dest owns, or
 * -errno. */
int dest_dir_fd(struct dest *d, size_t root, const char *dir);

#endif
