/* SPDX-License-Identifier: MIT */
/*
 * transfer - one transfer as a receiving daemon takes part in it.
 *
 *   JOB    -> files created under temporary names, space reserved (in the
 *             thread pool, off the loop) -> ACCEPT, or REFUSE with a reason
 *   START  -> the engine runs; the job's data connections are handed to it
 *             (those that come before START wait, paused)
 *   all blocks in (and, with --verify, the sender's crc matches)
 *          -> files renamed into place -> COMPLETE
 *   any failure, ABORT, or the sender gone -> temporaries removed, FAIL
 *
 * Resources are released on a later turn of the loop, never from inside an
 * engine or connection callback.
 */
#ifndef RDMCP_TRANSFER_H
#define RDMCP_TRANSFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "transport/tcp/conn.h"
#include "proto/proto.h"
#include "transport/verbs/verbs.h"

struct transfer;

/* What every job of one daemon shares. */
struct partials;

struct transfer_env {
	uv_loop_t *loop;
	const char *const *roots;	/* where files may land (resolved) */
	size_t nroots;
	const char *prefix;		/* prepended to destinations, or NULL */
	unsigned connect_timeout_ms;
	/* ownership and set-id policy (see dest_policy in dest.h) */
	bool set_owner;
	uid_t uid;
	gid_t gid;
	bool owner_of_root;
	bool keep_owners;
	bool allow_setid;
	const char *state_dir;		/* pending.h records, or NULL */
	struct vb *vb;			/* RDMA, or NULL: TCP only */
	uint16_t rdma_port;		/* where vb listens */
	const size_t *jobs_running;	/* transfers here now, this one
					 * included; NULL: not known */
	uint64_t max_blocks;		/* serve_cfg's; 0: no cap */
	unsigned job_idle_ms;		/* serve_cfg's; 0: no cap */
	struct partials *partials;	/* unfinished copies kept (partial.h) */
	/* The job is gone; called once, just before its memory is freed. */
	void (*gone)(void *ctx, struct transfer *j);
	void *ctx;
};

/* Take over a control connection and the job its JOB frame described (both
 * now belong to the job) and start setting up.  Returns 0 or -ENOMEM (then
 * the caller still owns both). */
int transfer_new(const struct transfer_env *env, struct conn *ctl, struct job *job,
	     struct transfer **out);

/* True if this job has `token` and still takes data connections. */
bool transfer_matches(const struct transfer *j, const uint8_t *token);

/* A data connection of this job, whose HELLO said it comes from rank
 * `from` to rank `to`: handed to the engine, or held until START.
 * Returns 0, or -errno and the caller keeps the connection. */
int transfer_add_data(struct transfer *j, struct conn *c, uint32_t from, uint32_t to);

/* An RDMA connection request for this job (see xv.h): handed to the
 * transport, or held until START.  On failure the caller rejects it. */
struct xv_hello;
int transfer_add_rdma(struct transfer *j, struct rdma_cm_id *id,
		  const struct xv_hello *h);

/* Would `job` cost this daemon more than max_blocks allows (0: no cap)?
 * Its blocks count, times `members` for a schedule across racks (the
 * table a member works out on START grows as both; else pass 1).  True
 * with the reason, numbers and remedy (the block size that would do) in
 * why[len]. */
bool transfer_over_cap(const struct job *job, uint32_t members,
		   uint64_t max_blocks, char *why, size_t len);

/* True once this job's files were renamed into place (also in `gone`). */
bool transfer_landed(const struct transfer *j);

/* Copy the job's token (PROTO_TOKEN_LEN bytes) to out. */
void transfer_token(const struct transfer *j, uint8_t *out);

/* True if this is the job with `token` (running or ending). */
bool transfer_has_token(const struct transfer *j, const uint8_t *token);

/* Make the job's outcome final and say it: true if it landed; else it
 * is ended here, if it still ran, and will never land. */
bool transfer_resolve(struct transfer *j);

/* Stop at once (daemon shutdown): temporaries removed, connections
 * closed; `gone` follows on a later turn. */
void transfer_stop(struct transfer *j);

#endif
