/* SPDX-License-Identifier: MIT */
/*
 * meta: copy mode, owner, times, xattrs and ACLs from one file to another
 * (see copy_meta.h for the rules).
 *
 * ACLs travel as their raw system.posix_acl_access / _default xattrs: the
 * kernel converts them both ways, so no libacl is needed and a file
 * without an extended ACL simply has no such attribute.
 */
#include "copy_meta.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "internal.h"

#define ACL_ACCESS "system.posix_acl_access"
#define ACL_DEFAULT "system.posix_acl_default"

struct meta_blob {
	size_t n;
	struct {
		char *name;
		char *val;
		size_t len;
	} *v;
};

const char *sweep__meta_at_path(int dirfd, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d/%s", dirfd, name);
	return buf;
}

/* The xattr calls on a ref: by fd when there is one, else on the name in its directory, not following. */
#define AT_BUF (32 + NAME_MAX)

static ssize_t x_list(const struct meta_ref *r, char *buf, size_t n)
{
	char p[AT_BUF];
	return r->fd >= 0 ? flistxattr(r->fd, buf, n) : llistxattr(sweep__meta_at_path(r->dirfd, r->name, p, sizeof(p)), buf, n);
}

static ssize_t x_get(const struct meta_ref *r, const char *name, void *buf, size_t n)
{
	char p[AT_BUF];
	return r->fd >= 0 ? fgetxattr(r->fd, name, buf, n)
			  : lgetxattr(sweep__meta_at_path(r->dirfd, r->name, p, sizeof(p)), name, buf, n);
}

static int x_set(const struct meta_ref *r, const char *name, const void *val, size_t n)
{
	char p[AT_BUF];
	return r->fd >= 0 ? fsetxattr(r->fd, name, val, n, 0)
			  : lsetxattr(sweep__meta_at_path(r->dirfd, r->name, p, sizeof(p)), name, val, n, 0);
}

static int x_remove(const struct meta_ref *r, const char *name)
{
	char p[AT_BUF];
	return r->fd >= 0 ? fremovexattr(r->fd, name) : lremovexattr(sweep__meta_at_path(r->dirfd, r->name, p, sizeof(p)), name);
}

static bool unsupported(int err)
{
	return err == ENOTSUP || err == EOPNOTSUPP || err == ENOSYS;
}

/*
 * Read a whole attribute (the list when name is NULL) into a malloc'ed
 * buffer. Returns its length, or -errno. Retries when it grows between calls.
 */
