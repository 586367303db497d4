/* SPDX-License-Identifier: MIT */
/*
 * Schedule properties, checked by simulating whole groups step by step:
 * every member holds each block it sends, every member receives every block
 * exactly once, sends and receives pair up, at most one of each per member
 * and step, the step count matches the formula, the k-independent first
 * receive is right, and the peer list is exactly the set of ranks used.
 * Across racks, also: every block crosses each rack boundary once, into
 * the next rack's first rank.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "sched/schedule.h"

/* ck_assert logs every passing check through a pipe; the simulation makes
 * millions of checks, so only failures go to Check. */
#define EXPECT(cond, ...)                                                     \
	do {                                                                  \
		if (!(cond))                                                  \
			ck_abort_msg(__VA_ARGS__);                            \
	} while (0)

struct sim {
	uint32_t n;
	uint64_t k;
	struct sched **s;
	unsigned char *held;	/* n * k */
	struct sched_xfer *snd, *rcv;
	bool *has_snd, *has_rcv;
	bool *first_seen;
	struct sched_xfer *first;
	unsigned char *used;	/* n * n: member i exchanged with j */
	int64_t *last_snd, *last_rcv;	/* n * n: last step i sent to j */
	uint32_t *rack;		/* n: each member's rack; NULL: no racks */
	uint64_t crossed;	/* transfers between racks */
};

static void
sim_init_racks(struct sim *m, enum sched_alg alg, uint32_t n, uint64_t k,
	       const uint32_t *sizes, size_t nracks)
{
	uint32_t r, j, at = 0;

	memset(m, 0, sizeof(*m));
	m->n = n;
	m->k = k;
	m->s = calloc(n, sizeof(*m->s));
	m->held = calloc((size_t)n * k + 1, 1);
	m->snd = calloc(n, sizeof(*m->snd));
	m->rcv = calloc(n, sizeof(*m->rcv));
	m->has_snd = calloc(n, sizeof(bool));
	m->has_rcv = calloc(n, sizeof(bool));
	m->first_seen = calloc(n, sizeof(bool));
	m->first = calloc(n, sizeof(*m->first));
	m->used = calloc((size_t)n * n, 1);
	m->last_snd = malloc((size_t)n * n * sizeof(int64_t));
	m->last_rcv = malloc((size_t)n * n * sizeof(int64_t));
	memset(m->last_snd, 0xff, (size_t)n * n * sizeof(int64_t));
	memset(m->last_rcv, 0xff, (size_t)n * n * sizeof(int64_t));
	for (r = 0; r < n; r++)
		EXPECT(sched_new_racks(alg, n, r, k, sizes, nracks,
				       &m->s[r]) == 0, "sched_new");
	memset(m->held, 1, k);	/* the sender holds everything */
	if (nracks < 2)
		return;
	m->rack = calloc(n, sizeof(*m->rack));
	for (r = 0; r < nracks; r++)
		for (j = 0; j < sizes[r]; j++)
			m->rack[at++] = r;
}

static void
sim_init(struct sim *m, enum sched_alg alg, uint32_t n, uint64_t k)
{
	sim_init_racks(m, alg, n, k, NULL, 0);
}

static void
sim_free(struct sim *m)
{
	uint32_t r;

	for (r = 0; r < m->n; r++)
		sched_free(m->s[r]);
	free(m->s);
	free(m->held);
	free(m->snd);
	free(m->rcv);
	free(m->has_snd);
	free(m->has_rcv);
	free(m->first_seen);
	free(m->first);
	free(m->used);
	free(m->last_snd);
	free(m->last_rcv);
	free(m->rack);
}

static void
sim_check_pairs(struct sim *m, uint64_t step)
{
	uint32_t r, t, f;

	for (r = 0; r < m->n; r++) {
		if (m->has_snd[r]) {
			t = m->snd[r].peer;
			EXPECT(t < m->n && t != r && m->has_rcv[t] &&
					      m->rcv[t].peer == r &&
					      m->rcv[t].block == m->snd[r].block,
				      "n=%u k=%lu step %lu: send %u->%u unmatched",
				      m->n, m->k, step, r, t);
			EXPECT(m->snd[r].block < m->k &&
					      m->held[(size_t)r * m->k +
						      m->snd[r].block],
				      "n=%u k=%lu step %lu: %u sends block "
				      "%lu it does not hold",
				      m->n, m->k, step, r, m->snd[r].block);
			if (m->rack != NULL && m->rack[r] != m->rack[t]) {
				EXPECT(m->rack[t] == m->rack[r] + 1 &&
				       m->rack[t - 1] == m->rack[r],
				       "n=%u k=%lu step %lu: %u (rack %u) sends "
				       "to %u (rack %u), not the next leader",
				       m->n, m->k, step, r, m->rack[r], t,
				       m->rack[t]);
				m->crossed++;
			}
		}
		if (m->has_rcv[r]) {
			f = m->rcv[r].peer;
			EXPECT(f < m->n && m->has_snd[f] &&
					      m->snd[f].peer == r,
				      "n=%u k=%lu step %lu: receive %u<-%u "
				      "unmatched", m->n, m->k, step, r, f);
		}
	}
}

