/* SPDX-License-Identifier: MIT */
/*
 * metascan: finding and opening the block device under a filesystem, the
 * sweep engine every format module reads through, and the format-neutral
 * entry points. The design and its reasons are in metascan.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "metascan.h"

/*
 * Requests of up to 1 MiB, 16 of them ahead: large enough that the device
 * sees long sequential reads and a full queue, small enough that a sweep
 * holds 17 MiB at most. Holes of up to 128 KiB between wanted regions are
 * read through: on a disk that costs less than the seek it saves. But only
 * the device reads them (WILLNEED over the whole request): what is copied
 * out of the page cache are the wanted bytes, holes of up to MS_COPY_GAP
 * included. Copying the holes too cost 15 s of CPU on the aged 1M-file tree
 * (a directory's inodes spread over its groups: 128 KiB copied per inode).
 */
#define MS_MAX_REQ (1u << 20)
#define MS_DEPTH 16
#define MS_GAP (128u << 10)
#define MS_COPY_GAP 4096u /* a copy of this costs about what one more pread does */
#define MS_ALIGN 4096u
#define MS_BUF_SIZE (MS_MAX_REQ + 2 * MS_ALIGN)


struct sweep__ms_slot {
	uint64_t off, end;
	struct sweep__ms_item *items;
	size_t n, cap;
};

void sweep__ms_hint_init(struct sweep__inode_hint *h, uint64_t ino)
{
	memset(h, 0, sizeof(*h));
	h->ino = ino;
	h->phys = SWEEP_NO_PHYS;
	h->why = SWEEP__HINT_EIO;
}

int sweep__ms_type_ok(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
	case S_IFDIR:
	case S_IFLNK:
	case S_IFCHR:
	case S_IFBLK:
	case S_IFIFO:
	case S_IFSOCK:
		return 1;
	}
	return 0;
}

