/* ingot lint: check a recipe's GPU tuple against the version-chain rules. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "recipes/lint.h"

/* Exit statuses (documented in the help below and docs/tuple.md). */
enum {
	LINT_EXIT_CLEAN = 0,
	LINT_EXIT_WARNINGS = 1,   /* warnings only, with --strict */
	LINT_EXIT_ERRORS = 2,
	LINT_EXIT_BAD_INPUT = 3,  /* recipe or rules unreadable or malformed, bad --date */
};

static const struct cli_command lint_cmd = {
	.name = "lint",
	.summary = "check a recipe's GPU tuple against the version-chain rules",
	.synopsis =
	"    ingot lint RECIPE [--rules DIR] [--date YYYY-MM-DD] [--json] [--strict]\n"
	"    ingot lint MANIFEST.json [OPTIONS]\n",
	.description =
	"    Reads the tuple: section of RECIPE (driver, flavor, fabric manager, CUDA or\n"
	"    ROCm, NCCL or RCCL, container toolkit, firmware, ...) and evaluates every\n"
	"    rule in DIR/*.yaml against it: minimum driver per CUDA release, fabric\n"
	"    manager == driver on NVSwitch systems, open kernel modules on Grace Hopper\n"
	"    and Blackwell, the last driver branch and CUDA release per architecture,\n"
	"    CVE-2025-23266 fixed releases, ROCm streams, vendor mixes, support windows.\n"
	"    Each finding names the rule, its severity, the tuple fields involved, the\n"
	"    recipe position, what to change, and the source of the fact.\n"
	"    It also checks that each tuple field's artifact: names an artifact of the\n"
	"    recipe. Only the tuple is linted; `ingot build` checks the rest and runs\n"
	"    lint itself.\n"
	"\n"
	"    Given a built image's manifest (a file ending in .json), lints the tuple\n"
	"    recorded in it: re-check a pool against today's rules, e.g. whether its\n"
	"    driver branch is still supported (--date).\n",
	.more =
	"EXIT STATUS\n"
	"    0   no errors (warnings allowed unless --strict)\n"
	"    1   warnings only, with --strict\n"
	"    2   at least one error finding\n"
	"    3   bad input: recipe or rule file unreadable or malformed, bad --date\n"
	"    64  usage error\n"
	"\n"
	"EXAMPLES\n"
	"    ingot lint recipes/h100-r580-ltsb.yaml\n"
	"    ingot lint recipes/mi355x-rocm.yaml --json --strict\n"
	"    ingot lint pool.yaml --rules /etc/ingot/rules --date 2028-07-01\n"
	"    ingot lint out/h100-r580-ltsb.manifest.json --strict\n",
};

int cmd_lint(int argc, char **argv)
{
	const char *rules = NULL, *date = NULL;
	bool json = false, strict = false;
	struct lint_report *rep = NULL;
	ingot_error e = { 0 };
	int c, status;

	const struct cli_option opts[] = {
		OPT_STRING(0, "rules", &rules, "DIR",
			   "rule files (default: $INGOT_RULES, else recipes/rules next\n"
			   "to the binary's build tree, else /usr/local/share/ingot/rules)"),
		OPT_STRING(0, "date", &date, "DATE",
			   "evaluate support windows on DATE (YYYY-MM-DD, default today, UTC)"),
		OPT__JSON(&json, "print the report as canonical JSON (docs/tuple.md)"),
		OPT_FLAG(0, "strict", &strict, "treat warnings as failures (exit 1)"),
		OPT_END(),
	};

	if ((c = cli_parse(&lint_cmd, opts, argc, argv, &optind)) >= 0)
		return c;
	if (argc - optind != 1)
		return cli_usage_error("lint", "expected exactly one RECIPE, got %d", argc - optind);

	{
		const char *in = argv[optind];
		size_t len = strlen(in);
		int r = len > 5 && !strcmp(in + len - 5, ".json") ?
			lint_manifest_file(in, rules, date, &rep, &e) :
			lint_recipe_file(in, rules, date, &rep, &e);
		if (r < 0)
			return cli_error(&e, LINT_EXIT_BAD_INPUT);
	}
	if (lint_report_print(rep, stdout, json) < 0) {
		lint_report_free(rep);
		fprintf(stderr, "ingot: lint: cannot write the report\n");
		return LINT_EXIT_BAD_INPUT;
	}
	if (lint_report_errors(rep))
		status = LINT_EXIT_ERRORS;
	else if (strict && lint_report_warnings(rep))
		status = LINT_EXIT_WARNINGS;
	else
		status = LINT_EXIT_CLEAN;
	lint_report_free(rep);
	return status;
}
