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
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "json.h"
#include "proto.h"
#include "wire.h"
#include "xverbs.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame f;
	struct hello h;
	struct xvb_hello xh;
	char *s;

	if (size < 1)
		return 0;
	switch (data[0] % 7) {
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
		xvb_parse_hello(data + 1, (uint8_t)(size - 1 > 255 ? 255
								  : size - 1),
				&xh);
		break;
	case 5:
		fuzz_hostlist(data + 1, size - 1);
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
