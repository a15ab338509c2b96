/* Units for recipes/rings.c: the shipped ring policies parse to what they
 * say, and each malformed policy is refused at its line:column. */
#include "tests/unit/helpers.h"

#include "recipes/rings.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	return th_mkdtemp(dir, sizeof(dir), "rings");
}

static int teardown(void **state)
{
	(void)state;
	return th_rmtree(dir);
}

static void test_shipped(void **state)
{
	_cleanup_ring_policy_ struct ring_policy *lab = NULL, *canary = NULL, *prod = NULL;
	ingot_error e = { 0 };
	const struct ring_requirement *q;
	(void)state;

	assert_int_equal(ring_policy_load_dir("recipes/rings", "lab", &lab, &e), 0);
	assert_string_equal(lab->previous, "");
	assert_int_equal(lab->soak_seconds, 0);
	assert_false(lab->retire_after_rollback);
	assert_string_equal(lab->promotion_keyring, "recipes/rings/keyrings/promoters.json");

	assert_int_equal(ring_policy_load_dir("recipes/rings", "canary", &canary, &e), 0);
	assert_string_equal(canary->previous, "lab");
	assert_int_equal(canary->soak_seconds, 24 * 3600);
	assert_true(canary->retire_after_rollback);
	q = ring_requirement(canary, "nccl-tests");
	assert_non_null(q);
	assert_true(q->required);
	assert_true(q->min_busbw == 360.0);
	assert_int_equal(q->min_bytes, 1073741824);
	assert_int_equal(q->min_nodes, 2);
	assert_int_equal(ring_requirement(canary, "dcgm-diag")->min_level, 3);
	assert_false(ring_requirement(canary, "rollback")->required);

	assert_int_equal(ring_policy_load_dir("recipes/rings", "production", &prod, &e), 0);
	assert_int_equal(prod->soak_seconds, 72 * 3600);
	assert_int_equal(ring_requirement(prod, "rollback")->threshold, 2);
	assert_int_equal(ring_requirement(prod, "nccl-tests")->min_nodes, 4);
}

static const char good[] =
	"ring: canary\n"
	"previous: lab\n"
	"soak-hours: 24\n"
	"promotion:\n"
	"  keyring: p.json\n"
	"evidence:\n"
	"  nccl-tests:\n"
	"    keyring: /abs/r.json\n"
	"    min-busbw-gbps: 360.5\n"
	"    min-message-bytes: 1073741824\n";

static void load_text(const char *name, const char *text, int want, const char *msg)
{
	_cleanup_free_ char *path = th_path(dir, name);
	struct ring_policy *p = NULL;
	ingot_error e = { 0 };
	const char *ring = strndup(name, strcspn(name, "."));

	assert_int_equal(write_file_atomic(path, text, strlen(text), 0644, &e), 0);
	assert_int_equal(ring_policy_load_dir(dir, ring, &p, &e) < 0 ? -1 : 0, want);
	free((void *)ring);
	if (want == 0) {
		assert_non_null(p);
		ring_policy_free(p);
		return;
	}
	assert_null(p);
	if (!strstr(e.msg, msg))
		fail_msg("expected \"%s\" in \"%s\"", msg, e.msg);
}

static void test_good(void **state)
{
	_cleanup_free_ char *path = th_path(dir, "canary.yaml");
	_cleanup_ring_policy_ struct ring_policy *p = NULL;
	ingot_error e = { 0 };
	(void)state;

	load_text("canary.yaml", good, 0, NULL);
	assert_int_equal(ring_policy_load(path, &p, &e), 0);
	assert_true(p->req[0].min_busbw == 360.5);
	assert_int_equal(p->req[0].min_nodes, 1);        /* default */
	assert_string_equal(p->req[0].keyring, "/abs/r.json");
	_cleanup_free_ char *rel = th_path(dir, "p.json");
	assert_string_equal(p->promotion_keyring, rel);  /* relative to the policy */
}

static void test_refused(void **state)
{
	(void)state;
	load_text("canary.yaml", "ring: canary\nprevius: lab\n", -1,
		  "canary.yaml:2:1: ring policy: unknown key 'previus'");
	load_text("prod.yaml", "ring: production\npromotion: {keyring: p.json}\nevidence: {}\n", -1,
		  "prod.yaml: ring: \"production\", but the file is named for ring \"prod\"");
	load_text("canary.yaml", "ring: canary\nsoak-hours: 3\npromotion: {keyring: p.json}\n"
		  "evidence: {}\n", -1, "canary.yaml:2:13: soak-hours: expected only with previous:");
	load_text("canary.yaml", "ring: Canary!\n", -1, "canary.yaml:1:7: ring: expected a ring name");
	load_text("canary.yaml", "ring: canary\npromotion: {keyring: p.json}\nevidence:\n"
		  "  iperf: {keyring: r.json}\n", -1,
		  "canary.yaml:4:3: evidence: unknown kind \"iperf\"");
	load_text("canary.yaml", "ring: canary\npromotion: {keyring: p.json}\nevidence:\n"
		  "  nccl-tests: {keyring: r.json, min-message-bytes: 1024}\n", -1,
		  "missing required field 'min-busbw-gbps'");
	load_text("canary.yaml", "ring: canary\npromotion: {keyring: p.json}\nevidence:\n"
		  "  nccl-tests: {keyring: r.json, min-busbw-gbps: fast, min-message-bytes: 1}\n", -1,
		  "canary.yaml:4:49: min-busbw-gbps: expected a bandwidth in GB/s");
	load_text("canary.yaml", "ring: canary\npromotion: {keyring: p.json}\nevidence:\n"
		  "  dcgm-diag: {keyring: r.json, min-level: 5}\n", -1, "canary.yaml:4:43: min-level: expected an integer in [1, 4]");
	load_text("canary.yaml", "ring: canary\npromotion: {keyring: p.json}\n"
		  "retire-previous-after: rollback\nevidence:\n  custom: {keyring: r.json}\n", -1,
		  "retire-previous-after: rollback needs an evidence.rollback entry");
	load_text("canary.yaml", "ring: canary\npromotion: {keyring: p.json, threshold: 0}\n"
		  "evidence: {}\n", -1, "canary.yaml:2:41: promotion.threshold: expected an integer in [1, 256]");
	load_text("canary.yaml", "ring: canary\nevidence: {}\n", -1,
		  "missing required field 'promotion'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped),
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
