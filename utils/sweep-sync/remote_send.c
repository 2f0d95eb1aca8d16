/* SPDX-License-Identifier: MIT */
/*
 * The sending side of a remote transfer: the operands as main.c reads
 * them, the source walked as a local run walks it (flist.c, C-SCAN
 * order), its list sent, then the files the receiver asks for (and, for
 * -c, their digests) read through the library's batch: each request list
 * is planned and read in physical order, and the files go out in the
 * order they are read. Every file is opened beneath its operand's held
 * descriptor and must be the entry that was listed (the reader checks).
 *
 * The receiver is not trusted either: it may only ask for regular files
 * this side listed, by their index; anything else ends the run.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <sweep.h>

#include "cli.h"
#include "remote.h"

#define FLIST_FRAME (256u << 10) /* the list goes out in frames of about this size */
#define DIGEST_FRAME (24u * 2048)

struct sender {
	struct sync_ctx *c;
	struct remote *r;
	struct sweep_batch *xfer, *csum;
	uint64_t cur;        /* the file begun */
	bool begun;
	struct digest dg;
	struct wbuf digests;
	int err;             /* the wire failed: stop */
	/* the owners and groups listed, for their names */
	uint32_t *uids, *gids;
	size_t nuids, ngids, capuids, capgids;
	/* -A/-X: the directory whose entries' attributes are being read */
	char *xdir;
	int xdir_fd;
	uint32_t xdir_root;
};

static void wire_stat_of(struct wire_stat *w, const struct sweep_stat *s)
{
	*w = (struct wire_stat){
		.mode = s->mode, .uid = s->uid, .gid = s->gid, .nlink = s->nlink, .size = s->size, .blocks = s->blocks,
		.rdev = s->rdev, .dev = s->dev, .ino = s->ino, .mtime_sec = s->mtime_sec, .mtime_nsec = s->mtime_nsec,
		.atime_sec = s->atime_sec, .atime_nsec = s->atime_nsec, .ctime_sec = s->ctime_sec, .ctime_nsec = s->ctime_nsec,
	};
}

static int fail(struct sender *s, int err)
{
	if (!s->err)
		s->err = err;
	remote_broken(s->c, err);
	return err;
}

/* ---- the files asked for, read in physical order ---- */

static int tx_begin(const struct sweep_file *f, void *ctx)
{
	struct sender *s = ctx;
	struct wbuf b = { 0 };
	struct wire_stat st;
	int r;

	s->cur = f->entry->cookie;
	s->begun = true;
	wire_stat_of(&st, &f->st);
	wb_u32(&b, (uint32_t)s->cur);
	wb_stat(&b, &st);
	r = wire_send_buf(s->r->w, W_FILE_BEGIN, &b);
	wb_free(&b);
	return r < 0 ? fail(s, r) : 0;
}