static void
sim_apply_receives(struct sim *m, uint64_t step)
{
	uint32_t r;
	unsigned char *h;

	for (r = 0; r < m->n; r++) {
		if (!m->has_rcv[r])
			continue;
		h = &m->held[(size_t)r * m->k + m->rcv[r].block];
		EXPECT(!*h, "n=%u k=%lu step %lu: %u receives block %lu "
			      "twice", m->n, m->k, step, r, m->rcv[r].block);
		*h = 1;
		m->used[(size_t)r * m->n + m->rcv[r].peer] = 1;
		m->last_rcv[(size_t)r * m->n + m->rcv[r].peer] = (int64_t)step;
		m->last_snd[(size_t)m->rcv[r].peer * m->n + r] = (int64_t)step;
		m->used[(size_t)m->rcv[r].peer * m->n + r] = 1;
		if (!m->first_seen[r]) {
			m->first_seen[r] = true;
			m->first[r] = m->rcv[r];
		}
	}
}

static void
sim_check_end(struct sim *m, enum sched_alg alg)
{
	uint32_t r, j, peers[64], *buf;
	uint64_t b;
	size_t np, i, cnt;
	struct sched_xfer x;

	for (r = 0; r < m->n; r++)
		for (b = 0; b < m->k; b++)
			EXPECT(m->held[(size_t)r * m->k + b],
				      "n=%u k=%lu: %u never gets block %lu",
				      m->n, m->k, r, b);
	for (r = 1; r < m->n && m->k > 0 && m->rack == NULL; r++) {
		EXPECT(sched_first_recv(alg, m->n, r, &x), "no first receive");
		EXPECT(x.peer == m->first[r].peer &&
				      (x.block < m->k - 1 ? x.block : m->k - 1) ==
					      m->first[r].block,
			      "n=%u k=%lu: first receive of %u predicted "
			      "%u/%lu, is %u/%lu", m->n, m->k, r, x.peer,
			      x.block, m->first[r].peer, m->first[r].block);
	}
	for (r = 0; r < m->n; r++) {
		np = sched_peers(m->s[r], NULL, 0);
		buf = np <= 64 ? peers : malloc(np * sizeof(*buf));
		EXPECT(sched_peers(m->s[r], buf, np) == np, "peer count");
		for (i = 0, cnt = 0, j = 0; j < m->n; j++) {
			if (!m->used[(size_t)r * m->n + j])
				continue;
			cnt++;
			EXPECT(i < np && buf[i] == j,
				      "n=%u k=%lu: peers of %u miss %u", m->n,
				      m->k, r, j);
			i++;
		}
		EXPECT(cnt == np, "n=%u k=%lu: %u lists %zu peers, "
			      "uses %zu", m->n, m->k, r, np, cnt);
		if (buf != peers)
			free(buf);
	}
}

/* sched_last_with agrees with the simulation. */
static void
sim_check_last(struct sim *m, uint32_t r)
{
	uint32_t j;
	uint64_t step;
	int64_t want;
	bool has;

	for (j = 0; j < m->n; j++) {
		want = m->last_snd[(size_t)r * m->n + j];
		has = sched_last_with(m->s[r], j, true, &step);
		EXPECT(has == (want >= 0) && (!has || (int64_t)step == want),
		       "n=%u k=%lu: last send %u->%u", m->n, m->k, r, j);
		want = m->last_rcv[(size_t)r * m->n + j];
		has = sched_last_with(m->s[r], j, false, &step);
		EXPECT(has == (want >= 0) && (!has || (int64_t)step == want),
		       "n=%u k=%lu: last receive %u<-%u", m->n, m->k, r, j);
	}
}

