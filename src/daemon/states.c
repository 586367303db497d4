/* SPDX-License-Identifier: MIT */
/*
 * states - which of the sender's control frames a transfer on a daemon
 * takes in each of its states, and where each leads (see
 * transfer_int.h).  Pure: transfer.c acts on what it says.
 */
#include <errno.h>

#include "daemon/transfer_int.h"

int
transfer_frame_step(enum jstate st, bool go_received, uint8_t type,
		    enum jstate *next)
{
	*next = st;
	if (type == MSG_TRACE || st == JS_ENDED)
		return 0;	/* asked for any time; after the end, ignored */
	switch (type) {
	case MSG_START:
		if (st != JS_READY)
			return -EPROTO;
		*next = JS_RUNNING;
		return 0;
	case MSG_CRC:		/* the go: once, while running */
		return st == JS_RUNNING && !go_received ? 0 : -EPROTO;
	case MSG_ABORT:		/* answered OUTCOME, in any state */
		*next = JS_ENDED;
		return 0;
	case MSG_DIGESTS:	/* asked for, before or after REPLACE (while
				 * the daemon digests its own blocks: set-up) */
		return st == JS_HAVE || st == JS_SETUP ? 0 : -EPROTO;
	case MSG_REPLACE:	/* after HAVE_ASK: settle, and set up */
		if (st != JS_HAVE)
			return -EPROTO;
		*next = JS_SETUP;
		return 0;
	default:
		return -EPROTO;
	}
}
