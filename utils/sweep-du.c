/* SPDX-License-Identifier: MIT */
/*
 * sweep-du: GNU du over the sweep. The tree is read in C-SCAN order
 * (sweep_walk, stat batched in inode order); what du needs of each entry is
 * kept in a compact store, and the report is then replayed in the order GNU
 * du's fts traversal would have produced it, so the output is byte for byte
 * GNU du's. Hard links, -L aliases and -x mount points are decided during
 * the replay, in du's order, because which path of several counts depends on
 * which one du meets first.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sweep.h>

#include "cli.h"
#include "exclude.h"
#include "progress.h"
#include "sweep-du/du.h"

#define MAGIC_NFS   0x6969u
#define MAGIC_CIFS  0xff534d42u
#define MAGIC_TMPFS 0x01021994u

enum { OPT_APPARENT = 256, OPT_SI, OPT_EXCLUDE, OPT_INODES, OPT_ORDER, OPT_TIME, OPT_TIME_STYLE, OPT_FILES0,
       OPT_HELP, OPT_VERSION };

enum time_kind { TIME_MTIME, TIME_ATIME, TIME_CTIME };

enum follow { FOLLOW_NONE, FOLLOW_ARGS, FOLLOW_ALL };

struct opts {
	bool all, apparent, total, summarize, xdev, separate, count_links, inodes, nul;
	bool depth_given;
	uint64_t max_depth;
	int64_t threshold;
	enum follow follow;
	enum sweep_order order;
	bool time;              /* --time: also print the newest time in each subtree */
	enum time_kind time_kind;
	const char *time_style; /* --time-style as given (NULL: TIME_STYLE or long-iso) */
	const char *time_format;
	const char *files0;     /* --files0-from */
	struct du_units units;
	struct exclude *exclude;
};

/* An operand: a walk root, or an empty name du complains about in its turn. */
struct operand {
	uint32_t root;         /* index into roots, or DU_NONE for a name du refuses */
	bool dash;             /* refused: "-" in a --files0-from list read from stdin */
	unsigned long number;  /* its position in --files0-from, 0 on the command line */
};

/* A failure reported by the walk, printed where du would print it. */
struct err {
	char *path;
	enum sweep_walk_op op;
	int err; /* positive errno */
	bool used;
};

struct du {
	struct opts o;
	struct du_tree tree;
	struct du_map ids;       /* walk directory id -> node */
	const char **roots;      /* operands as fts sees them (extra trailing slashes trimmed) */
	size_t nroots;
	uint32_t *root_node;     /* per operand: its node, or DU_NONE */
	struct operand *ops;     /* every operand in order, the empty ones too */
	size_t nops;
	uint64_t *root_dev;
	struct err *errs;
	size_t nerrs, errs_cap;
	char *scratch;           /* du-style path of the entry at hand */
	size_t scratch_cap;
	bool ok;
	int fatal;               /* -errno when the store ran out of memory */
	struct progress *progress; /* on a terminal: entries and bytes seen so far */
	struct timespec *times;  /* --time: per node, the time du reports */
	size_t times_cap;
};

static void usage(int status)
{
	if (status != 0) {
		fprintf(stderr, "Try '%s --help' for more information.\n", cli_prog());
		exit(status);
	}
	printf("Usage: %s [OPTION]... [FILE]...\n"
	       "Summarize device usage of the set of FILEs, recursively for directories,\n"
	       "reading the tree in physical disk order (output as GNU du prints it).\n\n"
	       "  -0, --null            end each output line with NUL, not newline\n"
	       "  -a, --all             write counts for all files, not just directories\n"
	       "      --apparent-size   print apparent sizes rather than device usage\n"
	       "  -B, --block-size=SIZE scale sizes by SIZE before printing them\n"
	       "  -b, --bytes           equivalent to '--apparent-size --block-size=1'\n"
	       "  -c, --total           produce a grand total\n"
	       "  -D, --dereference-args  dereference only symlinks listed on the command line\n"
	       "  -d, --max-depth=N     print the total for a directory only if it is N or\n"
	       "                        fewer levels below the command line argument\n"
	       "  -H                    equivalent to --dereference-args (-D)\n"
	       "  -h, --human-readable  print sizes in human readable format (e.g., 1K 234M 2G)\n"
	       "      --inodes          list inode usage information instead of block usage\n"
	       "  -k                    like --block-size=1K\n"
	       "  -L, --dereference     dereference all symbolic links\n"
	       "  -l, --count-links     count sizes many times if hard linked\n"
	       "  -m                    like --block-size=1M\n"
	       "  -P, --no-dereference  don't follow any symbolic links (this is the default)\n"
	       "  -S, --separate-dirs   for directories do not include size of subdirectories\n"
	       "      --files0-from=F   summarize device usage of the NUL-terminated file\n"
	       "                        names specified in file F; if F is -, read names\n"
	       "                        from standard input\n"
	       "      --time            show time of the last modification of any file in the\n"
	       "                        directory, or any of its subdirectories\n"
	       "      --time=WORD       show time as WORD instead of modification time:\n"
	       "                        atime, access, use, ctime or status\n"
	       "      --time-style=STYLE  show times using STYLE: full-iso, long-iso, iso,\n"
	       "                        or +FORMAT (interpreted like 'date')\n"
	       "      --si              like -h, but use powers of 1000 not 1024\n"
	       "  -s, --summarize       display only a total for each argument\n"
	       "  -t, --threshold=SIZE  exclude entries smaller than SIZE if positive,\n"
	       "                        or entries greater than SIZE if negative\n"
	       "  -X, --exclude-from=FILE  exclude files that match any pattern in FILE\n"
	       "      --exclude=PATTERN exclude files that match PATTERN\n"
	       "  -x, --one-file-system skip directories on different file systems\n"
	       "      --order=ORDER     walk order: auto (default), physical, inode, none, name\n"
	       "      --help            display this help and exit\n"
	       "      --version         output version information and exit\n",
	       cli_prog());
	exit(0);
}

