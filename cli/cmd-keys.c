/* ingot keys: generate signing keys, print key ids, manage keyrings. */
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "keys/key.h"
#include "keys/keyring.h"

static const char keys_help[] =
"NAME\n"
"    ingot keys - create signing keys, print key ids, manage keyrings\n"
"\n"
"SYNOPSIS\n"
"    ingot keys generate [--type ed25519|p256] -o PREFIX [--passphrase-fd N]\n"
"    ingot keys id PUBKEY...\n"
"    ingot keys keyring add KEYRING PUBKEY --name NAME [--threshold N]\n"
"    ingot keys keyring list KEYRING\n"
"\n"
"DESCRIPTION\n"
"    generate writes a new key pair: PREFIX.key, the private key (PKCS#8 PEM,\n"
"    mode 0600) and PREFIX.pub, the public key (SubjectPublicKeyInfo PEM, mode\n"
"    0644), and prints the key id.  Existing files are never overwritten.  With a\n"
"    passphrase the private key is encrypted (PBES2, AES-256-CBC).  Private key\n"
"    material is never printed.  The files work with openssl(1): `openssl pkeyutl\n"
"    -verify -pubin -inkey PREFIX.pub ...`.\n"
"\n"
"    id prints the key id of each public key: the lower-case hex sha256 of its DER\n"
"    SubjectPublicKeyInfo (the same as `openssl pkey -pubin -in PUB -outform DER |\n"
"    sha256sum`).  DSSE signatures name their key by this id.\n"
"\n"
"    keyring add appends PUBKEY under NAME to the keyring file KEYRING (JSON,\n"
"    created with threshold 1 if missing) and optionally sets its threshold: the\n"
"    number of distinct keys whose valid signatures verify-manifest requires.\n"
"    keyring list prints one line per key: keyid, type, name.\n"
"\n"
"OPTIONS\n"
"    -t, --type TYPE        ed25519 (default) or p256 (ECDSA P-256, SHA-256)\n"
"    -o, --output PREFIX    write PREFIX.key and PREFIX.pub\n"
"    --passphrase-fd N      read the passphrase from file descriptor N (one line);\n"
"                           else INGOT_KEY_PASSPHRASE; neither: not encrypted\n"
"    -n, --name NAME        keyring entry name (printable, no spaces)\n"
"    --threshold N          keyring threshold, 1 .. number of keys\n"
"    -h, --help             show this help\n"
"\n"
"EXIT STATUS\n"
"    0   success\n"
"    1   failure (I/O, existing key file, invalid key or keyring, duplicate entry)\n"
"    64  usage error\n"
"\n"
"EXAMPLES\n"
"    ingot keys generate -o release-1\n"
"    ingot keys generate --type p256 -o hsm-backup --passphrase-fd 3 3<pass.txt\n"
"    ingot keys id release-1.pub\n"
"    ingot keys keyring add pool.keyring.json release-1.pub --name release-1\n"
"    ingot keys keyring add pool.keyring.json release-2.pub --name release-2 --threshold 2\n";

static int parse_uint(const char *s, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;
	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int keys_generate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "type", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "passphrase-fd", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	enum key_type type = KEY_ED25519;
	const char *prefix = NULL;
	char *pass = NULL;
	char keyid[KEYID_HEX_LEN + 1];
	ingot_error e = { 0 };
	unsigned fd = 0;
	bool have_fd = false;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "t:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (key_type_from_name(optarg, &type) < 0)
				return cli_usage_error("keys", "--type: expected ed25519 or p256, got '%s'", optarg);
			break;
		case 'o': prefix = optarg; break;
		case 'P':
			if (parse_uint(optarg, 1u << 20, &fd) < 0)
				return cli_usage_error("keys", "--passphrase-fd: expected a file descriptor number, got '%s'", optarg);
			have_fd = true;
			break;
		case 'h': fputs(keys_help, stdout); return EXIT_OK;
		default: return cli_usage_error("keys", "unknown option");
		}
	}
	if (!prefix)
		return cli_usage_error("keys", "generate: -o PREFIX is required");
	if (optind != argc)
		return cli_usage_error("keys", "generate: unexpected argument '%s'", argv[optind]);
	if (have_fd) {
		r = key_read_passphrase_fd((int)fd, &pass, &e);
		if (r < 0)
			return cli_error(&e, EXIT_FAILURE_);
	}
	r = key_generate(type, prefix, have_fd ? pass : getenv(KEY_PASSPHRASE_ENV), keyid, &e);
	key_passphrase_free(pass);
	if (r < 0)
		return cli_error(&e, EXIT_FAILURE_);
	printf("%s  %s.pub (%s)\n", keyid, prefix, key_type_name(type));
	return EXIT_OK;
}

