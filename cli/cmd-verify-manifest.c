/* ingot verify-manifest: check a signed manifest against a keyring and policy. */
#include <getopt.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "image/verity.h"
#include "cli/cli.h"
#include "keys/envelope.h"
#include "keys/keyring.h"
#include "manifest/dsse.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/time.h"

static const struct cli_command verify_manifest_cmd = {
	.name = "verify-manifest",
	.summary = "check a signed manifest's signatures, expiry and rollback",
	.synopsis =
	"    ingot verify-manifest ENVELOPE --keyring KEYRING [--image IMG [--verity V]]\n"
	"                          [--now RFC3339|EPOCH] [--state FILE] [--print-manifest]\n"
	"                          [--file-list MANIFEST] [--sbom SBOM]\n",
	.description =
	"    Verifies the DSSE envelope ENVELOPE (NAME.manifest.dsse.json), in order:\n"
	"      1. structure and limits (payload at most 64 MiB, 64 signatures);\n"
	"      2. signatures over the DSSE PAE bytes: at least the keyring's threshold of\n"
	"         DISTINCT trusted keys must have signed; a key that signed twice counts\n"
	"         once; unknown key ids and bad signatures are named;\n"
	"      3. payloadType application/vnd.in-toto+json (or .v1+json), an in-toto\n"
	"         Statement v1 (or v0.1) with\n"
	"         predicateType https://ingot.dev/manifest-head/v2 (a valid manifest\n"
	"         head; subjects: the image, the SBOM, the manifest file) or, until\n"
	"         0.3, https://ingot.dev/manifest/v1 (the whole manifest), subjects\n"
	"         equal to the manifest's image (and SBOM) name and sha256;\n"
	"      4. expiry: the manifest's \"expires\" must be after now;\n"
	"         v2: the manifest file (--file-list, else its subject name beside\n"
	"         ENVELOPE) must hash to the signed digest: a different file is\n"
	"         exit 6, a missing one exit 1;\n"
	"      5. rollback: the serial must not be below the last serial recorded for\n"
	"         the same recipe name in the state file (as in TUF); on success a\n"
	"         higher serial is recorded there (atomically);\n"
	"      6. with --image, the image file's sha256 and size; with --verity, the\n"
	"         dm-verity root hash recomputed from IMG and the hash file;\n"
	"      7. the SBOM (--sbom, else the manifest's sbom.file beside ENVELOPE)\n"
	"         must hash to the signed sbom.sha256: a different file is exit 6;\n"
	"         none beside ENVELOPE is reported as \"SBOM not checked\", never\n"
	"         as a pass; --sbom naming a missing file, or given for a manifest\n"
	"         without an SBOM, is exit 1.\n"
	"    The payload is not interpreted before its signatures verify. ENVELOPE may\n"
	"    also be a Sigstore bundle with public-key verification material: its\n"
	"    dsseEnvelope is verified the same way (keyless bundles are refused).\n"
	"\n"
	"    The keyring is JSON: {\"keys\":[{\"name\",\"keyid\",\"public_key\"}],\"threshold\":N}\n"
	"    (see `ingot keys keyring`).\n",
	.more =
	"EXIT STATUS\n"
	"    0   verified\n"
	"    1   I/O error (missing file, unreadable keyring, cannot write the state)\n"
	"    2   malformed: not JSON, wrong structure, over a limit, bad keyring or state\n"
	"    3   signatures: fewer valid signatures by distinct trusted keys than the threshold\n"
	"    4   expired\n"
	"    5   rollback: serial below the last one seen\n"
	"    6   the image, verity, manifest or SBOM file does not match what was signed\n"
	"    64  usage error\n"
	"\n"
	"EXAMPLES\n"
	"    ingot verify-manifest out/demo.manifest.dsse.json --keyring pool.keyring.json\n"
	"    ingot verify-manifest demo.manifest.dsse.json --keyring pool.keyring.json \\\n"
	"        --image demo.sqfs --verity demo.verity --state /var/lib/ingot/state.json\n"
	"    ingot verify-manifest demo.manifest.dsse.json -k ring.json --now 2027-01-01T00:00:00Z\n",
};

