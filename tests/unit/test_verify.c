/* Units for verify/: probe parsers and the probe on a generated root,
 * the tool runner, the files check, the tuple comparison, verdicts and
 * the NFD labels. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <regex.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/strbuf.h"
#include "lib/json.h"
#include "attest/nonce.h"
#include "verify/checks.h"
#include "verify/filecheck.h"
#include "verify/nfd.h"
#include "verify/node-report.h"
#include "verify/nodeprobe.h"
#include "verify/toolrun.h"
#include "verify/tuplecheck.h"
#include "helpers.h"

static char root[64];

static void put(const char *rel, const char *text, mode_t mode)
{
	_cleanup_free_ char *p = path_join(root, rel);
	_cleanup_free_ char *d = path_dirname(p);
	ingot_error e = { 0 };
	assert_int_equal(mkdir_p(d, 0755, &e), 0);
	assert_int_equal(write_file_atomic(p, text, strlen(text), mode, &e), 0);
}

static int setup(void **state)
{
	(void)state;
	return th_mkdtemp(root, sizeof(root), "test-verify");
}

static int teardown(void **state)
{
	(void)state;
	return th_rmtree(root);
}

static void test_parse_nvrm(void **state)
{
	int open = -1;
	(void)state;
	_cleanup_free_ char *a = probe_parse_nvrm_version(
		"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  "
		"(dvs-builder@U22)  Thu Sep 18 2025\nGCC version:  gcc 12.2.0\n", &open);
	assert_string_equal(a, "580.95.05");
	assert_int_equal(open, 1);
	_cleanup_free_ char *b = probe_parse_nvrm_version(
		"NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 2024\n", &open);
	assert_string_equal(b, "550.54.14");
	assert_int_equal(open, 0);
	assert_null(probe_parse_nvrm_version("no banner here\n", &open));
	_cleanup_free_ char *c = probe_first_version("Fabric Manager version is : 580.95.05\n");
	assert_string_equal(c, "580.95.05");
	/* x86_64 is no version; a lone number is none either. */
	_cleanup_free_ char *d = probe_first_version("x86_64 build 42 then 1.17.8");
	assert_string_equal(d, "1.17.8");
}

static void test_parse_dpkg(void **state)
{
	static const char status[] =
		"Package: nvidia-fabricmanager-575\nStatus: deinstall ok config-files\nVersion: 575.51.03-1\n\n"
		"Package: nvidia-fabricmanager-580\nStatus: install ok installed\nVersion: 1:580.95.05-1ubuntu1\n\n"
		"Package: nvidia-container-toolkit\nStatus: install ok installed\nVersion: 1.17.8-1\n";
	static const char *const fm[] = { "nvidia-fabricmanager-*", NULL };
	static const char *const ctk[] = { "nvidia-container-toolkit", NULL };
	static const char *const none[] = { "cuda-drivers", NULL };
	char *pkg = NULL;
	(void)state;
	_cleanup_free_ char *v = probe_parse_dpkg_version(status, fm, &pkg);
	assert_string_equal(v, "580.95.05");   /* removed 575 skipped, epoch and revision cut */
	assert_string_equal(pkg, "nvidia-fabricmanager-580");
	free(pkg);
	_cleanup_free_ char *t = probe_parse_dpkg_version(status, ctk, NULL);
	assert_string_equal(t, "1.17.8");
	assert_null(probe_parse_dpkg_version(status, none, NULL));
}

static void test_tool_run(void **state)
{
	char *out = NULL;
	int status = -1;
	ingot_error e = { 0 };
	(void)state;
	/* No shell: metacharacters arrive as one literal argument. */
	char *echo[] = { "/bin/echo", "a;b $(id)", NULL };
	assert_int_equal(tool_run(echo, 2000, 4096, &out, &status, &e), 0);
	assert_string_equal(out, "a;b $(id)\n");
	assert_int_equal(status, 0);
	free(out);
	char *f[] = { "/bin/false", NULL };
	assert_int_equal(tool_run(f, 2000, 4096, &out, &status, &e), 0);
	assert_int_equal(status, 1);
	free(out);
	/* A wedged tool is killed at the deadline. */
	char *sl[] = { "/bin/sleep", "10", NULL };
	assert_int_equal(tool_run(sl, 200, 4096, &out, &status, &e), -ETIMEDOUT);
	assert_non_null(strstr(e.msg, "killed"));
	char *yes[] = { "/usr/bin/yes", NULL };
	assert_int_equal(tool_run(yes, 5000, 1000, &out, &status, &e), -EFBIG);
	char *missing[] = { "/nonexistent/tool", NULL };
	assert_true(tool_run(missing, 2000, 4096, &out, &status, &e) < 0 || status == 127);
	free(out);
}

