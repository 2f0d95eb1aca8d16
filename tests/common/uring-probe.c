/* SPDX-License-Identifier: MIT */
/*
 * Exit 0 when libsweep's io_uring backend can be used here, 1 when it
 * resolves to plain syscalls (kernel too old, io_uring_disabled, seccomp, or
 * a build without liburing). The shell tests' -uring variants skip on 1
 * (tests/common/lib.sh: have_uring); the C tests use backend.h.
 */
#include <sweep.h>

int main(void)
{
	return sweep_backend_resolve(SWEEP_BACKEND_URING) == SWEEP_BACKEND_URING ? 0 : 1;
}