/* The next_send/next_recv queries agree with the per-step ones. */
static void
sim_check_next(struct sim *m, uint32_t r)
{
	uint64_t j, step = 0, rstep = 0, T = sched_steps(m->s[r]);
	struct sched_xfer x, y;
	bool more = sched_next_send(m->s[r], 0, &step, &y);
	bool rmore = sched_next_recv(m->s[r], 0, &rstep, &y);

	for (j = 0; j < T; j++) {
		if (sched_send(m->s[r], j, &x)) {
			EXPECT(more && step == j, "next send at %lu", j);
			more = sched_next_send(m->s[r], j + 1, &step, &y);
		}
		if (sched_recv(m->s[r], j, &x)) {
			EXPECT(rmore && rstep == j, "next recv at %lu", j);
			rmore = sched_next_recv(m->s[r], j + 1, &rstep, &y);
		}
	}
	EXPECT(!more && !rmore, "transfers after the end");
}

/* Every member's transfers, step by step up to T, checked and applied. */
static void
sim_run(struct sim *m, uint64_t T)
{
	uint64_t step;
	uint32_t r;

	for (step = 0; step < T; step++) {
		for (r = 0; r < m->n; r++) {
			m->has_snd[r] = sched_send(m->s[r], step, &m->snd[r]);
			m->has_rcv[r] = sched_recv(m->s[r], step, &m->rcv[r]);
		}
		EXPECT(!m->has_rcv[0], "the sender receives");
		sim_check_pairs(m, step);
		sim_apply_receives(m, step);
	}
}

static uint64_t
expected_steps(enum sched_alg alg, uint32_t n, uint64_t k)
{
	unsigned l = 0, cl;

	while ((1u << (l + 1)) <= n)
		l++;
	cl = (1u << l) == n ? l : l + 1;
	if (n < 2 || k == 0)
		return 0;
	switch (alg) {
	case SCHED_BINOMIAL:
		return (1u << l) == n ? k + l - 1 : k + l;
	case SCHED_CHAIN:
		return k + n - 2;
	case SCHED_TREE:
		return k * cl;
	default:
		return k * (n - 1);
	}
}

static void
simulate(enum sched_alg alg, uint32_t n, uint64_t k)
{
	struct sim m;
	uint64_t T;
	uint32_t r;

	sim_init(&m, alg, n, k);
	T = sched_steps(m.s[0]);
	EXPECT(T == expected_steps(alg, n, k), "%s n=%u k=%lu: %lu "
		      "steps, expected %lu", sched_alg_name(alg), n, k, T,
		      expected_steps(alg, n, k));
	sim_run(&m, T);
	ck_assert(!sched_send(m.s[0], T, &m.snd[0]));
	sim_check_end(&m, alg);
	for (r = 0; r < n && n <= 40; r++) {
		sim_check_next(&m, r);
		sim_check_last(&m, r);
	}
	sim_free(&m);
}

/* Across racks: the checks of simulate() but the step formula, and each
 * block crosses each boundary once; the steps stay within a few per rack
 * of k + log2 n. */
static void
simulate_racks(const uint32_t *sizes, size_t nracks, uint64_t k)
{
	struct sim m;
	uint64_t T, bound;
	uint32_t r, n = 0;
	size_t i;

	for (i = 0; i < nracks; i++)
		n += sizes[i];
	sim_init_racks(&m, SCHED_BINOMIAL, n, k, sizes, nracks);
	T = sched_steps(m.s[0]);
	for (r = 1; r < n; r++)
		EXPECT(sched_steps(m.s[r]) == T, "members disagree on steps");
	sim_run(&m, T);
	sim_check_end(&m, SCHED_BINOMIAL);
	EXPECT(m.crossed == k * (nracks - 1), "n=%u k=%lu: %lu transfers "
	       "between racks, want %lu", n, k, m.crossed, k * (nracks - 1));
	for (bound = k + 2, i = 0; i < nracks; i++)
		bound += 3 + 2 * (uint64_t)(32 - __builtin_clz(sizes[i]));
	EXPECT(k == 0 || T <= bound, "n=%u k=%lu: %lu steps, more than %lu",
	       n, k, T, bound);
	for (r = 0; r < n && n <= 40; r++) {
		sim_check_next(&m, r);
		sim_check_last(&m, r);
	}
	sim_free(&m);
}

static const uint64_t many_k[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 16,
				   17, 31, 32, 33, 64, 100 };

START_TEST(binomial_all_sizes)
{
	uint32_t n;
	size_t i;

	for (n = 1; n <= 300; n++)
		for (i = 0; i < sizeof(many_k) / sizeof(many_k[0]); i++)
			simulate(SCHED_BINOMIAL, n, many_k[i]);
}
END_TEST

START_TEST(binomial_large_k)
{
	static const uint32_t sizes[] = { 2, 3, 5, 8, 13, 16, 17, 31, 64, 100 };
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		simulate(SCHED_BINOMIAL, sizes[i], 257);
		simulate(SCHED_BINOMIAL, sizes[i], 1000);
	}
}
END_TEST

