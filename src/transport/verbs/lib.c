/* SPDX-License-Identifier: MIT */
/*
 * lib - rdma-core's libraries, loaded on first use (see lib.h).
 */
#include "transport/verbs/lib.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define IBV_LIB "libibverbs.so.1"
#define RDMACM_LIB "librdmacm.so.1"

/* Every rdma-core function rdmcp calls, with the symbol version it was
 * built against (objdump -T of the libraries): X(library, name, version).
 * Some are called only from verbs.h's inline functions, and only where
 * the compiler does not fold them away (ibv_reg_mr at -O0): a link
 * without optimisation shows a missing one. */
#define VBLIB_FUNCS(X) \
	X(ibv, ibv_ack_cq_events, "IBVERBS_1.1") \
	X(ibv, ibv_alloc_pd, "IBVERBS_1.1") \
	X(ibv, ibv_create_comp_channel, "IBVERBS_1.0") \
	X(ibv, ibv_create_cq, "IBVERBS_1.1") \
	X(ibv, ibv_dealloc_pd, "IBVERBS_1.1") \
	X(ibv, ibv_dereg_mr, "IBVERBS_1.1") \
	X(ibv, ibv_destroy_comp_channel, "IBVERBS_1.0") \
	X(ibv, ibv_destroy_cq, "IBVERBS_1.1") \
	X(ibv, ibv_get_cq_event, "IBVERBS_1.1") \
	X(ibv, ibv_get_device_name, "IBVERBS_1.1") \
	X(ibv, ibv_port_state_str, "IBVERBS_1.1") \
	X(ibv, ibv_query_device, "IBVERBS_1.1") \
	X(ibv, ibv_query_gid, "IBVERBS_1.1") \
	X(ibv, ibv_query_port, "IBVERBS_1.1") \
	X(ibv, ibv_reg_mr, "IBVERBS_1.1") \
	X(ibv, ibv_reg_mr_iova2, "IBVERBS_1.8") \
	X(ibv, ibv_wc_status_str, "IBVERBS_1.1") \
	X(cm, rdma_accept, "RDMACM_1.0") \
	X(cm, rdma_ack_cm_event, "RDMACM_1.0") \
	X(cm, rdma_bind_addr, "RDMACM_1.0") \
	X(cm, rdma_connect, "RDMACM_1.0") \
	X(cm, rdma_create_event_channel, "RDMACM_1.0") \
	X(cm, rdma_create_id, "RDMACM_1.0") \
	X(cm, rdma_create_qp, "RDMACM_1.0") \
	X(cm, rdma_destroy_event_channel, "RDMACM_1.0") \
	X(cm, rdma_destroy_id, "RDMACM_1.0") \
	X(cm, rdma_destroy_qp, "RDMACM_1.0") \
	X(cm, rdma_disconnect, "RDMACM_1.0") \
	X(cm, rdma_event_str, "RDMACM_1.0") \
	X(cm, rdma_get_cm_event, "RDMACM_1.0") \
	X(cm, rdma_get_src_port, "RDMACM_1.0") \
	X(cm, rdma_listen, "RDMACM_1.0") \
	X(cm, rdma_reject, "RDMACM_1.0") \
	X(cm, rdma_resolve_addr, "RDMACM_1.0") \
	X(cm, rdma_resolve_route, "RDMACM_1.0")

/* The name in parentheses: verbs.h makes some of them macros. */
#define VBLIB_SLOT(lib, name, version) __typeof__((name)) *name;
static struct {
	VBLIB_FUNCS(VBLIB_SLOT)
} fn;
static bool loaded;

static int
open_lib(const char *name, void **handle, struct rd_err *err)
{
	*handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (*handle == NULL)
		return rd_errf(err, -ENOENT, "RDMA needs rdma-core's %s, which "
			       "cannot be loaded (%s): install rdma-core's "
			       "libraries (Debian: libibverbs1, librdmacm1), "
			       "or use --transport tcp", name, dlerror());
	return 0;
}

