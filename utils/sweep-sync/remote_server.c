/* SPDX-License-Identifier: MIT */
/*
 * "sweep-sync --server --sender|--receiver [-s] -- PATH...": the far side
 * of a remote transfer, started by the client through the remote shell.
 * Its standard input and output are the wire; what it prints goes to the
 * client in order, as W_OUT and W_ERR (stdout and stderr are streams that
 * write frames), and a stray write to descriptor 1 lands on stderr, never
 * in the protocol. The options come from the client (W_ARGS) and are
 * parsed here as the client parsed them; the files they name are the
 * client's copies (W_LISTFILE, listfile.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "remote.h"

#define TEXT_CHUNK (64u << 10)

struct out_cookie {
	struct wire *w;
	int type;
};

static ssize_t cookie_write(void *cookie, const char *buf, size_t size)
{
	struct out_cookie *oc = cookie;

	for (size_t done = 0; done < size;) {
		size_t n = size - done < TEXT_CHUNK ? size - done : TEXT_CHUNK;

		if (wire_send(oc->w, oc->type, buf + done, n) < 0)
			return done ? (ssize_t)done : -1;
		done += n;
	}
	return (ssize_t)size;
}

/* The options and paths the client sends before the run; 0, or the exit status. */
static int take_setup(struct sync_ctx *c, char ***args, int *nargs, char ***paths, int *npaths)
{
	for (;;) {
		struct wire_frame *f;

		if (remote_next(c, &f))
			return c->remote->exit_code ? c->remote->exit_code : EXIT_PROTOCOL;
		struct wcur cur = { .p = f->data, .len = f->len };
		int type = f->type, r = 0;

		if (type == W_ARGS || type == W_PATHS) {
			uint32_t n = wc_u32(&cur);
			char ***v = type == W_ARGS ? args : paths;
			int *nv = type == W_ARGS ? nargs : npaths;
			bool oom = false;

			if (*v || n > f->len / 4) {
				r = -EPROTO;
			} else if (!(*v = calloc((size_t)n + 1, sizeof(**v)))) {
				r = -ENOMEM;
			} else {
				for (uint32_t i = 0; i < n && !cur.bad && !oom; i++)
					if (((*v)[i] = wc_strdup(&cur, &oom)))
						*nv = (int)i + 1;
				r = oom ? -ENOMEM : !wc_done(&cur) ? -EPROTO : 0;
			}
		} else if (type == W_LISTFILE) {
			size_t nl;
			const char *name = wc_str(&cur, &nl);
			char *nm = name ? strndup(name, nl) : NULL;

			r = !name ? -EPROTO : !nm ? -ENOMEM : listfile_add(nm, f->data + cur.off, f->len - cur.off);
			free(nm);
		} else if (type != W_GO) {
			r = -EPROTO;
		}
		free(f);
		if (r == -ENOMEM) {
			cli_msg("out of memory");
			return EXIT_PARTIAL;
		}
		if (r < 0) {
			cli_msg("protocol error: a bad setup from the client");
			return remote_broken(c, -EPROTO);
		}
		if (type == W_GO)
			return *args ? 0 : (cli_msg("protocol error: no options from the client"), remote_broken(c, -EPROTO));
	}
}