START_TEST(other_algorithms)
{
	static const uint64_t ks[] = { 0, 1, 2, 3, 5 };
	enum sched_alg alg = (enum sched_alg)(_i + 1);
	uint32_t n;
	size_t i;

	for (n = 1; n <= 300; n++)
		for (i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
			simulate(alg, n, ks[i]);
	simulate(alg, 13, 64);
	simulate(alg, 16, 100);
}
END_TEST

START_TEST(racks)
{
	static const uint32_t layouts[][5] = {
		{ 4, 4 }, { 8, 8 }, { 1, 5 }, { 5, 1 }, { 1, 1, 1 },
		{ 3, 1, 1, 7 }, { 9, 8, 8, 8 }, { 2, 17, 4 }, { 16, 16, 16, 16 },
		{ 6, 3, 5, 2, 7 },
	};
	size_t i, nr;
	size_t j;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		for (nr = 0; nr < 5 && layouts[i][nr] != 0; nr++)
			;
		for (j = 0; j < sizeof(many_k) / sizeof(many_k[0]); j++)
			simulate_racks(layouts[i], nr, many_k[j]);
		simulate_racks(layouts[i], nr, 1000);
	}
}
END_TEST

START_TEST(formula_at_scale)
{
	struct sched *s;

	/* 2^20 members, 2^40 blocks: no overflow, no scan */
	ck_assert_int_eq(sched_new(SCHED_BINOMIAL, 1u << 20, 12345,
				   1ull << 40, &s), 0);
	ck_assert_uint_eq(sched_steps(s), (1ull << 40) + 19);
	sched_free(s);
	ck_assert_int_eq(sched_new(SCHED_BINOMIAL, 1000, 999, 70000, &s), 0);
	ck_assert_uint_eq(sched_steps(s), 70000 + 9);
	sched_free(s);
}
END_TEST

START_TEST(bad_arguments)
{
	struct sched *s = (struct sched *)1;
	enum sched_alg alg;

	ck_assert_int_lt(sched_new(SCHED_NALG, 4, 0, 1, &s), 0);
	ck_assert_ptr_null(s);
	ck_assert_int_lt(sched_new(SCHED_BINOMIAL, 0, 0, 1, &s), 0);
	ck_assert_int_lt(sched_new(SCHED_BINOMIAL, 4, 4, 1, &s), 0);
	ck_assert_int_lt(sched_new(SCHED_BINOMIAL, SCHED_MAX_MEMBERS + 1, 0, 1,
				   &s), 0);
	sched_free(NULL);
	ck_assert_int_eq(sched_alg_parse("chain", &alg), 0);
	ck_assert_int_eq(alg, SCHED_CHAIN);
	ck_assert_int_eq(sched_alg_parse("pipeline", &alg), 0);
	ck_assert_int_eq(alg, SCHED_BINOMIAL);
	ck_assert_int_lt(sched_alg_parse("bogus", &alg), 0);
	ck_assert_str_eq(sched_alg_name(SCHED_SEQUENTIAL), "sequential");
}
END_TEST

/* The chosen block size and schedule: the chain over TCP when its fill is
 * at most a sixteenth of the data's steps, the binomial pipeline
 * otherwise and over verbs. */
/* Who feeds a member half its blocks or more: in the binomial pipeline
 * of 7 members and 96 blocks rank 5 gets 48 from rank 2 and rank 6 48
 * from rank 3, while rank 1's come from three peers (25, 24, 47); the
 * sender gets none; in a chain each member's one feeder is the one
 * before. */
START_TEST(main_source)
{
	static const struct { uint32_t rank; bool has; uint32_t peer; } want[] = {
		{ 0, false, 0 }, { 1, false, 0 }, { 5, true, 2 }, { 6, true, 3 },
	};
	struct sched *s;
	uint32_t peer;
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ck_assert_int_eq(sched_new(SCHED_BINOMIAL, 7, want[i].rank, 96,
					   &s), 0);
		ck_assert(sched_main_source(s, &peer) == want[i].has);
		if (want[i].has)
			ck_assert_uint_eq(peer, want[i].peer);
		sched_free(s);
	}
	ck_assert_int_eq(sched_new(SCHED_CHAIN, 7, 4, 96, &s), 0);
	ck_assert(sched_main_source(s, &peer));
	ck_assert_uint_eq(peer, 3);
	sched_free(s);
}
END_TEST

