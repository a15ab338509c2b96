/* ingot: build golden GPU-node images and prove what each node runs. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const char main_help[] =
"NAME\n"
"    ingot - build golden OS images for GPU clusters and prove what each node runs\n"
"\n"
"SYNOPSIS\n"
"    ingot COMMAND [OPTIONS] [ARGS]\n"
"    ingot --help | --version\n"
"    ingot COMMAND --help\n"
"\n"
"DESCRIPTION\n"
"    ingot turns a declarative YAML recipe - every artifact pinned by sha256 and the\n"
"    GPU software tuple they form - into a byte-identical squashfs image, a dm-verity\n"
"    hash tree and a signed manifest; measures the image into a TPM at boot, checks\n"
"    the running node against the manifest, and lets auditors verify a pool offline.\n"
"\n"
"COMMANDS\n"
"    build RECIPE -o DIR      lint, fetch, unpack and write DIR/NAME.sqfs, .verity,\n"
"                             .manifest.json (and .manifest.dsse.json with --key)\n"
"    lint RECIPE              check the tuple against the version-chain rules\n"
"    inspect FILE             list an image's files, or show a manifest/envelope\n"
"    keys generate|id|keyring create signing keys, print key ids, manage\n"
"                             keyrings (keyring add|list)\n"
"    sign MANIFEST --key K    add a DSSE signature to a manifest envelope\n"
"    verify-manifest ENV      check an envelope's signatures, expiry and rollback\n"
"    verify                   boot-time admission: node, image, TPM vs manifest\n"
"    attest measure|quote|... TPM 2.0 measurement, quotes, event-log replay\n"
"    audit                    offline audit of many node reports\n"
"    serve --config FILE      the verifier service: judges nodes' evidence off the node\n"
"    diff A B                 what changed between two manifests\n"
"    evidence add             signed test evidence (nccl-tests, DCGM) about an image\n"
"    promote --ring R         promote an image to a ring when its policy is met\n"
"    store gc|verify          keep what given recipes use, drop the rest; re-hash\n"
"                             the store's blobs\n"
"\n"
"ENVIRONMENT\n"
"    SOURCE_DATE_EPOCH   overrides the recipe epoch only if the recipe allows it\n"
"    XDG_CACHE_HOME      default artifact store is $XDG_CACHE_HOME/ingot\n"
"    INGOT_TCTI          default TPM TCTI (e.g. device:/dev/tpmrm0)\n"
"\n"
"EXIT STATUS\n"
"    0 success; 1 failure; 64 usage error. Commands document further codes in\n"
"    their --help.\n";

static const struct {
	const char *name;
	int (*fn)(int, char **);
} commands[] = {
	{ "build", cmd_build },
	{ "lint", cmd_lint },
	{ "inspect", cmd_inspect },
	{ "keys", cmd_keys },
	{ "sign", cmd_sign },
	{ "verify-manifest", cmd_verify_manifest },
	{ "verify", cmd_verify },
	{ "attest", cmd_attest },
	{ "audit", cmd_audit },
	{ "serve", cmd_serve },
	{ "diff", cmd_diff },
	{ "evidence", cmd_evidence },
	{ "promote", cmd_promote },
	{ "store", cmd_store },
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(main_help, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(main_help, stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ingot %s\n", INGOT_VERSION);
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "ingot: unknown command '%s'\nTry 'ingot --help'.\n", argv[1]);
	return EXIT_USAGE;
}
