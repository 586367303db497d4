/* SPDX-License-Identifier: MIT */
/*
 * topo - which rack each host is in, and the rack order of a host list.
 * Pure: parses text it is given, allocates, does no I/O.
 *
 * A topology is text, one rack per line, in either of two forms:
 *
 *     SwitchName=s1 Nodes=node[01-16]      Slurm's topology.conf: lines
 *                                          with Nodes= are racks (leaf
 *                                          switches), the others are
 *                                          skipped
 *     rack1: node[17-32],gpu[1-4]          a rack name, a colon, a host
 *                                          list (hostlist.h syntax), its
 *                                          entries separated by commas
 *                                          or blanks
 *
 * '#' starts a comment; blank lines are skipped.  A host named twice is an
 * error.  Hosts are matched without their ":port", and, when the full
 * name is not listed, by their short name (up to the first '.'; node1,
 * node1.cluster and node1.example.org are then the same host).
 */
#ifndef RDMCP_TOPO_H
#define RDMCP_TOPO_H

#include <stddef.h>

#include "util/log.h"

struct topo;

/* Parse `text` (the contents of the file `name`, for messages) into *out.
 * Returns 0, or -EINVAL with a reason naming the file and line, -ENOMEM,
 * -E2BIG (more hosts than hostlist.h allows). */
int topo_parse(const char *text, const char *name, struct topo **out,
	       struct rd_err *err);

/* Free a topology; NULL is a no-op. */
void topo_free(struct topo *t);

/* The rack of `host` (an entry of a host list, port allowed): its index,
 * 0 .. topo_racks() - 1, or -1 if the topology does not list it. */
int topo_rack_of(const struct topo *t, const char *host);

/* Number of racks, and the name of rack i. */
size_t topo_racks(const struct topo *t);
const char *topo_rack_name(const struct topo *t, size_t i);

/* Reorder hosts[0..n) in place so that each rack's hosts are contiguous:
 * the rack `first` (e.g. the sender's; -1: none) first, then the other
 * racks in the order their first host appears in the list, then the hosts
 * the topology does not list; within a rack the list's order is kept.
 * rack_of[i] receives the rack of the host now at i (-1: unlisted).
 * Returns 0 or -ENOMEM. */
int topo_order(const struct topo *t, int first, char **hosts, size_t n,
	       int *rack_of);

#endif
