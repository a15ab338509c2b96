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

enum { SIGN_EXIT_MALFORMED = 2 };

static const char sign_help[] =
"NAME\n"
"    ingot sign - sign a manifest (DSSE envelope), or add a signature to an envelope\n"
"\n"
"SYNOPSIS\n"
"    ingot sign MANIFEST.json|ENVELOPE.dsse.json --key KEY [-o OUT] [--passphrase-fd N]\n"
"\n"
"DESCRIPTION\n"
"    Given a manifest (NAME.manifest.json), writes a DSSE envelope whose payload\n"
"    is an in-toto Statement v1: subject = the image file and its sha256,\n"
"    predicateType https://ingot.dev/manifest/v1, predicate = the manifest; and\n"
"    signs the DSSE PAE bytes with KEY.  The default output is\n"
"    NAME.manifest.dsse.json beside the manifest.\n"
"\n"
"    Given an envelope, adds KEY's signature to it (several release keys can sign\n"
"    one manifest; see the keyring threshold) and rewrites it in place unless -o\n"
"    is given.  The payload is not changed.  A key that already signed is refused.\n"
"\n"
"    Ed25519 signatures are deterministic: the same manifest and key give the\n"
"    same envelope bytes.  Outputs are written atomically (temp file + rename).\n"
"\n"
"OPTIONS\n"
"    -k, --key KEY          private key (PEM PKCS#8; mode 0600 or stricter, files\n"
"                           readable by group or others are refused)\n"
"    -o, --output OUT       where to write the envelope\n"
"    --passphrase-fd N      read the key's passphrase from file descriptor N;\n"
"                           else INGOT_KEY_PASSPHRASE.  Never on the command line.\n"
"    -h, --help             show this help\n"
"\n"
"EXIT STATUS\n"
"    0   signed\n"
"    1   failure (unreadable or refused key, wrong passphrase, already signed, I/O)\n"
"    2   the input is not a valid manifest or envelope\n"
"    64  usage error\n"
"\n"
"EXAMPLES\n"
"    ingot sign out/demo.manifest.json --key release-1.key\n"
"    ingot sign out/demo.manifest.dsse.json --key release-2.key\n"
"    ingot sign m.json --key k.key --passphrase-fd 3 -o m.dsse.json 3<pass.txt\n";

/* demo.manifest.json -> demo.manifest.dsse.json; x.json -> x.dsse.json. */
static char *default_output(const char *in)
{
	size_t n = strlen(in);
	char *out = NULL;
	if (n > 5 && !strcmp(in + n - 5, ".json")) {
		if (asprintf(&out, "%.*s.dsse.json", (int)(n - 5), in) < 0)
			return NULL;
	} else if (asprintf(&out, "%s.dsse.json", in) < 0) {
		return NULL;
	}
	return out;
}

int cmd_sign(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "output", required_argument, NULL, 'o' },
		{ "passphrase-fd", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	_cleanup_free_ char *defout = NULL;
	_cleanup_json_ json_t *doc = NULL, *env = NULL, *st = NULL;
	_cleanup_signing_key_ struct signing_key *k = NULL;
	const char *keypath = NULL, *out = NULL, *in;
	ingot_error e = { 0 };
	bool is_env;
	long fd = -1;
	int c, r;

	if (cli_wants_help(argc, argv)) {
		fputs(sign_help, stdout);
		return EXIT_OK;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "k:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'k': keypath = optarg; break;
		case 'o': out = optarg; break;
		case 'P': {
			char *end;
			errno = 0;
			fd = strtol(optarg, &end, 10);
			if (errno || *end || !*optarg || fd < 0 || fd > (1 << 20))
				return cli_usage_error("sign", "--passphrase-fd: expected a file descriptor number, got '%s'", optarg);
			break;
		}
		case 'h': fputs(sign_help, stdout); return EXIT_OK;
		default: return cli_usage_error("sign", "unknown option");
		}
	}
	if (argc - optind != 1)
		return cli_usage_error("sign", "expected one MANIFEST or ENVELOPE file");
	if (!keypath)
		return cli_usage_error("sign", "--key KEY is required");
	in = argv[optind];

	r = manifest_read_file(in, &doc, NULL, &e);
	if (r < 0)
		return cli_error(&e, r == -EFBIG || r == -EBADMSG ? SIGN_EXIT_MALFORMED : EXIT_FAILURE_);
	is_env = json_is_object(doc) && json_object_get(doc, "payloadType");
	/* Checks the manifest in full before any key is read; the statement
	 * is what gets signed below, so the check is done once. */
	if (!is_env && (r = statement_for_manifest(in, doc, &st, &e)) < 0)
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
		if (!out && !(out = defout = default_output(in)))
			return cli_error(&(ingot_error){ .msg = "out of memory" }, EXIT_FAILURE_);
		r = json_write_file_as(out, env, envelope_canonical, 0644, &e);
	}
	if (r < 0)
		return cli_error(&e, EXIT_FAILURE_);
	printf("%s: signed by %s (%s)\n", out, k->keyid, key_type_name(k->type));
	return EXIT_OK;
}
