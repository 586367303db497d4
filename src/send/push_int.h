/* SPDX-License-Identifier: MIT */
/*
 * push_int - what the three parts of the sender share: push.c (hosts and
 * their control connections), fate.c (what became of each host: outcomes,
 * the abort of a broken group, the reasons reported) and group.c (the
 * group: its transport, START, rank 0's engine, the final go).  Not for
 * other modules.
 */
#ifndef RDMCP_PUSH_INT_H
#define RDMCP_PUSH_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "proto/auth.h"
#include "transport/tcp/conn.h"
#include "engine/engine.h"
#include "util/net.h"
#include "proto/proto.h"
#include "send/push.h"
#include "store/store.h"
#include "transport/verbs/verbs.h"
#include "util/wire.h"

enum hstate {
	HS_RESOLVING,
	HS_CONNECTING,
	HS_AUTH,	/* AUTH sent, waiting for CHALLENGE */
	HS_OFFERED,	/* JOB (or REPLACE) sent, waiting for ACCEPT */
	HS_HAVE,	/* HAVE came: compared once our sums are known */
	HS_ACCEPTED,
	HS_RUNNING,	/* START sent */
	HS_ABORTING,	/* ABORT sent: waiting for the member's OUTCOME */
	HS_QUERY,	/* lost after its go: asking its daemon, anew */
	HS_DONE,
	HS_FAILED,
	HS_ALIAS,	/* the host of `alias_of`, under another name */
};

/* Before START, or no longer part of a running group: a host whose
 * outcome cannot land anything it has not said yet. */
#define HS_UNDECIDED(st) ((st) <= HS_HAVE)

/* Steps of a QUERY (HS_QUERY). */
enum qstep { QS_CONNECTING, QS_AUTH, QS_ASKED };

struct phost {
	struct push *p;
	size_t idx;
	const char *name;
	char host[256];
	uint16_t port;
	struct sockaddr_storage addr;
	char addrstr[NET_ADDRSTRLEN];
	uv_getaddrinfo_t gai;
	struct conn *c;
	enum hstate st;
	enum qstep qstep;
	uint32_t rank;
	uint16_t rdma_port;	/* offered in ACCEPT, 0: no RDMA */
	uint8_t nonce[AUTH_NONCE_LEN];	/* ours, for this daemon */
	bool refused;			/* it turned the job down */
	bool authed;			/* its daemon proved it holds the key,
					 * on this connection */
	bool got_go;			/* the final go went out to it */
	bool identical;			/* it held the files already */
	bool dry;			/* dry run: it would take the job */
	bool casualty;			/* failed as the group broke */
	bool stalled;			/* failed after we were silent to it
					 * for nearly --timeout */
	bool maybe_landed;		/* lost after its go, never answered */
	bool reported;
	bool traced;			/* its TRACE came (--trace) */
	bool trace_asked;		/* we asked for it */
	uint64_t job_sent_us, accepted_us;	/* trace_now(): its JOB went,
						 * its ACCEPT came */
	bool compared;			/* our sums went to it (REPLACE) */
	bool wants_digests;		/* it asked for our DIGESTS */
	bool digests_sent;		/* ... and they went */
	struct bset *need;		/* the blocks it lacks (ACCEPT), or
					 * NULL: all */
	struct bset *link;		/* ... as START says it (links.c) */
	uint64_t resumed;		/* bytes of the others it took from
					 * unfinished copies (ACCEPT) */
	uint64_t held;			/* blocks it reported holding */
	uint64_t block_us;		/* its median block time, 0: unknown */
	double held_at;			/* when it said so, push seconds */
	uint64_t held_before;		/* ... in the report before */
	double held_before_at;		/* 0: one report at most */
	enum slow_verdict slow;
	int error;			/* -errno once failed */
	char reason[480];		/* why it failed, or what was lost */
	struct phost *alias_of;		/* HS_ALIAS */
	struct phost *aliases;		/* other names of this host */
	struct phost *next_alias;
};

