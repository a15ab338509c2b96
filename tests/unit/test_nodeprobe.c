/* Units for the probe's order of sources: files (kernel procfs/sysfs,
 * dpkg, library names) answer first, a vendor tool runs only for what no
 * file answered, and the tools that must run run at once; plus the facts
 * that must agree (NVML vs the loaded module, nvidia-smi vs the module). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "verify/node-report.h"
#include <stdbool.h>

#include "verify/nodeprobe.h"
#include "verify/toolrun.h"
#include "verify/tuplecheck.h"

static char top[] = "/tmp/ingot-test-nodeprobe.XXXXXX";

/* TOP/sub/rel with text; returns nothing, fails the test on error. */
static void put(const char *sub, const char *rel, const char *text, mode_t mode)
{
	_cleanup_free_ char *d0 = path_join(top, sub);
	_cleanup_free_ char *p = path_join(d0, rel);
	_cleanup_free_ char *d = path_dirname(p);
	ingot_error e = { 0 };
	assert_int_equal(mkdir_p(d, 0755, &e), 0);
	assert_int_equal(write_file_atomic(p, text, strlen(text), mode, &e), 0);
}

static char *sub_path(const char *sub, const char *rel)
{
	_cleanup_free_ char *d0 = path_join(top, sub);
	return rel ? path_join(d0, rel) : strdup(d0);
}

static int exists(const char *sub, const char *rel)
{
	_cleanup_free_ char *p = sub_path(sub, rel);
	return access(p, F_OK) == 0;
}

/* A tool script under the root; %s in body is replaced by the root. */
static void put_tool(const char *sub, const char *rel, const char *body)
{
	_cleanup_free_ char *r = sub_path(sub, NULL);
	_cleanup_free_ char *text = NULL;
	assert_true(asprintf(&text, body, r, r, r) > 0);
	put(sub, rel, text, 0755);
}

/* The kernel's view of a loaded open driver. */
static void loaded(const char *sub, const char *version)
{
	char banner[256];
	snprintf(banner, sizeof(banner), "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  %s  "
		 "Release Build  (dvs-builder@U22)  Thu Sep 18 2025\n", version);
	char v[64];
	snprintf(v, sizeof(v), "%s\n", version);
	put(sub, "sys/module/nvidia/version", v, 0644);
	put(sub, "sys/module/nvidia/taint", "OE\n", 0644);
	put(sub, "proc/driver/nvidia/version", banner, 0644);
	put(sub, "proc/modules", "nvidia 100 0 - Live 0x0 (OE)\n", 0644);
}

static void gpus_procfs(const char *sub)
{
	put(sub, "proc/driver/nvidia/gpus/0000:18:00.0/information",
	    "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 0\nVideo BIOS: \t 96.00.99.00.01\n", 0644);
	put(sub, "proc/driver/nvidia/gpus/0000:19:00.0/information",
	    "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 0\nVideo BIOS: \t 96.00.99.00.01\n", 0644);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(top) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) == 0 ? 0 : -1;
}

/* Tools started together: the first waits for a file only the second
 * creates, which a one-after-the-other runner could never satisfy. */
static void test_run_all_concurrent(void **state)
{
	(void)state;
	_cleanup_free_ char *flag = sub_path("rv", "flag");
	_cleanup_free_ char *waiter = NULL, *maker = NULL;
	assert_true(asprintf(&waiter, "i=0; while [ ! -e '%s' ]; do i=$((i+1)); "
			     "[ $i -gt 300 ] && exit 7; sleep 0.01; done; echo waited", flag) > 0);
	assert_true(asprintf(&maker, "mkdir -p \"$(dirname '%s')\"; sleep 0.05; : >'%s'; echo made",
			     flag, flag) > 0);
	char *a[] = { "/bin/sh", "-c", waiter, NULL };
	char *b[] = { "/bin/sh", "-c", maker, NULL };
	char *slow[] = { "/bin/sleep", "10", NULL };
	char *missing[] = { "/nonexistent/tool", NULL };
	struct tool_job jobs[] = { { .argv = a }, { .argv = b } };
	ingot_error e = { 0 };

	assert_int_equal(tool_run_all(jobs, 2, 5000, 4096, &e), 0);
	assert_int_equal(jobs[0].err, 0);
	assert_int_equal(jobs[0].status, 0);
	assert_string_equal(jobs[0].out, "waited\n");
	assert_int_equal(jobs[1].status, 0);
	assert_string_equal(jobs[1].out, "made\n");
	free(jobs[0].out);
	free(jobs[1].out);

	/* One wedged and one missing tool cost their own jobs only; the
	 * message names the first that failed. */
	struct tool_job mixed[] = { { .argv = missing }, { .argv = slow }, { .argv = b } };
	assert_int_equal(tool_run_all(mixed, 3, 300, 4096, &e), 0);
	assert_true(mixed[0].err < 0);
	assert_null(mixed[0].out);
	assert_int_equal(mixed[1].err, -ETIMEDOUT);
	assert_null(mixed[1].out);
	assert_int_equal(mixed[2].err, 0);
	assert_string_equal(mixed[2].out, "made\n");
	assert_non_null(strstr(e.msg, "/nonexistent/tool"));
	free(mixed[2].out);
}