static int tx_data(const struct sweep_file *f, uint64_t off, const void *buf, size_t len, void *ctx)
{
	struct sender *s = ctx;
	const char *p = buf;

	(void)f;
	while (len) {
		size_t n = len < WIRE_DATA_CHUNK ? len : WIRE_DATA_CHUNK;
		unsigned char o[8];

		for (int i = 0; i < 8; i++)
			o[i] = (unsigned char)(off >> (8 * i));
		int r = wire_send2(s->r->w, W_DATA, o, sizeof(o), p, n);
		if (r < 0)
			return fail(s, r);
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

static int tx_end(const struct sweep_file *f, int status, void *ctx)
{
	struct sender *s = ctx;
	struct wbuf b = { 0 };
	int r;

	if (s->err)
		return s->err;
	if (s->begun && s->cur == f->entry->cookie) {
		wb_u32(&b, (uint32_t)status);
		wb_u64(&b, f->length);
		r = wire_send_buf(s->r->w, W_FILE_END, &b);
	} else {
		/* never opened: the receiver reports it as it would a local source that fails */
		wb_u32(&b, (uint32_t)f->entry->cookie);
		wb_u32(&b, (uint32_t)(status < 0 ? status : -EIO));
		r = wire_send_buf(s->r->w, W_FILE_FAIL, &b);
	}
	s->begun = false;
	wb_free(&b);
	return r < 0 ? fail(s, r) : 0;
}

static const struct sweep_read_ops tx_ops = { .size = sizeof(tx_ops), .begin = tx_begin, .data = tx_data, .end = tx_end };

/* ---- -c: digests, read in physical order ---- */

static int cs_begin(const struct sweep_file *f, void *ctx)
{
	struct sender *s = ctx;

	(void)f;
	digest_init(&s->dg);
	return 0;
}

static int cs_data(const struct sweep_file *f, uint64_t off, const void *buf, size_t len, void *ctx)
{
	struct sender *s = ctx;

	(void)f;
	(void)off;
	digest_update(&s->dg, buf, len);
	return 0;
}

static int send_digests(struct sender *s)
{
	int r = s->digests.len ? wire_send_buf(s->r->w, W_DIGESTS, &s->digests) : 0;

	wb_reset(&s->digests);
	return r < 0 ? fail(s, r) : 0;
}

static int cs_end(const struct sweep_file *f, int status, void *ctx)
{
	struct sender *s = ctx;
	unsigned char out[16] = { 0 };

	if (status >= 0)
		digest_final(&s->dg, out);
	wb_u32(&s->digests, (uint32_t)f->entry->cookie);
	wb_u32(&s->digests, (uint32_t)(status < 0 ? status : 0));
	wb_bytes(&s->digests, out, sizeof(out));
	return s->digests.len >= DIGEST_FRAME ? send_digests(s) : 0;
}

static const struct sweep_read_ops cs_ops = { .size = sizeof(cs_ops), .begin = cs_begin, .data = cs_data, .end = cs_end };

static int batch_new(struct sender *s, const struct sweep_read_ops *ops, struct sweep_batch **ret)
{
	bool digest = ops == &cs_ops;
	struct sweep_batch_opts bo = {
		.size = sizeof(bo),
		.order = SWEEP_ORDER_AUTO,
		.max_files = SIZE_MAX,
		.max_bytes = 32u << 20, /* as the copy engine's batches */
		.plan_flags = SWEEP_PLAN_CACHE_CHECK,
		/*
		 * Files as the copy engine reads them: holes stay holes, to the
		 * file's end, atime untouched; digests over every byte, as the
		 * receiver's own (checksum.c).
		 */
		.read_flags = digest ? SWEEP_READ_NOATIME : SWEEP_READ_SPARSE | SWEEP_READ_NOATIME | SWEEP_READ_TO_EOF,
		.ops = ops,
		.ctx = s,
	};

	return sweep_batch_new(&bo, ret);
}

/*
 * The receiver asks for entries by index: regular files this side listed
 * (a digest too), each planned beneath its operand's descriptor. 0, or
 * <0: a protocol error (said) or the wire failed.
 */
static int take_requests(struct sender *s, const struct wire_frame *f, struct sweep_batch *b, bool digest)
{
	struct sync_ctx *c = s->c;
	char *pb = NULL;
	int r = 0;

	if (f->len % 4) {
		cli_msg("protocol error: a bad request from the receiver");
		return remote_broken(c, -EPROTO), -EPROTO;
	}
	for (size_t off = 0; off < f->len && !s->err; off += 4) {
		uint32_t k = (uint32_t)f->data[off] | (uint32_t)f->data[off + 1] << 8 | (uint32_t)f->data[off + 2] << 16 |
			     (uint32_t)f->data[off + 3] << 24;
		const struct sync_node *n = k < c->list.n ? &c->list.v[k] : NULL;
		struct sweep_stat st;

		if (!n || !S_ISREG(n->s.st.st_mode)) {
			cli_msg("protocol error: the receiver asked for something that is not a file listed");
			r = -EPROTO;
			remote_broken(c, r);
			break;
		}
		const char *path = node_src_path(c, n, &pb);
		int fd = c->src_fd[n->root];
		r = !path ? -ENOMEM : fd < 0 ? fd : sweep_batch_add_beneath(b, fd, node_src_rel(c, n), path, fst_sweep(&n->s.st, &st), k);
		if (s->err)
			break;
		if (r < 0) {
			/* not planned (its operand is gone, no memory): the receiver is told, as for a file that fails */
			struct wbuf e = { 0 };

			wb_u32(&e, k);
			wb_u32(&e, (uint32_t)(r == -ENOMEM ? -ENOMEM : r));
			if (digest) {
				wb_bytes(&s->digests, e.p, e.len);
				wb_bytes(&s->digests, (unsigned char[16]){ 0 }, 16);
				r = 0;
			} else {
				r = wire_send_buf(s->r->w, W_FILE_FAIL, &e);
				if (r < 0)
					fail(s, r);
			}
			wb_free(&e);
		}
	}
	free(pb);
	return s->err ? s->err : r < 0 ? r : 0;
}

/* ---- the list ---- */

static int note_id(uint32_t **v, size_t *n, size_t *cap, uint32_t id)
{
	if (!id)
		return 0; /* never mapped by name */
	for (size_t i = *n; i-- > 0;)
		if ((*v)[i] == id)
			return 0;
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		uint32_t *q = realloc(*v, nc * sizeof(*q));

		if (!q)
			return -ENOMEM;
		*v = q;
		*cap = nc;
	}
	(*v)[(*n)++] = id;
	return 0;
}

/* Which attributes go: as the copy engine copies them (-X: all but the ACLs; -A: the ACLs). */
static bool xattr_wanted(const struct sync_opts *o, const char *name, bool dir)
{
	bool acl = !strncmp(name, "system.posix_acl_", 17);

	if (acl)
		return o->acls && (!strcmp(name, "system.posix_acl_access") || (dir && !strcmp(name, "system.posix_acl_default")));
	return o->xattrs;
}

/* The directory holding n's source (beneath its operand's descriptor), kept for its siblings. */
static int xattr_dir(struct sender *s, const struct sync_node *n, const char **name)
{
	const char *rel = node_src_rel(s->c, n), *slash = strrchr(rel, '/');
	size_t dl = slash ? (size_t)(slash - rel) : 0;

	*name = slash ? slash + 1 : rel;
	if (s->xdir && s->xdir_root == n->root && strlen(s->xdir) == dl && !strncmp(s->xdir, rel, dl))
		return s->xdir_fd;
	if (s->xdir_fd >= 0)
		close(s->xdir_fd);
	free(s->xdir);
	s->xdir = strndup(rel, dl);
	s->xdir_root = n->root;
	s->xdir_fd = s->xdir && s->c->src_fd[n->root] >= 0
			     ? sweep_open_beneath(s->c->src_fd[n->root], dl ? s->xdir : ".", O_PATH | O_DIRECTORY, 0)
			     : -ENOENT;
	return s->xdir_fd;
}

/* The attributes of n, "u32 n, n x (name, value)", onto b. */
static void put_xattrs(struct sender *s, const struct sync_node *n, struct wbuf *b)
{
	const char *name;
	char path[64 + NAME_MAX + 1], *list = NULL;
	int dfd = xattr_dir(s, n, &name);
	ssize_t len = -1;
	size_t count_at = b->len;
	uint32_t count = 0;

	wb_u32(b, 0);
	if (dfd < 0)
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dfd, name);
	for (int tries = 0; tries < 4; tries++) {
		len = llistxattr(path, NULL, 0);
		if (len <= 0)
			break;
		free(list);
		list = malloc((size_t)len);
		if (!list)
			break;
		len = llistxattr(path, list, (size_t)len);
		if (len >= 0 || errno != ERANGE)
			break;
	}
	for (ssize_t i = 0; list && len > 0 && i < len; i += (ssize_t)strlen(list + i) + 1) {
		const char *x = list + i;

		if (!xattr_wanted(&s->c->o, x, S_ISDIR(n->s.st.st_mode)))
			continue;
		ssize_t vl = lgetxattr(path, x, NULL, 0);
		char *v = vl >= 0 ? malloc((size_t)vl + 1) : NULL;

		if (v)
			vl = lgetxattr(path, x, v, (size_t)vl);
		if (v && vl >= 0) {
			wb_str(b, x, strlen(x));
			wb_u32(b, (uint32_t)vl);
			wb_bytes(b, v, (size_t)vl);
			count++;
		}
		free(v);
	}
	free(list);
	if (!b->fail)
		for (int i = 0; i < 4; i++)
			b->p[count_at + (size_t)i] = (unsigned char)(count >> (8 * i));
}