static void bad_arg(const char *what, const char *arg)
{
	cli_msg("invalid %s %s", what, du_quote(arg));
	usage(1);
}

/*
 * gnulib XARGMATCH: an exact word, or an abbreviation whose matches all mean
 * the same; otherwise du's "invalid/ambiguous argument" text and usage.
 */
static int xargmatch(const char *context, const char *arg, const char *const *words, const int *vals)
{
	size_t len = strlen(arg);
	int found = -1;
	bool ambiguous = false;

	for (int i = 0; words[i]; i++) {
		if (strncmp(words[i], arg, len) != 0)
			continue;
		if (strlen(words[i]) == len)
			return vals[i];
		if (found < 0)
			found = i;
		else if (vals[found] != vals[i])
			ambiguous = true;
	}
	if (found >= 0 && !ambiguous)
		return vals[found];
	cli_msg("%s argument %s for %s", ambiguous ? "ambiguous" : "invalid", du_quote(arg), du_quote(context));
	fputs("Valid arguments are:", stderr);
	for (int i = 0; words[i]; i++) {
		if (i == 0 || vals[i] != vals[i - 1])
			fprintf(stderr, "\n  - %s", du_quote(words[i]));
		else
			fprintf(stderr, ", %s", du_quote(words[i]));
	}
	putc('\n', stderr);
	usage(1);
	return -1;
}

/* du's --time-style rules: TIME_STYLE, "locale" and "posix-" ignored, +FORMAT. */
static const char *time_format(const char *style)
{
	static const char *const words[] = { "full-iso", "long-iso", "iso", NULL };
	static const char *const formats[] = { "%Y-%m-%d %H:%M:%S.%N %z", "%Y-%m-%d %H:%M", "%Y-%m-%d" };
	static const int idx[] = { 0, 1, 2 };

	if (!style) {
		style = getenv("TIME_STYLE");
		if (!style || !strcmp(style, "locale")) {
			style = "long-iso";
		} else if (*style == '+') {
			char *nl = strchr(style, '\n');
			if (nl)
				*nl = 0; /* as ls: only the first line */
		} else {
			while (!strncmp(style, "posix-", 6))
				style += 6;
		}
	}
	if (*style == '+')
		return style + 1;
	return formats[xargmatch("time style", style, words, idx)];
}

