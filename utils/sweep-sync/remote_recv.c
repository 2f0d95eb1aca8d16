/* SPDX-License-Identifier: MIT */
/*
 * The receiving side of a remote transfer. It is sync_run() with the
 * source taken from the wire: the sender's operands become the roots (and
 * DEST's names for them are worked out here, by the rules main.c uses),
 * its list the source side of the scan (flist.c walks DEST meanwhile),
 * its digests the source's for -c, and the files apply.c decides to copy
 * are asked of it and written, as their data comes, through the copy
 * engine's supplied files (sweep_copy_feed_begin(3)): temporaries, held
 * descriptors, nothing reached through a symlink below DEST.
 *
 * The sender is not trusted. Every message is decoded and checked
 * (wire_msg.c), and then against the run: an entry's root and name must
 * belong together, its type must be one the options transfer, its parent
 * must be a directory the sender listed (a symlink then a file "through"
 * it is refused), every answer must be to a question asked, and data
 * only ever goes to the file begun. Anything else ends the run with a
 * protocol error before the changes are applied.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sweep.h>

#include "cli.h"
#include "progress.h"
#include "remote.h"

/* remote.state: an entry's transfer, by its index on the wire */
enum { ST_NONE, ST_ASKED, ST_BEGUN, ST_DONE, ST_CSUM_ASKED, ST_CSUM_DONE };

#define REQ_FLUSH (64u << 10) /* requests go out in frames of this size */

/* A protocol error of ours to say (the reader thread says those of the framing). */
static int proto(struct sync_ctx *c, const char *what)
{
	struct remote *r = c->remote;

	if (!r->broken) {
		progress_clear(c->prog);
		cli_msg("protocol error: %s from the sender", what);
	}
	return remote_broken(c, -EPROTO);
}

/* The same, as -EPROTO for the caller to pass on. */
static int proto_err(struct sync_ctx *c, const char *what)
{
	proto(c, what);
	return -EPROTO;
}

/* ---- the operands ---- */

static char *join(const char *a, const char *b)
{
	size_t la = strlen(a);
	char *s = malloc(la + strlen(b) + 2);

	if (s)
		sprintf(s, "%s%s%s", a, la && a[la - 1] == '/' ? "" : "/", b);
	return s;
}

static bool ends_with_slash(const char *s)
{
	size_t l = strlen(s);

	return l && s[l - 1] == '/';
}

/*
 * W_ROOTS: the sender's operands as roots, each with its place in DEST as
 * main.c's add_root() and add_relative() give it: SRC/ is DEST, a lone
 * file may take DEST's own name, the rest go below DEST under their name.
 */
static int take_roots(struct sync_ctx *c, struct sync_dest *d, const struct wire_frame *f)
{
	struct wroots w;
	int r = wm_roots(f->data, f->len, &w);

	if (r == -ENOMEM) {
		cli_msg("out of memory");
		return EXIT_PARTIAL;
	}
	if (r < 0)
		return proto(c, "a bad list of operands");
	bool relative = w.flags & (WR_RELATIVE | WR_FILES_FROM);
	bool dst_dir = d->is_dir || w.nsrc > 1 || ends_with_slash(d->arg);

	c->roots = calloc(w.n ? w.n : 1, sizeof(*c->roots));
	if (!c->roots)
		goto nomem;
	c->caproots = w.n ? w.n : 1;
	d->missing = (int)(w.missing > 1000000 ? 1000000 : w.missing);
	if (w.flags & WR_FILES_FROM)
		d->container = true;
	for (uint32_t i = 0; i < w.n; i++) {
		struct sync_root *rt = &c->roots[c->nroots];
		const struct wroot *x = &w.v[i];
		bool dot = !strcmp(x->rel0, ".");
		bool new_name = !dot && !relative && (x->flags & WRR_LONE) && !dst_dir;

		*rt = (struct sync_root){ .src = x->src, .rel0 = x->rel0, .follow = x->flags & WRR_FOLLOW,
					  .implied = x->flags & WRR_IMPLIED };
		w.v[i].src = w.v[i].rel0 = NULL;
		c->nroots++;
		rt->dst = dot || new_name ? strdup(d->dst) : join(d->dst, rt->rel0);
		if (!rt->dst)
			goto nomem;
		if (!new_name)
			d->container = true;
	}
	wm_roots_free(&w);
	return 0;
nomem:
	wm_roots_free(&w);
	cli_msg("out of memory");
	return EXIT_PARTIAL;
}

