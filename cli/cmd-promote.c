/* ingot promote: promote an image to a ring when the ring's policy is met. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops/evidence.h"
#include "ops/promote.h"
#include "cli/cli.h"
#include "keys/envelope.h"
#include "lib/time.h"
#include "verify/promotion.h"

static const struct cli_command promote_cmd = {
	.name = "promote",
	.summary = "promote an image to a ring (lab, canary, production)",
	.synopsis =
	"    ingot promote --manifest M --ring RING --evidence DIR --key KEY [--key KEY]...\n"
	"                  [--rings DIR] [--promotions DIR] [--now TIME]\n",
	.description =
	"    Reads the ring's policy (DIR/RING.yaml, see docs/promote.md) and checks, for\n"
	"    the image named by the manifest M:\n"
	"      evidence  for each kind the policy lists, a statement in the evidence DIR\n"
	"                (*" EVIDENCE_SUFFIX ") signed by the threshold of the kind's\n"
	"                keyring, whose subject is this image and whose result meets the\n"
	"                bars (busbw at large messages, node count, DCGM level and pass)\n"
	"      soak      the image was promoted to the previous ring at least the\n"
	"                policy's soak time before --now\n"
	"      keys      the given keys meet the ring's promotion keyring threshold\n"
	"    If all hold, writes PROMOTIONS/RING-SERIAL" PROMOTION_SUFFIX ": an in-toto\n"
	"    Statement (" PROMOTION_PREDICATE_TYPE ") with the ring, the next\n"
	"    serial, the image, the policy's digest, the previous ring's promotion and\n"
	"    the digests of the evidence used, signed by every KEY.  With rollback\n"
	"    evidence (the candidate rolled back to the ring's previous image) and\n"
	"    retire-previous-after: rollback, it also retires that previous image.\n"
	"    Otherwise nothing is written and every unmet requirement is named.\n",
	.more =
	"EXIT STATUS\n"
	"    0   promoted\n"
	"    1   failure (key refused, I/O)\n"
	"    2   a policy, keyring or manifest is malformed\n"
	"    3   refused: the policy is not met (each reason named)\n"
	"    64  usage error\n",
};


int cmd_promote(int argc, char **argv)
{
	struct promote_opts o = { .rings_dir = "recipes/rings", .promotions_dir = "promotions",
				  .now = time(NULL) };
	const char *keypaths[SIGN_MAX_KEYS];
	struct signing_key *keys[SIGN_MAX_KEYS];
	struct promote_result res;
	ingot_error e = { 0 };
	size_t n_keys = 0;
	int c, r;

	struct cli_list keylist = { keypaths, 0, SIGN_MAX_KEYS };
	const struct cli_option opts[] = {
		OPT_STRING(0, "manifest", &o.manifest_path, "M", "the image's manifest or signed envelope"),
		OPT_STRING(0, "ring", &o.ring, "RING", "the ring to promote to"),
		OPT_STRING(0, "evidence", &o.evidence_dir, "DIR", "evidence statements (ingot evidence add)"),
		OPT__KEYS(&keylist, "promotion key (repeat to meet a threshold above 1)"),
		OPT_STRING(0, "rings", &o.rings_dir, "DIR", "ring policies (default recipes/rings)"),
		OPT_STRING(0, "promotions", &o.promotions_dir, "DIR",
			   "promotion statements, read and written (default promotions)"),
		OPT_CALLBACK(0, "now", &o.now, "TIME", "RFC 3339 or epoch seconds (default: the clock)",
			     cli_parse_time),
		OPT_END(),
	};

	if ((c = cli_parse(&promote_cmd, opts, argc, argv, &optind)) >= 0)
		return c;
	n_keys = keylist.n;
	if (optind < argc)
		return cli_usage_error("promote", "unexpected argument '%s'", argv[optind]);
	if (!o.manifest_path || !o.ring || !o.evidence_dir || !n_keys)
		return cli_usage_error("promote", "--manifest, --ring, --evidence and --key are required");
	if ((r = cli_load_keys(keypaths, n_keys, keys)) != 0)
		return r;
	r = promote_image(&o, keys, n_keys, &res, &e);
	cli_free_keys(keys, n_keys);
	if (r < 0)
		return cli_error(&e, EXIT_FAILURE_);
	printf("%s: promoted to %s, serial %llu, %zu evidence statement(s)%s%.16s%s\n", res.path,
	       o.ring, res.serial, res.n_evidence, *res.retired ? "; retired " : "", res.retired,
	       *res.retired ? "..." : "");
	promote_result_free(&res);
	return EXIT_OK;
}
