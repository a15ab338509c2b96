/* Helpers shared by the libFuzzer harnesses (tests/fuzz/fuzz_*.c).
 * Each harness includes this once; everything here is static so the
 * harnesses stay single-file programs. */
#ifndef INGOT_FUZZ_COMMON_H
#define INGOT_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A private scratch directory for the whole fuzzing run, in /dev/shm when
 * it exists (the unpack harness writes to its store on every input).
 * Removed at exit by the run script's trap, not here: libFuzzer may exit
 * through paths that skip atexit handlers. */
static inline char *fuzz_scratch_dir(void)
{
	static char buf[256];
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	const char *env = getenv("FUZZ_SCRATCH");

	if (buf[0])
		return buf;
	if (env && *env)
		base = env;
	snprintf(buf, sizeof(buf), "%s/ingot-fuzz.XXXXXX", base);
	if (!mkdtemp(buf)) {
		perror("mkdtemp");
		abort();
	}
	return buf;
}

/* With FUZZ_VERBOSE set (tests/fuzz/driver.c replays), say why an input
 * was refused. */
static inline void fuzz_note(const char *what, const char *msg)
{
	static int verbose = -1;

	if (verbose < 0)
		verbose = getenv("FUZZ_VERBOSE") != NULL;
	if (verbose)
		fprintf(stderr, "  %s: %s\n", what, msg && *msg ? msg : "ok");
}

/* NUL-terminated copy of the input: parsers that take a C string must
 * never read past the fuzzer's buffer. */
static inline char *fuzz_strdup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = 0;
	return s;
}

#endif