/* Files answer: no tool runs (each would leave a mark), and the facts
 * name the files. */
static void test_files_first(void **state)
{
	struct node_probe *p = NULL;
	ingot_error e = { 0 };
	(void)state;
	loaded("ff", "580.95.05");
	gpus_procfs("ff");
	put("ff", "var/lib/dpkg/status",
	    "Package: nvidia-fabricmanager-580\nStatus: install ok installed\nVersion: 580.95.05-1\n\n"
	    "Package: nvidia-container-toolkit\nStatus: install ok installed\nVersion: 1.17.8-1\n", 0644);
	put_tool("ff", "usr/bin/nvidia-smi",
		 "#!/bin/sh\n: >'%s/ran-nvidia-smi'\necho 'NVIDIA B200, 595.91.07, 97.00.5A.00.02'\n");
	put_tool("ff", "usr/bin/nv-fabricmanager",
		 "#!/bin/sh\n: >'%s/ran-fm'\necho 'Fabric Manager version is : 580.82.07'\n");
	put_tool("ff", "usr/bin/nvidia-ctk", "#!/bin/sh\n: >'%s/ran-ctk'\necho 'version 1.99.0'\n");
	put_tool("ff", "usr/bin/amd-smi", "#!/bin/sh\n: >'%s/ran-amd-smi'\necho '[]'\n");
	_cleanup_free_ char *root = sub_path("ff", NULL);

	assert_int_equal(node_probe_run(root, &p, &e), 0);
	assert_false(exists("ff", "ran-nvidia-smi"));
	assert_false(exists("ff", "ran-fm"));
	assert_false(exists("ff", "ran-ctk"));
	assert_false(exists("ff", "ran-amd-smi"));
	assert_string_equal(probe_get(p, "gpu.model"), "NVIDIA H100 80GB HBM3");
	assert_string_equal(probe_find(p, "gpu.model")->source, "/proc/driver/nvidia/gpus/*/information");
	assert_string_equal(probe_get(p, "firmware.vbios"), "96.00.99.00.01");
	assert_string_equal(probe_find(p, "firmware.vbios")->source,
			    "/proc/driver/nvidia/gpus/*/information");
	assert_string_equal(probe_get(p, "gpu.count"), "2");
	assert_string_equal(probe_get(p, "fabric_manager.version"), "580.95.05");
	assert_string_equal(probe_find(p, "fabric_manager.version")->source,
			    "/var/lib/dpkg/status (package nvidia-fabricmanager-580)");
	assert_string_equal(probe_get(p, "container_toolkit.version"), "1.17.8");
	/* The tool is there (the tuple's SMI field), and says it was not run. */
	assert_string_equal(probe_get(p, "smi"), "nvidia-smi");
	assert_non_null(strstr(probe_find(p, "smi")->source, "/usr/bin/nvidia-smi: present, not run"));
	assert_null(probe_get(p, "gpu.driver_version"));
	assert_non_null(strstr(probe_find(p, "gpu.driver_version")->source, "not run"));
	node_probe_free(p);
}

/* No file answers: the tools run, all at once (the fabric manager waits
 * for a file nvidia-smi, started after it, creates), and their answers
 * are the facts. */