int sweep__ms_pread(struct sweep__metascan *m, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	if (off > (uint64_t)INT64_MAX - len)
		return -EINVAL;
	while (done < len) {
		ssize_t r = pread(m->fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO; /* past the end of the device */
		done += (size_t)r;
	}
	m->io_requests++;
	m->io_bytes += len;
	return 0;
}

/* Bytes read at off, up to len: a short count at the end of the device or on an error. */
static size_t read_some(struct sweep__metascan *m, uint8_t *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t r = pread(m->fd, buf + done, len - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		done += (size_t)r;
	}
	m->io_bytes += done;
	return done;
}

/*
 * Hand the items of one request their bytes, copying from the device (whose
 * page cache the request's WILLNEED filled) only the runs of bytes they
 * cover (no alignment needed: the device is read buffered), each run into
 * m->buf at its place in the request. An item beyond a short read gets NULL.
 */
static void slot_deliver(struct sweep__metascan *m, const struct sweep__ms_slot *q, sweep__ms_item_fn item, void *ctx)
{
	m->io_requests++;
	for (size_t i = 0; i < q->n;) {
		uint64_t roff = q->items[i].off;
		uint64_t rend = q->items[i].off + q->items[i].len;
		size_t j = i + 1;

		for (; j < q->n && q->items[j].off >= roff && q->items[j].off <= rend + MS_COPY_GAP; j++)
			if (q->items[j].off + q->items[j].len > rend)
				rend = q->items[j].off + q->items[j].len;
		if (rend > q->end)
			rend = q->end;
		size_t got = read_some(m, m->buf + (roff - q->off), (size_t)(rend - roff), roff);
		for (; i < j; i++) {
			const struct sweep__ms_item *it = &q->items[i];
			bool whole = it->off + it->len <= roff + got;
			item(ctx, it, whole ? m->buf + (it->off - q->off) : NULL);
		}
	}
}

static int slot_push(struct sweep__ms_slot *q, const struct sweep__ms_item *it)
{
	if (sweep__grow(&q->items, &q->cap, q->n + 1, sizeof(*q->items), 64) < 0)
		return -ENOMEM;
	q->items[q->n++] = *it;
	return 0;
}

/*
 * Only a hint: a failure costs speed, never correctness. WILLNEED reads at
 * most max(read_ahead_kb, max_sectors_kb) per call (force_page_cache_ra
 * caps it) and drops the rest silently, so a long range goes in chunks.
 */
static void advise(struct sweep__metascan *m, uint64_t off, uint64_t len, int advice)
{
	if (advice != POSIX_FADV_WILLNEED) {
		(void)posix_fadvise(m->fd, (off_t)off, (off_t)len, advice);
		return;
	}
	while (len) {
		uint64_t n = len < m->ra_chunk ? len : m->ra_chunk;
		(void)posix_fadvise(m->fd, (off_t)off, (off_t)n, advice);
		off += n;
		len -= n;
	}
}

/* The WILLNEED cap of the device (see advise()); 128 KiB, the kernel's default read-ahead, if unknown. */
static uint64_t ra_chunk_of(int fd)
{
	long ra = 0;
	unsigned short sect = 0;
	uint64_t chunk = 0;
	if (ioctl(fd, BLKRAGET, &ra) == 0 && ra > 0)
		chunk = (uint64_t)ra * 512;
	if (ioctl(fd, BLKSECTGET, &sect) == 0 && (uint64_t)sect * 512 > chunk)
		chunk = (uint64_t)sect * 512;
	if (chunk < (128u << 10))
		chunk = 128u << 10;
	return chunk;
}

/*
 * Whether [off, end) lies in one range read by this handle. Such a range
 * was read whole a moment ago (the inode tables, by read_tables), so a
 * WILLNEED over it finds every page cached: it is skipped, because the
 * kernel still looks each page up, and the walk's hint reads ask for the
 * same tables again and again, a directory at a time. Aged 1M-file ext4
 * tree: 180,000 requests advised 26 GB that way, 18% of sweep-plan's CPU.
 * Pages the kernel has evicted since are read again by the pread, one by
 * one: slower, never wrong.
 */
static bool resident(const struct sweep__metascan *m, uint64_t off, uint64_t end)
{
	size_t lo = 0, hi = m->nresident;
	while (lo < hi) { /* the first range that ends after off */
		size_t mid = lo + (hi - lo) / 2;
		if (m->resident[mid].off + m->resident[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->nresident && m->resident[lo].off <= off && m->resident[lo].off + m->resident[lo].len >= end;
}

/* Add [off, off + len) to the resident ranges, merging neighbours. Out of memory: not added (only slower). */
static void resident_add(struct sweep__metascan *m, uint64_t off, uint64_t len)
{
	if (len == 0 || m->drop_cache)
		return;
	uint64_t end = off + len;
	size_t i = 0;
	while (i < m->nresident && m->resident[i].off + m->resident[i].len < off)
		i++;
	size_t j = i; /* ranges [i, j) touch [off, end) and merge into it */
	while (j < m->nresident && m->resident[j].off <= end) {
		if (m->resident[j].off < off)
			off = m->resident[j].off;
		if (m->resident[j].off + m->resident[j].len > end)
			end = m->resident[j].off + m->resident[j].len;
		j++;
	}
	if (j == i) {
		if (sweep__grow(&m->resident, &m->cap_resident, m->nresident + 1, sizeof(*m->resident), 64) < 0)
			return;
		memmove(m->resident + i + 1, m->resident + i, (m->nresident - i) * sizeof(*m->resident));
		m->nresident++;
		j = i + 1;
	}
	m->resident[i] = (struct sweep__dev_range){ off, end - off };
	memmove(m->resident + i + 1, m->resident + j, (m->nresident - j) * sizeof(*m->resident));
	m->nresident -= j - i - 1;
}

int sweep__ms_sweep(struct sweep__metascan *m, sweep__ms_next_fn next, sweep__ms_item_fn item, void *ctx)
{
	struct sweep__ms_slot *s = m->slots;
	size_t head = 0, nq = 0;
	struct sweep__ms_item peek;
	bool have_peek = false, done = false;
	int ret = 0;

	for (;;) {
		/* Keep MS_DEPTH requests formed and announced ahead of the one being read. */
		while (!done && nq < MS_DEPTH) {
			if (!have_peek) {
				if (!next(ctx, &peek)) {
					done = true;
					break;
				}
				have_peek = true;
			}
			struct sweep__ms_slot *q = &s[(head + nq) % MS_DEPTH];
			if (peek.len > MS_MAX_REQ)
				peek.len = MS_MAX_REQ; /* a module bug, not a reason to overrun the buffer */
			q->n = 0;
			q->off = peek.off & ~(uint64_t)(MS_ALIGN - 1);
			q->end = peek.off + peek.len;
			if ((ret = slot_push(q, &peek)) < 0)
				goto out;
			have_peek = false;
			for (;;) {
				if (!next(ctx, &peek)) {
					done = true;
					break;
				}
				uint64_t end = peek.off + peek.len;
				if (end < q->end)
					end = q->end;
				if (peek.off < q->off || peek.off > q->end + MS_GAP || end - q->off > MS_MAX_REQ) {
					have_peek = true;
					break;
				}
				if ((ret = slot_push(q, &peek)) < 0)
					goto out;
				q->end = end;
			}
			q->end = (q->end + MS_ALIGN - 1) & ~(uint64_t)(MS_ALIGN - 1);
			if (m->dev_size && q->end > m->dev_size && q->off < m->dev_size)
				q->end = m->dev_size;
			if (m->drop_cache)
				advise(m, q->off, q->end - q->off, POSIX_FADV_DONTNEED);
			if (resident(m, q->off, q->end))
				m->advice_skipped++;
			else
				advise(m, q->off, q->end - q->off, POSIX_FADV_WILLNEED);
			nq++;
		}
		if (nq == 0)
			break;
		struct sweep__ms_slot *q = &s[head];
		head = (head + 1) % MS_DEPTH;
		nq--;
		slot_deliver(m, q, item, ctx);
		if (m->drop_cache)
			advise(m, q->off, q->end - q->off, POSIX_FADV_DONTNEED);
	}
out:
	return ret;
}

void *sweep__ms_pend_add(struct sweep__ms_scan *s, const struct sweep__inode_hint *h)
{
	size_t sz = s->ops->pend_size;
	if (s->npend >= s->max_pend) {
		s->truncated = 1;
		return NULL;
	}
	if (sweep__grow(&s->pend, &s->cap, s->npend + 1, sz, 16) < 0) {
		s->err = -ENOMEM;
		return NULL;
	}
	struct sweep__ms_pend *p = (void *)(s->pend + s->npend++ * sz);
	memset(p, 0, sz);
	p->hint = (uint32_t)(h - s->out);
	return p;
}

void sweep__ms_range_add(struct sweep__ms_scan *s, uint64_t off, uint64_t len)
{
	if (s->nranges) {
		struct sweep__dev_range *last = &s->ranges[s->nranges - 1];
		if (last->off + last->len == off) {
			last->len += len; /* the next extent of the same run */
			return;
		}
	}
	if (s->nranges >= s->max_pend) {
		s->truncated = 1;
		return;
	}
	if (sweep__grow(&s->ranges, &s->cap_ranges, s->nranges + 1, sizeof(*s->ranges), 64) < 0) {
		s->err = -ENOMEM;
		return;
	}
	s->ranges[s->nranges++] = (struct sweep__dev_range){ off, len };
}

static struct sweep__ms_pend *pend_at(struct sweep__ms_scan *s, size_t i)
{
	return (void *)(s->pend + i * s->ops->pend_size);
}

static int scan_next_inode(void *ctx, struct sweep__ms_item *it)
{
	struct sweep__ms_scan *s = ctx;
	while (s->next < s->n) {
		size_t i = s->next++;
		uint64_t ino = s->inos[i], off;
		sweep__ms_hint_init(&s->out[i], ino);
		if (i && s->inos[i - 1] == ino)
			continue; /* a repeat is copied from the first at the end */
		int why = s->ops->loc(s->fsdata, ino, &off);
		if (why != SWEEP__HINT_OK) {
			s->out[i].why = (uint16_t)why;
			continue;
		}
		*it = (struct sweep__ms_item){ .off = off, .len = s->ops->inode_len, .idx = (uint32_t)i };
		return 1;
	}
	return 0;
}

static void scan_got_inode(void *ctx, const struct sweep__ms_item *it, const uint8_t *bytes)
{
	struct sweep__ms_scan *s = ctx;
	if (bytes)
		s->ops->inode(s, &s->out[it->idx], bytes);
}

static int scan_next_block(void *ctx, struct sweep__ms_item *it)
{
	struct sweep__ms_scan *s = ctx;
	if (s->ip >= s->round_end)
		return 0; /* records added during this round wait for the next, sorted */
	*it = (struct sweep__ms_item){ .off = pend_at(s, s->ip)->byte, .len = s->ops->block_len, .idx = (uint32_t)s->ip };
	s->ip++;
	return 1;
}

static void scan_got_block(void *ctx, const struct sweep__ms_item *it, const uint8_t *bytes)
{
	struct sweep__ms_scan *s = ctx;
	struct sweep__ms_pend *p = pend_at(s, it->idx);
	s->ops->block(s, p, &s->out[p->hint], bytes);
}

static int pend_cmp(const void *a, const void *b)
{
	const struct sweep__ms_pend *x = a, *y = b;
	return x->byte < y->byte ? -1 : x->byte > y->byte;
}

/* Run a scan of inos[0..n) into out (and, in ALL mode, s->ranges). The count of VALID hints, or -errno. */
static int scan_run(struct sweep__metascan *m, struct sweep__ms_scan *s, const uint64_t *inos, size_t n,
		    struct sweep__inode_hint *out)
{
	struct sweep__ms_scan_ops ops;
	int r;

	if (n > UINT32_MAX)
		return -EINVAL;
	m->fs->scan_ops(m->fsdata, &ops);
	if (m->fs->prepare)
		m->fs->prepare(m, inos, n);
	s->m = m;
	s->fsdata = m->fsdata;
	s->ops = &ops;
	s->inos = inos;
	s->n = n;
	s->out = out;
	/* no sane filesystem wants more tree blocks or extents than its device has blocks */
	s->max_pend = m->dev_size / ops.block_len + 1024;
	if ((r = sweep__ms_sweep(m, scan_next_inode, scan_got_inode, s)) < 0)
		return r;
	for (unsigned round = 0; s->npend && !s->shallow && round < ops.max_rounds && !s->err; round++) {
		qsort(s->pend, s->npend, ops.pend_size, pend_cmp);
		s->ip = 0;
		s->round_end = s->npend;
		if ((r = sweep__ms_sweep(m, scan_next_block, scan_got_block, s)) < 0)
			return r;
		size_t k = 0;
		for (size_t i = 0; i < s->npend; i++) {
			if (pend_at(s, i)->done)
				continue;
			if (k != i)
				memcpy(pend_at(s, k), pend_at(s, i), ops.pend_size);
			k++;
		}
		s->npend = k;
	}
	if (s->err)
		return s->err;
	/* what is still pending after the last round keeps an unknown location */
	if (s->shallow && !s->all)
		for (size_t i = 0; i < s->npend; i++)
			out[pend_at(s, i)->hint].flags |= SWEEP__HINT_DEEP;
	int valid = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && inos[i] == inos[i - 1])
			out[i] = out[i - 1];
		valid += (out[i].flags & SWEEP__HINT_VALID) != 0;
	}
	return valid;
}

void sweep__metascan_io_stats(const struct sweep__metascan *m, uint64_t *ret_requests, uint64_t *ret_bytes)
{
	if (ret_requests)
		*ret_requests = m ? m->io_requests : 0;
	if (ret_bytes)
		*ret_bytes = m ? m->io_bytes : 0;
}

struct sweep__metascan *sweep__metascan_free(struct sweep__metascan *m)
{
	if (!m)
		return NULL;
	if (m->fs && m->fsdata)
		m->fs->free(m->fsdata);
	if (m->slots)
		for (size_t i = 0; i < MS_DEPTH; i++)
			free(m->slots[i].items);
	free(m->slots);
	free(m->buf);
	free(m->resident);
	if (m->fd >= 0)
		close(m->fd);
	free(m);
	return NULL;
}

static int dev_size_of(int fd, uint64_t *ret)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISBLK(st.st_mode)) {
		uint64_t sz;
		if (ioctl(fd, BLKGETSIZE64, &sz) < 0)
			return -errno;
		*ret = sz;
		return 0;
	}
	if (S_ISREG(st.st_mode)) {
		*ret = (uint64_t)st.st_size;
		return 0;
	}
	return -ENOTBLK;
}

