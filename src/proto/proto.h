/* SPDX-License-Identifier: MIT */
/*
 * proto - the rdmcp wire protocol: frame headers and the messages of the
 * control and data connections.  Pure: no I/O; decoders treat input as
 * hostile and bound every length and count before using it.
 *
 * Every message is a frame: a 24-byte header, then `len` payload bytes.
 *
 *   u8 type | u8 version | u16 zero | u32 arg | u64 val | u64 len
 *
 * Control connection (sender <-> daemon, one per host):
 *   JOB      s->d  body: the job (files, block size, algorithm, flags)
 *   ACCEPT   d->s  job set up, temporaries created, space reserved;
 *                  val: the daemon's rdma_cm port, 0 if it has no RDMA;
 *                  body (after DIGESTS): the blocks it lacks (bset),
 *                  the others filled from what stands where the files
 *                  land, then u64: the bytes of those others it took
 *                  from unfinished copies (resumed); none: it lacks
 *                  them all
 *                  with JOB_DRY_RUN: every check passed (paths, roots,
 *                  what exists, free space), nothing was made
 *   REFUSE   d->s  val: errno, body: reason
 *   START    s->d  body: the member's rank, the group's size and
 *                  transport, its schedule neighbours' addresses and
 *                  rdma_cm ports, the racks' sizes (--topology), and
 *                  the blocks the group carries, if not all: block j
 *                  of the schedule is the set's j-th
 *   CRC      s->d  every block is out and no source changed: the member
 *                  may land once it holds every block; val: crc32 of the
 *                  whole stream (with --verify, else 0)
 *   COMPLETE d->s  val: crc32 of what the member wrote; files in place
 *   FAIL     d->s  val: errno, arg: peer rank involved or NO_PEER,
 *                  body: reason
 *   ABORT    s->d  body: reason; a member that has not landed discards
 *                  its temporaries; every member answers OUTCOME
 *   HAVE     d->s  instead of ACCEPT: arg HAVE_ASK: some of the job's files
 *                  are there with its sizes and modes, to be compared
 *                  (val HAVE_WANT_DIGESTS: and blocks, DIGESTS wanted);
 *                  HAVE_SAME: every entry is there, identical (times set
 *                  with JOB_TIMES): nothing to send; HAVE_DIGESTS (after
 *                  REPLACE): files differ whose blocks may serve,
 *                  DIGESTS wanted
 *   DIGESTS  s->d  with JOB_DELTA, once wanted (HAVE_WANT_DIGESTS,
 *                  HAVE_DIGESTS), before or after REPLACE: the digest of
 *                  each block of the stream (PROTO_DIGEST_LEN bytes,
 *                  XXH3-128 seeded by the token), for the daemon to fill its
 *                  temporaries with the blocks it holds already; asked
 *                  only then, so that files found identical by their
 *                  sums cost the sender no block digests
 *   REPLACE  s->d  after HAVE_ASK: body: the sources' sums (struct
 *                  proto_sum: whole files' XXH3-128), one per
 *                  entry; the daemon keeps the files that are identical,
 *                  refuses one that differs (without JOB_FORCE, naming it)
 *                  and answers HAVE_SAME, HAVE_DIGESTS, ACCEPT (the rest
 *                  is made; what is kept still takes its bytes from the
 *                  stream) or REFUSE
 *   QUERY    s->d  instead of JOB on a new connection, covered by the
 *                  proof; body: a job token: what became of that job?  A
 *                  job still running that has not landed is ended first
 *   OUTCOME  d->s  answer to ABORT and QUERY; val: OUTCOME_*, body: text
 *   TRACE    s->d  with JOB_TRACE, once every member is done: send your
 *                  timeline (empty); d->s the answer, once the job ended:
 *                  the member's timeline (trace.h, wire form).  Asked
 *                  for, not sent as each job ends: the timelines of the
 *                  first members done would share the sender's link with
 *                  the COMPLETE of the last ones
 *
 * Data connection (member -> member of higher rank, one per schedule edge):
 *   HELLO    body: job token, from rank, to rank
 *   SIGNAL   val: engine signal: its kind in the top byte (READY, or with
 *                  admit_one OFFER, GRANT, NEARLY, DECLINE; engine_int.h),
 *                  a count of blocks in the next (OFFER and GRANT: a
 *                  run), the block below
 *   BLOCK    arg: immediate value, val: block number, payload: the block
 *
 * Any connection:
 *   NOP      keepalive, sent when a connection has been quiet for a while
 */
