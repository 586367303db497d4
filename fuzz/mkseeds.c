/* SPDX-License-Identifier: MIT */
/*
 * mkseeds DIR - write the starting corpora of the fuzz targets, one
 * directory each: DIR/decoders (one valid input per decoder: selector
 * byte, then the encoding), DIR/serve and DIR/push (frame sequences of
 * the handshake and what follows it, honest and not, in the input
 * formats of fuzz_serve.c and fuzz_push.c; scripts: harness.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "util/net.h"
#include "proto/proto.h"
#include "proto/trace.h"
#include "util/wire.h"

static const char *top;

static void
put(const char *sub, const char *name, const uint8_t *pre, size_t npre,
    const void *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", top, sub);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return;
	snprintf(path, sizeof(path), "%s/%s/%s", top, sub, name);
	f = fopen(path, "wb");
	if (f == NULL)
		return;
	fwrite(pre, 1, npre, f);
	fwrite(p, 1, n, f);
	fclose(f);
}

static void
put_decoder(const char *name, uint8_t sel, const void *p, size_t n)
{
	put("decoders", name, &sel, 1, p, n);
}

static void
decoders(void)
{
	struct job_file files[4] = {
		{ .path = (char *)"/a", .type = JF_DIR, .mode = 0755 },
		{ .path = (char *)"/a/b", .size = 5000, .mode = 0755,
		  .mtime_sec = 1000000000, .mtime_nsec = 5 },
		{ .path = (char *)"/a/c", .mode = 0644 },
		{ .path = (char *)"/a/l", .type = JF_LINK, .mode = 0777,
		  .target = (char *)"b" },
	};
	struct job job = { .alg = SCHED_BINOMIAL, .block_size = 1 << 20,
			   .timeout_ms = 30000, .window = 16, .nfiles = 4,
			   .flags = JOB_TIMES,
			   .files = files, .origin = (char *)"seed" };
	struct roster_peer peers[3] = {
		{ .rank = 0 }, { .rank = 2, .rdma_port = 4791 },
		{ .rank = 3, .rdma_port = 4792 },
	};
	struct roster ro = { .rank = 1, .n = 4, .peers = peers, .npeers = 3 };
	struct frame fr = { .type = MSG_JOB, .len = 100 };
	uint8_t hdr[PROTO_FRAME_LEN], hello[PROTO_TOKEN_LEN + 8] = { 0 };
	struct wbuf w;
	const char *hl = "node[01-16,20],rack[1-2]n[1-3]:7000,[::1]:5,10.0.0.1";
	const char *topo = "# racks\nSwitchName=s1 Nodes=node[01-16]\n"
			   "SwitchName=top Switches=s1\ns2: n1,n2.x:7\n";
	const char *js = "a\"b\\\n\x01\xc3\xa9\xff";

	net_parse_numeric("10.0.0.3", 7471, &peers[1].addr);
	net_parse_numeric("fd00::5", 7000, &peers[2].addr);
	frame_encode(&fr, hdr);
	put_decoder("frame", 0, hdr, sizeof(hdr));
	wbuf_init(&w);
	job_encode(&job, &w);
	put_decoder("job", 1, w.data, w.len);
	wbuf_free(&w);
	wbuf_init(&w);
	roster_encode(&ro, &w);
	put_decoder("roster", 2, w.data, w.len);
	wbuf_free(&w);
	hello[PROTO_TOKEN_LEN + 7] = 1;
	put_decoder("hello", 3, hello, sizeof(hello));
	put_decoder("rdma-hello", 4, hello, sizeof(hello));
	put_decoder("hostlist", 5, hl, strlen(hl));
	put_decoder("topology", 6, topo, strlen(topo));
	put_decoder("json", 7, js, strlen(js));
}

/* ---------------------------------------------------------------------
 * Frames
 */

