/* SPDX-License-Identifier: MIT */
/*
 * The client of a remote transfer: SRC... [USER@]HOST:DEST (this side
 * sends) or [USER@]HOST:SRC... DEST (this side receives), as rsync reads
 * them. It starts "sweep-sync --server" at HOST through the remote shell
 * (-e, else $RSYNC_RSH, else ssh), split into words as rsync splits it,
 * with "-l USER" when a user is named; the remote paths go through the
 * remote shell escaped as rsync 3.2.4 and later escape them (safe_arg():
 * the shell's special characters, not the wildcards, so HOST:'*.txt'
 * still expands there), or, with -s, on the wire. Then the options as
 * this command line gave them (and the files they name) go to the
 * server, which parses them as its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "progress.h"
#include "remote.h"

int remote_broken(struct sync_ctx *c, int err)
{
	struct remote *r = c->remote;

	if (r->broken)
		return r->exit_code;
	r->broken = true;
	c->peer_gone = true;
	if (err == -ECANCELED) {
		r->exit_code = EXIT_SIGNAL;
	} else {
		r->exit_code = EXIT_PROTOCOL;
		if (err == -EPIPE || err == -ECONNRESET) {
			uint64_t in, out;

			wire_counts(r->w, &in, &out);
			progress_clear(c->prog);
			cli_msg("connection unexpectedly closed (%" PRIu64 " bytes received so far) [%s]", in, r->me);
		} else if (err == -ENOMEM) {
			cli_msg("out of memory");
			r->exit_code = EXIT_PARTIAL;
		} else if (err != -EPROTO) {
			cli_error(err, "the connection failed [%s]", r->me);
		}
	}
	if (!c->fatal) {
		c->fatal = true;
		c->fatal_code = r->exit_code;
	}
	return r->exit_code;
}

void remote_wire_counts(const struct sync_ctx *c, uint64_t *sent, uint64_t *received)
{
	uint64_t in, out;

	wire_counts(c->remote->w, &in, &out);
	/* the server's counts are the client's the other way round */
	*sent = c->remote->server ? in : out;
	*received = c->remote->server ? out : in;
}

int remote_next(struct sync_ctx *c, struct wire_frame **ret)
{
	struct remote *r = c->remote;
	struct wire_frame *f;

	*ret = NULL;
	if (r->broken)
		return 1;
	int e = wire_recv(r->w, &f);
	if (e < 0) {
		remote_broken(c, e);
		return 1;
	}
	if (f->type == W_EXIT) {
		/* the other side ended the run (its messages came before): its status is the run's */
		struct wcur cur = { .p = f->data, .len = f->len };
		uint32_t code = wc_u32(&cur);

		free(f);
		if (!wc_done(&cur) || code > 255) {
			/* not a status a process can have: a broken or hostile peer, said as such */
			progress_clear(c->prog);
			cli_msg("protocol error: a bad exit status from the remote side");
			remote_broken(c, -EPROTO);
			return 1;
		}
		r->broken = r->exited = true;
		c->peer_gone = true;
		r->exit_code = (int)code;
		if (r->exit_code && !c->fatal) {
			c->fatal = true;
			c->fatal_code = r->exit_code;
		}
		return 1;
	}
	*ret = f;
	return 0;
}

char *remote_shell_arg(const char *arg, bool filename, bool escape_tilde)
{
	/* rsync's safe_arg(): the shell's characters get a backslash; in a file name not the wildcards */
	static const char shell_chars[] = "!#$&;|<>(){}\"'` \t\n\r\\";
	static const char wild_chars[] = "*?[]";
	size_t n = strlen(arg);
	char *r = malloc(2 * n + 4), *t = r;

	if (!r)
		return NULL;
	if (filename && arg[0] == '-') {
		*t++ = '.';
		*t++ = '/';
	}
	if (escape_tilde && arg[0] == '~')
		*t++ = '\\';
	for (const char *f = arg; *f; f++) {
		if (*f == '\\') {
			/* before a wildcard in a file name, a backslash stays the one escape it is */
			if (!filename || !(f[1] && strchr(wild_chars, f[1])))
				*t++ = '\\';
		} else if (strchr(shell_chars, *f) || (!filename && strchr(wild_chars, *f))) {
			*t++ = '\\';
		}
		*t++ = *f;
	}
	*t = 0;
	return r;
}