/* ---- the list ---- */

static int grow(void *pv, size_t *cap, size_t need, size_t elem)
{
	void **p = pv;

	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 1024;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * elem);
	if (!q)
		return -ENOMEM;
	memset((char *)q + *cap * elem, 0, (n - *cap) * elem);
	*p = q;
	*cap = n;
	return 0;
}

/* Whether the options transfer this type at all (as flist.c's type_wanted: a sender must not send more). */
static bool type_wanted(const struct sync_opts *o, uint32_t m)
{
	if (S_ISREG(m) || S_ISDIR(m))
		return true;
	if (S_ISLNK(m))
		return o->links;
	if (S_ISCHR(m) || S_ISBLK(m))
		return o->devices;
	return o->specials;
}

static const char *id_name(const struct remote *r, bool group, uint32_t id)
{
	for (size_t i = 0; i < r->nids; i++)
		if (r->ids[i].group == group && r->ids[i].id == id)
			return r->ids[i].name;
	return NULL;
}

/*
 * rsync's id mapping: without --numeric-ids an owner (only when root) and
 * a group are given by name where this machine has that name; id 0 and
 * unknown names keep their number.
 */
static uint32_t map_id(const struct sync_ctx *c, bool group, uint32_t id)
{
	const char *name = id ? id_name(c->remote, group, id) : NULL;

	if (!name || c->o.numeric_ids)
		return id;
	if (group) {
		struct group *g = getgrnam(name);

		return g ? (uint32_t)g->gr_gid : id;
	}
	struct passwd *p = getpwnam(name);
	return p ? (uint32_t)p->pw_uid : id;
}

static void fst_from_wire(struct fst *d, const struct wire_stat *s)
{
	*d = (struct fst){
		.st_dev = s->dev, .st_ino = s->ino, .st_rdev = s->rdev, .st_size = (int64_t)(s->size > INT64_MAX ? INT64_MAX : s->size),
		.st_mode = s->mode, .st_uid = s->uid, .st_gid = s->gid, .st_nlink = s->nlink,
		.st_atim = { (time_t)s->atime_sec, (long)s->atime_nsec },
		.st_mtim = { (time_t)s->mtime_sec, (long)s->mtime_nsec },
		.st_ctim = { (time_t)s->ctime_sec, (long)s->ctime_nsec },
	};
}

static int take_skip(struct sync_ctx *c, struct wentry *e)
{
	if (grow(&c->skips, &c->capskips, c->nskips + 1, sizeof(*c->skips)) < 0)
		return -ENOMEM;
	c->skips[c->nskips++] = (struct skip){ .rel = e->rel, .is_dir = e->is_dir };
	e->rel = NULL;
	return 0;
}

static int take_ids(struct sync_ctx *c, const struct wire_frame *f)
{
	struct remote *r = c->remote;
	struct wcur cur = { .p = f->data, .len = f->len };

	while (cur.off < cur.len) {
		uint8_t kind = wc_u8(&cur);
		uint32_t id = wc_u32(&cur);
		bool oom = false;
		char *name = wc_strdup(&cur, &oom);

		if (oom)
			return -ENOMEM;
		if (cur.bad || kind > 1 || !name || !*name) {
			free(name);
			return proto_err(c, "a bad list of names");
		}
		if (grow(&r->ids, &(size_t){ r->nids }, r->nids + 1, sizeof(*r->ids)) < 0) {
			free(name);
			return -ENOMEM;
		}
		r->ids[r->nids++] = (struct idname){ .id = id, .group = kind, .name = name };
	}
	return 0;
}

