/* SPDX-License-Identifier: MIT */
/*
 * group - the sender's group (see push_int.h): once the hosts have
 * answered, the members are ranked, the transport chosen, START sent and
 * rank 0's engine run; when every block is out and no source changed, the
 * members get their go.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "member/member.h"
#include "send/push_int.h"

static void maybe_go(struct push *p);

/* A source changed while it was sent: the group is aborted, and the push
 * says so even when a retry then sends the new content. */
static void
note_source_change(struct push *p, const char *why)
{
	snprintf(p->sum->source_changed, sizeof(p->sum->source_changed), "%s",
		 why);
}

static void
on_engine_complete(void *ctx)
{
}

static void
on_engine_done(void *ctx, int status, uint32_t peer)
{
	struct push *p = ctx;
	struct rd_err changed = { 0 };

	p->eng_done = true;
	p->sent_all = status == 0;
	if (status == 0) {
		maybe_go(p);
	} else if (store_check_sources(p->st, &changed) < 0) {
		/* e.g. sending from a source cut short fails with EFAULT */
		note_source_change(p, changed.msg);
		push_abort_group(p, NULL, changed.msg);
	} else if (!p->regrouping && !p->aborting && peer < p->members &&
		   p->by_rank[peer] != NULL) {
		/* The first sign of trouble (once the group breaks, members
		 * close their links as told): its control connection, if the
		 * daemon died, will say so within the grace period; else this
		 * is why. */
		p->suspect = p->by_rank[peer];
		snprintf(p->suspect_why, sizeof(p->suspect_why), "data "
			 "connection from the sender lost: %s",
			 eng_strerror(status));
		push_abort_group(p, p->suspect, p->suspect_why);
	} else {
		snprintf(changed.msg, sizeof(changed.msg), "the sender failed: "
			 "%s", eng_strerror(status));
		push_abort_group(p, NULL, changed.msg);
	}
	push_maybe_finish(p);
}

static int
engine_iov(void *ctx, uint64_t block, struct iovec *iov, int max)
{
	return store_iov(ctx, block, iov, max);
}

static int
engine_arrived(void *ctx, uint64_t block)
{
	return 0;
}

/* Once every block is out (and with --verify the crc known), and no source
 * changed meanwhile, tell the members they may land: the CRC frame.  A
 * source that changed aborts the group instead: its copies could mix old
 * and new bytes. */
static void
maybe_go(struct push *p)
{
	struct frame f = { .type = MSG_CRC };
	struct rd_err err = { 0 };
	size_t i;

	if (p->go_sent || !p->sent_all ||
	    uv_is_active((uv_handle_t *)&p->starter) ||
	    (p->cfg->verify && !p->sums_ready))
		return;	/* (the go must not overtake a START) */
	p->go_sent = true;
	if (store_check_sources(p->st, &err) < 0) {
		note_source_change(p, err.msg);
		push_abort_group(p, NULL, err.msg);
		return;
	}
	f.val = p->crc;
	log_info("every block is out: the members may land once they hold "
		 "them all");
	for (i = 0; i < p->nh; i++) {
		if (p->h[i].st != HS_RUNNING)
			continue;
		p->h[i].got_go = true;
		if (conn_send_copy(p->h[i].c, &f, NULL) < 0)
			push_host_lost(&p->h[i], -EPIPE, "cannot send it the go");
	}
}

static void
sums_run(uv_work_t *w)
{
	struct push *p = w->data;

	if (p->cfg->verify)
		p->crc = store_compute_crc(p->st);
	store_file_sums(p->st, p->sums);
}

/* The digests, on another thread of the pool than the sums: both read
 * the whole stream, and a host that holds files waits for both. */
static void
digest_run(uv_work_t *w)
{
	struct push *p = w->data;

	p->digests = malloc(store_stream_blocks(p->st) * PROTO_DIGEST_LEN + 1);
	if (p->digests != NULL)
		store_digests(p->st, 0, store_stream_blocks(p->st),
			      p->digests);
}

static void
digest_after(uv_work_t *w, int status)
{
	struct push *p = w->data;

	(void)status;	/* cancelled: no digests, the hosts that wait fail */
	p->digest_busy = false;
	p->digest_ready = true;
	push_settle_haves(p);
	push_maybe_finish(p);
}

