/* SPDX-License-Identifier: MIT */
/*
 * Wire encoding and decoding: frame headers, jobs, member lists, hellos
 * round-trip exactly; truncated, oversized and malformed input is refused
 * with an error, never read past its end.
 */
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "util/net.h"
#include "proto/proto.h"
#include "proto/trace.h"
#include "util/wire.h"

static struct job *
sample_job(uint32_t nfiles)
{
	struct job *job = calloc(1, sizeof(*job));
	uint32_t i;

	for (i = 0; i < PROTO_TOKEN_LEN; i++)
		job->token[i] = (uint8_t)(i * 17 + 3);
	job->alg = SCHED_TREE;
	job->flags = JOB_VERIFY | JOB_FORCE;
	job->block_size = 1u << 20;
	job->timeout_ms = 30000;
	job->window = 16;
	job->transport = TRANSPORT_AUTO;
	job->origin = strdup("sender.example");
	job->nfiles = nfiles;
	job->files = calloc(nfiles ? nfiles : 1, sizeof(*job->files));
	for (i = 0; i < nfiles; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/data/file-%u", i);
		job->files[i].path = strdup(path);
		job->files[i].size = i == 1 ? (5ull << 30) + 7 : i * 1000ull;
		job->files[i].mode = i == 0 ? 0755 : 0640;
		job->files[i].mtime_sec = -86400 + (int64_t)i * 1000000007;
		job->files[i].mtime_nsec = i * 333333333u;
		job->files[i].uid = 1000 + i;
		job->files[i].gid = UINT32_MAX - i;
	}
	return job;
}

START_TEST(frame_round_trip)
{
	struct frame f = { .type = MSG_BLOCK, .arg = 0xdeadbeef,
			   .val = 0x0123456789abcdefull, .len = 1ull << 33 };
	struct frame g;
	uint8_t buf[PROTO_FRAME_LEN];

	frame_encode(&f, buf);
	ck_assert_int_eq(frame_decode(buf, &g), 0);
	ck_assert_uint_eq(g.type, f.type);
	ck_assert_uint_eq(g.arg, f.arg);
	ck_assert_uint_eq(g.val, f.val);
	ck_assert_uint_eq(g.len, f.len);
	buf[1] = PROTO_VERSION + 1;	/* another version */
	ck_assert_int_eq(frame_decode(buf, &g), -EPROTO);
	buf[1] = PROTO_VERSION;
	buf[3] = 1;			/* reserved bits */
	ck_assert_int_eq(frame_decode(buf, &g), -EPROTO);
}
END_TEST

START_TEST(job_round_trip)
{
	struct job *job = sample_job(3), *back;
	struct rd_err err = { 0 };
	struct wbuf w;
	uint32_t i;

	wbuf_init(&w);
	ck_assert_int_eq(job_encode(job, &w), 0);
	ck_assert_int_eq(job_decode(w.data, w.len, &back, &err), 0);
	ck_assert_mem_eq(back->token, job->token, PROTO_TOKEN_LEN);
	ck_assert_int_eq(back->alg, SCHED_TREE);
	ck_assert_uint_eq(back->flags, JOB_VERIFY | JOB_FORCE);
	ck_assert_uint_eq(back->block_size, 1u << 20);
	ck_assert_uint_eq(back->timeout_ms, 30000);
	ck_assert_uint_eq(back->window, 16);
	ck_assert_int_eq(back->transport, TRANSPORT_AUTO);
	ck_assert_str_eq(back->origin, "sender.example");
	ck_assert_uint_eq(back->nfiles, 3);
	for (i = 0; i < 3; i++) {
		ck_assert_str_eq(back->files[i].path, job->files[i].path);
		ck_assert_uint_eq(back->files[i].size, job->files[i].size);
		ck_assert_uint_eq(back->files[i].mode, job->files[i].mode);
		ck_assert_int_eq(back->files[i].mtime_sec,
				 job->files[i].mtime_sec);
		ck_assert_uint_eq(back->files[i].mtime_nsec,
				  job->files[i].mtime_nsec);
		ck_assert_uint_eq(back->files[i].type, JF_FILE);
		ck_assert_uint_eq(back->files[i].uid, 1000 + i);
		ck_assert_uint_eq(back->files[i].gid, UINT32_MAX - i);
	}
	ck_assert_uint_eq(back->total, (5ull << 30) + 7 + 2000);
	ck_assert_uint_eq(job_blocks(back), (back->total + (1u << 20) - 1) >>
						    20);
	job_free(back);
	job_free(job);
	wbuf_free(&w);
	job_free(NULL);
}
END_TEST

