/* SPDX-License-Identifier: MIT */
/*
 * devmap, device-mapper: the table of a dm device (LVM's logical volumes,
 * LUKS, dmsetup's own), as `dmsetup table` shows it. Targets that move
 * ranges one to one go on to the device below: linear (LVM's segments) and
 * crypt (LUKS). striped (LVM's -i) is one sweep in the device's own order
 * over its stripes together. A target of another kind (thin, cache, raid,
 * snapshot, mirror...) is an opaque spindle over the devices below it, as
 * is a table that cannot be read: the kernel gives it only with
 * CAP_SYS_ADMIN. zero and error targets hold nothing to read.
 *
 * The kernel's table comes from DM_TABLE_STATUS on /dev/mapper/control.
 * sysfs has no table; under a test sysfs root (sweep__fsinfo_set_sysroot),
 * and only there, the file dm/table in the device's directory stands for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/dm-ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "devmap.h"
#include "device.h"

#define MAX_STRIPES 64
#define TABLE_MAX (1u << 20)

/* The table from the kernel, one "start length type params" line per target. */
static int table_ioctl(const char *sysdir, char **ret)
{
	char p[PATH_MAX], buf[64];
	unsigned maj, min;
	if (snprintf(p, sizeof(p), "%s/dev", sysdir) >= (int)sizeof(p) || sweep__read_small(p, buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%u:%u", &maj, &min) != 2)
		return -ENODEV;
	int cfd = open("/dev/" DM_DIR "/" DM_CONTROL_NODE, O_RDWR | O_CLOEXEC);
	if (cfd < 0)
		return -errno;
	int r = -ENOBUFS;
	for (size_t size = 16384; size <= TABLE_MAX; size *= 4) {
		struct dm_ioctl *io = calloc(1, size);
		if (!io) {
			r = -ENOMEM;
			break;
		}
		io->version[0] = DM_VERSION_MAJOR;
		io->data_size = (uint32_t)size;
		io->data_start = sizeof(*io);
		io->flags = DM_STATUS_TABLE_FLAG;
		io->dev = makedev(maj, min);
		if (ioctl(cfd, DM_TABLE_STATUS, io) < 0) {
			r = -errno;
			free(io);
			break;
		}
		if (io->flags & DM_BUFFER_FULL_FLAG) {
			free(io);
			continue;
		}
		/* Each target: its spec, its parameters after it; next counts from the first spec. */
		size_t cap = 256, n = 0;
		char *text = malloc(cap);
		const char *data = (const char *)io + io->data_start;
		size_t avail = io->data_size > io->data_start ? io->data_size - io->data_start : 0;
		size_t at = 0;
		r = text ? 0 : -ENOMEM;
		for (uint32_t t = 0; r == 0 && t < io->target_count; t++) {
			if (at + sizeof(struct dm_target_spec) > avail) {
				r = -EPROTO;
				break;
			}
			struct dm_target_spec spec;
			memcpy(&spec, data + at, sizeof(spec));
			const char *params = data + at + sizeof(spec);
			size_t plen = strnlen(params, avail - at - sizeof(spec));
			char type[DM_MAX_TYPE_NAME + 1];
			memcpy(type, spec.target_type, DM_MAX_TYPE_NAME);
			type[DM_MAX_TYPE_NAME] = '\0';
			size_t need = n + plen + DM_MAX_TYPE_NAME + 64;
			if (need > cap) {
				char *nt = realloc(text, need * 2);
				if (!nt) {
					r = -ENOMEM;
					break;
				}
				text = nt;
				cap = need * 2;
			}
			n += (size_t)snprintf(text + n, cap - n, "%llu %llu %s %.*s\n", (unsigned long long)spec.sector_start,
					      (unsigned long long)spec.length, type, (int)plen, params);
			if (spec.next <= at && t + 1 < io->target_count) {
				r = -EPROTO; /* the next spec must lie further on */
				break;
			}
			at = spec.next;
		}
		free(io);
		if (r == 0) {
			*ret = text;
		} else {
			free(text);
		}
		break;
	}
	close(cfd);
	return r;
}

int sweep__dm_table(const char *sysdir, char **ret)
{
	if (strcmp(sweep__sysroot(), "/sys") == 0)
		return table_ioctl(sysdir, ret);
	/* A test's made-up sysfs: the table is a file there. */
	char p[PATH_MAX];
	if (snprintf(p, sizeof(p), "%s/dm/table", sysdir) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	FILE *f = fopen(p, "re");
	if (!f)
		return -errno;
	char *text = NULL;
	size_t cap = 0;
	ssize_t n = getdelim(&text, &cap, '\0', f);
	fclose(f);
	if (n < 0) {
		free(text);
		return -EIO;
	}
	*ret = text;
	return 0;
}

/* A device as a table names it: MAJ:MIN (what the kernel prints), or a path to a device node. */
static int dev_of(const char *word, uint64_t *ret)
{
	unsigned maj, min;
	char end;
	if (sscanf(word, "%u:%u%c", &maj, &min, &end) == 2) {
		*ret = makedev(maj, min);
		return 0;
	}
	struct stat st;
	if (word[0] == '/' && stat(word, &st) == 0 && S_ISBLK(st.st_mode)) {
		*ret = st.st_rdev;
		return 0;
	}
	return -EINVAL;
}

static int parse_u64(const char *w, uint64_t *ret)
{
	char *end;
	if (!w || !*w)
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(w, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* The devices below, as opaque: sysfs's slaves stand for them. */
static int opaque_below(struct sweep__devmap_build *b, const char *sysdir, const char *name, uint64_t from,
			uint64_t len, uint64_t at)
{
	const char *dirs[1] = { sysdir };
	return sweep__devmap_whole(b, SWEEP__SPINDLE_OPAQUE, name, 0, dirs, 1, from, len, at);
}

/* One target line over [tstart, tstart + tlen) sectors of the dm device, for its part within [at, at + len). */
static int target(struct sweep__devmap_build *b, const char *sysdir, const char *name, char *line, uint64_t from,
		  uint64_t len, uint64_t at, int hops)
{
	char *save = NULL, *w[4 + 2 * MAX_STRIPES];
	size_t nw = 0;
	for (char *t = strtok_r(line, " \t", &save); t && nw < sizeof(w) / sizeof(w[0]); t = strtok_r(NULL, " \t", &save))
		w[nw++] = t;
	uint64_t ts, tl;
	if (nw < 3 || parse_u64(w[0], &ts) < 0 || parse_u64(w[1], &tl) < 0 || ts > UINT64_MAX / 512 ||
	    tl > UINT64_MAX / 512) {
		sweep__devmap_explain(b, "%s: table line not understood", name);
		return -EPROTO;
	}
	uint64_t lo = ts * 512 > at ? ts * 512 : at, hi = (ts + tl) * 512 < at + len ? (ts + tl) * 512 : at + len;
	if (lo >= hi)
		return 0;
	uint64_t fs = from + (lo - at), n = hi - lo, into = lo - ts * 512;
	const char *type = w[2];
	uint64_t dev, off;

	if (!strcmp(type, "linear") && nw >= 5 && dev_of(w[3], &dev) == 0 && parse_u64(w[4], &off) == 0)
		return sweep__devmap_resolve_dev(b, dev, fs, n, off * 512 + into, hops + 1);
	/* crypt: cipher key iv_offset device offset [options]: one to one onto the device. */
	if (!strcmp(type, "crypt") && nw >= 8 && dev_of(w[6], &dev) == 0 && parse_u64(w[7], &off) == 0)
		return sweep__devmap_resolve_dev(b, dev, fs, n, off * 512 + into, hops + 1);
	if (!strcmp(type, "zero") || !strcmp(type, "error"))
		return 0; /* nothing stored */
	if (!strcmp(type, "striped") && nw >= 5) {
		uint64_t k, chunk;
		char dirs[MAX_STRIPES][PATH_MAX];
		const char *dp[MAX_STRIPES];
		size_t nd = 0;
		if (parse_u64(w[3], &k) == 0 && parse_u64(w[4], &chunk) == 0 && k >= 1 && k <= MAX_STRIPES &&
		    nw >= 5 + 2 * k) {
			for (size_t i = 0; i < k; i++)
				if (dev_of(w[5 + 2 * i], &dev) == 0 && sweep__devmap_sysdir(dev, dirs[nd], PATH_MAX) == 0) {
					dp[nd] = dirs[nd];
					nd++;
				}
			return sweep__devmap_whole(b, SWEEP__SPINDLE_STRIPED, name, (unsigned)k, dp, nd, fs, n, lo);
		}
	}
	/* The text of a table line from the kernel is 16 characters of type at most: safe to print. */
	sweep__devmap_explain(b, "%s: dm target %s not followed", name, type);
	return opaque_below(b, sysdir, name, fs, n, lo);
}

int sweep__devmap_dm(struct sweep__devmap_build *b, const char *sysdir, uint64_t from, uint64_t len, uint64_t at,
		     int hops)
{
	char p[PATH_MAX];
	const char *name = strrchr(sysdir, '/');
	name = name ? name + 1 : sysdir;
	if (snprintf(p, sizeof(p), "%s/dm", sysdir) >= (int)sizeof(p) || access(p, F_OK) != 0)
		return 0; /* not a dm device */
	char *text = NULL;
	int r = sweep__dm_table(sysdir, &text);
	if (r < 0) {
		sweep__devmap_explain(b, "%s: device-mapper table not readable: %s", name, strerror(-r));
		r = opaque_below(b, sysdir, name, from, len, at);
		return r < 0 ? r : 1;
	}
	/*
	 * Each line on its own; a line not understood makes the whole device
	 * opaque, what the lines before it mapped undone.
	 */
	struct sweep__devmap_mark mark;
	sweep__devmap_mark(b, &mark);
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		r = target(b, sysdir, name, line, from, len, at, hops);
		if (r == -EPROTO) {
			sweep__devmap_rewind(b, &mark);
			r = opaque_below(b, sysdir, name, from, len, at);
			break;
		}
		if (r < 0)
			break;
	}
	free(text);
	return r < 0 ? r : 1;
}
