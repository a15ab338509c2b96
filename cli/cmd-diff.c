#include "cli/cli.h"

/* Placeholder: replaced by the owning part. */
int cmd_diff(int argc, char **argv)
{
	(void)argc; (void)argv;
	fprintf(stderr, "ingot: diff: not available in this build\n");
	return EXIT_FAILURE_;
}
