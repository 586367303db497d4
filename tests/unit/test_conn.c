/* SPDX-License-Identifier: MIT */
/*
 * conn's write queue: a signal passes the block frames queued before it
 * that have not begun to leave (a grant or an offer does not wait behind
 * megabytes of blocks), never a frame that has begun, and never another
 * small frame; every frame arrives whole, and in its order otherwise.  A
 * frame whose payload grows (a block passed on as it lands) leaves no
 * byte before it is ready, without spinning meanwhile, and holds back the
 * frames behind it, and leaves in whole segments while it grows.
 * Whether the peer has all we sent.  A connection done with its peer still
 * delivers its last bytes.  A frame the connection buffers itself costs
 * the memory of what has arrived, not of what it announces.  A deadline
 * ends a connection however busy its keepalives keep it.  Over a real TCP
 * connection on 127.0.0.1 whose far end we read with plain system calls.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "transport/tcp/conn.h"
#include "proto/proto.h"
#include "unit.h"
#include "transport/tcp/tcp.h"

#define NBULK 6
#define BULK (2u << 20)		/* more than the socket's buffers take */
#define MAXF 16
#define GROW (192u << 10)	/* a block passed on as it lands */
#define WINDOW_BLOCK (256u << 10)	/* more than the peer's window */

struct side {
	unsigned sent;		/* on_sent of bulk frames */
	bool closed;
	int status;		/* on_close's */
};

static int
on_header(void *ctx, struct conn *c, const struct frame *f,
	  const struct conn_seg **segs, int *nseg)
{
	return 0;
}

static int
on_frame(void *ctx, struct conn *c, const struct frame *f,
	 const uint8_t *body)
{
	return 0;
}

static void
on_sent(void *ctx, struct conn *c, uint64_t cookie, int status)
{
	ck_assert_int_eq(status, 0);
	((struct side *)ctx)->sent++;
}

static void
on_close(void *ctx, struct conn *c, int status)
{
	((struct side *)ctx)->closed = true;
	((struct side *)ctx)->status = status;
}

static const struct conn_ops ops = {
	.on_header = on_header, .on_frame = on_frame, .on_sent = on_sent,
	.on_close = on_close,
};

/* A connected pair of TCP sockets on 127.0.0.1: *ours for conn, *far
 * non-blocking, for the test to read.  With `small`, small buffers, so
 * that the kernel takes far less than one BULK frame while nobody reads;
 * with `mss`, *far announces segments of that size (an Ethernet link's),
 * not loopback's 64 KiB. */
static void
tcp_pair_with(int *ours, int *far, bool small, int mss)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), buf = 64 << 10;

	ck_assert_int_ge(l, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(l, 1), 0);
	ck_assert_int_eq(getsockname(l, (struct sockaddr *)&a, &len), 0);
	*far = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(*far, 0);
	if (small)
		ck_assert_int_eq(setsockopt(*far, SOL_SOCKET, SO_RCVBUF, &buf,
					    sizeof(buf)), 0);
	if (mss > 0)
		ck_assert_int_eq(setsockopt(*far, IPPROTO_TCP, TCP_MAXSEG,
					    &mss, sizeof(mss)), 0);
	ck_assert_int_eq(connect(*far, (struct sockaddr *)&a, sizeof(a)), 0);
	*ours = accept(l, NULL, NULL);
	ck_assert_int_ge(*ours, 0);
	if (small)
		ck_assert_int_eq(setsockopt(*ours, SOL_SOCKET, SO_SNDBUF, &buf,
					    sizeof(buf)), 0);
	close(l);
	ck_assert_int_eq(fcntl(*far, F_SETFL, O_NONBLOCK), 0);
}

static void
tcp_pair(int *ours, int *far)
{
	tcp_pair_with(ours, far, true, 0);
}

/* The end of a test: let go of the connection and the far socket, and
 * require that the loop holds no handle any more. */
