/* SPDX-License-Identifier: MIT */
/*
 * sweep-sync's wire protocol, between the client and `sweep-sync --server`
 * over a remote shell (doc in sweep-sync(1), REMOTE TRANSFERS).
 *
 * Each side first writes a hello: the 8 bytes "SWPSYNC\n", the protocol
 * version and its capabilities, all in the clear, so that a peer of
 * another version (or a remote shell that prints a banner) is named
 * before anything else is read. Then frames, both ways: a type byte
 * (0x80 set: the payload is one zstd frame) and a 32-bit little-endian
 * length, then the payload, at most WIRE_MAX_PAYLOAD bytes once
 * decompressed. Every number in a payload is little-endian; strings are
 * a 32-bit length and their bytes.
 *
 * Nothing read from the wire is trusted: every decoder checks each length
 * against what is left of its frame, and the receiver checks every name
 * (remote_recv.c) before it is used.
 */
#ifndef SWEEP_SYNC_WIRE_H
#define SWEEP_SYNC_WIRE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WIRE_MAGIC "SWPSYNC\n"
#define WIRE_VERSION 1u
#define WIRE_HELLO_LEN 16
/* hello capabilities */
#define WIRE_CAP_ZSTD 0x1u

/* A frame's header: the type byte and the payload's length. */
#define WIRE_HDR_LEN 5
/* One frame's payload at most (decompressed); data goes in pieces of WIRE_DATA_CHUNK. */
#define WIRE_MAX_PAYLOAD (1u << 20)
#define WIRE_DATA_CHUNK (256u << 10)

enum wire_type {
	/* either way */
	W_OUT = 1,   /* text for the client's stdout */
	W_ERR,       /* text for the client's stderr */
	W_EXIT,      /* i32: the run's exit status; the server is done */
	/* client -> server, before the run */
	W_ARGS,      /* strings: the client's options, as its command line gave them */
	W_PATHS,     /* strings: the server's operands (-s: kept away from the remote shell) */
	W_LISTFILE,  /* str name, bytes: a file an option names (--exclude-from...), read on the client */
	W_GO,        /* the setup is complete */
	/* sender -> receiver */
	W_ROOTS,     /* the operands: u32 nsrc, u32 flags, u32 missing, u32 n, n x (str src, str rel0, u32 flags) */
	W_FLIST,     /* entries (wire_entry), each in the order of its index */
	W_IDS,       /* (u8 kind, u32 id, str name) x n: the names of the owners and groups listed */
	W_FLIST_END, /* u64 total_size, u64 errors, u64 vanished, u32 io_error */
	W_FILE_BEGIN,/* u32 idx, wire_stat: a requested file, as it was opened */
	W_DATA,      /* u64 off, bytes: of the file begun */
	W_FILE_END,  /* i32 status, u64 length */
	W_FILE_FAIL, /* u32 idx, i32 -errno: a requested file that could not be opened */
	W_ROUND_END, /* every file of the round was sent */
	W_DIGESTS,   /* (u32 idx, i32 err, 16 bytes) x n */
	W_CSUM_END,
	W_REMOVED,   /* u64 errors: --remove-source-files done */
	W_SENDER_DONE,
	/* receiver -> sender */
	W_REQ,       /* u32 idx x n: send these files */
	W_ROUND,     /* the requests of a round are complete */
	W_CSUM_REQ,  /* u32 idx x n: digest these files */
	W_CSUM_ROUND,
	W_REMOVE,    /* u32 idx x n: synced: remove them from the source */
	W_DONE,      /* the receiver needs nothing more */
	W_TYPE_MAX,
};
#define W_COMPRESSED 0x80u

/* W_ROOTS flags */
#define WR_RELATIVE   0x1u /* -R */
#define WR_FILES_FROM 0x2u /* --files-from */
/* root flags */
#define WRR_FOLLOW  0x1u /* a symlink here is followed (SRC/, -R's implied directories) */
#define WRR_IMPLIED 0x2u /* -R: a directory on the way, sent without its contents */
#define WRR_LONE    0x4u /* a non-directory operand: it may take DEST's own name */

/* W_FLIST entry kinds */
#define WE_ENTRY 1
#define WE_SKIP  2 /* a name the sender's options leave out, to be named in its place ("skipping ...") */

/* ---- payloads: building and reading ---- */