START_TEST(job_empty)
{
	struct job *job = sample_job(0), *back;
	struct wbuf w;

	wbuf_init(&w);
	ck_assert_int_eq(job_encode(job, &w), 0);
	ck_assert_int_eq(job_decode(w.data, w.len, &back, NULL), 0);
	ck_assert_uint_eq(back->nfiles, 0);
	ck_assert_uint_eq(back->total, 0);
	ck_assert_uint_eq(job_blocks(back), 0);
	job_free(back);
	job_free(job);
	wbuf_free(&w);
}
END_TEST

/* Every proper prefix of a valid job is refused, as is trailing junk. */
START_TEST(job_truncated)
{
	struct job *job = sample_job(4), *back;
	struct wbuf w;
	size_t cut;

	wbuf_init(&w);
	job_encode(job, &w);
	for (cut = 0; cut < w.len; cut++) {
		back = (struct job *)1;
		ck_assert_int_lt(job_decode(w.data, cut, &back, NULL), 0);
		ck_assert_ptr_null(back);
	}
	wput_u8(&w, 0);
	ck_assert_int_lt(job_decode(w.data, w.len, &back, NULL), 0);
	job_free(job);
	wbuf_free(&w);
}
END_TEST

/* Encode a job after `mutate` breaks it, expect a refusal naming `what`. */
static void
expect_refused(void (*mutate)(struct job *), const char *what)
{
	struct job *job = sample_job(2), *back;
	struct rd_err err = { 0 };
	struct wbuf w;

	mutate(job);
	wbuf_init(&w);
	job_encode(job, &w);
	ck_assert_int_lt(job_decode(w.data, w.len, &back, &err), 0);
	ck_assert_ptr_null(back);
	ck_assert_msg(strstr(err.msg, what) != NULL, "'%s' lacks '%s'",
		      err.msg, what);
	job_free(job);
	wbuf_free(&w);
}

static void bad_alg(struct job *j) { j->alg = (enum sched_alg)9; }
static void bad_flags(struct job *j) { j->flags = JOB_FLAGS_KNOWN + 1; }
static void tiny_block(struct job *j) { j->block_size = 1; }
static void huge_block(struct job *j) { j->block_size = 0x7fffffff; }
static void no_timeout(struct job *j) { j->timeout_ms = 0; }
static void no_window(struct job *j) { j->window = 0; }
static void huge_window(struct job *j) { j->window = 100000; }
static void bad_transport(struct job *j) { j->transport = 7; }
static void bad_mode(struct job *j) { j->files[1].mode = 0170000; }
static void relative(struct job *j)
{
	free(j->files[0].path);
	j->files[0].path = strdup("etc/passwd");
}
static void bad_type(struct job *j) { j->files[1].type = JF_PLACE + 1; }
static void dir_with_size(struct job *j) { j->files[1].type = JF_DIR; }
static void bad_nsec(struct job *j) { j->files[0].mtime_nsec = 1000000000; }
static void empty_link(struct job *j)
{
	j->files[0].type = JF_LINK;
	j->files[0].size = 0;
	j->files[0].target = strdup("");
}
static void overflow(struct job *j)
{
	j->files[0].size = UINT64_MAX / 3;
	j->files[1].size = UINT64_MAX / 3;
}

START_TEST(job_malformed)
{
	expect_refused(bad_alg, "algorithm");
	expect_refused(bad_flags, "flags");
	expect_refused(tiny_block, "block size");
	expect_refused(huge_block, "block size");
	expect_refused(no_timeout, "timeout");
	expect_refused(no_window, "window");
	expect_refused(huge_window, "window");
	expect_refused(bad_transport, "transport");
	expect_refused(bad_mode, "mode");
	expect_refused(relative, "not absolute");
	expect_refused(overflow, "overflows");
	expect_refused(bad_type, "entry type");
	expect_refused(dir_with_size, "not a file");
	expect_refused(bad_nsec, "time stamp");
	expect_refused(empty_link, "symbolic link");
}
END_TEST

