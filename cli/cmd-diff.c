/* ingot diff: what changed between two manifests. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "audit/diff.h"
#include "manifest/mdoc.h"
#include "cli/cli.h"
#include "lib/cleanup.h"
#include "lib/json.h"

/* Exit statuses beyond cli.h's. */
enum {
	DIFF_SAME = 0,
	DIFF_DIFFERENT = 1,
	DIFF_BAD_INPUT = 2,
};

static const struct cli_command diff_cmd = {
	.name = "diff",
	.summary = "what changed between two manifests",
	.synopsis =
	"    ingot diff [--json] A B\n",
	.description =
	"    Compares two image manifests (NAME.manifest.json) or the DSSE envelopes\n"
	"    that carry them (NAME.manifest.dsse.json; signatures are not checked here,\n"
	"    use 'ingot verify-manifest' for that) and lists, from A to B:\n"
	"\n"
	"      tuple      every GPU tuple field that changed (dotted path, old -> new)\n"
	"      artifacts  artifacts added (+), removed (-) or changed (~: sha256, size,\n"
	"                 kind, source), matched by name\n"
	"      files      image files added, removed or changed (~: sha256, size, mode,\n"
	"                 uid, gid, type, symlink target), matched by path\n"
	"      other      everything else: recipe, serial, expiry, image and verity\n"
	"                 digests, measurement\n"
	"\n"
	"    This is the review before a candidate tuple moves lab -> canary -> ring:\n"
	"    a one-component bump should show that component, its artifact and its\n"
	"    files, and nothing else. sha256 values are shortened to 16 hex digits in\n"
	"    the text output; --json gives them in full.\n",
	.more =
	"EXIT STATUS\n"
	"    0   the manifests are identical\n"
	"    1   they differ\n"
	"    2   bad input: a file is unreadable, not JSON, not a manifest or envelope,\n"
	"        or lists an artifact name or file path twice\n"
	"    64  usage error\n"
	"\n"
	"EXAMPLES\n"
	"    ingot diff out/h100.manifest.json candidate/h100.manifest.json\n"
	"    ingot diff --json lab.manifest.dsse.json canary.manifest.dsse.json | jq .tuple\n",
};

int cmd_diff(int argc, char **argv)
{
	_cleanup_mdoc_ struct mdoc a = { 0 }, b = { 0 };
	_cleanup_(manifest_diff_release) struct manifest_diff d = { 0 };
	ingot_error e = { 0 };
	bool json = false;
	int c;
	const struct cli_option opts[] = {
		OPT__JSON(&json,
			 "print the difference as canonical JSON (schema in docs/audit.md)"),
		OPT_END(),
	};

	if ((c = cli_parse(&diff_cmd, opts, argc, argv, &optind)) >= 0)
		return c;
	if (argc - optind != 2)
		return cli_usage_error("diff", "expected two manifests, got %d argument%s",
				       argc - optind, argc - optind == 1 ? "" : "s");

	if (mdoc_load(argv[optind], &a, &e) < 0 || mdoc_load(argv[optind + 1], &b, &e) < 0 ||
	    manifest_diff(a.manifest, b.manifest, argv[optind], argv[optind + 1], &d, &e) < 0)
		return cli_error(&e, DIFF_BAD_INPUT);

	if (json) {
		_cleanup_json_ json_t *diff = manifest_diff_json(&d);
		_cleanup_free_ char *s = NULL;
		if (diff && (json_object_set_new(diff, "a", json_string(argv[optind])) < 0 ||
			     json_object_set_new(diff, "b", json_string(argv[optind + 1])) < 0))
			json_decref(TAKE_PTR(diff));
		s = diff ? json_canonical(diff, NULL) : NULL;
		if (!s)
			return cli_error(&(ingot_error){ .msg = "diff: out of memory" }, DIFF_BAD_INPUT);
		fputs(s, stdout);
	} else {
		manifest_diff_print(&d, argv[optind], argv[optind + 1], stdout);
	}
	if (fflush(stdout) != 0)
		return cli_error(&(ingot_error){ .msg = "diff: cannot write to standard output" },
				 DIFF_BAD_INPUT);
	return d.identical ? DIFF_SAME : DIFF_DIFFERENT;
}
