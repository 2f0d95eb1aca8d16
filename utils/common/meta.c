/* SPDX-License-Identifier: MIT */
/*
 * meta: copy mode, owner, times, xattrs and ACLs from one file to another.
 *
 * ACLs travel as their raw system.posix_acl_access / _default xattrs: the
 * kernel converts them both ways, so no libacl is needed and a file
 * without an extended ACL simply has no such attribute.
 */
#include "meta.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define ACL_ACCESS "system.posix_acl_access"
#define ACL_DEFAULT "system.posix_acl_default"

/* The xattr calls on a ref: by fd when there is one, else by path, not following. */
static ssize_t x_list(const struct meta_ref *r, char *buf, size_t n)
{
	return r->fd >= 0 ? flistxattr(r->fd, buf, n) : llistxattr(r->path, buf, n);
}

static ssize_t x_get(const struct meta_ref *r, const char *name, void *buf, size_t n)
{
	return r->fd >= 0 ? fgetxattr(r->fd, name, buf, n) : lgetxattr(r->path, name, buf, n);
}

static int x_set(const struct meta_ref *r, const char *name, const void *val, size_t n)
{
	return r->fd >= 0 ? fsetxattr(r->fd, name, val, n, 0) : lsetxattr(r->path, name, val, n, 0);
}

static int x_remove(const struct meta_ref *r, const char *name)
{
	return r->fd >= 0 ? fremovexattr(r->fd, name) : lremovexattr(r->path, name);
}

static bool unsupported(int err)
{
	return err == ENOTSUP || err == EOPNOTSUPP || err == ENOSYS;
}

/*
 * Read a whole attribute (list when name is NULL) into a malloc'ed buffer.
 * Returns its length, or -errno. Retries when it grows between the calls.
 */
static ssize_t x_read(const struct meta_ref *r, const char *name, char **ret)
{
	for (int tries = 0; tries < 8; tries++) {
		ssize_t n = name ? x_get(r, name, NULL, 0) : x_list(r, NULL, 0);
		if (n < 0)
			return -errno;
		char *buf = malloc(n + 1);
		if (!buf)
			return -ENOMEM;
		ssize_t m = name ? x_get(r, name, buf, n) : x_list(r, buf, n);
		if (m >= 0) {
			*ret = buf;
			return m;
		}
		int err = errno;
		free(buf);
		if (err != ERANGE)
			return -err;
	}
	return -ERANGE;
}

struct meta_run {
	meta_error_fn on_error;
	void *ctx;
	int first;
};

static void fail(struct meta_run *run, enum meta_op op, int err)
{
	if (!run->first)
		run->first = err;
	if (run->on_error)
		run->on_error(op, err, run->ctx);
}

/* Returns whether dst now has the source's owner and group. */
static bool copy_owner(struct meta_run *run, const struct meta_ref *dst, const struct stat *st)
{
	int rc = dst->fd >= 0 ? fchown(dst->fd, st->st_uid, st->st_gid)
			      : fchownat(AT_FDCWD, dst->path, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW);
	if (rc == 0)
		return true;
	int err = errno;
	if ((err == EPERM || err == EINVAL) && geteuid() != 0) {
		/* cp: an ordinary user cannot give files away; keep at least the group if allowed. */
		if (dst->fd >= 0)
			(void)!fchown(dst->fd, (uid_t)-1, st->st_gid);
		else
			(void)!fchownat(AT_FDCWD, dst->path, (uid_t)-1, st->st_gid, AT_SYMLINK_NOFOLLOW);
		return false;
	}
	fail(run, META_OP_OWNER, -err);
	return false;
}

/* Copy one attribute; a missing one on the source is removed from dst (ACLs inherited by dst). */
static void copy_one_xattr(struct meta_run *run, const struct meta_ref *src, const struct meta_ref *dst,
			   const char *name, enum meta_op op, bool strict, bool remove_missing)
{
	char *val = NULL;
	ssize_t n = x_read(src, name, &val);
	if (n == -ENODATA || (n < 0 && unsupported(-n))) {
		if (remove_missing && x_remove(dst, name) < 0 && errno != ENODATA && !unsupported(errno))
			fail(run, op, -errno);
		return;
	}
	if (n < 0) {
		fail(run, op, (int)n);
		return;
	}
	if (x_set(dst, name, val, n) < 0 && !(unsupported(errno) && !strict && op == META_OP_XATTR))
		fail(run, op, -errno);
	free(val);
}

static bool is_acl_name(const char *name)
{
	return strncmp(name, "system.posix_acl_", 17) == 0;
}

static void copy_xattrs(struct meta_run *run, const struct meta_ref *src, const struct meta_ref *dst, bool strict)
{
	char *list = NULL;
	ssize_t n = x_read(src, NULL, &list);
	if (n < 0) {
		if (!unsupported(-n))
			fail(run, META_OP_XATTR, (int)n);
		return;
	}
	for (char *name = list; name < list + n; name += strlen(name) + 1) {
		if (!is_acl_name(name))
			copy_one_xattr(run, src, dst, name, META_OP_XATTR, strict, false);
	}
	free(list);
}

static void copy_acls(struct meta_run *run, const struct meta_ref *src, const struct meta_ref *dst,
		      const struct stat *st)
{
	copy_one_xattr(run, src, dst, ACL_ACCESS, META_OP_ACL, true, true);
	if (S_ISDIR(st->st_mode))
		copy_one_xattr(run, src, dst, ACL_DEFAULT, META_OP_ACL, true, true);
}

static void copy_mode(struct meta_run *run, const struct meta_ref *dst, const struct stat *st, bool owned)
{
	/* Set-id bits on a file owned by someone else would be a gift: cp drops them. */
	mode_t mode = st->st_mode & (owned ? 07777 : 01777);
	int rc = dst->fd >= 0 ? fchmod(dst->fd, mode) : fchmodat(AT_FDCWD, dst->path, mode, 0);
	if (rc < 0)
		fail(run, META_OP_MODE, -errno);
}

static void copy_times(struct meta_run *run, const struct meta_ref *dst, const struct stat *st)
{
	struct timespec ts[2] = {st->st_atim, st->st_mtim};
	int rc = dst->fd >= 0 ? futimens(dst->fd, ts) : utimensat(AT_FDCWD, dst->path, ts, AT_SYMLINK_NOFOLLOW);
	if (rc < 0)
		fail(run, META_OP_TIMES, -errno);
}

int meta_copy(const struct meta_ref *src, const struct meta_ref *dst, const struct stat *st,
	      unsigned what, meta_error_fn on_error, void *ctx)
{
	struct meta_run run = {.on_error = on_error, .ctx = ctx};
	bool link = S_ISLNK(st->st_mode);

	bool owned = true;
	if (what & META_OWNER)
		owned = copy_owner(&run, dst, st);
	if (what & META_XATTR)
		copy_xattrs(&run, src, dst, what & META_STRICT);
	/* Symlinks have neither ACLs nor a mode of their own (chmod would follow them). */
	if ((what & META_ACL) && !link)
		copy_acls(&run, src, dst, st);
	if ((what & META_MODE) && !link)
		copy_mode(&run, dst, st, owned);
	if (what & META_TIMES)
		copy_times(&run, dst, st);
	return run.first;
}

const char *meta_op_name(enum meta_op op)
{
	switch (op) {
	case META_OP_OWNER: return "ownership";
	case META_OP_XATTR: return "xattrs";
	case META_OP_ACL: return "ACL";
	case META_OP_MODE: return "permissions";
	case META_OP_TIMES: return "times";
	}
	return "metadata";
}