static void
raw_frame(struct wbuf *w, uint8_t type, uint64_t val, const void *body,
	  size_t len)
{
	struct frame f = { .type = type, .val = val, .len = len };
	uint8_t hdr[PROTO_FRAME_LEN];

	frame_encode(&f, hdr);
	wput_bytes(w, hdr, sizeof(hdr));
	wput_bytes(w, body, len);
}

/* A SIGNAL's OFFER of a block (src/engine/engine_int.h: SIG_OFFER in
 * the top byte). */
#define SEED_OFFER (3ull << 56)

/* The block size of the jobs below. */
static uint32_t job_block = 4096;

/* A job of `nfiles` of these entries, with `flags`. */
static void
encode_job(struct wbuf *w, const struct job_file *files, uint32_t nfiles,
	   uint32_t flags, enum proto_transport transport, uint8_t tok)
{
	struct job job = { .alg = SCHED_BINOMIAL, .block_size = job_block,
			   .timeout_ms = 5000, .window = 16, .nfiles = nfiles,
			   .flags = flags, .transport = transport,
			   .files = (struct job_file *)files,
			   .origin = (char *)"seed" };

	memset(job.token, tok, sizeof(job.token));
	job_encode(&job, w);
}

/* Entries that take no block: they land as soon as the go comes. */
static const struct job_file tree[] = {
	{ .path = (char *)"/d", .type = JF_DIR, .mode = 0755 },
	{ .path = (char *)"/d/e", .type = JF_DIR, .mode = 0700 },
	{ .path = (char *)"/d/e/empty", .mode = 0644,
	  .mtime_sec = 1000000000 },
	{ .path = (char *)"/d/l", .type = JF_LINK, .mode = 0777,
	  .target = (char *)"e/empty" },
	{ .path = (char *)"/top", .mode = 04755 },
};

/* A file of 3 blocks (4096 bytes), of 20 (512 bytes), of many, one
 * whose parent is missing. */
static const struct job_file three_blocks[] = {
	{ .path = (char *)"/data", .size = 10000, .mode = 0644 },
};
static const struct job_file twenty_blocks[] = {
	{ .path = (char *)"/data", .size = 20 * 512, .mode = 0644 },
};
static const struct job_file blocks[] = {
	{ .path = (char *)"/f", .size = 200000, .mode = 0644 },
};
static const struct job_file orphan[] = {
	{ .path = (char *)"/no/such/f", .mode = 0644 },
};
static const struct job_file escape[] = {
	{ .path = (char *)"/../out", .mode = 0644 },
};
/* What the harness puts in the root: "have" (fuzz_serve.c) */
static const uint8_t zeros48[3 * PROTO_DIGEST_LEN];	/* 3 empty files' sums */

static const struct job_file have_same[] = {
	{ .path = (char *)"/have", .type = JF_DIR, .mode = 0755 },
	{ .path = (char *)"/have/file", .size = 100, .mode = 0644,
	  .mtime_sec = 1500000000 },
	{ .path = (char *)"/have/link", .type = JF_LINK, .mode = 0777,
	  .target = (char *)"file" },
};
static const struct job_file have_other[] = {
	{ .path = (char *)"/have/file", .mode = 0600 },
	{ .path = (char *)"/have/new", .type = JF_DIR, .mode = 0750 },
	{ .path = (char *)"/have/new/x", .mode = 0644 },
};
static const struct job_file through_link[] = {
	{ .path = (char *)"/have/link/x", .mode = 0644 },
};
static const struct job_file state_dir[] = {
	{ .path = (char *)"/.rdmcp-state/x", .mode = 0644 },
};

/* ---------------------------------------------------------------------
 * fuzz_serve: mode byte, then the mode's input
 */

static void
serve_put(const char *name, uint8_t mode, const struct wbuf *w)
{
	put("serve", name, &mode, 1, w->data, w->len);
}

/* SC_X6: START, n members, this one rank r. */
static void
start_of(struct wbuf *w, uint8_t n, uint8_t r)
{
	wput_u8(w, SC_X6);
	wput_u8(w, (uint8_t)(n - 2));
	wput_u8(w, (uint8_t)(r - 1));
}

