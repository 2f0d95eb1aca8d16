/* SPDX-License-Identifier: MIT */
/*
 * sweep-order: a filter that puts a list of paths into read order, for the
 * tools that already take one (tar -T, restic --files-from-raw, borg
 * --paths-from-stdin, xargs). Keys come from libsweep's orderer
 * (sweep_orderer_key(3)); a list larger than --memory is sorted in runs
 * written to unnamed temporary files and merged, so memory stays bounded
 * whatever the length of the list. Paths that cannot be stat'ed are passed
 * through after the others, in list order, with a warning.
 *
 * --split-by-device=PREFIX writes one list per independent disk instead
 * (PREFIX followed by the disk's name, sweep_orderer_device(3)), each in
 * that disk's order, for running one job per disk side by side; the lists'
 * names go to standard output.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sweep.h>
#include <sweep/order.h>

#include "cli.h"

#define DEFAULT_MEMORY (256ull << 20)

struct rec {
	struct sweep_order_key key;
	char *path;
	size_t len;
};

/* A sorted run on disk: records of key, length, bytes; read back one at a time in the merge. */
struct run {
	FILE *f;
	struct rec cur;
	size_t cap;
	bool done;
};

/* --split-by-device: the list of one disk (or of the paths that could not be stat'ed). */
struct list {
	char *name; /* PREFIX + the disk's name */
	FILE *f;
};

struct ctx {
	struct sweep_orderer *o;
	const char *split;  /* --split-by-device's PREFIX, or NULL: one list on standard output */
	struct list *lists;
	size_t nlists;
	char delim;
	uint64_t memory;
	struct rec *v;
	size_t n, cap;
	uint64_t used;   /* bytes the chunk holds */
	struct run *runs;
	size_t nruns;
	FILE *lost;      /* paths that could not be stat'ed, in list order */
	uint64_t nlost;
	bool io_error;
};

static int cmp_rec(const void *a, const void *b)
{
	return sweep_order_key_cmp(&((const struct rec *)a)->key, &((const struct rec *)b)->key);
}

/*
 * The list of the disk named name under --split-by-device (one name, one
 * disk: sweep_orderer_device(3)), made when the first path for it comes:
 * created or emptied like split(1)'s pieces, but never through a symlink.
 * NULL (and an error said) when it cannot be.
 */
static FILE *list_of(struct ctx *c, const char *name)
{
	size_t n = strlen(c->split) + strlen(name) + 1;
	char *full = malloc(n);
	if (!full)
		cli_die(2, "out of memory");
	snprintf(full, n, "%s%s", c->split, name);
	for (size_t i = 0; i < c->nlists; i++) {
		if (strcmp(c->lists[i].name, full) == 0) {
			free(full);
			return c->lists[i].f;
		}
	}
	struct list *v = realloc(c->lists, (c->nlists + 1) * sizeof(*v));
	if (!v)
		cli_die(2, "out of memory");
	c->lists = v;
	struct list *l = &c->lists[c->nlists];
	l->name = full;
	int fd = open(l->name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
	l->f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!l->f) {
		cli_error(-errno, "cannot write %s", cli_quotef(l->name));
		if (fd >= 0)
			close(fd);
		c->io_error = true;
		free(l->name);
		return NULL;
	}
	c->nlists++;
	return l->f;
}

/* Where a path of key group group goes: standard output, or its disk's list. NULL: nowhere (said). */
static FILE *out_for(struct ctx *c, uint64_t group)
{
	if (!c->split)
		return stdout;
	char name[64];
	int disk = sweep_orderer_device(c->o, group, name, sizeof(name));
	if (disk < 0) {
		cli_error(disk, "cannot tell the disk of a path");
		c->io_error = true;
		return NULL;
	}
	return list_of(c, name);
}

static void out_path(struct ctx *c, uint64_t group, const char *p, size_t len)
{
	FILE *f = out_for(c, group);
	if (!f || fwrite(p, 1, len, f) != len || putc(c->delim, f) == EOF)
		c->io_error = true;
}

/* --split-by-device: close every list, then name them on standard output, in the order they were made. */
static void lists_done(struct ctx *c)
{
	for (size_t i = 0; i < c->nlists; i++) {
		struct list *l = &c->lists[i];
		if (ferror(l->f) | (fclose(l->f) != 0)) {
			cli_error(-errno, "write error on %s", cli_quotef(l->name));
			c->io_error = true;
		}
		if (fputs(l->name, stdout) == EOF || putchar(c->delim) == EOF)
			c->io_error = true;
		free(l->name);
	}
	free(c->lists);
}

static FILE *temp_file(struct ctx *c)
{
	FILE *f = tmpfile(); /* unnamed: nothing is left behind, whatever happens */
	if (!f) {
		cli_error(-errno, "cannot make a temporary file");
		c->io_error = true;
	}
	return f;
}

static bool put_rec(FILE *f, const struct rec *r)
{
	uint64_t len = r->len;
	return fwrite(&r->key, sizeof(r->key), 1, f) == 1 && fwrite(&len, sizeof(len), 1, f) == 1 &&
	       fwrite(r->path, 1, r->len, f) == r->len;
}