static void
end_pair(uv_loop_t *loop, struct conn *c, int far)
{
	conn_free(c);
	close(far);
	uv_run(loop, UV_RUN_DEFAULT);
	ck_assert_int_eq(uv_loop_close(loop), 0);	/* no handle left */
}

/* Read frames from fd while the loop writes them, until n have come or
 * 10 s passed; their headers in order.  Returns how many came whole. */
static unsigned
read_frames(uv_loop_t *loop, int fd, unsigned n, struct frame *out)
{
	static uint8_t buf[256 << 10];
	uint8_t hdr[PROTO_FRAME_LEN];
	uint64_t deadline = uv_hrtime() + 10000000000ull, left = 0;
	size_t got = 0, want;
	unsigned k = 0;
	ssize_t r;

	while (k < n && uv_hrtime() < deadline) {
		uv_run(loop, UV_RUN_NOWAIT);
		want = left ? (left < sizeof(buf) ? left : sizeof(buf))
			    : PROTO_FRAME_LEN - got;
		r = read(fd, left ? buf : hdr + got, want);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		ck_assert_int_gt(r, 0);
		if (left) {
			left -= (uint64_t)r;
			k += left == 0;
		} else if ((got += (size_t)r) == PROTO_FRAME_LEN) {
			got = 0;
			ck_assert_int_eq(frame_decode(hdr, &out[k]), 0);
			left = out[k].len;
			k += left == 0;
		}
	}
	return k;
}

START_TEST(signal_passes_queued_blocks)
{
	static uint8_t block[BULK];
	struct frame s1 = { .type = MSG_SIGNAL, .val = 1 };
	struct frame s2 = { .type = MSG_SIGNAL, .val = 2 };
	struct frame nop = { .type = MSG_NOP };
	struct iovec iov = { block, BULK };
	struct frame got[MAXF];
	struct side side = { 0 };
	struct conn *c = NULL;
	uv_loop_t loop;
	unsigned i;
	int ours, far;

	ck_assert_int_eq(uv_loop_init(&loop), 0);
	tcp_pair(&ours, &far);
	ck_assert_int_eq(conn_adopt(&loop, ours, &ops, &side, &c), 0);
	for (i = 0; i < NBULK; i++) {	/* the first begins to leave */
		struct frame f = { .type = MSG_BLOCK, .val = i, .len = BULK };

		ck_assert_int_eq(conn_send(c, &f, &iov, 1, i), 0);
	}
	ck_assert_int_eq(conn_send_signal(c, &s1), 0);
	ck_assert_int_eq(conn_send_copy(c, &nop, NULL), 0);
	ck_assert_int_eq(conn_send_signal(c, &s2), 0);

	ck_assert_uint_eq(read_frames(&loop, far, NBULK + 3, got), NBULK + 3);
	/* the block that had begun, the first signal, the blocks that
	 * waited; the NOP stays behind them (not a signal), and the second
	 * signal behind the NOP */
	ck_assert_int_eq(got[0].type, MSG_BLOCK);
	ck_assert_uint_eq(got[0].val, 0);
	ck_assert_int_eq(got[1].type, MSG_SIGNAL);
	ck_assert_uint_eq(got[1].val, 1);
	for (i = 1; i < NBULK; i++) {
		ck_assert_int_eq(got[1 + i].type, MSG_BLOCK);
		ck_assert_uint_eq(got[1 + i].val, i);
		ck_assert_uint_eq(got[1 + i].len, BULK);
	}
	ck_assert_int_eq(got[NBULK + 1].type, MSG_NOP);
	ck_assert_int_eq(got[NBULK + 2].type, MSG_SIGNAL);
	ck_assert_uint_eq(got[NBULK + 2].val, 2);
	uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert_uint_eq(side.sent, NBULK);
	ck_assert(!side.closed);
	end_pair(&loop, c, far);
}
END_TEST

/* Into a queue with no block waiting, a signal goes last, as any
 * frame. */