/* xstrtol_fatal's messages, then exit 1. */
static void size_arg_fatal(int err, const char *opt, const char *arg)
{
	if (err == -ERANGE)
		cli_die(1, "%s argument %s too large", opt, du_quote(arg));
	if (err == -EILSEQ)
		cli_die(1, "invalid suffix in %s argument %s", opt, du_quote(arg));
	cli_die(1, "invalid %s argument %s", opt, du_quote(arg));
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "apparent-size", no_argument, NULL, OPT_APPARENT },
		{ "block-size", required_argument, NULL, 'B' },
		{ "bytes", no_argument, NULL, 'b' },
		{ "count-links", no_argument, NULL, 'l' },
		{ "dereference", no_argument, NULL, 'L' },
		{ "dereference-args", no_argument, NULL, 'D' },
		{ "exclude", required_argument, NULL, OPT_EXCLUDE },
		{ "exclude-from", required_argument, NULL, 'X' },
		{ "human-readable", no_argument, NULL, 'h' },
		{ "inodes", no_argument, NULL, OPT_INODES },
		{ "si", no_argument, NULL, OPT_SI },
		{ "max-depth", required_argument, NULL, 'd' },
		{ "null", no_argument, NULL, '0' },
		{ "no-dereference", no_argument, NULL, 'P' },
		{ "one-file-system", no_argument, NULL, 'x' },
		{ "separate-dirs", no_argument, NULL, 'S' },
		{ "summarize", no_argument, NULL, 's' },
		{ "total", no_argument, NULL, 'c' },
		{ "threshold", required_argument, NULL, 't' },
		{ "order", required_argument, NULL, OPT_ORDER },
		{ "time", optional_argument, NULL, OPT_TIME },
		{ "time-style", required_argument, NULL, OPT_TIME_STYLE },
		{ "files0-from", required_argument, NULL, OPT_FILES0 },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ 0, 0, 0, 0 },
	};
	bool bad = false;
	int c, r;

	if (du_units_parse(getenv("DU_BLOCK_SIZE"), &o->units) < 0)
		du_units_parse(NULL, &o->units);
	o->max_depth = UINT64_MAX;
	o->exclude = exclude_new(EXCLUDE_GNU);
	if (!o->exclude)
		cli_die(1, "memory exhausted");
	int li = -1; /* index of a long option, -1 for a short one (for messages) */

	while ((c = getopt_long(argc, argv, "0abd:chHklmst:xB:DLPSX:", longopts, &li)) != -1) {
		switch (c) {
		case '0': o->nul = true; break;
		case 'a': o->all = true; break;
		case OPT_APPARENT: o->apparent = true; break;
		case 'b':
			o->apparent = true;
			o->units = (struct du_units){ .block = 1 };
			break;
		case 'c': o->total = true; break;
		case 'h':
			o->units = (struct du_units){ 1, DU_AUTOSCALE | DU_SI | DU_BASE1024 };
			break;
		case OPT_SI:
			o->units = (struct du_units){ 1, DU_AUTOSCALE | DU_SI };
			break;
		case 'k': o->units = (struct du_units){ .block = 1024 }; break;
		case 'm': o->units = (struct du_units){ .block = 1024 * 1024 }; break;
		case 'd': {
			char *end;
			errno = 0;
			o->max_depth = strtoumax(optarg, &end, 0);
			if (errno || end == optarg || *end || *optarg == '-') {
				cli_msg("invalid maximum depth %s", du_quote(optarg));
				bad = true;
			}
			o->depth_given = true;
			break;
		}
		case 'l': o->count_links = true; break;
		case 's': o->summarize = true; break;
		case 't': {
			struct du_units t;
			const char *a = optarg + (*optarg == '-');
			r = *a ? du_units_parse(a, &t) : -EINVAL;
			if (r == 0 && (t.opts & DU_AUTOSCALE))
				r = -EINVAL;
			if (r == 0 && t.block > INT64_MAX)
				r = -ERANGE;
			if (r < 0)
				size_arg_fatal(r, li >= 0 ? "--threshold" : "-t", optarg);
			if (t.block == 0 || (*optarg == '-' && strspn(a, "0") == strlen(a)))
				cli_die(1, "invalid --threshold argument '-0'");
			o->threshold = *optarg == '-' ? -(int64_t)t.block : (int64_t)t.block;
			break;
		}
		case 'x': o->xdev = true; break;
		case 'B':
			r = du_units_parse(optarg, &o->units);
			if (r < 0)
				size_arg_fatal(r, li >= 0 ? "--block-size" : "-B", optarg);
			break;
		case 'H':
		case 'D': o->follow = FOLLOW_ARGS; break;
		case 'L': o->follow = FOLLOW_ALL; break;
		case 'P': o->follow = FOLLOW_NONE; break;
		case 'S': o->separate = true; break;
		case 'X':
			r = exclude_add_file(o->exclude, optarg);
			if (r < 0) {
				cli_path_error(optarg, r);
				bad = true;
			}
			break;
		case OPT_EXCLUDE:
			if (exclude_add(o->exclude, optarg) < 0)
				cli_die(1, "memory exhausted");
			break;
		case OPT_INODES: o->inodes = true; break;
		case OPT_ORDER:
			if (sweep_order_parse(optarg, &o->order) < 0)
				bad_arg("--order argument", optarg);
			break;
		case OPT_TIME: {
			static const char *const words[] = { "atime", "access", "use", "ctime", "status", NULL };
			static const int kinds[] = { TIME_ATIME, TIME_ATIME, TIME_ATIME, TIME_CTIME, TIME_CTIME };
			o->time = true;
			o->time_kind = optarg ? (enum time_kind)xargmatch("--time", optarg, words, kinds) : TIME_MTIME;
			break;
		}
		case OPT_TIME_STYLE: o->time_style = optarg; break;
		case OPT_FILES0: o->files0 = optarg; break;
		case OPT_HELP: usage(0); break;
		case OPT_VERSION:
			cli_version(cli_prog());
			exit(0);
		default: bad = true;
		}
		li = -1;
	}
	if (bad)
		usage(1);
	if (o->all && o->summarize) {
		cli_msg("cannot both summarize and show all entries");
		usage(1);
	}
	if (o->summarize && o->depth_given && o->max_depth == 0)
		cli_msg("warning: summarizing is the same as using --max-depth=0");
	if (o->summarize && o->depth_given && o->max_depth != 0) {
		cli_msg("warning: summarizing conflicts with --max-depth=%" PRIu64, o->max_depth);
		usage(1);
	}
	if (o->summarize)
		o->max_depth = 0;
	if (o->inodes) {
		if (o->apparent)
			cli_msg("warning: options --apparent-size and -b are ineffective with --inodes");
		o->units.block = 1;
	}
	if (o->time)
		o->time_format = time_format(o->time_style);
}

