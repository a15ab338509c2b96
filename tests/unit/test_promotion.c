/* Units for verify/promotion.c: where an image stands in a ring given its
 * promotions - current, the previous one kept until a rollback drill
 * retires it, superseded, never promoted. */
#include "tests/unit/helpers.h"

#include "verify/promotion.h"

#define A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"

static struct promotion P(uint64_t serial, const char *image, const char *retires)
{
	struct promotion p = { .file = (char *)"f", .serial = serial };
	snprintf(p.ring, sizeof(p.ring), "canary");
	snprintf(p.image_sha256, sizeof(p.image_sha256), "%s", image);
	snprintf(p.retires, sizeof(p.retires), "%s", retires);
	return p;
}

static enum promotion_standing stand(struct promotion *v, size_t n, const char *image, char *why)
{
	struct promotion_set set = { .v = v, .n = n };
	return promotion_standing(&set, image, NULL, why, 512);
}

static void test_standing(void **state)
{
	char why[512];
	(void)state;

	struct promotion one[] = { P(1, A, "") };
	assert_int_equal(stand(one, 1, A, why), PROMOTION_CURRENT);
	assert_int_equal(stand(one, 1, B, why), PROMOTION_NONE);
	assert_non_null(strstr(why, "was never promoted to ring canary"));
	assert_int_equal(stand(one, 0, A, why), PROMOTION_NONE);
	assert_non_null(strstr(why, "no promotion to this ring verifies"));

	/* B replaced A: A stays admissible until B's rollback is drilled. */
	struct promotion two[] = { P(1, A, ""), P(2, B, "") };
	assert_int_equal(stand(two, 2, B, why), PROMOTION_CURRENT);
	assert_int_equal(stand(two, 2, A, why), PROMOTION_PREVIOUS);
	assert_true(promotion_admits(PROMOTION_PREVIOUS));

	/* B re-promoted with the drill: A is retired. */
	struct promotion three[] = { P(1, A, ""), P(2, B, ""), P(3, B, A) };
	assert_int_equal(stand(three, 3, A, why), PROMOTION_RETIRED);
	assert_non_null(strstr(why, "retired by serial 3"));
	assert_false(promotion_admits(PROMOTION_RETIRED));

	/* C after B after A: A is two behind. */
	struct promotion four[] = { P(1, A, ""), P(2, B, ""), P(3, C, "") };
	assert_int_equal(stand(four, 3, B, why), PROMOTION_PREVIOUS);
	assert_int_equal(stand(four, 3, A, why), PROMOTION_SUPERSEDED);
	assert_false(promotion_admits(PROMOTION_SUPERSEDED));

	/* A back on top (a rollback promoted again) is current again. */
	struct promotion back[] = { P(1, A, ""), P(2, B, ""), P(3, A, "") };
	assert_int_equal(stand(back, 3, A, why), PROMOTION_CURRENT);
	assert_int_equal(stand(back, 3, B, why), PROMOTION_PREVIOUS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_standing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