/* One entry, encoded as wire_msg.c reads it (attrs: with its attributes, -A/-X). */
static void put_entry(struct sender *s, const struct sync_node *n, struct wbuf *b, bool attrs)
{
	struct sweep_stat ss;
	struct wire_stat st;

	wb_u8(b, WE_ENTRY);
	wb_u32(b, n->root);
	wb_str(b, n->rel, strlen(n->rel));
	wire_stat_of(&st, fst_sweep(&n->s.st, &ss));
	wb_stat(b, &st);
	wb_str(b, n->s.link ? n->s.link : "", n->s.link ? strlen(n->s.link) : 0);
	if (attrs)
		put_xattrs(s, n, b);
	else
		wb_u32(b, 0);
}

static int send_frame(struct sender *s, int type, struct wbuf *b)
{
	int r = b->len || type != W_FLIST ? wire_send_buf(s->r->w, type, b) : 0;

	wb_reset(b);
	return r < 0 ? fail(s, r) : 0;
}

static int send_ids(struct sender *s)
{
	struct wbuf b = { 0 };
	int r = 0;

	if (s->c->o.numeric_ids)
		return 0;
	for (int group = 0; group < 2 && r >= 0; group++) {
		const uint32_t *v = group ? s->gids : s->uids;
		size_t n = group ? s->ngids : s->nuids;

		for (size_t i = 0; i < n && r >= 0; i++) {
			const char *name = NULL;

			if (group) {
				struct group *g = getgrgid((gid_t)v[i]);
				name = g ? g->gr_name : NULL;
			} else {
				struct passwd *p = getpwuid((uid_t)v[i]);
				name = p ? p->pw_name : NULL;
			}
			if (!name || !*name || strlen(name) > 255)
				continue;
			wb_u8(&b, (uint8_t)group);
			wb_u32(&b, v[i]);
			wb_str(&b, name, strlen(name));
			if (b.len >= FLIST_FRAME)
				r = send_frame(s, W_IDS, &b);
		}
	}
	if (r >= 0 && b.len)
		r = send_frame(s, W_IDS, &b);
	wb_free(&b);
	return r;
}

