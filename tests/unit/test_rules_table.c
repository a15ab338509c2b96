/* Every rule in recipes/rules/: one tuple that triggers it and a minimally
 * different one that does not, evaluated through lint_tuple on the real
 * rule files.  A rule without a case here fails the test, so a new rule
 * cannot land untested. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/yamlx.h"
#include "recipes/lint.h"
#include "recipes/rules.h"
#include "recipes/tuple.h"
#include "helpers.h"

#define RULES_DIR "recipes/rules"
#define DATE "2026-10-15"

#define NV(models) "  vendor: nvidia\n  gpu: {models: [" models "]}\n"
#define AMD(models) "  vendor: amd\n  gpu: {models: [" models "]}\n"
#define DRV(v) "  driver: {version: " v ", flavor: open}\n"
#define PDRV(v) "  driver: {version: " v ", flavor: proprietary}\n"

static const struct rule_case {
	const char *id, *date, *hit, *miss;
} cases[] = {
	/* cuda.yaml: minimum driver per release, family floors */
	{ "cuda-12.0-min-driver", DATE, NV("H100") DRV("525.60.12") "  cuda: {version: 12.0.1}\n",
	  NV("H100") DRV("525.60.13") "  cuda: {version: 12.0.1}\n" },
	{ "cuda-12.1-min-driver", DATE, NV("H100") DRV("530.30.01") "  cuda: {version: \"12.1\"}\n",
	  NV("H100") DRV("530.30.02") "  cuda: {version: \"12.1\"}\n" },
	{ "cuda-12.2-min-driver", DATE, NV("H100") DRV("535.54.02") "  cuda: {version: \"12.2\"}\n",
	  NV("H100") DRV("535.54.03") "  cuda: {version: \"12.2\"}\n" },
	{ "cuda-12.3-min-driver", DATE, NV("H100") DRV("545.23.05") "  cuda: {version: \"12.3\"}\n",
	  NV("H100") DRV("545.23.06") "  cuda: {version: \"12.3\"}\n" },
	{ "cuda-12.4-min-driver", DATE, NV("H100") DRV("550.54.13") "  cuda: {version: 12.4.1}\n",
	  NV("H100") DRV("550.54.14") "  cuda: {version: 12.4.1}\n" },
	{ "cuda-12.5-min-driver", DATE, NV("H100") DRV("555.42.01") "  cuda: {version: \"12.5\"}\n",
	  NV("H100") DRV("555.42.02") "  cuda: {version: \"12.5\"}\n" },
	{ "cuda-12.6-min-driver", DATE, NV("H100") DRV("560.28.02") "  cuda: {version: 12.6.3}\n",
	  NV("H100") DRV("560.28.03") "  cuda: {version: 12.6.3}\n" },
	{ "cuda-12.8-min-driver", DATE, NV("H100") DRV("565.57.01") "  cuda: {version: \"12.8\"}\n",
	  NV("H100") DRV("570.26") "  cuda: {version: \"12.8\"}\n" },
	{ "cuda-12.9-min-driver", DATE, NV("H100") DRV("570.195.03") "  cuda: {version: 12.9.1}\n",
	  NV("H100") DRV("575.51.03") "  cuda: {version: 12.9.1}\n" },
	{ "cuda-13.0-min-driver", DATE, NV("H100") DRV("580.65.05") "  cuda: {version: \"13.0\"}\n",
	  NV("H100") DRV("580.95.05") "  cuda: {version: \"13.0\"}\n" },
	{ "cuda-12-family-min-driver", DATE, NV("H100") DRV("520.61.05") "  cuda: {version: \"12.0\"}\n",
	  NV("H100") DRV("525.60.13") "  cuda: {version: \"12.0\"}\n" },
	{ "cuda-13-family-min-driver", DATE, NV("H100") DRV("575.51.03") "  cuda: {version: 13.3.1}\n",
	  NV("H100") DRV("580.65.06") "  cuda: {version: 13.3.1}\n" },
	{ "nccl-cuda-family", DATE,
	  NV("H100") DRV("580.95.05") "  cuda: {version: \"13.0\"}\n  nccl: {version: 2.27.7, cuda: 12.9}\n",
	  NV("H100") DRV("580.95.05") "  cuda: {version: \"13.0\"}\n  nccl: {version: 2.27.7, cuda: \"13.0\"}\n" },
	{ "nccl-cuda-newer-than-runtime", DATE,
	  NV("H100") DRV("580.95.05") "  cuda: {version: 12.8.1}\n  nccl: {version: 2.27.7, cuda: 12.9}\n",
	  NV("H100") DRV("580.95.05") "  cuda: {version: 12.9.1}\n  nccl: {version: 2.27.7, cuda: 12.9}\n" },
	{ "cuda-needs-driver", DATE, NV("H100") "  cuda: {version: \"13.0\"}\n",
	  NV("H100") DRV("580.95.05") "  cuda: {version: \"13.0\"}\n" },
	/* firmware.yaml */
	{ "firmware-validated-branch", DATE,
	  NV("H100") DRV("595.91.07") "  firmware: {vbios: [96.00.AF.00.01, 96.00.B0.00.01], driver-branch: R580}\n",
	  NV("H100") DRV("580.95.05") "  firmware: {vbios: [96.00.AF.00.01, 96.00.B0.00.01], driver-branch: R580}\n" },
	/* nvswitch.yaml */
	{ "fabric-manager-equals-driver", DATE,
	  NV("H100") "  nvswitch: true\n" DRV("580.82.07") "  fabric-manager: {version: 580.95.05}\n",
	  NV("H100") "  nvswitch: true\n" DRV("580.95.05") "  fabric-manager: {version: 580.95.05}\n" },
	{ "fabric-manager-required", DATE, NV("H100") "  nvswitch: true\n" DRV("580.95.05"),
	  NV("H100") "  nvswitch: false\n" DRV("580.95.05") },
	{ "imex-equals-driver", DATE, NV("GB200") DRV("580.95.05") "  imex: {version: 580.82.07}\n",
	  NV("GB200") DRV("580.95.05") "  imex: {version: 580.95.05}\n" },
	{ "imex-required-nvl72", DATE, NV("GB200") "  nvswitch: true\n" DRV("580.95.05"),
	  NV("GB200") "  nvswitch: true\n" DRV("580.95.05") "  imex: {version: 580.95.05}\n" },
	/* modules.yaml */
	{ "open-modules-required", DATE, NV("B200") PDRV("595.91.07"), NV("B200") DRV("595.91.07") },
	{ "open-modules-need-turing", DATE, NV("V100") DRV("580.95.05"), NV("V100") PDRV("580.95.05") },
	{ "driver-flavor-declared", DATE, NV("H100") "  driver: {version: 580.95.05}\n",
	  NV("H100") DRV("580.95.05") },
	{ "r580-last-branch-legacy-arch", DATE, NV("V100") PDRV("595.91.07"), NV("V100") PDRV("580.95.05") },
	{ "cuda13-drops-legacy-arch", DATE, NV("V100") PDRV("580.95.05") "  cuda: {version: \"13.0\"}\n",
	  NV("V100") PDRV("580.95.05") "  cuda: {version: 12.9.1}\n" },
	{ "grace-is-arm64", DATE, NV("GB200") "  platform: {cpu-arch: x86_64}\n",
	  NV("GB200") "  platform: {cpu-arch: arm64}\n" },
	/* security.yaml */
	{ "container-toolkit-cve-2025-23266", DATE, NV("H100") "  container-toolkit: {version: 1.17.7}\n",
	  NV("H100") "  container-toolkit: {version: 1.17.8}\n" },
	{ "gpu-operator-cve-2025-23266", DATE, NV("H100") "  gpu-operator: {version: 25.3.1}\n",
	  NV("H100") "  gpu-operator: {version: 25.3.2}\n" },
	{ "multi-tenant-toolkit-pinned", DATE, NV("H100") "  multi-tenant: true\n",
	  NV("H100") "  multi-tenant: true\n  container-toolkit: {version: 1.17.8}\n" },
	/* rocm.yaml */
	{ "rocm-no-8-or-9", DATE, AMD("MI300X") "  rocm: {version: 9.0.0, stream: core}\n",
	  AMD("MI300X") "  rocm: {version: 10.0.0, stream: core}\n" },
	{ "rocm-stream-matches-version", DATE, AMD("MI300X") "  rocm: {version: 10.1.0, stream: legacy}\n",
	  AMD("MI300X") "  rocm: {version: 10.1.0, stream: core}\n" },
	{ "rocm-stream-declared", DATE, AMD("MI300X") "  rocm: {version: 7.2.0}\n",
	  AMD("MI300X") "  rocm: {version: 7.2.0, stream: legacy}\n" },
	{ "rocm-smi-removed", DATE, AMD("MI300X") "  smi: rocm-smi\n  rocm: {version: 10.1.0, stream: core}\n",
	  AMD("MI300X") "  smi: amd-smi\n  rocm: {version: 10.1.0, stream: core}\n" },
	{ "rocm-10.1.0-rccl-ll-mi350", DATE, AMD("MI355X") "  rocm: {version: 10.1.0, stream: core}\n",
	  AMD("MI325X") "  rocm: {version: 10.1.0, stream: core}\n" },
	{ "rocm-10.1.0-ships-rccl-2.30.7", DATE,
	  AMD("MI300X") "  rocm: {version: 10.1.0, stream: core}\n  rccl: {version: 2.29.3}\n",
	  AMD("MI300X") "  rocm: {version: 10.1.0, stream: core}\n  rccl: {version: 2.30.7}\n" },
	/* rocm-compat.yaml: ROCm's pieces by their own versions */
	{ "rccl-hip-major", DATE, AMD("MI210") "  hip: {version: 6.1.40093}\n  rccl: {version: 2.13.4, hip: \"5.7\"}\n",
	  AMD("MI210") "  hip: {version: 5.7.31921}\n  rccl: {version: 2.13.4, hip: \"5.7\"}\n" },
	{ "rccl-2.13-is-rocm-5.4", DATE, AMD("MI210") "  hip: {version: 5.7.31921}\n  rccl: {version: 2.13.4}\n",
	  AMD("MI210") "  hip: {version: 5.4.22803}\n  rccl: {version: 2.13.4}\n" },
	{ "rccl-2.20-is-rocm-6.2", DATE, AMD("MI300X") "  hip: {version: 6.1.40093}\n  rccl: {version: 2.20.5}\n",
	  AMD("MI300X") "  hip: {version: 6.2.41133}\n  rccl: {version: 2.20.5}\n" },
	{ "rccl-2.27-is-rocm-7.1-7.2", DATE, AMD("MI300X") "  hip: {version: 7.0.51831}\n  rccl: {version: 2.27.7}\n",
	  AMD("MI300X") "  hip: {version: 7.2.26015}\n  rccl: {version: 2.27.7}\n" },
	{ "hip-hsa-same-rocm-major", DATE, AMD("MI210") "  hip: {version: 5.7.31921}\n  hsa-runtime: {version: 6.1.2}\n",
	  AMD("MI210") "  hip: {version: 5.7.31921}\n  hsa-runtime: {version: 5.7.1}\n" },
	{ "smi-lib-same-rocm-major", DATE, AMD("MI210") "  hip: {version: 5.7.31921}\n  smi-lib: {version: 6.1.2}\n",
	  AMD("MI210") "  hip: {version: 5.7.31921}\n  smi-lib: {version: 5.7.1}\n" },
	{ "rocm-gfx942-from-6.0", DATE, AMD("MI300X") "  hip: {version: 5.7.31921}\n",
	  AMD("MI300X") "  hip: {version: 6.0.32830}\n" },
	{ "rocm-gfx950-from-7.0", DATE, AMD("MI355X") "  hip: {version: 6.4.43482}\n",
	  AMD("MI355X") "  hip: {version: 7.0.51831}\n" },
	{ "rccl-code-for-gfx942", DATE, AMD("MI300X") "  rccl: {version: 2.13.4, targets: [gfx908, gfx90a]}\n",
	  AMD("MI300X") "  rccl: {version: 2.18.6, targets: [gfx90a, gfx942]}\n" },
	{ "rccl-code-for-gfx950", DATE, AMD("MI355X") "  rccl: {version: 2.27.7, targets: [gfx942]}\n",
	  AMD("MI355X") "  rccl: {version: 2.27.7, targets: [gfx942, gfx950]}\n" },
	{ "rccl-code-for-gfx908", DATE, AMD("MI100") "  rccl: {version: 2.13.4, targets: [gfx90a]}\n",
	  AMD("MI100") "  rccl: {version: 2.13.4, targets: [gfx908, gfx90a]}\n" },
	{ "rccl-code-for-gfx90a", DATE, AMD("MI250X") "  rccl: {version: 2.13.4, targets: [gfx908]}\n",
	  AMD("MI250X") "  rccl: {version: 2.13.4, targets: [gfx908, gfx90a]}\n" },
	/* vendor.yaml */
	{ "vendor-amd-no-nvidia-stack", DATE, AMD("MI355X") "  cuda: {version: \"13.0\"}\n",
	  AMD("MI355X") "  rocm: {version: 10.1.0, stream: core}\n" },
	{ "vendor-nvidia-no-amd-stack", DATE, NV("H100") "  rccl: {version: 2.30.7}\n",
	  NV("H100") "  nccl: {version: 2.27.7}\n" },
	{ "vendor-gpu-model", DATE, AMD("H100"), AMD("MI300X") },
	/* branches.yaml: support windows at the lint date */
	{ "r580-ltsb-end-of-support", "2028-07-01", NV("H100") DRV("580.95.05"),
	  NV("H100") DRV("580.95.05") },
	{ "r535-ltsb-end-of-support", "2026-07-01", NV("H100") DRV("535.274.02"),
	  NV("H100") DRV("580.95.05") },
	{ "r570-production-end-of-support", "2026-03-01", NV("H100") DRV("570.195.03"),
	  NV("H100") DRV("580.95.05") },
	/* platform.yaml */
	{ "dgx-os-8.0.0-not-arm64", DATE,
	  NV("GB200") "  platform: {os: dgx-os, os-version: 8.0.0, cpu-arch: arm64}\n" DRV("595.91.07"),
	  NV("B200") "  platform: {os: dgx-os, os-version: 8.0.0, cpu-arch: x86_64}\n" DRV("595.91.07") },
	{ "dgx-os-8.0.0-driver", DATE,
	  NV("B200") "  platform: {os: dgx-os, os-version: 8.0.0}\n" DRV("595.58.03"),
	  NV("B200") "  platform: {os: dgx-os, os-version: 8.0.0}\n" DRV("595.91.07") },
};

