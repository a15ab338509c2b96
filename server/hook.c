/* The on-verdict hook (server/serve.h): argv, never a shell, so a reason
 * the node influenced is one argument and nothing else. */
#include "server/serve.h"

#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "lib/xalloc.h"

extern char **environ;

int serve_run_hook(char *const *argv, const char *node, const char *verdict, const char *reason, int64_t timeout,
		   ingot_error *e)
{
	posix_spawnattr_t attr;
	sigset_t none, deflt;
	size_t n = 0;
	pid_t pid;
	int st = 0, r;

	while (argv[n])
		n++;
	char **av = xcalloc(n + 4, sizeof(*av));
	memcpy(av, argv, n * sizeof(*av));
	av[n] = (char *)node, av[n + 1] = (char *)verdict, av[n + 2] = (char *)reason;
	/* The service blocks the signals it waits for; its hook must not
	 * inherit that. */
	sigemptyset(&none);
	sigemptyset(&deflt);
	sigaddset(&deflt, SIGPIPE);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &deflt);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	r = posix_spawn(&pid, av[0], NULL, &attr, av, environ);
	posix_spawnattr_destroy(&attr);
	free(av);
	if (r != 0)
		return ingot_fail(e, -r, "%s: cannot run: %s", argv[0], strerror(r));
	struct timespec t0, now, nap = { 0, 2 * 1000 * 1000 };
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return ingot_fail(e, -errno, "%s: wait: %s", argv[0], strerror(errno));
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= timeout) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return ingot_fail(e, -ETIMEDOUT, "%s: killed after %lld s", argv[0], (long long)timeout);
		}
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 50 * 1000 * 1000)
			nap.tv_nsec *= 2;   /* quick hooks answer quickly; slow ones cost little */
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFEXITED(st))
		return ingot_fail(e, -EIO, "%s: exit status %d", argv[0], WEXITSTATUS(st));
	return ingot_fail(e, -EIO, "%s: killed by signal %d", argv[0], WTERMSIG(st));
}