int cmd_verify_manifest(int argc, char **argv)
{
	_cleanup_(keyring_freep) struct keyring *kr = NULL;
	_cleanup_manifest_ struct manifest *m = NULL;
	struct verify_policy pol = { .now = time(NULL) };
	struct verify_outcome out;
	struct image_digest img;
	const char *keyring = NULL, *path, *image = NULL, *verity = NULL, *sbom = NULL;
	_cleanup_free_ char *sbom_at = NULL;
	ingot_error e = { 0 };
	bool print = false;
	int c, sr;

	const struct cli_option opts[] = {
		OPT_STRING('k', "keyring", &keyring, "FILE", "trusted keys and threshold (required)"),
		OPT_STRING('i', "image", &image, "IMG", "check the image's sha256 and size"),
		OPT_STRING('V', "verity", &verity, "FILE",
			   "check the verity hash tree's root (needs --image)"),
		OPT_CALLBACK('t', "now", &pol.now, "TIME",
			     "time for the expiry check, RFC 3339 or Unix seconds\n"
			     "(default: the current time)", cli_parse_time),
		OPT_STRING('s', "state", &pol.state_path, "FILE",
			   "rollback state: last-seen serial per recipe name"),
		OPT_FLAG('p', "print-manifest", &print,
			 "print the verified manifest (canonical JSON) on stdout"),
		OPT_STRING('f', "file-list", &pol.file_list, "FILE",
			   "the manifest file a v2 statement binds by digest\n"
			   "(default: its subject name beside ENVELOPE)"),
		OPT_STRING('S', "sbom", &sbom, "FILE",
			   "the SBOM the manifest binds by digest\n"
			   "(default: its sbom.file beside ENVELOPE, if there)"),
		OPT_END(),
	};

	if ((c = cli_parse(&verify_manifest_cmd, opts, argc, argv, &optind)) >= 0)
		return c;
	if (argc - optind != 1)
		return cli_usage_error("verify-manifest", "expected one ENVELOPE file");
	if (!keyring)
		return cli_usage_error("verify-manifest", "--keyring KEYRING is required");
	if (verity && !image)
		return cli_usage_error("verify-manifest", "--verity needs --image");
	path = argv[optind];
	/* The file list's digest is all this checks; it is parsed only to
	 * be printed. */
	pol.file_list_use = print ? FILE_LIST_LOAD : FILE_LIST_DIGEST;

	int r = keyring_load_role(keyring, KEY_ROLE_MANIFEST, true, &kr, &e);
	if (r < 0)
		return cli_error(&e, r == -EINVAL || r == -EBADMSG || r == -E2BIG || r == -EFBIG
				 ? ENVELOPE_EXIT_MALFORMED : ENVELOPE_EXIT_IO);
	if (envelope_verify(path, kr, &pol, &m, &out, &e) < 0)
		return cli_error(&e, ENVELOPE_EXIT_MALFORMED);
	if (image && (r = image_check_manifest(m, image, verity, &img, &e)) < 0)
		return cli_error(&e, r == -EBADMSG ? ENVELOPE_EXIT_DIGEST : ENVELOPE_EXIT_IO);
	if ((sr = manifest_sbom_check(path, sbom, m->doc, &sbom_at, &e)) < 0)
		return cli_error(&e, sr == -EILSEQ ? ENVELOPE_EXIT_DIGEST : sr == -EINVAL ? ENVELOPE_EXIT_MALFORMED
									  : ENVELOPE_EXIT_IO);
	/* The serial is recorded only once everything it vouches for passed. */
	if (pol.state_path && envelope_record_state(pol.state_path, &out, &e) < 0)
		return cli_error(&e, ENVELOPE_EXIT_IO);

	if (print) {
		_cleanup_free_ char *s = json_canonical(m->doc, NULL);
		if (s)
			fputs(s, stdout);
		if (sr == 1 && sbom_at)
			fprintf(stderr, "%s: SBOM not checked: no %s\n", path, sbom_at);
	} else {
		printf("%s: OK: %s serial %" PRIu64 ", %u of %u required signatures (", path,
		       out.recipe, out.serial, out.valid, out.threshold);
		for (unsigned i = 0; i < out.valid; i++)
			printf("%s%s", i ? ", " : "", out.signer_names[i]);
		printf(")");
		if (out.has_expiry)
			printf(", expires %s",
			       m->expires_text);
		if (out.file_list)
			printf(", file list sha256 matches");
		if (image)
			printf(", image sha256 %.16s... matches", out.image_sha256);
		if (verity)
			printf(", verity root matches");
		if (sr == 0)
			printf(", SBOM sha256 matches");
		else if (sbom_at)
			printf(", SBOM not checked (no %s)", sbom_at);
		printf("\n");
	}
	return EXIT_OK;
}
