/* SPDX-License-Identifier: MIT */
/*
 * verbs - the process's RDMA state (see verbs.h).
 */
#include "transport/verbs/verbs.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "util/net.h"
#include "transport/ranktab.h"
#include "transport/verbs/lib.h"

/* How long the CQ is polled after a completion before the loop sleeps on
 * the channel.  The papers poll for 50 ms; but once completions are
 * further apart than this, a wake-up (microseconds) costs at most a few
 * percent of the gap, while polling takes a core from the kernel and the
 * other processes; on a fast link a block lasts tens of microseconds, so
 * polling still bridges the gaps of a busy one (docs/performance.md, its
 * constants). */
#define SPIN_AFTER_COMPLETION_NS (200ull * 1000)
#define CQ_ENTRIES 16384
#define MAX_PDATA 256

/* Who gets the completions of a slot (ranktab item, by slot id). */
struct slot_entry {
	vb_done_fn fn;
	void *ctx;
};

struct vb_dev {
	struct vb *v;
	struct ibv_context *verbs;
	uint8_t port;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	uv_poll_t poll;
	uv_idle_t idle;
	int handles;
	bool busy;
	uint64_t busy_until;
	unsigned unacked;
	uint64_t registered;	/* bytes, for the memlock message */
	char name[IBV_SYSFS_NAME_MAX];
	struct vb_dev *next;
};

struct vb {
	struct vb_cfg cfg;
	struct rdma_event_channel *ec;
	uv_poll_t ec_poll;
	bool ec_polling;
	struct rdma_cm_id *listener;
	struct vb_cm listen_handler;
	vb_acceptor_fn acceptor;
	void *acceptor_ctx;
	struct vb_dev *devs;
	struct ranktab slots;		/* struct slot_entry by id */
	uint64_t next_slot;
	int handles;		/* open libuv handles, all devices included */
	bool freeing;
};

static void vb_release(struct vb *v);

/* ---------------------------------------------------------------------
 * Slots
 */

uint64_t
vb_slot_new(struct vb *v, vb_done_fn fn, void *ctx)
{
	struct slot_entry *e = malloc(sizeof(*e));

	if (e == NULL)
		return 0;
	*e = (struct slot_entry){ fn, ctx };
	if (rt_add(&v->slots, v->next_slot + 1, e) < 0) {
		free(e);
		return 0;
	}
	return ++v->next_slot;
}

void
vb_slot_drop(struct vb *v, uint64_t slot)
{
	free(rt_remove(&v->slots, slot));
}

static void
dispatch(struct vb *v, const struct ibv_wc *wc)
{
	struct slot_entry *e = rt_find(&v->slots, wc->wr_id >> VB_TAG_BITS);

	if (e != NULL)
		e->fn(e->ctx, (uint32_t)(wc->wr_id & VB_TAG_MAX), wc);
}

/* ---------------------------------------------------------------------
 * Completion queue polling
 */

/* Poll until empty; returns how many completions were handled. */
static int
cq_drain(struct vb_dev *d)
{
	struct ibv_wc wc[32];
	int n, i, total = 0;

	while ((n = ibv_poll_cq(d->cq, 32, wc)) > 0) {
		for (i = 0; i < n; i++)
			dispatch(d->v, &wc[i]);
		total += n;
	}
	if (n < 0)
		log_warn("%s: polling the completion queue failed", d->name);
	return total;
}

/* Sleep on the channel: arm the CQ, then poll once more for what came in
 * before it was armed. */
static void
cq_sleep(struct vb_dev *d)
{
	if (d->busy) {
		uv_idle_stop(&d->idle);
		d->busy = false;
	}
	do {
		ibv_req_notify_cq(d->cq, 0);
	} while (cq_drain(d) > 0);
}

static void on_idle(uv_idle_t *h);

static void
cq_busy(struct vb_dev *d)
{
	d->busy_until = uv_hrtime() + SPIN_AFTER_COMPLETION_NS;
	if (!d->busy && !d->v->cfg.opts.interrupts) {
		d->busy = true;
		uv_idle_start(&d->idle, on_idle);
	}
}

static void
on_idle(uv_idle_t *h)
{
	struct vb_dev *d = h->data;

	if (cq_drain(d) > 0)
		cq_busy(d);
	else if (uv_hrtime() > d->busy_until)
		cq_sleep(d);
}

static void
on_channel(uv_poll_t *h, int status, int events)
{
	struct vb_dev *d = h->data;
	struct ibv_cq *cq;
	void *ctx;

	while (ibv_get_cq_event(d->ch, &cq, &ctx) == 0)
		if (++d->unacked >= 64) {
			ibv_ack_cq_events(d->cq, d->unacked);
			d->unacked = 0;
		}
	if (cq_drain(d) > 0 && !d->v->cfg.opts.interrupts)
		cq_busy(d);
	if (!d->busy)
		cq_sleep(d);
}