static int send_list(struct sender *s)
{
	struct sync_ctx *c = s->c;
	struct wbuf b = { 0 }, e = { 0 };
	uint64_t listed = 0;
	int r = 0;

	for (size_t k = 0; k < c->list.n && r >= 0; k++) {
		const struct sync_node *n = &c->list.v[k];

		wb_reset(&e);
		put_entry(s, n, &e, c->o.acls || c->o.xattrs);
		if (e.fail) {
			r = -ENOMEM;
			break;
		}
		if (e.len > WIRE_MAX_PAYLOAD) {
			/* one entry cannot be more than a message holds (its attributes): the receiver gets a stand-in */
			sync_error(c, n->rel, -E2BIG);
			c->io_error = true;
			wb_reset(&e);
			put_entry(s, n, &e, false);
		}
		if (b.len + e.len > FLIST_FRAME && (r = send_frame(s, W_FLIST, &b)) < 0)
			break;
		wb_bytes(&b, e.p, e.len);
		if (S_ISREG(n->s.st.st_mode) || S_ISLNK(n->s.st.st_mode))
			listed += (uint64_t)n->s.st.st_size;
		if (note_id(&s->uids, &s->nuids, &s->capuids, n->s.st.st_uid) < 0 ||
		    note_id(&s->gids, &s->ngids, &s->capgids, n->s.st.st_gid) < 0)
			r = -ENOMEM;
	}
	/* the names the options leave out, to be named in their place on the receiving side */
	for (size_t k = 0; k < c->nskips && r >= 0; k++) {
		wb_reset(&e);
		wb_u8(&e, WE_SKIP);
		wb_u32(&e, 0);
		wb_str(&e, c->skips[k].rel, strlen(c->skips[k].rel));
		wb_u8(&e, c->skips[k].is_dir);
		if (b.len + e.len > FLIST_FRAME)
			r = send_frame(s, W_FLIST, &b);
		wb_bytes(&b, e.p, e.len);
	}
	if (r >= 0 && b.fail)
		r = -ENOMEM;
	if (r >= 0)
		r = send_frame(s, W_FLIST, &b);
	if (r >= 0)
		r = send_ids(s);
	if (r >= 0) {
		/* what the list holds beyond its entries (symlinks left out count in rsync's total size) */
		wb_reset(&b);
		wb_u64(&b, c->total_size - (listed < c->total_size ? listed : c->total_size));
		wb_u64(&b, c->errors);
		wb_u64(&b, c->vanished);
		wb_u32(&b, c->io_error);
		r = send_frame(s, W_FLIST_END, &b);
	}
	wb_free(&b);
	wb_free(&e);
	if (r == -ENOMEM)
		cli_msg("out of memory");
	return r;
}