/* ---- the walk: collect ---- */

/*
 * The path du would print for a walk path: the operand, then the
 * components, joined as fts joins them (no '/' added after a trailing one).
 */
static const char *du_path(struct du *du, uint32_t root, const char *walk_path, int depth)
{
	const char *r = du->roots[root], *rest;
	size_t rl = strlen(r), need;

	if (depth == 0 || strncmp(walk_path, r, rl) != 0)
		return walk_path;
	rest = walk_path + rl;
	while (*rest == '/')
		rest++;
	need = rl + strlen(rest) + 2;
	if (du_grow(&du->scratch, &du->scratch_cap, need, 1) < 0)
		return walk_path;
	sprintf(du->scratch, "%s%s%s", r, rl && r[rl - 1] == '/' ? "" : "/", rest);
	return du->scratch;
}

/* du_path() for a failure, which does not say its root: the longest operand it starts with. */
static const char *du_err_path(struct du *du, const char *walk_path)
{
	size_t best = SIZE_MAX, best_len = 0;

	for (size_t i = 0; i < du->nroots; i++) {
		size_t rl = strlen(du->roots[i]);
		if (rl >= best_len && strncmp(walk_path, du->roots[i], rl) == 0 &&
		    (walk_path[rl] == '/' || (rl && du->roots[i][rl - 1] == '/'))) {
			best = i;
			best_len = rl;
		}
	}
	return best == SIZE_MAX ? walk_path : du_path(du, (uint32_t)best, walk_path, 1);
}

static int on_error(const struct sweep_walk_error *we, void *ctx)
{
	struct du *du = ctx;
	const char *path;
	struct err *e;

	/* -L loops: du's own dev/ino set skips them silently */
	if (we->op == SWEEP_WALK_OP_LOOP)
		return 0;
	path = du_err_path(du, we->path);
	if (exclude_count(du->o.exclude) && exclude_match(du->o.exclude, path, NULL, false))
		return 0;
	if (du_grow(&du->errs, &du->errs_cap, du->nerrs + 1, sizeof(*du->errs)) < 0)
		return -ENOMEM;
	e = &du->errs[du->nerrs];
	*e = (struct err){ .path = strdup(path), .op = we->op, .err = -we->err };
	if (!e->path)
		return -ENOMEM;
	du->nerrs++;
	return 0;
}

