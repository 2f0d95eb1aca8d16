/* SPDX-License-Identifier: MIT */
/* sweep-du: the command line, with GNU du's options, defaults and messages. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "exclude.h"
#include "du.h"

enum { OPT_APPARENT = 256, OPT_SI, OPT_EXCLUDE, OPT_INODES, OPT_ORDER, OPT_TIME, OPT_TIME_STYLE, OPT_FILES0,
       OPT_DEVICE, OPT_VERBOSE, OPT_PROGRESS, OPT_EXPORT, OPT_HELP, OPT_VERSION };

void du_usage(int status)
{
	if (status != 0) {
		cli_try_help();
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
	       "      --device=CLASS    hdd, ssd or auto (default: probe the device)\n"
	       "  -o, --export=FILE     also write the tree in ncdu's export format to FILE,\n"
	       "                        for `ncdu -f FILE` ('-': to standard output, instead\n"
	       "                        of du's lines); one directory operand\n"
	       "      --verbose         say on stderr which device class each filesystem got,\n"
	       "                        and why\n"
	       "      --progress[=SECONDS]  show the walk's progress on stderr and a summary at\n"
	       "                        the end: a line redrawn on a terminal, else (or with\n"
	       "                        SECONDS) a line every SECONDS (default 10); without it,\n"
	       "                        a line on a terminal only, erased at the end\n"
	       "      --help            display this help and exit\n"
	       "      --version         output version information and exit\n",
	       cli_prog());
	exit(0);
}

static void bad_arg(const char *what, const char *arg)
{
	cli_msg("invalid %s %s", what, cli_quote_locale(arg));
	du_usage(1);
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
	cli_msg("%s argument %s for %s", ambiguous ? "ambiguous" : "invalid", cli_quote_locale(arg), cli_quote_locale(context));
	fputs("Valid arguments are:", stderr);
	for (int i = 0; words[i]; i++) {
		if (i == 0 || vals[i] != vals[i - 1])
			fprintf(stderr, "\n  - %s", cli_quote_locale(words[i]));
		else
			fprintf(stderr, ", %s", cli_quote_locale(words[i]));
	}
	putc('\n', stderr);
	du_usage(1);
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

/* xstrtol_fatal's messages (the argument in plain quotes, unescaped), then exit 1. */
static void size_arg_fatal(int err, const char *opt, const char *arg)
{
	if (err == -ERANGE)
		cli_die(1, "%s argument '%s' too large", opt, arg);
	if (err == -EILSEQ)
		cli_die(1, "invalid suffix in %s argument '%s'", opt, arg);
	cli_die(1, "invalid %s argument '%s'", opt, arg);
}

void du_parse_args(int argc, char **argv, struct opts *o)
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
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "verbose", no_argument, NULL, OPT_VERBOSE },
		{ "progress", optional_argument, NULL, OPT_PROGRESS },
		{ "export", required_argument, NULL, OPT_EXPORT },
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

	while ((c = getopt_long(argc, argv, "0abd:chHklmo:st:xB:DLPSX:", longopts, &li)) != -1) {
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
				cli_msg("invalid maximum depth %s", cli_quote_locale(optarg));
				bad = true;
			}
			o->depth_given = true;
			break;
		}
		case 'l': o->count_links = true; break;
		case 's': o->summarize = true; break;
		case 't': {
			/*
			 * du's xstrtoimax: a size with an optional unit; 0 (any
			 * spelling: 00, 0K) means no threshold, and -0 is refused.
			 */
			struct du_units t;
			const char *a = optarg + (*optarg == '-');
			char *end, *one = NULL;
			bool zero = *a >= '0' && *a <= '9' && strtoull(a, &end, 10) == 0;
			if (zero && asprintf(&one, "1%s", end) < 0)
				cli_die(1, "out of memory");
			r = !*a ? -EINVAL : du_units_parse(zero ? one : a, &t);
			free(one);
			if (r == 0 && (t.opts & DU_AUTOSCALE))
				r = -EINVAL;
			if (r == 0 && t.block > INT64_MAX)
				r = -ERANGE;
			if (r < 0)
				size_arg_fatal(r, li >= 0 ? "--threshold" : "-t", optarg);
			if (zero && *optarg == '-')
				cli_die(1, "invalid --threshold argument '-0'");
			if (zero)
				t.block = 0;
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
		case OPT_DEVICE:
			if (cli_device_option(optarg) < 0)
				du_usage(1);
			break;
		case OPT_VERBOSE: o->verbose = true; break;
		case 'o':
		case OPT_EXPORT: o->export_file = optarg; break;
		case OPT_PROGRESS:
			if (progress_parse(optarg, &o->progress) < 0)
				du_usage(1);
			o->progress.tty_only = false;
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
		case OPT_HELP: du_usage(0); break;
		case OPT_VERSION:
			cli_version(cli_prog());
			exit(0);
		default: bad = true;
		}
		/* Options that only shape du's lines, which --export=- replaces. */
		static const char shapers[] = "0abcdhklmstBS";
		if ((c > 0 && c < 256 && strchr(shapers, c)) || c == OPT_APPARENT || c == OPT_SI || c == OPT_INODES ||
		    c == OPT_TIME || c == OPT_TIME_STYLE)
			o->shaping = li >= 0 ? longopts[li].name : NULL, o->shaping_short = (char)(li >= 0 ? 0 : c);
		li = -1;
	}
	if (bad)
		du_usage(1);
	if (o->export_file && !strcmp(o->export_file, "-") && (o->shaping || o->shaping_short)) {
		if (o->shaping)
			cli_msg("--%s shapes du's lines, which --export=- replaces", o->shaping);
		else
			cli_msg("-%c shapes du's lines, which --export=- replaces", o->shaping_short);
		du_usage(1);
	}
	if (o->all && o->summarize) {
		cli_msg("cannot both summarize and show all entries");
		du_usage(1);
	}
	if (o->summarize && o->depth_given && o->max_depth == 0)
		cli_msg("warning: summarizing is the same as using --max-depth=0");
	if (o->summarize && o->depth_given && o->max_depth != 0) {
		cli_msg("warning: summarizing conflicts with --max-depth=%" PRIu64, o->max_depth);
		du_usage(1);
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