static void test_tools_fallback(void **state)
{
	struct node_probe *p = NULL;
	ingot_error e = { 0 };
	(void)state;
	loaded("tf", "580.95.05");
	put_tool("tf", "usr/bin/nvidia-smi",
		 "#!/bin/sh\n: >'%s/smi-started'\n"
		 "echo 'NVIDIA H100 80GB HBM3, 580.95.05, 96.00.99.00.01'\n"
		 "echo 'NVIDIA H100 80GB HBM3, 580.95.05, 96.00.99.00.01'\n");
	put_tool("tf", "usr/sbin/nv-fabricmanager",
		 "#!/bin/sh\ni=0\nwhile [ ! -e '%s/smi-started' ]; do i=$((i+1)); [ $i -gt 300 ] && exit 7; "
		 "sleep 0.01; done\necho 'Fabric Manager version is : 580.95.05'\n");
	put_tool("tf", "usr/bin/nvidia-ctk", "#!/bin/sh\necho 'NVIDIA Container Toolkit CLI version 1.17.8'\n");
	_cleanup_free_ char *root = sub_path("tf", NULL);

	assert_int_equal(node_probe_run(root, &p, &e), 0);
	assert_string_equal(probe_get(p, "fabric_manager.version"), "580.95.05");
	assert_string_equal(probe_find(p, "fabric_manager.version")->source,
			    "/usr/sbin/nv-fabricmanager --version");
	assert_string_equal(probe_get(p, "container_toolkit.version"), "1.17.8");
	assert_string_equal(probe_get(p, "gpu.model"), "NVIDIA H100 80GB HBM3");
	assert_string_equal(probe_find(p, "gpu.model")->source,
			    "/usr/bin/nvidia-smi --query-gpu=name,driver_version,vbios_version");
	assert_string_equal(probe_get(p, "gpu.count"), "2");
	assert_string_equal(probe_get(p, "gpu.driver_version"), "580.95.05");
	assert_string_equal(probe_get(p, "smi"), "nvidia-smi");
	assert_string_equal(probe_find(p, "smi")->source, "/usr/bin/nvidia-smi");
	node_probe_free(p);

	/* A failing nvidia-smi, and nothing else to ask: no GPU facts, and the
	 * report says which tool failed. */
	put("tf", "usr/bin/nvidia-smi", "#!/bin/sh\necho 'Failed to initialize NVML'\nexit 9\n", 0755);
	assert_int_equal(node_probe_run(root, &p, &e), 0);
	assert_null(probe_get(p, "gpu.model"));
	assert_string_equal(probe_find(p, "gpu.model")->source, "/usr/bin/nvidia-smi failed or timed out");
	assert_null(probe_get(p, "smi"));
	assert_null(probe_get(p, "gpu.driver_version"));
	node_probe_free(p);

	/* One that succeeds but names no GPU says so too. */
	put("tf", "usr/bin/nvidia-smi", "#!/bin/sh\nexit 0\n", 0755);
	assert_int_equal(node_probe_run(root, &p, &e), 0);
	assert_null(probe_get(p, "gpu.model"));
	assert_string_equal(probe_find(p, "gpu.model")->source, "/usr/bin/nvidia-smi answered no GPU");
	node_probe_free(p);
}

static json_t *tuple_for(const char *driver)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "{\"vendor\":\"nvidia\",\"driver\":{\"version\":\"%s\",\"flavor\":\"open\"}}",
		 driver);
	json_t *t = json_loads(buf, 0, NULL);
	assert_non_null(t);
	return t;
}

/* The image's NVML against the loaded module: read from the library's
 * file name, and a refusal in the tuple check when they differ. */
