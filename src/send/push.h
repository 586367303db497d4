/* SPDX-License-Identifier: MIT */
/*
 * push - the sending side of a transfer.
 *
 *  1. map the sources;
 *  2. resolve and contact every host's daemon at once, send each the job
 *     (files, sizes, modes, block size, algorithm, flags);
 *  3. once every host has accepted or failed, give the hosts that accepted
 *     ranks 1..m in the order listed and send each the member list (START);
 *  4. run rank 0's engine: members connect only to their schedule
 *     neighbours and relay blocks among themselves;
 *  5. collect each member's COMPLETE (files in place) or FAIL; a failure
 *     inside the running group aborts the members that are not complete.
 *
 * Each host's outcome is reported as soon as it is known.
 */
#ifndef RDMCP_PUSH_H
#define RDMCP_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/auth.h"
#include "util/log.h"
#include "proto/proto.h"
#include "sched/schedule.h"
#include "send/slow.h"
#include "proto/trace.h"
#include "transport/verbs/opts.h"

struct push_report {
	size_t index;		/* position in the host list */
	const char *host;	/* as given */
	const char *addr;	/* resolved "address:port", or "" */
	bool ok;		/* holds a complete copy */
	int error;		/* -errno when !ok */
	const char *reason;	/* why, when !ok */
	bool permanent;		/* the host refused the job itself (a file
				 * exists, a path outside its roots, the
				 * key...), or its name does not resolve:
				 * sending again cannot help */
	bool identical;		/* ok: it held identical files already and
				 * was not sent to */
	bool verified;		/* ok: its crc32 matched the source's */
	bool dry_run;		/* ok: it would take the job (nothing sent) */
	bool sender_fault;	/* failed only because the sender could not
				 * go on (a source changed...), not for
				 * anything of the host's */
	bool maybe_landed;	/* failed: lost after its go to land, and its
				 * daemon could not say whether it landed
				 * (gone, or restarted and forgot): its copy
				 * may be in place */
	bool sender_stalled;	/* failed after the sender itself had been
				 * silent to it for nearly --timeout (frozen
				 * or starved): its daemon may have given up
				 * on the sender, not failed */
	bool casualty;		/* failed only because the group broke (it
				 * lost a neighbour, or was stopped after
				 * another host failed): nothing of its own */
	bool regroup;		/* failed: stopped, with the whole group, to
				 * start again with the slow hosts last
				 * (push_cfg.regroup); nothing of the
				 * host's */
	enum slow_verdict slow;	/* found slow (or maybe) in this push, or
				 * said slow by push_cfg.slow */
	uint64_t link_rate;	/* bytes/s blocks came into it (its median
				 * block's), 0: not known */
	double seconds;		/* since the push started */
	uint32_t rank;		/* in the group, 0 if never started */
	uint64_t bytes;		/* size of the replica */
	uint64_t reused;	/* ... of which it held already, in blocks
				 * whose digests matched, in the files where
				 * the job lands (an old version): not sent
				 * for it */
	uint64_t resumed;	/* ... and in unfinished copies a broken
				 * push left (--keep-partial): not sent
				 * either */
};

/* How far a push is, for progress displays. */
struct push_progress {
	uint64_t bytes_done;	/* summed over the replicas */
	uint64_t bytes_total;	/* replica size times hosts */
	size_t done, failed, hosts;
	double seconds;		/* since the push started */
};