START_TEST(signal_keeps_order_without_blocks)
{
	struct frame s1 = { .type = MSG_SIGNAL, .val = 1 };
	struct frame s2 = { .type = MSG_SIGNAL, .val = 2 };
	struct frame bodied = { .type = MSG_SIGNAL, .val = 3, .len = 4 };
	struct frame nop = { .type = MSG_NOP };
	struct frame got[MAXF];
	struct side side = { 0 };
	struct conn *c = NULL;
	uv_loop_t loop;
	int ours, far;

	ck_assert_int_eq(uv_loop_init(&loop), 0);
	tcp_pair(&ours, &far);
	ck_assert_int_eq(conn_adopt(&loop, ours, &ops, &side, &c), 0);
	ck_assert_int_eq(conn_send_signal(c, &s1), 0);
	/* a signal has no body: refused, nothing queued */
	ck_assert_int_eq(conn_send_signal(c, &bodied), -EINVAL);
	ck_assert_int_eq(conn_send_copy(c, &nop, NULL), 0);
	ck_assert_int_eq(conn_send_signal(c, &s2), 0);
	ck_assert_uint_eq(read_frames(&loop, far, 3, got), 3);
	ck_assert_uint_eq(got[0].val, 1);
	ck_assert_int_eq(got[1].type, MSG_NOP);
	ck_assert_uint_eq(got[2].val, 2);
	end_pair(&loop, c, far);
}
END_TEST

static void
count_turn(uv_check_t *h)
{
	(*(unsigned *)h->data)++;
}

static void
stop_loop(uv_timer_t *t)
{
	uv_stop(t->loop);
}

/* Run the loop for `ms`; how many times it turned. */
static unsigned
idle_for(uv_loop_t *loop, unsigned ms)
{
	uv_check_t check;
	uv_timer_t timer;
	unsigned turns = 0;

	uv_check_init(loop, &check);
	uv_timer_init(loop, &timer);
	check.data = &turns;
	uv_check_start(&check, count_turn);
	uv_timer_start(&timer, stop_loop, ms, 0);
	uv_run(loop, UV_RUN_DEFAULT);
	uv_close((uv_handle_t *)&check, NULL);
	uv_close((uv_handle_t *)&timer, NULL);
	uv_run(loop, UV_RUN_NOWAIT);
	return turns;
}

/* Read exactly n bytes from fd into buf while the loop writes (10 s at
 * most); returns how many came. */
static size_t
read_bytes(uv_loop_t *loop, int fd, uint8_t *buf, size_t n)
{
	uint64_t deadline = uv_hrtime() + 10000000000ull;
	size_t got = 0;
	ssize_t r;

	while (got < n && uv_hrtime() < deadline) {
		uv_run(loop, UV_RUN_NOWAIT);
		r = read(fd, buf + got, n - got);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		ck_assert_int_gt(r, 0);
		got += (size_t)r;
	}
	return got;
}

/* What fd holds now, up to n bytes, into buf (after a turn of the
 * loop). */
static size_t
bytes_into(uv_loop_t *loop, int fd, uint8_t *buf, size_t n)
{
	ssize_t r;

	uv_run(loop, UV_RUN_NOWAIT);
	r = n > 0 ? read(fd, buf, n) : 0;
	return r > 0 ? (size_t)r : 0;
}

/* Bytes waiting at fd (after the loop had 50 ms to write more). */
static size_t
bytes_waiting(uv_loop_t *loop, int fd)
{
	static uint8_t sink[GROW];
	ssize_t r;

	idle_for(loop, 50);
	r = read(fd, sink, sizeof(sink));
	return r > 0 ? (size_t)r : 0;
}

/* Fill buf with a pattern of its offsets (seed picks which). */
static void
fill_pattern(uint8_t *buf, size_t len, unsigned seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * seed + i / 509);
}

