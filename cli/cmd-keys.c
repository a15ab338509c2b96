/* ingot keys: generate signing keys, print key ids, manage keyrings. */
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "keys/key.h"
#include "keys/keyring.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"

static const struct cli_command keys_cmd = {
	.name = "keys",
	.summary = "create signing keys, print key ids, manage keyrings",
	.synopsis =
	"    ingot keys generate [--type ed25519|p256] -o PREFIX [--passphrase-fd N]\n"
	"    ingot keys id PUBKEY...\n"
	"    ingot keys keyring add KEYRING PUBKEY --name NAME [--threshold N] [--role ROLE,...]\n"
	"    ingot keys keyring list KEYRING\n",
	.description =
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
	"    With --role (manifest, enrolment, firmware-ref, evidence, promotion; a\n"
	"    comma-separated list) the keyring has roles: the key is trusted for the\n"
	"    roles named only, and --threshold sets those roles' thresholds.  A\n"
	"    statement is verified against the keys of its own role: a key trusted for\n"
	"    one role proves nothing in another.  An untyped keyring (no --role) vouches\n"
	"    only for the statements a command names it for (docs/signing.md).\n"
	"    keyring list prints one line per key: keyid, type, name, then one line per\n"
	"    role: its threshold and keys.\n",
	.more =
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
	"    ingot keys keyring add pool.keyring.json release-2.pub --name release-2 --threshold 2\n"
	"    ingot keys keyring add trust.json release-1.pub --name release-1 --role manifest\n"
	"    ingot keys keyring add trust.json verifier.pub --name verifier --role enrolment,firmware-ref\n",
};

/* What `ingot keys` was given; each subcommand takes its part. */
struct keys_opts {
	enum key_type type;
	bool type_set;
	const char *prefix, *name;
	int fd;                /* --passphrase-fd; -1: none */
	unsigned threshold;    /* 0: none */
	unsigned roles;        /* --role: a mask of 1u << KEY_ROLE_* */
};

static const char *parse_type(const char *arg, void *value)
{
	struct keys_opts *o = value;
	o->type_set = true;
	return key_type_from_name(arg, &o->type) < 0 ? "ed25519 or p256" : NULL;
}

static const char *parse_threshold(const char *arg, void *value)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (*arg < '0' || *arg > '9' || errno || *end || v < 1 || v > KEYRING_MAX_KEYS)
		return "1..256";
	*(unsigned *)value = (unsigned)v;
	return NULL;
}
_Static_assert(KEYRING_MAX_KEYS == 256, "parse_threshold's message");

static const char *parse_roles(const char *arg, void *value)
{
	_cleanup_free_ char *copy = xstrdup(arg);
	char *save = NULL;
	unsigned mask = 0;

	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		enum key_role r;
		if (key_role_parse(t, &r) < 0)
			return "a comma-separated list of manifest, enrolment, firmware-ref, evidence, promotion";
		mask |= 1u << r;
	}
	if (!mask)
		return "a comma-separated list of manifest, enrolment, firmware-ref, evidence, promotion";
	*(unsigned *)value = mask;
	return NULL;
}

