/* SPDX-License-Identifier: MIT */
/*
 * transfer_int - what the files of a transfer on a daemon share: transfer.c
 * (its life and its control connection), setup.c (its set-up), run.c (its
 * engine and landing), park.c (its connections that come before START),
 * idle.c and states.c.  Not for other modules.
 */
#ifndef RDMCP_TRANSFER_INT_H
#define RDMCP_TRANSFER_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "daemon/transfer.h"
#include "store/store.h"
#include "proto/trace.h"
#include "transport/verbs/xv.h"

enum jstate {
	JS_SETUP,	/* creating files in the thread pool */
	JS_HAVE,	/* files that may be identical are there: HAVE
			 * (HAVE_ASK) sent, waiting for REPLACE or the end */
	JS_SAME,	/* every entry is there, identical: HAVE (HAVE_SAME)
			 * sent, waiting for the end */
	JS_READY,	/* ACCEPT sent, waiting for START */
	JS_DRY,		/* dry run: ACCEPT sent, waiting for the end */
	JS_RUNNING,
	JS_ENDED,	/* resources released, flushing the control stream */
};

/* A data connection that came before its job's START. */
struct parked {
	struct transfer *j;
	struct conn *c;
	uint32_t from, to;
	struct parked *next;
};

/* An RDMA connection request that came before START. */
struct parked_rdma {
	struct rdma_cm_id *id;
	struct xv_hello hello;
	struct parked_rdma *next;
};

struct transfer {
	const struct transfer_env *env;
	char tag[16];
	uint8_t token[PROTO_TOKEN_LEN];
	struct conn *ctl;
	struct job *job;
	struct store *st;
	struct eng *eng;
	struct roster *ro;
	struct sockaddr_storage bind;	/* ours, as the sender reached us */
	enum jstate state;
	bool complete, landed, eng_done, go_received;
	uint32_t crc_expected;
	uv_work_t work;
	bool work_busy;
	bool settle;		/* REPLACE came: settle what was seen */
	bool replaced;		/* ... and the job waits for DIGESTS */
	enum {
		FILL_WHOLE,	/* set up at once, digests in hand or none */
		FILL_LOCAL,	/* filling and digesting its own blocks
				 * while the sender digests its sources */
		FILL_WAITING,	/* ... done, waiting for DIGESTS */
		FILL_COMPARE,	/* comparing the two */
	} fill;
	uint8_t *mine;		/* our blocks' digests (FILL_LOCAL) */
	bool asked_digests;	/* HAVE_WANT_DIGESTS or HAVE_DIGESTS went */
	bool read_back;		/* --verify: disk_crc is the temporaries' */
	uint32_t disk_crc;
	int work_rc;		/* SETUP_*, or -errno */
	uint8_t *seen;		/* per entry: what stands there (dest_seen) */
	struct proto_sum *sums;	/* ... the sum of a file that may be
				 * identical (DS_CANDIDATE) */
	struct proto_sum *theirs;	/* ... the source's (REPLACE) */
	uint8_t *digests;	/* each stream block's, as the sender has it
				 * (DIGESTS), or NULL */
	int *partials;		/* per file, an unfinished copy of the same
				 * source an earlier job left (partial.h),
				 * open, or -1 */
	struct bset **goods;	/* ... the byte ranges of each that hold the
				 * source's, or NULL */
	size_t npartials;	/* how many */
	size_t parents;		/* -d DIR/'s missing parents, the job's first
				 * entries: the sender's come after them */
	bool partials_dropped;	/* given up for want of space (setup) */
	struct bset *need;	/* the stream blocks we lack, the others
				 * filled from what was there (with
				 * digests), or NULL: all */
	uint8_t *bits;		/* scratch while the engine is made */
	uint64_t resumed;	/* a dry run: bytes of the others the
				 * unfinished copies would give */
	struct trace *trace;	/* with JOB_TRACE */
	uint64_t t_job, t_setup0, t_setup1, t_complete;	/* trace_now() */
	uint64_t t_accept;	/* ACCEPT left: with t_job, the sender's
				 * round trip for the trace's clock */
	struct rd_err work_err;
	struct parked *parked;
	struct parked_rdma *parked_rdma;
	struct vb_dev *dev;	/* RDMA device offered, or NULL */
	uv_timer_t reaper;
	bool reaper_armed, reaped, stopping;
	bool trace_asked;	/* the sender asked for our TRACE */
	uint64_t progress_at;	/* loop time of the last PROGRESS */
	bool told_bt;		/* a PROGRESS carried a block time */
	/* the idle watch (idle.c) */
	uv_timer_t idle;
	uint64_t idle_from;	/* loop time of the job's last progress */
	uint64_t seen_held, seen_sent;	/* the engine's counts then */
	bool idled;		/* dropped for it: FAIL, then let go */
	int handles;		/* reaper and idle, until both are closed */
};

/* A frame to the sender on the control connection (none once it is
 * gone); text, if any, is its body (cut at PROTO_MAX_TEXT). */
void transfer_send(struct transfer *j, uint8_t type, uint32_t arg,
		   uint64_t val, const char *text);

/* The same with a body of `len` bytes (no more than its type allows). */
void transfer_send_body(struct transfer *j, uint8_t type, uint32_t arg,
			uint64_t val, const void *body, size_t len);