void
vb_drain(struct vb_dev *d)
{
	cq_drain(d);
}

void
vb_kick(struct vb_dev *d)
{
	cq_busy(d);
}

/* ---------------------------------------------------------------------
 * Devices
 */

static int
set_nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

static int
dev_open(struct vb *v, struct ibv_context *verbs, uint8_t port,
	 struct vb_dev **out, struct rd_err *err)
{
	struct vb_dev *d = calloc(1, sizeof(*d));
	struct ibv_device_attr attr;
	int cqe = CQ_ENTRIES, rc = -ENOMEM;

	if (d == NULL)
		return -ENOMEM;
	d->v = v;
	d->verbs = verbs;
	d->port = port;
	snprintf(d->name, sizeof(d->name), "%s",
		 ibv_get_device_name(verbs->device));
	if (ibv_query_device(verbs, &attr) == 0 && attr.max_cqe < cqe)
		cqe = attr.max_cqe;
	d->pd = ibv_alloc_pd(verbs);
	if (d->pd == NULL)
		goto fail;
	d->ch = ibv_create_comp_channel(verbs);
	if (d->ch == NULL)
		goto fail;
	d->cq = ibv_create_cq(verbs, cqe, NULL, d->ch, 0);
	if (d->cq == NULL || set_nonblocking(d->ch->fd) < 0)
		goto fail;
	ibv_req_notify_cq(d->cq, 0);
	uv_poll_init(v->cfg.loop, &d->poll, d->ch->fd);
	uv_idle_init(v->cfg.loop, &d->idle);
	d->poll.data = d->idle.data = d;
	d->handles = 2;
	v->handles += 2;
	uv_poll_start(&d->poll, UV_READABLE, on_channel);
	d->next = v->devs;
	v->devs = d;
	*out = d;
	return 0;
fail:
	rc = rd_errf(err, errno ? -errno : rc, "%s: cannot set up the device "
		     "(protection domain, completion queue): %s", d->name,
		     strerror(errno ? errno : ENOMEM));
	if (d->cq != NULL)
		ibv_destroy_cq(d->cq);
	if (d->ch != NULL)
		ibv_destroy_comp_channel(d->ch);
	if (d->pd != NULL)
		ibv_dealloc_pd(d->pd);
	free(d);
	return rc;
}

static int
check_port(struct ibv_context *verbs, uint8_t port, const char *addr,
	   struct rd_err *err)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(verbs, port, &pa) != 0)
		return rd_errf(err, -EIO, "%s: cannot query port %u",
			       ibv_get_device_name(verbs->device), port);
	if (pa.state != IBV_PORT_ACTIVE)
		return rd_errf(err, -ENETDOWN, "%s port %u, which serves %s, "
			       "is not active (state %s): check the link "
			       "('rdma link', 'ibv_devinfo')",
			       ibv_get_device_name(verbs->device), port, addr,
			       ibv_port_state_str(pa.state));
	return 0;
}

/* With --gid-index: the IPv4 address that GID carries. */
static int
address_of_gid(struct vb *v, struct ibv_context *verbs, uint8_t port,
	       struct sockaddr_storage *addr, struct rd_err *err)
{
	union ibv_gid gid;
	struct sockaddr_in *in4 = (struct sockaddr_in *)addr;
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0,
					      0, 0, 0xff, 0xff };
	uint16_t port_no = net_port(addr);

	if (ibv_query_gid(verbs, port, v->cfg.opts.gid_index, &gid) != 0)
		return rd_errf(err, -EINVAL, "%s has no GID index %d",
			       ibv_get_device_name(verbs->device),
			       v->cfg.opts.gid_index);
	if (memcmp(gid.raw, v4mapped, 12) != 0)
		return rd_errf(err, -EINVAL, "GID index %d of %s is not an "
			       "IPv4 address; rdmcp reaches peers through "
			       "rdma_cm by IPv4 address", v->cfg.opts.gid_index,
			       ibv_get_device_name(verbs->device));
	memset(addr, 0, sizeof(*addr));
	in4->sin_family = AF_INET;
	memcpy(&in4->sin_addr, gid.raw + 12, 4);
	net_set_port(addr, port_no);
	return 0;
}

/* Which device and port serve `addr`: bind an id to it. */
static int
lookup_device(struct vb *v, const struct sockaddr_storage *addr,
	      struct ibv_context **verbs, uint8_t *port, struct rd_err *err)
{
	struct sockaddr_storage bare;
	struct rdma_cm_id *id;
	char host[NET_ADDRSTRLEN];
	int rc = 0;