static void test_probe_root(void **state)
{
	struct node_probe *p = NULL;
	ingot_error e = { 0 };
	(void)state;
	put("sys/module/nvidia/version", "550.54.14\n", 0644);
	put("sys/module/nvidia/taint", "POE\n", 0644);
	put("proc/modules", "nvidia 100 0 - Live 0x0 (POE)\nnvidia_uvm 10 0 - Live 0x0 (POE)\n", 0644);
	put("usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5", "elf", 0644);
	put("usr/lib64/libnccl.so.2.27.7", "elf", 0644);
	put("opt/rocm-7.2/.info/version", "7.2.0-55\n", 0644);
	put("opt/rocm-7.2/lib/librccl.so.1.0.70200", "xx\001RCCL version 2.26.6-release\001", 0644);
	/* A tool found under the root is run: here the fabric manager's. */
	put("usr/bin/nv-fabricmanager", "#!/bin/sh\necho 'Fabric Manager version is : 550.54.14'\n", 0755);
	put("usr/bin/nvidia-ctk", "#!/bin/sh\nexit 3\n", 0755);
	assert_int_equal(node_probe_run(root, &p, &e), 0);
	assert_string_equal(probe_get(p, "driver.version"), "550.54.14");
	assert_string_equal(probe_find(p, "driver.version")->source, "/sys/module/nvidia/version");
	assert_string_equal(probe_get(p, "driver.flavor"), "proprietary");
	assert_string_equal(probe_get(p, "driver.license"), "NVIDIA");
	assert_string_equal(probe_get(p, "vendor"), "nvidia");
	assert_string_equal(probe_get(p, "modules"), "nvidia,nvidia_uvm");
	assert_string_equal(probe_get(p, "fabric_manager.version"), "550.54.14");
	assert_string_equal(probe_find(p, "fabric_manager.version")->source,
			    "/usr/bin/nv-fabricmanager --version");
	/* A failing tool is no fact. */
	assert_null(probe_get(p, "container_toolkit.version"));
	/* Two NCCLs on the library path: both reported, never one picked. */
	assert_string_equal(probe_get(p, "nccl.version"), "2.21.5,2.27.7");
	assert_string_equal(probe_get(p, "rocm.version"), "7.2.0");
	assert_string_equal(probe_get(p, "rocm.stream"), "legacy");
	assert_string_equal(probe_get(p, "rccl.version"), "2.26.6");
	/* Absent things are facts with where they were looked for. */
	assert_null(probe_get(p, "gpu.model"));
	assert_non_null(strstr(probe_find(p, "gpu.model")->source, "not found"));
	json_t *j = probe_to_json(p);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "root")), root);
	json_decref(j);
	node_probe_free(p);
}

/* A manifest file list for the tree made here. */
static json_t *entry(const char *path, const char *type, const char *mode)
{
	return json_pack("{s:s, s:s, s:s, s:i, s:i}", "path", path, "type", type, "mode", mode,
			 "uid", (int)getuid(), "gid", (int)getgid());
}

static json_t *file_entry(const char *path, const char *content)
{
	uint8_t d[32];
	char hex[65];
	sha256_buf(content, strlen(content), d);
	hex_encode(d, 32, hex);
	json_t *o = entry(path, "file", "0644");
	json_object_set_new(o, "size", json_integer((json_int_t)strlen(content)));
	json_object_set_new(o, "sha256", json_string(hex));
	return o;
}

/* files_check on a manifest holding only files (decoded as it is, so a
 * malformed entry reaches the check). */
static int files_check_list(const char *root, json_t *files, const char *const *ignore,
			    struct files_result *out, ingot_error *e)
{
	_cleanup_json_ json_t *doc = json_pack("{s:O}", "files", files);
	struct manifest *m = manifest_decode("m", doc, MANIFEST_REVIEW);
	int r = files_check(root, m, ignore, out, e);

	manifest_free(m);
	return r;
}

