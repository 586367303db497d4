/* SPDX-License-Identifier: MIT */
/*
 * fuzz_decoders - libFuzzer target for everything rdmcp decodes from the
 * network or the command line: frame headers, jobs, rosters, data and RDMA
 * hellos, host lists, and the JSON encoder.  The first byte picks the
 * decoder; the rest is its input.  Decoded objects are re-encoded where
 * an encoder exists, and must decode again to the same thing.
 *
 *   make fuzz                      (FUZZ_SECONDS, default 60)
 */
#include <stdint.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "hosts/hostlist.h"
#include "hosts/topo.h"
#include "util/json.h"
#include "proto/proto.h"
#include "util/wire.h"
#include "transport/verbs/xv.h"

static void
fuzz_job(const uint8_t *p, size_t n)
{
	struct rd_err err = { 0 };
	struct job *job = NULL, *again = NULL;
	struct wbuf w;

	if (job_decode(p, n, &job, &err) < 0)
		return;
	wbuf_init(&w);
	if (job_encode(job, &w) == 0 && job_decode(w.data, w.len, &again,
						   &err) == 0) {
		if (again->nfiles != job->nfiles || again->total != job->total ||
		    again->block_size != job->block_size)
			abort();
		job_free(again);
	}
	wbuf_free(&w);
	job_free(job);
}

static void
fuzz_roster(const uint8_t *p, size_t n)
{
	struct rd_err err = { 0 };
	struct roster *ro = NULL, *again = NULL;
	struct wbuf w;

	if (roster_decode(p, n, &ro, &err) < 0)
		return;
	wbuf_init(&w);
	if (roster_encode(ro, &w) == 0 && roster_decode(w.data, w.len, &again,
							&err) == 0) {
		if (again->n != ro->n || again->rank != ro->rank)
			abort();
		roster_free(again);
	}
	wbuf_free(&w);
	roster_free(ro);
}

static void
fuzz_hostlist(const uint8_t *p, size_t n)
{
	struct hostlist hl = { .max = 5000 }, back = { 0 };
	struct rd_err err = { 0 };
	char *spec = malloc(n + 1), buf[1 << 16];
	long need;

	if (spec == NULL)
		return;
	memcpy(spec, p, n);
	spec[n] = '\0';
	if (n < 4096 && hostlist_parse(&hl, spec, &err) == 0) {
		hostlist_dedupe(&hl);
		need = hostlist_compress(hl.hosts, hl.n, NULL, buf, sizeof(buf));
		if (need >= 0 && need < (long)sizeof(buf)) {
			/* the compressed form expands to the same set */
			if (hostlist_parse(&back, buf, &err) != 0 ||
			    (hostlist_dedupe(&back), back.n != hl.n))
				abort();
			hostlist_exclude(&back, &hl);
			if (back.n != 0)
				abort();
		}
	}
	hostlist_clear(&hl);
	hostlist_clear(&back);
	free(spec);
}

/* A topology file: parsed, looked up, a host list put in its order.
 * One bracket and short numbers at most: a range of a million hosts is
 * valid, and would only make the fuzzer slow. */
static void
fuzz_topo(const uint8_t *p, size_t n)
{
	char names[4][16] = { "n1", "node07:9", "[fe80::1]:7", "a.b.c" };
	char *hosts[4] = { names[0], names[1], names[2], names[3] };
	struct rd_err err = { 0 };
	struct topo *t = NULL;
	char *text = malloc(n + 1);
	int rack_of[4];
	size_t i, digits = 0, brackets = 0;

	if (text == NULL || n > 1024)
		goto out;
	for (i = 0; i < n; i++) {
		digits = isdigit(p[i]) ? digits + 1 : 0;
		brackets += p[i] == '[';
		if (digits > 3 || brackets > 1)
			goto out;
	}
	memcpy(text, p, n);
	text[n] = '\0';
	if (topo_parse(text, "fuzz", &t, &err) == 0) {
		for (i = 0; i < 4; i++)
			if (topo_rack_of(t, hosts[i]) >= (int)topo_racks(t))
				abort();
		if (topo_order(t, 0, hosts, 4, rack_of) != 0)
			abort();
	}
out:
	topo_free(t);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame f;
	struct hello h;
	struct xv_hello xh;
	char *s;

	if (size < 1)
		return 0;
	switch (data[0] % 8) {
	case 0:
		if (size - 1 >= PROTO_FRAME_LEN)
			frame_decode(data + 1, &f);
		break;
	case 1:
		fuzz_job(data + 1, size - 1);
		break;
	case 2:
		fuzz_roster(data + 1, size - 1);
		break;
	case 3:
		hello_decode(data + 1, size - 1, &h);
		break;
	case 4:
		xv_parse_hello(data + 1, (uint8_t)(size - 1 > 255 ? 255
								  : size - 1),
				&xh);
		break;
	case 5:
		fuzz_hostlist(data + 1, size - 1);
		break;
	case 6:
		fuzz_topo(data + 1, size - 1);
		break;
	default:
		s = malloc(size);
		if (s != NULL) {
			memcpy(s, data + 1, size - 1);
			s[size - 1] = '\0';
			free(json_quote(s));
			free(s);
		}
		break;
	}
	return 0;
}