START_TEST(job_links_and_dirs)
{
	struct job *job = sample_job(4), *back = NULL;
	struct rd_err err = { 0 };
	struct wbuf w;

	job->files[1].type = JF_DIR;
	job->files[1].size = 0;
	job->files[3].type = JF_DIR;	/* -d DIR/: JF_PLACE on the wire */
	job->files[3].size = 0;
	job->files[3].place = true;
	job->files[2].type = JF_LINK;
	job->files[2].size = 0;
	job->files[2].target = strdup("../somewhere/else");
	wbuf_init(&w);
	ck_assert_int_eq(job_encode(job, &w), 0);
	ck_assert_int_eq(job_decode(w.data, w.len, &back, &err), 0);
	ck_assert_uint_eq(back->files[1].type, JF_DIR);
	ck_assert(!back->files[1].place);
	ck_assert_uint_eq(back->files[3].type, JF_DIR);
	ck_assert(back->files[3].place);
	ck_assert_uint_eq(back->files[2].type, JF_LINK);
	ck_assert_str_eq(back->files[2].target, "../somewhere/else");
	ck_assert_ptr_null(back->files[0].target);
	ck_assert_uint_eq(back->total, 0);
	wbuf_free(&w);
	job_free(back);
	job_free(job);
}
END_TEST

START_TEST(job_hostile_counts)
{
	struct job *job = sample_job(0), *back;
	struct wbuf w;

	/* a file count far beyond what the bytes can hold */
	job->nfiles = 0;
	wbuf_init(&w);
	job_encode(job, &w);
	be_put32(w.data + w.len - 4, 0xffffffff);
	ck_assert_int_lt(job_decode(w.data, w.len, &back, NULL), 0);
	/* a string length beyond the end of the buffer */
	wbuf_free(&w);
	wbuf_init(&w);
	job->nfiles = 1;
	job->files = realloc(job->files, sizeof(*job->files));
	memset(job->files, 0, sizeof(*job->files));
	job->files[0].path = strdup("/x");
	job->files[0].size = 1;
	job->files[0].mode = 0644;
	job_encode(job, &w);
	/* the path length field sits 4 + 2 bytes (the path) + 1 (type) + 8
	 * (size) + 4 (mode) + 12 (time) + 8 (owner) from the end */
	ck_assert_int_eq(be_get32(w.data + w.len - 39), 2);
	be_put32(w.data + w.len - 39, 0x7fffffff);
	ck_assert_int_lt(job_decode(w.data, w.len, &back, NULL), 0);
	job_free(job);
	wbuf_free(&w);
}
END_TEST

START_TEST(roster_round_trip)
{
	struct roster_peer peers[3] = {
		{ .rank = 0 }, { .rank = 1, .rdma_port = 18515 },
		{ .rank = 6, .rdma_port = 65535 },
	};
	struct roster ro = { .rank = 2, .n = 7, .peers = peers, .npeers = 3,
			     .transport = TRANSPORT_VERBS }, *back;
	struct wbuf w;
	size_t cut;

	net_parse_numeric("198.18.0.2", 7471, &peers[1].addr);
	net_parse_numeric("fd00::5", 9, &peers[2].addr);
	wbuf_init(&w);
	ck_assert_int_eq(roster_encode(&ro, &w), 0);
	ck_assert_int_eq(roster_decode(w.data, w.len, &back, NULL), 0);
	ck_assert_uint_eq(back->rank, 2);
	ck_assert_uint_eq(back->n, 7);
	ck_assert_int_eq(back->transport, TRANSPORT_VERBS);
	ck_assert_uint_eq(back->npeers, 3);
	ck_assert_int_eq(roster_peer(back, 0)->addr.ss_family, AF_UNSPEC);
	for (cut = 1; cut < 3; cut++) {
		ck_assert(net_equal(&roster_peer(back, peers[cut].rank)->addr,
				    &peers[cut].addr));
		ck_assert_uint_eq(roster_peer(back, peers[cut].rank)->rdma_port,
				  peers[cut].rdma_port);
	}
	ck_assert_ptr_null(roster_peer(back, 3));
	roster_free(back);
	for (cut = 0; cut < w.len; cut++)
		ck_assert_int_lt(roster_decode(w.data, cut, &back, NULL), 0);
	/* rank 0 is the sender, never a receiving member */
	be_put32(w.data, 0);
	ck_assert_int_lt(roster_decode(w.data, w.len, &back, NULL), 0);
	/* a member other than rank 0 without an address */
	be_put32(w.data, 2);
	w.data[13 + 25 + 4] = 0;
	ck_assert_int_lt(roster_decode(w.data, w.len, &back, NULL), 0);
	/* neighbours out of order, or the member itself */
	net_parse_numeric("198.18.0.9", 1, &peers[0].addr);
	peers[0].rank = 2;
	w.len = 0;
	ck_assert_int_eq(roster_encode(&ro, &w), 0);
	ck_assert_int_lt(roster_decode(w.data, w.len, &back, NULL), 0);
	wbuf_free(&w);
	roster_free(NULL);
}
END_TEST