static void
sums_after(uv_work_t *w, int status)
{
	struct push *p = w->data;

	p->sums_busy = false;
	if (status < 0)
		return;
	replace_encode(p->sums, (uint32_t)p->cfg->nfiles, &p->summsg);
	p->sums_ready = true;	/* (if REPLACE could not be made, its hosts
				 * fail: push_settle_haves) */
	push_settle_haves(p);
	maybe_go(p);
	push_maybe_finish(p);
}

void
push_start_sums(struct push *p)
{
	if (p->delta && p->digests_wanted && !p->digest_busy &&
	    !p->digest_ready) {
		p->digest_work.data = p;
		log_info("digesting the sources' %llu blocks: a host holds "
			 "other versions of them, or unfinished copies",
			 (unsigned long long)store_stream_blocks(p->st));
		p->digest_busy = uv_queue_work(&p->loop, &p->digest_work,
					       digest_run, digest_after) == 0;
		p->digest_ready = !p->digest_busy;	/* none: they fail */
	}
	if (p->sums_busy || p->sums_ready)
		return;
	p->sums_work.data = p;
	p->sums_busy = uv_queue_work(&p->loop, &p->sums_work, sums_run,
				    sums_after) == 0;
}

/* Our digests to h, which asked for them, once they are known.  The
 * daemon waits for them as long as we digest; after them, for its
 * set-up. */
static void
send_digests(struct phost *h)
{
	struct frame f = { .type = MSG_DIGESTS };
	struct iovec iov = { h->p->digests, 0 };

	if (h->st != HS_HAVE && h->st != HS_OFFERED)
		return;
	h->digests_sent = true;
	f.len = iov.iov_len = store_stream_blocks(h->p->st) * PROTO_DIGEST_LEN;
	if (h->p->digests == NULL)
		push_host_failed(h, -ENOMEM, PROTO_NO_PEER, "out of memory "
				 "for the sources' digests");
	else if (conn_send(h->c, &f, &iov, 1, 0) < 0)
		push_host_lost(h, -EPIPE, "cannot send DIGESTS");
	else if (h->compared)
		push_await_setup(h);
}

/* Our sums to h (REPLACE), once they are known: it keeps what is
 * identical, and answers HAVE_SAME, HAVE_DIGESTS, ACCEPT or REFUSE. */
static void
send_replace(struct phost *h)
{
	struct push *p = h->p;
	struct frame f = { .type = MSG_REPLACE, .len = p->summsg.len };
	struct iovec iov = { p->summsg.data, p->summsg.len };

	h->compared = true;
	if (p->summsg.err != 0)
		push_host_failed(h, -ENOMEM, PROTO_NO_PEER, "out of "
				 "memory for the sources' sums");
	else if (conn_send(h->c, &f, &iov, 1, 0) < 0)
		push_host_lost(h, -EPIPE, "cannot send REPLACE");
	else {
		h->st = HS_OFFERED;
		if (!h->wants_digests || h->digests_sent)
			push_await_setup(h);
	}
}

void
push_settle_haves(struct push *p)
{
	struct phost *h;
	size_t i;

	for (i = 0; i < p->nh; i++) {
		h = &p->h[i];
		if (h->wants_digests && !h->digests_sent && p->digest_ready)
			send_digests(h);
		if (h->st == HS_HAVE && p->sums_ready)
			send_replace(h);
	}
}

/* Rank 0 sends straight from its sources: over verbs from their mappings,
 * registered read-only before data flows; over TCP from the files. */
static int
register_sources(void *ctx, struct xp *xp, struct rd_err *err)
{
	struct push *p = ctx;
	size_t i, len;
	void *map;
	int rc = 0, fd;

	for (i = 0; rc == 0 && i < store_nfiles(p->st); i++) {
		store_mapping(p->st, i, &map, &len, &fd);
		rc = xp_reg(xp, map, len, false, fd, 0);
		if (rc < 0)
			rd_errf(err, rc, "%s", xp_errmsg(xp) != NULL
				 ? xp_errmsg(xp) : strerror(-rc));
	}
	return rc;
}

/* Rank 0's engine, over the group's transport (member.h); `all` is
 * every member (rank 1..), as rank 0 may reach any. */