/* Every format the engine reads: adding one is a module and a line here. */
static const struct sweep__ms_fs *const formats[] = { &sweep__ms_ext4, &sweep__ms_xfs };

const struct sweep__ms_fs *sweep__metascan_format(uint64_t fs_magic)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (formats[i]->magic == fs_magic)
			return formats[i];
	return NULL;
}

const struct sweep__ms_fs *sweep__metascan_format_of(const struct sweep__metascan *m)
{
	return m->fs;
}

/* Open with the format module `only` (NULL: whichever recognises the device). */
static int open_dev(int devfd, unsigned flags, const struct sweep__ms_fs *only, struct sweep__metascan **ret)
{
	int r;

	if (devfd < 0 || !ret)
		return -EINVAL;
	if ((r = sweep__flags_check(flags, SWEEP__METASCAN_NOCSUM)) < 0)
		return r;
	struct sweep__metascan *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->flags = flags;
	m->fd = fcntl(devfd, F_DUPFD_CLOEXEC, 3);
	if (m->fd < 0) {
		r = -errno;
		m->fd = -1;
		goto fail;
	}
	if ((r = dev_size_of(m->fd, &m->dev_size)) < 0)
		goto fail;
	m->ra_chunk = ra_chunk_of(m->fd);
	m->buf = malloc(MS_BUF_SIZE);
	m->slots = calloc(MS_DEPTH, sizeof(*m->slots));
	if (!m->buf || !m->slots) {
		r = -ENOMEM;
		goto fail;
	}
	r = -EOPNOTSUPP;
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (only && formats[i] != only)
			continue;
		/*
		 * A mounted filesystem rewrites its superblock (free counts, then the
		 * checksum) while we read it: a checksum that fails can be a torn read
		 * of a live block, so read it again a few times before refusing.
		 */
		for (int tries = 0; (r = formats[i]->open(m, &m->fsdata)) == -EBADMSG && tries < 4; tries++)
			usleep(1000u << tries);
		if (r == 0) {
			m->fs = formats[i];
			break;
		}
		if (r != -ENOENT)
			goto fail;
		r = only ? -EUCLEAN : -EOPNOTSUPP; /* statfs said so, but the magic is not there */
	}
	if (r < 0)
		goto fail;
	/* A format that writes its metadata around the device's page cache: never trust what is cached there. */
	m->drop_cache = m->fs->own_cache;
	*ret = m;
	return 0;
