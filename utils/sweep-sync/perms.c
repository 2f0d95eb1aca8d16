/* SPDX-License-Identifier: MIT */
/*
 * Without -p, rsync gives a new entry the source's permission bits masked
 * by its destination directory's default permissions (dest_mode() and
 * default_perms_for_dir()): the directory's default ACL where it has one,
 * else the umask; set-user-ID, set-group-ID and sticky bits are not
 * copied (a new directory still gets the set-group-ID bit the kernel gives
 * it below a set-group-ID parent). sweep-sync computes that mode and hands
 * the copy engine the source with it, the umask being cleared for the run
 * so that the engine applies it as it stands.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sync.h"

/* The POSIX ACL xattr format (linux/posix_acl_xattr.h). */
#define ACL_XATTR_VERSION 2
#define ACL_USER_OBJ  0x01
#define ACL_GROUP_OBJ 0x04
#define ACL_MASK      0x10
#define ACL_OTHER     0x20

/* The permissions a directory's default ACL gives new entries, or -1 when it has none. */
static int acl_default_perms(int dirfd)
{
	unsigned char buf[4096];
	char path[64];
	ssize_t n;
	int user = -1, group = -1, mask = -1, other = -1;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", dirfd);
	n = getxattr(path, "system.posix_acl_default", buf, sizeof(buf));
	if (n < 4)
		return -1;
	uint32_t version;
	memcpy(&version, buf, 4);
	if (version != ACL_XATTR_VERSION)
		return -1;
	for (ssize_t off = 4; off + 8 <= n; off += 8) {
		uint16_t tag, perm;

		memcpy(&tag, buf + off, 2);
		memcpy(&perm, buf + off + 2, 2);
		if (tag == ACL_USER_OBJ)
			user = perm & 7;
		else if (tag == ACL_GROUP_OBJ)
			group = perm & 7;
		else if (tag == ACL_MASK)
			mask = perm & 7;
		else if (tag == ACL_OTHER)
			other = perm & 7;
	}
	if (user < 0 || group < 0 || other < 0)
		return -1;
	/* rsync_acl_get_perms(): the mask stands for the group where there is one */
	return user << 6 | (mask >= 0 ? mask : group) << 3 | other;
}

uint32_t perms_new_mode(struct sync_ctx *c, const struct sync_node *n)
{
	uint32_t mode = n->s.st.st_mode;
	const char *rel = node_dst_rel(c, n), *name;
	uint32_t parent = n->parent;

	if (c->o.perms || S_ISLNK(mode))
		return mode;
	if (parent != c->perm_cache_parent || c->perm_cache_parent == UINT32_MAX) {
		int dfd = c->dest_fd >= 0 ? sync_parent_beneath(c->dest_fd, rel, &name) : -1;
		struct stat st;
		int p = dfd >= 0 ? acl_default_perms(dfd) : -1;

		c->perm_cache_dflt = p >= 0 ? (uint32_t)p : 0777u & ~c->orig_umask;
		c->perm_cache_sgid = dfd >= 0 && fstat(dfd, &st) == 0 && (st.st_mode & S_ISGID);
		c->perm_cache_parent = parent;
		if (dfd >= 0)
			close(dfd);
	}
	mode = (mode & S_IFMT) | (mode & 0777 & c->perm_cache_dflt);
	if (S_ISDIR(mode) && c->perm_cache_sgid)
		mode |= S_ISGID;
	return mode;
}

uint32_t perms_exec_mode(uint32_t src_mode, uint32_t dst_mode)
{
	uint32_t mode = (src_mode & ~07777u) | (dst_mode & 07777u);

	if (!S_ISREG(src_mode))
		return mode;
	if (!(src_mode & 0111))
		mode &= ~0111u;
	else if (!(dst_mode & 0111))
		mode |= (mode & 0444) >> 2; /* execute for whoever can read, as rsync grants it */
	return mode;
}
