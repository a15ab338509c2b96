/* ingot attest fetch-manifest: the node's signed manifest from the
 * verifier (server/client.h verifier_fetch_manifest), checked against the
 * image's own keyring and the booted image before anything is written. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "keys/envelope.h"
#include "lib/boot-contract.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "server/client.h"
#include "verify/boot-inputs.h"

static const struct cli_command fetch_cmd = {
	.name = "attest fetch-manifest",
	.summary = "fetch this node's signed manifest from the verifier",
	.synopsis =
"    ingot attest fetch-manifest --verifier URL [--via PORT] --pool POOL\n"
"                                --keyring FILE [--root HEX] -o FILE\n",
	.description =
"    Asks the verifier (ingot serve, GET /v1/manifests/POOL) for the signed\n"
"    manifest of POOL that describes this node's image, and writes it to FILE\n"
"    (the file list it binds beside it) only once it is signed by the\n"
"    threshold of KEYRING's manifest keys (the image's own keyring, never the\n"
"    verifier's word), unexpired, of POOL, and of the image root: --root, or\n"
"    the ingot.root= of /proc/cmdline (the image this node booted). Then\n"
"    `ingot verify --manifest FILE` checks the node against it.\n",
	.more =
"EXIT STATUS\n"
"    0   fetched, checked and written\n"
"    10  refused: not signed by the keyring's threshold, expired or malformed\n"
"    11  refused: a manifest of another pool or image root, or a file list\n"
"        other than the one signed\n"
"    20  could not check: no verifier reached, no manifest of the pool there,\n"
"        no image root known, or FILE not written\n"
"    64  usage error\n"
"\n"
"EXAMPLES\n"
"    ingot attest fetch-manifest --verifier http://10.0.0.5:8700 --pool h100 \\\n"
"        --keyring /etc/ingot/keyring.json -o /run/ingot/manifest.dsse.json\n",
};

/* ingot.root= of the kernel command line: the image ingot-init opened. */
static int booted_root(char root[65], ingot_error *e)
{
	_cleanup_free_ char *line = NULL;
	size_t len, k = strlen(BOOT_KEY_ROOT);

	if (read_file("/proc/cmdline", 4096, &line, &len, e) < 0)
		return -1;
	for (char *t = strtok(line, " \n"); t; t = strtok(NULL, " \n"))
		if (!strncmp(t, BOOT_KEY_ROOT, k) && strlen(t + k) == 64) {
			memcpy(root, t + k, 65);
			return 0;
		}
	ingot_fail(e, -ENOENT, "/proc/cmdline: no " BOOT_KEY_ROOT " (not booted by ingot-init): give --root");
	return -1;
}

int cmd_attest_fetch_manifest(int argc, char **argv)
{
	const char *verifier = NULL, *via = NULL, *pool = NULL, *keyring = NULL, *root = NULL, *output = NULL;
	struct boot_trust t = { 0 };
	const struct keyring *kr;
	struct verifier v;
	struct fetched_manifest fm;
	char booted[65];
	ingot_error e = { 0 };
	int first, rc;
	const struct cli_option opts[] = {
		OPT_STRING(0, "verifier", &verifier, "URL", "the verifier service (ingot serve)"),
		OPT_STRING(0, "via", &via, "PORT",
			   "speak HTTP over this stream (a virtio-serial port) that a\n"
			   "relay carries to the verifier (as ingot attest push)"),
		OPT_STRING(0, "pool", &pool, "POOL", "the image's pool (its recipe name)"),
		OPT__KEYRING(&keyring, "FILE",
			     "the manifest's trusted signers (the image's\n"
			     "/etc/ingot/keyring.json; with roles: roles.manifest)"),
		OPT_STRING(0, "root", &root, "HEX",
			   "the image's dm-verity root (default: ingot.root= of\n"
			   "/proc/cmdline)"),
		OPT__OUTPUT(&output, "FILE", "where to write the signed manifest"),
		OPT_END(),
	};

	if ((rc = cli_parse(&fetch_cmd, opts, argc, argv, &first)) >= 0)
		return rc;
	if (first < argc)
		return cli_usage_error("attest fetch-manifest", "unexpected argument '%s'", argv[first]);
	if (!verifier || !pool || !keyring || !output)
		return cli_usage_error("attest fetch-manifest", "--verifier, --pool, --keyring and -o are required");
	if (root && !is_sha256_hex(root))
		return cli_usage_error("attest fetch-manifest", "--root: expected 64 lower-case hex digits, got '%s'", root);
	if (!root) {
		if (booted_root(booted, &e) < 0)
			return cli_error(&e, VERIFY_EXIT_CANNOT_CHECK);
		root = booted;
	}
	struct boot_keyrings k = { .keyring = keyring };
	if (boot_trust_init(&t, &k, &e) < 0 || boot_trust_keyring(&t, KEY_ROLE_MANIFEST, &kr, &e) < 0) {
		boot_trust_release(&t);
		e.kind = 0;
		return cli_error(&e, VERIFY_EXIT_CANNOT_CHECK);
	}
	rc = verifier_open(&v, verifier, via, &e);
	if (rc == 0)
		rc = verifier_fetch_manifest(&v, pool, root, kr, time(NULL), output, &fm, &e);
	verifier_close(&v);
	boot_trust_release(&t);
	if (rc == 0) {
		printf("manifest %s serial %llu (image root %.16s...): signed by the image's keys -> %s%s%s\n", fm.recipe,
		       (unsigned long long)fm.serial, fm.root, output, fm.file_list[0] ? ", " : "", fm.file_list);
		return EXIT_OK;
	}
	switch (e.kind) {
	case ENVELOPE_FAIL_SIGNATURE: case ENVELOPE_FAIL_EXPIRED: case ENVELOPE_FAIL_MALFORMED:
		rc = VERIFY_EXIT_SIGNATURE;
		break;
	case ENVELOPE_FAIL_DIGEST: case VERIFIER_FAIL_OTHER_IMAGE:
		rc = VERIFY_EXIT_IMAGE;
		break;
	default:   /* not reached, refused, not written: nothing was checked */
		rc = VERIFY_EXIT_CANNOT_CHECK;
	}
	e.kind = 0;
	return cli_error(&e, rc);
}
