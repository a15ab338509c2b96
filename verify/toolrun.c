#include "verify/toolrun.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/xalloc.h"

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

/* One running job of tool_run_all. */
struct run {
	pid_t pid;       /* -1: not started, or reaped */
	int fd;          /* its stdout; -1 once at EOF */
	int pidfd;       /* readable once it exits; -1 where the kernel has none */
	char *buf;       /* max_out + 1 bytes */
	size_t n;
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* A job that failed: killed and reaped if running; the first message wins. */
static void job_fail(struct tool_job *j, struct run *r, int code, ingot_error *e, int *have_err,
		     const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void job_fail(struct tool_job *j, struct run *r, int code, ingot_error *e, int *have_err,
		     const char *fmt, ...)
{
	va_list ap;
	if (r->pid > 0) {
		kill(r->pid, SIGKILL);
		reap(r->pid, &j->status);
		r->pid = -1;
	}
	close_fd(&r->fd);
	close_fd(&r->pidfd);
	j->err = code;
	va_start(ap, fmt);
	ingot_vfail(*have_err ? NULL : e, code, fmt, ap);
	va_end(ap);
	*have_err = 1;
}

static int start(struct tool_job *j, struct run *r, size_t max_out, ingot_error *e, int *have_err)
{
	/* A fixed environment: the node's locale must not change what we parse. */
	static char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL };
	posix_spawn_file_actions_t fa;
	int pfd[2], rc;

	r->buf = xmalloc(max_out + 1);
	/* O_CLOEXEC: no other job's child may hold this pipe open, or its
	 * EOF would wait for that child. */
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		job_fail(j, r, -errno, e, have_err, "%s: pipe: %s", j->argv[0], strerror(errno));
		return 0;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	rc = posix_spawn(&r->pid, j->argv[0], &fa, NULL, j->argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	r->fd = pfd[0];
	if (rc != 0) {
		r->pid = -1;
		job_fail(j, r, -rc, e, have_err, "%s: cannot run: %s", j->argv[0], strerror(rc));
		return 0;
	}
#ifdef SYS_pidfd_open
	r->pidfd = (int)syscall(SYS_pidfd_open, r->pid, 0);
	if (r->pidfd >= 0)
		fcntl(r->pidfd, F_SETFD, FD_CLOEXEC);
#endif
	return 0;
}

/* Reap a job whose stdout is closed, if it has exited; 1 when done. */
static int try_reap(struct tool_job *j, struct run *r)
{
	int ws;
	pid_t w;
	while ((w = waitpid(r->pid, &ws, WNOHANG)) < 0 && errno == EINTR)
		;
	if (w != r->pid)
		return 0;
	j->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	r->pid = -1;
	close_fd(&r->pidfd);
	r->buf[r->n] = '\0';
	j->out = TAKE_PTR(r->buf);
	return 1;
}

int tool_run_all(struct tool_job *jobs, size_t n, unsigned timeout_ms, size_t max_out,
		 ingot_error *e)
{
	_cleanup_free_ struct run *rs = xcalloc(n ? n : 1, sizeof(*rs));
	_cleanup_free_ struct pollfd *pf = xcalloc(n ? n : 1, sizeof(*pf));
	_cleanup_free_ size_t *who = xcalloc(n ? n : 1, sizeof(*who));
	long deadline = now_ms() + timeout_ms;
	int have_err = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		jobs[i].out = NULL;
		jobs[i].status = -1;
		jobs[i].err = 0;
		rs[i].pid = -1;
		rs[i].fd = rs[i].pidfd = -1;
	}
	for (i = 0; i < n; i++) {
		if (start(&jobs[i], &rs[i], max_out, e, &have_err) < 0) {
			for (size_t k = 0; k <= i; k++) {
				if (rs[k].pid > 0)
					job_fail(&jobs[k], &rs[k], -ENOMEM, NULL, &have_err, "out of memory");
				free(rs[k].buf);
			}
			return ingot_fail(e, -ENOMEM, "tools: out of memory");
		}
	}
	for (;;) {
		/* Wait on each stdout until EOF, then on the exit (pidfd, or a
		 * short sleep where there is none: the tool is exiting anyway). */
		size_t np = 0, lingering = 0;
		for (i = 0; i < n; i++) {
			if (rs[i].pid < 0)
				continue;
			if (rs[i].fd >= 0 || rs[i].pidfd >= 0) {
				pf[np] = (struct pollfd){ .fd = rs[i].fd >= 0 ? rs[i].fd : rs[i].pidfd,
							  .events = POLLIN };
				who[np++] = i;
			} else {
				lingering++;
			}
		}
		if (!np && !lingering)
			break;
		long left = deadline - now_ms();
		if (left <= 0) {
			for (i = 0; i < n; i++)
				if (rs[i].pid > 0)
					job_fail(&jobs[i], &rs[i], -ETIMEDOUT, e, &have_err, rs[i].fd >= 0
						 ? "%s: no answer within %u ms, killed"
						 : "%s: did not exit within %u ms, killed",
						 jobs[i].argv[0], timeout_ms);
			break;
		}
		int r = poll(pf, np, lingering ? (left < 2 ? (int)left : 2) : (int)left);
		if (r < 0 && errno != EINTR) {
			int err = errno;
			for (i = 0; i < n; i++)
				if (rs[i].pid > 0)
					job_fail(&jobs[i], &rs[i], -err, e, &have_err, "%s: poll: %s",
						 jobs[i].argv[0], strerror(err));
			break;
		}
		for (size_t k = 0; r > 0 && k < np; k++) {
			struct run *ru = &rs[who[k]];
			struct tool_job *j = &jobs[who[k]];
			if (!pf[k].revents)
				continue;
			if (pf[k].fd == ru->pidfd && ru->fd < 0) {
				try_reap(j, ru);
				continue;
			}
			char tmp[4096];
			ssize_t got = read(ru->fd, tmp, sizeof(tmp));
			if (got < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (got <= 0) {
				/* stdout closed: the tool is exiting; it may still linger,
				 * so the deadline still holds. */
				close_fd(&ru->fd);
				try_reap(j, ru);
				continue;
			}
			if (ru->n + (size_t)got > max_out) {
				job_fail(j, ru, -EFBIG, e, &have_err, "%s: output exceeds %zu bytes",
					 j->argv[0], max_out);
				continue;
			}
			memcpy(ru->buf + ru->n, tmp, (size_t)got);
			ru->n += (size_t)got;
		}
		for (i = 0; lingering && i < n; i++)
			if (rs[i].pid > 0 && rs[i].fd < 0 && rs[i].pidfd < 0)
				try_reap(&jobs[i], &rs[i]);
	}
	for (i = 0; i < n; i++)
		free(rs[i].buf);
	return 0;
}

int tool_run(char *const argv[], unsigned timeout_ms, size_t max_out, char **out, int *status,
	     ingot_error *e)
{
	struct tool_job j = { .argv = argv };
	int r = tool_run_all(&j, 1, timeout_ms, max_out, e);
	*out = j.out;
	*status = j.status;
	if (r < 0)
		return r;
	if (j.err < 0) {
		free(j.out);
		*out = NULL;
		return j.err;
	}
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
		_cleanup_free_ char *copy = xstrdup(path && *path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
		char *save = NULL;
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