/* Resolve every function into fn; -ENOENT naming the first missing. */
static int
resolve(void *ibv, void *cm, struct rd_err *err)
{
	void *sym;

#define VBLIB_RESOLVE(lib, name, version) \
	sym = dlvsym(lib, #name, version); \
	if (sym == NULL) \
		return rd_errf(err, -ENOENT, "rdma-core on this host has no " \
			       "%s@%s: rdmcp was built against a newer " \
			       "one", #name, version); \
	memcpy(&fn.name, &sym, sizeof(sym));
	VBLIB_FUNCS(VBLIB_RESOLVE)
#undef VBLIB_RESOLVE
	return 0;
}

int
vb_lib_load(struct rd_err *err)
{
	void *ibv = NULL, *cm = NULL;
	int rc;

	if (loaded)
		return 0;
	rc = open_lib(IBV_LIB, &ibv, err);
	if (rc == 0)
		rc = open_lib(RDMACM_LIB, &cm, err);
	if (rc == 0)
		rc = resolve(ibv, cm, err);
	if (rc < 0) {
		memset(&fn, 0, sizeof(fn));
		if (cm != NULL)
			dlclose(cm);
		if (ibv != NULL)
			dlclose(ibv);
		return rc;
	}
	loaded = true;	/* kept for the life of the process */
	return 0;
}

/* ---------------------------------------------------------------------
 * rdma-core's functions, each a call through the table.
 */

void (ibv_ack_cq_events)(struct ibv_cq *cq, unsigned int nevents)
{
	fn.ibv_ack_cq_events(cq, nevents);
}

struct ibv_pd *(ibv_alloc_pd)(struct ibv_context *context)
{
	return fn.ibv_alloc_pd(context);
}

struct ibv_comp_channel *(ibv_create_comp_channel)(struct ibv_context *c)
{
	return fn.ibv_create_comp_channel(c);
}

struct ibv_cq *(ibv_create_cq)(struct ibv_context *context, int cqe,
			       void *cq_context,
			       struct ibv_comp_channel *channel,
			       int comp_vector)
{
	return fn.ibv_create_cq(context, cqe, cq_context, channel,
				comp_vector);
}

int (ibv_dealloc_pd)(struct ibv_pd *pd)
{
	return fn.ibv_dealloc_pd(pd);
}

int (ibv_dereg_mr)(struct ibv_mr *mr)
{
	return fn.ibv_dereg_mr(mr);
}

int (ibv_destroy_comp_channel)(struct ibv_comp_channel *channel)
{
	return fn.ibv_destroy_comp_channel(channel);
}

int (ibv_destroy_cq)(struct ibv_cq *cq)
{
	return fn.ibv_destroy_cq(cq);
}

int (ibv_get_cq_event)(struct ibv_comp_channel *channel, struct ibv_cq **cq,
		       void **cq_context)
{
	return fn.ibv_get_cq_event(channel, cq, cq_context);
}

const char *(ibv_get_device_name)(struct ibv_device *device)
{
	return fn.ibv_get_device_name(device);
}

const char *(ibv_port_state_str)(enum ibv_port_state port_state)
{
	return fn.ibv_port_state_str(port_state);
}

int (ibv_query_device)(struct ibv_context *context,
		       struct ibv_device_attr *device_attr)
{
	return fn.ibv_query_device(context, device_attr);
}

int (ibv_query_gid)(struct ibv_context *context, uint8_t port_num, int index,
		    union ibv_gid *gid)
{
	return fn.ibv_query_gid(context, port_num, index, gid);
}

int (ibv_query_port)(struct ibv_context *context, uint8_t port_num,
		     struct _compat_ibv_port_attr *port_attr)
{
	return (fn.ibv_query_port)(context, port_num, port_attr);
}

struct ibv_mr *(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
			    int access)
{
	return (fn.ibv_reg_mr)(pd, addr, length, access);
}

struct ibv_mr *(ibv_reg_mr_iova2)(struct ibv_pd *pd, void *addr,
				  size_t length, uint64_t iova,
				  unsigned int access)
{
	return fn.ibv_reg_mr_iova2(pd, addr, length, iova, access);
}

const char *(ibv_wc_status_str)(enum ibv_wc_status status)
{
	return fn.ibv_wc_status_str(status);
}

int (rdma_accept)(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	return fn.rdma_accept(id, conn_param);
}

int (rdma_ack_cm_event)(struct rdma_cm_event *event)
{
	return fn.rdma_ack_cm_event(event);
}

int (rdma_bind_addr)(struct rdma_cm_id *id, struct sockaddr *addr)
{
	return fn.rdma_bind_addr(id, addr);
}

int (rdma_connect)(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	return fn.rdma_connect(id, conn_param);
}

struct rdma_event_channel *(rdma_create_event_channel)(void)
{
	return fn.rdma_create_event_channel();
}

int (rdma_create_id)(struct rdma_event_channel *channel,
		     struct rdma_cm_id **id, void *context,
		     enum rdma_port_space ps)
{
	return fn.rdma_create_id(channel, id, context, ps);
}

int (rdma_create_qp)(struct rdma_cm_id *id, struct ibv_pd *pd,
		     struct ibv_qp_init_attr *qp_init_attr)
{
	return fn.rdma_create_qp(id, pd, qp_init_attr);
}

void (rdma_destroy_event_channel)(struct rdma_event_channel *channel)
{
	fn.rdma_destroy_event_channel(channel);
}

int (rdma_destroy_id)(struct rdma_cm_id *id)
{
	return fn.rdma_destroy_id(id);
}

void (rdma_destroy_qp)(struct rdma_cm_id *id)
{
	fn.rdma_destroy_qp(id);
}

int (rdma_disconnect)(struct rdma_cm_id *id)
{
	return fn.rdma_disconnect(id);
}

const char *(rdma_event_str)(enum rdma_cm_event_type event)
{
	return fn.rdma_event_str(event);
}

int (rdma_get_cm_event)(struct rdma_event_channel *channel,
			struct rdma_cm_event **event)
{
	return fn.rdma_get_cm_event(channel, event);
}

__be16 (rdma_get_src_port)(struct rdma_cm_id *id)
{
	return fn.rdma_get_src_port(id);
}

int (rdma_listen)(struct rdma_cm_id *id, int backlog)
{
	return fn.rdma_listen(id, backlog);
}

int (rdma_reject)(struct rdma_cm_id *id, const void *private_data,
		  uint8_t private_data_len)
{
	return fn.rdma_reject(id, private_data, private_data_len);
}

int (rdma_resolve_addr)(struct rdma_cm_id *id, struct sockaddr *src_addr,
			struct sockaddr *dst_addr, int timeout_ms)
{
	return fn.rdma_resolve_addr(id, src_addr, dst_addr, timeout_ms);
}

int (rdma_resolve_route)(struct rdma_cm_id *id, int timeout_ms)
{
	return fn.rdma_resolve_route(id, timeout_ms);
}