/* The racks after the peers (--topology): kept, and checked. */
START_TEST(roster_racks)
{
	struct roster_peer peers[1] = { { .rank = 0 } };
	uint32_t racks[3] = { 3, 4, 0 };
	struct roster ro = { .rank = 2, .n = 7, .peers = peers, .npeers = 1,
			     .nracks = 2, .racks = racks }, *back;
	struct wbuf w;
	size_t cut, full;

	wbuf_init(&w);
	ck_assert_int_eq(roster_encode(&ro, &w), 0);
	ck_assert_int_eq(roster_decode(w.data, w.len, &back, NULL), 0);
	ck_assert_uint_eq(back->nracks, 2);
	ck_assert_uint_eq(back->racks[0], 3);
	ck_assert_uint_eq(back->racks[1], 4);
	roster_free(back);
	full = w.len;
	for (cut = 13 + 25 + 1; cut < full; cut++)	/* a cut tail */
		ck_assert_int_lt(roster_decode(w.data, cut, &back, NULL), 0);
	racks[1] = 5;		/* sizes that do not sum to n */
	w.len = 0;
	ck_assert_int_eq(roster_encode(&ro, &w), 0);
	ck_assert_int_lt(roster_decode(w.data, w.len, &back, NULL), 0);
	racks[0] = 0;		/* an empty rack */
	racks[1] = 7;
	w.len = 0;
	ck_assert_int_eq(roster_encode(&ro, &w), 0);
	ck_assert_int_lt(roster_decode(w.data, w.len, &back, NULL), 0);
	racks[0] = 7;		/* one rack is none: a count of 0, and no map */
	ro.nracks = 1;
	w.len = 0;
	ck_assert_int_eq(roster_encode(&ro, &w), 0);
	ck_assert_uint_eq(w.len, 13 + 25 + 4 + 1 + 1);
	ck_assert_int_eq(roster_decode(w.data, w.len, &back, NULL), 0);
	ck_assert_uint_eq(back->nracks, 0);
	roster_free(back);
	wbuf_free(&w);
}
END_TEST

/* The blocks a group carries (a delta): kept, and checked. */
START_TEST(roster_map)
{
	struct roster_peer peers[1] = { { .rank = 0 } };
	struct roster ro = { .rank = 1, .n = 2, .peers = peers, .npeers = 1 },
		      *back;
	struct wbuf w;
	size_t cut;

	ck_assert_int_eq(bset_new(&ro.map), 0);
	ck_assert_int_eq(bset_add(ro.map, 3, 2), 0);
	ck_assert_int_eq(bset_add(ro.map, 9, 1), 0);
	wbuf_init(&w);
	ck_assert_int_eq(roster_encode(&ro, &w), 0);
	ck_assert_int_eq(roster_decode(w.data, w.len, &back, NULL), 0);
	ck_assert_ptr_nonnull(back->map);
	ck_assert_uint_eq(bset_count(back->map), 3);
	ck_assert_uint_eq(bset_nth(back->map, 2), 9);
	roster_free(back);
	for (cut = 13 + 25; cut < w.len; cut++)	/* a cut tail */
		ck_assert_int_lt(roster_decode(w.data, cut, &back, NULL), 0);
	w.data[13 + 25 + 4] = 2;	/* a flag that is neither 0 nor 1 */
	ck_assert_int_lt(roster_decode(w.data, w.len, &back, NULL), 0);
	w.data[13 + 25 + 4] = 1;
	w.data[w.len - 2] = 0;		/* an empty run (then no lacks) */
	ck_assert_int_lt(roster_decode(w.data, w.len, &back, NULL), 0);
	wbuf_free(&w);
	bset_free(ro.map);
}
END_TEST

