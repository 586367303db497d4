/* SPDX-License-Identifier: MIT */
/*
 * opts - the user's RDMA verbs settings (--device, --gid-index,
 * --interrupts), as plain data: what the sender and the daemon pass down
 * to verbs.h without their callers seeing rdma-core's headers.
 */
#ifndef RDMCP_VB_OPTS_H
#define RDMCP_VB_OPTS_H

#include <stdbool.h>

struct vb_opts {
	const char *device;	/* required device name, or NULL */
	int gid_index;		/* < 0: the GID of the bound address */
	bool interrupts;	/* never busy-poll */
};

#endif