static int on_entry(const struct sweep_entry *e, void *ctx)
{
	struct du *du = ctx;
	struct opts *o = &du->o;
	struct du_node n = { .parent = DU_NONE, .index = e->dirent_index };
	bool dir = e->stat_err == 0 ? S_ISDIR(e->st.st_mode) : e->d_type == DT_DIR;
	uint32_t idx;

	if (e->depth > 0) {
		n.parent = du_map_get(&du->ids, e->dir_id, 0);
		if (n.parent == DU_NONE) /* below an excluded or skipped directory */
			return SWEEP_WALK_SKIP;
	} else {
		if (e->root_index >= du->nroots)
			return SWEEP_WALK_SKIP;
		n.index = e->root_index;
	}
	if (exclude_count(o->exclude) &&
	    exclude_match(o->exclude, du_path(du, e->root_index, e->path, e->depth), e->name, dir))
		return SWEEP_WALK_SKIP;
	if (e->stat_err) {
		n.flags = DU_NOSTAT;
		n.size = (uint64_t)-e->stat_err;
	} else if (S_ISLNK(e->st.st_mode) &&
		   (o->follow == FOLLOW_ALL || (o->follow == FOLLOW_ARGS && e->depth == 0))) {
		/* a dangling symlink that should have been followed (fts FTS_SLNONE):
		 * du says "cannot access" and gives no reason */
		n.flags = DU_NOSTAT;
		n.size = 0;
	} else {
		if (e->depth == 0)
			du->root_dev[e->root_index] = e->st.st_dev;
		else if (o->xdev && (uint64_t)e->st.st_dev != du->root_dev[e->root_index])
			return SWEEP_WALK_SKIP; /* -x: not counted, not entered */
		n.size = o->apparent ? (e->st.st_size > 0 ? (uint64_t)e->st.st_size : 0)
				     : (uint64_t)e->st.st_blocks * 512;
		n.ino = e->st.st_ino;
		n.dev = du_tree_dev(&du->tree, e->st.st_dev);
		if (dir) {
			n.flags |= DU_DIR;
			if (!e->fs || (e->fs->fs_magic != MAGIC_NFS && e->fs->fs_magic != MAGIC_CIFS &&
				       e->fs->fs_magic != MAGIC_TMPFS))
				n.flags |= DU_SORTFS;
		} else if (e->st.st_nlink > 1) {
			n.flags |= DU_MULTI;
		}
	}
	idx = du_tree_add(&du->tree, &n, e->depth == 0 ? du->roots[e->root_index] : e->name);
	if (idx == DU_NONE || n.dev == DU_NONE)
		return du->fatal = -ENOMEM;
	if (o->time) {
		if (du_grow(&du->times, &du->times_cap, (size_t)idx + 1, sizeof(*du->times)) < 0)
			return du->fatal = -ENOMEM;
		du->times[idx] = o->time_kind == TIME_ATIME ? e->st.st_atim
				 : o->time_kind == TIME_CTIME ? e->st.st_ctim : e->st.st_mtim;
	}
	if (e->depth == 0 && du->root_node[e->root_index] == DU_NONE)
		du->root_node[e->root_index] = idx;
	if (dir && e->id && du_map_put(&du->ids, e->id, 0, idx, NULL) < 0)
		return du->fatal = -ENOMEM;
	/* nothing is printed before the walk ends, so show that it moves */
	progress_plan(du->progress, 1, n.flags & DU_NOSTAT ? 0 : n.size);
	progress_add(du->progress, 1, n.flags & DU_NOSTAT ? 0 : n.size);
	return 0;
}

/* ---- the replay: report in GNU du's order ---- */

static int err_cmp(const void *a, const void *b)
{
	return strcmp(((const struct err *)a)->path, ((const struct err *)b)->path);
}

static struct err *find_err(struct du *du, const char *path, bool dir_errors)
{
	struct err key = { .path = (char *)path }, *e;

	if (!du->nerrs)
		return NULL;
	e = bsearch(&key, du->errs, du->nerrs, sizeof(key), err_cmp);
	if (!e)
		return NULL;
	/* several failures may share a path: find one of the wanted kind */
	while (e > du->errs && strcmp(e[-1].path, path) == 0)
		e--;
	for (; e < du->errs + du->nerrs && strcmp(e->path, path) == 0; e++) {
		bool is_dir_err = e->op == SWEEP_WALK_OP_OPENDIR || e->op == SWEEP_WALK_OP_READDIR;
		if (is_dir_err == dir_errors)
			return e;
	}
	return NULL;
}

/*
 * A directory du does not enter (met before, or a -L cycle): failures the
 * walk met at or below it are not du's to report.
 */