/* What each member lacks (a resumed push): the member's own and each
 * peer's, kept apart, NULL for one that lacks all; checked. */
START_TEST(roster_lacks)
{
	struct roster_peer peers[2] = { { .rank = 0 }, { .rank = 2 } };
	struct roster ro = { .rank = 1, .n = 3, .peers = peers, .npeers = 2,
			     .has_lacks = true },
		      *back;
	struct wbuf w;
	size_t cut, full;

	peers[1].addr.ss_family = AF_INET;
	ck_assert_int_eq(bset_new(&ro.lacks), 0);
	ck_assert_int_eq(bset_add(ro.lacks, 4, 3), 0);
	ck_assert_int_eq(bset_new(&peers[1].lacks), 0);
	ck_assert_int_eq(bset_add(peers[1].lacks, 0, 9), 0);
	wbuf_init(&w);
	ck_assert_int_eq(roster_encode(&ro, &w), 0);
	ck_assert_int_eq(roster_decode(w.data, w.len, &back, NULL), 0);
	ck_assert(back->has_lacks);
	ck_assert_uint_eq(bset_count(back->lacks), 3);
	ck_assert(bset_has(back->lacks, 6) && !bset_has(back->lacks, 7));
	ck_assert_ptr_null(back->peers[0].lacks);	/* the sender */
	ck_assert_uint_eq(bset_count(back->peers[1].lacks), 9);
	roster_free(back);
	full = w.len;
	for (cut = 13 + 2 * 25 + 4 + 1; cut < full; cut++)
		ck_assert_int_lt(roster_decode(w.data, cut, &back, NULL), 0);
	w.data[13 + 2 * 25 + 4 + 1] = 2;	/* neither 0 nor 1 */
	ck_assert_int_lt(roster_decode(w.data, w.len, &back, NULL), 0);
	w.data[13 + 2 * 25 + 4 + 1] = 0;	/* none: a tail left over */
	ck_assert_int_lt(roster_decode(w.data, w.len, &back, NULL), 0);
	wbuf_free(&w);
	bset_free(ro.lacks);
	bset_free(peers[1].lacks);
}
END_TEST

/* REPLACE carries one whole-file sum of 16 bytes per entry, as they
 * are; a body of another length is refused. */
START_TEST(replace_round_trip)
{
	struct proto_sum in[3], out[3];
	struct wbuf w;
	size_t i;

	for (i = 0; i < sizeof(in); i++)
		((uint8_t *)in)[i] = (uint8_t)(i * 7 + 1);
	wbuf_init(&w);
	ck_assert_int_eq(replace_encode(in, 3, &w), 0);
	ck_assert_uint_eq(w.len, 3 * PROTO_DIGEST_LEN);
	ck_assert_int_eq(replace_decode(w.data, w.len, 3, out), 0);
	ck_assert_mem_eq(in, out, sizeof(in));
	ck_assert_int_eq(replace_decode(w.data, w.len - 1, 3, out), -EBADMSG);
	ck_assert_int_eq(replace_decode(w.data, w.len, 2, out), -EBADMSG);
	ck_assert_int_eq(replace_decode(w.data, 3 * 4, 3, out), -EBADMSG);
	wbuf_free(&w);
}
END_TEST

START_TEST(hello_round_trip)
{
	struct hello h = { .from = 3, .to = 7 }, g;
	struct wbuf w;

	memset(h.token, 0xab, sizeof(h.token));
	wbuf_init(&w);
	hello_encode(&h, &w);
	ck_assert_int_eq(hello_decode(w.data, w.len, &g), 0);
	ck_assert_mem_eq(g.token, h.token, PROTO_TOKEN_LEN);
	ck_assert_uint_eq(g.from, 3);
	ck_assert_uint_eq(g.to, 7);
	ck_assert_int_lt(hello_decode(w.data, w.len - 1, &g), 0);
	/* data connections go from lower to higher rank only */
	be_put32(w.data + PROTO_TOKEN_LEN, 9);
	ck_assert_int_lt(hello_decode(w.data, w.len, &g), 0);
	wbuf_free(&w);
}
END_TEST