/* The chunk in memory, sorted, becomes a run on disk. */
static void spill(struct ctx *c)
{
	struct run *nr;
	FILE *f;

	qsort(c->v, c->n, sizeof(*c->v), cmp_rec);
	f = temp_file(c);
	nr = f ? realloc(c->runs, (c->nruns + 1) * sizeof(*c->runs)) : NULL;
	if (!nr) {
		if (f)
			fclose(f);
		c->io_error = true;
		return;
	}
	c->runs = nr;
	for (size_t i = 0; i < c->n; i++) {
		if (!put_rec(f, &c->v[i]))
			c->io_error = true;
		free(c->v[i].path);
	}
	if (fflush(f) != 0 || fseek(f, 0, SEEK_SET) != 0) {
		cli_error(-errno, "cannot write a temporary file");
		c->io_error = true;
	}
	c->runs[c->nruns++] = (struct run){ .f = f };
	c->n = 0;
	c->used = 0;
}

static bool run_next(struct run *r)
{
	uint64_t len;

	if (fread(&r->cur.key, sizeof(r->cur.key), 1, r->f) != 1 || fread(&len, sizeof(len), 1, r->f) != 1) {
		r->done = true;
		return false;
	}
	if (len + 1 > r->cap) {
		char *p = realloc(r->cur.path, len + 1);
		if (!p) {
			r->done = true;
			return false;
		}
		r->cur.path = p;
		r->cap = len + 1;
	}
	if (fread(r->cur.path, 1, len, r->f) != len) {
		r->done = true;
		return false;
	}
	r->cur.len = len;
	return true;
}

/* k-way merge of the runs: a linear pick is enough for the few runs a bounded memory makes. */
static void merge(struct ctx *c)
{
	for (size_t i = 0; i < c->nruns; i++)
		run_next(&c->runs[i]);
	for (;;) {
		struct run *best = NULL;
		for (size_t i = 0; i < c->nruns; i++) {
			struct run *r = &c->runs[i];
			if (!r->done && (!best || sweep_order_key_cmp(&r->cur.key, &best->cur.key) < 0))
				best = r;
		}
		if (!best)
			break;
		out_path(c, best->cur.key.group, best->cur.path, best->cur.len);
		run_next(best);
	}
	for (size_t i = 0; i < c->nruns; i++) {
		if (ferror(c->runs[i].f))
			c->io_error = true;
		fclose(c->runs[i].f);
		free(c->runs[i].cur.path);
	}
}

static void usage(void)
{
	printf("Usage: %s [OPTION]...\n"
	       "Read a list of paths and write it back in the order that reads them fastest:\n"
	       "by where each file's data lies on its disk, filesystem by filesystem.\n\n"
	       "  -0, -z, --null          paths are NUL-terminated, in and out (default: newlines)\n"
	       "  -T, --files-from=FILE   read the list from FILE ('-' is standard input, the default)\n"
	       "  -L, --dereference       locate what a symlink in the list points to (default: the link)\n"
	       "      --order=ORDER       auto (each filesystem's policy), physical, inode, none\n"
	       "      --device=CLASS      hdd, ssd or auto (default): the device class of every\n"
	       "                          filesystem (SSD class: the list's order is kept)\n"
	       "  -S, --memory=SIZE       sort at most SIZE of the list in memory at a time (default 256M);\n"
	       "                          a longer list is sorted in runs on disk and merged\n"
	       "      --split-by-device=PREFIX  one list per independent disk, each in that disk's\n"
	       "                          order, into PREFIX followed by the disk's name (PREFIXsdb,\n"
	       "                          PREFIXmd0; PREFIXrest: paths that cannot be stat'ed); their\n"
	       "                          names are written to standard output, not the paths\n"
	       "      --help              display this help and exit\n"
	       "      --version           output version information and exit\n\n"
	       "Paths that cannot be stat'ed are written after the others, in list order, with a\n"
	       "warning, and the exit status is then 1. Examples:\n"
	       "  find DIR -type f -print0 | %s -0 | tar --null -T - -cf out.tar\n"
	       "  find DIR -print0 | %s -0 | restic backup --files-from-raw /dev/stdin\n"
	       "  find DIR -type f -print0 | %s -0 --split-by-device=/tmp/l. |\n"
	       "      xargs -0 -I{} -P0 sh -c 'tar --null -T \"$1\" -cf \"$1.tar\"' sh {}\n",
	       cli_prog(), cli_prog(), cli_prog(), cli_prog());
}