fail:
	sweep__metascan_free(m);
	return r;
}

int sweep__metascan_open_dev(int devfd, unsigned flags, struct sweep__metascan **ret)
{
	return open_dev(devfd, flags, NULL, ret);
}

int sweep__metascan_open(int fd, unsigned flags, struct sweep__metascan **ret)
{
	struct statfs sf;
	struct stat st;
	const struct sweep__ms_fs *fs;
	int r, devfd = -1;

	if (fd < 0 || !ret)
		return -EINVAL;
	if ((r = sweep__flags_check(flags, SWEEP__METASCAN_NOCSUM)) < 0)
		return r;
	if (fstatfs(fd, &sf) < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (!(fs = sweep__metascan_format((uint64_t)sf.f_type)))
		return -EOPNOTSUPP;
	if ((devfd = sweep__bdev_open(st.st_dev, O_RDONLY)) < 0)
		return devfd;
	r = open_dev(devfd, flags, fs, ret);
	close(devfd);
	return r;
}

const char *sweep__metascan_fstype(const struct sweep__metascan *m)
{
	return m && m->fs ? m->fs->name : NULL;
}

unsigned sweep__metascan_block_size(const struct sweep__metascan *m)
{
	return m && m->fs ? m->fs->block_size(m->fsdata) : 0;
}

static int inodes(struct sweep__metascan *m, const uint64_t *inos, size_t n, struct sweep__inode_hint *out,
		  bool shallow)
{
	if (!m || (n && (!inos || !out)))
		return -EINVAL;
	for (size_t i = 1; i < n; i++)
		if (inos[i] < inos[i - 1])
			return -EINVAL;
	if (n == 0)
		return 0;
	struct sweep__ms_scan s = { .shallow = shallow };
	int r = scan_run(m, &s, inos, n, out);
	free(s.pend);
	free(s.ranges);
	return r;
}

int sweep__metascan_inodes(struct sweep__metascan *m, const uint64_t *inos, size_t n, struct sweep__inode_hint *out)
{
	return inodes(m, inos, n, out, false);
}

int sweep__metascan_inodes_shallow(struct sweep__metascan *m, const uint64_t *inos, size_t n,
				   struct sweep__inode_hint *out)
{
	return inodes(m, inos, n, out, true);
}

static int range_cmp(const void *a, const void *b);

/* Sort ranges by offset and merge those that touch or overlap; the new count. */
static size_t ranges_merge(struct sweep__dev_range *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), range_cmp);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && v[i].off <= v[k - 1].off + v[k - 1].len) {
			uint64_t end = v[i].off + v[i].len;
			if (end > v[k - 1].off + v[k - 1].len)
				v[k - 1].len = end - v[k - 1].off;
			continue;
		}
		v[k++] = v[i];
	}
	return k;
}