START_TEST(auto_choices)
{
	const uint64_t mib = 1ull << 20;

	const uint32_t kib = 1u << 10;

	/* fill and drain: log2 n - 1 steps, n - 2 */
	ck_assert_uint_eq(sched_total_steps(SCHED_BINOMIAL, 16, 1024), 1027);
	ck_assert_uint_eq(sched_total_steps(SCHED_CHAIN, 16, 1024), 1038);
	ck_assert_uint_eq(sched_total_steps(SCHED_BINOMIAL, 0, 1024), 0);
	/* the emulated clusters' best sizes (docs/performance.md) */
	ck_assert_uint_eq(sched_auto_block(SCHED_BINOMIAL, mib, 16,
					   SCHED_LINK_NET), 32 * kib);
	ck_assert_uint_eq(sched_auto_block(SCHED_BINOMIAL, 8 * mib, 64,
					   SCHED_LINK_NET), 64 * kib);
	/* the chain over TCP cuts through: the largest blocks, 128 at
	 * least (the slow-host rules need some) */
	ck_assert_uint_eq(sched_auto_block(SCHED_CHAIN, 128 * mib, 16,
					   SCHED_LINK_NET), mib);
	ck_assert_uint_eq(sched_auto_block(SCHED_CHAIN, 64 * mib, 32,
					   SCHED_LINK_NET), 512 * kib);
	ck_assert_uint_eq(sched_auto_block(SCHED_CHAIN, 12 * mib, 7,
					   SCHED_LINK_NET), 64 * kib);
	ck_assert_uint_eq(sched_auto_block(SCHED_CHAIN, 4096 * mib, 4,
					   SCHED_LINK_NET), mib);
	ck_assert_uint_eq(sched_auto_block(SCHED_CHAIN, mib, 3,
					   SCHED_LINK_NET), 64 * kib);	/* at least */
	/* over verbs it stores each block: the fill counts */
	ck_assert_uint_eq(sched_auto_block(SCHED_CHAIN, 128 * mib, 16,
					   SCHED_LINK_VERBS), 256 * kib);
	/* tiny files: the smallest; one receiver: the largest */
	ck_assert_uint_eq(sched_auto_block(SCHED_BINOMIAL, 1024, 64,
					   SCHED_LINK_NET), 16 * kib);
	ck_assert_uint_eq(sched_auto_block(SCHED_BINOMIAL, 256 * mib, 2,
					   SCHED_LINK_NET), mib);
	/* 1,024 members on this machine share its cores */
	ck_assert_uint_eq(sched_auto_block(SCHED_BINOMIAL, 4 * mib, 1025,
					   SCHED_LINK_LOOPBACK), mib);
	ck_assert_uint_eq(sched_auto_block(SCHED_BINOMIAL, 4 * mib, 1025,
					   SCHED_LINK_NET), 32 * kib);
	ck_assert_uint_eq(sched_auto_block(SCHED_BINOMIAL, 1024, 1024,
					   SCHED_LINK_VERBS), 256 * kib);
	ck_assert_uint_eq(sched_auto_block(SCHED_TREE, 1024, 4,
					   SCHED_LINK_NET), mib);
	/* 16 hosts, 128 MiB; 64 hosts: from 62 x 16 KiB */
	ck_assert_int_eq(sched_auto_alg(128 * mib, 16, SCHED_LINK_NET), SCHED_CHAIN);
	ck_assert_int_eq(sched_auto_alg(128 * mib, 16, SCHED_LINK_VERBS), SCHED_BINOMIAL);
	ck_assert_int_eq(sched_auto_alg(mib, 64, SCHED_LINK_NET), SCHED_CHAIN);
	ck_assert_int_eq(sched_auto_alg(62 * 16 * kib, 64, SCHED_LINK_NET),
			 SCHED_CHAIN);
	ck_assert_int_eq(sched_auto_alg(62 * 16 * kib - 1, 64,
					 SCHED_LINK_NET),
			 SCHED_BINOMIAL);
	/* on this machine the members share the cores: the pipeline */
	ck_assert_int_eq(sched_auto_alg(64 * mib, 17, SCHED_LINK_LOOPBACK),
			 SCHED_BINOMIAL);
	ck_assert_int_eq(sched_auto_alg(4096 * mib, 4, SCHED_LINK_LOOPBACK),
			 SCHED_BINOMIAL);
	ck_assert_int_eq(sched_auto_alg(4 * mib, 17, SCHED_LINK_LOOPBACK),
			 SCHED_BINOMIAL);
	ck_assert_int_eq(sched_auto_alg(4 * mib, 17, SCHED_LINK_NET),
			 SCHED_CHAIN);
	/* 1,024 hosts, 4 MiB; one host; two */
	ck_assert_int_eq(sched_auto_alg(4 * mib, 1025, SCHED_LINK_NET),
			 SCHED_BINOMIAL);
	ck_assert_int_eq(sched_auto_alg(4096 * mib, 2, SCHED_LINK_NET), SCHED_BINOMIAL);
	ck_assert_int_eq(sched_auto_alg(16 * kib, 3, SCHED_LINK_NET),
			 SCHED_CHAIN);
	ck_assert_int_eq(sched_auto_alg(16 * kib - 1, 3, SCHED_LINK_NET),
			 SCHED_BINOMIAL);
}
END_TEST

