/* SPDX-License-Identifier: MIT */
/*
 * proto - frames and messages (see proto.h).
 */
#include "proto/proto.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

/* The fewest bytes a job entry takes: path length, type, size, mode,
 * time, owner. */
#define JOB_MIN_ENTRY (4 + 1 + 8 + 4 + 8 + 4 + 4 + 4)

void
frame_encode(const struct frame *f, uint8_t out[PROTO_FRAME_LEN])
{
	out[0] = f->type;
	out[1] = PROTO_VERSION;
	out[2] = 0;
	out[3] = 0;
	be_put32(out + 4, f->arg);
	be_put64(out + 8, f->val);
	be_put64(out + 16, f->len);
}

int
frame_decode(const uint8_t in[PROTO_FRAME_LEN], struct frame *f)
{
	f->type = in[0];
	f->version = in[1];
	f->arg = be_get32(in + 4);
	f->val = be_get64(in + 8);
	f->len = be_get64(in + 16);
	if (f->version != PROTO_VERSION || in[2] != 0 || in[3] != 0)
		return -EPROTO;
	return 0;
}

uint64_t
proto_max_len(uint8_t type)
{
	switch (type) {
	case MSG_JOB:
	case MSG_TRACE:
		return PROTO_MAX_BODY;
	case MSG_START:	/* peers, racks, the blocks carried, and what
			 * each lacks (sets of PROTO_LINK_RUNS) */
		return PROTO_MAX_BODY;
	case MSG_ACCEPT:	/* the blocks the daemon lacks */
		return 4ull + 16ull * PROTO_MAX_RUNS;
	case MSG_DIGESTS:	/* one per block */
		return PROTO_MAX_BODY;
	case MSG_REFUSE:
	case MSG_FAIL:
	case MSG_ABORT:
	case MSG_OUTCOME:
		return 4 + PROTO_MAX_TEXT;
	case MSG_QUERY:
		return PROTO_TOKEN_LEN;
	case MSG_REPLACE:	/* a crc32 per entry */
		return 4ull * PROTO_MAX_FILES;
	case MSG_HELLO:
		return PROTO_TOKEN_LEN + 8;
	case MSG_AUTH:
		return 32;
	case MSG_PROOF:		/* two MACs */
	case MSG_CHALLENGE:	/* a nonce and a MAC */
		return 64;
	case MSG_BLOCK:
		return PROTO_MAX_BLOCK;
	default:
		return 0;
	}
}

const char *
proto_transport_name(enum proto_transport t)
{
	switch (t) {
	case TRANSPORT_TCP:
		return "tcp";
	case TRANSPORT_VERBS:
		return "verbs";
	default:
		return "auto";
	}
}

const char *
proto_type_name(uint8_t type)
{
	static const char *const names[] = {
		[MSG_JOB] = "JOB", [MSG_ACCEPT] = "ACCEPT",
		[MSG_REFUSE] = "REFUSE", [MSG_START] = "START",
		[MSG_CRC] = "CRC", [MSG_COMPLETE] = "COMPLETE",
		[MSG_FAIL] = "FAIL", [MSG_ABORT] = "ABORT",
		[MSG_AUTH] = "AUTH", [MSG_CHALLENGE] = "CHALLENGE",
		[MSG_PROOF] = "PROOF", [MSG_PROGRESS] = "PROGRESS",
		[MSG_HAVE] = "HAVE", [MSG_REPLACE] = "REPLACE",
		[MSG_QUERY] = "QUERY", [MSG_OUTCOME] = "OUTCOME",
		[MSG_TRACE] = "TRACE", [MSG_DIGESTS] = "DIGESTS",
		[MSG_HELLO] = "HELLO", [MSG_SIGNAL] = "SIGNAL",
		[MSG_BLOCK] = "BLOCK", [MSG_NOP] = "NOP",
	};

	if (type < sizeof(names) / sizeof(names[0]) && names[type] != NULL)
		return names[type];
	return "UNKNOWN";
}

/* ---------------------------------------------------------------------
 * Job
 */