struct wbuf {
	unsigned char *p;
	size_t len, cap;
	bool fail; /* out of memory: the frame is not sent */
};
void wb_reset(struct wbuf *b);
void wb_free(struct wbuf *b);
void wb_bytes(struct wbuf *b, const void *p, size_t n);
void wb_u8(struct wbuf *b, uint8_t v);
void wb_u32(struct wbuf *b, uint32_t v);
void wb_u64(struct wbuf *b, uint64_t v);
void wb_str(struct wbuf *b, const char *s, size_t n);

struct wcur {
	const unsigned char *p;
	size_t len, off;
	bool bad; /* read past the end, or a string with a NUL in it */
};
uint8_t wc_u8(struct wcur *c);
uint32_t wc_u32(struct wcur *c);
uint64_t wc_u64(struct wcur *c);
/* A string: *s points into the payload (not terminated), NULL and bad when it does not fit or holds a NUL. */
const char *wc_str(struct wcur *c, size_t *n);
/* The same, copied and terminated (NULL when bad or out of memory: see *oom). */
char *wc_strdup(struct wcur *c, bool *oom);
const void *wc_bytes(struct wcur *c, size_t n);
static inline bool wc_done(const struct wcur *c)
{
	return !c->bad && c->off == c->len;
}

/* A file's stat as it travels: what the receiver needs to make and compare the copy. */
struct wire_stat {
	uint32_t mode, uid, gid, nlink;
	uint64_t size, blocks, rdev, dev, ino;
	int64_t mtime_sec, atime_sec, ctime_sec;
	uint32_t mtime_nsec, atime_nsec, ctime_nsec;
};
void wb_stat(struct wbuf *b, const struct wire_stat *st);
void wc_stat(struct wcur *c, struct wire_stat *st);

/* ---- frames ---- */

struct wire_frame {
	struct wire_frame *next;
	uint8_t type;
	uint32_t len;
	unsigned char data[];
};

struct wire;

/*
 * Split the stream buf[0..len) at its first frame: 1 with *ret (and
 * *used, the bytes it took), 0 when more bytes are needed, -EPROTO for a
 * bad header, a payload over the limit or one that does not decompress
 * (*why says which). dctx: a ZSTD_DCtx, or NULL when compressed frames are
 * refused.
 */
int wire_take_frame(void *dctx, const unsigned char *buf, size_t len, size_t *used, struct wire_frame **ret,
		    const char **why);
/* Check the peer's hello (hello[WIRE_HELLO_LEN]): 0 with *caps, else -EPROTO with *why. */
int wire_check_hello(const unsigned char *hello, size_t len, uint32_t *caps, char *why, size_t whylen);

/*
 * The connection: in and out (taken over: closed at wire_free). The
 * reader thread takes every frame as it arrives: text (W_OUT, W_ERR) is
 * printed at once, the rest queued for wire_recv(); data frames are
 * bounded, the others not, so neither side ever waits on a peer that is
 * itself waiting to write (see wire.c).
 */
int wire_new(int in, int out, volatile sig_atomic_t *cancel, struct wire **ret);
struct wire *wire_free(struct wire *w);
/* Write our hello, read the peer's: 0, or -errno/-EPROTO after the message. */
int wire_hello(struct wire *w, const char *peer);
/* The peer's capabilities (after wire_hello). */
uint32_t wire_peer_caps(const struct wire *w);
/* Compress what this side sends from now on (zstd level); 0 or -errno. */
int wire_compress(struct wire *w, int level);
/* Start the reader thread (after the hello). */
int wire_start(struct wire *w);
/* Send a frame (any thread). 0, -EPIPE (the peer is gone) or -errno. */
int wire_send(struct wire *w, int type, const void *p, size_t len);
/* The same, the payload in two pieces (a header and data not copied together). */
int wire_send2(struct wire *w, int type, const void *a, size_t an, const void *b, size_t bn);
int wire_send_buf(struct wire *w, int type, struct wbuf *b);
/*
 * The next frame that is not text: 0 with *ret (free it), -EPIPE when the
 * peer closed the stream, -EPROTO after a protocol error (said once),
 * -ECANCELED when the run was told to stop.
 */
int wire_recv(struct wire *w, struct wire_frame **ret);
/* Bytes through the wire so far (on the wire, after compression). */
void wire_counts(const struct wire *w, uint64_t *in, uint64_t *out);
/* Print text that came from the peer: control characters other than tab, newline and return become '?'. */
void wire_print_text(int type, const unsigned char *p, size_t n);

#endif