/* A file (memfd) holding buf's len bytes: a block that lives in a file. */
static int
memfd_holding(const uint8_t *buf, size_t len)
{
	int fd = memfd_create("block", 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
	return fd;
}

/* A block passed on as it lands, from memory (_i 0) or from a file
 * (_i 1: sendfile): only the bytes said ready leave, the loop does not
 * spin while the rest is missing, the signal queued behind the begun frame
 * waits for all of it, and the frame reports sent once whole. */
START_TEST(growing_frame_sends_what_is_ready)
{
	static uint8_t block[GROW], got[GROW];
	struct frame f = { .type = MSG_BLOCK, .val = 7, .len = GROW };
	struct frame s1 = { .type = MSG_SIGNAL, .val = 1 }, hdr;
	struct conn_seg seg = { block, GROW, -1, 0 };
	struct frame sig[1];
	uint8_t raw[PROTO_FRAME_LEN];
	struct side side = { 0 };
	struct conn *c = NULL;
	uv_loop_t loop;
	int ours, far, fd = -1;

	fill_pattern(block, GROW, 13);
	if (_i == 1) {
		fd = memfd_holding(block, GROW);
		seg = (struct conn_seg){ NULL, GROW, fd, 0 };
	}
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	tcp_pair(&ours, &far);
	ck_assert_int_eq(conn_adopt(&loop, ours, &ops, &side, &c), 0);
	ck_assert_int_eq(conn_send_growing(c, &f, &seg, 1, 7, 0), 0);
	ck_assert_int_eq(conn_send_signal(c, &s1), 0);

	ck_assert_uint_eq(read_bytes(&loop, far, raw, sizeof(raw)),
			  sizeof(raw));
	ck_assert_int_eq(frame_decode(raw, &hdr), 0);
	ck_assert_uint_eq(hdr.len, GROW);
	ck_assert_uint_lt(idle_for(&loop, 100), 20);	/* no busy poll */
	ck_assert_uint_eq(bytes_waiting(&loop, far), 0);

	ck_assert_int_eq(conn_grow(c, 7, GROW / 3), 0);
	ck_assert_uint_eq(read_bytes(&loop, far, got, GROW / 3), GROW / 3);
	ck_assert_uint_eq(bytes_waiting(&loop, far), 0);
	ck_assert_uint_eq(side.sent, 0);
	ck_assert_int_eq(conn_grow(c, 8, GROW), -ENOENT);

	ck_assert_int_eq(conn_grow(c, 7, GROW), 0);
	ck_assert_uint_eq(read_bytes(&loop, far, got + GROW / 3,
				     GROW - GROW / 3), GROW - GROW / 3);
	ck_assert(memcmp(got, block, GROW) == 0);
	ck_assert_uint_eq(read_frames(&loop, far, 1, sig), 1);
	ck_assert_int_eq(sig[0].type, MSG_SIGNAL);
	ck_assert_uint_eq(sig[0].val, 1);
	uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert_uint_eq(side.sent, 1);
	ck_assert(!side.closed);
	conn_free(c);
	close(far);
	if (fd >= 0)
		close(fd);
	uv_run(&loop, UV_RUN_DEFAULT);
	ck_assert_int_eq(uv_loop_close(&loop), 0);	/* no handle left */
}
END_TEST

/* Linux's tcp_info (an ABI that only grows) as far as data_segs_out;
 * glibc's, which libuv's headers bring, ends at total_retrans. */
struct tcp_info_segs {
	struct tcp_info glibc;
	uint64_t pacing_rate, max_pacing_rate, bytes_acked, bytes_received;
	uint32_t segs_out, segs_in, notsent_bytes, min_rtt, data_segs_in;
	uint32_t data_segs_out;
};
_Static_assert(offsetof(struct tcp_info_segs, data_segs_out) == 156,
	       "tcp_info layout");

/* What the kernel took of fd: data segments sent, and the segment size. */
static void
segs_sent(int fd, unsigned *segs, int *mss)
{
	struct tcp_info_segs ti;
	socklen_t len = sizeof(ti);

	ck_assert_int_eq(getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len), 0);
	ck_assert_uint_eq(len, sizeof(ti));
	*segs = ti.data_segs_out;
	len = sizeof(*mss);
	ck_assert_int_eq(getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, mss, &len),
			 0);
}

