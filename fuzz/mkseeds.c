/* SPDX-License-Identifier: MIT */
/*
 * mkseeds DIR - write a starting corpus for fuzz_decoders: one valid
 * input per decoder (selector byte, then the encoding).
 */
#include <stdio.h>
#include <string.h>

#include "util/net.h"
#include "proto/proto.h"
#include "util/wire.h"

static void
put(const char *dir, const char *name, uint8_t sel, const void *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL)
		return;
	fputc(sel, f);
	fwrite(p, 1, n, f);
	fclose(f);
}

int
main(int argc, char **argv)
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

	if (argc != 2)
		return 2;
	net_parse_numeric("10.0.0.3", 7471, &peers[1].addr);
	net_parse_numeric("fd00::5", 7000, &peers[2].addr);
	frame_encode(&fr, hdr);
	put(argv[1], "frame", 0, hdr, sizeof(hdr));
	wbuf_init(&w);
	job_encode(&job, &w);
	put(argv[1], "job", 1, w.data, w.len);
	wbuf_free(&w);
	wbuf_init(&w);
	roster_encode(&ro, &w);
	put(argv[1], "roster", 2, w.data, w.len);
	wbuf_free(&w);
	hello[PROTO_TOKEN_LEN + 7] = 1;
	put(argv[1], "hello", 3, hello, sizeof(hello));
	put(argv[1], "rdma-hello", 4, hello, sizeof(hello));
	put(argv[1], "hostlist", 5, hl, strlen(hl));
	put(argv[1], "topology", 6, topo, strlen(topo));
	put(argv[1], "json", 7, js, strlen(js));
	return 0;
}
