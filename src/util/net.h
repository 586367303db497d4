/* SPDX-License-Identifier: MIT */
/*
 * net - socket address parsing and formatting.  Pure apart from
 * inet_pton/inet_ntop; name resolution lives with its callers (it must not
 * block the event loop).
 */
#ifndef RDMCP_NET_H
#define RDMCP_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Room for "[v6 address]:port". */
#define NET_ADDRSTRLEN 64

/* Split "host", "host:port", "[v6]" or "[v6]:port" into host and port
 * (default_port when absent).  Returns 0 or -EINVAL. */
int net_split_hostport(const char *s, char *host, size_t hostlen,
		       uint16_t *port, uint16_t default_port);

/* Fill a socket address from a numeric IPv4/IPv6 address and a port.
 * Returns 0 or -EINVAL if `host` is not numeric. */
int net_parse_numeric(const char *host, uint16_t port,
		      struct sockaddr_storage *out);

/* "a.b.c.d:port" or "[v6]:port"; "?" for other families. */
void net_format(const struct sockaddr_storage *ss, char *buf, size_t len);
void net_format_sa(const struct sockaddr *sa, char *buf, size_t len);

/* The address without the port. */
void net_format_host(const struct sockaddr_storage *ss, char *buf,
		     size_t len);

/* Same family and address, the ports aside (a is a `struct sockaddr` as
 * getifaddrs(3) gives them; NULL is no address). */
bool net_same_host(const struct sockaddr *a,
		   const struct sockaddr_storage *b);

/* Same family, address and port. */
bool net_equal(const struct sockaddr_storage *a,
	       const struct sockaddr_storage *b);

/* The port of an AF_INET/AF_INET6 address (host order); 0 otherwise. */
uint16_t net_port(const struct sockaddr_storage *ss);

/* Set the port (host order) of an AF_INET/AF_INET6 address; other
 * families are left alone. */
void net_set_port(struct sockaddr_storage *ss, uint16_t port);

/* Copy an address with its port set to 0, e.g. to bind a source address. */
void net_without_port(const struct sockaddr_storage *in,
		      struct sockaddr_storage *out);

/* True for a loopback address (127.0.0.0/8 or ::1). */
bool net_is_loopback(const struct sockaddr_storage *ss);

/* True if the host of "host", "host:port" or "[v6]:port" is a loopback
 * address or "localhost" (RFC 6761): a member on this machine.  Other
 * names are not resolved and count as elsewhere. */
bool net_hostport_is_loopback(const char *s);

/* True for the wildcard address (0.0.0.0 or ::). */
bool net_is_any(const struct sockaddr_storage *ss);

#endif