struct push_cfg {
	/* what to send (manifest.h): entries with their destinations, and
	 * the local path of each regular file (NULL for the others) */
	const struct job_file *files;
	const char *const *sources;
	size_t nfiles;
	bool times;			/* give entries their mtimes (-p) */
	const char *const *hosts;	/* "host", "host:port", "[v6]:port" */
	size_t nhosts;
	uint16_t default_port;
	enum sched_alg alg;
	/* --topology: hosts[i] is in rack racks[i] (-1: none), the hosts
	 * sorted so that each rack's are together; own_rack is the sender's
	 * (-1: none).  With the binomial pipeline each rack then runs its
	 * own, fed from the rack before (schedule.h).  NULL: no racks. */
	const int *racks;
	int own_rack;
	uint32_t block_size;		/* 0: chosen (sched_auto_block) */
	/* Watch the members' block times (binomial pipeline or chain, over
	 * TCP): if some are much slower than the others and starting again
	 * pays (slow.h), stop the group and report every member not done
	 * with `regroup` set, the slow ones with `slow`, for the caller to
	 * send again with the slow hosts last. */
	bool regroup;
	const bool *slow;		/* hosts found slow before: reported so
					 * (NULL: none) */
	const bool *suspect;		/* hosts that went silent in the attempt
					 * before (NULL: none): once every other
					 * host has accepted or failed, the group
					 * waits for them push_grace_ms(), then
					 * starts without those still silent
					 * (-ETIME) */
	const bool *expendable;		/* hosts a retry would send to again
					 * were they cut short (NULL: none): in
					 * the same grace, one or two of them
					 * whose daemons have not answered the
					 * handshake fail so (-ETIME), and
					 * those setting the job up do if
					 * silent for the grace; the others
					 * start without them */
	bool verify;
	bool force;
	bool sparse;			/* copies keep holes (JOB_SPARSE) */
	bool whole_file;		/* send every block, whatever a host
					 * holds (no JOB_DELTA) */
	bool parents;			/* files[0] is a directory whose missing
					 * parents the daemons make (-d DIR/:
					 * JOB_PARENTS) */
	/* Contact, authenticate and ask every host whether it would take
	 * the job (JOB_DRY_RUN), run nothing: hosts that would are reported
	 * ok with `dry_run` set. */
	bool dry_run;
	uint64_t bwlimit;		/* bytes/s per member, 0: no cap */
	unsigned timeout_ms;		/* a silent peer is dead after this */
	unsigned first_timeout_ms;	/* -t as given, before the retries
					 * lengthened timeout_ms (0: the same):
					 * the members' once this attempt's
					 * suspects were all still silent */
	unsigned connect_timeout_ms;
	unsigned window;		/* engine receive window, 0: default */
	enum proto_transport transport;	/* asked for */
	const char *bind;		/* numeric source address, or NULL */
	struct vb_opts verbs;		/* device, GID index, polling */
	const struct auth_key *key;	/* proves us to the daemons */
	const char *key_name;		/* for messages: "the key in FILE" */
	void (*report)(void *ctx, const struct push_report *r);
	/* Optional: called as daemons report progress (each every 200 ms or
	 * so; every n ms in groups of n > 200) and outcomes; throttle as
	 * needed. */
	void (*progress)(void *ctx, const struct push_progress *pr);
	/* Optional (--trace): the timeline of each member that completed or
	 * failed (index and rank as in push_report), as it comes, and the
	 * sender's own (index SIZE_MAX, rank 0) at the end; add `offset` to
	 * a member's times to put them on the sender's clock, which it may
	 * be wrong by up to `error_us` (trace_offset(); 0: not known). */
	void (*trace)(void *ctx, size_t index, uint32_t rank,
		      const struct trace *t, int64_t offset,
		      uint64_t error_us);
	void *ctx;
};

struct push_summary {
	size_t hosts;
	size_t ok;
	size_t copied;		/* of those, sent their copy (not already
				 * identical, not a dry run): the command
				 * line counts them; 0: no rate to show */
	size_t failed;
	size_t unsent;		/* without a copy for the sender's reason
				 * alone (the command line counts them) */
	uint64_t bytes;		/* per replica */
	double seconds;		/* until the last host's outcome */
	double first_ok;	/* first and last complete replica */
	double last_ok;
	double setup;		/* until data could flow (START sent) */
	const char *transport;	/* used: "tcp" or "verbs" */
	uint32_t block_size;	/* used */
	uint64_t sent;		/* block bytes the sender sent, over all
				 * attempts (ideally `bytes`) */
	uint64_t reused;	/* summed over the replicas that ended ok:
				 * push_report's reused and resumed */
	uint64_t resumed;
	uint64_t would_send;	/* a dry run: block bytes the group would
				 * carry (less than `bytes` when the hosts
				 * hold blocks already) */
	unsigned attempts;	/* 1 per push_run (the sender sums them
				 * over its retries) */
	size_t regrouped;		/* hosts stopped to start again */
	uint64_t link_rate;		/* then the group's median rate into a
					 * member, bytes/s */
	char source_changed[512];	/* why, if a source changed while it
					 * was sent (the group was aborted) */
};