/* Over a pair whose far end announces Ethernet's segments (1,448
 * bytes), queue frame f of segs growing, nothing ready yet, and read its
 * header at the far end. */
static void
start_growing(uv_loop_t *loop, struct side *side, struct conn **c,
	      int *ours, int *far, const struct frame *f,
	      const struct conn_seg *segs, int nseg)
{
	uint8_t raw[PROTO_FRAME_LEN];

	ck_assert_int_eq(uv_loop_init(loop), 0);
	tcp_pair_with(ours, far, false, 1448);
	ck_assert_int_eq(conn_adopt(loop, *ours, &ops, side, c), 0);
	ck_assert_int_eq(conn_send_growing(*c, f, segs, nseg, f->val, 0), 0);
	ck_assert_uint_eq(read_bytes(loop, *far, raw, sizeof(raw)),
			  sizeof(raw));
}

/* A block passed on from a file as it lands, a few hundred bytes at a
 * time, over a link of Ethernet's segments: it leaves in whole segments
 * while it grows (a landed remainder waits, without the loop spinning)
 * and takes no more segments than its bytes need, one for its end and
 * one for the header; and every byte arrives, in order. */
START_TEST(growing_frame_leaves_in_whole_segments)
{
	enum { LEN = 150000, STEP = 700, OFF = 1000 };
	static uint8_t file[OFF + LEN], got[LEN];
	struct frame f = { .type = MSG_BLOCK, .val = 9, .len = LEN };
	struct conn_seg seg = { NULL, LEN, -1, OFF };
	struct side side = { 0 };
	struct conn *c = NULL;
	unsigned i, segs, turns = 0, grows = 0;
	size_t have = 0;
	uv_loop_t loop;
	int ours, far, mss;

	fill_pattern(file, sizeof(file), 7);
	seg.fd = memfd_holding(file, sizeof(file));
	start_growing(&loop, &side, &c, &ours, &far, &f, &seg, 1);
	for (i = STEP; i < LEN; i += STEP, grows++) {
		ck_assert_int_eq(conn_grow(c, 9, i), 0);
		turns += grows % 50 == 0 ? idle_for(&loop, 20) : 0;
		have += bytes_into(&loop, far, got + have, LEN - have);
	}
	ck_assert_uint_lt(turns, grows / 50 * 10);	/* no busy poll */
	ck_assert_int_eq(conn_grow(c, 9, LEN), 0);
	ck_assert_uint_eq(read_bytes(&loop, far, got + have, LEN - have),
			  LEN - have);
	ck_assert(memcmp(got, file + OFF, LEN) == 0);
	segs_sent(ours, &segs, &mss);
	ck_assert_int_gt(mss, 1000);
	ck_assert_uint_le(segs, (LEN + mss - 1) / mss + 2);
	uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert_uint_eq(side.sent, 1);
	end_pair(&loop, c, far);
	close(seg.fd);
}
END_TEST

/* A block that spans two files: once bytes land in the second, the rest
 * of the first leaves whole, not held back to a segment boundary (the
 * kernel cannot join two files' pieces in one segment anyway). */