int
job_encode(const struct job *job, struct wbuf *w)
{
	uint32_t i;

	wput_bytes(w, job->token, PROTO_TOKEN_LEN);
	wput_u32(w, (uint32_t)job->alg);
	wput_u32(w, job->flags);
	wput_u32(w, job->block_size);
	wput_u32(w, job->timeout_ms);
	wput_u32(w, job->window);
	wput_u64(w, job->bwlimit);
	wput_u8(w, (uint8_t)job->transport);
	wput_str(w, job->origin != NULL ? job->origin : "");
	wput_u32(w, job->nfiles);
	for (i = 0; i < job->nfiles; i++) {
		const struct job_file *f = &job->files[i];

		wput_str(w, f->path);
		wput_u8(w, f->type == JF_DIR && f->place ? JF_PLACE : f->type);
		wput_u64(w, f->size);
		wput_u32(w, f->mode);
		wput_u64(w, (uint64_t)f->mtime_sec);
		wput_u32(w, f->mtime_nsec);
		wput_u32(w, f->uid);
		wput_u32(w, f->gid);
		if (f->type == JF_LINK)
			wput_str(w, f->target != NULL ? f->target : "");
	}
	return w->err;
}

uint64_t
job_blocks(const struct job *job)
{
	return (job->total + job->block_size - 1) / job->block_size;
}

/* What each PROGRESS costs the sender's link: the ACK it returns (66
 * bytes with Ethernet, IP and TCP headers), among the data it sends; the
 * period grows with the group so that those ACKs keep to a 1/400th share
 * of the link (figures: docs/performance.md, its constants). */
#define PROGRESS_MS 200u
#define PROGRESS_ACK_BYTES 66u
#define PROGRESS_LINK_SHARE 400u
#define PROGRESS_MAX_MS 2000u

uint64_t
proto_progress_every_ms(uint32_t n, uint64_t block_size, uint32_t bt_us)
{
	uint64_t every = n > PROGRESS_MS ? n : PROGRESS_MS;
	double share;

	if (bt_us == 0 || bt_us >= PROTO_BT_SHARED || block_size == 0 ||
	    n < 2)
		return every;
	/* (n - 1) ACKs per period, at block_size bytes per bt_us */
	share = (double)(n - 1) * PROGRESS_ACK_BYTES * PROGRESS_LINK_SHARE *
		bt_us / ((double)block_size * 1000);
	if (share > PROGRESS_MAX_MS)
		share = PROGRESS_MAX_MS;
	return share > (double)every ? (uint64_t)share : every;
}

void
job_free(struct job *job)
{
	uint32_t i;

	if (job == NULL)
		return;
	for (i = 0; i < job->nfiles && job->files != NULL; i++) {
		free(job->files[i].path);
		free(job->files[i].target);
	}
	free(job->files);
	free(job->origin);
	free(job);
}

static int
job_decode_header(struct rbuf *r, struct job *job, struct rd_err *err)
{
	uint32_t alg;
	uint8_t transport;

	rget_bytes(r, job->token, PROTO_TOKEN_LEN);
	rget_u32(r, &alg);
	rget_u32(r, &job->flags);
	rget_u32(r, &job->block_size);
	rget_u32(r, &job->timeout_ms);
	rget_u32(r, &job->window);
	rget_u64(r, &job->bwlimit);
	rget_u8(r, &transport);
	if (rget_str(r, PROTO_MAX_TEXT, &job->origin) < 0 ||
	    rget_u32(r, &job->nfiles) < 0)
		return rd_errf(err, -EBADMSG, "truncated job header");
	if (alg >= SCHED_NALG)
		return rd_errf(err, -EBADMSG, "unknown algorithm %u", alg);
	job->alg = (enum sched_alg)alg;
	if (job->flags & ~JOB_FLAGS_KNOWN)
		return rd_errf(err, -EBADMSG, "unknown job flags 0x%x",
			       job->flags);
	if (job->block_size < PROTO_MIN_BLOCK ||
	    job->block_size > PROTO_MAX_BLOCK)
		return rd_errf(err, -EBADMSG, "block size %u out of range",
			       job->block_size);
	if (job->timeout_ms == 0 || job->timeout_ms > PROTO_MAX_TIMEOUT_MS)
		return rd_errf(err, -EBADMSG, "timeout %u ms out of range",
			       job->timeout_ms);
	if (job->window == 0 || job->window > PROTO_MAX_WINDOW)
		return rd_errf(err, -EBADMSG, "window %u out of range",
			       job->window);
	if (transport > TRANSPORT_AUTO)
		return rd_errf(err, -EBADMSG, "unknown transport %u",
			       transport);
	job->transport = (enum proto_transport)transport;
	if (job->nfiles > PROTO_MAX_FILES ||
	    job->nfiles > (r->len - r->off) / JOB_MIN_ENTRY)
		return rd_errf(err, -EBADMSG, "bad file count %u",
			       job->nfiles);
	return 0;
}

