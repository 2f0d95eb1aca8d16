/* SPDX-License-Identifier: MIT */
/*
 * sweep-tar: create a pax archive of file trees, reading the files in one
 * physical sweep. The work is in utils/sweep-tar/ (tar.h explains the
 * shape, opts.c the command line); this file runs it.
 */
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sweep-tar/tar.h"

/*
 * Names are bytes, and libarchive stores them in pax headers as UTF-8
 * converted from the locale. In the C locale any byte above 0x7f fails
 * that conversion (and would be flagged as binary), while GNU tar stores
 * such names byte for byte; reading them as UTF-8 does the same for every
 * name that is valid UTF-8, and libarchive falls back to the raw bytes
 * for the rest.
 */
static int user_utf8; /* the user's locale is UTF-8 (1) or not (-1): for --progress's ">=" */

static void set_locale(void)
{
	setlocale(LC_ALL, "");
	/* -v and messages escape names as GNU tar does in the user's locale. */
	tar_names_locale(MB_CUR_MAX > 1);
	user_utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0 ? 1 : -1;
	if (user_utf8 < 0)
		setlocale(LC_CTYPE, "C.UTF-8");
}

/* --index-file=FILE: -v's listing goes there. 0, or -1 after GNU tar's message. */
static int open_index(struct tar *t)
{
	FILE *f;

	if (!t->o->index_file)
		return 0;
	if (!(f = fopen(t->o->index_file, "we"))) {
		cli_msg("%s: Cannot open: %s", tar_printable(t->o->index_file), strerror(errno));
		cli_msg("Error is not recoverable: exiting now");
		return -1;
	}
	t->listing = f;
	return 0;
}

/* -W: the archive just written, read back and compared with the files (GNU tar's verify_volume). */
static void verify(struct tar *t)
{
	if (t->prefixes) {
		cli_msg("Archive contains file names with leading prefixes removed.");
		cli_msg("Verification may fail to locate original files.");
	}
	if (tar_read_archive(t, TAR_DIFF, true) < 0)
		t->status = TAR_FATAL;
}