START_TEST(growing_frame_spanning_files_passes_the_first_on)
{
	enum { A = 5000, B = 150000, B_AT = 20000 };
	static uint8_t file[B_AT + B], got[A + B];
	struct frame f = { .type = MSG_BLOCK, .val = 3, .len = A + B };
	struct conn_seg segs[2] = { { NULL, A, -1, 0 },
				    { NULL, B, -1, B_AT } };
	struct side side = { 0 };
	struct conn *c = NULL;
	size_t have = 0;
	uv_loop_t loop;
	int ours, far;

	fill_pattern(file, sizeof(file), 11);
	segs[0].fd = segs[1].fd = memfd_holding(file, sizeof(file));
	start_growing(&loop, &side, &c, &ours, &far, &f, segs, 2);
	ck_assert_int_eq(conn_grow(c, 3, A - 700), 0);
	ck_assert_int_eq(conn_grow(c, 3, A + 3000), 0);
	ck_assert_uint_ge(read_bytes(&loop, far, got, A), A);
	have = A + bytes_into(&loop, far, got + A, B);
	ck_assert_int_eq(conn_grow(c, 3, A + B), 0);
	ck_assert_uint_eq(read_bytes(&loop, far, got + have, A + B - have),
			  A + B - have);
	ck_assert(memcmp(got, file, A) == 0);
	ck_assert(memcmp(got + A, file + B_AT, B) == 0);
	uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert_uint_eq(side.sent, 1);
	end_pair(&loop, c, far);
	close(segs[0].fd);
}
END_TEST

/* A pair whose far end nobody reads yet, *ours adopted as *c: our
 * socket has room for a whole WINDOW_BLOCK, the peer's window does not. */
static void
adopt_roomy_pair(uv_loop_t *loop, struct side *side, struct conn **c,
		 int *ours, int *far)
{
	int big = 1 << 20;

	ck_assert_int_eq(uv_loop_init(loop), 0);
	tcp_pair(ours, far);
	ck_assert_int_eq(setsockopt(*ours, SOL_SOCKET, SO_SNDBUF, &big,
				    sizeof(big)), 0);
	ck_assert_int_eq(conn_adopt(loop, *ours, &ops, side, c), 0);
}

/* Run the loop until n bulk frames are in the socket (10 s at most). */
static void
wait_sent(uv_loop_t *loop, const struct side *side, unsigned n)
{
	uint64_t deadline = uv_hrtime() + 10000000000ull;

	while (side->sent < n && uv_hrtime() < deadline)
		uv_run(loop, UV_RUN_NOWAIT);
	ck_assert_uint_eq(side->sent, n);
}

/* conn_all_acked: false while a frame waits in our queue, and while bytes
 * written to the socket have not reached the peer (its window is full:
 * nobody reads), true once the peer has them all. */
START_TEST(acked_once_the_peer_has_everything)
{
	static uint8_t block[WINDOW_BLOCK];
	struct frame f = { .type = MSG_BLOCK, .len = WINDOW_BLOCK };
	struct frame nop = { .type = MSG_NOP };
	struct iovec iov = { block, WINDOW_BLOCK };
	uint64_t deadline = uv_hrtime() + 10000000000ull;
	struct frame got[2];
	struct side side = { 0 };
	struct conn *c = NULL;
	uv_loop_t loop;
	int ours, far;

	ck_assert(conn_all_acked(NULL));
	adopt_roomy_pair(&loop, &side, &c, &ours, &far);
	ck_assert(conn_all_acked(c));
	ck_assert_int_eq(conn_send_copy(c, &nop, NULL), 0);
	ck_assert(!conn_all_acked(c));		/* queued here */
	ck_assert_int_eq(conn_send(c, &f, &iov, 1, 1), 0);
	wait_sent(&loop, &side, 1);		/* all of it in the socket */
	ck_assert(!conn_all_acked(c));		/* not all at the peer */
	ck_assert_uint_eq(read_frames(&loop, far, 2, got), 2);
	while (!conn_all_acked(c) && uv_hrtime() < deadline)
		uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert(conn_all_acked(c));
	ck_assert(!side.closed);
	end_pair(&loop, c, far);
}
END_TEST

/* Read fd until its end or 10 s, running the loop meanwhile: how many
 * bytes came; *err the error that ended it instead (ETIMEDOUT: no end). */