int remote_recv_flist(struct sync_ctx *c, struct scan_ent **v, size_t *n, size_t *cap)
{
	struct remote *r = c->remote;
	size_t capxa = 0;
	bool attrs = c->o.acls || c->o.xattrs;

	for (;;) {
		struct wire_frame *f;
		int code = remote_next(c, &f);

		if (code)
			return -EPIPE;
		if (f->type == W_FLIST_END) {
			struct wcur cur = { .p = f->data, .len = f->len };
			uint64_t total = wc_u64(&cur), errors = wc_u64(&cur), vanished = wc_u64(&cur);
			uint32_t io_error = wc_u32(&cur);

			free(f);
			if (!wc_done(&cur))
				return proto_err(c, "a bad end of the file list");
			c->total_size += total;
			c->errors += (unsigned long)(errors > 1000000 ? 1000000 : errors);
			c->vanished += (unsigned long)(vanished > 1000000 ? 1000000 : vanished);
			c->io_error = c->io_error || io_error;
			break;
		}
		if (f->type == W_IDS) {
			int e = take_ids(c, f);

			free(f);
			if (e < 0)
				return e == -ENOMEM ? e : -EPROTO;
			continue;
		}
		if (f->type != W_FLIST) {
			free(f);
			return proto_err(c, "an unexpected message in the file list");
		}
		struct wcur cur = { .p = f->data, .len = f->len };
		struct wentry e;
		int k;

		while ((k = wm_entry(&cur, &e)) > 0) {
			bool below = e.root < c->nroots && wm_name_below(e.rel, c->roots[e.root].rel0);

			if (!below || (e.kind == WE_ENTRY && !type_wanted(&c->o, e.st.mode)) ||
			    (e.kind == WE_ENTRY && c->roots[e.root].implied && !strcmp(e.rel, c->roots[e.root].rel0) &&
			     !S_ISDIR(e.st.mode))) {
				wm_entry_free(&e);
				free(f);
				return proto_err(c, below ? "an entry of a type the options do not transfer"
							  : "an entry outside the operands it was listed for");
			}
			if (e.kind == WE_SKIP) {
				k = take_skip(c, &e);
				wm_entry_free(&e);
				if (k < 0)
					break;
				continue;
			}
			if (r->nwire == UINT32_MAX - 1 || grow(v, cap, *n + 1, sizeof(**v)) < 0 ||
			    (attrs && grow(&r->xa, &capxa, (size_t)r->nwire + 1, sizeof(*r->xa)) < 0)) {
				k = -ENOMEM;
				wm_entry_free(&e);
				break;
			}
			struct scan_ent *x = &(*v)[(*n)++];

			*x = (struct scan_ent){ .rel = e.rel, .root = e.root, .sidx = r->nwire };
			fst_from_wire(&x->sd.st, &e.st);
			x->sd.link = e.link;
			if (attrs)
				r->xa[r->nwire] = e.xa;
			else
				free(e.xa);
			r->nwire++;
			/* the scanning line: what the sender lists, as it comes */
			if (S_ISDIR(e.st.mode))
				progress_dirs(c->prog, 1);
			else if (S_ISREG(e.st.mode))
				progress_scanned(c->prog, 1, e.st.size);
			e.rel = e.link = NULL;
			e.xa = NULL;
		}
		free(f);
		if (k == -ENOMEM)
			return k;
		if (k < 0)
			return proto_err(c, "a bad entry in the file list");
	}
	/* the owners and groups, by name as rsync maps them */
	bool owners = c->o.owner && c->am_root, groups = c->o.group;
	for (size_t i = 0; i < *n && (owners || groups) && r->nids; i++) {
		struct fst *st = &(*v)[i].sd.st;

		if (owners)
			st->st_uid = map_id(c, false, st->st_uid);
		if (groups)
			st->st_gid = map_id(c, true, st->st_gid);
	}
	return 0;
}

