/* A main() for the harnesses without libFuzzer, to replay inputs with any
 * compiler (gcc, valgrind) and see why each was refused:
 *
 *   cc -std=c11 -D_GNU_SOURCE -I. $(pkg-config --cflags ...) -o q \
 *      tests/fuzz/driver.c tests/fuzz/fuzz_quote.c BUILD/libingot.a $(pkg-config --libs ...)
 *   FUZZ_VERBOSE=1 ./q tests/fuzz/corpus/fuzz_quote/pcr15 ...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_common.h"

int main(int argc, char **argv)
{
	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint8_t *buf;
		long n;

		if (!f || fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0) {
			perror(argv[i]);
			return 1;
		}
		buf = malloc((size_t)n + 1);
		if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
			perror(argv[i]);
			return 1;
		}
		fclose(f);
		if (getenv("FUZZ_VERBOSE"))
			fprintf(stderr, "%s:\n", argv[i]);
		LLVMFuzzerTestOneInput(buf, (size_t)n);
		free(buf);
	}
	return 0;
}
