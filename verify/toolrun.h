/* Run a node tool (nvidia-smi, nv-fabricmanager, ...) the safe way: no
 * shell, a minimal environment, a wall-clock timeout, bounded output.
 * A probe must never hang a boot on a wedged GPU tool. */
#ifndef INGOT_VERIFY_TOOLRUN_H
#define INGOT_VERIFY_TOOLRUN_H

#include <stddef.h>
#include "lib/err.h"

#define TOOL_TIMEOUT_MS 10000
#define TOOL_MAX_OUTPUT (1u << 20)

/* Run argv[0] (an absolute path) with argv; stdout is captured into *out
 * (NUL-terminated), stderr discarded.  *status gets the exit status, or
 * 128+signal.  Returns -ETIMEDOUT (child killed) after timeout_ms, -EFBIG
 * when stdout exceeds max_out, other -errno when it cannot start. */
int tool_run(char *const argv[], unsigned timeout_ms, size_t max_out, char **out, int *status,
	     ingot_error *e);

struct tool_job {
	char *const *argv;   /* in: argv[0] an absolute path, NULL-terminated */
	char *out;           /* out: stdout, NUL-terminated (caller frees); NULL on error */
	int status;          /* out: exit status or 128+signal; -1 when it never ran */
	int err;             /* out: 0, or what tool_run would return for this job */
};

/* tool_run for several tools at once: all are started before any is
 * waited for, under one deadline, so the probe costs the slowest tool's
 * time rather than the sum.  Each job gets its own out/status/err; e gets
 * the first failing job's message.  Returns 0, or -ENOMEM (nothing run). */
int tool_run_all(struct tool_job *jobs, size_t n, unsigned timeout_ms, size_t max_out,
		 ingot_error *e);

/* Find an executable named name for the node under root: with root "/"
 * search $PATH, else only ROOT/{usr/local/sbin,usr/local/bin,usr/sbin,
 * usr/bin,sbin,bin} (a fake root's tools, never the host's).  Returns a
 * malloc'd path or NULL. */
char *tool_find(const char *root, const char *name);

#endif