/* SC_X7: a data connection of the job, HELLO from rank `from` to `to`. */
static void
hello_of(struct wbuf *w, uint8_t from, uint8_t to)
{
	wput_u8(w, SC_X7);
	wput_u8(w, from);
	wput_u8(w, to);
}

/* Mode 2: flags, u16 length, the JOB, then a script. */
static void
serve_job(const char *name, uint8_t tamper, const struct job_file *files,
	  uint32_t n, uint32_t flags, enum proto_transport tr,
	  const struct wbuf *script)
{
	struct wbuf body, w;

	wbuf_init(&body);
	encode_job(&body, files, n, flags, tr, 0x11);
	wbuf_init(&w);
	wput_u8(&w, tamper);
	wput_u16(&w, (uint16_t)body.len);
	wput_bytes(&w, body.data, body.len);
	if (script != NULL)
		wput_bytes(&w, script->data, script->len);
	serve_put(name, 2, &w);
	wbuf_free(&w);
	wbuf_free(&body);
}

static void
serve_seeds(void)
{
	uint8_t nonce[AUTH_NONCE_LEN] = "an AUTH nonce from the corpus..";
	uint8_t proof[AUTH_PROOF_LEN] = { 0 }, token[PROTO_TOKEN_LEN];
	struct hello h = { .from = 1, .to = 2 };
	struct wbuf w, job, hw;

	memset(token, 0x11, sizeof(token));
	memcpy(h.token, token, sizeof(token));
	wbuf_init(&job);
	encode_job(&job, tree, 5, JOB_TIMES, TRANSPORT_TCP, 0x11);
	wbuf_init(&hw);
	hello_encode(&h, &hw);

	/* 0: raw bytes without the key */
	wbuf_init(&w);
	raw_frame(&w, MSG_AUTH, 0, nonce, sizeof(nonce));
	serve_put("raw-auth", 0, &w);
	raw_frame(&w, MSG_PROOF, 0, proof, sizeof(proof));
	serve_put("raw-auth-proof", 0, &w);
	raw_frame(&w, MSG_JOB, 0, job.data, job.len);
	serve_put("raw-auth-proof-job", 0, &w);
	w.len = 0;
	raw_frame(&w, MSG_AUTH, 0, nonce, sizeof(nonce));
	raw_frame(&w, MSG_PROOF, 0, proof, sizeof(proof));
	raw_frame(&w, MSG_QUERY, 0, token, sizeof(token));
	serve_put("raw-auth-proof-query", 0, &w);
	w.len = 0;
	raw_frame(&w, MSG_JOB, 0, job.data, job.len);
	serve_put("raw-job", 0, &w);
	w.len = 0;
	raw_frame(&w, MSG_QUERY, 0, token, sizeof(token));
	serve_put("raw-query", 0, &w);
	w.len = 0;
	raw_frame(&w, MSG_HELLO, 0, hw.data, hw.len);
	raw_frame(&w, MSG_BLOCK, 0, "xxxx", 4);
	serve_put("raw-hello", 0, &w);
	w.len = 0;
	raw_frame(&w, MSG_NOP, 0, NULL, 0);
	raw_frame(&w, MSG_AUTH, 0, nonce, 16);
	serve_put("raw-nop-short-auth", 0, &w);
	w.len = 0;
	raw_frame(&w, MSG_AUTH, 0, nonce, sizeof(nonce));
	raw_frame(&w, MSG_PROOF, 0, proof, 32);
	serve_put("raw-short-proof", 0, &w);
	w.len = 0;
	raw_frame(&w, MSG_AUTH, 0, nonce, sizeof(nonce));
	w.data[1] = 6;	/* protocol 6 */
	serve_put("raw-old-version", 0, &w);
	wbuf_free(&w);

	/* 1: scripts without the key */
	wbuf_init(&w);
	sc_frame(&w, MSG_AUTH, 0, 0, nonce, sizeof(nonce));
	sc_op(&w, SC_WAIT, MSG_CHALLENGE);
	sc_frame(&w, MSG_PROOF, 0, 0, proof, sizeof(proof));
	sc_frame(&w, MSG_JOB, 0, 0, job.data, (uint16_t)job.len);
	sc_op(&w, SC_WAIT, 0);
	serve_put("script-auth-proof-job", 1, &w);
	w.len = 0;
	sc_frame(&w, MSG_AUTH, 0, 0, nonce, sizeof(nonce));
	sc_op(&w, SC_WAIT, MSG_CHALLENGE);
	sc_frame(&w, MSG_NOP, 0, 0, NULL, 0);
	sc_op(&w, SC_PAUSE, 40);
	sc_frame(&w, MSG_PROOF, 0, 0, proof, sizeof(proof));
	sc_frame(&w, MSG_QUERY, 0, 0, token, sizeof(token));
	serve_put("script-auth-nop-proof-query", 1, &w);
	w.len = 0;
	sc_frame(&w, MSG_HELLO, 0, 0, hw.data, (uint16_t)hw.len);
	sc_frame(&w, MSG_SIGNAL, 0, 1, NULL, 0);
	sc_op(&w, SC_WAIT, 0);
	serve_put("script-hello", 1, &w);
	wbuf_free(&w);

	/* 2: honest JOBs, then what a sender does with them */
	serve_job("job-tree", 0, tree, 5, JOB_TIMES, TRANSPORT_TCP, NULL);
	serve_job("job-dry", 0, tree, 5, JOB_DRY_RUN, TRANSPORT_TCP, NULL);
	serve_job("job-blocks", 0, blocks, 1, JOB_VERIFY | JOB_SPARSE,
		  TRANSPORT_TCP, NULL);
	serve_job("job-verbs", 0, blocks, 1, 0, TRANSPORT_VERBS, NULL);
	serve_job("job-auto", 0, tree, 5, JOB_TRACE, TRANSPORT_AUTO, NULL);
	serve_job("job-orphan", 0, orphan, 1, 0, TRANSPORT_TCP, NULL);
	serve_job("job-escape", 0, escape, 1, 0, TRANSPORT_TCP, NULL);
	serve_job("job-state-dir", 0, state_dir, 1, 0, TRANSPORT_TCP, NULL);
	serve_job("job-tampered-proof", 1, tree, 5, 0, TRANSPORT_TCP, NULL);
	serve_job("job-tampered-mac", 2, tree, 5, 0, TRANSPORT_TCP, NULL);
	serve_job("job-tampered-type", 4, tree, 5, 0, TRANSPORT_TCP, NULL);
	serve_job("job-tampered-body", 8, tree, 5, 0, TRANSPORT_TCP, NULL);
	wbuf_init(&w);
	/* land: START as member 1 of 2, the go, COMPLETE; then ask */
	sc_op(&w, SC_WAIT, MSG_ACCEPT);
	start_of(&w, 2, 1);
	sc_op(&w, SC_WAIT, 0);
	sc_frame(&w, MSG_CRC, 0, 0, NULL, 0);
	sc_op(&w, SC_WAIT, MSG_COMPLETE);
	sc_op(&w, SC_X5, -1);
	serve_job("job-land", 0, tree, 5, JOB_TIMES | JOB_OWNERS,
		  TRANSPORT_TCP, &w);
	serve_job("job-land-trace", 0, tree, 5, JOB_TRACE, TRANSPORT_TCP, &w);
	w.len = 0;
	/* three members: START names the third, the go before it is
	 * done */
	sc_op(&w, SC_WAIT, MSG_ACCEPT);
	hello_of(&w, 0, 1);
	start_of(&w, 3, 1);
	sc_frame(&w, MSG_CRC, 0, 0, NULL, 0);
	sc_op(&w, SC_X5, -1);
	sc_op(&w, SC_WAIT, 0);
	serve_job("job-three", 0, tree, 5, 0, TRANSPORT_TCP, &w);
	w.len = 0;
	/* ABORT after ACCEPT: OUTCOME discarded */
	sc_op(&w, SC_WAIT, MSG_ACCEPT);
	sc_frame(&w, MSG_ABORT, 0, 0, "seed", 4);
	sc_op(&w, SC_WAIT, MSG_OUTCOME);
	sc_frame(&w, MSG_TRACE, 0, 0, NULL, 0);
	serve_job("job-abort", 0, tree, 5, JOB_TRACE, TRANSPORT_TCP, &w);
	serve_job("job-blocks-abort", 0, blocks, 1, 0, TRANSPORT_TCP, &w);
	w.len = 0;
	/* a member's data connection parked until START */
	sc_op(&w, SC_WAIT, MSG_ACCEPT);
	hello_of(&w, 0, 1);
	sc_op(&w, SC_PAUSE, 20);
	start_of(&w, 2, 1);
	sc_op(&w, SC_WAIT, 0);
	serve_job("job-blocks-hello", 0, blocks, 1, 0, TRANSPORT_TCP, &w);
	w.len = 0;
	/* HAVE (what the root holds from the start), then REPLACE with
	 * the sources' sums, one per entry (zeros: an empty file's) */
	sc_frame(&w, MSG_REPLACE, 0, 0, zeros48, sizeof(zeros48));
	sc_op(&w, SC_WAIT, 0);
	serve_job("job-have", 0, have_same, 3, 0, TRANSPORT_TCP, &w);
	serve_job("job-have-times", 0, have_same, 3, JOB_TIMES, TRANSPORT_TCP,
		  &w);
	serve_job("job-through-link", 0, through_link, 1, JOB_FORCE,
		  TRANSPORT_TCP, NULL);
	serve_job("job-exists", 0, have_other, 3, 0, TRANSPORT_TCP, NULL);
	w.len = 0;
	/* replace what is there (--force), merge into its directory */
	sc_op(&w, SC_WAIT, MSG_ACCEPT);
	start_of(&w, 2, 1);
	sc_frame(&w, MSG_CRC, 0, 0, NULL, 0);
	sc_op(&w, SC_WAIT, MSG_COMPLETE);
	serve_job("job-force-land", 0, have_other, 3, JOB_FORCE | JOB_TIMES,
		  TRANSPORT_TCP, &w);
	w.len = 0;
	/* the blocks of a job from rank 0 on a data connection, as a paced
	 * sender sends them (engine/pace.c): OFFER, the member's GRANT, the
	 * block, its NEARLY; then the go */
	{
		static uint8_t block[4096];
		uint64_t b;

		for (b = 0; b < sizeof(block); b++)
			block[b] = (uint8_t)(b * 7);
		start_of(&w, 2, 1);
		hello_of(&w, 0, 1);
		for (b = 0; b < 3; b++) {
			sc_frame(&w, MSG_SIGNAL, 0, SEED_OFFER | b, NULL, 0);
			sc_op(&w, SC_WAIT, MSG_SIGNAL);
			sc_frame(&w, MSG_BLOCK, (uint32_t)b, b, block,
				 b < 2 ? 4096 : 10000 - 2 * 4096);
			sc_op(&w, SC_WAIT, MSG_SIGNAL);
		}
		sc_op(&w, SC_CLOSE, -1);
		sc_frame(&w, MSG_CRC, 0, 0, NULL, 0);
		sc_op(&w, SC_WAIT, MSG_COMPLETE);
		sc_op(&w, SC_X5, -1);
		serve_job("job-data", 0, three_blocks, 1, 0, TRANSPORT_TCP,
			  &w);
		/* and blocks nobody granted, more than the window: the
		 * engine once wrote past its pending receives */
		w.len = 0;
		job_block = 512;
		start_of(&w, 2, 1);
		hello_of(&w, 0, 1);
		sc_op(&w, SC_PAUSE, 10);
		for (b = 0; b < 20; b++)
			sc_frame(&w, MSG_BLOCK, (uint32_t)b, b, block, 512);
		sc_op(&w, SC_WAIT, 0);
		serve_job("job-data-ungranted", 0, twenty_blocks, 1, 0,
			  TRANSPORT_TCP, &w);
		job_block = 4096;
	}
	w.len = 0;
	/* the job's fate asked while it runs, a START of racks */
	sc_op(&w, SC_WAIT, MSG_ACCEPT);
	sc_op(&w, SC_X5, -1);
	sc_op(&w, SC_WAIT, MSG_FAIL);
	serve_job("job-query-running", 0, tree, 5, 0, TRANSPORT_TCP, &w);
	w.len = 0;
	{
		struct roster_peer rp[2] = { { .rank = 0 }, { .rank = 2 } };
		uint32_t racks[2] = { 1, 2 };
		struct roster ro = { .rank = 1, .n = 3, .peers = rp,
				     .npeers = 2, .nracks = 2,
				     .racks = racks };
		struct wbuf r;

		net_parse_numeric("192.0.2.1", 7471, &rp[1].addr);
		wbuf_init(&r);
		roster_encode(&ro, &r);
		sc_op(&w, SC_WAIT, MSG_ACCEPT);
		sc_frame(&w, MSG_START, 0, 0, r.data, (uint16_t)r.len);
		sc_op(&w, SC_WAIT, 0);
		sc_frame(&w, MSG_CRC, 0, 0, NULL, 0);
		sc_op(&w, SC_WAIT, 0);
		serve_job("job-racks", 0, blocks, 1, 0, TRANSPORT_TCP, &w);
		wbuf_free(&r);
	}
	wbuf_free(&w);

	/* 3: QUERYs */
	wbuf_init(&w);
	wput_u8(&w, 0);
	wput_u8(&w, sizeof(token));
	wput_bytes(&w, token, sizeof(token));
	serve_put("query", 3, &w);
	w.data[0] = 2;
	serve_put("query-tampered", 3, &w);
	w.data[0] = 0;
	w.data[1] = 15;
	serve_put("query-short", 3, &w);
	wbuf_free(&w);
	wbuf_free(&hw);
	wbuf_free(&job);
}