START_TEST(strings_bounded)
{
	struct rbuf r;
	struct wbuf w;
	char *s;

	wbuf_init(&w);
	wput_str(&w, "hello");
	rbuf_init(&r, w.data, w.len);
	ck_assert_int_eq(rget_str(&r, 4, &s), -EBADMSG);	/* too long */
	ck_assert_ptr_null(s);
	rbuf_init(&r, w.data, w.len);
	ck_assert_int_eq(rget_str(&r, 5, &s), 0);
	ck_assert_str_eq(s, "hello");
	free(s);
	ck_assert_int_eq(rbuf_done(&r), 0);
	w.data[5] = '\0';	/* a NUL inside is refused */
	rbuf_init(&r, w.data, w.len);
	ck_assert_int_eq(rget_str(&r, 100, &s), -EBADMSG);
	wbuf_free(&w);
}
END_TEST

START_TEST(addresses)
{
	char host[64], buf[NET_ADDRSTRLEN];
	struct sockaddr_storage ss;
	uint16_t port;

	ck_assert_int_eq(net_split_hostport("node01", host, sizeof(host),
					    &port, 7471), 0);
	ck_assert_str_eq(host, "node01");
	ck_assert_uint_eq(port, 7471);
	ck_assert_int_eq(net_split_hostport("node01:80", host, sizeof(host),
					    &port, 7471), 0);
	ck_assert_uint_eq(port, 80);
	ck_assert_int_eq(net_split_hostport("[fd00::1]:9000", host,
					    sizeof(host), &port, 1), 0);
	ck_assert_str_eq(host, "fd00::1");
	ck_assert_uint_eq(port, 9000);
	ck_assert_int_eq(net_split_hostport("fd00::1", host, sizeof(host),
					    &port, 5), 0);
	ck_assert_str_eq(host, "fd00::1");
	ck_assert_int_lt(net_split_hostport("node:0", host, sizeof(host),
					    &port, 1), 0);
	ck_assert_int_lt(net_split_hostport("node:70000", host, sizeof(host),
					    &port, 1), 0);
	ck_assert_int_lt(net_split_hostport("[fd00::1", host, sizeof(host),
					    &port, 1), 0);
	ck_assert_int_lt(net_split_hostport(":80", host, sizeof(host), &port,
					    1), 0);
	ck_assert_int_eq(net_parse_numeric("198.18.0.9", 7471, &ss), 0);
	net_format(&ss, buf, sizeof(buf));
	ck_assert_str_eq(buf, "198.18.0.9:7471");
	ck_assert_int_eq(net_parse_numeric("::1", 1, &ss), 0);
	net_format(&ss, buf, sizeof(buf));
	ck_assert_str_eq(buf, "[::1]:1");
	ck_assert_int_lt(net_parse_numeric("node01", 1, &ss), 0);
}
END_TEST

/* The same host whatever the ports; another address or family is not. */
START_TEST(same_host)
{
	struct sockaddr_storage a, b;

	net_parse_numeric("198.18.0.9", 7471, &a);
	net_parse_numeric("198.18.0.9", 9, &b);
	ck_assert(net_same_host((const struct sockaddr *)&a, &b));
	ck_assert(!net_equal(&a, &b));
	net_parse_numeric("198.18.0.10", 7471, &b);
	ck_assert(!net_same_host((const struct sockaddr *)&a, &b));
	net_parse_numeric("::ffff:198.18.0.9", 7471, &b);
	ck_assert(!net_same_host((const struct sockaddr *)&a, &b));
	net_parse_numeric("fd00::5", 1, &a);
	net_parse_numeric("fd00::5", 2, &b);
	ck_assert(net_same_host((const struct sockaddr *)&a, &b));
	ck_assert(!net_same_host(NULL, &b));
}
END_TEST

/* A timeline and its clock sync survive the wire; a body one span short
 * is refused. */
START_TEST(trace_round_trip)
{
	struct trace *t = trace_new(4), *back = NULL;
	struct trace_sync sync;
	struct wbuf w;

	ck_assert_ptr_nonnull(t);
	trace_add(t, TR_RECV, 10, 20, 3, 7);
	trace_add(t, TR_SEND, 20, 30, 4, 7);
	wbuf_init(&w);
	ck_assert_int_eq(trace_encode(t, 111, 222, &w), 0);
	ck_assert_int_eq(trace_decode(w.data, w.len, &sync, &back), 0);
	ck_assert_uint_eq(sync.arrived, 111);
	ck_assert_uint_eq(sync.answered, 222);
	ck_assert_uint_ge(sync.now, 1);
	ck_assert_uint_eq(trace_count(back), 2);
	ck_assert_uint_eq(trace_spans(back)[1].peer, 4);
	ck_assert_uint_eq(trace_spans(back)[1].t1, 30);
	trace_free(back);
	ck_assert_int_eq(trace_decode(w.data, w.len - 1, &sync, &back),
			 -EPROTO);
	ck_assert_ptr_null(back);
	wbuf_free(&w);
	trace_free(t);
}
END_TEST