static void drop_errs_below(struct du *du, const char *path)
{
	size_t lo = 0, hi = du->nerrs, pl = strlen(path);

	while (lo < hi) { /* first error not sorting before path */
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(du->errs[mid].path, path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < du->nerrs && strncmp(du->errs[lo].path, path, pl) == 0; lo++) {
		char next = du->errs[lo].path[pl];
		if (next == 0 || next == '/' || (pl && path[pl - 1] == '/'))
			du->errs[lo].used = true;
	}
}

static void print_err(const struct err *e, const char *path, bool partial)
{
	switch (e->op) {
	case SWEEP_WALK_OP_OPENDIR:
	case SWEEP_WALK_OP_READDIR:
		if (partial) /* fts FTS_ERR: some entries were read */
			cli_msg("%s: %s", du_quotef(path), strerror(e->err));
		else
			cli_msg("cannot read directory %s: %s", du_quote(path), strerror(e->err));
		break;
	default:
		if (e->err)
			cli_msg("cannot access %s: %s", du_quote(path), strerror(e->err));
		else
			cli_msg("cannot access %s", du_quote(path));
	}
}

/* What a line reports: a size (or inode count) and, for --time, the newest time. */
struct val {
	uint64_t v;
	struct timespec t;
};

#define VAL_ZERO ((struct val){ 0, { INT64_MIN, -1 } })

static void val_add(struct val *a, const struct val *b)
{
	a->v += b->v;
	if (b->t.tv_sec > a->t.tv_sec || (b->t.tv_sec == a->t.tv_sec && b->t.tv_nsec > a->t.tv_nsec))
		a->t = b->t;
}

static struct val own_val(const struct du *du, uint32_t i)
{
	struct val v = VAL_ZERO;

	v.v = du->o.inodes ? 1 : du->tree.nodes[i].size;
	if (du->times)
		v.t = du->times[i];
	return v;
}

static void print_line(struct du *du, const struct val *val, const char *path)
{
	char buf[256];
	uint64_t v = val->v;

	if (du->o.threshold < 0 ? v > (uint64_t)-du->o.threshold : v < (uint64_t)du->o.threshold)
		return;
	fputs(du_units_format(v, &du->o.units, buf), stdout);
	if (du->o.time) {
		putchar('\t');
		if (du_time_format(buf, sizeof(buf), du->o.time_format, val->t) < 0)
			cli_msg("time %s is out of range", du_quote(buf));
		fputs(buf, stdout);
	}
	putchar('\t');
	fputs(path, stdout);
	putchar(du->o.nul ? '\0' : '\n');
}

struct frame {
	uint32_t node, kid, end;
	size_t pathlen;
	struct val sum; /* what the directory's line adds up from its entries */
};

struct replay {
	struct du *du;
	struct du_map seen;   /* dev/ino already counted */
	struct du_map canon;  /* -L: dev/ino -> the node whose children the walk recorded */
	struct frame *stack;
	size_t depth, stack_cap;
	char *path;
	size_t path_cap;
	struct val total;
	bool hash_all;
};

static int path_push(struct replay *r, size_t base, const char *name)
{
	size_t nl = strlen(name), need = base + nl + 2;
	bool slash = base > 0 && r->path[base - 1] != '/';

	if (du_grow(&r->path, &r->path_cap, need, 1) < 0)
		return -ENOMEM;
	if (slash)
		r->path[base++] = '/';
	memcpy(r->path + base, name, nl + 1);
	return 0;
}

static void kids_of(struct replay *r, uint32_t i, uint32_t *begin, uint32_t *end)
{
	const struct du_tree *t = &r->du->tree;

	if (t->first[i] == t->first[i + 1] && r->canon.n) {
		uint32_t c = du_map_get(&r->canon, t->nodes[i].dev, t->nodes[i].ino);
		if (c != DU_NONE)
			i = c;
	}
	*begin = t->first[i];
	*end = t->first[i + 1];
}

static bool on_stack(const struct replay *r, const struct du_node *n)
{
	for (size_t d = 0; d < r->depth; d++) {
		const struct du_node *a = &r->du->tree.nodes[r->stack[d].node];
		if (a->dev == n->dev && a->ino == n->ino)
			return true;
	}
	return false;
}

/* Count a finished entry into its parent's line and print it when du would. */
static void finish(struct replay *r, uint32_t i, const struct val *value, size_t level)
{
	struct du *du = r->du;
	bool dir = du->tree.nodes[i].flags & DU_DIR;
	struct val own = own_val(du, i);

	/* -S: a subdirectory's line does not add into its parent's */
	if (r->depth > 0 && !(du->o.separate && dir))
		val_add(&r->stack[r->depth - 1].sum, value);
	val_add(&r->total, &own);
	if ((dir && level <= du->o.max_depth) || (du->o.all && level <= du->o.max_depth) || level == 0)
		print_line(du, value, r->path);
}

/* Enter node i at the current depth; 1 if it is a directory now on the stack. */
static int enter(struct replay *r, uint32_t i)
{
	struct du *du = r->du;
	const struct du_node *n = &du->tree.nodes[i];
	size_t base = r->depth ? r->stack[r->depth - 1].pathlen : 0;
	bool dir = n->flags & DU_DIR;
	int ret;

	ret = path_push(r, base, du_name(&du->tree, i));
	if (ret < 0)
		return ret;
	if (n->flags & DU_NOSTAT) {
		struct err *e = find_err(du, r->path, false);
		struct err fake = { .op = SWEEP_WALK_OP_STAT, .err = (int)n->size };
		if (e)
			e->used = true;
		print_err(&fake, r->path, false);
		du->ok = false;
		return 0;
	}
	if (dir && du->o.follow == FOLLOW_ALL && du->o.count_links && on_stack(r, n)) {
		drop_errs_below(du, r->path);
		return 0; /* fts FTS_DC under -L: skipped without a word */
	}
	if (!du->o.count_links && (r->hash_all || (!dir && (n->flags & DU_MULTI)))) {
		ret = du_map_put(&r->seen, n->dev, n->ino, i, NULL);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			/* already counted: a hard link, or a directory seen before */
			if (dir && du->nerrs)
				drop_errs_below(du, r->path);
			return 0;
		}
	}
	if (!dir) {
		struct val own = own_val(du, i);
		finish(r, i, &own, r->depth);
		return 0;
	}
	if (du_grow(&r->stack, &r->stack_cap, r->depth + 1, sizeof(*r->stack)) < 0)
		return -ENOMEM;
	struct frame *f = &r->stack[r->depth++];
	*f = (struct frame){ .node = i, .pathlen = strlen(r->path), .sum = VAL_ZERO };
	kids_of(r, i, &f->kid, &f->end);
	return 1;
}