static int
start_engine(struct push *p, const struct roster_peer *all)
{
	struct member_cfg mc = {
		.transport = p->group, .peers = all, .npeers = p->members - 1,
		.bind = p->has_src ? &p->src : NULL,
		.connect_timeout_ms = p->cfg->connect_timeout_ms,
		.timeout_ms = p->cfg->timeout_ms,
		.vb = p->vb, .dev = p->dev, .block_size = p->block_size,
		.reg = register_sources,
	};
	struct eng_cfg ec = {
		.loop = &p->loop, .alg = p->cfg->alg, .n = p->members,
		.rank = 0, .blocks = store_blocks(p->st),
		.racks = p->racks, .nracks = p->nracks,
		.window = p->cfg->window, .rate = p->cfg->bwlimit,
		.io = { engine_iov, engine_arrived, p->st },
		.complete = on_engine_complete, .done = on_engine_done,
		.ctx = p, .trace = p->trace,
		.lacks = p->has_lacks ? push_member_lacks : NULL,
	};

	memcpy(mc.token, p->token, PROTO_TOKEN_LEN);
	return member_start(&mc, &ec, &p->eng, &p->fatal);
}

/* Can the sender itself use RDMA towards the hosts? */
static int
sender_verbs(struct push *p, struct rd_err *err)
{
	struct vb_cfg vc = { .loop = &p->loop, .opts = p->cfg->verbs };
	int rc;

	if (!p->has_src) {
		size_t i;

		for (i = 0; i < p->nh && !p->has_src; i++)
			if (p->h[i].st == HS_RUNNING &&
			    conn_local(p->h[i].c, &p->src) == 0)
				p->has_src = true;
	}
	if (!p->has_src)
		return rd_errf(err, -EADDRNOTAVAIL, "no source address");
	rc = vb_new(&vc, &p->vb, err);
	if (rc == 0)
		rc = vb_device_for(p->vb, &p->src, &p->dev, err);
	return rc;
}

/* tcp, or verbs when asked for (or allowed) and every member offered it
 * and the sender can too. */
static int
choose_transport(struct push *p)
{
	struct rd_err why = { 0 };
	size_t i;

	p->group = TRANSPORT_TCP;
	if (p->cfg->transport == TRANSPORT_TCP)
		return 0;
	for (i = 0; i < p->nh; i++)
		if (p->h[i].st == HS_RUNNING && p->h[i].rdma_port == 0)
			return 0;	/* only with auto: verbs hosts refuse */
	if (sender_verbs(p, &why) == 0) {
		p->group = TRANSPORT_VERBS;
		return 0;
	}
	if (p->cfg->transport == TRANSPORT_AUTO) {
		log_info("over tcp: %s", why.msg);
		return 0;
	}
	return rd_errf(&p->fatal, why.code, "%s", why.msg);
}

/* Host h's START: its rank and its schedule neighbours, from `all`
 * (every member, rank 1.. at all[rank - 1]; rank 0 has no address). */
static int
encode_start(struct push *p, const struct phost *h,
	     const struct roster_peer *all, uint32_t *ranks,
	     struct roster_peer *mine, struct wbuf *w)
{
	struct roster ro = { .rank = h->rank, .n = p->members,
			     .transport = p->group, .peers = mine,
			     .nracks = (uint32_t)p->nracks, .racks = p->racks,
			     .map = p->map };
	struct sched *s;
	size_t i, n;
	int rc;

	rc = sched_new_racks(p->cfg->alg, p->members, h->rank,
			     store_blocks(p->st), p->racks, p->nracks, &s);
	if (rc < 0)
		return rc;
	n = sched_peers(s, ranks, p->members);
	sched_free(s);
	for (i = 0; i < n; i++) {
		mine[i] = ranks[i] == 0 ? (struct roster_peer){ 0 }
					: all[ranks[i] - 1];
		mine[i].lacks = ranks[i] == 0 ? NULL
					      : p->by_rank[ranks[i]]->link;
	}
	ro.npeers = (uint32_t)n;
	ro.has_lacks = p->has_lacks;
	ro.lacks = h->link;
	w->len = 0;
	return roster_encode(&ro, w);
}