#ifndef RDMCP_PROTO_H
#define RDMCP_PROTO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "util/log.h"
#include "sched/schedule.h"
#include "util/bset.h"
#include "util/wire.h"

#define PROTO_VERSION 12	/* 8: JF_PLACE; HAVE and REPLACE file by file;
			 * 9: DIGESTS, ACCEPT's blocks lacked, START's
			 * blocks carried; 10: START's blocks each
			 * member lacks; 11: DIGESTS are XXH3-128 seeded
			 * by the token, REPLACE carries XXH3-128
			 * sums of whole files, not crc32s; 12:
			 * JOB_LINK_WINDOW */
#define PROTO_FRAME_LEN 24
#define PROTO_TOKEN_LEN 16
#define PROTO_DEFAULT_PORT 7471

#define PROTO_MAX_FILES (1u << 20)
#define PROTO_MAX_PATH 4096
#define PROTO_MAX_TEXT 4096		/* reasons, host names */
#define PROTO_MAX_BODY (64u << 20)	/* largest control message */
#define PROTO_MIN_BLOCK 512u
#define PROTO_MAX_BLOCK (1u << 30)
#define PROTO_NO_PEER UINT32_MAX
/* Runs of blocks a set on the wire holds at most (ACCEPT, START): a set
 * more scattered is coarsened, a superset (bset_coarsen). */
#define PROTO_MAX_RUNS 4096u
/* Runs of what one member lacks, as START tells it and its neighbours
 * (coarsened to this from what it said in ACCEPT): a START names a few
 * neighbours, each with its set. */
#define PROTO_LINK_RUNS 256u
/* The length of a block's digest (DIGESTS), and the most blocks a job
 * may have for its blocks to be compared: more are sent whole. */
#define PROTO_DIGEST_LEN 16u
#define PROTO_MAX_DIGESTS (PROTO_MAX_BODY / PROTO_DIGEST_LEN)

/* PROGRESS's block time: not known, for the daemon runs other transfers
 * too, which share its link (the largest time it sends is one less). */
#define PROTO_BT_SHARED (UINT32_MAX - 1)
/* While a daemon sets a job up (JOB or REPLACE until its answer: reading
 * files to compare them, reserving space...), it sends a keepalive at
 * least this often, so that its sender may bound that silence by its
 * --connect-timeout, not by -t: a hung daemon costs the other hosts of a
 * push, which wait for it before their group starts, that long.  The
 * bound is PROTO_SETUP_SILENCE_MIN_MS at least. */
#define PROTO_SETUP_NOP_MS 200u
#define PROTO_SETUP_SILENCE_MIN_MS 1000u
#define PROTO_MAX_WINDOW 1024u
#define PROTO_MAX_TIMEOUT_MS (24u * 3600 * 1000)

enum proto_type {
	MSG_JOB = 1,
	MSG_ACCEPT,
	MSG_REFUSE,
	MSG_START,
	MSG_CRC,
	MSG_COMPLETE,
	MSG_FAIL,
	MSG_ABORT,
	MSG_AUTH,	/* sender's nonce (auth.h) */
	MSG_CHALLENGE,	/* daemon's nonce and proof */
	MSG_PROOF,	/* sender's proof, and the MAC of the JOB or QUERY
			 * that follows */
	MSG_PROGRESS,	/* daemon -> sender: blocks held (val) and the median
			 * wire time of its last blocks in us (arg, 0 or
			 * PROTO_NO_PEER: not known; PROTO_BT_SHARED),
			 * now and then */
	MSG_HAVE,	/* the job's entries are there already (see above) */
	MSG_REPLACE,
	MSG_QUERY,
	MSG_HELLO = 16,
	MSG_SIGNAL,
	MSG_BLOCK,
	MSG_OUTCOME,
	MSG_TRACE,
	MSG_DIGESTS,	/* s->d: each block's digest (see above) */
	MSG_NOP = 31,	/* keepalive, any connection; never reaches owners */
};

struct frame {
	uint8_t type;
	uint8_t version;
	uint32_t arg;
	uint64_t val;
	uint64_t len;
};

/* Encode a frame header (the version is always PROTO_VERSION). */
void frame_encode(const struct frame *f, uint8_t out[PROTO_FRAME_LEN]);

/* Decode a frame header; -EPROTO on a bad version or reserved bits. */
int frame_decode(const uint8_t in[PROTO_FRAME_LEN], struct frame *f);