static ssize_t x_read(const struct meta_ref *r, const char *name, char **ret)
{
	for (int tries = 0; tries < 8; tries++) {
		ssize_t n = name ? x_get(r, name, NULL, 0) : x_list(r, NULL, 0);
		if (n < 0)
			return -errno;
		char *buf = malloc((size_t)n + 1);
		if (!buf)
			return -ENOMEM;
		if (n == 0) { /* nothing to read (most files have no attributes): no second call */
			buf[0] = '\0';
			*ret = buf;
			return 0;
		}
		ssize_t m = name ? x_get(r, name, buf, (size_t)n) : x_list(r, buf, (size_t)n);
		if (m >= 0) {
			buf[m] = '\0';
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

/* One attribute of the source: from its blob when it has one, else read now. -ENODATA when it has none. */
static ssize_t src_read(const struct meta_ref *src, const char *name, char **ret)
{
	if (!src->blob)
		return x_read(src, name, ret);
	for (size_t i = 0; i < src->blob->n; i++) {
		if (!strcmp(src->blob->v[i].name, name)) {
			char *c = malloc(src->blob->v[i].len + 1);
			if (!c)
				return -ENOMEM;
			memcpy(c, src->blob->v[i].val, src->blob->v[i].len);
			*ret = c;
			return (ssize_t)src->blob->v[i].len;
		}
	}
	return -ENODATA;
}

/* The source's attribute names, NUL-separated (as listxattr gives them). */
static ssize_t src_list(const struct meta_ref *src, char **ret)
{
	if (!src->blob)
		return x_read(src, NULL, ret);
	size_t len = 0;
	for (size_t i = 0; i < src->blob->n; i++)
		len += strlen(src->blob->v[i].name) + 1;
	char *l = malloc(len + 1), *p = l;
	if (!l)
		return -ENOMEM;
	for (size_t i = 0; i < src->blob->n; i++) {
		size_t k = strlen(src->blob->v[i].name) + 1;
		memcpy(p, src->blob->v[i].name, k);
		p += k;
	}
	*ret = l;
	return (ssize_t)len;
}

struct meta_run {
	meta_error_fn on_error;
	void *ctx;
	int first;
	const struct sweep_copy_opts *o; /* xattr_wanted, or NULL */
	/*
	 * The source's attribute names as copy_xattrs listed them (NULL: not
	 * listed): an ACL not among them is not asked for (the list is what
	 * sweep__meta_capture goes by too), a call a file saved.
	 */
	char *names;
	size_t nnames;
};

/* One attribute of the source (see src_read), known absent where the source's names were listed without it. */
static ssize_t run_read(const struct meta_run *run, const struct meta_ref *src, const char *name, char **ret)
{
	if (run->names) {
		const char *p = run->names, *end = run->names + run->nnames;
		while (p < end && strcmp(p, name))
			p += strlen(p) + 1;
		if (p >= end)
			return -ENODATA;
	}
	return src_read(src, name, ret);
}

/* An xattr (not an ACL) the caller's filter leaves alone. */
static bool filtered_out(const struct sweep_copy_opts *o, const char *name)
{
	return o && o->xattr_wanted && !o->xattr_wanted(name, o->ctx);
}

static void fail(struct meta_run *run, enum sweep_copy_meta op, int err)
{
	if (!run->first)
		run->first = err;
	if (run->on_error)
		run->on_error(op, err, run->ctx);
}

static int do_chown(const struct meta_ref *dst, uid_t uid, gid_t gid)
{
	return dst->fd >= 0 ? fchown(dst->fd, uid, gid) : fchownat(dst->dirfd, dst->name, uid, gid, AT_SYMLINK_NOFOLLOW);
}

/* Returns whether dst now has the source's owner and group. */
static bool copy_owner(struct meta_run *run, const struct meta_ref *dst, const struct sweep_stat *st)
{
	/* As cp: no chown where the file already has them (a new file has no set-id bits to clear). */
	if (dst->owner_known && dst->uid == st->uid && dst->gid == st->gid)
		return true;
	if (do_chown(dst, (uid_t)st->uid, (gid_t)st->gid) == 0)
		return true;
	int err = errno;
	if ((err == EPERM || err == EINVAL) && geteuid() != 0) {
		/* cp: an ordinary user cannot give files away; keep at least the group if allowed. */
		(void)!do_chown(dst, (uid_t)-1, (gid_t)st->gid);
		return false;
	}
	fail(run, SWEEP_COPY_META_OWNER, -err);
	return false;
}

/* Put the source's attribute, read as n bytes of val (n: -errno), on dst as dname (see copy_one_xattr_as). */
static void put_xattr(struct meta_run *run, const struct meta_ref *dst, const char *dname, ssize_t n,
		      const char *val, enum sweep_copy_meta op, bool strict, bool remove_missing)
{
	if (n == -ENODATA || (n < 0 && unsupported((int)-n))) {
		if (remove_missing && x_remove(dst, dname) < 0 && errno != ENODATA && !unsupported(errno))
			fail(run, op, -errno);
		return;
	}
	if (n < 0) {
		fail(run, op, (int)n);
		return;
	}
	if (x_set(dst, dname, val, (size_t)n) < 0 && !(unsupported(errno) && !strict && op == SWEEP_COPY_META_XATTR))
		fail(run, op, -errno);
}

/*
 * Copy one attribute (to dname: the name it has on dst); one the source
 * lacks is removed from dst when remove_missing (ACLs dst inherited).
 */
static void copy_one_xattr_as(struct meta_run *run, const struct meta_ref *src, const struct meta_ref *dst,
			      const char *name, const char *dname, enum sweep_copy_meta op, bool strict,
			      bool remove_missing)
{
	char *val = NULL;
	ssize_t n = run_read(run, src, name, &val);

	put_xattr(run, dst, dname, n, val, op, strict, remove_missing);
	free(val);
}

/*
 * The access ACL of a copy made just now (dst->made: no set-id bits, at
 * most an ACL inherited from its directory's default), and its mode when
 * the source has no ACL: one ACL of the mode's three entries sets the mode
 * bits and drops an inherited ACL in one call, as cp does (the kernel
 * keeps no ACL equivalent to the mode), where a removal and a chmod took
 * two. Returns whether the mode is set; where it is not (the source has an
 * ACL, or the filesystem refused it), the ACL was copied or removed as
 * copy_one_xattr would, and the caller sets the mode.
 */
static bool copy_acl_and_mode(struct meta_run *run, const struct meta_ref *src, const struct meta_ref *dst,
			      mode_t mode)
{
	char *val = NULL;
	ssize_t n = run_read(run, src, ACL_ACCESS, &val);

	if (n == -ENODATA || (n < 0 && unsupported((int)-n))) {
		/* struct posix_acl_xattr_header and three posix_acl_xattr_entry, little-endian */
		static const uint16_t tags[3] = { 0x01 /* USER_OBJ */, 0x04 /* GROUP_OBJ */, 0x20 /* OTHER */ };
		unsigned char acl[4 + 3 * 8];
		uint32_t v = htole32(2); /* POSIX_ACL_XATTR_VERSION */
		memcpy(acl, &v, 4);
		for (int i = 0; i < 3; i++) {
			uint16_t tag = htole16(tags[i]), perm = htole16((uint16_t)((mode >> (3 * (2 - i))) & 7));
			uint32_t id = htole32(UINT32_MAX); /* ACL_UNDEFINED_ID */
			memcpy(acl + 4 + 8 * i, &tag, 2);
			memcpy(acl + 6 + 8 * i, &perm, 2);
			memcpy(acl + 8 + 8 * i, &id, 4);
		}
		if (x_set(dst, ACL_ACCESS, acl, sizeof(acl)) == 0)
			return true;
		if (unsupported(errno))
			return false; /* no ACLs here: none was inherited either */
	}
	put_xattr(run, dst, ACL_ACCESS, n, val, SWEEP_COPY_META_ACL, true, true);
	free(val);
	return false;
}

static void copy_one_xattr(struct meta_run *run, const struct meta_ref *src, const struct meta_ref *dst,
			   const char *name, enum sweep_copy_meta op, bool strict, bool remove_missing)
{
	copy_one_xattr_as(run, src, dst, name, name, op, strict, remove_missing);
}

static bool is_acl_name(const char *name)
{
	return strncmp(name, "system.posix_acl_", 17) == 0;
}

static void copy_xattrs(struct meta_run *run, const struct meta_ref *src, const struct meta_ref *dst, bool strict,
			bool fake)
{
	/* (rsync's filter sees the source's own names) */
	char *list = NULL, buf[XATTR_NAME_MAX + 1];
	ssize_t n = src_list(src, &list);
	if (n < 0) {
		if (!unsupported((int)-n))
			fail(run, SWEEP_COPY_META_XATTR, (int)n);
		return;
	}
	for (char *name = list; name < list + n; name += strlen(name) + 1) {
		const char *dname = fake ? sweep_copy_fake_xattr_name(name, buf, sizeof(buf)) : name;
		if (dname && !is_acl_name(name) && !filtered_out(run->o, name))
			copy_one_xattr_as(run, src, dst, name, dname, SWEEP_COPY_META_XATTR, strict, false);
	}
	/* kept for the ACL steps: a list read now, from the file itself (a blob answers without a call) */
	if (!src->blob) {
		run->names = list;
		run->nnames = (size_t)n;
		return;
	}
	free(list);
}

static void copy_mode(struct meta_run *run, const struct meta_ref *dst, const struct sweep_stat *st, bool owned)
{
	/* Set-id bits on a file owned by someone else would be a gift: cp drops them. */
	mode_t mode = (mode_t)(st->mode & (owned ? 07777 : 01777));
	int rc = dst->fd >= 0 ? (fchmod(dst->fd, mode) < 0 ? -errno : 0) : sweep__chmod_nofollow(dst->dirfd, dst->name, mode);
	if (rc < 0)
		fail(run, SWEEP_COPY_META_MODE, rc);
}

static void copy_times(struct meta_run *run, const struct meta_ref *dst, const struct sweep_stat *st, bool mtime)
{
	struct timespec ts[2] = { { (time_t)st->atime_sec, (long)st->atime_nsec },
				  { (time_t)st->mtime_sec, (long)st->mtime_nsec } };
	if (!mtime)
		ts[1].tv_nsec = UTIME_OMIT;
	int rc = dst->fd >= 0 ? futimens(dst->fd, ts) : utimensat(dst->dirfd, dst->name, ts, AT_SYMLINK_NOFOLLOW);
	if (rc < 0)
		fail(run, SWEEP_COPY_META_TIMES, -errno);
}

int sweep__meta_copy(const struct meta_ref *src, const struct meta_ref *dst, const struct sweep_stat *st,
	      unsigned what, const struct sweep_copy_opts *o, meta_error_fn on_error, void *ctx)
{
	struct meta_run run = { .on_error = on_error, .ctx = ctx, .o = o };
	bool fake = what & SWEEP_PRESERVE_FAKE_SUPER;
	bool link = S_ISLNK(st->mode) && !fake, owned = true; /* fake: a symlink is a placeholder file */

	if ((what & SWEEP_PRESERVE_OWNER) && !fake)
		owned = copy_owner(&run, dst, st);
	if (what & SWEEP_PRESERVE_XATTR)
		copy_xattrs(&run, src, dst, what & SWEEP_PRESERVE_STRICT, fake);
	/* Symlinks have neither ACLs nor a mode of their own (chmod would follow them). */
	bool mode_set = false;
	if ((what & SWEEP_PRESERVE_ACL) && !link) {
		if (dst->made && !fake && (what & SWEEP_PRESERVE_MODE) && !(st->mode & 07000))
			mode_set = copy_acl_and_mode(&run, src, dst, (mode_t)(st->mode & 0777));
		else
			copy_one_xattr(&run, src, dst, ACL_ACCESS, SWEEP_COPY_META_ACL, true, true);
		if (S_ISDIR(st->mode))
			copy_one_xattr(&run, src, dst, ACL_DEFAULT, SWEEP_COPY_META_ACL, true, true);
	}
	free(run.names);
	run.names = NULL;
	if (fake) {
		int rc = sweep__fake_stat(dst, st, what);
		if (rc < 0)
			fail(&run, SWEEP_COPY_META_MODE, rc);
	} else if ((what & SWEEP_PRESERVE_MODE) && !link && !mode_set) {
		copy_mode(&run, dst, st, owned);
	}
	if ((what & SWEEP_PRESERVE_TIMES) && !(S_ISDIR(st->mode) && (what & SWEEP_PRESERVE_OMIT_DIR_TIMES)) &&
	    !(link && (what & SWEEP_PRESERVE_OMIT_LINK_TIMES)))
		copy_times(&run, dst, st, true);
	else if ((what & SWEEP_PRESERVE_ATIME) && !S_ISDIR(st->mode))
		copy_times(&run, dst, st, false);
	return run.first;
}

struct meta_blob *sweep__meta_blob_free(struct meta_blob *b)
{
	if (!b)
		return NULL;
	for (size_t i = 0; i < b->n; i++) {
		free(b->v[i].name);
		free(b->v[i].val);
	}
	free(b->v);
	free(b);
	return NULL;
}

/* Is this attribute one that `what` asks for? */
static bool wanted(const char *name, unsigned what, bool is_dir)
{
	if (!strcmp(name, ACL_ACCESS) || (is_dir && !strcmp(name, ACL_DEFAULT)))
		return what & SWEEP_PRESERVE_ACL;
	return !is_acl_name(name) && (what & SWEEP_PRESERVE_XATTR);
}

int sweep__meta_capture(const struct meta_ref *src, unsigned what, bool is_dir, struct meta_blob **ret)
{
	char *list = NULL;
	struct meta_blob *b = NULL;
	ssize_t n;
	int rc = 0;

	*ret = NULL;
	if (!(what & (SWEEP_PRESERVE_XATTR | SWEEP_PRESERVE_ACL)))
		return 0;
	b = calloc(1, sizeof(*b)); /* an empty blob says "none", unlike NULL ("not captured") */
	if (!b)
		return -ENOMEM;
	n = x_read(src, NULL, &list);
	if (n < 0) {
		if (!unsupported((int)-n)) {
			sweep__meta_blob_free(b);
			return (int)n;
		}
		*ret = b;
		return 0;
	}
	for (char *name = list; name < list + n && rc == 0; name += strlen(name) + 1) {
		char *val = NULL;
		ssize_t len;
		if (!wanted(name, what, is_dir))
			continue;
		len = x_read(src, name, &val);
		if (len == -ENODATA)
			continue; /* removed meanwhile */
		if (len < 0) {
			rc = (int)len;
			break;
		}
		void *nv = realloc(b->v, (b->n + 1) * sizeof(*b->v));
		char *nm = strdup(name);
		if (!nv || !nm) {
			if (nv)
				b->v = nv;
			free(nm);
			free(val);
			rc = -ENOMEM;
			break;
		}
		b->v = nv;
		b->v[b->n].name = nm;
		b->v[b->n].val = val;
		b->v[b->n].len = (size_t)len;
		b->n++;
	}
	free(list);
	if (rc < 0) {
		sweep__meta_blob_free(b);
		return rc;
	}
	*ret = b;
	return 0;
}

int sweep__meta_blob_from(const struct sweep_copy_xattr *x, size_t n, unsigned what, bool is_dir, struct meta_blob **ret)
{
	struct meta_blob *b;

	*ret = NULL;
	if (!(what & (SWEEP_PRESERVE_XATTR | SWEEP_PRESERVE_ACL)))
		return 0;
	if (!(b = calloc(1, sizeof(*b))) || (n && !(b->v = calloc(n, sizeof(*b->v))))) {
		free(b);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (!x[i].name || (!x[i].value && x[i].len) || !wanted(x[i].name, what, is_dir))
			continue;
		char *nm = strdup(x[i].name), *val = malloc(x[i].len + 1);
		if (!nm || !val) {
			free(nm);
			free(val);
			sweep__meta_blob_free(b);
			return -ENOMEM;
		}
		if (x[i].len)
			memcpy(val, x[i].value, x[i].len);
		b->v[b->n].name = nm;
		b->v[b->n].val = val;
		b->v[b->n].len = x[i].len;
		b->n++;
	}
	*ret = b;
	return 0;
}

static bool src_has(const struct meta_ref *src, const char *name)
{
	char *v = NULL;
	ssize_t n = src_read(src, name, &v);
	free(v);
	return n >= 0;
}

/* fake: whether a source xattr is stored under dname */
static bool src_has_fake(const struct meta_ref *src, const char *dname)
{
	char *list = NULL, buf[XATTR_NAME_MAX + 1];
	ssize_t n = src_list(src, &list);
	bool found = false;

	for (char *name = list; n > 0 && name < list + n && !found; name += strlen(name) + 1) {
		const char *mapped = sweep_copy_fake_xattr_name(name, buf, sizeof(buf));
		found = mapped && !strcmp(mapped, dname);
	}
	free(list);
	return found;
}

void sweep__meta_prune(const struct meta_ref *src, const struct meta_ref *dst, bool xattrs, bool acls, bool fake,
		       const struct sweep_copy_opts *o)
{
	char *list = NULL;
	ssize_t n = x_read(dst, NULL, &list);

	if (n < 0)
		return;
	for (char *name = list; name < list + n; name += strlen(name) + 1) {
		bool acl = is_acl_name(name);
		if (!acl && filtered_out(o, name))
			continue; /* rsync_xal_set(): a name the filter excludes is left as it is */
		if (fake && !acl) {
			if (xattrs && !sweep__fake_keep_xattr(name) && !src_has_fake(src, name))
				(void)x_remove(dst, name);
		} else if (((acl && acls) || (!acl && xattrs)) && !src_has(src, name)) {
			(void)x_remove(dst, name);
		}
	}
	free(list);
}
