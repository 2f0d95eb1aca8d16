/* SPDX-License-Identifier: MIT */
/* The copy engine's errors in cp's words (the library never prints; sweep-cp and sweep-sync do). */
#ifndef SWEEP_COPY_MSG_H
#define SWEEP_COPY_MSG_H

#include <stddef.h>
#include <sweep/copy.h>

/*
 * cp's wording for an error, without the program name, e.g. "cannot open
 * 'a/b' for reading: Permission denied". -ESTALE (the file or a directory
 * on its way was replaced after it was listed) reads "was replaced during
 * the copy; not copied". Returns buf.
 */
const char *copy_error_format(const struct sweep_copy_error *err, char *buf, size_t len);

/* The name of a metadata step ("ownership", "xattrs", "ACL", "permissions", "times"). */
const char *copy_meta_name(enum sweep_copy_meta op);

#endif
