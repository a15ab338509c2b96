#include "cli/cli.h"

/* Placeholder: replaced by the owning part. */
int cmd_verify(int argc, char **argv)
{
	(void)argc; (void)argv;
	fprintf(stderr, "ingot: verify: not available in this build\n");
	return EXIT_FAILURE_;
}