/* STARTs go out in slices, one slice per turn of the loop: the members
 * that get theirs wake up and take the CPU (a thousand daemons on a few
 * cores), and those still waiting must keep hearing our keepalives
 * meanwhile, not take us for gone.  A slice ends after this many STARTs
 * or this long, whichever comes first: on a starved machine every START
 * can cost the sender tens of milliseconds (the member it wakes runs
 * first), and 32 of them once kept our keepalives back for 2 s. */
#define START_SLICE 32
#define START_SLICE_NS (5 * 1000 * 1000)

/* The next slice of STARTs, from member p->start_next on: 0, or -errno
 * for a failure of the sender's own. */
static int
send_start_slice(struct push *p)
{
	struct roster_peer *mine = calloc(p->members, sizeof(*mine));
	uint32_t *ranks = calloc(p->members, sizeof(*ranks));
	struct frame f = { .type = MSG_START };
	struct wbuf w;
	uint64_t t0 = uv_hrtime();
	size_t sent = 0;
	int rc = mine != NULL && ranks != NULL ? 0 : -ENOMEM;

	wbuf_init(&w);
	for (; p->start_next < p->nh && sent < START_SLICE && rc == 0 &&
	       (sent == 0 || uv_hrtime() - t0 < START_SLICE_NS);
	     p->start_next++) {
		struct phost *h = &p->h[p->start_next];

		if (h->st != HS_RUNNING)
			continue;
		rc = encode_start(p, h, p->all, ranks, mine, &w);
		f.len = w.len;
		if (rc == 0 && conn_send_copy(h->c, &f, w.data) < 0)
			push_host_lost(h, -EPIPE, "cannot send START");
		sent++;
	}
	wbuf_free(&w);
	free(mine);
	free(ranks);
	return rc;
}

static void
on_start_turn(uv_idle_t *idle)
{
	struct push *p = idle->data;
	int rc = 0;

	if (!p->aborting)
		rc = send_start_slice(p);
	if (rc < 0)
		push_abort_group(p, NULL, strerror(-rc));
	if (rc < 0 || p->aborting || p->start_next >= p->nh) {
		uv_idle_stop(idle);
		maybe_go(p);	/* rank 0 may have sent every block already */
		push_maybe_finish(p);
	}
}

/* A dry run ends where the group would form: every host that accepted
 * would take the job; closing its connection ends its daemon's part. */
static void
finish_dry_run(struct push *p)
{
	size_t i;

	p->sum->setup = push_elapsed(p);
	p->sum->would_send = push_rank0_bytes(p);
	for (i = 0; i < p->nh; i++)
		if (p->h[i].st == HS_ACCEPTED) {
			p->h[i].dry = true;
			push_host_done(&p->h[i]);
		}
	push_maybe_finish(p);
}

/* The rack of the member at `rank` (the sender: its own, else a rack
 * of its own), for rack_sizes. */
static int
rack_at(const struct push *p, uint32_t rank)
{
	if (rank == 0)
		return p->cfg->own_rack >= 0 ? p->cfg->own_rack : -2;
	return p->cfg->racks[p->by_rank[rank]->idx];
}

/* --topology with the binomial pipeline: the racks' sizes in rank order
 * (each run of members of one rack; hosts of no rack make one), or none
 * if all are in one.  0 or -ENOMEM. */
static int
rack_sizes(struct push *p)
{
	uint32_t r, *sizes;
	size_t n = 0;

	if (p->cfg->racks == NULL || p->cfg->alg != SCHED_BINOMIAL)
		return 0;
	sizes = calloc(p->members, sizeof(*sizes));
	if (sizes == NULL)
		return -ENOMEM;
	for (r = 0; r < p->members; r++) {
		if (r == 0 || rack_at(p, r) != rack_at(p, r - 1))
			n++;
		sizes[n - 1]++;
	}
	if (n < 2) {
		free(sizes);
		return 0;
	}
	p->racks = sizes;
	p->nracks = n;
	log_info("binomial pipeline in %zu racks, each fed from the one "
		 "before", n);
	return 0;
}

/* The blocks the group carries: those some member lacks (the union of
 * what they said in ACCEPT), in at most PROTO_MAX_RUNS runs; NULL when
 * that is all of them.  0 or -ENOMEM. */