int sweep__metascan_ranges(struct sweep__metascan *m, const uint64_t *inos, size_t n, struct sweep__dev_range **ret,
			   size_t *ret_n)
{
	if (!m || (n && !inos) || !ret || !ret_n)
		return -EINVAL;
	for (size_t i = 1; i < n; i++)
		if (inos[i] < inos[i - 1])
			return -EINVAL;
	struct sweep__inode_hint *h = malloc((n ? n : 1) * sizeof(*h));
	if (!h)
		return -ENOMEM;
	struct sweep__ms_scan s = { .all = 1 };
	int r = n ? scan_run(m, &s, inos, n, h) : 0;
	free(h);
	free(s.pend);
	if (r < 0) {
		free(s.ranges);
		return r;
	}
	size_t k = ranges_merge(s.ranges, s.nranges);
	struct sweep__dev_range *v = s.ranges ? s.ranges : calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	*ret = v;
	*ret_n = k;
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct sweep__dev_range *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Prefetch requests may be larger than sweep requests: nothing is copied, the kernel splits them. */
#define PREFETCH_MAX (8u << 20)

/* The ranges of a table sweep, handed to the sweep engine a request at most at a time. */
struct table_walk {
	struct sweep__ms_table *r;
	size_t n, i;
	uint64_t at; /* bytes of r[i] already handed out */
};

static int table_cmp(const void *a, const void *b)
{
	const struct sweep__ms_table *x = a, *y = b;
	return x->dev.off < y->dev.off ? -1 : x->dev.off > y->dev.off;
}

/*
 * The format's tables whose inode numbers start in [ino_lo, ino_hi) (0,
 * UINT64_MAX: all), within the device, sorted by where they lie.
 */
static int tables_of(struct sweep__metascan *m, uint64_t ino_lo, uint64_t ino_hi, struct sweep__ms_table **ret,
		     size_t *ret_n)
{
	if (!m->fs->tables || m->drop_cache)
		return -EOPNOTSUPP;
	int r = m->fs->tables(m, ret, ret_n);
	if (r < 0)
		return r;
	size_t k = 0;
	for (size_t i = 0; i < *ret_n; i++) {
		struct sweep__ms_table t = (*ret)[i];
		if (t.ino < ino_lo || t.ino >= ino_hi)
			continue;
		if (t.dev.off >= m->dev_size) /* within the device, whatever the descriptors said */
			t.dev.len = 0;
		else if (t.dev.len > m->dev_size - t.dev.off)
			t.dev.len = m->dev_size - t.dev.off;
		(*ret)[k++] = t;
	}
	*ret_n = k;
	qsort(*ret, *ret_n, sizeof(**ret), table_cmp);
	return 0;
}

/*
 * Tables closer than this on the device are one run: reading across the gap
 * (unused table tails) costs less than the seek it saves. On ext4 with
 * flex_bg a run is a flex group's tables; without it, one group's.
 */
#define RUN_GAP (8ull << 20)

static int run_cmp(const void *a, const void *b)
{
	const struct sweep__ms_table_run *x = a, *y = b;
	return x->ino_lo < y->ino_lo ? -1 : x->ino_lo > y->ino_lo;
}

int sweep__metascan_table_runs(struct sweep__metascan *m, struct sweep__ms_table_run **ret, size_t *ret_n)
{
	if (!m || !ret || !ret_n)
		return -EINVAL;
	struct sweep__ms_table *t = NULL;
	size_t n = 0, nr = 0;
	int r = tables_of(m, 0, UINT64_MAX, &t, &n);
	if (r < 0)
		return r;
	struct sweep__ms_table_run *run = malloc((n ? n : 1) * sizeof(*run));
	if (!run) {
		free(t);
		return -ENOMEM;
	}
	uint64_t end = 0; /* device end of the current run */
	for (size_t i = 0; i < n; i++) {
		const struct sweep__ms_table *x = &t[i];
		if (x->count == 0 || x->dev.len == 0)
			continue;
		if (nr == 0 || x->dev.off > end + RUN_GAP) {
			run[nr++] = (struct sweep__ms_table_run){ x->ino, x->ino + x->count, 0 };
			end = 0;
		}
		struct sweep__ms_table_run *c = &run[nr - 1];
		c->ino_lo = x->ino < c->ino_lo ? x->ino : c->ino_lo;
		c->ino_hi = x->ino + x->count > c->ino_hi ? x->ino + x->count : c->ino_hi;
		c->bytes += x->dev.len;
		end = x->dev.off + x->dev.len > end ? x->dev.off + x->dev.len : end;
	}
	free(t);
	/* By inode number; runs whose numbers interleave (no format lays them out so) become one. */
	qsort(run, nr, sizeof(*run), run_cmp);
	size_t k = 0;
	for (size_t i = 0; i < nr; i++) {
		if (k && run[i].ino_lo < run[k - 1].ino_hi) {
			run[k - 1].ino_hi = run[i].ino_hi > run[k - 1].ino_hi ? run[i].ino_hi : run[k - 1].ino_hi;
			run[k - 1].bytes += run[i].bytes;
		} else {
			run[k++] = run[i];
		}
	}
	*ret = run;
	*ret_n = k;
	return 0;
}

static int table_next(void *ctx, struct sweep__ms_item *ret)
{
	struct table_walk *t = ctx;
	while (t->i < t->n && t->at >= t->r[t->i].dev.len) {
		t->i++;
		t->at = 0;
	}
	if (t->i == t->n)
		return 0;
	uint64_t left = t->r[t->i].dev.len - t->at;
	*ret = (struct sweep__ms_item){ .off = t->r[t->i].dev.off + t->at,
					.len = left < MS_MAX_REQ ? (uint32_t)left : MS_MAX_REQ };
	t->at += ret->len;
	return 1;
}

static void table_item(void *ctx, const struct sweep__ms_item *it, const uint8_t *bytes)
{
	/* Nothing to parse: reading the blocks into the cache is the point. */
	(void)ctx;
	(void)it;
	(void)bytes;
}

long sweep__metascan_read_tables(struct sweep__metascan *m, uint64_t ino_lo, uint64_t ino_hi)
{
	if (!m)
		return -EINVAL;
	struct table_walk t = { 0 };
	int r = tables_of(m, ino_lo, ino_hi, &t.r, &t.n);
	if (r < 0)
		return r;
	uint64_t before = m->io_bytes;
	r = sweep__ms_sweep(m, table_next, table_item, &t);
	for (size_t i = 0; r == 0 && i < t.n; i++)
		resident_add(m, t.r[i].dev.off, t.r[i].dev.len);
	free(t.r);
	return r < 0 ? r : (long)(m->io_bytes - before);
}

bool sweep__metascan_resident(struct sweep__metascan *m, uint64_t ino)
{
	struct sweep__ms_scan_ops ops;
	uint64_t off;
	if (!m || m->nresident == 0)
		return false;
	m->fs->scan_ops(m->fsdata, &ops);
	return ops.loc(m->fsdata, ino, &off) == SWEEP__HINT_OK && resident(m, off, off + ops.inode_len);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Inodes whose hints are read at once while looking for directories (48 bytes each). */
#define DIR_SLICE 65536u

int sweep__metascan_dir_blocks(struct sweep__metascan *m, uint64_t ino_lo, uint64_t ino_hi, struct sweep__dev_range **ret,
			       size_t *ret_n)
{
	if (!m || !ret || !ret_n)
		return -EINVAL;
	struct sweep__ms_table *t = NULL;
	size_t nt = 0;
	int r = tables_of(m, ino_lo, ino_hi, &t, &nt);
	if (r < 0)
		return r;
	uint64_t *inos = malloc(DIR_SLICE * sizeof(*inos)), *dirs = NULL;
	struct sweep__inode_hint *h = malloc(DIR_SLICE * sizeof(*h));
	size_t ndirs = 0, capdirs = 0;
	r = inos && h ? 0 : -ENOMEM;
	/* In inode order, a slice at a time: each slice one forward sweep (of cached blocks, after the table read). */
	for (size_t i = 0; r == 0 && i < nt; i++) {
		for (uint64_t k = 0; r == 0 && k < t[i].count;) {
			size_t n = 0;
			while (k < t[i].count && n < DIR_SLICE)
				inos[n++] = t[i].ino + k++;
			/* only the type is wanted here: the files' tree blocks are not */
			int v = sweep__metascan_inodes_shallow(m, inos, n, h);
			if (v < 0) {
				r = v;
				break;
			}
			for (size_t j = 0; j < n; j++) {
				if (!(h[j].flags & SWEEP__HINT_VALID) || !S_ISDIR(h[j].mode))
					continue;
				if (sweep__grow(&dirs, &capdirs, ndirs + 1, sizeof(*dirs), 256) < 0) {
					r = -ENOMEM;
					break;
				}
				dirs[ndirs++] = h[j].ino;
			}
		}
	}
	free(inos);
	free(h);
	free(t);
	if (r == 0) {
		/* table runs are sorted by device offset, which on ext4 is not always inode order */
		if (ndirs) /* dirs may be NULL then, and qsort's pointer must not be */
			qsort(dirs, ndirs, sizeof(*dirs), u64_cmp);
		r = sweep__metascan_ranges(m, dirs, ndirs, ret, ret_n);
	}
	free(dirs);
	return r;
}

int sweep__metascan_prefetch(struct sweep__metascan *m, const struct sweep__dev_range *r, size_t n)
{
	if (!m || (n && !r))
		return -EINVAL;
	if (m->drop_cache)
		return -EOPNOTSUPP;
	struct sweep__dev_range *v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t off = r[i].off, len = r[i].len;
		if (len == 0 || off >= m->dev_size)
			continue;
		if (len > m->dev_size - off)
			len = m->dev_size - off;
		v[k++] = (struct sweep__dev_range){ off, len };
	}
	qsort(v, k, sizeof(*v), range_cmp);
	int count = 0;
	for (size_t i = 0; i < k;) {
		uint64_t off = v[i].off, end = off + v[i].len;
		for (i++; i < k && v[i].off <= end + MS_GAP; i++) {
			uint64_t e = v[i].off + v[i].len;
			if (e > end) {
				if (e - off > PREFETCH_MAX)
					break;
				end = e;
			}
		}
		advise(m, off, end - off, POSIX_FADV_WILLNEED);
		count++;
	}
	free(v);
	return count;
}