static int keys_id(int argc, char **argv)
{
	int status = EXIT_OK;
	if (argc < 2)
		return cli_usage_error("keys", "id: expected at least one public key file");
	for (int i = 1; i < argc; i++) {
		struct public_key *k = NULL;
		ingot_error e = { 0 };
		if (public_key_load(argv[i], &k, &e) < 0) {
			status = cli_error(&e, EXIT_FAILURE_);
			continue;
		}
		printf("%s  %s (%s)\n", k->keyid, argv[i], key_type_name(k->type));
		public_key_free(k);
	}
	return status;
}

static int keys_keyring(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "threshold", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *name = NULL;
	unsigned threshold = 0;
	ingot_error e = { 0 };
	int c;

	if (argc < 2)
		return cli_usage_error("keys", "keyring: expected 'add' or 'list'");
	const char *sub = argv[1];
	argc--; argv++;
	optind = 1;
	while ((c = getopt_long(argc, argv, "n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': name = optarg; break;
		case 'T':
			if (parse_uint(optarg, KEYRING_MAX_KEYS, &threshold) < 0 || threshold == 0)
				return cli_usage_error("keys", "--threshold: expected 1..%d, got '%s'",
						       KEYRING_MAX_KEYS, optarg);
			break;
		case 'h': fputs(keys_help, stdout); return EXIT_OK;
		default: return cli_usage_error("keys", "unknown option");
		}
	}
	if (!strcmp(sub, "add")) {
		if (argc - optind != 2)
			return cli_usage_error("keys", "keyring add: expected KEYRING PUBKEY");
		if (!name)
			return cli_usage_error("keys", "keyring add: --name NAME is required");
		if (keyring_add(argv[optind], argv[optind + 1], name, threshold, &e) < 0)
			return cli_error(&e, EXIT_FAILURE_);
		printf("added %s to %s\n", name, argv[optind]);
		return EXIT_OK;
	}
	if (!strcmp(sub, "list")) {
		struct keyring *kr = NULL;
		if (argc - optind != 1 || name || threshold)
			return cli_usage_error("keys", "keyring list: expected KEYRING only");
		if (keyring_load(argv[optind], &kr, &e) < 0)
			return cli_error(&e, EXIT_FAILURE_);
		printf("threshold %u of %zu\n", kr->threshold, kr->n);
		for (size_t i = 0; i < kr->n; i++)
			printf("%s  %-7s  %s\n", kr->keys[i].key->keyid,
			       key_type_name(kr->keys[i].key->type), kr->keys[i].name);
		keyring_free(kr);
		return EXIT_OK;
	}
	return cli_usage_error("keys", "keyring: unknown subcommand '%s' (expected add or list)", sub);
}

int cmd_keys(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error("keys", "expected a subcommand: generate, id or keyring");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || cli_wants_help(argc, argv)) {
		fputs(keys_help, stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "generate"))
		return keys_generate(argc - 1, argv + 1);
	if (!strcmp(argv[1], "id"))
		return keys_id(argc - 1, argv + 1);
	if (!strcmp(argv[1], "keyring"))
		return keys_keyring(argc - 1, argv + 1);
	return cli_usage_error("keys", "unknown subcommand '%s' (expected generate, id or keyring)",
			       argv[1]);
}