int remote_recv_check(struct sync_ctx *c)
{
	struct remote *r = c->remote;
	struct sync_list *l = &c->list;

	r->node_of = malloc((r->nwire ? r->nwire : 1) * sizeof(*r->node_of));
	r->state = calloc(r->nwire ? r->nwire : 1, 1);
	if (!r->node_of || !r->state)
		return -ENOMEM;
	for (uint32_t k = 0; k < r->nwire; k++)
		r->node_of[k] = UINT32_MAX;
	for (size_t i = 0; i < l->n; i++) {
		const struct sync_node *n = &l->v[i];

		if (!(n->flags & N_SRC))
			continue;
		if (n->sidx >= r->nwire || r->node_of[n->sidx] != UINT32_MAX)
			return proto_err(c, "a file list that names an entry twice");
		r->node_of[n->sidx] = (uint32_t)i;
		/*
		 * Below anything, only a directory the sender listed: never a
		 * symlink (or a file) with more "in" it, nor a name whose
		 * directories were not sent.
		 */
		if (strchr(n->rel, '/') &&
		    (n->parent == UINT32_MAX || !(l->v[n->parent].flags & N_SRC) || !S_ISDIR(l->v[n->parent].s.st.st_mode))) {
			char msg[64 + 4096];

			snprintf(msg, sizeof(msg), "%s listed below something that is not a directory it sent",
				 cli_quote(n->rel));
			return proto_err(c, msg);
		}
	}
	return 0;
}

const struct sweep_copy_xattr *remote_xattrs(const struct sync_ctx *c, const struct sync_node *n, size_t *count)
{
	const struct remote *r = c->remote;
	const struct xattr_set *x = r && r->xa && n->sidx < r->nwire ? r->xa[n->sidx] : NULL;
	static const struct sweep_copy_xattr none[1];

	*count = x ? x->n : 0;
	/* none is an empty set, not "unknown": an attribute the destination has is then removed (-X) */
	return x ? x->v : none;
}

/* ---- -c: the source's digests ---- */

int remote_csum_want(struct sync_ctx *c, size_t i)
{
	struct remote *r = c->remote;
	uint32_t k = c->list.v[i].sidx;

	r->state[k] = ST_CSUM_ASKED;
	wb_u32(&r->csum, k);
	if (r->csum.len >= REQ_FLUSH) {
		int e = wire_send_buf(r->w, W_CSUM_REQ, &r->csum);

		wb_reset(&r->csum);
		if (e < 0)
			return remote_broken(c, e), e;
	}
	return r->csum.fail ? -ENOMEM : 0;
}

int remote_csum_send(struct sync_ctx *c)
{
	struct remote *r = c->remote;
	int e = r->csum.len ? wire_send_buf(r->w, W_CSUM_REQ, &r->csum) : 0;

	wb_reset(&r->csum);
	if (e >= 0)
		e = wire_send(r->w, W_CSUM_ROUND, NULL, 0);
	if (e < 0)
		return remote_broken(c, e), e;
	return 0;
}

