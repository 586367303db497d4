/* SPDX-License-Identifier: MIT */
/*
 * The sender in its own host list.  It is the root of the pipeline and
 * already holds the files: a daemon on the same machine would only copy
 * them onto themselves (or fail on --force-less destinations), and its
 * rank would cost every other host a step.  A list naming this machine is
 * almost always a whole-cluster list (a host file, a Slurm allocation)
 * that forgot to leave the sender out, so it is a usage error that says
 * how to leave it out.
 *
 * This machine: its host name, short or with a domain, and the
 * non-loopback addresses of its interfaces, or, with --bind, only the
 * address bound to: a machine that plays several hosts on addresses of its
 * own (a test bed, a VM with several RDMA devices) sends from one of them
 * to the others.  Names other than its own
 * are not resolved (that would cost a lookup per host before the first
 * byte); loopback addresses stay allowed, for daemons on 127.0.0.x.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cmd.h"
#include "hosts/topo.h"
#include "util/net.h"

/* a and b name the same host if equal, or one is the other's short name
 * ("node07" and "node07.cluster"), ignoring case. */
static bool
same_name(const char *a, const char *b)
{
	size_t la = strcspn(a, "."), lb = strcspn(b, ".");

	if (strcasecmp(a, b) == 0)
		return true;
	return (a[la] == '\0' || b[lb] == '\0') && la == lb &&
	       strncasecmp(a, b, la) == 0;
}

/* Is the numeric address one of this machine's, loopback aside (with a
 * bound address, is it that one)? */
static bool
own_addr(const struct sockaddr_storage *ss, struct ifaddrs *ifs,
	 const struct sockaddr_storage *bound)
{
	struct ifaddrs *i;

	if (net_is_loopback(ss))
		return false;
	if (bound != NULL)
		return net_same_host((const struct sockaddr *)bound, ss);
	for (i = ifs; i != NULL; i = i->ifa_next)
		if (net_same_host(i->ifa_addr, ss))
			return true;
	return false;
}

/* Is `entry` (HOST[:PORT]) this machine? */
static bool
is_self(const char *entry, const char *me, struct ifaddrs *ifs,
	const struct sockaddr_storage *bound)
{
	struct sockaddr_storage ss;
	char host[256];
	uint16_t port;

	if (net_split_hostport(entry, host, sizeof(host), &port, 0) < 0)
		return false;
	if (net_parse_numeric(host, 0, &ss) == 0)
		return own_addr(&ss, ifs, bound);
	return me[0] != '\0' && same_name(host, me);
}

/* The rack of address sa in t (-1: none, or not an address). */
static int
rack_of_addr(const struct topo *t, const struct sockaddr *sa)
{
	struct sockaddr_storage ss = { 0 };
	char host[NET_ADDRSTRLEN];

	if (sa == NULL || (sa->sa_family != AF_INET &&
			   sa->sa_family != AF_INET6))
		return -1;
	memcpy(&ss, sa, sa->sa_family == AF_INET ? sizeof(struct sockaddr_in)
					       : sizeof(struct sockaddr_in6));
	net_format_host(&ss, host, sizeof(host));
	return topo_rack_of(t, host);
}

int
own_rack(const struct topo *t, const char *bind)
{
	struct sockaddr_storage bound;
	struct ifaddrs *ifs = NULL, *i;
	char name[256];
	int rack = -1;

	if (bind != NULL && net_parse_numeric(bind, 0, &bound) == 0)
		return rack_of_addr(t, (const struct sockaddr *)&bound);
	if (getifaddrs(&ifs) == 0) {
		for (i = ifs; i != NULL && rack < 0; i = i->ifa_next)
			rack = rack_of_addr(t, i->ifa_addr);
		freeifaddrs(ifs);
	}
	if (rack < 0 && gethostname(name, sizeof(name) - 1) == 0) {
		name[sizeof(name) - 1] = '\0';
		rack = topo_rack_of(t, name);
	}
	return rack;
}

int
refuse_self(const struct hostlist *hl, const char *bind)
{
	struct sockaddr_storage bound;
	struct ifaddrs *ifs = NULL;
	char me[256] = "";
	size_t i;
	int rc = 0;

	if (bind != NULL && net_parse_numeric(bind, 0, &bound) < 0)
		bind = NULL;	/* push_run says it is bad */
	if (gethostname(me, sizeof(me) - 1) < 0)
		me[0] = '\0';
	if (getifaddrs(&ifs) < 0)
		ifs = NULL;
	for (i = 0; i < hl->n && rc == 0; i++) {
		if (!is_self(hl->hosts[i], me, ifs, bind ? &bound : NULL))
			continue;
		warnx_("%s is this host (the sender); leave it out, e.g. -x %s",
		       hl->hosts[i], hl->hosts[i]);
		rc = -EINVAL;
	}
	if (ifs != NULL)
		freeifaddrs(ifs);
	return rc;
}
