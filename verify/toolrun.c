#include "verify/toolrun.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int reap(pid_t pid, int *status)
{
	int ws;
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			return -errno;
	*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	return 0;
}

int tool_run(char *const argv[], unsigned timeout_ms, size_t max_out, char **out, int *status,
	     ingot_error *e)
{
	/* A fixed environment: the node's locale must not change what we parse. */
	static char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL };
	posix_spawn_file_actions_t fa;
	int pfd[2];
	pid_t pid;
	int r;

	*out = NULL;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return ingot_fail(e, -errno, "%s: pipe: %s", argv[0], strerror(errno));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	r = posix_spawn(&pid, argv[0], &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	if (r != 0) {
		close(pfd[0]);
		return ingot_fail(e, -r, "%s: cannot run: %s", argv[0], strerror(r));
	}

	_cleanup_close_ int fd = pfd[0];
	_cleanup_free_ char *buf = malloc(max_out + 1);
	size_t n = 0;
	long deadline = now_ms() + timeout_ms;
	if (!buf) {
		kill(pid, SIGKILL);
		reap(pid, status);
		return ingot_fail(e, -ENOMEM, "%s: out of memory", argv[0]);
	}
	for (;;) {
		long left = deadline - now_ms();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (left <= 0) {
			kill(pid, SIGKILL);
			reap(pid, status);
			return ingot_fail(e, -ETIMEDOUT, "%s: no answer within %u ms, killed",
					  argv[0], timeout_ms);
		}
		r = poll(&p, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		char tmp[4096];
		ssize_t got = read(fd, tmp, sizeof(tmp));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		if (n + (size_t)got > max_out) {
			kill(pid, SIGKILL);
			reap(pid, status);
			return ingot_fail(e, -EFBIG, "%s: output exceeds %zu bytes", argv[0], max_out);
		}
		memcpy(buf + n, tmp, (size_t)got);
		n += (size_t)got;
	}
	/* stdout closed: the tool is exiting; it may still linger, so keep the deadline. */
	for (;;) {
		int ws;
		pid_t w = waitpid(pid, &ws, WNOHANG);
		if (w == pid) {
			*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
			break;
		}
		if (w < 0 && errno != EINTR)
			return ingot_fail(e, -errno, "%s: wait: %s", argv[0], strerror(errno));
		if (now_ms() >= deadline) {
			kill(pid, SIGKILL);
			reap(pid, status);
			return ingot_fail(e, -ETIMEDOUT, "%s: did not exit within %u ms, killed",
					  argv[0], timeout_ms);
		}
		usleep(2000);
	}
	buf[n] = '\0';
	*out = TAKE_PTR(buf);
	return 0;
}

static int is_exec_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

char *tool_find(const char *root, const char *name)
{
	static const char *const dirs[] = { "usr/local/sbin", "usr/local/bin", "usr/sbin",
					    "usr/bin", "sbin", "bin" };
	if (!root || !strcmp(root, "/")) {
		const char *path = getenv("PATH");
		_cleanup_free_ char *copy = strdup(path && *path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
		char *save = NULL;
		if (!copy)
			return NULL;
		for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			if (d[0] != '/')
				continue;   /* relative PATH entries would depend on our cwd */
			char *p = path_join(d, name);
			if (p && is_exec_file(p))
				return p;
			free(p);
		}
		return NULL;
	}
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		_cleanup_free_ char *d = path_join(root, dirs[i]);
		char *p = d ? path_join(d, name) : NULL;
		if (p && is_exec_file(p))
			return p;
		free(p);
	}
	return NULL;
}
