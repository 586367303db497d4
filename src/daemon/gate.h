/* SPDX-License-Identifier: MIT */
/*
 * gate - admission of connections that have not authenticated yet.
 *
 * Whoever can reach a daemon's port can open connections to it; until one
 * has authenticated (or said it is a member's data connection) it costs a
 * file descriptor and memory and proves nothing.  The gate bounds them,
 * like sshd's MaxStartups, but evicts instead of refusing:
 *
 *   - at most max_per_host from one address: a newcomer from an address
 *     at its limit evicts that address's oldest one, so a single hostile
 *     host only ever displaces its own connections;
 *   - at most max_total in all: a newcomer then evicts the oldest of all
 *     (only a flood from many addresses gets there);
 *   - none for longer than deadline_ms, whatever it sends (a connection
 *     that trickles a byte now and then defeats an idle timeout).
 *
 * Evicting rather than refusing keeps the daemon reachable: a real sender
 * authenticates within a round trip, so to keep it out a flood must open
 * more than the limit within that round trip, again and again, instead of
 * filling the slots once and holding them.
 *
 * What was dropped is logged as a warning, at most once a second.
 */
#ifndef RDMCP_GATE_H
#define RDMCP_GATE_H

#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

struct gate;

/* One waiting connection; embed it in the owner's record. */
struct gate_entry {
	struct sockaddr_storage host;	/* the peer's address, port 0 */
	uint64_t since;			/* uv_now() when admitted */
	struct gate_entry *prev, *next;
};

/* The owner drops an entry's connection; must call gate_leave() on it. */
typedef void (*gate_evict_fn)(void *ctx, struct gate_entry *e);

struct gate_cfg {
	uv_loop_t *loop;
	unsigned max_total, max_per_host, deadline_ms;
	gate_evict_fn evict;
	void *ctx;
};

/* Start a gate.  Its timer runs on cfg->loop only while a connection
 * waits or a drop is unreported: an idle daemon does not wake.  0 or
 * -errno. */
int gate_new(const struct gate_cfg *cfg, struct gate **out);

/* Admit a connection from `from` (any port): first evicts whatever the
 * limits say must go to make room, then records e as the newest. */
void gate_admit(struct gate *g, struct gate_entry *e,
		const struct sockaddr_storage *from);

/* The connection authenticated, identified itself or closed. */
void gate_leave(struct gate *g, struct gate_entry *e);

/* Count an accept() that failed (e.g. EMFILE), for the log. */
void gate_accept_failed(struct gate *g, int status);

/* Stop; the memory goes once the loop has closed the timer.  Entries
 * still admitted are the owner's to drop.  NULL is a no-op. */
void gate_close(struct gate *g);

#endif