int remote_csum_collect(struct sync_ctx *c)
{
	struct remote *r = c->remote;
	char *sb = NULL;
	int rc = 0;

	for (;;) {
		struct wire_frame *f;

		if (remote_next(c, &f)) {
			rc = -EPIPE;
			break;
		}
		if (f->type == W_CSUM_END) {
			free(f);
			break;
		}
		if (f->type != W_DIGESTS || f->len % 24) {
			free(f);
			proto(c, "an unexpected message among the digests");
			rc = -EPROTO;
			break;
		}
		struct wcur cur = { .p = f->data, .len = f->len };
		while (cur.off < cur.len) {
			uint32_t k = wc_u32(&cur);
			int32_t err = (int32_t)wc_u32(&cur);
			const unsigned char *dg = wc_bytes(&cur, 16);

			if (k >= r->nwire || r->state[k] != ST_CSUM_ASKED || (err && !wm_errno_ok(err))) {
				rc = -EPROTO;
				break;
			}
			r->state[k] = ST_CSUM_DONE;
			size_t i = r->node_of[k];
			if (err) {
				checksum_source_failed(c, i, node_src_path(c, &c->list.v[i], &sb), err);
				continue;
			}
			memcpy(c->digests[i].s, dg, 16);
			c->list.v[i].flags |= N_DIGEST_S;
		}
		free(f);
		if (rc < 0) {
			proto(c, "a digest of a file not asked for");
			break;
		}
	}
	free(sb);
	for (uint32_t k = 0; rc == 0 && k < r->nwire; k++)
		if (r->state[k] == ST_CSUM_ASKED) {
			/* not answered: no digest, so the file counts as different and is sent */
			r->state[k] = ST_NONE;
		}
	return rc;
}

/* ---- the files ---- */

int remote_request(struct sync_ctx *c, size_t i)
{
	struct remote *r = c->remote;
	uint32_t k = c->list.v[i].sidx;

	if (k >= r->nwire || grow(&r->round, &r->capround, r->nround + 1, sizeof(*r->round)) < 0)
		return -ENOMEM;
	r->state[k] = ST_ASKED;
	r->round[r->nround++] = k;
	wb_u32(&r->req, k);
	if (r->req.len >= REQ_FLUSH) {
		int e = wire_send_buf(r->w, W_REQ, &r->req);

		wb_reset(&r->req);
		if (e < 0)
			return remote_broken(c, e), 1;
	}
	return r->req.fail ? -ENOMEM : 0;
}

/* The file the sender is sending now. */
struct incoming {
	uint32_t k;         /* its index on the wire */
	size_t node;
	struct sweep_copy_feed *feed; /* NULL: nothing to write (failed at its beginning, or left alone) */
	struct wire_stat st;
	uint64_t end;       /* how far its data went */
	bool open;
};

/* The stat a copy gets: the sender's as it opened the file, its owner and group mapped as the list's. */
static struct sweep_stat *as_read(struct sync_ctx *c, const struct wire_stat *w, struct sweep_stat *st)
{
	struct fst f;

	fst_from_wire(&f, w);
	if (c->o.owner && c->am_root)
		f.st_uid = map_id(c, false, f.st_uid);
	if (c->o.group)
		f.st_gid = map_id(c, true, f.st_gid);
	fst_sweep(&f, st);
	st->blocks = w->blocks;
	return st;
}

/* Begin the copy of entry k (which must have been asked for). 0, or <0 for a protocol error. */
static int file_begin(struct sync_ctx *c, struct incoming *in, uint32_t k, const struct wire_stat *st, char **sb)
{
	struct remote *r = c->remote;
	struct sweep_copy_src src;
	struct sweep_stat sst, rst;

	if (k >= r->nwire || r->state[k] != ST_ASKED || !S_ISREG(st->mode))
		return proto_err(c, "a file not asked for");
	r->state[k] = ST_BEGUN;
	in->k = k;
	in->node = r->node_of[k];
	in->st = *st;
	in->end = 0;
	in->open = true;
	in->feed = NULL;
	struct sync_node *n = &c->list.v[in->node];
	const char *sp = node_src_path(c, n, sb);
	if (!sp)
		return -ENOMEM;
	sync_src_of(c, n, sp, &src, &sst);
	/* the holes of the file as it was read (sparse files stay sparse) */
	sst.blocks = as_read(c, st, &rst)->blocks;
	sst.size = st->size;
	int e = sweep_copy_feed_begin(c->eng, &src, node_dst_rel(c, n), in->node, &in->feed);
	if (e < 0 && c->fatal)
		return e;
	return 0;
}