static void test_files_check(void **state)
{
	struct files_result fr;
	ingot_error e = { 0 };
	(void)state;
	put("fc/usr/lib/a.so", "AAAA", 0644);
	put("fc/usr/lib/b.so", "BBBB", 0644);
	put("fc/usr/lib/extra.so", "EVIL", 0644);
	put("fc/usr/lib/mode.so", "MODE", 0600);
	put("fc/etc/machine-id", "abc", 0644);
	_cleanup_free_ char *fc = path_join(root, "fc");
	_cleanup_free_ char *lnk = path_join(fc, "usr/lib/link");
	assert_int_equal(symlink("b.so", lnk), 0);
	json_t *files = json_array();
	json_array_append_new(files, entry("/usr", "dir", "0755"));
	json_array_append_new(files, entry("/usr/lib", "dir", "0755"));
	json_array_append_new(files, file_entry("/usr/lib/a.so", "AAAA"));
	json_array_append_new(files, file_entry("/usr/lib/b.so", "BBBX"));       /* changed */
	json_array_append_new(files, file_entry("/usr/lib/gone.so", "GONE"));    /* missing */
	json_t *l = entry("/usr/lib/link", "symlink", "0777");
	json_object_set_new(l, "target", json_string("a.so"));                    /* retargeted */
	json_array_append_new(files, l);
	json_array_append_new(files, file_entry("/usr/lib/mode.so", "MODE"));    /* 0600 != 0644 */

	assert_int_equal(files_check_list(fc, files, NULL, &fr, &e), 0);
	assert_int_equal(fr.missing, 1);
	assert_int_equal(fr.extra, 1);
	assert_int_equal(fr.changed, 3);
	assert_string_equal(json_string_value(json_array_get(json_object_get(fr.details, "missing"), 0)),
			    "/usr/lib/gone.so");
	assert_string_equal(json_string_value(json_array_get(json_object_get(fr.details, "extra"), 0)),
			    "/usr/lib/extra.so");
	/* /etc is not the manifest's: its files are nobody's business here. */
	_cleanup_free_ char *dump = json_dumps(fr.details, JSON_COMPACT | JSON_SORT_KEYS);
	assert_null(strstr(dump, "machine-id"));
	assert_non_null(strstr(dump, "\"field\":\"target\""));
	assert_non_null(strstr(dump, "\"expected\":\"0644\",\"field\":\"mode\",\"got\":\"0600\""));

	assert_false(files_result_clean(&fr));
	files_result_free(&fr);

	/* A listed file that became a directory or a symlink is a changed
	 * entry, counted like any other difference (it once was only listed). */
	json_t *typed = json_array();
	json_array_append_new(typed, file_entry("/usr/lib/a.so", "AAAA"));
	json_array_append_new(typed, file_entry("/usr/lib/link", "BBBB"));
	json_array_append_new(typed, file_entry("/usr", "x"));
	assert_int_equal(files_check_list(fc, typed, NULL, &fr, &e), 0);
	assert_int_equal(fr.changed, 2);
	assert_false(files_result_clean(&fr));
	_cleanup_free_ char *tdump = json_dumps(fr.details, JSON_COMPACT | JSON_SORT_KEYS);
	assert_non_null(strstr(tdump, "\"expected\":\"file\",\"field\":\"type\",\"got\":\"symlink\""));
	assert_non_null(strstr(tdump, "\"expected\":\"file\",\"field\":\"type\",\"got\":\"dir\""));
	files_result_free(&fr);
	/* Only what matches is clean. */
	json_array_remove(typed, 2);
	json_array_remove(typed, 1);
	assert_int_equal(files_check_list(fc, typed, NULL, &fr, &e), 0);
	assert_true(files_result_clean(&fr));
	files_result_free(&fr);
	json_decref(typed);

	/* Ignored globs drop out of every category. */
	const char *ignore[] = { "/usr/lib/extra.so", "/usr/lib/gone.so", NULL };
	assert_int_equal(files_check_list(fc, files, ignore, &fr, &e), 0);
	assert_int_equal(fr.missing, 0);
	assert_int_equal(fr.extra, 0);
	files_result_free(&fr);

	/* A malformed list is an error naming the entry. */
	json_array_append_new(files, json_pack("{s:s}", "path", "relative"));
	assert_int_equal(files_check_list(fc, files, NULL, &fr, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "files[7]"));
	json_decref(files);
}

static struct node_probe *fake_probe(void)
{
	struct node_probe *p = calloc(1, sizeof(*p));
	p->root = strdup("/");
	probe_set(p, "vendor", "nvidia", "test");
	probe_set(p, "driver.version", "580.95.05", "/sys/module/nvidia/version");
	probe_set(p, "driver.flavor", "open", "test");
	probe_set(p, "driver.ko_version", "580.95.05", "nvidia.ko");
	probe_set(p, "fabric_manager.version", "580.82.07", "dpkg");
	probe_set(p, "nccl.version", "2.27.7", "lib");
	probe_set(p, "cuda.version", "13.0.1", "version.json");
	probe_set(p, "gpu.model", "NVIDIA H100 80GB HBM3", "nvidia-smi");
	probe_set(p, "firmware.nic", "MT_0000000838=28.39.1002", "/sys/class/infiniband");
	return p;
}