	net_format_host(addr, host, sizeof(host));
	net_without_port(addr, &bare);
	if (rdma_create_id(v->ec, &id, NULL, RDMA_PS_TCP) != 0)
		return rd_errf(err, -errno, "rdma_cm: %s", strerror(errno));
	if (rdma_bind_addr(id, (struct sockaddr *)&bare) != 0)
		rc = rd_errf(err, -errno, "cannot bind to %s for RDMA: %s",
			     host, strerror(errno));
	else if (id->verbs == NULL)
		rc = rd_errf(err, -EADDRNOTAVAIL, "no RDMA device serves %s "
			     "(see 'rdma link'; use --transport tcp)", host);
	else {
		*verbs = id->verbs;
		*port = id->port_num ? id->port_num : 1;
	}
	rdma_destroy_id(id);
	return rc;
}

int
vb_device_for(struct vb *v, struct sockaddr_storage *addr,
	      struct vb_dev **out, struct rd_err *err)
{
	struct ibv_context *verbs;
	struct vb_dev *d;
	char host[NET_ADDRSTRLEN];
	uint8_t port;
	int rc;

	rc = lookup_device(v, addr, &verbs, &port, err);
	if (rc == 0 && v->cfg.opts.gid_index >= 0) {
		rc = address_of_gid(v, verbs, port, addr, err);
		if (rc == 0)
			rc = lookup_device(v, addr, &verbs, &port, err);
	}
	if (rc < 0)
		return rc;
	net_format_host(addr, host, sizeof(host));
	if (v->cfg.opts.device != NULL &&
	    strcmp(v->cfg.opts.device, ibv_get_device_name(verbs->device)) != 0)
		return rd_errf(err, -ENODEV, "%s is served by %s, not by %s "
			       "(--device)", host,
			       ibv_get_device_name(verbs->device),
			       v->cfg.opts.device);
	rc = check_port(verbs, port, host, err);
	if (rc < 0)
		return rc;
	for (d = v->devs; d != NULL; d = d->next) {
		if (d->verbs == verbs) {
			*out = d;
			return 0;
		}
	}
	return dev_open(v, verbs, port, out, err);
}

struct ibv_pd *
vb_pd(const struct vb_dev *d)
{
	return d->pd;
}

struct ibv_cq *
vb_cq(const struct vb_dev *d)
{
	return d->cq;
}

const char *
vb_dev_name(const struct vb_dev *d)
{
	return d->name;
}

static void
format_size(char *buf, size_t len, uint64_t bytes)
{
	if (bytes >= (1ull << 30))
		snprintf(buf, len, "%.1f GiB", (double)bytes / (1ull << 30));
	else if (bytes >= (1ull << 20))
		snprintf(buf, len, "%.1f MiB", (double)bytes / (1ull << 20));
	else
		snprintf(buf, len, "%llu KiB", (unsigned long long)bytes >> 10);
}

/* CAP_IPC_LOCK lifts RLIMIT_MEMLOCK; read the effective set. */
static bool
may_lock_any(void)
{
	unsigned long long eff = 0;
	char line[128];
	FILE *f = fopen("/proc/self/status", "r");

	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return (eff >> 14) & 1;	/* CAP_IPC_LOCK */
}

int
vb_reg(struct vb_dev *d, void *addr, size_t len, int access,
       struct ibv_mr **out, struct rd_err *err)
{
	char want[32], limit[32];
	struct rlimit rl;
	int e;

	*out = ibv_reg_mr(d->pd, addr, len, access);
	if (*out != NULL) {
		d->registered += len;
		return 0;
	}
	e = errno ? errno : ENOMEM;
	format_size(want, sizeof(want), d->registered + len);
	if ((e == ENOMEM || e == EPERM || e == EAGAIN) &&
	    getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
	    && !may_lock_any()) {
		format_size(limit, sizeof(limit), rl.rlim_cur);
		return rd_errf(err, -ENOMEM, "cannot register memory for RDMA "
			       "on %s: %s locked so far, but the locked-memory "
			       "limit (ulimit -l, RLIMIT_MEMLOCK) is %s; raise "
			       "it to at least %s, e.g. 'ulimit -l unlimited' "
			       "or LimitMEMLOCK=infinity in the systemd unit",
			       d->name, want, limit, want);
	}
	return rd_errf(err, -e, "cannot register %zu bytes for RDMA on %s: %s",
		       len, d->name, strerror(e));
}

/* ---------------------------------------------------------------------
 * Connection manager events
 */

static void
handle_request(struct vb *v, struct rdma_cm_event *ev, const void *pdata,
	       uint8_t len)
{
	if (v->acceptor == NULL ||
	    v->acceptor(v->acceptor_ctx, ev->id, pdata, len) < 0) {
		rdma_reject(ev->id, NULL, 0);
		rdma_destroy_id(ev->id);
	}
}

