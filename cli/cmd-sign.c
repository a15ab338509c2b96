/* ingot sign: wrap a manifest in a signed DSSE envelope, or add a signature. */
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "manifest/dsse.h"
#include "cli/cli.h"
#include "keys/envelope.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/xalloc.h"

enum { SIGN_EXIT_MALFORMED = 2 };

static const struct cli_command sign_cmd = {
	.name = "sign",
	.summary = "sign a manifest (DSSE envelope), or add a signature to an envelope",
	.synopsis =
	"    ingot sign MANIFEST.json|ENVELOPE.dsse.json --key KEY [-o OUT] [--passphrase-fd N]\n",
	.description =
	"    Given a manifest (NAME.manifest.json), writes a DSSE envelope whose payload\n"
	"    is a small in-toto Statement v1: subjects = the image, the SBOM (when the\n"
	"    manifest names one) and the manifest file itself, each with its sha256;\n"
	"    predicateType https://ingot.dev/manifest-head/v2, predicate = the manifest\n"
	"    without its file list; and signs the DSSE PAE bytes with KEY.  The file\n"
	"    list stays in the manifest file, bound by its sha256: readers look for it\n"
	"    under its subject name beside the envelope.  The default output is\n"
	"    NAME.manifest.dsse.json beside the manifest.  A manifest as ingot writes it\n"
	"    (canonical JSON) is hashed, and only its head parsed.\n"
	"\n"
	"    Given an envelope, adds KEY's signature to it (several release keys can sign\n"
	"    one manifest; see the keyring threshold) and rewrites it in place unless -o\n"
	"    is given.  The payload is not changed.  A key that already signed is refused.\n"
	"\n"
	"    Ed25519 signatures are deterministic: the same manifest and key give the\n"
	"    same envelope bytes.  Outputs are written atomically (temp file + rename).\n",
	.more =
	"EXIT STATUS\n"
	"    0   signed\n"
	"    1   failure (unreadable or refused key, wrong passphrase, already signed, I/O)\n"
	"    2   the input is not a valid manifest or envelope\n"
	"    64  usage error\n"
	"\n"
	"EXAMPLES\n"
	"    ingot sign out/demo.manifest.json --key release-1.key\n"
	"    ingot sign out/demo.manifest.dsse.json --key release-2.key\n"
	"    ingot sign m.json --key k.key --passphrase-fd 3 -o m.dsse.json 3<pass.txt\n",
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* demo.manifest.json -> demo.manifest.dsse.json; x.json -> x.dsse.json. */
static char *default_output(const char *in)
{
	size_t n = strlen(in);
	if (n > 5 && !strcmp(in + n - 5, ".json"))
		return xasprintf("%.*s.dsse.json", (int)(n - 5), in);
	return xasprintf("%s.dsse.json", in);
}

int cmd_sign(int argc, char **argv)
{
	_cleanup_free_ char *defout = NULL;
	_cleanup_json_ json_t *doc = NULL, *env = NULL, *st = NULL, *head = NULL;
	uint8_t digest[32];
	_cleanup_signing_key_ struct signing_key *k = NULL;
	const char *keypath = NULL, *out = NULL, *in;
	ingot_error e = { 0 };
	bool is_env;
	int fd = -1;
	int c, r;

	const struct cli_option opts[] = {
		OPT__KEY('k', &keypath,
			   "private key (PEM PKCS#8; mode 0600 or stricter, files\n"
			   "readable by group or others are refused)"),
		OPT__OUTPUT(&out, "OUT", "where to write the envelope"),
		OPT_CALLBACK(0, "passphrase-fd", &fd, "N",
			     "read the key's passphrase from file descriptor N;\n"
			     "else INGOT_KEY_PASSPHRASE.  Never on the command line.", cli_parse_fd),
		OPT_END(),
	};

	if ((c = cli_parse(&sign_cmd, opts, argc, argv, &optind)) >= 0)
		return c;
	if (argc - optind != 1)
		return cli_usage_error("sign", "expected one MANIFEST or ENVELOPE file");
	if (!keypath)
		return cli_usage_error("sign", "--key KEY is required");
	in = argv[optind];

	/* Read once and checked before any key is read: an envelope, or a
	 * manifest's head and the digest of its bytes. */
	r = manifest_read_signable(in, &doc, &head, digest, &e);
	if (r < 0)
		return cli_error(&e, r == -ENOMEM || (r != -EFBIG && r != -EBADMSG && r != -EINVAL)
				 ? EXIT_FAILURE_ : SIGN_EXIT_MALFORMED);
	is_env = doc != NULL;
	if (!is_env && (r = statement_for_head(in, head, base_name(in), digest, &st, &e)) < 0)
		return cli_error(&e, r == -ENOMEM ? EXIT_FAILURE_ : SIGN_EXIT_MALFORMED);

	if (fd >= 0) {
		char *pass = NULL;
		r = key_read_passphrase_fd((int)fd, &pass, &e);
		if (r == 0)
			r = signing_key_load_pass(keypath, pass, &k, &e);
		key_passphrase_free(pass);
	} else {
		r = signing_key_load(keypath, &k, &e);
	}
	if (r < 0)
		return cli_error(&e, EXIT_FAILURE_);

	if (is_env) {
		r = envelope_add_signature(doc, k, &e);
		if (r < 0) {
			ingot_prefix(&e, "%s", in);
			return cli_error(&e, r == -EEXIST || r == -ENOMEM ? EXIT_FAILURE_ : SIGN_EXIT_MALFORMED);
		}
		if (!out)
			out = in;
		r = json_write_file_as(out, doc, envelope_canonical, 0644, &e);
	} else {
		r = envelope_sign_statement(st, k, &env, &e);
		if (r < 0)
			return cli_error(&e, EXIT_FAILURE_);
		if (!out)
			out = defout = default_output(in);
		r = json_write_file_as(out, env, envelope_canonical, 0644, &e);
	}
	if (r < 0)
		return cli_error(&e, EXIT_FAILURE_);
	printf("%s: signed by %s (%s)\n", out, k->keyid, key_type_name(k->type));
	return EXIT_OK;
}
