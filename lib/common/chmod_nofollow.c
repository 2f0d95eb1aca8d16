/* SPDX-License-Identifier: MIT */
/*
 * chmod of a name without following it, and without a descriptor.
 *
 * glibc before 2.39 does fchmodat(AT_SYMLINK_NOFOLLOW) by opening the name
 * O_PATH and changing /proc/self/fd/N: one descriptor more, which under a
 * low open-file limit (ulimit -n 8, every other one held by the walk and
 * the copy) is the one that fails, with EMFILE, for a FIFO, socket or
 * device made in a tree. Linux 6.6 has fchmodat2(2), which takes the flag
 * itself; older kernels (ENOSYS) and filters that refuse it (EPERM, as
 * some container profiles do for system calls they do not know) get the
 * library's call. On a symlink both refuse: EOPNOTSUPP.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#if !defined(SYS_fchmodat2) && defined(__linux__) && !defined(__alpha__)
#define SYS_fchmodat2 452
#endif

int sweep__chmod_nofollow(int dirfd, const char *name, mode_t mode)
{
#ifdef SYS_fchmodat2
	static bool missing;

	if (!__atomic_load_n(&missing, __ATOMIC_RELAXED)) {
		if (syscall(SYS_fchmodat2, dirfd, name, mode, AT_SYMLINK_NOFOLLOW) == 0)
			return 0;
		if (errno != ENOSYS && errno != EPERM)
			return -errno;
		if (errno == ENOSYS)
			__atomic_store_n(&missing, true, __ATOMIC_RELAXED);
	}
#endif
	return fchmodat(dirfd, name, mode, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}