static void free_strv(char **v, int n)
{
	for (int i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

int remote_server_main(int argc, char **argv)
{
	struct sync_ctx c = { 0 };
	struct remote r = { .server = true };
	struct timespec start;
	char **args = NULL, **wpaths = NULL, **argv2 = NULL;
	int nargs = 0, nwpaths = 0, code = 0, i = 3;
	FILE *real_out = stdout, *real_err = stderr, *cout = NULL, *cerr = NULL;
	struct out_cookie oc_out, oc_err;

	cli_init(argv[0]);
	bool sender = argc > 2 && !strcmp(argv[2], "--sender"), receiver = argc > 2 && !strcmp(argv[2], "--receiver");
	if (!sender && !receiver) {
		cli_msg("--server is how sweep-sync starts its other side over a remote shell, not a command");
		return EXIT_SYNTAX;
	}
	bool protect = i < argc && !strcmp(argv[i], "-s");
	if (protect)
		i++;
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	/* the wire is our stdin and stdout; descriptor 1 becomes stderr, 0 nothing */
	int pin = fcntl(0, F_DUPFD_CLOEXEC, 3), pout = fcntl(1, F_DUPFD_CLOEXEC, 3);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (pin < 0 || pout < 0 || null < 0 || dup2(null, 0) < 0 || dup2(2, 1) < 0) {
		cli_error(-errno, "setting up the server's descriptors");
		return EXIT_PROTOCOL;
	}
	close(null);
	clock_gettime(CLOCK_MONOTONIC, &start);
	sync_ctx_init(&c, &start);
	c.remote = &r;
	r.me = sender ? "sender" : "receiver";
	if (wire_new(pin, pout, &sync_stop_signal, &r.w) < 0) {
		cli_msg("out of memory");
		return EXIT_PARTIAL;
	}
	if (wire_hello(r.w, r.me) < 0) {
		r.w = wire_free(r.w);
		return EXIT_PROTOCOL;
	}
	/* from here what this side prints reaches the client in order, as frames */
	oc_out = (struct out_cookie){ .w = r.w, .type = W_OUT };
	oc_err = (struct out_cookie){ .w = r.w, .type = W_ERR };
	cookie_io_functions_t io = { .write = cookie_write };
	cout = fopencookie(&oc_out, "w", io);
	cerr = fopencookie(&oc_err, "w", io);
	if (!cout || !cerr || wire_start(r.w) < 0) {
		cli_msg("out of memory");
		code = EXIT_PARTIAL;
		goto out;
	}
	setvbuf(cout, NULL, _IOLBF, 0);
	setvbuf(cerr, NULL, _IOLBF, 0);
	stdout = cout;
	stderr = cerr;
	code = take_setup(&c, &args, &nargs, &wpaths, &nwpaths);
	if (code)
		goto out;
	listfile_server();
	char **paths = protect ? wpaths : argv + i;
	int npaths = protect ? nwpaths : argc - i;
	if (npaths < 1 || (receiver && npaths != 1)) {
		cli_msg("protocol error: %s paths from the client", npaths < 1 ? "no" : "too many");
		code = remote_broken(&c, -EPROTO);
		goto out;
	}
	/* the client's options as its command line had them, then the operands as the parse expects them */
	argv2 = calloc((size_t)nargs + (size_t)npaths + 4, sizeof(*argv2));
	if (!argv2) {
		cli_msg("out of memory");
		code = EXIT_PARTIAL;
		goto out;
	}
	int n2 = 0;
	argv2[n2++] = argv[0];
	for (int k = 0; k < nargs; k++)
		argv2[n2++] = args[k];
	argv2[n2++] = "--";
	if (receiver)
		argv2[n2++] = ".";
	for (int k = 0; k < npaths; k++)
		argv2[n2++] = paths[k];
	if (sender)
		argv2[n2++] = ".";
	int e = sync_parse_options(n2, argv2, &c.o);
	if (e < 0) {
		code = e == -EIO ? EXIT_FILEIO : EXIT_SYNTAX;
		goto out;
	}
	code = sync_refuse_remote(&c.o);
	if (code)
		goto out;
	int level = remote_compression(&c.o);
	if (level < 0) {
		code = EXIT_SYNTAX;
		goto out;
	}
	if (level > 0 && wire_compress(r.w, level - 1) < 0) {
		cli_msg("-z: zstd is not available here");
		code = EXIT_UNSUPPORTED;
		goto out;
	}
	if (sender)
		code = remote_sender(&c, argv2 + optind, n2 - optind - 1);
	else
		code = remote_receiver(&c, argv2[n2 - 1]);
out:
	fflush(stdout);
	fflush(stderr);
	/* the run's status, after everything it printed */
	if (!r.broken) {
		unsigned char st[4] = { (unsigned char)code, 0, 0, 0 };

		wire_send(r.w, W_EXIT, st, sizeof(st));
	}
	struct sync_dest none = { 0 };
	sync_done(&c, &none); /* what a run that never began holds (once: it is idempotent) */
	stdout = real_out;
	stderr = real_err;
	if (cout)
		fclose(cout);
	if (cerr)
		fclose(cerr);
	r.w = wire_free(r.w);
	remote_recv_free(&r);
	free_strv(args, nargs);
	free_strv(wpaths, nwpaths);
	free(argv2);
	listfile_free_all();
	return code;
}