/* The offset matches the round trip's midpoints: a member 4.9 ms ahead,
 * 100 us away each way, 50 us between JOB and ACCEPT; without a round
 * trip, the sync's transit, error unknown. */
/* PROGRESS's cadence: 200 ms, n ms in large groups, and on slow links
 * as seldom as keeps the sender's ACKs of them at 1/400 of its link. */
START_TEST(progress_cadence)
{
	/* 16 hosts at 200 Mbit/s, 1 MiB blocks: 15.8 ms of ACKs: 200 ms */
	ck_assert_uint_eq(proto_progress_every_ms(16, 1u << 20, 41943), 200);
	/* 64 hosts at 20 Mbit/s, 64 KiB blocks (26.2 ms each): 665 ms */
	ck_assert_uint_eq(proto_progress_every_ms(64, 64u << 10, 26214), 665);
	/* 1,024 members on loopback: every n ms, as before */
	ck_assert_uint_eq(proto_progress_every_ms(1024, 4u << 20, 900), 1024);
	/* 1,024 at 20 Mbit/s would be 10.8 s: every 2 s at least */
	ck_assert_uint_eq(proto_progress_every_ms(1024, 64u << 10, 26214),
			  2000);
	/* block time not known, or shared with other transfers */
	ck_assert_uint_eq(proto_progress_every_ms(64, 64u << 10, 0), 200);
	ck_assert_uint_eq(proto_progress_every_ms(64, 64u << 10,
						  PROTO_BT_SHARED), 200);
	ck_assert_uint_eq(proto_progress_every_ms(64, 64u << 10,
						  PROTO_NO_PEER), 200);
	ck_assert_uint_eq(proto_progress_every_ms(300, 64u << 10, 0), 300);
	ck_assert_uint_eq(proto_progress_every_ms(1, 64u << 10, 26214), 200);
}
END_TEST

START_TEST(trace_clock_offset)
{
	struct trace_sync sync = { .now = 9000, .arrived = 6000,
				   .answered = 6050 };
	uint64_t err = 1;

	ck_assert_int_eq(trace_offset(&sync, 1000, 1250, 5000, &err), -4900);
	ck_assert_uint_eq(err, 100);
	/* slower back than there: the midpoint errs by half the difference,
	 * within the error */
	ck_assert_int_eq(trace_offset(&sync, 1000, 1450, 5000, &err), -4800);
	ck_assert_uint_eq(err, 200);
	ck_assert_int_eq(trace_offset(&sync, 0, 1250, 9300, &err), 300);
	ck_assert_uint_eq(err, 0);
	sync.arrived = 0;
	ck_assert_int_eq(trace_offset(&sync, 1000, 1250, 9300, &err), 300);
	ck_assert_uint_eq(err, 0);
}
END_TEST

static Suite *
proto_suite(void)
{
	Suite *s = suite_create("proto");
	TCase *tc = tcase_create("wire");

	tcase_add_test(tc, frame_round_trip);
	tcase_add_test(tc, job_round_trip);
	tcase_add_test(tc, job_empty);
	tcase_add_test(tc, job_truncated);
	tcase_add_test(tc, job_malformed);
	tcase_add_test(tc, job_links_and_dirs);
	tcase_add_test(tc, job_hostile_counts);
	tcase_add_test(tc, roster_round_trip);
	tcase_add_test(tc, roster_racks);
	tcase_add_test(tc, roster_map);
	tcase_add_test(tc, roster_lacks);
	tcase_add_test(tc, replace_round_trip);
	tcase_add_test(tc, hello_round_trip);
	tcase_add_test(tc, strings_bounded);
	tcase_add_test(tc, addresses);
	tcase_add_test(tc, same_host);
	tcase_add_test(tc, trace_round_trip);
	tcase_add_test(tc, trace_clock_offset);
	tcase_add_test(tc, progress_cadence);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(proto_suite());
}
