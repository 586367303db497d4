/* SPDX-License-Identifier: MIT */
/*
 * send_int - what the two parts of a push on the command line share:
 * send.c (the attempts, each host's outcome) and send_say.c (what is
 * said besides).  Not for other files.
 */
#ifndef RDMCP_SEND_INT_H
#define RDMCP_SEND_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd.h"

/* The state of a push across attempts.  Indices are into the host list;
 * an attempt sends to `pending` (its report indices map through it). */
struct sender {
	const struct opts *o;
	const struct hostlist *hl;
	const char **targets;	/* --rsh: "host:port" of each receiver */
	bool *ok;		/* holds a complete copy */
	bool *failed;		/* failed for good, for reasons of its own */
	bool *retry;		/* failed in this attempt, may be retried */
	uint8_t *bound;		/* ... using one of its push_retry_bound()
				 * retries (0: uncounted) */
	uint8_t *faults;	/* attempts it failed for reasons of its own */
	bool *maybe_landed;	/* an attempt lost it after its go, unasked */
	enum slow_verdict *slow;	/* found slow (--slow last) */
	bool *suspect;		/* went silent in the last attempt it was in */
	uint64_t *rate;		/* then its rate in, bytes/s */
	bool regrouped;		/* the attempt stopped around slow hosts */
	bool regroup_done;	/* ... once per push */
	bool *unsent;		/* no copy, for the sender's reason alone */
	bool sender_failed;	/* some host failed for the sender's reason */
	bool changed;		/* a source changed in the last attempt */
	size_t busy;		/* hosts of it that refused as busy, to be
				 * sent to again (push_retry_wait_ms) */
	enum sched_alg alg;	/* the first attempt's schedule */
	struct tracefile *tf;	/* --trace */
	struct host_racks racks;	/* --topology */
	size_t *pending;
	size_t npending;
	char **dests;		/* where each source lands */
	size_t ndests;
	const char **sources;	/* what is read: '-' is the spool's path */
	char spooled[64];	/* the spool's path, "/proc/self/fd/N" */
	int spool_fd;		/* standard input, spooled; or -1 */
	struct outcomes *outcomes;	/* for the grouped lines */
	bool last;		/* no attempt after this one */
	bool retried;		/* an attempt ran before this one */
	bool silence;		/* a host of this attempt failed by a silence
				 * (push_retry_patient) */
	int silences;		/* attempts so far with such a host */
	int max_attempts;	/* push_retry_limit() */
	char key_name[4200];	/* "the key in FILE", for messages */
	double offset;		/* seconds from the first attempt's start */
	struct push_summary total;
	size_t would;		/* --dry-run: hosts that would take it */
	char would_addr[300];	/* ... the address of one of them */
	struct dry_plan dry;
};

struct manifest;

/* Pending host i as the push is given it: "host:port" of its receiver. */
const char *send_pending_host(const struct sender *sd, size_t i);

/* The bytes of the regular files in mf; *nfiles (unless NULL) gets how
 * many there are. */
uint64_t send_manifest_bytes(const struct manifest *mf, size_t *nfiles);

/* What links the pending hosts are reached over (push_link); without
 * memory to tell, what --transport says. */
enum sched_link send_pending_link(const struct sender *sd);

/* -v: what is sent, to how many hosts, and how: block size, schedule,
 * transport asked for (the summary says which one the group used). */
void send_announce(const struct sender *sd, const struct manifest *mf,
		   enum sched_alg alg);

/* The attempt stopped around slow hosts (the group's median rate into
 * a member: rate, bytes/s): say which are sent to again, last. */
void send_say_regroup(const struct sender *sd, uint64_t rate);

/* A source changed while the last attempt sent it, and its group was
 * aborted: say whether the `more` hosts pending get it again, as it is
 * now, or no host keeps what was sent. */
void send_say_changed(const struct sender *sd, size_t more);

/* The pending hosts are sent to again, in attempt round + 1 (after
 * push_retry_wait_ms when some were busy). */
void send_say_retry(const struct sender *sd, int round);

/* Says that `silent` of an attempt's `hosts` went silent at once, taken
 * for overload: none is cut early as a suspect in the retry. */
void send_say_mass_silence(const struct sender *sd, size_t silent,
			   size_t hosts);

/* Every host's final outcome, once the attempts ran (ran) or the sender
 * failed: the summary (if any ran), the failed line, the host files.
 * Hosts fail only for reasons of their own: after an error of the
 * sender's, those it could not send to are neither ok nor failed, and
 * those that lost their copy to its fault alone (a source changed at
 * every attempt) are named apart, as not copied.
 * Returns 0, or -errno after a message if a host file was not written. */
int send_finish(struct sender *sd, bool ran);

/* --json: the summary object (the hosts ok, failed, and without a
 * copy for the sender's reason: not_sent), with the final exit status. */
void send_json_summary(const struct hostlist *hl,
		       const struct push_summary *sum, const bool *okay,
		       const bool *failed, const bool *not_sent, int status,
		       const struct dry_plan *dry);

#endif