enum { OPT_ORDER = 256, OPT_DEVICE, OPT_SPLIT, OPT_HELP, OPT_VERSION };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "null", no_argument, NULL, '0' },
		{ "files-from", required_argument, NULL, 'T' },
		{ "dereference", no_argument, NULL, 'L' },
		{ "order", required_argument, NULL, OPT_ORDER },
		{ "memory", required_argument, NULL, 'S' },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "split-by-device", required_argument, NULL, OPT_SPLIT },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	struct sweep_order_opts oo = { .size = sizeof(oo) };
	struct ctx c = { .delim = '\n', .memory = DEFAULT_MEMORY };
	struct sweep_orderer *o = NULL;
	const char *from = "-";
	FILE *in;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	uint64_t seq = 0;
	int opt, rc;

	cli_init(argv[0]);
	cli_close_stdout_atexit();
	while ((opt = getopt_long(argc, argv, "0zT:LS:", longopts, NULL)) != -1) {
		switch (opt) {
		case '0':
		case 'z':
			c.delim = '\0';
			break;
		case 'T':
			from = optarg;
			break;
		case 'L':
			oo.flags |= SWEEP_ORDER_FOLLOW;
			break;
		case OPT_ORDER:
			if (sweep_order_parse(optarg, &oo.order) < 0 || oo.order == SWEEP_ORDER_NAME) {
				cli_msg("invalid order %s", cli_quote(optarg));
				cli_try_help();
				return 2;
			}
			break;
		case OPT_DEVICE:
			if (cli_device_option(optarg) < 0) {
				cli_try_help();
				return 2;
			}
			break;
		case 'S':
			if (cli_parse_size(optarg, &c.memory) < 0 || c.memory == 0) {
				cli_msg("invalid memory size %s", cli_quote(optarg));
				cli_try_help();
				return 2;
			}
			break;
		case OPT_SPLIT:
			if (!*optarg) {
				cli_msg("--split-by-device needs a PREFIX");
				cli_try_help();
				return 2;
			}
			c.split = optarg;
			break;
		case OPT_HELP:
			usage();
			return 0;
		case OPT_VERSION:
			cli_version("sweep-order");
			return 0;
		default:
			cli_try_help();
			return 2;
		}
	}
	if (optind < argc) {
		cli_msg("extra operand %s", cli_quote(argv[optind]));
		cli_try_help();
		return 2;
	}
	in = strcmp(from, "-") ? fopen(from, "re") : stdin;
	if (!in)
		cli_die(2, "%s: %s", cli_quotef(from), strerror(errno));
	rc = sweep_orderer_new(&oo, &o);
	if (rc < 0)
		cli_die(2, "cannot start: %s", strerror(-rc));
	c.o = o;

	while ((len = getdelim(&line, &lcap, c.delim, in)) >= 0) {
		if (len > 0 && line[len - 1] == c.delim)
			line[--len] = '\0';
		if (len == 0)
			continue; /* an empty line names nothing */
		struct sweep_order_key k;
		rc = sweep_orderer_key(o, line, seq++, &k);
		if (rc == -ENOMEM)
			cli_die(2, "out of memory");
		if (rc < 0) {
			cli_msg("%s: %s", cli_quotef(line), strerror(-rc));
			if (!c.lost && !(c.lost = temp_file(&c)))
				break;
			if (fwrite(line, 1, (size_t)len, c.lost) != (size_t)len || putc(c.delim, c.lost) == EOF)
				c.io_error = true;
			c.nlost++;
			continue;
		}
		if (c.n == c.cap) {
			size_t ncap = c.cap ? c.cap * 2 : 1024;
			struct rec *v = realloc(c.v, ncap * sizeof(*v));
			if (!v)
				cli_die(2, "out of memory");
			c.v = v;
			c.cap = ncap;
		}
		char *copy = malloc((size_t)len + 1);
		if (!copy)
			cli_die(2, "out of memory");
		memcpy(copy, line, (size_t)len + 1);
		c.v[c.n++] = (struct rec){ .key = k, .path = copy, .len = (size_t)len };
		c.used += sizeof(struct rec) + (uint64_t)len + 1;
		if (c.used >= c.memory)
			spill(&c);
	}
	if (ferror(in)) {
		cli_error(-errno, "read error");
		c.io_error = true;
	}
	if (c.nruns == 0) { /* it all fitted: no run on disk */
		if (c.n)
			qsort(c.v, c.n, sizeof(*c.v), cmp_rec); /* none: c.v is NULL, which qsort may not take */
		for (size_t i = 0; i < c.n; i++) {
			out_path(&c, c.v[i].key.group, c.v[i].path, c.v[i].len);
			free(c.v[i].path);
		}
	} else {
		if (c.n)
			spill(&c);
		merge(&c);
	}
	if (c.lost) {
		/* After the others; under --split-by-device, a list of their own. */
		FILE *to = c.split ? list_of(&c, "rest") : stdout;
		int ch;
		rewind(c.lost);
		while (to && (ch = getc(c.lost)) != EOF)
			if (putc(ch, to) == EOF)
				c.io_error = true;
		fclose(c.lost);
	}
	if (c.split)
		lists_done(&c);
	free(c.v);
	free(c.runs);
	free(line);
	if (in != stdin)
		fclose(in);
	sweep_orderer_free(o);
	return c.io_error ? 2 : c.nlost ? 1 : 0;
}