/* The operands, as the receiver needs them to place each in DEST. */
static int send_roots(struct sender *s, const struct sync_dest *d, int nsrc)
{
	struct sync_ctx *c = s->c;
	struct wbuf b = { 0 };
	int r;

	wb_u32(&b, (uint32_t)nsrc);
	wb_u32(&b, (c->o.relative ? WR_RELATIVE : 0) | (c->o.files_from ? WR_FILES_FROM : 0));
	wb_u32(&b, (uint32_t)d->missing);
	wb_u32(&b, (uint32_t)c->nroots);
	for (size_t i = 0; i < c->nroots; i++) {
		const struct sync_root *rt = &c->roots[i];
		/* a non-directory operand goes to DEST's own name where main.c's add_root() gave it d->dst */
		bool lone = strcmp(rt->rel0, ".") && !strcmp(rt->dst, d->dst);

		wb_str(&b, rt->src, strlen(rt->src));
		wb_str(&b, rt->rel0, strlen(rt->rel0));
		wb_u32(&b, (rt->follow ? WRR_FOLLOW : 0) | (rt->implied ? WRR_IMPLIED : 0) | (lone ? WRR_LONE : 0));
	}
	r = b.len > WIRE_MAX_PAYLOAD ? -E2BIG : send_frame(s, W_ROOTS, &b);
	wb_free(&b);
	if (r == -E2BIG)
		cli_msg("too many operands for one transfer");
	return r;
}

/* ---- the sending side ---- */