/* The support-window rules' "miss" cases are the same tuple a day earlier. */
static const char *miss_date(const struct rule_case *c)
{
	if (!strcmp(c->id, "r580-ltsb-end-of-support"))
		return "2028-06-30";
	return c->date;
}

static bool fires(const char *id, const char *body, const char *date)
{
	struct tuple *t = th_tuple_of(body);
	struct lint_report *rep = NULL;
	ingot_error e = { 0 };
	bool hit = false;

	if (lint_tuple(t, RULES_DIR, date, &rep, &e) < 0)
		fail_msg("%s", e.msg);
	for (size_t i = 0; i < rep->n; i++)
		hit |= !strcmp(rep->v[i].rule, id);
	lint_report_free(rep);
	tuple_free(t);
	return hit;
}

static void test_each_rule(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (!fires(cases[i].id, cases[i].hit, cases[i].date))
			fail_msg("rule %s: did not fire on its trigger tuple", cases[i].id);
		if (fires(cases[i].id, cases[i].miss, miss_date(&cases[i])))
			fail_msg("rule %s: fired on its clean tuple", cases[i].id);
	}
}

static void test_every_rule_has_a_case(void **state)
{
	struct ruleset *rs = NULL;
	ingot_error e = { 0 };
	(void)state;

	assert_int_equal(rules_load_dir(RULES_DIR, &rs, &e), 0);
	for (size_t i = 0; i < rs->n; i++) {
		bool found = false;
		for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
			found |= !strcmp(cases[k].id, rs->v[i].id);
		if (!found)
			fail_msg("rule %s (%s:%zu) has no test case", rs->v[i].id, rs->v[i].file, rs->v[i].line);
	}
	assert_int_equal(rs->n, sizeof(cases) / sizeof(cases[0]));
	ruleset_free(rs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_rule),
		cmocka_unit_test(test_every_rule_has_a_case),
	};
	return cmocka_run_group_tests_name("rules_table", tests, NULL, NULL);
}