struct push {
	const struct push_cfg *cfg;
	uv_loop_t loop;
	uv_timer_t finisher;
	uv_timer_t aborter;
	uv_timer_t grace;	/* for silent hosts while the others are
				 * ready: cfg.suspect's at set-up, members
				 * asked to stop (abort_now) */
	bool grace_on;
	bool grace_handshake;	/* ... for suspects' handshakes alone:
				 * no other host was ready */
	bool grace_late;	/* ... and for one or two late handshakes
				 * of cfg.expendable's */
	bool last_watched;	/* push_wait_last() tightened the last
				 * members' timeout */
	uint64_t abort_sent;	/* uv_hrtime() of the ABORTs, or 0 */
	uint64_t t0;
	struct store *st;
	uint32_t block_size;	/* cfg's, or chosen */
	struct wbuf jobmsg;
	uint8_t token[PROTO_TOKEN_LEN];
	struct phost *h;
	size_t nh;
	size_t undecided;	/* hosts not yet accepted or failed */
	size_t unfinished;	/* hosts without an outcome */
	struct phost **by_addr;	/* hash of resolved addresses (aliases) */
	size_t addr_slots;
	uint64_t bytes_done;	/* progress: summed over the hosts */
	size_t ndone, nfailed;
	uint32_t members;
	struct phost **by_rank;
	struct roster_peer *all;	/* every member: rank r at all[r - 1] */
	uint32_t *racks;	/* racks' sizes in rank order (--topology) */
	uint32_t *feeders;	/* per rank, who sends it half its blocks or
				 * more (fate.c); NULL: not worked out yet */
	size_t nracks;		/* 0: no racks */
	uv_idle_t starter;	/* sends the STARTs, a slice per turn; while
				 * it is active, no go */
	size_t start_next;	/* the host whose START is next */
	struct eng *eng;
	bool started, aborting, finishing, eng_done;
	bool regrouping;	/* stopped to start again (cfg.regroup) */
	bool shared;		/* a member's link carries other transfers */
	uint64_t regroup_checked;	/* uv_now() of the last look */
	double others_done;	/* the last copy to end of a host that
				 * push_cfg.slow does not name */
	uv_work_t sums_work;	/* the sources' sums, and with --verify
				 * their crc32: both known once sums_ready */
	bool sums_busy, sums_ready;
	uint32_t crc;		/* of the whole stream, with --verify */
	struct proto_sum *sums;	/* of each entry's file (REPLACE) */
	struct wbuf summsg;	/* REPLACE's body: sums, encoded */
	bool delta;		/* JOB_DELTA: digests go before REPLACE */
	bool digests_wanted;	/* a host holds files to compare (HAVE_ASK):
				 * the digests are computed too */
	uint8_t *digests;	/* each stream block's (with delta), NULL
				 * until computed (digest_work) */
	uv_work_t digest_work;
	bool digest_busy, digest_ready;
	struct bset *map;	/* the blocks the group carries, or NULL:
				 * all */
	bool has_lacks;		/* some member holds some of them (links.c) */
	uint8_t *lack_bits;	/* push_member_lacks' answer */
	bool sent_all;		/* rank 0's engine sent every block */
	bool go_sent;		/* the final CRC frame went to the members */
	bool sender_fault;	/* the group broke for the sender's reason */
	struct phost *suspect;	/* the peer rank 0's engine lost */
	char suspect_why[300];
	char abort_why[512];		/* what broke the group first */
	enum proto_transport group;	/* the transport the group uses */
	struct sockaddr_storage src;	/* our address towards the hosts */
	bool has_src;
	struct vb *vb;
	struct vb_dev *dev;
	struct rd_err fatal;		/* the sender itself failed */
	struct push_summary *sum;
	struct trace *trace;		/* --trace: rank 0's timeline */
	uint64_t t0_us;			/* trace_now() at the start */
	uv_timer_t tracer;		/* bounds the wait for TRACEs */
	bool tracer_on, trace_given_up;
	size_t traces_due;	/* timelines still due when the wait for them
				 * last began again */
};

/* Seconds since the push started. */
double push_elapsed(const struct push *p);

/* Open a control connection to h's daemon (again, for a QUERY). */
void push_host_connect(struct phost *h);

/* h's daemon has a JOB, REPLACE or QUERY to answer: until it does, a
 * silence is bounded by --connect-timeout (PROTO_SETUP_SILENCE_MIN_MS
 * at least), not -t, since it sends keepalives every
 * PROTO_SETUP_NOP_MS as it works: a hung daemon, which the other hosts
 * wait for, costs them that long. */
void push_await_setup(struct phost *h);

/* Bound h's silence while its daemon sets a job up by `ms`
 * (PROTO_SETUP_SILENCE_MIN_MS at least): push_await_setup's bound, or
 * the suspects' grace for a late set-up (grace.c). */
void push_bound_setup(struct phost *h, unsigned ms);

/* Start computing the sums of the sources (and with --verify their
 * crc32), if not yet (group.c). */
void push_start_sums(struct push *p);

/* ---------------------------------------------------------------------
 * fate.c
 */

/* Host h holds a complete copy (h->identical: it had it already). */
void push_host_done(struct phost *h);

/* Host h failed and holds nothing of this push (reported once): `blames`
 * is the rank whose loss it reports (PROTO_NO_PEER: none).  A running
 * group cannot finish without it: the others are aborted. */