static size_t
read_to_end(uv_loop_t *loop, int fd, int *err)
{
	static uint8_t buf[64 << 10];
	uint64_t deadline = uv_hrtime() + 10000000000ull;
	size_t got = 0;
	ssize_t r;

	*err = ETIMEDOUT;
	while (uv_hrtime() < deadline) {
		uv_run(loop, UV_RUN_NOWAIT);
		r = read(fd, buf, sizeof(buf));
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
			*err = r == 0 ? 0 : errno;
			break;
		}
		got += r > 0 ? (size_t)r : 0;
	}
	return got;
}

/* Done with a peer (as tcp_finish is) while the peer's last signals lie
 * unread in our socket and most of our last frame is still in it: the
 * peer gets every byte of the frame, then our end, whatever the
 * transfer's timeout, none (0) included.  Closing at once there resets
 * the connection, and the kernel drops what the peer has not taken. */
START_TEST(done_with_peer_delivers_our_last_bytes)
{
	static const unsigned timeout_ms[] = { 0, 300 };
	static uint8_t block[WINDOW_BLOCK];
	struct frame f = { .type = MSG_BLOCK, .len = WINDOW_BLOCK };
	struct frame nop = { .type = MSG_NOP };
	struct iovec iov = { block, WINDOW_BLOCK };
	uint8_t signals[2 * PROTO_FRAME_LEN];
	struct side side = { 0 };
	struct conn *c = NULL;
	struct pollfd in;
	uv_loop_t loop;
	int ours, far, err;
	size_t got;

	adopt_roomy_pair(&loop, &side, &c, &ours, &far);
	ck_assert_int_eq(conn_send(c, &f, &iov, 1, 1), 0);
	wait_sent(&loop, &side, 1);
	ck_assert(!conn_all_acked(c));	/* the peer's window holds less */
	frame_encode(&nop, signals);
	frame_encode(&nop, signals + PROTO_FRAME_LEN);
	ck_assert_int_eq(write(far, signals, sizeof(signals)),
			 (ssize_t)sizeof(signals));
	in = (struct pollfd){ .fd = ours, .events = POLLIN };
	ck_assert_int_eq(poll(&in, 1, 5000), 1);	/* there, unread */
	conn_linger(c, tcp_linger_ms(timeout_ms[_i]));
	got = read_to_end(&loop, far, &err);
	ck_assert_msg(err == 0 && got == PROTO_FRAME_LEN + WINDOW_BLOCK,
		      "timeout %u ms: the peer got %zu of %u bytes, then %s",
		      timeout_ms[_i], got, PROTO_FRAME_LEN + WINDOW_BLOCK,
		      err == 0 ? "our end" : strerror(err));
	close(far);
	uv_run(&loop, UV_RUN_DEFAULT);	/* ours sees the end and closes */
	ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

/* The far end writes all of buf (blocking, 10 s at most) while the loop
 * reads. */
static void
far_write(uv_loop_t *loop, int far, const void *buf, size_t len)
{
	uint64_t deadline = uv_hrtime() + 10000000000ull;
	size_t done = 0;
	ssize_t n;

	while (done < len && uv_hrtime() < deadline) {
		n = write(far, (const char *)buf + done, len - done);
		if (n > 0)
			done += (size_t)n;
		uv_run(loop, UV_RUN_NOWAIT);
	}
	ck_assert_uint_eq(done, len);
}

struct body_side {
	struct side side;
	const uint8_t *want;
	uint64_t len;
	bool whole;		/* the frame came, with the bytes sent */
};

static int
check_body(void *ctx, struct conn *c, const struct frame *f,
	   const uint8_t *body)
{
	struct body_side *b = ctx;

	b->whole = f->len == b->len && memcmp(body, b->want, b->len) == 0;
	return 0;
}

static const struct conn_ops body_ops = {
	.on_header = on_header, .on_frame = check_body, .on_close = on_close,
};

/* Memory the allocator holds in mmapped chunks (large blocks). */
static size_t
mapped_bytes(void)
{
	return mallinfo2().hblkhd;
}

/* A frame announced as 3 MiB, of which 100 KiB came: the connection holds
 * far less than 3 MiB for it; then the rest comes and the frame is whole. */
START_TEST(buffered_body_grows_as_it_comes)
{
	const uint64_t len = (3u << 20) + 7, first = 100u << 10;
	struct body_side b = { .len = len };
	struct frame f = { .type = MSG_JOB, .len = len };
	uint8_t hdr[PROTO_FRAME_LEN], *buf = malloc(len);
	uint64_t deadline, i;
	size_t before;
	uv_loop_t loop;
	struct conn *c;
	int ours, far;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + i / 4099);
	b.want = buf;
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	tcp_pair_with(&ours, &far, false, 0);
	ck_assert_int_eq(conn_adopt(&loop, ours, &body_ops, &b, &c), 0);
	conn_set_body_limit(c, PROTO_MAX_BODY);
	before = mapped_bytes();
	frame_encode(&f, hdr);
	far_write(&loop, far, hdr, sizeof(hdr));
	far_write(&loop, far, buf, first);
	for (i = 0; i < 100; i++)
		uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert_uint_lt(mapped_bytes() - before, 1u << 20);
	far_write(&loop, far, buf + first, len - first);
	deadline = uv_hrtime() + 10000000000ull;
	while (!b.whole && uv_hrtime() < deadline)
		uv_run(&loop, UV_RUN_NOWAIT);
	ck_assert(b.whole);
	end_pair(&loop, c, far);
	free(buf);
}
END_TEST