/* Answer the receiver until it is done. 0, or <0 (said). */
static int serve(struct sender *s)
{
	struct sync_ctx *c = s->c;

	for (;;) {
		struct wire_frame *f;
		int r = 0;

		if (remote_next(c, &f))
			return -EPIPE;
		switch (f->type) {
		case W_REQ:
			r = take_requests(s, f, s->xfer, false);
			break;
		case W_ROUND:
			r = sweep_batch_flush(s->xfer);
			if (r >= 0 && !s->err)
				r = send_frame(s, W_ROUND_END, &(struct wbuf){ 0 });
			break;
		case W_CSUM_REQ:
			r = take_requests(s, f, s->csum, true);
			break;
		case W_CSUM_ROUND:
			r = sweep_batch_flush(s->csum);
			if (r >= 0 && !s->err)
				r = send_digests(s);
			if (r >= 0 && !s->err)
				r = send_frame(s, W_CSUM_END, &(struct wbuf){ 0 });
			break;
		case W_REMOVE:
			if (f->len % 4) {
				cli_msg("protocol error: a bad list of files to remove from the receiver");
				r = -EPROTO;
				break;
			}
			for (size_t off = 0; off < f->len && r >= 0; off += 4) {
				uint32_t k = (uint32_t)f->data[off] | (uint32_t)f->data[off + 1] << 8 |
					     (uint32_t)f->data[off + 2] << 16 | (uint32_t)f->data[off + 3] << 24;

				if (k >= c->list.n || S_ISDIR(c->list.v[k].s.st.st_mode)) {
					cli_msg("protocol error: the receiver asked to remove something that is not a file listed");
					r = -EPROTO;
				}
				else
					c->list.v[k].flags |= N_SYNCED;
			}
			if (r >= 0 && !f->len) {
				/* the list is complete: remove what is still what was listed (apply.c) */
				unsigned long before = c->errors;
				struct wbuf b = { 0 };

				sync_remove_sources(c);
				fflush(stdout);
				wb_u64(&b, c->errors - before);
				r = send_frame(s, W_REMOVED, &b);
				wb_free(&b);
			}
			break;
		case W_DONE:
			free(f);
			return send_frame(s, W_SENDER_DONE, &(struct wbuf){ 0 });
		default:
			r = -EPROTO;
		}
		free(f);
		if (r == -EPROTO && !s->err && !c->remote->broken) {
			/* not said yet (take_requests says its own) */
			cli_msg("protocol error: an unexpected message from the receiver");
			remote_broken(c, r);
		}
		if (s->err)
			return s->err;
		if (r < 0) {
			/* the reader could not go on at all (no memory): the run cannot */
			if (r != -EPROTO)
				cli_error(r, "reading the files");
			return remote_broken(c, r), r;
		}
	}
}

int remote_sender(struct sync_ctx *c, char **ops, int nsrc)
{
	struct remote *r = c->remote;
	struct sender s = { .c = c, .r = r, .xdir_fd = -1 };
	/* DEST is the receiver's: main.c's rules run with a stand-in that is not a directory */
	struct sync_dest d = { .dst = strdup("."), .arg = "." };
	int code = 0, e;

	c->role = ROLE_SENDER;
	if (!d.dst) {
		cli_msg("out of memory");
		return EXIT_PARTIAL;
	}
	if (!r->server)
		sync_list_header(c, false);
	code = sync_add_operands(c, &d, ops, nsrc);
	if (!code && (e = send_roots(&s, &d, nsrc)) < 0)
		code = r->broken ? EXIT_PROTOCOL : EXIT_PARTIAL;
	if (!code && c->nroots) {
		e = flist_scan(c);
		if (e < 0) {
			cli_error(e, "scanning the file list");
			c->errors++;
			c->io_error = true;
		}
		if (e >= 0 && (e = flist_open_roots(c)) < 0)
			cli_msg("out of memory");
	} else if (!code) {
		e = flist_open_roots(c);
	}
	if (!code && e >= 0 && (e = send_list(&s)) < 0)
		code = r->broken ? EXIT_PROTOCOL : EXIT_PARTIAL;
	/* the names left out were sent: not this side's to print */
	for (size_t i = 0; i < c->nskips; i++)
		free(c->skips[i].rel);
	c->nskips = 0;
	if (!code && (batch_new(&s, &tx_ops, &s.xfer) < 0 || batch_new(&s, &cs_ops, &s.csum) < 0)) {
		cli_msg("out of memory");
		code = EXIT_PARTIAL;
	}
	if (!code && serve(&s) < 0)
		code = r->exit_code ? r->exit_code : EXIT_PROTOCOL;
	sweep_batch_free(s.xfer);
	sweep_batch_free(s.csum);
	wb_free(&s.digests);
	free(s.uids);
	free(s.gids);
	free(s.xdir);
	if (s.xdir_fd >= 0)
		close(s.xdir_fd);
	/* the sending client ends with the receiver's status (W_EXIT); the server's end is the client's to say */
	if (!code && !r->server) {
		struct wire_frame *f;

		if (remote_next(c, &f) == 0) {
			free(f);
			cli_msg("protocol error: a message after the end");
			code = EXIT_PROTOCOL;
		} else {
			code = r->exit_code;
		}
	}
	sync_done(c, &d);
	return code;
}