static void test_userspace_vs_module(void **state)
{
	struct node_probe *p = NULL;
	struct verify_report r;
	ingot_error e = { 0 };
	(void)state;
	loaded("us", "580.105.08");
	gpus_procfs("us");
	put("us", "usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.95.05", "elf", 0644);
	_cleanup_free_ char *root = sub_path("us", NULL);
	_cleanup_free_ char *lnk = sub_path("us", "usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
	assert_int_equal(symlink("libnvidia-ml.so.580.95.05", lnk), 0);

	assert_int_equal(node_probe_run(root, &p, &e), 0);
	assert_string_equal(probe_get(p, "driver.userspace_version"), "580.95.05");
	assert_string_equal(probe_find(p, "driver.userspace_version")->source,
			    "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.95.05");
	json_t *t = tuple_for("580.105.08");
	report_init(&r);
	tuplecheck_run(t, p, &r);
	assert_int_equal(r.checks[CHECK_TUPLE].status, ST_FAIL);
	assert_string_equal(r.checks[CHECK_TUPLE].summary,
			    "NVIDIA user-space libraries 580.95.05 != loaded driver 580.105.08");
	report_free(&r);
	node_probe_free(p);

	/* Same versions and the image's nvidia.ko readable: no finding. */
	loaded("us", "580.95.05");
	_cleanup_free_ char *ko = sub_path("us", "lib/modules/6.1.0-40-amd64/updates/nvidia.ko");
	_cleanup_free_ char *kodir = path_dirname(ko);
	char cmd[1024];
	assert_int_equal(mkdir_p(kodir, 0755, &e), 0);
	snprintf(cmd, sizeof(cmd), "python3 scripts/mkart.py ko --out '%s' --name nvidia "
		 "--version 580.95.05 --flavor open", ko);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(node_probe_run(root, &p, &e), 0);
	assert_string_equal(probe_get(p, "driver.ko_version"), "580.95.05");
	json_decref(t);
	t = tuple_for("580.95.05");
	report_init(&r);
	tuplecheck_run(t, p, &r);
	assert_int_equal(r.checks[CHECK_TUPLE].status, ST_PASS);
	report_free(&r);
	node_probe_free(p);
	json_decref(t);
}

/* A probe with no facts yet, for facts set by hand. */
static struct node_probe *bare_probe(void)
{
	struct node_probe *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	p->root = strdup("/");
	return p;
}

/* The tuple check of p (freed) against a tuple with this driver: its
 * status, and its summary into summary. */
static enum check_status tuple_status(struct node_probe *p, const char *driver, char *summary, size_t n)
{
	struct verify_report r;
	json_t *t = tuple_for(driver);
	report_init(&r);
	tuplecheck_run(t, p, &r);
	enum check_status st = r.checks[CHECK_TUPLE].status;
	snprintf(summary, n, "%s", r.checks[CHECK_TUPLE].summary);
	report_free(&r);
	json_decref(t);
	node_probe_free(p);
	return st;
}

/* Where nvidia-smi did run, its driver must still be the module's. */
static void test_smi_vs_module(void **state)
{
	char sum[512];
	(void)state;
	struct node_probe *p = bare_probe();
	probe_set(p, "vendor", "nvidia", "test");
	probe_set(p, "driver.version", "580.95.05", "/sys/module/nvidia/version");
	probe_set(p, "driver.flavor", "open", "test");
	probe_set(p, "gpu.driver_version", "580.105.08", "/usr/bin/nvidia-smi --query-gpu=...");
	assert_int_equal(tuple_status(p, "580.95.05", sum, sizeof(sum)), ST_FAIL);
	assert_string_equal(sum, "nvidia-smi reports driver 580.105.08, module 580.95.05");
}

/* No GPU driver loaded: the loaded driver is not made (error, 20), the
 * image's driver files are compared; one of them off refuses. */
static enum check_status no_driver(const char *fact, const char *value, char *summary, size_t n)
{
	struct node_probe *p = bare_probe();
	probe_set(p, "vendor", NULL, "no nvidia or amdgpu module loaded");
	probe_set(p, "driver.version", NULL, "not found: /sys/module/nvidia/version");
	if (fact)
		probe_set(p, fact, value, "test");
	probe_set(p, "kernel.release", "6.12.117+deb13-amd64", "/proc/sys/kernel/osrelease");
	probe_set(p, "driver.ko_version", "580.95.05", "nvidia.ko");
	probe_set(p, "driver.ko_license", "Dual MIT/GPL", "nvidia.ko");
	probe_set(p, "driver.ko_vermagic", "6.12.117+deb13-amd64", "nvidia.ko");
	probe_set(p, "firmware.gsp", "580.95.05", "/lib/firmware/nvidia/*/gsp*.bin");
	return tuple_status(p, "580.95.05", summary, n);
}

static void test_no_driver_loaded(void **state)
{
	char sum[512];
	(void)state;
	assert_int_equal(no_driver(NULL, NULL, sum, sizeof(sum)), ST_ERROR);
	assert_string_equal(sum, "not made: vendor nvidia: no GPU driver loaded "
			    "(no nvidia or amdgpu module loaded)");
	/* the first fact set wins, so these replace the defaults below */
	assert_int_equal(no_driver("driver.ko_license", "NVIDIA", sum, sizeof(sum)), ST_FAIL);
	assert_string_equal(sum, "driver flavor: manifest open, the image's nvidia.ko is proprietary "
			    "(license NVIDIA)");
	assert_int_equal(no_driver("driver.ko_vermagic", "6.1.0-40-amd64", sum, sizeof(sum)), ST_FAIL);
	assert_string_equal(sum, "the image's nvidia.ko is built for kernel 6.1.0-40-amd64, "
			    "running 6.12.117+deb13-amd64 (test)");
	assert_int_equal(no_driver("firmware.gsp", "570.195.03", sum, sizeof(sum)), ST_FAIL);
	assert_string_equal(sum, "GSP firmware 570.195.03 != manifest driver 580.95.05 (test)");
	assert_int_equal(no_driver("smi.version", "575.57.08", sum, sizeof(sum)), ST_FAIL);
	assert_string_equal(sum, "the nvidia-smi package 575.57.08 != manifest driver 580.95.05 (test)");
	/* a loaded module of the other vendor is still a mismatch */
	assert_int_equal(no_driver("vendor", "amd", sum, sizeof(sum)), ST_FAIL);
	assert_string_equal(sum, "vendor: manifest nvidia, node amd (test)");
}

/* RCCL's version string is looked for in the library's .rodata only (a
 * real librccl.so is hundreds of MiB that a boot would read from disk);
 * a file without section headers is scanned whole. */
static const char *rccl_of(const char *sub, const char *mkart_strings, const char *tail, bool elf)
{
	static char got[64];
	struct node_probe *p = NULL;
	ingot_error e = { 0 };
	char cmd[1024];
	_cleanup_free_ char *lib = sub_path(sub, "opt/rocm/core-10.1/lib/librccl.so.1.0.100100");
	_cleanup_free_ char *root = sub_path(sub, NULL);

	put(sub, "opt/rocm/core-10.1/.info/version", "10.1.0\n", 0644);
	put(sub, "opt/rocm/core-10.1/lib/.keep", "", 0644);
	if (elf)
		snprintf(cmd, sizeof(cmd), "python3 scripts/mkart.py so --out '%s' --soname librccl.so.1 %s", lib,
			 mkart_strings);
	else
		snprintf(cmd, sizeof(cmd), "printf 'not an ELF file\\n' > '%s'", lib);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "printf '%s\\000' >> '%s'", tail, lib);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(node_probe_run(root, &p, &e), 0);
	snprintf(got, sizeof(got), "%s", probe_get(p, "rccl.version") ? probe_get(p, "rccl.version") : "");
	node_probe_free(p);
	return got;
}