static int file_data(struct sync_ctx *c, struct incoming *in, const struct wire_frame *f)
{
	struct wcur cur = { .p = f->data, .len = f->len };
	uint64_t off = wc_u64(&cur);
	size_t len = cur.len - cur.off;
	const void *p = wc_bytes(&cur, len);

	if (!in->open || cur.bad || off < in->end || off > UINT64_MAX - len)
		return proto_err(c, "data out of place");
	in->end = off + len;
	if (in->feed && sweep_copy_feed_data(in->feed, off, p, len) < 0 && c->fatal)
		return -EIO;
	return 0;
}

static int file_end(struct sync_ctx *c, struct incoming *in, const struct wire_frame *f)
{
	struct remote *r = c->remote;
	struct wcur cur = { .p = f->data, .len = f->len };
	int32_t status = (int32_t)wc_u32(&cur);
	uint64_t length = wc_u64(&cur);
	struct sweep_stat st;

	if (!in->open || !wc_done(&cur) || length < in->end ||
	    !(status == 0 || status == SWEEP_READ_SHRANK || status == SWEEP_READ_GREW || status == SWEEP_READ_CHANGED ||
	      wm_errno_ok(status)))
		return proto_err(c, "a bad end of a file");
	in->open = false;
	r->state[in->k] = ST_DONE;
	int e = sweep_copy_feed_end(in->feed, status, length, as_read(c, &in->st, &st));
	in->feed = NULL;
	return e < 0 && c->fatal ? e : 0;
}

/* A file the sender could not open: reported as the copy engine reports a source that fails. */
static int file_fail(struct sync_ctx *c, const struct wire_frame *f, char **sb)
{
	struct remote *r = c->remote;
	struct wcur cur = { .p = f->data, .len = f->len };
	uint32_t k = wc_u32(&cur);
	int32_t err = (int32_t)wc_u32(&cur);
	struct incoming in;

	if (!wc_done(&cur) || k >= r->nwire || r->state[k] != ST_ASKED || !wm_errno_ok(err))
		return proto_err(c, "a failure of a file not asked for");
	struct wire_stat st = { .mode = (uint32_t)c->list.v[r->node_of[k]].s.st.st_mode };
	int e = file_begin(c, &in, k, &st, sb);
	if (e < 0)
		return e;
	r->state[k] = ST_DONE;
	e = sweep_copy_feed_end(in.feed, err, 0, NULL);
	if (!in.feed) {
		/* not even begun (its directory could not be reached: reported): the sender's error is the cause */
		struct sync_node *n = &c->list.v[in.node];

		n->flags |= N_FAILED;
	}
	return e < 0 && c->fatal ? e : 0;
}

int remote_flush(struct sync_ctx *c)
{
	struct remote *r = c->remote;
	struct incoming in = { 0 };
	char *sb = NULL;
	int e = 0;

	if (r->req.len)
		e = wire_send_buf(r->w, W_REQ, &r->req);
	wb_reset(&r->req);
	if (e >= 0)
		e = wire_send(r->w, W_ROUND, NULL, 0);
	if (e < 0)
		return remote_broken(c, e), -EPIPE;
	for (;;) {
		struct wire_frame *f;

		if (remote_next(c, &f)) {
			e = -EPIPE;
			break;
		}
		switch (f->type) {
		case W_FILE_BEGIN: {
			struct wcur cur = { .p = f->data, .len = f->len };
			uint32_t k = wc_u32(&cur);
			struct wire_stat st;

			wc_stat(&cur, &st);
			e = in.open || !wc_done(&cur) ? proto_err(c, "a bad beginning of a file")
						      : file_begin(c, &in, k, &st, &sb);
			break;
		}
		case W_DATA:
			e = file_data(c, &in, f);
			break;
		case W_FILE_END:
			e = file_end(c, &in, f);
			break;
		case W_FILE_FAIL:
			e = in.open ? proto_err(c, "a failure in the middle of a file") : file_fail(c, f, &sb);
			break;
		case W_ROUND_END:
			e = in.open || f->len ? proto_err(c, "a round ended in the middle of a file") : 1;
			break;
		default:
			e = proto_err(c, "an unexpected message among the files");
		}
		free(f);
		if (e)
			break;
	}
	if (in.open)
		sweep_copy_feed_end(in.feed, -ECANCELED, in.end, NULL);
	free(sb);
	if (e < 0)
		return c->fatal ? 0 : e;
	/* every file asked for was answered, or the sender is not to be trusted with the rest */
	for (size_t j = 0; j < r->nround; j++)
		if (r->state[r->round[j]] == ST_ASKED) {
			r->nround = 0;
			proto(c, "no answer for a file asked for");
			return 0;
		}
	r->nround = 0;
	return 0;
}

