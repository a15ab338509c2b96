/* Units for audit/diff-unit.c: a candidate changing one tuple component's
 * version alone is warned about; a tuple changed as a unit is not. */
#include "tests/unit/helpers.h"

#include "audit/diff.h"
#include "lib/json.h"

static int warned(const char *a, const char *b, const char *field)
{
	_cleanup_json_ json_t *ja = json_loads(a, 0, NULL), *jb = json_loads(b, 0, NULL);
	struct diff_changes l = { 0 };
	struct diff_warning w;
	int r;

	assert_non_null(ja);
	assert_non_null(jb);
	diff_fields(&l, "", ja, jb);
	r = diff_tuple_unit_warning(&l, &w);
	if (r > 0)
		assert_string_equal(w.field, field);
	diff_changes_release(&l);
	return r;
}

static void test_unit(void **state)
{
	(void)state;
	static const char base[] = "{\"driver\":{\"version\":\"580.95.05\",\"artifact\":\"drv\"},"
		"\"fabric-manager\":{\"version\":\"580.95.05\"},\"nccl\":{\"version\":\"2.27.7\"},"
		"\"firmware\":{\"vbios\":\"96.00.99.00.01\"}}";
	/* NCCL alone: warned. */
	assert_int_equal(warned(base, "{\"driver\":{\"version\":\"580.95.05\",\"artifact\":\"drv\"},"
		"\"fabric-manager\":{\"version\":\"580.95.05\"},\"nccl\":{\"version\":\"2.28.3\"},"
		"\"firmware\":{\"vbios\":\"96.00.99.00.01\"}}", "nccl.version"), 1);
	/* Driver and fabric manager together: a unit. */
	assert_int_equal(warned(base, "{\"driver\":{\"version\":\"580.105.08\",\"artifact\":\"drv\"},"
		"\"fabric-manager\":{\"version\":\"580.105.08\"},\"nccl\":{\"version\":\"2.27.7\"},"
		"\"firmware\":{\"vbios\":\"96.00.99.00.01\"}}", NULL), 0);
	/* Firmware alone counts as one component too. */
	assert_int_equal(warned(base, "{\"driver\":{\"version\":\"580.95.05\",\"artifact\":\"drv\"},"
		"\"fabric-manager\":{\"version\":\"580.95.05\"},\"nccl\":{\"version\":\"2.27.7\"},"
		"\"firmware\":{\"vbios\":\"96.00.99.00.02\"}}", "firmware.vbios"), 1);
	/* Only an artifact name changed: no version moved. */
	assert_int_equal(warned(base, "{\"driver\":{\"version\":\"580.95.05\",\"artifact\":\"d2\"},"
		"\"fabric-manager\":{\"version\":\"580.95.05\"},\"nccl\":{\"version\":\"2.27.7\"},"
		"\"firmware\":{\"vbios\":\"96.00.99.00.01\"}}", NULL), 0);
	/* A component added is not an upgrade. */
	assert_int_equal(warned("{\"nccl\":{}}", "{\"nccl\":{\"version\":\"2.27.7\"}}", NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