void push_host_failed(struct phost *h, int error, uint32_t blames,
		      const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Host h's control connection ended or went silent with `why`: failed,
 * unless it may have landed (its go went out), which its daemon is then
 * asked about on a new connection. */
void push_host_lost(struct phost *h, int error, const char *why);

/* What a member said when asked (ABORT or QUERY): an OUTCOME. */
void push_host_outcome(struct phost *h, uint64_t outcome);

/* What one event tells of a host's fate (the rules of push_host_lost and
 * push_host_outcome, pure). */
enum push_fate {
	PF_NONE,		/* nothing new: it has its outcome already */
	PF_DONE,		/* it holds its copy */
	PF_FAILED,		/* it failed: nothing of this push is there */
	PF_FAILED_MAYBE_LANDED,	/* failed, but its copy may be in place */
	PF_CASUALTY,		/* failed only because the group broke */
	PF_ASK,			/* it may have landed: ask its daemon, anew */
};

/* A host in state st, whose go to land went out or not, lost its control
 * connection: before its go it failed; after, its daemon is asked (it
 * may have landed); lost again while being asked, its copy may be in
 * place and nobody can say. */
enum push_fate push_fate_of_loss(enum hstate st, bool got_go);

/* A host in state st answered OUTCOME: LANDED is a complete copy
 * whenever it comes; asked after a loss, DISCARDED is a failure and
 * UNKNOWN (its daemon forgot the job, or restarted) one that may have
 * landed; asked in an abort, the member whose loss broke the group
 * (`suspect`) failed for itself, the others are casualties. */
enum push_fate push_fate_of_answer(enum hstate st, bool suspect,
				   uint64_t outcome);

/* Grace for silent hosts (grace.c).  Only suspects (push_cfg.suspect)
 * are undecided and some other host accepted, a group they hold up:
 * after push_grace_ms() those still silent fail (-ETIME) and the group
 * starts without them.  If no other host accepted and one or two
 * suspects are left, only a suspect whose daemon has not answered the
 * handshake fails so, after push_grace_ms(0, ...).  When the hosts
 * still undecided are one or two of push_cfg.expendable, none a suspect,
 * and some other host accepted, they get the same grace (grace_late):
 * a handshake not answered by then fails (-ETIME), a set-up's silence is
 * bounded by it (push_bound_setup).  Called while hosts are undecided. */
void push_wait_suspects(struct push *p);

/* A broken group's members asked to stop (abort_now) that have not
 * answered when all the group's other members have ended (all but
 * 1/STRAGGLERS_PART of the group, or all but one): after
 * push_grace_ms() they fail as silent (-ETIMEDOUT), rather than hold the retry
 * for -t; one that got its go may have landed, and its daemon is asked
 * (QUERY) as if -t had found it out.  Not when the group stops to
 * regroup around slow members. */
#define STRAGGLERS_PART 4
void push_wait_stragglers(struct push *p);

/* A group whose members but one or two have landed: those are given
 * push_grace_ms(0, -t) of silence (a quarter of -t, where a live
 * daemon says something every sixth), not -t, before they count as lost
 * (push_host_lost: one that got its go is asked whether it landed).  A
 * stopped daemon at a chain's tail so costs the push a quarter of -t
 * and the --connect-timeout of that question. */
void push_wait_last(struct push *p);

/* The group formed.  If -t was lengthened for this attempt because hosts
 * went silent in the one before (push_retry_timeout) and every one of
 * them is still silent (suspects all left out: hung, not overloaded,
 * or they would have answered), the members' control connections go
 * back to -t as given (half the lengthened one at least: three of the
 * members' keepalives, which follow the job's -t): a member frozen now
 * is found out as soon as the first one was.  The members' lease stays
 * the job's longer -t: one cut sooner than it would cut itself never
 * had its go, or is asked (QUERY). */
void push_settle_patience(struct push *p);

/* The group cannot finish: after a grace period ask every member still
 * running to stop, with `why`, blaming `cause` (NULL: the sender). */
void push_abort_group(struct push *p, const struct phost *cause,
		      const char *why);

/* h resolved to the address of `first`, listed before it: the same host,
 * copied to once and reported under both names. */
void push_host_alias(struct phost *h, struct phost *first);

/* A member's PROGRESS: it holds `blocks` blocks, and its median block
 * time is block_us (0 or PROTO_NO_PEER: not known; PROTO_BT_SHARED: its
 * link carries other transfers, and nobody is judged in this push any
 * more).  May stop the group to start again with the slow members last
 * (push_cfg.regroup). */
void push_host_progress(struct phost *h, uint64_t blocks, uint64_t block_us);

/* End the push once every host's outcome is known. */
void push_maybe_finish(struct push *p);

/* ---------------------------------------------------------------------
 * group.c
 */

/* Once every host has accepted or failed: rank the members, choose the
 * transport, send START and run rank 0's engine. */
void push_maybe_start(struct push *p);

/* The hosts that said HAVE_ASK, once our sums are known: they get them
 * (REPLACE), to keep what is identical and answer again. */
void push_settle_haves(struct push *p);

/* links.c: what each member lacks, where some hold blocks already */

/* Order the `n` members (to be ranked 1..n) by what they hold, most
 * first, keeping the hosts' order otherwise; not with racks, nor after
 * a regroup (cfg.slow: the hosts come ordered by speed). */
void push_order_members(struct push *p, struct phost **members, size_t n);

/* Each member's set for START (phost.link) and p->has_lacks, once the
 * members are ranked and the map chosen.  0 or -ENOMEM. */
int push_choose_links(struct push *p);

/* Rank 0's engine's cfg.lacks: the blocks member `rank` lacks, as a
 * bitmap of the schedule's blocks (valid until the next call), or NULL:
 * all. */
const uint8_t *push_member_lacks(void *ctx, uint32_t rank);

/* The block bytes rank 0 sends in the group as formed (ranks, map,
 * links): a dry run's prediction. */
uint64_t push_rank0_bytes(struct push *p);

#endif