static void set_fact(struct node_probe *p, const char *key, const char *value)
{
	struct probe_fact *f = (struct probe_fact *)probe_find(p, key);
	assert_non_null(f);
	free(f->value);
	f->value = value ? strdup(value) : NULL;
}

/* The tuple check's status; r is the caller's to read and free. */
static enum check_status run_tuple(const json_t *t, const struct node_probe *p, struct verify_report *r)
{
	report_init(r);
	tuplecheck_run(t, p, r);
	return r->checks[CHECK_TUPLE].status;
}

static void test_tuplecheck(void **state)
{
	struct verify_report r;
	json_error_t je;
	struct node_probe *p = fake_probe();
	(void)state;
	json_t *t = json_loads("{\"vendor\":\"nvidia\",\"nvswitch\":true,\"gpu\":{\"models\":[\"H100\"]},"
		"\"driver\":{\"version\":\"580.95.05\",\"flavor\":\"open\"},"
		"\"fabric-manager\":{\"version\":\"580.95.05\"},\"cuda\":{\"version\":\"13.0\"},"
		"\"nccl\":{\"version\":\"2.27.7\"},\"firmware\":{\"nic\":\"28.39.1002\"}}", 0, &je);
	assert_non_null(t);
	assert_int_equal(run_tuple(t, p, &r), ST_FAIL);
	/* The reason names the NVSwitch rule in the operator's words. */
	assert_string_equal(r.checks[CHECK_TUPLE].summary, "fabric manager 580.82.07 != driver 580.95.05");
	_cleanup_free_ char *ev = json_dumps(r.checks[CHECK_TUPLE].evidence, 0);
	assert_non_null(strstr(ev, "ok: CUDA 13.0.1"));          /* 13.0 matches 13.0.1 */
	assert_non_null(strstr(ev, "ok: GPU NVIDIA H100"));
	assert_non_null(strstr(ev, "ok: NIC firmware MT_0000000838=28.39.1002"));
	report_free(&r);

	/* Healthy; then NCCL pinned but the node has two; then a model that is
	 * only a prefix of the real one. */
	set_fact(p, "fabric_manager.version", "580.95.05");
	assert_int_equal(run_tuple(t, p, &r), ST_PASS);
	report_free(&r);
	set_fact(p, "nccl.version", "2.27.7,2.21.5");
	assert_int_equal(run_tuple(t, p, &r), ST_FAIL);
	assert_non_null(strstr(r.checks[CHECK_TUPLE].summary, "NCCL: manifest 2.27.7, node 2.27.7,2.21.5"));
	report_free(&r);
	set_fact(p, "nccl.version", "2.27.7");
	set_fact(p, "gpu.model", "NVIDIA H1000");
	assert_int_equal(run_tuple(t, p, &r), ST_FAIL);
	assert_non_null(strstr(r.checks[CHECK_TUPLE].summary, "GPU: manifest H100"));
	report_free(&r);
	set_fact(p, "gpu.model", "NVIDIA H100 80GB HBM3");

	/* Comparisons that could not be made are never a pass: the image's
	 * nvidia.ko unreadable, declared GPUs the node does not show, a
	 * declared field whose tool failed. */
	struct { const char *key, *why, *summary; } nm[] = {
		{ "driver.ko_version", "unreadable: nvidia.ko: not an ELF file",
		  "not made: loaded driver 580.95.05 vs the image's nvidia.ko (unreadable: nvidia.ko: not an ELF file)" },
		{ "gpu.model", "nvidia-smi failed or timed out",
		  "not made: GPU H100 (nvidia-smi failed or timed out)" },
		{ "cuda.version", "version.json: unparsable", "not made: CUDA 13.0 (version.json: unparsable)" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(nm); i++) {
		struct probe_fact *f = (struct probe_fact *)probe_find(p, nm[i].key);
		char *keep = f->value, *keep_src = f->source;
		f->value = NULL;
		f->source = (char *)nm[i].why;
		f->unreadable = true;
		assert_int_equal(run_tuple(t, p, &r), ST_ERROR);
		assert_string_equal(r.checks[CHECK_TUPLE].summary, nm[i].summary);
		/* ...and a mismatch elsewhere still refuses. */
		set_fact(p, "fabric_manager.version", "580.82.07");
		report_free(&r);
		assert_int_equal(run_tuple(t, p, &r), ST_FAIL);
		report_free(&r);
		set_fact(p, "fabric_manager.version", "580.95.05");
		f->value = keep;
		f->source = keep_src;
		f->unreadable = false;
	}

	/* A probe rebuilt from a report may lack facts (the audit does this):
	 * an NVSwitch tuple with no fabric manager fact at all is a finding,
	 * not a crash. */
	struct node_probe *sparse = calloc(1, sizeof(*sparse));
	sparse->root = strdup("/");
	probe_set(sparse, "vendor", "nvidia", "report");
	probe_set(sparse, "driver.version", "580.95.05", "report");
	probe_set(sparse, "driver.flavor", "open", "report");
	assert_int_equal(run_tuple(t, sparse, &r), ST_FAIL);
	assert_string_equal(r.checks[CHECK_TUPLE].summary,
			    "NVSwitch system without fabric manager (driver 580.95.05)");
	report_free(&r);
	node_probe_free(sparse);

	/* No tuple: nothing to compare. */
	assert_int_equal(run_tuple(json_null(), p, &r), ST_SKIP);
	report_free(&r);
	json_decref(t);

	/* The tuple is read by the recipe's schema (the one tuple-field
	 * table), not by guessing at spellings: a field it does not know is
	 * not compared as if it were another, and the check is not made. */
	t = json_loads("{\"vendor\":\"nvidia\",\"gpus\":[\"H100\"],"
		       "\"driver\":{\"version\":\"580.95.05\"}}", 0, &je);
	assert_non_null(t);
	assert_int_equal(run_tuple(t, p, &r), ST_ERROR);
	assert_string_equal(r.checks[CHECK_TUPLE].summary, "manifest: tuple: unknown field 'gpus'");
	report_free(&r);
	json_decref(t);
	node_probe_free(p);
}

/* Firmware pins: exact, a list of validated revisions, per model; all
 * devices of a model agree; pinned firmware the node does not show is not
 * a pass. */
static const char *fw_verdict(const char *firmware, const char *key, const char *value,
			      enum check_status want)
{
	static char summary[512];
	struct verify_report r;
	json_error_t je;
	struct node_probe *p = fake_probe();
	char doc[1024];
	set_fact(p, "fabric_manager.version", "580.95.05");
	if (probe_find(p, key))
		set_fact(p, key, value);
	else
		probe_set(p, key, value, "test");
	probe_set(p, "system.product_name", "PowerEdge XE9680", "test");
	snprintf(doc, sizeof(doc), "{\"vendor\":\"nvidia\",\"nvswitch\":true,\"gpu\":{\"models\":[\"H100\"]},"
		 "\"driver\":{\"version\":\"580.95.05\"},\"fabric-manager\":{\"version\":\"580.95.05\"},"
		 "\"firmware\":%s}", firmware);
	json_t *t = json_loads(doc, 0, &je);
	assert_non_null(t);
	enum check_status got = run_tuple(t, p, &r);
	snprintf(summary, sizeof(summary), "%s", r.checks[CHECK_TUPLE].summary);
	if (got != want)
		fprintf(stderr, "firmware %s: %s\n", firmware, summary);
	assert_int_equal(got, want);
	report_free(&r);
	json_decref(t);
	node_probe_free(p);
	return summary;
}

static void test_firmware_pins(void **state)
{
	(void)state;
	/* exact, and a list of validated revisions */
	fw_verdict("{\"vbios\":\"96.00.99.00.01\"}", "firmware.vbios", "96.00.99.00.01", ST_PASS);
	fw_verdict("{\"vbios\":[\"96.00.74.00.01\",\"96.00.99.00.01\"]}", "firmware.vbios",
		   "96.00.99.00.01", ST_PASS);
	assert_string_equal(fw_verdict("{\"vbios\":[\"96.00.74.00.01\"]}", "firmware.vbios",
				       "96.00.99.00.01", ST_FAIL),
			    "VBIOS: node 96.00.99.00.01, validated 96.00.74.00.01 (test)");
	/* one stale GPU: both revisions validated, still drift */
	assert_string_equal(fw_verdict("{\"vbios\":[\"96.00.74.00.01\",\"96.00.99.00.01\"]}",
				       "firmware.vbios", "96.00.99.00.01,96.00.74.00.01", ST_FAIL),
			    "VBIOS differs between devices: 96.00.99.00.01,96.00.74.00.01 (one stale "
			    "device is drift; pinned 96.00.74.00.01, 96.00.99.00.01)");
	/* per model: a GPU-model-qualified VBIOS pin, a board-qualified NIC pin */
	fw_verdict("{\"vbios\":[\"H100=96.00.99.00.01\",\"B200=97.00.5A.00.02\"]}", "firmware.vbios",
		   "96.00.99.00.01", ST_PASS);
	fw_verdict("{\"vbios\":[\"B200=96.00.99.00.01\"]}", "firmware.vbios", "96.00.99.00.01", ST_FAIL);
	fw_verdict("{\"nic\":[\"MT_0000000838=28.39.1002\",\"MT_0000000970=32.41.1000\"]}",
		   "firmware.nic", "MT_0000000838=28.39.1002,MT_0000000970=32.41.1000", ST_PASS);
	assert_string_equal(fw_verdict("{\"nic\":[\"MT_0000000838=28.39.1002\"]}", "firmware.nic",
				       "MT_0000000970=28.39.1002", ST_FAIL),
			    "NIC firmware: node MT_0000000970 28.39.1002, validated MT_0000000838=28.39.1002 (/sys/class/infiniband)");
	assert_string_equal(fw_verdict("{\"nic\":[\"MT_0000000838=28.39.1002\",\"MT_0000000838=28.40.1000\"]}",
				       "firmware.nic", "MT_0000000838=28.39.1002,MT_0000000838=28.40.1000", ST_FAIL),
			    "NIC firmware differs between devices of model MT_0000000838: "
			    "MT_0000000838=28.39.1002,MT_0000000838=28.40.1000 (pinned "
			    "MT_0000000838=28.39.1002, MT_0000000838=28.40.1000)");
	/* BIOS and BMC pins per system product */
	fw_verdict("{\"bios\":\"PowerEdge XE9680=2.3.5\",\"bmc\":\"7.10.30.00\"}", "firmware.bios", "2.3.5", ST_ERROR);
	fw_verdict("{\"bios\":\"PowerEdge XE9680=2.3.5\"}", "firmware.bios", "2.3.5", ST_PASS);
	fw_verdict("{\"bios\":\"PowerEdge R760=2.3.5\"}", "firmware.bios", "2.3.5", ST_FAIL);
	/* pinned, not shown: not made */
	assert_string_equal(fw_verdict("{\"nvswitch\":\"96.10.6D.00.01\"}", "firmware.nvswitch", NULL,
				       ST_ERROR),
			    "not made: NVSwitch firmware pinned to 96.10.6D.00.01 (test)");
}

/* The rules on a declared field the node could not read were not made:
 * error, never pass (and a rule that fails still refuses). */
static void test_rules_not_made(void **state)
{
	struct verify_opts o = { .rules_dir = "recipes/rules", .date = "2026-10-15" };
	struct verify_report r;
	json_error_t je;
	struct node_probe *p = fake_probe();
	(void)state;
	set_fact(p, "fabric_manager.version", "580.95.05");
	json_t *m = json_loads("{\"tuple\":{\"vendor\":\"nvidia\",\"gpu\":{\"models\":[\"H100\"]},"
		"\"driver\":{\"version\":\"580.95.05\",\"flavor\":\"open\"},"
		"\"container-toolkit\":{\"version\":\"1.17.8\"}}}", 0, &je);
	assert_non_null(m);
	struct manifest *tm = manifest_decode("m", m, MANIFEST_REVIEW);
	report_init(&r);
	check_rules(&o, tm, p, &r);
	assert_int_equal(r.checks[CHECK_RULES].status, ST_PASS);
	report_free(&r);

	probe_set_unreadable(p, "container_toolkit.version", "unreadable: /usr/bin/nvidia-ctk failed");
	report_init(&r);
	check_rules(&o, tm, p, &r);
	assert_int_equal(r.checks[CHECK_RULES].status, ST_ERROR);
	assert_string_equal(r.checks[CHECK_RULES].summary, "not made: rules ran on the declared "
			    "container_toolkit.version, unreadable on the node (unreadable: "
			    "/usr/bin/nvidia-ctk failed)");
	report_free(&r);

	/* A B200 pinned to proprietary modules fails its rule regardless. */
	json_object_set_new(json_object_get(json_object_get(m, "tuple"), "gpu"), "models",
			    json_pack("[s]", "B200"));
	set_fact(p, "driver.flavor", "proprietary");
	report_init(&r);
	check_rules(&o, tm, p, &r);
	assert_int_equal(r.checks[CHECK_RULES].status, ST_FAIL);
	report_free(&r);
	json_decref(m);
	manifest_free(tm);
	node_probe_free(p);
}

/* The rules run on the probed values of the shared tuple-field table:
 * the node's fabric manager replaces the declared one (in the JSON's
 * "fabric-manager" group), the vendor never does (another vendor is a
 * tuple mismatch, not another rule world). */
static void test_rules_probed_fields(void **state)
{
	struct verify_opts o = { .rules_dir = "recipes/rules", .date = "2026-10-15" };
	struct verify_report r;
	json_error_t je;
	struct node_probe *p = fake_probe();
	(void)state;
	json_t *m = json_loads("{\"tuple\":{\"vendor\":\"nvidia\",\"gpu\":{\"models\":[\"H100\"]},"
		"\"driver\":{\"version\":\"580.95.05\",\"flavor\":\"open\"},"
		"\"fabric-manager\":{\"version\":\"580.95.05\"}}}", 0, &je);
	assert_non_null(m);
	struct manifest *tm = manifest_decode("m", m, MANIFEST_REVIEW);
	set_fact(p, "vendor", "amd");
	report_init(&r);
	check_rules(&o, tm, p, &r);
	_cleanup_free_ char *probed = json_dumps(json_object_get(r.checks[CHECK_RULES].details,
							 "probed_fields"), JSON_SORT_KEYS);
	assert_string_equal(probed, "[{\"field\": \"fabric_manager.version\", \"manifest\": "
			    "\"580.95.05\", \"node\": \"580.82.07\"}]");
	report_free(&r);
	json_decref(m);
	manifest_free(tm);
	node_probe_free(p);
}

static void test_verdicts(void **state)
{
	struct verify_report r;
	(void)state;
	report_init(&r);
	report_set(&r, CHECK_SIGNATURE, ST_PASS, "ok");
	report_set(&r, CHECK_RULES, ST_WARN, "rocm-10.1.0-rccl-ll-mi350: warning");
	report_finish(&r);
	assert_string_equal(r.verdict, "admit");
	assert_int_equal(r.outcome, REPORT_ADMIT);
	r.fail_on_warn = 1;
	report_finish(&r);
	assert_string_equal(r.verdict, "refuse");
	assert_int_equal(r.outcome, REPORT_REFUSE);
	assert_int_equal(r.decided, CHECK_RULES);
	assert_string_equal(r.reason, "rocm-10.1.0-rccl-ll-mi350: warning");
	/* "could not check" only when nothing refuses. */
	report_set(&r, CHECK_TPM, ST_ERROR, "no TPM");
	r.fail_on_warn = 0;
	report_finish(&r);
	assert_string_equal(r.verdict, "could-not-check");
	assert_int_equal(r.outcome, REPORT_CANNOT_CHECK);
	assert_string_equal(r.reason, "tpm: no TPM");
	/* The first refusing check decides: files before tuple. */
	report_set(&r, CHECK_TUPLE, ST_FAIL, "driver");
	report_set(&r, CHECK_FILES, ST_FAIL, "files");
	report_finish(&r);
	assert_int_equal(r.decided, CHECK_FILES);
	assert_string_equal(r.reason, "files");
	report_set(&r, CHECK_SIGNATURE, ST_FAIL, "forged");
	report_finish(&r);
	assert_int_equal(r.decided, CHECK_SIGNATURE);
	json_t *j = report_to_json(&r);
	assert_string_equal(json_string_value(json_object_get(j, "schema")), "ingot.report/v1");
	assert_int_equal(json_array_size(json_object_get(j, "checks")), CHECK__COUNT);
	json_decref(j);
	report_free(&r);
}

static void test_nfd(void **state)
{
	struct verify_report r;
	struct strbuf sb = STRBUF_INIT;
	(void)state;
	report_init(&r);
	r.pool = strdup("-h100/pool with spaces and a name far longer than the sixty-three characters a label may hold");
	r.tuple_digest = strdup("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	report_finish(&r);
	strbuf_init(&sb, 0);
	nfd_format(&r, &sb);
	assert_non_null(strstr(sb.buf, "\ningot.dev/tuple=0123456789abcdef0123456789abcdef\n"));
	assert_non_null(strstr(sb.buf, "\ningot.dev/verdict=admit\n"));
	assert_non_null(strstr(sb.buf, "\ningot.dev/exit-status=0\n"));
	/* Label values: at most 63 of [A-Za-z0-9._-], alphanumeric at both ends. */
	const char *pool = strstr(sb.buf, "ingot.dev/pool=") + strlen("ingot.dev/pool=");
	size_t n = strcspn(pool, "\n");
	assert_true(n <= 63);
	assert_true(n > 0);
	assert_memory_equal(pool, "h100_pool_with_spaces", 21);
	assert_non_null(strstr(sb.buf, "\n# ingot.dev/pool: the name is no label value"));
	strbuf_release(&sb);
	report_free(&r);
}

/* Label values are one to one: names that once collapsed to one value get
 * different ones, each a valid Kubernetes label value (the apimachinery
 * pattern), and valid names stay as they are. */
static void test_nfd_distinct(void **state)
{
	char a[NFD_VALUE_SIZE], b[NFD_VALUE_SIZE];
	char long1[80], long2[80];
	regex_t re;
	(void)state;
	assert_int_equal(regcomp(&re, "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$",
				 REG_EXTENDED | REG_NOSUB), 0);

	assert_false(nfd_label_value("pool-a", a));
	assert_string_equal(a, "pool-a");
	assert_true(nfd_label_value("pool-a.", b));
	assert_string_not_equal(a, b);
	assert_memory_equal(b, "pool-a--", 8);
	assert_int_equal(strlen(b), 8 + 12);

	/* 64 characters, differing only in the 64th. */
	memset(long1, 'p', 63);
	memcpy(long2, long1, 63);
	long1[63] = 'x'; long2[63] = 'y';
	long1[64] = long2[64] = '\0';
	assert_true(nfd_label_value(long1, a));
	assert_true(nfd_label_value(long2, b));
	assert_string_not_equal(a, b);
	assert_true(strlen(a) <= 63 && strlen(b) <= 63);
	/* Exactly 63 is a valid value and kept. */
	long1[63] = '\0';
	assert_false(nfd_label_value(long1, a));
	assert_string_equal(a, long1);

	/* A valid name that looks disambiguated is hashed too, so it cannot
	 * take the value of the name it imitates. */
	assert_true(nfd_label_value("pool-a.", a));
	assert_true(nfd_label_value(a, b));
	assert_string_not_equal(a, b);

	const char *const names[] = { "pool-a", "pool-a.", "-x-", "...", "", "a b/c",
		"Ünïcode-pool", "h100--0123456789ab", long1, long2 };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		nfd_label_value(names[i], a);
		assert_true(strlen(a) <= 63);
		assert_int_equal(regexec(&re, a, 0, NULL, 0), 0);
		for (size_t j = 0; j < i; j++) {
			nfd_label_value(names[j], b);
			assert_string_not_equal(a, b);
		}
	}
	regfree(&re);
}

/* Measured boot under `ingot verify`: the node's log and quote go
 * through the one loader (boot_proof_parse, boot_inputs_evidence) to the
 * verdict.  A log that does not parse fails; a parsed one reaches the
 * verdict, which names what the manifest lacks. */
static void test_tpm_boot_inputs(void **state)
{
	struct verify_opts o = { .eventlog_path = "tests/fixtures/tcg-eventlogs/event-arch-linux.bin" };
	struct manifest m = { 0 };
	struct verify_report r;
	struct nonce n;
	ingot_error e = { 0 };
	_cleanup_json_ json_t *quote = json_object();
	(void)state;

	assert_int_equal(nonce_decode("00112233445566778899aabbccddeeff", &n, &e), 0);
	report_init(&r);
	r.attestation = json_object();
	check_tpm_boot(&o, &m, quote, &n, &r);
	assert_int_equal(r.checks[CHECK_TPM].status, ST_ERROR);
	assert_non_null(strstr(r.checks[CHECK_TPM].summary, "measured boot not-made: manifest: no boot object"));
	report_free(&r);

	o.eventlog_path = "tests/unit/test_verify.c";   /* not a TCG log */
	report_init(&r);
	r.attestation = json_object();
	check_tpm_boot(&o, &m, quote, &n, &r);
	assert_int_equal(r.checks[CHECK_TPM].status, ST_FAIL);
	assert_non_null(strstr(r.checks[CHECK_TPM].summary, "tests/unit/test_verify.c"));
	report_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_nvrm),
		cmocka_unit_test(test_parse_dpkg),
		cmocka_unit_test(test_tool_run),
		cmocka_unit_test(test_probe_root),
		cmocka_unit_test(test_files_check),
		cmocka_unit_test(test_tuplecheck),
		cmocka_unit_test(test_tpm_boot_inputs),
		cmocka_unit_test(test_firmware_pins),
		cmocka_unit_test(test_rules_not_made),
		cmocka_unit_test(test_rules_probed_fields),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_nfd),
		cmocka_unit_test(test_nfd_distinct),
	};
	return cmocka_run_group_tests_name("verify", tests, setup, teardown);
}