/* HAVE's arg: what the daemon says of the job's entries that are there
 * already, instead of ACCEPT. */
#define HAVE_ASK 0u	/* files of the job's sizes and modes are there: the
			 * sender's crc32s (REPLACE) tell which are
			 * identical, to be kept; or with JOB_DELTA and
			 * JOB_FORCE, files of other sizes or modes, whose
			 * blocks the sender's DIGESTS tell */
#define HAVE_SAME 1u	/* every entry is there, identical (after REPLACE,
			 * or with no file to compare): nothing to send */
#define HAVE_DIGESTS 2u	/* after REPLACE: files that differ are there whose
			 * blocks may serve (JOB_DELTA): DIGESTS wanted */
#define HAVE_WANT_DIGESTS 1u	/* HAVE_ASK's val: DIGESTS wanted too (files
				 * of other sizes, unfinished copies) */

/* A whole file's XXH3-128, seeded as the block digests (store.h), all
 * zeros for an empty file or what is no file. */
struct proto_sum {
	uint8_t b[PROTO_DIGEST_LEN];
};

/* REPLACE's body: the sum of each of the job's n entries as the sender
 * has it, in job order.  replace_decode: the body must hold exactly n;
 * 0 or -EBADMSG. */
int replace_encode(const struct proto_sum *sums, uint32_t n,
		   struct wbuf *w);
int replace_decode(const uint8_t *body, size_t len, uint32_t n,
		   struct proto_sum *sums);

/* What became of a job on a daemon (OUTCOME's val). */
enum proto_outcome {
	OUTCOME_UNKNOWN = 0,	/* no such job (never seen, or forgotten) */
	OUTCOME_LANDED = 1,	/* its entries were renamed into place */
	OUTCOME_DISCARDED = 2,	/* it ended without landing anything */
};

/* Transports a job may ask for, and a group may use. */
enum proto_transport {
	TRANSPORT_TCP = 0,
	TRANSPORT_VERBS = 1,
	TRANSPORT_AUTO = 2,	/* verbs if every member can, else tcp */
};

/* "tcp", "verbs", "auto". */
const char *proto_transport_name(enum proto_transport t);

/* Job flags. */
#define JOB_VERIFY 0x1u		/* end-to-end crc32 before landing */
#define JOB_FORCE 0x2u		/* replace existing destination files */
#define JOB_TIMES 0x4u		/* give entries their modification times */
#define JOB_OWNERS 0x8u		/* ... and their owners, where allowed */
#define JOB_TRACE 0x10u		/* members send their timeline (TRACE) */
#define JOB_SPARSE 0x20u	/* copies keep holes where blocks are zero */
#define JOB_DRY_RUN 0x40u	/* check, create nothing: ACCEPT means "would
				 * take it"; the sender then closes */
#define JOB_PARENTS 0x80u	/* the first entry is a directory (-d DIR/)
				 * whose missing parents the daemon makes
				 * too, as mkdir -p (dest_add_parents) */
#define JOB_DELTA 0x100u	/* the sender sends DIGESTS before REPLACE:
				 * what a host holds is not sent again */
#define JOB_LINK_WINDOW 0x200u	/* members post fewer receives ahead on
				 * slow links (eng_window_for): a chain
				 * over a network (push.c's link_window) */
#define JOB_FLAGS_KNOWN (JOB_VERIFY | JOB_FORCE | JOB_TIMES | JOB_OWNERS | \
			 JOB_TRACE | JOB_SPARSE | JOB_DRY_RUN | JOB_PARENTS | \
			 JOB_DELTA | JOB_LINK_WINDOW)

/* What a manifest entry is.  Entries come in tree order: a directory
 * before anything inside it. */
enum job_ftype {
	JF_FILE = 0,		/* regular file: `size` bytes of the stream */
	JF_DIR = 1,		/* directory: created, or merged into; a link
				 * in its place is refused */
	JF_LINK = 2,		/* symbolic link to `target`, never followed */
	JF_PLACE = 3,		/* on the wire only: a JF_DIR with `place` */
};

struct job_file {
	char *path;		/* absolute destination path */
	uint8_t type;		/* enum job_ftype */
	uint64_t size;		/* JF_FILE only; 0 otherwise */
	uint32_t mode;		/* permission bits (07777) */
	int64_t mtime_sec;	/* modification time (used with JOB_TIMES) */
	uint32_t mtime_nsec;
	uint32_t uid, gid;	/* owner on the sender (used with JOB_OWNERS) */
	char *target;		/* JF_LINK: the link's text; else NULL */
	bool place;		/* JF_DIR: a directory the job lands in (-d
				 * DIR/), no copy of a source's: made where
				 * missing, merged into where it is, through
				 * a link too, as the destination's parents
				 * are (JF_PLACE on the wire) */
};