static int
job_decode_entry(struct rbuf *r, struct job_file *f, struct rd_err *err)
{
	uint64_t sec;

	if (rget_str(r, PROTO_MAX_PATH, &f->path) < 0 ||
	    rget_u8(r, &f->type) < 0 || rget_u64(r, &f->size) < 0 ||
	    rget_u32(r, &f->mode) < 0 || rget_u64(r, &sec) < 0 ||
	    rget_u32(r, &f->mtime_nsec) < 0 || rget_u32(r, &f->uid) < 0 ||
	    rget_u32(r, &f->gid) < 0)
		return rd_errf(err, -EBADMSG, "truncated file entry");
	f->mtime_sec = (int64_t)sec;
	if (f->type == JF_PLACE) {
		f->type = JF_DIR;
		f->place = true;
	}
	if (f->type == JF_LINK &&
	    (rget_str(r, PROTO_MAX_PATH, &f->target) < 0 ||
	     f->target[0] == '\0'))
		return rd_errf(err, -EBADMSG, "bad symbolic link entry");
	return 0;
}

static int
job_decode_file(struct rbuf *r, struct job_file *f, uint64_t *total,
		struct rd_err *err)
{
	int rc = job_decode_entry(r, f, err);

	if (rc < 0)
		return rc;
	if (f->path[0] != '/')
		return rd_errf(err, -EBADMSG, "destination '%s' is not "
			       "absolute", f->path);
	if (f->type > JF_LINK)
		return rd_errf(err, -EBADMSG, "unknown entry type %u",
			       f->type);
	if (f->type != JF_FILE && f->size != 0)
		return rd_errf(err, -EBADMSG, "%s has a size but is not a "
			       "file", f->path);
	if (f->mode & ~07777u)
		return rd_errf(err, -EBADMSG, "bad mode %o", f->mode);
	if (f->mtime_nsec >= 1000000000u)
		return rd_errf(err, -EBADMSG, "bad time stamp");
	if (f->size > (UINT64_MAX >> 2) - *total)
		return rd_errf(err, -EBADMSG, "total size overflows");
	*total += f->size;
	return 0;
}

int
job_decode(const uint8_t *body, size_t len, struct job **out,
	   struct rd_err *err)
{
	struct job *job;
	struct rbuf r;
	uint32_t i;
	int rc;

	*out = NULL;
	job = calloc(1, sizeof(*job));
	if (job == NULL)
		return -ENOMEM;
	rbuf_init(&r, body, len);
	rc = job_decode_header(&r, job, err);
	if (rc < 0)
		goto out;
	job->files = calloc(job->nfiles ? job->nfiles : 1,
			    sizeof(*job->files));
	rc = -ENOMEM;
	if (job->files == NULL)
		goto out;
	for (i = 0; i < job->nfiles; i++) {
		rc = job_decode_file(&r, &job->files[i], &job->total, err);
		if (rc < 0)
			goto out;
	}
	rc = rbuf_done(&r);
	if (rc < 0) {
		rd_errf(err, rc, "trailing bytes after job");
		goto out;
	}
	*out = job;
	job = NULL;
out:
	job_free(job);
	return rc;
}

/* ---------------------------------------------------------------------
 * Roster (START body)
 */

static void
put_addr(struct wbuf *w, const struct sockaddr_storage *ss)
{
	const struct sockaddr_in *in4 = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
	uint8_t zero[16] = { 0 };

	if (ss->ss_family == AF_INET) {
		wput_u8(w, 4);
		wput_bytes(w, &in4->sin_addr, 4);
		wput_bytes(w, zero, 12);
		wput_u16(w, ntohs(in4->sin_port));
	} else if (ss->ss_family == AF_INET6) {
		wput_u8(w, 6);
		wput_bytes(w, &in6->sin6_addr, 16);
		wput_u16(w, ntohs(in6->sin6_port));
	} else {
		wput_u8(w, 0);
		wput_bytes(w, zero, 16);
		wput_u16(w, 0);
	}
}

