#include "cli/cli.h"

/* Placeholder: replaced by the owning part. */
int cmd_keys(int argc, char **argv)
{
	(void)argc; (void)argv;
	fprintf(stderr, "ingot: keys: not available in this build\n");
	return EXIT_FAILURE_;
}
