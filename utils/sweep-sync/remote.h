/* SPDX-License-Identifier: MIT */
/*
 * sweep-sync over a remote shell: what the client (remote_client.c), the
 * server (remote_server.c), the sender (remote_send.c) and the receiver
 * (remote_recv.c) share.
 *
 *   client                                server ("sweep-sync --server")
 *   -e's command [-l USER] HOST  SWEEP-SYNC --server --sender|--receiver [-s] -- PATH...
 *   hello                          <->    hello          (version, capabilities)
 *   W_ARGS, W_LISTFILE, W_PATHS, W_GO ->  parses the client's options as its own
 *
 * Then one side sends and the other receives, whichever the client is:
 *
 *   sender                                receiver
 *   W_ROOTS, W_FLIST..., W_IDS, W_FLIST_END ->  scans DEST meanwhile, merges, decides
 *                                   <-    W_CSUM_REQ..., W_CSUM_ROUND   (-c)
 *   W_DIGESTS..., W_CSUM_END        ->
 *                                   <-    W_REQ..., W_ROUND   (the files to send)
 *   W_FILE_BEGIN, W_DATA..., W_FILE_END (or W_FILE_FAIL) per file, in the
 *   sender's physical read order, then W_ROUND_END ->  written as they come
 *                                   <-    W_REMOVE... (--remove-source-files)
 *   W_REMOVED                       ->
 *                                   <-    W_DONE
 *   W_SENDER_DONE                   ->
 *   a receiving server then sends W_EXIT with the run's status.
 *
 * The receiver decides everything (itemized lines, deletions, hard links,
 * the exit status), as rsync's generator does; a server's output lines
 * travel to the client as W_OUT and W_ERR, in the order they were printed.
 */
#ifndef SWEEP_SYNC_REMOTE_H
#define SWEEP_SYNC_REMOTE_H

#include <sweep.h>

#include "sync.h"
#include "wire.h"
#include "wire_msg.h"

/* rsync's exit statuses for a transfer that lost its peer */
#define EXIT_PROTOCOL   12  /* error in the protocol data stream */
#define EXIT_RSH_NOTFOUND 127 /* the remote command was not found */
#define EXIT_RSH_FAILED 255 /* the remote shell failed (cannot connect...) */

/* A user or group name the sender gave for an id. */
struct idname {
	uint32_t id;
	bool group;
	char *name;
};

struct remote {
	struct wire *w;
	bool server;         /* this process is the server */
	const char *me;      /* "sender" or "receiver": this side, in messages */
	bool broken;         /* the connection failed (and it was said), or the peer ended the run */
	int exit_code;       /* then: the status to end with (the peer's W_EXIT, or the failure's) */
	bool exited;         /* the peer said the run is over (W_EXIT) */
	/* the receiver's */
	uint32_t nwire;      /* entries the sender listed */
	uint32_t *node_of;   /* an entry's node in the merged list, by its index on the wire */
	uint8_t *state;      /* an entry's transfer state, by its index (remote_recv.c) */
	struct xattr_set **xa; /* an entry's attributes, by its index (-A, -X) */
	struct idname *ids;
	size_t nids;
	struct wbuf req, csum; /* requests not sent yet */
	uint32_t *round;     /* the entries requested in this round */
	size_t nround, capround;
};

/* remote_client.c: said once, the connection is no more; the exit status to end with. */
int remote_broken(struct sync_ctx *c, int err);
/* The next frame; W_EXIT from the peer (it stopped) becomes the run's end with its status. 0 or the exit status. */
int remote_next(struct sync_ctx *c, struct wire_frame **ret);

/* remote_send.c: the sending side, from the operands (ops) to W_SENDER_DONE. The exit status. */
int remote_sender(struct sync_ctx *c, char **ops, int nsrc);
/* remote_recv.c: the receiving side into DEST (dest_arg): sync_run() on the sender's list. The exit status. */
int remote_receiver(struct sync_ctx *c, const char *dest_arg);
void remote_recv_free(struct remote *r);

/* remote_client.c: the wire's compression from -z and --compress-choice: 0 none, 1 + zstd's level, -1 refused (said). */
int remote_compression(const struct sync_opts *o);
/* remote_client.c: rsync's escaping of an argument for the remote shell (safe_arg): malloc'ed. */
char *remote_shell_arg(const char *arg, bool filename, bool escape_tilde);

#endif
