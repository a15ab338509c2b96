/* libFuzzer harness: the seen-nonces file parser (attest/nonce.h
 * nonce_list_find).  Whatever it accepts must be exactly the format (lines
 * of 2-128 lower-case hex digits, even, each ending in LF), and a nonce it
 * says is listed must be one of those lines: a parser that reads around a
 * stray byte is how a replayed quote was once accepted. */
#include "tests/fuzz/fuzz_common.h"
#include "attest/nonce.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc; (void)argv;
	return 0;
}

/* The format, checked independently of the parser. */
static int well_formed(const uint8_t *d, size_t n)
{
	size_t run = 0;

	for (size_t i = 0; i < n; i++) {
		if (d[i] == '\n') {
			if (run < 2 || run > 2 * NONCE_MAX || run % 2)
				return 0;
			run = 0;
		} else if ((d[i] >= '0' && d[i] <= '9') || (d[i] >= 'a' && d[i] <= 'f')) {
			run++;
		} else {
			return 0;
		}
	}
	return run == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The nonce looked for: the first line's digits, so hits happen. */
	char hex[2 * NONCE_MAX + 1] = "00";
	size_t l = 0;
	ingot_error e = { 0 };
	int r;

	while (l < size && l < 2 * NONCE_MAX && data[l] != '\n')
		l++;
	if (l >= 2 && l % 2 == 0) {
		memcpy(hex, data, l);
		hex[l] = '\0';
	}
	r = nonce_list_find("fuzz.txt", (const char *)data, size, hex, &e);
	if ((r >= 0) != well_formed(data, size)) {
		fprintf(stderr, "nonce_list_find returned %d on %s input: %s\n", r,
			well_formed(data, size) ? "a well-formed" : "a corrupt", e.msg);
		abort();
	}
	if (r == 1 && (memmem(data, size, hex, strlen(hex)) == NULL)) {
		fprintf(stderr, "nonce_list_find: %s listed but absent\n", hex);
		abort();
	}
	fuzz_note("seen_nonces", r < 0 ? e.msg : NULL);
	return 0;
}