static int
get_addr(struct rbuf *r, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	uint8_t fam, raw[16];
	uint16_t port;

	memset(ss, 0, sizeof(*ss));
	if (rget_u8(r, &fam) < 0 || rget_bytes(r, raw, 16) < 0 ||
	    rget_u16(r, &port) < 0)
		return -EBADMSG;
	if (fam == 4) {
		in4->sin_family = AF_INET;
		memcpy(&in4->sin_addr, raw, 4);
		in4->sin_port = htons(port);
	} else if (fam == 6) {
		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, raw, 16);
		in6->sin6_port = htons(port);
	} else if (fam != 0) {
		return -EBADMSG;
	}
	return 0;
}

#define ROSTER_HEAD 13		/* rank, n, transport, peers */
#define ROSTER_ENTRY 25		/* rank, family, address, port, rdma port */

/* A member's lacks: a flag, and a set unless it lacks all. */
static void
put_lacks(struct wbuf *w, const struct bset *lacks)
{
	wput_u8(w, lacks != NULL);
	if (lacks != NULL)
		bset_encode(lacks, w);
}

int
roster_encode(const struct roster *ro, struct wbuf *w)
{
	uint32_t i;

	wput_u32(w, ro->rank);
	wput_u32(w, ro->n);
	wput_u8(w, (uint8_t)ro->transport);
	wput_u32(w, ro->npeers);
	for (i = 0; i < ro->npeers; i++) {
		wput_u32(w, ro->peers[i].rank);
		put_addr(w, &ro->peers[i].addr);
		wput_u16(w, ro->peers[i].rdma_port);
	}
	wput_u32(w, ro->nracks >= 2 ? ro->nracks : 0);
	for (i = 0; ro->nracks >= 2 && i < ro->nracks; i++)
		wput_u32(w, ro->racks[i]);
	wput_u8(w, ro->map != NULL);
	if (ro->map != NULL)
		bset_encode(ro->map, w);
	wput_u8(w, ro->has_lacks);
	if (ro->has_lacks) {
		put_lacks(w, ro->lacks);
		for (i = 0; i < ro->npeers; i++)
			put_lacks(w, ro->peers[i].lacks);
	}
	return w->err;
}

/* Neighbour i of a roster being decoded: a rank of the group, above the
 * one before, never the member's own, with an address unless rank 0. */
static int
get_peer(struct rbuf *r, const struct roster *ro, uint32_t i)
{
	struct roster_peer *p = &ro->peers[i];

	if (rget_u32(r, &p->rank) < 0 || get_addr(r, &p->addr) < 0 ||
	    rget_u16(r, &p->rdma_port) < 0 || p->rank >= ro->n ||
	    p->rank == ro->rank || (i > 0 && p->rank <= p[-1].rank) ||
	    (p->rank > 0 && p->addr.ss_family == AF_UNSPEC))
		return -EBADMSG;
	return 0;
}

/* The racks after the peers: none, or 2 .. n sizes, each >= 1, summing
 * to n. */
static int
get_racks(struct rbuf *r, struct roster *ro)
{
	uint64_t sum = 0;
	uint32_t i;

	if (rget_u32(r, &ro->nracks) < 0)
		return -EBADMSG;
	if (ro->nracks == 0)
		return 0;
	if (ro->nracks < 2 || ro->nracks > ro->n ||
	    (r->len - r->off) / 4 < ro->nracks)
		return -EBADMSG;
	ro->racks = calloc(ro->nracks, sizeof(*ro->racks));
	if (ro->racks == NULL)
		return -ENOMEM;
	for (i = 0; i < ro->nracks; i++) {
		if (rget_u32(r, &ro->racks[i]) < 0 || ro->racks[i] == 0)
			return -EBADMSG;
		sum += ro->racks[i];
	}
	return sum == ro->n ? 0 : -EBADMSG;
}

/* The blocks the group carries, after the racks: a flag, and a set if
 * not all.  Blocks are bounded by the job, which the member checks. */
static int
get_map(struct rbuf *r, struct roster *ro)
{
	uint8_t has;

	if (rget_u8(r, &has) < 0 || has > 1)
		return -EBADMSG;
	return has ? bset_decode(r, PROTO_MAX_RUNS, UINT64_MAX, &ro->map) : 0;
}

static int
get_lacks(struct rbuf *r, struct bset **lacks)
{
	uint8_t has;

	if (rget_u8(r, &has) < 0 || has > 1)
		return -EBADMSG;
	return has ? bset_decode(r, PROTO_MAX_RUNS, UINT64_MAX, lacks) : 0;
}