struct job {
	uint8_t token[PROTO_TOKEN_LEN];
	enum sched_alg alg;
	uint32_t flags;
	uint32_t block_size;
	uint32_t timeout_ms;	/* a silent peer is dead after this */
	uint32_t window;	/* receives members post ahead */
	uint64_t bwlimit;	/* bytes/s each member sends at most, 0: no cap */
	enum proto_transport transport;	/* what the sender asks for */
	char *origin;		/* the sender's host name, for logs */
	uint32_t nfiles;
	struct job_file *files;
	uint64_t total;		/* sum of sizes (derived) */
};

/* Serialise a job.  Returns 0 or -ENOMEM (w->err). */
int job_encode(const struct job *job, struct wbuf *w);

/* Parse a job body.  On success *out is a new job (job_free it). */
int job_decode(const uint8_t *body, size_t len, struct job **out,
	       struct rd_err *err);

/* Number of blocks the job's stream is cut into. */
uint64_t job_blocks(const struct job *job);

/* How often (ms) a member of a group of n (sender included) sends
 * PROGRESS, blocks of block_size taking it bt_us each (the median wire
 * time it reports; 0, PROTO_NO_PEER or PROTO_BT_SHARED: not known).
 * Every 200 ms; in groups of more than 200, every n ms (the sender reads
 * at most a thousand a second); and where the link is slow, less often,
 * so that the ACKs the sender returns for all members' PROGRESS take at
 * most 1/400 of its link's time; every 2 s at least. */
uint64_t proto_progress_every_ms(uint32_t n, uint64_t block_size,
				 uint32_t bt_us);

/* Free a job and its strings; NULL is a no-op. */
void job_free(struct job *job);

/* A member a START names: its rank, address (rank 0, the sender, has
 * none: AF_UNSPEC) and rdma_cm port (0 with tcp). */
struct roster_peer {
	uint32_t rank;
	uint16_t rdma_port;
	struct sockaddr_storage addr;
	struct bset *lacks;	/* what it lacks of the stream's blocks (a
				 * superset; NULL: all), with roster.lacks */
};

/* What a START carries: the receiving member's rank, the group's size and
 * transport, and its schedule neighbours only (a member needs no other
 * address: START costs the sender O(n log n) bytes in all, not n^2),
 * sorted by rank; when the members are in racks (--topology), the
 * racks' sizes, rank by rank from 0 (after the peers; a count of 0
 * otherwise); and the blocks the group carries when not all (a delta:
 * what every member holds already is not sent). */
struct roster {
	uint32_t rank;
	uint32_t n;
	enum proto_transport transport;	/* tcp or verbs */
	uint32_t npeers;
	struct roster_peer *peers;
	uint32_t nracks;	/* 0, or 2.. n */
	uint32_t *racks;	/* sizes, each >= 1, summing to n */
	struct bset *map;	/* the stream blocks the group carries, or
				 * NULL: all (the member checks they are
				 * the job's) */
	/* Whether members hold some of the blocks carried: then `lacks` is
	 * what this member lacks (NULL: all), and each peer's `lacks` its
	 * own; blocks go over a link only where the receiver lacks them, and
	 * a member passes on what it held (engine.h, had and lacks). */
	bool has_lacks;
	struct bset *lacks;
};

int roster_encode(const struct roster *ro, struct wbuf *w);
int roster_decode(const uint8_t *body, size_t len, struct roster **out,
		  struct rd_err *err);
void roster_free(struct roster *ro);

/* Neighbour `rank` of the roster, or NULL. */
const struct roster_peer *roster_peer(const struct roster *ro,
				      uint32_t rank);

struct hello {
	uint8_t token[PROTO_TOKEN_LEN];
	uint32_t from;
	uint32_t to;
};

int hello_encode(const struct hello *h, struct wbuf *w);
int hello_decode(const uint8_t *body, size_t len, struct hello *h);

/* The largest payload a frame of this type may carry; 0 when it carries
 * none.  BLOCK payloads are bounded by the job instead. */
uint64_t proto_max_len(uint8_t type);

/* "JOB", "ACCEPT", ... for logs. */
const char *proto_type_name(uint8_t type);

#endif