/* Split the remote shell command into words, as rsync's do_cmd() does: quotes group, a backslash escapes in "". */
static int split_words(const char *cmd, char ***ret, int *n)
{
	size_t len = strlen(cmd);
	char **v = calloc(len / 2 + 2, sizeof(*v));
	char *buf = malloc(len + 1), *t = buf;
	int k = 0;

	if (!v || !buf) {
		free(v);
		free(buf);
		return -ENOMEM;
	}
	for (const char *p = cmd; *p;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		v[k++] = t;
		char quote = 0;
		for (; *p && (quote || (*p != ' ' && *p != '\t')); p++) {
			if (quote && *p == quote) {
				quote = 0;
			} else if (!quote && (*p == '\'' || *p == '"')) {
				quote = *p;
			} else if (quote == '"' && *p == '\\' && p[1] == '"') {
				*t++ = *++p;
			} else {
				*t++ = *p;
			}
		}
		*t++ = 0;
	}
	if (!k) {
		free(v);
		free(buf);
		return -EINVAL;
	}
	/* the words point into buf, which v[0] starts */
	*ret = v;
	*n = k;
	return 0;
}

/* Start cmd (argv) with pipes on its stdin and stdout; *in reads its output, *out writes its input. */
static pid_t spawn(char **argv, int *in, int *out)
{
	int to[2], from[2];
	pid_t pid;

	if (pipe2(to, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(from, O_CLOEXEC) < 0) {
		int e = -errno;

		close(to[0]);
		close(to[1]);
		return e;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		/* the remote shell gets the terminal's signals as it would without us; SIGPIPE back to the default */
		signal(SIGPIPE, SIG_DFL);
		if (dup2(to[0], 0) < 0 || dup2(from[1], 1) < 0)
			_exit(EXIT_RSH_FAILED);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: failed to exec %s: %s\n", cli_prog(), argv[0], strerror(errno));
		_exit(errno == ENOENT ? EXIT_RSH_NOTFOUND : 126);
	}
	int e = pid < 0 ? -errno : 0;
	close(to[0]);
	close(from[1]);
	if (e < 0) {
		close(to[1]);
		close(from[0]);
		return e;
	}
	*in = from[0];
	*out = to[1];
	return pid;
}

struct remote_args {
	char *user, *host;
	char **paths;   /* the remote paths */
	char **esc;     /* the same, escaped for the remote shell */
	int npaths;
	bool pull;      /* this side receives */
};

static void args_free(struct remote_args *a)
{
	for (int i = 0; a->esc && i < a->npaths; i++)
		free(a->esc[i]);
	free(a->esc);
	free(a->user);
	free(a->host);
	free(a->paths);
}

/*
 * Which side is remote, the host and the remote paths, with rsync's
 * checks and messages. 0, or the exit status after the message.
 */
static int read_operands(char **ops, int nsrc, struct remote_args *a)
{
	struct hostspec h;

	a->pull = hostspec_parse(ops[0], &h);
	if (!a->pull)
		hostspec_parse(ops[nsrc], &h);
	a->host = strndup(h.host, h.host_len);
	a->user = h.user ? strndup(h.user, h.user_len) : NULL;
	a->paths = calloc((size_t)nsrc + 1, sizeof(*a->paths));
	a->esc = calloc((size_t)nsrc + 1, sizeof(*a->esc));
	if (!a->host || (h.user && !a->user) || !a->paths || !a->esc) {
		cli_msg("out of memory");
		return EXIT_PARTIAL;
	}
	if (a->host[0] == '-') {
		cli_msg("Invalid remote host: hostnames may not start with '-'.");
		return EXIT_SYNTAX;
	}
	if (!*a->host) {
		cli_msg("%s: a remote operand needs a host", a->pull ? ops[0] : ops[nsrc]);
		return EXIT_SYNTAX;
	}
	if (!a->pull) {
		a->paths[a->npaths++] = (char *)(*h.path ? h.path : ".");
		return 0;
	}
	a->paths[a->npaths++] = (char *)(*h.path ? h.path : ".");
	/* more sources: on the same host, or ":PATH" for it */
	for (int i = 1; i < nsrc; i++) {
		struct hostspec x;

		if (!hostspec_parse(ops[i], &x)) {
			cli_msg("Unexpected local arg: %s", ops[i]);
			cli_msg("If arg is a remote file/dir, prefix it with a colon (:).");
			return EXIT_SYNTAX;
		}
		if (x.daemon) {
			cli_msg("All source args must use the same hostspec format.");
			return EXIT_SYNTAX;
		}
		if (x.host_len && (x.host_len != h.host_len || strncmp(x.host, h.host, h.host_len))) {
			cli_msg("All source args must come from the same machine.");
			return EXIT_SYNTAX;
		}
		a->paths[a->npaths++] = (char *)(*x.path ? x.path : ".");
	}
	return 0;
}

/* The remote shell's command line: the shell's words, [-l USER], HOST, then the server's command. */
static char **rsh_argv(const struct sync_ctx *c, struct remote_args *a, char **words, int nwords)
{
	size_t n = (size_t)nwords + 2 + 1 + 6 + (size_t)a->npaths + 1;
	char **v = calloc(n, sizeof(*v));
	size_t k = 0;

	if (!v)
		return NULL;
	for (int i = 0; i < nwords; i++)
		v[k++] = words[i];
	if (a->user) {
		v[k++] = "-l";
		v[k++] = a->user;
	}
	v[k++] = a->host;
	/* the remote command: --rsync-path as given (the remote shell reads it: "sudo sweep-sync" works) */
	v[k++] = (char *)(c->o.rsync_path ? c->o.rsync_path : "sweep-sync");
	v[k++] = "--server";
	v[k++] = a->pull ? "--sender" : "--receiver";
	if (c->o.protect_args)
		v[k++] = "-s";
	v[k++] = "--";
	for (int i = 0; i < a->npaths && !c->o.protect_args; i++) {
		/* rsync escapes a leading '~' of a name a receiving client asks for (it names no home then) */
		bool tilde = a->pull && ((c->o.relative && !strstr(a->paths[i], "/./")) || !strchr(a->paths[i], '/'));

		a->esc[i] = c->o.old_args ? strdup(a->paths[i]) : remote_shell_arg(a->paths[i], true, tilde);
		if (!a->esc[i]) {
			free(v);
			return NULL;
		}
		v[k++] = a->esc[i];
	}
	return v;
}

/* The setup the server needs before the run: the options, the files they name, -s's paths, then W_GO. */
static int send_setup(struct sync_ctx *c, struct wire *w, int argc, char **argv, int optind_, const struct remote_args *a)
{
	struct wbuf b = { 0 };
	int r;

	(void)argc;
	/* the options, in order, as getopt left them before the operands */
	wb_u32(&b, (uint32_t)(optind_ - 1));
	for (int i = 1; i < optind_; i++)
		wb_str(&b, argv[i], strlen(argv[i]));
	r = b.len > WIRE_MAX_PAYLOAD ? -E2BIG : wire_send_buf(w, W_ARGS, &b);
	for (size_t i = 0; i < listfile_count() && r >= 0; i++) {
		const char *name, *data;
		size_t len;

		listfile_get(i, &name, &data, &len);
		wb_reset(&b);
		wb_str(&b, name, strlen(name));
		wb_bytes(&b, data, len);
		r = b.len > WIRE_MAX_PAYLOAD ? -E2BIG : wire_send_buf(w, W_LISTFILE, &b);
	}
	if (r >= 0 && c->o.protect_args) {
		wb_reset(&b);
		wb_u32(&b, (uint32_t)a->npaths);
		for (int i = 0; i < a->npaths; i++)
			wb_str(&b, a->paths[i], strlen(a->paths[i]));
		r = b.len > WIRE_MAX_PAYLOAD ? -E2BIG : wire_send_buf(w, W_PATHS, &b);
	}
	if (r >= 0)
		r = wire_send(w, W_GO, NULL, 0);
	wb_free(&b);
	if (r == -E2BIG)
		cli_msg("the options (or a file they name) are too large to send: %u bytes at most", WIRE_MAX_PAYLOAD);
	return r;
}

/* The wire's compression, from -z and --compress-choice: 0 none, else 1 + zstd's level; -1 refused (said). */
int remote_compression(const struct sync_opts *o)
{
	const char *ch = o->compress_choice;

	if (ch && (!strcmp(ch, "none") || !strcmp(ch, "0")))
		return 0;
	if (ch && strcmp(ch, "zstd") && strcmp(ch, "auto")) {
		cli_msg("This sweep-sync compresses with zstd only: --compress-choice=%s is not supported", ch);
		return -1;
	}
	if (!o->compress && !ch)
		return 0;
	if (o->compress_level_set && o->compress_level == 0)
		return 0; /* rsync: level 0 sends uncompressed */
	return 1 + (o->compress_level_set ? o->compress_level : 3);
}

/* What the client ends with when the connection failed: the remote shell's own status says more. */
static int shell_status(int code, int status, bool broken)
{
	if (!broken || !WIFEXITED(status))
		return code;
	switch (WEXITSTATUS(status)) {
	case 255:
		return EXIT_RSH_FAILED;
	case 127:
		return EXIT_RSH_NOTFOUND;
	case 126:
		return 126;
	default:
		return code;
	}
}

int remote_client(struct sync_ctx *c, int argc, char **argv, int nsrc)
{
	struct remote r = { 0 };
	struct remote_args a = { 0 };
	char **ops = argv + optind, **words = NULL, **rargv = NULL;
	int nwords = 0, code, in = -1, out = -1, status = 0, level;
	bool spawn_failed = false;
	pid_t pid = -1;

	c->remote = &r;
	code = read_operands(ops, nsrc, &a);
	if (code)
		goto out;
	level = remote_compression(&c->o);
	if (level < 0) {
		code = EXIT_SYNTAX;
		goto out;
	}
#if !HAVE_ZSTD
	if (level > 0) {
		cli_msg("-z: this sweep-sync was built without zstd");
		code = EXIT_UNSUPPORTED;
		goto out;
	}
#endif
	/* a receiving client's --files-from list is the sender's to read: sent with the options */
	if (a.pull && c->o.files_from) {
		bool untrusted;
		int e;
		FILE *f = listfile_open(c->o.files_from, &e, &untrusted);

		if (!f) {
			if (untrusted)
				opath_refusal_msg();
			cli_error(e, "failed to open files-from file %s", c->o.files_from);
			code = EXIT_SYNTAX;
			goto out;
		}
		fclose(f);
	}
	const char *rsh = c->o.rsh ? c->o.rsh : getenv("RSYNC_RSH");
	if (split_words(rsh && *rsh ? rsh : "ssh", &words, &nwords) < 0 || !(rargv = rsh_argv(c, &a, words, nwords))) {
		cli_msg(words || !rsh ? "out of memory" : "the remote shell command is empty");
		code = words || !rsh ? EXIT_PARTIAL : EXIT_SYNTAX;
		goto out;
	}
	pid = spawn(rargv, &in, &out);
	if (pid < 0) {
		cli_error((int)pid, "failed to start the remote shell %s", rargv[0]);
		code = EXIT_RSH_FAILED;
		spawn_failed = true;
		pid = -1;
		goto out;
	}
	r.me = a.pull ? "receiver" : "sender";
	if (wire_new(in, out, &sync_stop_signal, &r.w) < 0) {
		close(in);
		close(out);
		cli_msg("out of memory");
		code = EXIT_PARTIAL;
		goto out;
	}
	int e = wire_hello(r.w, r.me);
	if (e == 0 && level > 0 && !(wire_peer_caps(r.w) & WIRE_CAP_ZSTD)) {
		cli_msg("-z: the remote sweep-sync was built without zstd");
		code = EXIT_UNSUPPORTED;
		goto out;
	}
	if (e == 0)
		e = wire_start(r.w);
	if (e == 0)
		e = send_setup(c, r.w, argc, argv, optind, &a);
	if (e == 0 && level > 0)
		e = wire_compress(r.w, level - 1);
	if (e < 0) {
		r.broken = true;
		code = r.exit_code = e == -E2BIG ? EXIT_SYNTAX : e == -ENOMEM ? EXIT_PARTIAL : EXIT_PROTOCOL;
		goto out;
	}
	if (a.pull)
		code = remote_receiver(c, argv[argc - 1]);
	else
		code = remote_sender(c, ops, nsrc);
out:
	/* closing our ends tells the server (through the remote shell) that the run is over */
	r.w = wire_free(r.w);
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	/* a broken connection (not the end the other side said): the remote shell's status tells more */
	bool lost = r.broken && !r.exited && r.exit_code == EXIT_PROTOCOL;
	if (pid > 0)
		code = shell_status(code, status, lost);
	if (lost || spawn_failed) {
		const char *what = code == EXIT_PROTOCOL ? "error in protocol data stream"
				 : code == EXIT_RSH_NOTFOUND ? "remote command not found"
							     : "the remote shell failed";
		cli_msg("%s (code %d)", what, code);
	}
	remote_recv_free(&r);
	free(rargv);
	if (words)
		free(words[0]);
	free(words);
	args_free(&a);
	listfile_free_all();
	c->remote = NULL;
	return code;
}