/* After the map: a flag, and if set, what the member lacks and what each
 * peer does, in the peers' order. */
static int
get_all_lacks(struct rbuf *r, struct roster *ro)
{
	uint8_t has;
	uint32_t i;
	int rc;

	if (rget_u8(r, &has) < 0 || has > 1)
		return -EBADMSG;
	ro->has_lacks = has;
	if (!has)
		return 0;
	rc = get_lacks(r, &ro->lacks);
	for (i = 0; rc == 0 && i < ro->npeers; i++)
		rc = get_lacks(r, &ro->peers[i].lacks);
	return rc;
}

int
roster_decode(const uint8_t *body, size_t len, struct roster **out,
	      struct rd_err *err)
{
	struct roster *ro;
	struct rbuf r;
	uint32_t i;
	uint8_t transport;
	int rc = -EBADMSG;

	*out = NULL;
	ro = calloc(1, sizeof(*ro));
	if (ro == NULL)
		return -ENOMEM;
	rbuf_init(&r, body, len);
	if (rget_u32(&r, &ro->rank) < 0 || rget_u32(&r, &ro->n) < 0 ||
	    rget_u8(&r, &transport) < 0 || rget_u32(&r, &ro->npeers) < 0 ||
	    transport > TRANSPORT_VERBS || ro->n < 2 ||
	    ro->n > SCHED_MAX_MEMBERS || ro->rank == 0 ||
	    ro->rank >= ro->n || ro->npeers >= ro->n ||
	    len < ROSTER_HEAD + (size_t)ro->npeers * ROSTER_ENTRY)
		goto out;
	ro->transport = (enum proto_transport)transport;
	ro->peers = calloc(ro->npeers ? ro->npeers : 1, sizeof(*ro->peers));
	rc = -ENOMEM;
	if (ro->peers == NULL)
		goto out;
	rc = 0;
	for (i = 0; i < ro->npeers && rc == 0; i++)
		rc = get_peer(&r, ro, i);
	if (rc == 0)
		rc = get_racks(&r, ro);
	if (rc == 0)
		rc = get_map(&r, ro);
	if (rc == 0)
		rc = get_all_lacks(&r, ro);
	if (rc == 0)
		rc = rbuf_done(&r);
	if (rc < 0)
		goto out;
	*out = ro;
	ro = NULL;
out:
	if (rc < 0)
		rd_errf(err, rc, "bad member list");
	roster_free(ro);
	return rc;
}

const struct roster_peer *
roster_peer(const struct roster *ro, uint32_t rank)
{
	uint32_t lo = 0, hi = ro->npeers, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (ro->peers[mid].rank == rank)
			return &ro->peers[mid];
		if (ro->peers[mid].rank < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void
roster_free(struct roster *ro)
{
	uint32_t i;

	if (ro == NULL)
		return;
	bset_free(ro->map);
	bset_free(ro->lacks);
	for (i = 0; ro->peers != NULL && i < ro->npeers; i++)
		bset_free(ro->peers[i].lacks);
	free(ro->racks);
	free(ro->peers);
	free(ro);
}

int
hello_encode(const struct hello *h, struct wbuf *w)
{
	wput_bytes(w, h->token, PROTO_TOKEN_LEN);
	wput_u32(w, h->from);
	wput_u32(w, h->to);
	return w->err;
}

int
hello_decode(const uint8_t *body, size_t len, struct hello *h)
{
	struct rbuf r;

	rbuf_init(&r, body, len);
	rget_bytes(&r, h->token, PROTO_TOKEN_LEN);
	rget_u32(&r, &h->from);
	rget_u32(&r, &h->to);
	if (rbuf_done(&r) < 0 || h->from >= h->to ||
	    h->to >= SCHED_MAX_MEMBERS)
		return -EBADMSG;
	return 0;
}

_Static_assert(sizeof(struct proto_sum) == PROTO_DIGEST_LEN,
	       "a sum goes on the wire as it is");

int
replace_encode(const struct proto_sum *sums, uint32_t n, struct wbuf *w)
{
	wput_bytes(w, sums, (size_t)n * sizeof(*sums));
	return w->err;
}

int
replace_decode(const uint8_t *body, size_t len, uint32_t n,
	       struct proto_sum *sums)
{
	if (len != (uint64_t)n * sizeof(*sums))
		return -EBADMSG;
	if (len > 0)
		memcpy(sums, body, len);
	return 0;
}