/* Run one transfer to the end on a private event loop.  Returns 0 once the
 * transfer ran (the summary tells how it went), or -errno if the sender
 * could not run it at all (unreadable source...), with `err` saying why. */
int push_run(const struct push_cfg *cfg, struct push_summary *sum,
	     struct rd_err *err);

/* The links a push over `transport` to `hosts` crosses, for
 * sched_auto_block: verbs; loopback when every host is on this machine
 * (net_hostport_is_loopback); else a network. */
enum sched_link push_link(enum proto_transport transport,
			  const char *const *hosts, size_t nhosts);

/* The least a group waits for its suspects (push_cfg.suspect) once the
 * other hosts are ready, or for its silent members once the others have
 * answered an ABORT. */
#define PUSH_SUSPECT_GRACE_MS 250

/* How long silent hosts are waited for once the others are done (retry.c,
 * pure): as long again as the others took (others_ms), a quarter of the
 * wait it shortens (scale_ms: at set-up the lesser of --connect-timeout
 * and -t, which bound a silent handshake; -t for an ABORT's answer: a
 * link's queue may hold an answer back that long), and
 * PUSH_SUSPECT_GRACE_MS at least; never more than scale_ms. */
unsigned push_grace_ms(uint64_t others_ms, unsigned scale_ms);

/* Retries (retry.c).  May a host whose report this attempt gave be sent
 * to again?  Not after the last attempt, nor a host that refused the job
 * itself; a casualty (it only lost its group to another host's failure,
 * not to the sender's) and a host that failed after the sender had been
 * silent to it for nearly --timeout (the sender was starved or frozen:
 * its daemon may have given up on the sender) always may; a host that
 * failed for its own reasons or the sender's counts that in *faults,
 * and may while it has failed so push_retry_bound() times at most. */
bool push_may_retry(const struct push_report *r, bool last_attempt,
		    int retries, uint8_t *faults);

/* How many of its own failures a host that failed as r says may have
 * and still be sent to again: `retries`, but once for a refused
 * connection (no daemon listens there) or a handshake it did not answer
 * within --connect-timeout (a hung daemon). */
int push_retry_bound(const struct push_report *r, int retries);

/* The --timeout of an attempt after `silences` attempts in which a host
 * failed by a silence (push_retry_patient()): doubled for each, up to
 * PROTO_MAX_TIMEOUT_MS.  An attempt lost to overload (a peer that ran
 * too late to keep its keepalives) is not lost the same way again; a
 * host that is really gone costs the longer wait once. */
unsigned push_retry_timeout(unsigned timeout_ms, int silences);

/* Does a host that failed as r says call for a longer --timeout in the
 * attempts after?  Yes if it went silent for --timeout itself, or the
 * sender went silent to it (overload, either side); not if it went away,
 * refused, or only lost its group: a killed daemon says nothing of how
 * patient the next attempt must be. */
bool push_retry_patient(const struct push_report *r);

/* Did so many of an attempt's hosts go silent by themselves (`silent` of
 * `hosts`: -t or a handshake's --connect-timeout ran out on them) that
 * the sender's machine or network more likely starved them all than
 * each one hung?  More than half of them, and PUSH_MASS_SILENCE_MIN at
 * least: the retry then takes none of them for a suspect (a hung host
 * cut early), only waits longer (push_retry_timeout()).  A few hosts
 * hung among many are suspects still. */
#define PUSH_MASS_SILENCE_MIN 8
bool push_retry_mass_silence(size_t silent, size_t hosts);

/* How long to wait before attempt `round` (1: the first retry) sends
 * again to a host that refused as busy (--max-jobs): PUSH_BUSY_WAIT_MS,
 * doubled for each retry, up to PUSH_BUSY_WAIT_MAX_MS.  Its transfers
 * take their time: a retry a few ms later finds it as busy. */
#define PUSH_BUSY_WAIT_MS 1000u
#define PUSH_BUSY_WAIT_MAX_MS 60000u
unsigned push_retry_wait_ms(int round);

/* How many attempts a push may take: one without retries or with
 * --dry-run; else each host may fail on its own `retries` times and
 * besides lose its group to others' failures, so twice the attempts one
 * host may take, which bounds the time a push that keeps breaking can
 * take. */
int push_retry_limit(int retries, bool dry_run);

#endif