/* ---------------------------------------------------------------------
 * The queries over many steps (sched_last_with, sched_next_send/recv,
 * sched_peers) against a reference that looks at every step, as the
 * schedule once did: O(steps) a query, which a daemon paid on its loop
 * for each of a job's neighbours (2^32 blocks: 66 s).
 */

/* Every step of one member's schedule, from the per-step queries. */
struct ref {
	uint64_t steps;
	bool *has_snd, *has_rcv;
	struct sched_xfer *snd, *rcv;
	uint64_t *next_snd, *next_rcv;	/* the first step >= j that holds
					 * one, or steps */
	int64_t *last_snd, *last_rcv;	/* [peer]: the last step with it,
					 * or -1 */
};

static void
ref_init(struct ref *f, const struct sched *s, uint32_t n)
{
	uint64_t j;

	f->steps = sched_steps(s);
	f->has_snd = calloc(f->steps + 1, sizeof(bool));
	f->has_rcv = calloc(f->steps + 1, sizeof(bool));
	f->snd = calloc(f->steps + 1, sizeof(*f->snd));
	f->rcv = calloc(f->steps + 1, sizeof(*f->rcv));
	f->next_snd = calloc(f->steps + 1, sizeof(*f->next_snd));
	f->next_rcv = calloc(f->steps + 1, sizeof(*f->next_rcv));
	ck_assert(f->has_snd && f->has_rcv && f->snd && f->rcv &&
		  f->next_snd && f->next_rcv);
	for (j = 0; j < f->steps; j++) {
		f->has_snd[j] = sched_send(s, j, &f->snd[j]);
		f->has_rcv[j] = sched_recv(s, j, &f->rcv[j]);
	}
	f->next_snd[f->steps] = f->next_rcv[f->steps] = f->steps;
	for (j = f->steps; j-- > 0;) {
		f->next_snd[j] = f->has_snd[j] ? j : f->next_snd[j + 1];
		f->next_rcv[j] = f->has_rcv[j] ? j : f->next_rcv[j + 1];
	}
	f->last_snd = malloc(n * sizeof(*f->last_snd));
	f->last_rcv = malloc(n * sizeof(*f->last_rcv));
	ck_assert(f->last_snd && f->last_rcv);
	memset(f->last_snd, 0xff, n * sizeof(*f->last_snd));
	memset(f->last_rcv, 0xff, n * sizeof(*f->last_rcv));
	for (j = 0; j < f->steps; j++) {
		if (f->has_snd[j])
			f->last_snd[f->snd[j].peer] = (int64_t)j;
		if (f->has_rcv[j])
			f->last_rcv[f->rcv[j].peer] = (int64_t)j;
	}
}

static void
ref_free(struct ref *f)
{
	free(f->has_snd);
	free(f->has_rcv);
	free(f->snd);
	free(f->rcv);
	free(f->next_snd);
	free(f->next_rcv);
	free(f->last_snd);
	free(f->last_rcv);
}

/* The old sched_last_with: the last step with the peer, as a scan back
 * from the end over every step finds it (swept once, in ref_init). */
static bool
ref_last_with(const struct ref *f, uint32_t peer, bool send, uint64_t *step)
{
	int64_t last = send ? f->last_snd[peer] : f->last_rcv[peer];

	if (last < 0)
		return false;
	*step = (uint64_t)last;
	return true;
}

/* The old sched_next_send/recv: the first step from `from` on that
 * holds a transfer, as a scan forward over every step finds it (swept
 * once, backwards, in ref_init). */
static bool
ref_next(const struct ref *f, uint64_t from, bool send, uint64_t *step,
	 struct sched_xfer *out)
{
	const uint64_t *next = send ? f->next_snd : f->next_rcv;

	if (from >= f->steps || next[from] == f->steps)
		return false;
	*step = next[from];
	*out = send ? f->snd[*step] : f->rcv[*step];
	return true;
}

