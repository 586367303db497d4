/* SPDX-License-Identifier: MIT */
/*
 * lib - rdma-core's libraries (libibverbs, librdmacm), loaded when the
 * verbs transport is first asked for, not when rdmcp starts.
 *
 * Linking them cost every rdmcp process start-up time and private memory
 * on a machine without RDMA (docs/performance.md, its constants), and
 * made rdma-core a requirement of hosts that only ever use TCP.  lib.c defines each
 * rdma-core function rdmcp calls, under its own name, as a call through
 * a table that vb_lib_load fills from the libraries (dlopen, and dlvsym at
 * the symbol versions rdmcp was built against).  Part of the verbs
 * module: only verbs.c calls vb_lib_load (vb_new, before any other verbs
 * call), and nothing may call an rdma-core function before it succeeded.
 */
#ifndef RDMCP_VB_LIB_H
#define RDMCP_VB_LIB_H

#include "util/log.h"

/* Load rdma-core's two libraries and resolve every function rdmcp uses;
 * after a success, later calls return 0 at once.  0, or -ENOENT with err
 * naming what is missing (nothing stays loaded then). */
int vb_lib_load(struct rd_err *err);

#endif