/* ---------------------------------------------------------------------
 * fuzz_push: which connections hold the key, options, then a script
 */

static void
push_put(const char *name, uint8_t honest, uint8_t opts,
	 const struct wbuf *w)
{
	uint8_t pre[2] = { honest, opts };

	put("push", name, pre, sizeof(pre), w->data, w->len);
}

#define OPT_SMALL 0x01u
#define OPT_VERIFY 0x02u
#define OPT_TRACE 0x04u
#define OPT_FORCE 0x08u
#define OPT_DRY_RUN 0x10u

static void
push_seeds(void)
{
	uint8_t zero[2 * AUTH_NONCE_LEN] = { 0 };
	const char *why = "seed: refused";
	struct trace *t = trace_new(4);
	struct wbuf w, tw;

	trace_add(t, TR_SETUP, 1000, 2000, UINT32_MAX, 0);
	trace_add(t, TR_RECV, 2000, 3000, 0, 0);
	wbuf_init(&tw);
	trace_encode(t, 1500, 2500, &tw);
	trace_free(t);
	wbuf_init(&w);

	/* honest: the whole push; COMPLETE */
	sc_frame(&w, MSG_ACCEPT, 0, 0, NULL, 0);
	sc_op(&w, SC_WAIT, MSG_START);
	sc_op(&w, SC_WAIT, MSG_CRC);
	sc_frame(&w, MSG_PROGRESS, 0, 1, NULL, 0);
	sc_frame(&w, MSG_COMPLETE, 0, 0, NULL, 0);
	sc_op(&w, SC_WAIT, 0);
	push_put("complete", 0x01, 0, &w);
	push_put("complete-verify", 0x01, OPT_VERIFY, &w);
	push_put("complete-small", 0x01, OPT_SMALL, &w);
	sc_op(&w, SC_WAIT, MSG_TRACE);
	sc_frame(&w, MSG_TRACE, 0, 0, tw.data, (uint16_t)tw.len);
	sc_op(&w, SC_WAIT, 0);
	push_put("complete-trace", 0x01, OPT_TRACE, &w);
	w.len = 0;
	/* honest: cut at the go, then the QUERY answered "landed" (with the
	 * key; and without it, which must not count) */
	sc_frame(&w, MSG_ACCEPT, 0, 0, NULL, 0);
	sc_op(&w, SC_WAIT, MSG_START);
	sc_op(&w, SC_WAIT, MSG_CRC);
	sc_op(&w, SC_CLOSE, -1);
	sc_frame(&w, MSG_OUTCOME, 0, OUTCOME_LANDED, NULL, 0);
	sc_op(&w, SC_WAIT, 0);
	push_put("query-landed", 0x03, 0, &w);
	push_put("query-landed-unproved", 0x01, 0, &w);
	w.len = 0;
	sc_frame(&w, MSG_ACCEPT, 0, 0, NULL, 0);
	sc_op(&w, SC_WAIT, MSG_CRC);
	sc_op(&w, SC_CLOSE, -1);
	sc_frame(&w, MSG_OUTCOME, 0, OUTCOME_DISCARDED, NULL, 0);
	push_put("query-discarded", 0x03, 0, &w);
	w.len = 0;
	/* honest: the group breaks (data connections cut), ABORT, OUTCOME */
	sc_frame(&w, MSG_ACCEPT, 0, 0, NULL, 0);
	sc_op(&w, SC_WAIT, MSG_START);
	sc_op(&w, SC_X6, -1);
	sc_frame(&w, MSG_FAIL, 2, ECONNRESET, "lost", 4);
	sc_op(&w, SC_WAIT, MSG_ABORT);
	sc_frame(&w, MSG_OUTCOME, 0, OUTCOME_DISCARDED, NULL, 0);
	push_put("abort", 0x01, OPT_SMALL, &w);
	w.len = 0;
	/* honest: the data connection cut, the group broken; kept alive
	 * until the sender asks (ABORT), answered "discarded", "landed" */
	{
		int i;

		sc_frame(&w, MSG_ACCEPT, 0, 0, NULL, 0);
		sc_op(&w, SC_WAIT, MSG_START);
		sc_op(&w, SC_PAUSE, 10);
		sc_op(&w, SC_X6, -1);
		for (i = 0; i < 9; i++) {
			sc_op(&w, SC_X7, -1);
			sc_op(&w, SC_PAUSE, 45);
		}
		sc_op(&w, SC_WAIT, MSG_ABORT);
		sc_frame(&w, MSG_OUTCOME, 0, OUTCOME_DISCARDED, NULL, 0);
		push_put("abort-discarded", 0x01, OPT_SMALL, &w);
		w.data[w.len - 1] = OUTCOME_LANDED;	/* val's last byte */
		push_put("abort-landed", 0x01, OPT_SMALL, &w);
		w.len = 0;
	}
	/* honest: HAVE (all identical; files to compare), REFUSE, dry run */
	sc_frame(&w, MSG_HAVE, HAVE_SAME, 0, NULL, 0);
	push_put("have-same", 0x01, 0, &w);
	w.len = 0;
	sc_frame(&w, MSG_HAVE, 0, 0, NULL, 0);
	sc_op(&w, SC_WAIT, MSG_REPLACE);
	sc_frame(&w, MSG_ACCEPT, 0, 0, NULL, 0);
	sc_op(&w, SC_WAIT, MSG_START);
	push_put("have-replace", 0x01, OPT_FORCE | OPT_SMALL, &w);
	w.len = 0;
	{	/* a delta: ACCEPT says the daemon lacks block 0 alone (a
		 * bset: one run, first 0, count 1), after the digests, and
		 * resumed no byte (u64 0) */
		static const uint8_t need[28] = { 0, 0, 0, 1, 0, 0, 0, 0, 0,
						  0, 0, 0, 0, 0, 0, 0, 0, 0,
						  0, 1 };

		/* digests wanted from the first look */
		sc_frame(&w, MSG_HAVE, HAVE_ASK, HAVE_WANT_DIGESTS, NULL, 0);
		sc_op(&w, SC_WAIT, MSG_REPLACE);
		sc_frame(&w, MSG_ACCEPT, 0, 0, need, sizeof(need));
		sc_op(&w, SC_WAIT, MSG_START);
		push_put("have-delta", 0x01, OPT_FORCE | OPT_SMALL, &w);
		w.len = 0;
		/* ... or once REPLACE showed a file that differs */
		sc_frame(&w, MSG_HAVE, HAVE_ASK, 0, NULL, 0);
		sc_op(&w, SC_WAIT, MSG_REPLACE);
		sc_frame(&w, MSG_HAVE, HAVE_DIGESTS, 0, NULL, 0);
		sc_op(&w, SC_WAIT, MSG_DIGESTS);
		sc_frame(&w, MSG_ACCEPT, 0, 0, need, sizeof(need));
		sc_op(&w, SC_WAIT, MSG_START);
		push_put("have-digests", 0x01, OPT_FORCE | OPT_SMALL, &w);
		w.len = 0;
	}
	sc_frame(&w, MSG_REFUSE, 0, EEXIST, why, (uint16_t)strlen(why));
	push_put("refuse", 0x01, 0, &w);
	w.len = 0;
	sc_frame(&w, MSG_ACCEPT, 0, 0, NULL, 0);
	push_put("dry-run", 0x01, OPT_DRY_RUN, &w);
	w.len = 0;
	/* honest, then a second CHALLENGE without a body (src/push.c once
	 * pointed past its NULL body) */
	sc_frame(&w, MSG_CHALLENGE, 0, 0, NULL, 0);
	push_put("rechallenge", 0x01, 0, &w);
	w.len = 0;
	/* without the key: a wrong CHALLENGE, what only a proved daemon
	 * may say, keepalives, garbage */
	sc_frame(&w, MSG_CHALLENGE, 0, 0, zero, sizeof(zero));
	push_put("wrong-challenge", 0x00, 0, &w);
	w.len = 0;
	sc_frame(&w, MSG_OUTCOME, 0, OUTCOME_LANDED, NULL, 0);
	push_put("unproved-outcome", 0x00, 0, &w);
	w.len = 0;
	sc_frame(&w, MSG_COMPLETE, 0, 0, NULL, 0);
	sc_frame(&w, MSG_ACCEPT, 0, 0, NULL, 0);
	push_put("unproved-complete", 0x00, OPT_DRY_RUN, &w);
	w.len = 0;
	sc_frame(&w, MSG_NOP, 0, 0, NULL, 0);
	sc_op(&w, SC_PAUSE, 30);
	sc_frame(&w, MSG_NOP, 0, 0, NULL, 0);
	sc_op(&w, SC_WAIT, 0);
	push_put("unproved-nops", 0x00, 0, &w);
	w.len = 0;
	wput_u8(&w, SC_RAW);
	wput_u16(&w, 30);
	wput_bytes(&w, "\x0a\x07\x00\x00garbage garbage garbage!", 30);
	push_put("unproved-garbage", 0x00, 0, &w);
	wbuf_free(&w);
	wbuf_free(&tw);
}

int
main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	top = argv[1];
	decoders();
	serve_seeds();
	push_seeds();
	return 0;
}