static int setup(struct tar *t, const struct tar_opts *o)
{
	struct sweep_batch_opts bo = {
		.size = sizeof(bo),
		/* --sort=name: the walk gives the order; a batch is read as added (walk.c). */
		.order = o->walk_order_members ? SWEEP_ORDER_NONE : o->order,
		.max_files = SIZE_MAX, /* a batch is bounded by its memory (--memory-limit) alone */
		.max_bytes = (size_t)o->memory_limit,
		/* A batch already in the page cache is not located (warm trees: 3 system calls a file fewer). */
		.plan_flags = SWEEP_PLAN_CACHE_CHECK | (o->plan_trace ? SWEEP_PLAN_EXTENTS : 0),
		/*
		 * Every disk the tree is on at once, members written as each
		 * disk delivers them; not where the member order was asked for
		 * (--sort=name|inode: the same archive every time).
		 */
		.read_flags = SWEEP_READ_SPARSE | SWEEP_READ_NOATIME |
			      (o->order == SWEEP_ORDER_AUTO || o->order == SWEEP_ORDER_PHYSICAL ? SWEEP_READ_BY_DEVICE : 0),
		.ops = &tar_read_ops,
		.on_batch = tar_on_batch,
		.on_batch_end = tar_on_batch_end,
		.ctx = t,
		.on_sort = tar_on_sort,
	};
	int r;

	t->o = o;
	t->out_fd = -1;
	t->trace_fd = -1;
	t->listing = stdout;
	t->proc_fd = access("/proc/self/fd", X_OK) == 0;
	if (o->verify && (!o->archive || strcmp(o->archive, "-") == 0)) {
		cli_msg("Cannot verify stdin/stdout archive");
		cli_msg("Error is not recoverable: exiting now");
		return -1;
	}
	if (tar_out_open(t) < 0)
		return -1;
	if (t->out_fd == STDOUT_FILENO)
		t->listing = stderr; /* GNU tar does the same */
	if (open_index(t) < 0)
		return -1;
	t->disk = archive_read_disk_new();
	t->entry = archive_entry_new();
	t->links = links_new();
	if (!t->disk || !t->entry || !t->links) {
		cli_msg("out of memory");
		return -1;
	}
	archive_read_disk_set_standard_lookup(t->disk);
	archive_read_disk_set_symlink_physical(t->disk);
	t->dirs = dir_spool_new(t);
	if (!t->dirs)
		return -1;
	r = sweep_batch_new(&bo, &t->batch);
	if (r < 0) {
		cli_error(r, "cannot set up the reader");
		return -1;
	}
	if (o->plan_trace) {
		t->trace_fd = open(o->plan_trace, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (t->trace_fd < 0) {
			cli_msg("%s: Cannot open: %s", tar_printable(o->plan_trace), strerror(errno));
			return -1;
		}
	}
	struct progress_opts po = o->progress;
	po.utf8 = user_utf8;
	t->progress = progress_new(&po);
	return 0;
}

static void teardown(struct tar *t)
{
	t->progress = progress_free(t->progress);
	if (t->out)
		archive_write_free(t->out); /* closes it first where tar_out_close() did not */
	tar_sink_finish(&t->sink);
	if (t->out_fd > STDOUT_FILENO)
		close(t->out_fd);
	if (t->trace_fd >= 0 && close(t->trace_fd) != 0)
		cli_error(-errno, "%s", tar_printable(t->o->plan_trace));
	if (t->disk)
		archive_read_free(t->disk);
	archive_entry_free(t->entry);
	links_free(t->links);
	free(t->tagged);
	tar_names_free(t);
	dir_spool_free(t->dirs);
	sweep_batch_free(t->batch);
}

int main(int argc, char **argv)
{
	struct tar_opts o = { 0 };
	struct tar t = { 0 };

	cli_init(argv[0]);
	set_locale();
	/* A closed pipe is an error to report, not a silent death. */
	signal(SIGPIPE, SIG_IGN);
	tar_parse(argc, argv, &o);
	/*
	 * Except where what goes into the pipe is a listing or file data
	 * (-t, -x -O) and the reader has seen enough: "sweep-tar -tf a.tar |
	 * head -1" ends quietly, as GNU tar does (its suite: sigpipe.at).
	 */
	if (o.mode == TAR_LIST || (o.mode == TAR_EXTRACT && o.to_stdout))
		signal(SIGPIPE, SIG_DFL);
	cli_close_stdout_atexit();

	if (o.mode == TAR_DELETE || o.mode == TAR_CONCAT) {
		t.o = &o;
		t.out_fd = -1;
		t.trace_fd = -1;
		if ((o.mode == TAR_DELETE ? tar_delete(&t) : tar_concat(&t)) < 0)
			t.status = TAR_FATAL;
		else if (t.status == TAR_FATAL)
			cli_msg("Exiting with failure status due to previous errors");
	} else if (!TAR_WRITES_TREE(o.mode)) {
		t.o = &o;
		t.listing = o.to_stdout ? stderr : stdout; /* -O: the data has stdout, as in GNU tar */
		t.out_fd = -1;
		t.trace_fd = -1;
		if (open_index(&t) < 0 || tar_read_archive(&t, o.mode, false) < 0) {
			t.status = TAR_FATAL;
		} else {
			if (o.names_failed)
				t.status = TAR_FATAL;
			if (t.status == TAR_FATAL)
				cli_msg("Exiting with failure status due to previous errors");
		}
	} else if (setup(&t, &o) < 0) {
		t.status = TAR_FATAL;
	} else {
		if (o.totals)
			for (size_t i = 0; i < o.nroots; i++)
				cli_device_report((const char *const *)&o.roots[i].path, 1);
		if (tar_walk(&t) == 0 && dir_spool_flush(&t) == 0) {
			/* GNU tar says it when the names run out: after the members' messages. */
			tar_unconsumed_report(&o);
			if (o.check_links)
				tar_links_missing(&t);
			if (tar_out_close(&t) == 0) {
				if (o.verify)
					verify(&t);
				tar_remove_files(&t);
			}
		}
		t.progress = progress_finish(t.progress, !t.failed);
		if (o.totals && t.out)
			tar_out_totals(&t);
		if (o.names_failed)
			t.status = TAR_FATAL;
	}
	if (t.status == TAR_FATAL && !t.failed && t.out)
		cli_msg("Exiting with failure status due to previous errors");
	teardown(&t);
	if (o.index_file && t.listing && t.listing != stdout && t.listing != stderr && fclose(t.listing) != 0)
		cli_error(-errno, "%s", tar_printable(o.index_file));
	tar_update_free(&t);
	tar_removals_free(&t);
	tar_checkpoint_finish();
	tar_transform_free();
	tar_mode_free();
	tar_pax_free();
	tar_pax_rw_free(t.sink.rw);
	tar_owner_maps_free();
	for (size_t i = 0; i < o.nroots; i++) {
		free(o.roots[i].path);
		free(o.roots[i].dir);
	}
	free(o.roots);
	free(o.tags);
	free((void *)o.xattr_include);
	free((void *)o.xattr_exclude);
	free(o.owner_name);
	free(o.group_name);
	free((char *)o.extract_dir);
	exclude_free(o.exclude);
	return t.status;
}