static void
on_cm_channel(uv_poll_t *h, int status, int events)
{
	struct vb *v = h->data;
	struct rdma_cm_event *ev, copy;
	uint8_t pdata[MAX_PDATA], len;
	struct vb_cm *handler;

	while (rdma_get_cm_event(v->ec, &ev) == 0) {
		/* copy and acknowledge first, so that handlers may destroy
		 * their ids */
		copy = *ev;
		len = ev->param.conn.private_data_len;
		if (ev->param.conn.private_data != NULL && len > 0)
			memcpy(pdata, ev->param.conn.private_data, len);
		copy.param.conn.private_data = pdata;
		rdma_ack_cm_event(ev);
		if (copy.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			handle_request(v, &copy, pdata, len);
			continue;
		}
		handler = copy.id != NULL ? copy.id->context : NULL;
		if (handler != NULL)
			handler->event(handler, &copy);
	}
}

int
vb_create_id(struct vb *v, struct vb_cm *h, struct rdma_cm_id **out)
{
	return rdma_create_id(v->ec, out, h, RDMA_PS_TCP) == 0 ? 0 : -errno;
}

static void
on_listener_event(struct vb_cm *h, struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		log_err("RDMA device removed under the listener");
}

int
vb_listen(struct vb *v, struct sockaddr_storage *addr, vb_acceptor_fn fn,
	  void *ctx, struct rd_err *err)
{
	char host[NET_ADDRSTRLEN];

	net_format(addr, host, sizeof(host));
	v->listen_handler.event = on_listener_event;
	if (vb_create_id(v, &v->listen_handler, &v->listener) < 0)
		return rd_errf(err, -errno, "rdma_cm: %s", strerror(errno));
	if (rdma_bind_addr(v->listener, (struct sockaddr *)addr) != 0 ||
	    rdma_listen(v->listener, 128) != 0)
		return rd_errf(err, -errno, "cannot listen for RDMA on %s: %s",
			       host, strerror(errno));
	net_set_port(addr, ntohs(rdma_get_src_port(v->listener)));
	v->acceptor = fn;
	v->acceptor_ctx = ctx;
	return 0;
}

/* ---------------------------------------------------------------------
 * Life cycle
 */

int
vb_new(const struct vb_cfg *cfg, struct vb **out, struct rd_err *err)
{
	struct vb *v;
	int rc;

	*out = NULL;
	rc = vb_lib_load(err);
	if (rc < 0)
		return rc;
	v = calloc(1, sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	v->cfg = *cfg;
	v->ec = rdma_create_event_channel();
	if (v->ec == NULL) {
		int e = errno;

		free(v);
		return rd_errf(err, -e, "cannot open the RDMA connection "
			       "manager (is rdma_ucm loaded? /dev/infiniband/"
			       "rdma_cm): %s", strerror(e));
	}
	set_nonblocking(v->ec->fd);
	uv_poll_init(cfg->loop, &v->ec_poll, v->ec->fd);
	v->ec_poll.data = v;
	v->handles = 1;
	uv_poll_start(&v->ec_poll, UV_READABLE, on_cm_channel);
	*out = v;
	return 0;
}

static void
dev_release(struct vb_dev *d)
{
	if (d->unacked)
		ibv_ack_cq_events(d->cq, d->unacked);
	ibv_destroy_cq(d->cq);
	ibv_destroy_comp_channel(d->ch);
	ibv_dealloc_pd(d->pd);
	free(d);
}

static void
on_ec_closed(uv_handle_t *h)
{
	struct vb *v = h->data;

	if (--v->handles == 0)
		vb_release(v);
}

static void
on_dev_handle_closed(uv_handle_t *h)
{
	struct vb *v = ((struct vb_dev *)h->data)->v;

	if (--v->handles == 0)
		vb_release(v);
}

/* Everything is closed: free in reverse order of creation. */
static void
vb_release(struct vb *v)
{
	struct vb_dev *d, *next;
	size_t i;

	for (d = v->devs; d != NULL; d = next) {
		next = d->next;
		dev_release(d);
	}
	if (v->listener != NULL)
		rdma_destroy_id(v->listener);
	rdma_destroy_event_channel(v->ec);
	for (i = 0; i < v->slots.n; i++)
		free(rt_at(&v->slots, i));
	rt_clear(&v->slots);
	free(v);
}

void
vb_free(struct vb *v)
{
	struct vb_dev *d;

	if (v == NULL || v->freeing)
		return;
	v->freeing = true;
	for (d = v->devs; d != NULL; d = d->next) {
		uv_close((uv_handle_t *)&d->poll, on_dev_handle_closed);
		uv_close((uv_handle_t *)&d->idle, on_dev_handle_closed);
	}
	uv_close((uv_handle_t *)&v->ec_poll, on_ec_closed);
}