/* The ranks the member exchanges with, ascending, from every step. */
static size_t
ref_peers(const struct ref *f, uint32_t n, uint32_t *out)
{
	unsigned char *used = calloc(n, 1);
	size_t count = 0;
	uint64_t j;
	uint32_t r;

	ck_assert(used != NULL);
	for (j = 0; j < f->steps; j++) {
		if (f->has_snd[j])
			used[f->snd[j].peer] = 1;
		if (f->has_rcv[j])
			used[f->rcv[j].peer] = 1;
	}
	for (r = 0; r < n; r++)
		if (used[r])
			out[count++] = r;
	free(used);
	return count;
}

static const char *
sched_what(enum sched_alg alg, size_t nracks)
{
	return nracks >= 2 ? "racks" : sched_alg_name(alg);
}

/* Member `rank`'s queries, for every peer (and one past the last), both
 * directions and every step to start from, agree with the reference. */
static void
check_queries(enum sched_alg alg, uint32_t n, uint32_t rank, uint64_t k,
	      const uint32_t *sizes, size_t nracks)
{
	uint32_t *want = calloc(n, sizeof(*want));
	uint32_t *got = calloc(n, sizeof(*got));
	uint64_t j, fs, rs;
	struct sched_xfer fx, rx;
	struct sched *s;
	struct ref f;
	size_t np;
	uint32_t p;
	bool fh, rh;
	int d;

	ck_assert(want != NULL && got != NULL);
	EXPECT(sched_new_racks(alg, n, rank, k, sizes, nracks, &s) == 0,
	       "sched_new");
	ref_init(&f, s, n);
	for (p = 0; p <= n; p++) {
		for (d = 0; d < 2; d++) {
			fh = sched_last_with(s, p, d, &fs);
			rh = p < n && ref_last_with(&f, p, d, &rs);
			EXPECT(fh == rh && (!fh || fs == rs),
			       "%s n=%u k=%lu: last %s %u-%u: %d/%lu, the scan "
			       "says %d/%lu", sched_what(alg, nracks), n, k,
			       d ? "send" : "receive", rank, p, fh,
			       fh ? fs : 0, rh, rh ? rs : 0);
		}
	}
	for (j = 0; j <= f.steps + 1; j++) {
		for (d = 0; d < 2; d++) {
			fh = d ? sched_next_send(s, j, &fs, &fx)
			       : sched_next_recv(s, j, &fs, &fx);
			rh = ref_next(&f, j, d, &rs, &rx);
			EXPECT(fh == rh && (!fh || (fs == rs &&
						   fx.peer == rx.peer &&
						   fx.block == rx.block)),
			       "%s n=%u k=%lu rank %u: next %s from %lu: "
			       "%d at %lu, the scan says %d at %lu",
			       sched_what(alg, nracks), n, k, rank,
			       d ? "send" : "receive", j, fh, fh ? fs : 0,
			       rh, rh ? rs : 0);
		}
	}
	np = ref_peers(&f, n, want);
	EXPECT(sched_peers(s, got, n) == np &&
	       memcmp(got, want, np * sizeof(*got)) == 0,
	       "%s n=%u k=%lu rank %u: peers", sched_what(alg, nracks), n, k,
	       rank);
	ref_free(&f);
	sched_free(s);
	free(want);
	free(got);
}

/* Every group size to 72 (every shape of twins up to 64 + 8), every
 * member, with k about the group's log: 1, 2, 3, l, l + 1, 2l + 3, where
 * the binomial pipeline's queries go from looking at every step to
 * looking at its ends (5l + 4 to 5l + 6), and 100. */
START_TEST(queries_match_full_scan)
{
	enum sched_alg alg = (enum sched_alg)_i;
	uint64_t ks[10];
	uint32_t n, r, l;
	size_t i;

	for (n = 1; n <= 72; n++) {
		for (l = 0; (2u << l) <= n; l++)
			;
		ks[0] = 1, ks[1] = 2, ks[2] = 3, ks[3] = l ? l : 4;
		ks[4] = l + 1, ks[5] = 2 * l + 3, ks[6] = 5 * l + 4;
		ks[7] = 5 * l + 5, ks[8] = 5 * l + 6, ks[9] = 100;
		for (i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
			for (r = 0; r < n; r++)
				check_queries(alg, n, r, ks[i], NULL, 0);
	}
}
END_TEST

START_TEST(racked_queries_match_full_scan)
{
	static const uint32_t layouts[][5] = {
		{ 1, 1 }, { 4, 4 }, { 1, 5 }, { 5, 1 }, { 3, 1, 1, 7 },
		{ 9, 8, 8, 8 }, { 2, 17, 4 }, { 6, 3, 5, 2, 7 },
	};
	static const uint64_t ks[] = { 1, 2, 3, 7, 30, 100 };
	size_t i, j, nr;
	uint32_t n, r;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		for (nr = 0, n = 0; nr < 5 && layouts[i][nr] != 0; nr++)
			n += layouts[i][nr];
		for (j = 0; j < sizeof(ks) / sizeof(ks[0]); j++)
			for (r = 0; r < n; r++)
				check_queries(SCHED_BINOMIAL, n, r, ks[j],
					      layouts[i], nr);
	}
}
END_TEST