/* ---- --remove-source-files ---- */

void remote_remove_sources(struct sync_ctx *c)
{
	struct remote *r = c->remote;
	struct wbuf b = { 0 };
	struct wire_frame *f;
	int e = 0;

	for (size_t i = 0; i < c->list.n && e >= 0; i++) {
		const struct sync_node *n = &c->list.v[i];

		if ((n->flags & (N_SRC | N_SYNCED | N_FAILED)) != (N_SRC | N_SYNCED) || S_ISDIR(n->s.st.st_mode))
			continue;
		wb_u32(&b, n->sidx);
		if (b.len >= REQ_FLUSH) {
			e = wire_send_buf(r->w, W_REMOVE, &b);
			wb_reset(&b);
		}
	}
	if (e >= 0 && b.len)
		e = wire_send_buf(r->w, W_REMOVE, &b);
	/* an empty list ends it */
	if (e >= 0)
		e = wire_send(r->w, W_REMOVE, NULL, 0);
	wb_free(&b);
	if (e < 0) {
		remote_broken(c, e);
		return;
	}
	if (remote_next(c, &f))
		return;
	struct wcur cur = { .p = f->data, .len = f->len };
	uint64_t errors = wc_u64(&cur);
	if (f->type != W_REMOVED || !wc_done(&cur))
		proto(c, "an unexpected answer to the removals");
	else
		c->errors += (unsigned long)(errors > 1000000 ? 1000000 : errors);
	free(f);
}

/* ---- the receiving side ---- */

void remote_recv_free(struct remote *r)
{
	free(r->node_of);
	free(r->state);
	for (uint32_t k = 0; r->xa && k < r->nwire; k++)
		free(r->xa[k]);
	free(r->xa);
	for (size_t i = 0; i < r->nids; i++)
		free(r->ids[i].name);
	free(r->ids);
	free(r->round);
	wb_free(&r->req);
	wb_free(&r->csum);
}

int remote_receiver(struct sync_ctx *c, const char *dest_arg)
{
	struct remote *r = c->remote;
	struct sync_dest d = { 0 };
	struct wire_frame *f;
	int code;

	c->role = ROLE_RECEIVER;
	c->o.sent_view = r->server;
	code = sync_dest_open(c, dest_arg, &d);
	if (!code && !r->server)
		sync_list_header(c, true);
	/* nothing (the peer ended, or broke the stream): its status, else a protocol error's */
	if (!code && remote_next(c, &f))
		code = r->exit_code ? r->exit_code : EXIT_PROTOCOL;
	if (!code) {
		code = f->type == W_ROOTS ? take_roots(c, &d, f) : proto(c, "an unexpected first message");
		free(f);
	}
	if (!code)
		code = sync_run(c, &d);
	if (r->broken && !code)
		code = EXIT_PROTOCOL;
	/* the sender is told it is over, and says it is done (its counts came before) */
	if (!r->broken && wire_send(r->w, W_DONE, NULL, 0) == 0) {
		while (remote_next(c, &f) == 0) {
			bool done = f->type == W_SENDER_DONE;

			free(f);
			if (done)
				break;
		}
	}
	sync_done(c, &d);
	return code;
}
