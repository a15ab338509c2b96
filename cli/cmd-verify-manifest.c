#include "cli/cli.h"

/* Placeholder: replaced by the owning part. */
int cmd_verify_manifest(int argc, char **argv)
{
	(void)argc; (void)argv;
	fprintf(stderr, "ingot: verify-manifest: not available in this build\n");
	return EXIT_FAILURE_;
}