/* The member's first send, if any, goes to a peer it sends to last at
 * that step or later; if none, it sends to none. */
static void
check_first_send(const struct sched *s, uint32_t n, uint32_t rank)
{
	struct sched_xfer x;
	uint64_t first, last;
	uint32_t p;

	if (sched_next_send(s, 0, &first, &x)) {
		ck_assert(sched_last_with(s, x.peer, true, &last));
		ck_assert_uint_ge(last, first);
		return;
	}
	for (p = 0; p < n; p++)
		ck_assert_msg(!sched_last_with(s, p, true, &last),
			      "rank %u sends to %u but has no first send",
			      rank, p);
}

/* 2^37 blocks (64 TiB in 512-byte blocks): what a member asks of its
 * schedule to set up (eng_new: its peers, and the last step with each
 * in both directions, for every rank, neighbour or not) and to start
 * (its first send and receive, or that there is none).  Nothing is
 * timed: scanning the steps, as the queries once did, takes 35 minutes
 * a query, and Check's per-test timeout (CK_DEFAULT_TIMEOUT, 4 s unless
 * set) fails the test long before. */
START_TEST(queries_at_2e37_blocks)
{
	static const uint32_t sizes[] = { 2, 3, 7, 64, 100, 1000 };
	const uint64_t k = 1ull << 37;
	uint32_t peers[64], n, p, rank, ranks[4];
	struct sched_xfer x;
	struct sched *s;
	uint64_t step;
	size_t i, r;
	int alg;
	bool any;

	for (alg = 0; alg < SCHED_NALG; alg++) {
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			n = sizes[i];
			ranks[0] = 0, ranks[1] = 1, ranks[2] = n / 2 + 1;
			ranks[3] = n - 1;
			for (r = 0; r < 4; r++) {
				rank = ranks[r] < n ? ranks[r] : n - 1;
				ck_assert_int_eq(sched_new((enum sched_alg)alg,
							   n, rank, k, &s), 0);
				ck_assert_uint_le(sched_peers(s, peers, 64), n);
				for (p = 0, any = false; p < n; p++) {
					any |= sched_last_with(s, p, true,
							       &step);
					any |= sched_last_with(s, p, false,
							       &step);
				}
				ck_assert(any);
				check_first_send(s, n, rank);
				ck_assert(sched_next_recv(s, 0, &step, &x) ==
					  (rank != 0));
				sched_main_source(s, &p);
				sched_free(s);
			}
		}
	}
	/* the closed forms where they are easy to state */
	ck_assert_int_eq(sched_new(SCHED_BINOMIAL, 2, 1, k, &s), 0);
	ck_assert(sched_last_with(s, 0, false, &step));
	ck_assert_uint_eq(step, k - 1);
	ck_assert(!sched_last_with(s, 0, true, &step));
	ck_assert(!sched_next_send(s, 0, &step, &x));
	sched_free(s);
	ck_assert_int_eq(sched_new(SCHED_BINOMIAL, 2, 0, k, &s), 0);
	ck_assert(!sched_last_with(s, 1, false, &step));
	ck_assert(!sched_next_recv(s, 0, &step, &x));
	sched_free(s);
}
END_TEST

static Suite *
sched_suite(void)
{
	Suite *s = suite_create("sched");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, binomial_all_sizes);
	tcase_add_test(tc, binomial_large_k);
	tcase_add_loop_test(tc, other_algorithms, 0, 3);
	tcase_add_test(tc, racks);
	tcase_add_test(tc, formula_at_scale);
	tcase_add_test(tc, bad_arguments);
	tcase_add_test(tc, auto_choices);
	tcase_add_test(tc, main_source);
	tcase_add_loop_test(tc, queries_match_full_scan, 0, SCHED_NALG);
	tcase_add_test(tc, racked_queries_match_full_scan);
	suite_add_tcase(s, tc);
	/* Check's default timeout: the old scans take minutes */
	tc = tcase_create("scale");
	tcase_add_test(tc, queries_at_2e37_blocks);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(sched_suite());
}