/* Leave the directory on top of the stack: its error, then its line. */
static void leave(struct replay *r)
{
	struct du *du = r->du;
	struct frame f = r->stack[--r->depth];
	struct val v = own_val(du, f.node);
	struct err *e;

	r->path[f.pathlen] = 0;
	e = find_err(du, r->path, true);
	if (e) {
		e->used = true;
		print_err(e, r->path, f.end > du->tree.first[f.node]);
		du->ok = false;
	}
	val_add(&v, &f.sum);
	finish(r, f.node, &v, r->depth);
}

static int replay_root(struct replay *r, uint32_t root_node)
{
	int ret = enter(r, root_node);

	if (ret <= 0)
		return ret;
	while (r->depth > 0) {
		struct frame *f = &r->stack[r->depth - 1];
		if (f->kid == f->end) {
			leave(r);
			continue;
		}
		ret = enter(r, r->du->tree.kids[f->kid++]);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int build_canon(struct replay *r)
{
	const struct du_tree *t = &r->du->tree;

	for (uint32_t i = 0; i < t->n; i++) {
		if (!(t->nodes[i].flags & DU_DIR) || t->first[i] == t->first[i + 1])
			continue;
		if (du_map_put(&r->canon, t->nodes[i].dev, t->nodes[i].ino, i, NULL) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int replay(struct du *du)
{
	struct replay r = { .du = du, .total = VAL_ZERO };
	int ret = 0;

	/* du hashes every dev/ino when one file may be met twice */
	r.hash_all = du->nops > 1 || du->o.files0 || du->o.follow == FOLLOW_ALL;
	if (du->nerrs)
		qsort(du->errs, du->nerrs, sizeof(*du->errs), err_cmp);
	if (du->o.follow == FOLLOW_ALL)
		ret = build_canon(&r);
	for (size_t k = 0; k < du->nops && ret == 0; k++) {
		size_t i = du->ops[k].root;
		if (i == DU_NONE) {
			if (du->ops[k].dash)
				cli_msg("when reading file names from stdin, no file name of %s allowed",
					du_quote("-"));
			else if (du->ops[k].number)
				cli_msg("%s:%lu: invalid zero-length file name", du_quotef(du->o.files0),
					du->ops[k].number);
			else
				cli_msg("invalid zero-length file name");
			du->ok = false;
			continue;
		}
		if (du->root_node[i] != DU_NONE) {
			ret = replay_root(&r, du->root_node[i]);
			continue;
		}
		if (exclude_count(du->o.exclude) && exclude_match(du->o.exclude, du->roots[i], NULL, false))
			continue;
		struct err *e = find_err(du, du->roots[i], false);
		if (!e)
			e = find_err(du, du->roots[i], true);
		if (e) {
			e->used = true;
			print_err(e, du->roots[i], false);
			du->ok = false;
		}
	}
	/* failures the replay had no place for still count */
	for (size_t i = 0; i < du->nerrs && ret == 0; i++) {
		if (!du->errs[i].used) {
			print_err(&du->errs[i], du->errs[i].path, false);
			du->ok = false;
		}
	}
	if (ret == 0 && du->o.total)
		print_line(du, &r.total, "total");
	du_map_clear(&r.seen);
	du_map_clear(&r.canon);
	free(r.stack);
	free(r.path);
	return ret;
}

/* du_dino_fn: read the directory again for the d_ino values fts sorts on. */
static void dino(const struct du_tree *t, uint32_t dir, const uint32_t *kids, uint32_t n, uint64_t *keys,
		 void *ctx)
{
	struct du *du = ctx;
	struct dirent *de;
	uint32_t pos = 0, j = 0;
	DIR *d;

	if (du_tree_path(t, dir, &du->scratch, &du->scratch_cap) < 0)
		return;
	d = opendir(du->scratch);
	if (!d)
		return;
	while (j < n && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		while (j < n && t->nodes[kids[j]].index < pos)
			j++;
		if (j < n && t->nodes[kids[j]].index == pos && !strcmp(du_name(t, kids[j]), de->d_name))
			keys[j] = de->d_ino;
		pos++;
	}
	closedir(d);
}

/* fts_open trims two or more trailing slashes down to one. */
static char *fts_root(const char *arg)
{
	size_t len = strlen(arg);
	char *s;

	if (len > 2 && arg[len - 1] == '/')
		while (len > 1 && arg[len - 2] == '/')
			len--;
	s = strndup(arg, len);
	if (!s)
		cli_die(1, "memory exhausted");
	return s;
}

/*
 * --files0-from: the NUL-separated names in file (or stdin), as an argv.
 * Exits with du's messages when the file cannot be read.
 */
static char **read_files0(const char *file, size_t *ret_n, char **ret_buf)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "re") : stdin;
	char *buf = NULL, **v = NULL;
	size_t len = 0, cap = 0, n = 0, vcap = 0;
	size_t got;

	if (!f)
		cli_die(1, "cannot open %s for reading: %s", du_quote(file), strerror(errno));
	do {
		if (du_grow(&buf, &cap, len + 65536 + 1, 1) < 0)
			cli_die(1, "memory exhausted");
		got = fread(buf + len, 1, 65536, f);
		len += got;
	} while (got > 0);
	if (ferror(f))
		cli_die(1, "%s: read error: %s", du_quotef(file), strerror(errno));
	if (f != stdin)
		fclose(f);
	buf[len] = 0;
	for (size_t i = 0; i < len; i += strlen(buf + i) + 1) {
		if (du_grow(&v, &vcap, n + 1, sizeof(*v)) < 0)
			cli_die(1, "memory exhausted");
		v[n++] = buf + i;
	}
	*ret_n = n;
	*ret_buf = buf;
	return v;
}

int main(int argc, char **argv)
{
	static char dot[] = ".";
	struct du du = { .ok = true };
	char **args, **list = NULL, *listbuf = NULL;
	size_t nargs;
	int ret;

	cli_init(argv[0]);
	argv[0] = (char *)cli_prog(); /* getopt's messages name the program as du's do */
	cli_close_stdout_atexit();
	parse_args(argc, argv, &du.o);
	args = optind < argc ? argv + optind : (char *[]){ dot, NULL };
	nargs = optind < argc ? (size_t)(argc - optind) : 1;
	if (du.o.files0) {
		if (optind < argc) {
			cli_msg("extra operand %s", du_quote(argv[optind]));
			fprintf(stderr, "file operands cannot be combined with --files0-from\n");
			usage(1);
		}
		args = list = read_files0(du.o.files0, &nargs, &listbuf);
	}

	du.roots = calloc(nargs + 1, sizeof(*du.roots));
	du.root_node = malloc((nargs + 1) * sizeof(*du.root_node));
	du.root_dev = calloc(nargs + 1, sizeof(*du.root_dev));
	du.ops = calloc(nargs + 1, sizeof(*du.ops));
	if (!du.roots || !du.root_node || !du.root_dev || !du.ops)
		cli_die(1, "memory exhausted");
	for (size_t i = 0; i < nargs; i++) {
		struct operand *op = &du.ops[du.nops++];
		if (du.o.files0 && !strcmp(du.o.files0, "-") && !strcmp(args[i], "-")) {
			*op = (struct operand){ .root = DU_NONE, .dash = true };
			continue;
		}
		if (!args[i][0]) {
			*op = (struct operand){ .root = DU_NONE, .number = du.o.files0 ? i + 1 : 0 };
			continue;
		}
		op->root = (uint32_t)du.nroots;
		du.roots[du.nroots] = fts_root(args[i]);
		du.root_node[du.nroots++] = DU_NONE;
	}
	free(list);
	free(listbuf);

	struct sweep_walk_opts wo = {
		.size = sizeof(wo),
		.flags = du.o.follow == FOLLOW_ALL ? SWEEP_WALK_FOLLOW
			 : du.o.follow == FOLLOW_ARGS ? SWEEP_WALK_FOLLOW_ROOTS : 0,
		.order = du.o.order,
		.on_entry = on_entry,
		.on_error = on_error,
		.ctx = &du,
	};
	du.progress = progress_new(true);
	ret = du.nroots ? sweep_walk(du.roots, du.nroots, &wo) : 0;
	du.progress = progress_free(du.progress);
	if (du.fatal < 0)
		cli_die(1, "%s", strerror(-du.fatal));
	if (ret < 0)
		cli_error(ret, "walk failed");
	if (ret < 0)
		du.ok = false;
	if (du_tree_order(&du.tree, du.o.follow == FOLLOW_ALL, dino, &du) < 0 || replay(&du) < 0)
		cli_die(1, "memory exhausted");

	for (size_t i = 0; i < du.nerrs; i++)
		free(du.errs[i].path);
	for (size_t i = 0; i < du.nroots; i++)
		free((char *)du.roots[i]);
	free(du.errs);
	free(du.ops);
	free(du.times);
	free(du.roots);
	free(du.root_node);
	free(du.root_dev);
	free(du.scratch);
	du_tree_free(&du.tree);
	du_map_clear(&du.ids);
	exclude_free(du.o.exclude);
	return du.ok ? 0 : 1;
}
