/* Units for the node report read back (verify/node-report.h
 * node_report_decode): what report_to_json writes decodes to the same
 * facts; members of another type read as absent; a files check's paths
 * and a ring check's serials in the report's order.  And
 * json_read_file_max's cap (lib/json.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "verify/node-report.h"

static struct node_report *decode_text(const char *text)
{
	_cleanup_json_ json_t *doc = json_loads(text, 0, NULL);
	assert_non_null(doc);
	return node_report_decode(doc);
}

/* What the writer wrote is what the reader reads. */
static void test_round_trip(void **state)
{
	struct verify_report vr;
	(void)state;

	report_init(&vr);
	vr.node = json_pack("{s:s, s:s, s:n}", "id", "gpu-07", "hostname", "gpu-07.lab", "machine_id");
	vr.pool = strdup("h100");
	vr.time = strdup("2026-12-01T10:00:00Z");
	vr.probe = json_pack("{s:s, s:[{s:s, s:s, s:s}, {s:s, s:n, s:s, s:b}]}", "root", "/", "facts",
			     "key", "driver.version", "value", "580.95.05", "source", "/sys/module/nvidia/version",
			     "key", "cuda.version", "value", "source", "/usr/local/cuda/version.json",
			     "unreadable", 1);
	report_set(&vr, CHECK_FILES, ST_FAIL, "root / differs");
	report_finish(&vr);
	_cleanup_json_ json_t *doc = report_to_json(&vr);
	report_free(&vr);

	_cleanup_node_report_ struct node_report *r = node_report_decode(doc);
	assert_string_equal(r->schema, "ingot.report/v1");
	assert_string_equal(r->node_id, "gpu-07");
	assert_string_equal(r->hostname, "gpu-07.lab");
	assert_null(r->machine_id);
	assert_string_equal(r->pool, "h100");
	assert_string_equal(r->time, "2026-12-01T10:00:00Z");
	assert_string_equal(r->verdict, "refuse");
	assert_null(r->tuple_digest);
	assert_int_equal(r->n_checks, CHECK__COUNT);
	assert_string_equal(r->checks[CHECK_FILES].name, "files");
	assert_string_equal(r->checks[CHECK_FILES].status, "fail");
	assert_string_equal(r->checks[CHECK_FILES].summary, "root / differs");
	assert_string_equal(r->checks[CHECK_TPM].status, "skip");
	assert_false(r->attestation.present);
	assert_null(r->attestation.quote);
	assert_string_equal(probe_get(r->probe, "driver.version"), "580.95.05");
	/* unreadable stays unreadable: "not made", never "absent" */
	const struct probe_fact *f = probe_find(r->probe, "cuda.version");
	assert_non_null(f);
	assert_null(f->value);
	assert_true(f->unreadable);
	assert_string_equal(f->source, "/usr/local/cuda/version.json");
}

/* The node's bytes: a member of another type is absent, a path that is
 * not a string is left out, and the order is the report's. */
static void test_lenient(void **state)
{
	(void)state;
	_cleanup_node_report_ struct node_report *r = decode_text(
		"{\"schema\":1,\"node\":{\"id\":7},\"pool\":[],\"time\":null,"
		"\"checks\":[{\"name\":\"files\",\"status\":\"fail\",\"details\":{"
		"\"changed\":[{\"path\":\"/etc/a\",\"field\":\"sha256\",\"expected\":\"x\",\"got\":3},{\"path\":5},7],"
		"\"missing\":[\"/b\",7],\"extra\":[\"/c\"]}},"
		"{\"name\":\"ring\",\"details\":{\"ring\":\"prod\",\"ring_serial\":3,\"ring_serial_seen\":5}},"
		"{\"name\":\"ring\",\"details\":{\"ring\":\"canary\",\"ring_serial\":\"3\"}},"
		"{\"name\":5,\"status\":\"fail\"}, 9],"
		"\"probe\":{\"facts\":[{\"value\":\"x\"},{\"key\":\"vendor\",\"value\":\"nvidia\"}]},"
		"\"attestation\":{\"mode\":\"measured-boot\",\"eventlog\":\"AAAA\","
		"\"quote\":{\"nonce\":\"abcd\",\"pcrs\":{\"sha256\":{}}}}}");

	assert_null(r->schema);
	assert_null(r->node_id);
	assert_null(r->pool);
	assert_null(r->time);
	assert_int_equal(r->n_checks, 5);
	const struct report_check *c = &r->checks[0];
	assert_int_equal(c->n_paths, 3);
	assert_string_equal(c->paths[0].list, "changed");
	assert_string_equal(c->paths[0].path, "/etc/a");
	assert_string_equal(c->paths[0].field, "sha256");
	assert_string_equal(json_string_value(c->paths[0].expected), "x");
	assert_int_equal(json_integer_value(c->paths[0].got), 3);
	assert_string_equal(c->paths[1].list, "missing");
	assert_string_equal(c->paths[1].path, "/b");
	assert_null(c->paths[1].field);
	assert_string_equal(c->paths[2].list, "extra");
	assert_string_equal(c->paths[2].path, "/c");
	assert_null(c->ring);
	c = &r->checks[1];
	assert_string_equal(c->ring, "prod");
	assert_true(c->has_ring_serial && c->has_ring_serial_seen);
	assert_int_equal(c->ring_serial, 3);
	assert_int_equal(c->ring_serial_seen, 5);
	assert_false(r->checks[2].has_ring_serial);   /* a serial that is a string */
	assert_null(r->checks[3].name);
	assert_string_equal(r->checks[3].status, "fail");
	assert_null(r->checks[4].name);
	assert_null(probe_find(r->probe, "x"));
	assert_string_equal(probe_get(r->probe, "vendor"), "nvidia");
	assert_true(r->attestation.present);
	assert_string_equal(r->attestation.mode, "measured-boot");
	assert_string_equal(r->attestation.eventlog, "AAAA");
	assert_string_equal(r->attestation.nonce, "abcd");
	assert_non_null(r->attestation.quote);
	assert_true(json_is_object(r->attestation.pcrs));

	/* Not an object at all: every member absent, an empty probe. */
	_cleanup_node_report_ struct node_report *n = decode_text("[1,2]");
	assert_null(n->node_id);
	assert_int_equal(n->n_checks, 0);
	assert_false(n->attestation.present);
	assert_non_null(n->probe);
}

static void test_load(void **state)
{
	char path[] = "/tmp/ingot-node-report-XXXXXX";
	int fd = mkstemp(path);
	ingot_error e = { 0 };
	struct node_report *r = NULL;
	json_t *doc = NULL;
	(void)state;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "{\"node\":{\"id\":\"n1\"}}", 20), 20);
	close(fd);
	assert_int_equal(node_report_load(path, &r, &e), 0);
	assert_string_equal(r->node_id, "n1");
	node_report_free(r);
	/* the capped reader: over the cap is -EFBIG, naming the file */
	assert_int_equal(json_read_file_max(path, 19, &doc, &e), -EFBIG);
	assert_non_null(strstr(e.msg, path));
	assert_null(doc);
	assert_int_equal(json_read_file_max(path, 20, &doc, &e), 0);
	json_decref(doc);
	unlink(path);
	/* a file that is not there: its errno */
	assert_int_equal(node_report_load("/nonexistent/report.json", &r, &e), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_lenient),
		cmocka_unit_test(test_load),
	};
	return cmocka_run_group_tests_name("node_report", tests, NULL, NULL);
}