/* Fail the job: tell the sender why (once: REFUSE during set-up, FAIL
 * after), naming the rank `peer` it blames (PROTO_NO_PEER: none), and
 * release everything on a later turn. */
void transfer_fail(struct transfer *j, int error, uint32_t peer,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#define job_fail(j, error, ...) \
	transfer_fail(j, error, PROTO_NO_PEER, __VA_ARGS__)

/* The reaper: release what an ended job holds (not while its set-up
 * runs: that comes back here), then let its control connection end. */
void transfer_reap(uv_timer_t *t);

/* Stop the job (transfer.c): it is JS_ENDED, and its resources go on the
 * next loop turn, never from inside the engine or a connection
 * callback. */
void transfer_end(struct transfer *j);

/* START (run.c): the group's roster and the blocks it carries taken, the
 * engine started (JS_RUNNING), or the job refused for what its racks would
 * cost.  0 (a failure to start fails the job), or -errno if START is
 * malformed (the connection is dropped). */
int transfer_start(struct transfer *j, const struct frame *f,
		   const uint8_t *body);

/* Land the copy if it may (run.c): every block in, the sender's go (CRC)
 * come, the lease to the sender kept; with --verify, read back from disk
 * first (in the thread pool, then here again) and compared.  COMPLETE
 * after the renames; else the job fails, saying why.  Does nothing
 * until then. */
void transfer_maybe_land(struct transfer *j);

/* What a set-up came to (transfer.work_rc, unless -errno). */
enum {
	SETUP_MADE = 0,		/* made (or checked: a dry run): ACCEPT */
	SETUP_ASK = 1,		/* files that may be identical: HAVE_ASK */
	SETUP_SAME = 2,		/* every entry identical: HAVE_SAME */
};

/* Set the job up in the thread pool (setup.c): look at what stands
 * where its entries land, then make, check or keep them; then HAVE,
 * ACCEPT or REFUSE.  settle: after HAVE_ASK, the sender's sums came
 * (REPLACE, in j->theirs) and decide which files are kept.  Returns 0
 * (a failure to queue fails the job). */
int transfer_setup(struct transfer *j, bool settle);

/* REPLACE came and DIGESTS are wanted: make the temporaries, fill them
 * from what stands where they land and digest those blocks now, in the
 * thread pool, while the sender digests its sources; compare when both
 * are in (setup.c).  A dry run waits for DIGESTS instead.  0 (a failure
 * to queue fails the job). */
int transfer_prefill(struct transfer *j);

/* DIGESTS came: compare if our own blocks are digested (setup.c). */
void transfer_digests_came(struct transfer *j);

/* REPLACE came (the sender's sums in j->theirs): settle what was seen
 * (setup.c).  Do blocks of files that differ, or of unfinished copies,
 * wait for the sender's DIGESTS (JOB_DELTA, none yet)? */
bool transfer_settle_wants_digests(struct transfer *j);

/* Hand over to the engine what came before START (data connections or
 * RDMA requests): 0, or -errno (what is left is dropped at release). */
int transfer_adopt_parked(struct transfer *j);

/* Close what came before START and was never handed over. */
void transfer_drop_parked(struct transfer *j);

/* The idle watch (idle.c): a job that makes no progress for the
 * daemon's job_idle_ms (transfer_env; 0: never) fails with a FAIL that names
 * the daemon's option (transfer_idle_fail), its temporaries removed, and its
 * sender is let go (transfer_let_go); one that ended and only waits for its
 * sender to close or ask for its TRACE is let go.  Progress is the
 * daemon's own work on it (its set-up: the watch stands still), a frame
 * from the sender other than a keepalive (START, CRC, REPLACE, ABORT,
 * TRACE: transfer_idle_progress), and, once it runs, a block received or handed
 * on (the engine's counts, looked at a quarter of job_idle_ms apart).
 * Keepalives are no progress: a connection alive is not a job going on.
 * transfer_idle_init once, at the job's birth; the timer is j->idle. */
void transfer_idle_init(struct transfer *j);

/* The job made progress now. */
void transfer_idle_progress(struct transfer *j);

/* Fail the job for idleness (transfer.c): FAIL with `reason` to the sender
 * and in the log, everything released on a later turn, and then the
 * sender let go (transfer_let_go) rather than waited for. */
void transfer_idle_fail(struct transfer *j, const char *reason);

/* The job is released, or to be let go as it is (transfer.c): its control
 * connection ends in order (the last frames are not lost in a reset)
 * without waiting for its sender, and the job is gone now, its slot
 * free. */
void transfer_let_go(struct transfer *j);

/* A control frame of `type` from the sender, to a transfer in state st
 * (go_received: its CRC came already), in states.c: 0 and in *next the
 * state it leads to (unless what it carries ends the job: a START whose
 * racks cost too much), or -EPROTO if the state does not take it (the
 * connection is dropped).  START only when ready, the go (CRC) once while
 * running, REPLACE only after HAVE, ABORT and TRACE in any state; after
 * the end every frame is taken and ignored. */
int transfer_frame_step(enum jstate st, bool go_received, uint8_t type,
			enum jstate *next);

#endif
