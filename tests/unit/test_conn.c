/*
 * conn's write queue: a signal passes the block frames queued before it
 * that have not begun to leave (a grant or an offer does not wait behind
 * megabytes of blocks), never a frame that has begun, and never another
 * small frame; every frame arrives whole, and in its order otherwise.  Over a real TCP connection on 127.0.0.1 whose far end we
 * read with plain system calls.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "conn.h"
#include "proto.h"
#include "unit.h"

#define NBULK 6
#define BULK (2u << 20)		/* more than the socket's buffers take */
#define MAXF 16

struct side {
	unsigned sent;		/* on_sent of bulk frames */
	bool closed;
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
}

static const struct conn_ops ops = {
	.on_header = on_header, .on_frame = on_frame, .on_sent = on_sent,
	.on_close = on_close,
};

/* A connected pair of TCP sockets on 127.0.0.1: *ours for conn, *far
 * non-blocking, for the test to read; small buffers, so that the kernel
 * takes far less than one BULK frame while nobody reads. */
static void
tcp_pair(int *ours, int *far)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), small = 64 << 10;

	ck_assert_int_ge(l, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(l, 1), 0);
	ck_assert_int_eq(getsockname(l, (struct sockaddr *)&a, &len), 0);
	*far = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(*far, 0);
	ck_assert_int_eq(setsockopt(*far, SOL_SOCKET, SO_RCVBUF, &small,
				    sizeof(small)), 0);
	ck_assert_int_eq(connect(*far, (struct sockaddr *)&a, sizeof(a)), 0);
	*ours = accept(l, NULL, NULL);
	ck_assert_int_ge(*ours, 0);
	ck_assert_int_eq(setsockopt(*ours, SOL_SOCKET, SO_SNDBUF, &small,
				    sizeof(small)), 0);
	close(l);
	ck_assert_int_eq(fcntl(*far, F_SETFL, O_NONBLOCK), 0);
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
	conn_free(c);
	close(far);
	uv_run(&loop, UV_RUN_DEFAULT);
	ck_assert_int_eq(uv_loop_close(&loop), 0);	/* no handle left */
}
END_TEST

/* Into a queue with no block waiting, a signal goes last, as any
 * frame. */
START_TEST(signal_keeps_order_without_blocks)
{
	struct frame s1 = { .type = MSG_SIGNAL, .val = 1 };
	struct frame s2 = { .type = MSG_SIGNAL, .val = 2 };
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
	ck_assert_int_eq(conn_send_copy(c, &nop, NULL), 0);
	ck_assert_int_eq(conn_send_signal(c, &s2), 0);
	ck_assert_uint_eq(read_frames(&loop, far, 3, got), 3);
	ck_assert_uint_eq(got[0].val, 1);
	ck_assert_int_eq(got[1].type, MSG_NOP);
	ck_assert_uint_eq(got[2].val, 2);
	conn_free(c);
	close(far);
	uv_run(&loop, UV_RUN_DEFAULT);
	ck_assert_int_eq(uv_loop_close(&loop), 0);
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
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(conn_suite());
}