static int keys_generate(const struct keys_opts *o, int argc, char **argv)
{
	char *pass = NULL;
	char keyid[KEYID_HEX_LEN + 1];
	ingot_error e = { 0 };
	int r;

	if (o->name || o->threshold)
		return cli_usage_error("keys", "generate: --name and --threshold are for keyring add");
	if (o->roles)
		return cli_usage_error("keys", "generate: --role is for keyring add");
	if (!o->prefix)
		return cli_usage_error("keys", "generate: -o PREFIX is required");
	if (argc != 1)
		return cli_usage_error("keys", "generate: unexpected argument '%s'", argv[1]);
	if (o->fd >= 0) {
		r = key_read_passphrase_fd(o->fd, &pass, &e);
		if (r < 0)
			return cli_error(&e, EXIT_FAILURE_);
	}
	r = key_generate(o->type, o->prefix, o->fd >= 0 ? pass : getenv(KEY_PASSPHRASE_ENV), keyid, &e);
	key_passphrase_free(pass);
	if (r < 0)
		return cli_error(&e, EXIT_FAILURE_);
	printf("%s  %s.pub (%s)\n", keyid, o->prefix, key_type_name(o->type));
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

static int keys_keyring(const struct keys_opts *o, int argc, char **argv)
{
	const char *name = o->name;
	unsigned threshold = o->threshold;
	ingot_error e = { 0 };

	if (argc < 2)
		return cli_usage_error("keys", "keyring: expected 'add' or 'list'");
	if (o->prefix || o->type_set || o->fd >= 0)
		return cli_usage_error("keys", "keyring: --type, --output and --passphrase-fd are for "
				       "generate");
	const char *sub = argv[1];
	argc--; argv++;
	if (!strcmp(sub, "add")) {
		if (argc - 1 != 2)
			return cli_usage_error("keys", "keyring add: expected KEYRING PUBKEY");
		if (!name)
			return cli_usage_error("keys", "keyring add: --name NAME is required");
		if (keyring_add(argv[1], argv[2], name, threshold, o->roles, &e) < 0)
			return cli_error(&e, EXIT_FAILURE_);
		printf("added %s to %s\n", name, argv[1]);
		return EXIT_OK;
	}
	if (!strcmp(sub, "list")) {
		struct keyring *kr = NULL;
		if (argc - 1 != 1 || name || threshold || o->roles)
			return cli_usage_error("keys", "keyring list: expected KEYRING only");
		if (keyring_load(argv[1], &kr, &e) < 0)
			return cli_error(&e, EXIT_FAILURE_);
		if (kr->has_roles)
			printf("%zu keys, roles:\n", kr->n);
		else
			printf("threshold %u of %zu\n", kr->threshold, kr->n);
		for (size_t i = 0; i < kr->n; i++)
			printf("%s  %-7s  %s\n", kr->keys[i].key->keyid,
			       key_type_name(kr->keys[i].key->type), kr->keys[i].name);
		for (unsigned i = 0; i < KEY_ROLE_COUNT; i++) {
			const struct keyring_role *ro = &kr->roles[i];
			if (!kr->has_roles)
				break;
			printf("role %s: ", key_role_name(i));
			if (!ro->idx)
				printf("no keys (it verifies nothing)");
			else
				printf("threshold %u of", ro->threshold);
			for (size_t j = 0; ro->idx && j < ro->n; j++)
				printf(" %s", kr->keys[ro->idx[j]].name);
			printf("\n");
		}
		keyring_free(kr);
		return EXIT_OK;
	}
	return cli_usage_error("keys", "keyring: unknown subcommand '%s' (expected add or list)", sub);
}

int cmd_keys(int argc, char **argv)
{
	struct keys_opts o = { .type = KEY_ED25519, .fd = -1 };
	const struct cli_option opts[] = {
		OPT_CALLBACK('t', "type", &o, "TYPE", "ed25519 (default) or p256 (ECDSA P-256, SHA-256)",
			     parse_type),
		OPT__OUTPUT(&o.prefix, "PREFIX", "write PREFIX.key and PREFIX.pub"),
		OPT_CALLBACK(0, "passphrase-fd", &o.fd, "N",
			     "read the passphrase from file descriptor N (one line);\n"
			     "else INGOT_KEY_PASSPHRASE; neither: not encrypted", cli_parse_fd),
		OPT_STRING('n', "name", &o.name, "NAME", "keyring entry name (printable, no spaces)"),
		OPT_CALLBACK(0, "threshold", &o.threshold, "N", "keyring threshold, 1 .. number of keys",
			     parse_threshold),
		OPT_CALLBACK(0, "role", &o.roles, "ROLE,...", "keyring add: the roles the key is trusted for\n"
			     "(manifest, enrolment, firmware-ref, evidence, promotion)", parse_roles),
		OPT_END(),
	};
	int first, r;

	if (argc < 2)
		return cli_usage_error("keys", "expected a subcommand: generate, id or keyring");
	if ((r = cli_parse(&keys_cmd, opts, argc, argv, &first)) >= 0)
		return r;
	/* The operands, the subcommand first, as argv of their own. */
	argc -= first - 1;
	argv += first - 1;
	if (argc < 2)
		return cli_usage_error("keys", "expected a subcommand: generate, id or keyring");
	if (!strcmp(argv[1], "generate"))
		return keys_generate(&o, argc - 1, argv + 1);
	if (!strcmp(argv[1], "id")) {
		if (o.prefix || o.name || o.threshold || o.roles || o.type_set || o.fd >= 0)
			return cli_usage_error("keys", "id: takes no options");
		return keys_id(argc - 1, argv + 1);
	}
	if (!strcmp(argv[1], "keyring"))
		return keys_keyring(&o, argc - 1, argv + 1);
	return cli_usage_error("keys", "unknown subcommand '%s' (expected generate, id or keyring)",
			       argv[1]);
}
