/* SPDX-License-Identifier: MIT */
/*
 * sweep__thread_start (lib/common/thread_start.c): a library thread starts
 * with every signal blocked, the caller's mask is left as it was, and a
 * signal sent to the process while the library thread runs is handled on
 * the caller's thread, never on the library's.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "internal.h"

static const int probes[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGUSR1, SIGUSR2, SIGCHLD, SIGALRM, SIGWINCH };

struct seen {
	sigset_t mask;
	int raised;
};

static void *record_mask(void *arg)
{
	struct seen *s = arg;
	pthread_sigmask(SIG_BLOCK, NULL, &s->mask);
	return NULL;
}

static void test_new_thread_blocks_everything(void **state)
{
	(void)state;
	sigset_t mine, after;
	sigemptyset(&mine);
	sigaddset(&mine, SIGUSR2); /* the caller's own choice, which must survive */
	assert_int_equal(pthread_sigmask(SIG_SETMASK, &mine, NULL), 0);

	struct seen s;
	memset(&s, 0, sizeof(s));
	pthread_t t;
	assert_int_equal(sweep__thread_start(&t, record_mask, &s), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		assert_int_equal(sigismember(&s.mask, probes[i]), 1);

	pthread_sigmask(SIG_BLOCK, NULL, &after);
	assert_int_equal(sigismember(&after, SIGUSR2), 1);
	assert_int_equal(sigismember(&after, SIGINT), 0);
	assert_int_equal(sigismember(&after, SIGUSR1), 0);
	sigemptyset(&mine);
	pthread_sigmask(SIG_SETMASK, &mine, NULL);
}

static pthread_t handled_on;
static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled_on = pthread_self();
	handled = 1;
}

/* The library thread sends the process a signal: only the caller may take it. */
static void *raise_at_process(void *arg)
{
	struct seen *s = arg;
	s->raised = kill(getpid(), SIGUSR1) == 0;
	return NULL;
}

static void test_signal_reaches_the_caller(void **state)
{
	(void)state;
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	handled = 0;

	struct seen s;
	memset(&s, 0, sizeof(s));
	pthread_t t;
	assert_int_equal(sweep__thread_start(&t, raise_at_process, &s), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(s.raised);
	/* A pending process signal is delivered to the one thread that takes it, by now or at the next return to user space. */
	sigset_t none;
	sigemptyset(&none);
	while (!handled) {
		sigset_t usr1, was;
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &usr1, &was);
		if (!handled)
			sigsuspend(&none);
		pthread_sigmask(SIG_SETMASK, &was, NULL);
	}
	assert_true(pthread_equal(handled_on, pthread_self()));
	sigaction(SIGUSR1, &old, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_thread_blocks_everything),
		cmocka_unit_test(test_signal_reaches_the_caller),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