/* A deadline ends the connection (-ETIME) though keepalives come and
 * go all along; cleared, it never fires. */
START_TEST(deadline_ignores_keepalives)
{
	struct frame nop = { .type = MSG_NOP };
	uint8_t hdr[PROTO_FRAME_LEN], sink[4096];
	struct side side = { 0 };
	uint64_t deadline, quiet;
	uv_loop_t loop;
	struct conn *c;
	int ours, far;

	frame_encode(&nop, hdr);
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	tcp_pair_with(&ours, &far, false, 0);
	ck_assert_int_eq(conn_adopt(&loop, ours, &ops, &side, &c), 0);
	conn_keepalive(c, 10, 5000);
	conn_set_deadline(c, 100);
	conn_set_deadline(c, 0);
	quiet = uv_hrtime() + 300000000ull;	/* cleared: 300 ms, no end */
	while (uv_hrtime() < quiet) {
		far_write(&loop, far, hdr, sizeof(hdr));
		while (read(far, sink, sizeof(sink)) > 0)
			;
		usleep(1000);
	}
	ck_assert(!side.closed);
	conn_set_deadline(c, 200);
	deadline = uv_hrtime() + 10000000000ull;
	while (!side.closed && uv_hrtime() < deadline) {
		if (write(far, hdr, sizeof(hdr)) < 0)
			break;
		while (read(far, sink, sizeof(sink)) > 0)
			;
		uv_run(&loop, UV_RUN_NOWAIT);
		usleep(1000);
	}
	ck_assert(side.closed);
	ck_assert_int_eq(side.status, -ETIME);
	end_pair(&loop, c, far);
}
END_TEST

static Suite *
conn_suite(void)
{
	Suite *s = suite_create("conn");
	TCase *tc = tcase_create("queue");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, signal_passes_queued_blocks);
	tcase_add_test(tc, signal_keeps_order_without_blocks);
	tcase_add_loop_test(tc, growing_frame_sends_what_is_ready, 0, 2);
	tcase_add_test(tc, growing_frame_leaves_in_whole_segments);
	tcase_add_test(tc, growing_frame_spanning_files_passes_the_first_on);
	tcase_add_test(tc, acked_once_the_peer_has_everything);
	tcase_add_loop_test(tc, done_with_peer_delivers_our_last_bytes, 0, 2);
	tcase_add_test(tc, buffered_body_grows_as_it_comes);
	tcase_add_test(tc, deadline_ignores_keepalives);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(conn_suite());
}
