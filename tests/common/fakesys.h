/* SPDX-License-Identifier: MIT */
/*
 * A made-up sysfs tree for unit tests (cmocka): files and links below a
 * root the test chose (sweep__fsinfo_set_sysroot points the library at
 * it). Directories on the way are made as needed.
 */
#ifndef SWEEP_TEST_FAKESYS_H
#define SWEEP_TEST_FAKESYS_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* root/rel holds content. */
static inline void fakesys_put(const char *root, const char *rel, const char *content)
{
	char p[512], cmd[600];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", p);
	assert_int_equal(system(cmd), 0);
	FILE *f = fopen(p, "we");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

/* root/rel is a symlink to root/target_rel (absolute, as sysfs's resolve). */
static inline void fakesys_link(const char *root, const char *rel, const char *target_rel)
{
	char p[512], t[512], cmd[600];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	snprintf(t, sizeof(t), "%s/%s", root, target_rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", p);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(symlink(t, p), 0);
}

#endif
