#include "cli/cli.h"

/* Placeholder: replaced by the owning part. */
int cmd_lint(int argc, char **argv)
{
	(void)argc; (void)argv;
	fprintf(stderr, "ingot: lint: not available in this build\n");
	return EXIT_FAILURE_;
}