static int
choose_map(struct push *p)
{
	struct bset *u = NULL, *next;
	uint32_t r;
	int rc;

	for (r = 1; r < p->members; r++)
		if (p->by_rank[r]->need == NULL)
			return 0;	/* one lacks them all */
	rc = bset_new(&u);
	for (r = 1; rc == 0 && r < p->members; r++) {
		rc = bset_union(u, p->by_rank[r]->need, &next);
		if (rc == 0) {
			bset_free(u);
			u = next;
		}
	}
	if (rc == 0)
		bset_coarsen(u, PROTO_MAX_RUNS);
	if (rc == 0 && bset_count(u) < store_stream_blocks(p->st)) {
		log_info("%llu of %llu blocks to send: the hosts hold the "
			 "others already",
			 (unsigned long long)bset_count(u),
			 (unsigned long long)store_stream_blocks(p->st));
		rc = store_set_map(p->st, u);
		if (rc == 0) {
			p->map = u;
			u = NULL;
		}
	}
	bset_free(u);
	return rc;
}

/* Rank the hosts that accepted, 1.., the ones that hold most first
 * (links.c), into p->by_rank and p->all.  0 or -ENOMEM. */
static int
rank_members(struct push *p)
{
	struct roster_peer *all;	/* rank r at all[r - 1] */
	struct phost *h;
	uint32_t r = 0;
	size_t i;

	for (i = 0; i < p->nh; i++)
		r += p->h[i].st == HS_ACCEPTED;
	p->members = r + 1;
	p->all = all = calloc(p->members, sizeof(*all));
	p->by_rank = calloc(p->members, sizeof(*p->by_rank));
	if (all == NULL || p->by_rank == NULL)
		return -ENOMEM;
	for (i = 0, r = 0; i < p->nh; i++)
		if (p->h[i].st == HS_ACCEPTED)
			p->by_rank[++r] = &p->h[i];
	push_order_members(p, p->by_rank + 1, p->members - 1);
	for (r = 1; r < p->members; r++) {
		h = p->by_rank[r];
		h->rank = r;
		all[r - 1] = (struct roster_peer){ r, h->rdma_port, h->addr,
						   NULL };
	}
	return 0;
}

/* What the group carries (the map), its racks, and what each member
 * lacks of it: 0 or -errno. */
static int
shape_group(struct push *p)
{
	int rc = 0;

	if (p->members > 1)
		rc = choose_map(p);
	if (rc == 0 && p->members > 1)
		rc = rack_sizes(p);
	if (rc == 0 && p->members > 1)
		rc = push_choose_links(p);
	return rc;
}

/* Every host accepted or failed: form the group. */
void
push_maybe_start(struct push *p)
{
	uint32_t r;
	size_t i;
	int rc;

	if (p->started)
		return;
	if (p->undecided > 0) {
		push_wait_suspects(p);
		return;
	}
	uv_timer_stop(&p->grace);
	p->grace_on = false;	/* free for the stragglers of an abort */
	p->grace_late = false;	/* a set-up that lapses now is no late one */
	p->started = true;
	rc = rank_members(p);
	if (rc == 0)
		rc = shape_group(p);
	if (p->cfg->dry_run && rc == 0) {
		finish_dry_run(p);
		return;
	}
	if (rc < 0) {
		for (i = 0; i < p->nh; i++)
			if (p->h[i].st == HS_ACCEPTED)
				push_host_failed(&p->h[i], rc, PROTO_NO_PEER,
						 "%s", strerror(-rc));
		push_maybe_finish(p);
		return;
	}
	for (r = 1; r < p->members; r++)
		p->by_rank[r]->st = HS_RUNNING;
	push_settle_patience(p);
	p->sum->setup = push_elapsed(p);
	trace_add(p->trace, TR_BOOT, p->t0_us, trace_now(), PROTO_NO_PEER, 0);
	if (p->members > 1) {
		rc = choose_transport(p);
		p->sum->transport = proto_transport_name(p->group);
		if (rc == 0)
			rc = send_start_slice(p);
		if (rc == 0)
			rc = start_engine(p, p->all);
		if (rc == 0 && p->start_next < p->nh)
			uv_idle_start(&p->starter, on_start_turn);
		if (rc < 0)
			push_abort_group(p, NULL, p->fatal.code ? p->fatal.msg
							   : strerror(-rc));
		else if (p->cfg->verify)
			push_start_sums(p);
	}
	push_maybe_finish(p);
}
