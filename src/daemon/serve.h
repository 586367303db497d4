/* SPDX-License-Identifier: MIT */
/*
 * serve - the receiving daemon.
 *
 * Listens on one TCP port for both kinds of connection and tells them apart
 * by their first frame: a JOB opens a control connection from a sender, a
 * HELLO a data connection from another member of a running job.  Serves any
 * number of jobs at once and for as long as it runs.  Per job:
 *
 *   JOB    -> files created under temporary names, space reserved (in the
 *             thread pool, off the loop) -> ACCEPT, or REFUSE with a reason
 *   START  -> engine runs; data connections of the job are handed to it
 *   all blocks in (and, with --verify, the sender's crc matches)
 *          -> files renamed into place -> COMPLETE
 *   any failure, ABORT, or the sender gone -> temporaries removed, FAIL
 */
#ifndef RDMCP_SERVE_H
#define RDMCP_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <uv.h>

#include "proto/auth.h"
#include "util/log.h"
#include "proto/proto.h"
#include "transport/verbs/opts.h"

struct serve;

struct serve_cfg {
	uv_loop_t *loop;
	struct sockaddr_storage listen;
	const char *const *roots;	/* directories files may land in */
	size_t nroots;
	const char *prefix;		/* prepended to destinations, or NULL */
	unsigned timeout_ms;		/* drop connections silent this long
					 * before their job says otherwise */
	unsigned connect_timeout_ms;
	/* tcp: never RDMA; verbs: RDMA or fail to start; auto: RDMA when
	 * the machine has it */
	enum proto_transport transport;
	struct vb_opts verbs;		/* device, GID index, polling */
	struct auth_key key;		/* senders must prove they hold it */
	/* Who owns what jobs create, when the daemon runs as root: uid/gid
	 * if either is not -1, else the owner of the root a file lands under.
	 * Setting them needs root. */
	uid_t owner_uid;
	gid_t owner_gid;
	bool allow_setid;		/* keep set-user/group-ID bits */
	bool keep_owners;		/* honour JOB_OWNERS (needs root) */
	/* Where jobs record their temporaries (pending.h), made if missing;
	 * what a killed predecessor left is removed at start.  NULL: none,
	 * but with state_in_prefix and a prefix, the daemon's own directory
	 * SERVE_PREFIX_STATE in the prefix.  No job may land in it. */
	const char *state_dir;
	bool state_in_prefix;
	/* One-shot receiver (--once): one job at a time, and once a job has
	 * landed its files the daemon stops as after serve_shutdown().  A
	 * job that failed does not count: its sender may send again.  With
	 * idle_ms, it also stops when no job has come for idle_ms since the
	 * start or since the last job ended. */
	bool once;
	unsigned idle_ms;
	/* Jobs running at once, at most: a JOB beyond them is refused as
	 * busy (EBUSY, which a sender may retry); 0: no cap. */
	unsigned max_jobs;
	/* Blocks a job may have, at most (--max-blocks; 0: only the
	 * engine's limit, 2^48 - 1): a JOB of more is refused (EFBIG)
	 * before anything is made, with the block size that would do; a
	 * schedule across racks, whose table the daemon works out on START
	 * in time and memory that grow as blocks x members, is refused on
	 * START when their product is more (transfer_over_cap). */
	uint64_t max_blocks;
	/* A job that makes no progress for this long (ms; 0: no cap but the
	 * sender's own timeout) is dropped, its temporaries removed and its
	 * slot freed: no frame from its sender but keepalives, no block
	 * received or passed on (transfer_int.h says what counts).  The
	 * sender's timeout, up to 24 h, bounds only its silence. */
	unsigned job_idle_ms;
	/* How long the unfinished copies of a job that ended without
	 * landing are kept for the next job of the same sources (ms; 0:
	 * not kept): partial.h. */
	unsigned keep_partial_ms;
};

/* A --prefix daemon's state directory, in its prefix (--state-dir). */
#define SERVE_PREFIX_STATE ".rdmcp-state"

/* The default --job-idle-timeout, in ms: an hour.  A healthy push waits
 * longer without any block or word only when a host's set-up is that
 * long (reading a copy it holds already to compare it: 3.6 TB at
 * 1 GB/s) or its turn comes that late (tree, sequential): man/rdmcp.1. */
#define SERVE_DEFAULT_JOB_IDLE_MS (3600u * 1000)

/* The default --keep-partial, in ms: an hour, long enough for a retry,
 * a job requeued or a prolog run again. */
#define SERVE_DEFAULT_KEEP_PARTIAL_MS (3600u * 1000)

/* The default --max-blocks: 16 TiB in the 1 MiB blocks a sender picks
 * for large files, ext4's largest file; at most 2 bits of bitmaps a
 * block (4 MiB), 8 more bytes with --trace (132 MiB in all), taken as
 * blocks come; across racks, 2^24 blocks x members
 * take about 0.8 s and 150 MiB to work out (man/rdmcp.1). */
#define SERVE_DEFAULT_MAX_BLOCKS (1ull << 24)
/* The largest --max-blocks: the engine's signals number blocks in 48
 * bits (eng_new, engine.h). */
#define SERVE_MAX_BLOCKS ((1ull << 48) - 1)

/* Check the roots, bind and listen.  Returns 0 or -errno with a reason. */
int serve_new(const struct serve_cfg *cfg, struct serve **out,
	      struct rd_err *err);

/* The address actually listened on (port filled in if 0 was asked). */
void serve_address(const struct serve *s, struct sockaddr_storage *out);

/* True once a job of this daemon has landed its files. */
bool serve_landed(const struct serve *s);

/* Stop accepting, abort running jobs (removing their temporaries) and
 * close everything; the loop then runs dry.  serve_free() afterwards.
 * Calling it again is a no-op. */
void serve_shutdown(struct serve *s);

/* Release; NULL is a no-op.  Call after the loop has run dry. */
void serve_free(struct serve *s);

#endif
