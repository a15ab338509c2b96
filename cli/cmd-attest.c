#include "cli/cli.h"

/* Placeholder: replaced by the owning part. */
int cmd_attest(int argc, char **argv)
{
	(void)argc; (void)argv;
	fprintf(stderr, "ingot: attest: not available in this build\n");
	return EXIT_FAILURE_;
}
