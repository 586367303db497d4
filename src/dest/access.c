/* SPDX-License-Identifier: MIT */
/*
 * access - what a daemon that may not write where a job lands is told:
 * the deployment that lets it (see dest_int.h).
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dest/dest_int.h"

/* Does this process hold CAP_DAC_OVERRIDE (root's, unless a unit's
 * CapabilityBoundingSet= took it)? */
static bool
may_override_modes(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct c[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &h, c) < 0)
		return geteuid() == 0;
	return (c[CAP_TO_INDEX(CAP_DAC_OVERRIDE)].effective &
		CAP_TO_MASK(CAP_DAC_OVERRIDE)) != 0;
}

int
dest_access_hint(int rc, struct rd_err *err)
{
	size_t len = strlen(err->msg);

	if ((rc != -EACCES && rc != -EROFS) || err->code != rc ||
	    strstr(err->msg, strerror(-rc)) == NULL)
		return rc;
	if (rc == -EROFS)	/* ProtectSystem=strict without the root */
		snprintf(err->msg + len, sizeof(err->msg) - len, " (under "
			 "systemd, the unit's ReadWritePaths= must list the "
			 "daemon's --root directories too)");
	else if (!may_override_modes())
		snprintf(err->msg + len, sizeof(err->msg) - len, " (this "
			 "daemon's user may not write there; for directories "
			 "that users own, run it as root with only "
			 "CAP_DAC_OVERRIDE CAP_FOWNER CAP_CHOWN, as "
			 "rdmcp.service's header shows)");
	return rc;
}
