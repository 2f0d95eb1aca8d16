/*
 * The one way the library starts a thread.
 *
 * A library thread must never take a signal meant for the caller: a tool's
 * SIGINT or SIGPIPE handler, or a sigwait loop, expects it on the caller's
 * threads, and a handler run on a worker thread would interrupt the wrong
 * system call (or none). A new thread inherits its creator's mask, so every
 * signal is blocked just around pthread_create and the caller's mask restored.
 */
#include <errno.h>
#include <signal.h>

#include "internal.h"

int sweep__thread_start(pthread_t *tid, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(tid, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
}