static void test_rccl_rodata_only(void **state)
{
	(void)state;
	/* the string in .rodata; a decoy after the section headers is not read */
	assert_string_equal(rccl_of("rc1", "--version-string 'RCCL version 2.30.7-HEAD:3a5b1c2'",
				    "RCCL version 9.9.9", true), "2.30.7");
	/* nothing in .rodata: the decoy outside it is still not taken */
	assert_string_not_equal(rccl_of("rc2", "", "RCCL version 9.9.9", true), "9.9.9");
	/* not ELF: scanned whole */
	assert_string_equal(rccl_of("rc3", "", "RCCL version 2.31.0", false), "2.31.0");
}

/* Debian 13's ROCm on a node: the in-tree amdgpu has no version file, so
 * a loaded one is the kernel's release (and the driver's version); HIP
 * from its library's name, the HSA runtime and SMI library from dpkg,
 * RCCL from its "RCCL version 2.13.4+hip5.7" banner. */
static void test_debian_rocm(void **state)
{
	struct node_probe *p = NULL;
	ingot_error e = { 0 };
	char cmd[1024];
	_cleanup_free_ char *root = sub_path("deb", NULL);
	_cleanup_free_ char *lib = sub_path("deb", "usr/lib/x86_64-linux-gnu");
	(void)state;

	put("deb", "proc/sys/kernel/osrelease", "6.12.117+deb13-amd64\n", 0644);
	put("deb", "sys/module/amdgpu/initstate", "live\n", 0644);
	put("deb", "var/lib/dpkg/status",
	    "Package: libamdhip64-5\nStatus: install ok installed\nVersion: 5.7.1-6+deb13u1\n\n"
	    "Package: libhsa-runtime64-1\nStatus: install ok installed\nVersion: 6.1.2-3\n\n"
	    "Package: librocm-smi64-1\nStatus: install ok installed\nVersion: 6.1.2-1\n", 0644);
	put("deb", "usr/lib/x86_64-linux-gnu/.keep", "", 0644);
	snprintf(cmd, sizeof(cmd),
		 "python3 scripts/mkart.py so --out '%s/libamdhip64.so.5.7.31921' --soname libamdhip64.so.5 && "
		 "python3 scripts/mkart.py so --out '%s/librccl.so.1.0' --soname librccl.so.1 "
		 "--version-string 'RCCL version 2.13.4+hip5.7'", lib, lib);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(node_probe_run(root, &p, &e), 0);
	assert_string_equal(probe_get(p, "amdgpu.version"), "6.12.117+deb13-amd64");
	assert_non_null(strstr(probe_find(p, "amdgpu.version")->source, "in-tree amdgpu"));
	assert_string_equal(probe_get(p, "driver.version"), "6.12.117+deb13-amd64");
	assert_string_equal(probe_get(p, "vendor"), "amd");
	assert_string_equal(probe_get(p, "hip.version"), "5.7.31921");
	assert_string_equal(probe_get(p, "hsa_runtime.version"), "6.1.2");
	assert_string_equal(probe_find(p, "hsa_runtime.version")->source,
			    "/var/lib/dpkg/status (package libhsa-runtime64-1)");
	assert_string_equal(probe_get(p, "smi_lib.version"), "6.1.2");
	assert_string_equal(probe_get(p, "rccl.version"), "2.13.4");
	/* the manifest's tuple, as the build writes it, against this node */
	static const char tuple_json[] =
		"{\"vendor\":\"amd\",\"driver\":{\"version\":\"6.12.117\"},\"hip\":{\"version\":\"5.7.31921\"},"
		"\"hsa-runtime\":{\"version\":\"6.1.2\"},\"smi-lib\":{\"version\":\"%s\"},"
		"\"rccl\":{\"version\":\"2.13.4\"}}";
	char js[512];
	struct verify_report r;
	for (int bad = 0; bad < 2; bad++) {
		snprintf(js, sizeof(js), tuple_json, bad ? "7.0.0" : "6.1.2");
		json_t *t = json_loads(js, 0, NULL);
		assert_non_null(t);
		report_init(&r);
		tuplecheck_run(t, p, &r);
		if (r.checks[CHECK_TUPLE].status != (bad ? ST_FAIL : ST_PASS))
			fail_msg("bad=%d: %s", bad, r.checks[CHECK_TUPLE].summary);
		if (bad)
			assert_string_equal(r.checks[CHECK_TUPLE].summary,
					    "ROCm SMI library: manifest 7.0.0, node 6.1.2 (/var/lib/dpkg/status (package librocm-smi64-1))");
		report_free(&r);
		json_decref(t);
	}
	node_probe_free(p);

	/* no amdgpu loaded: nothing stands in for the driver */
	put("deb2", "proc/sys/kernel/osrelease", "6.12.117+deb13-amd64\n", 0644);
	_cleanup_free_ char *root2 = sub_path("deb2", NULL);
	assert_int_equal(node_probe_run(root2, &p, &e), 0);
	assert_null(probe_get(p, "amdgpu.version"));
	assert_null(probe_get(p, "driver.version"));
	assert_null(probe_get(p, "hip.version"));
	assert_non_null(strstr(probe_find(p, "hsa_runtime.version")->source, "not found"));
	node_probe_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_all_concurrent),
		cmocka_unit_test(test_files_first),
		cmocka_unit_test(test_rccl_rodata_only),
		cmocka_unit_test(test_tools_fallback),
		cmocka_unit_test(test_userspace_vs_module),
		cmocka_unit_test(test_smi_vs_module),
		cmocka_unit_test(test_no_driver_loaded),
		cmocka_unit_test(test_debian_rocm),
	};
	return cmocka_run_group_tests_name("nodeprobe", tests, setup, teardown);
}
