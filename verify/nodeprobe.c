/* The node probe: node_probe_run, which runs the probes in a fixed
 * order.  The fact list and the helpers every probe uses are
 * probe-facts.c, so the probes never call back into this file. */
#include "verify/nodeprobe.h"

#include <ctype.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "lib/fileio.h"
#include "lib/strbuf.h"
#include "verify/probe-private.h"
#include "verify/toolrun.h"

static int probe_modules(struct node_probe *p)
{
	_cleanup_free_ char *mods = probe_read_trimmed(p, "/proc/modules");
	struct strbuf names = STRBUF_INIT;
	int r;
	if (!mods)
		return probe_set(p, "modules", NULL, "not found: /proc/modules");
	strbuf_init(&names, 256);
	char *save = NULL;
	for (char *l = strtok_r(mods, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		size_t n = strcspn(l, " ");
		if (names.len)
			strbuf_addch(&names, ',');
		strbuf_add(&names, l, n);
	}
	r = probe_set(p, "modules", names.buf, "/proc/modules");
	strbuf_release(&names);
	return r;
}

/* The vendor tools, each asked only for a fact no file under the root
 * gave (a real nvidia-smi costs 100+ ms initialising NVML; the driver's
 * procfs answers the same in microseconds).  What must run is started
 * all at once; the answers are applied in this fixed order, so the facts
 * never depend on which tool finished first. */
enum { T_FM, T_CTK, T_NVSMI, T_AMDSMI, T_IPMI, T__COUNT };

static int probe_tools(struct node_probe *p)
{
	static char *const version_args[] = { "--version", NULL };
	static char *const nvsmi_args[] = { "--query-gpu=name,driver_version,vbios_version",
					    "--format=csv,noheader", NULL };
	static char *const amdsmi_args[] = { "static", "--asic", "--vbios", "--json", NULL };
	static char *const ipmi_args[] = { "mc", "info", NULL };
	static const struct { const char *name; char *const *args; const char *key; } tools[] = {
		[T_FM] = { "nv-fabricmanager", version_args, "fabric_manager.version" },
		[T_CTK] = { "nvidia-ctk", version_args, "container_toolkit.version" },
		[T_NVSMI] = { "nvidia-smi", nvsmi_args, "gpu.model" },
		[T_AMDSMI] = { "amd-smi", amdsmi_args, "gpu.model" },
		/* No file names the BMC's firmware: ipmitool, when present. */
		[T_IPMI] = { "ipmitool", ipmi_args, "firmware.bmc" },
	};
	char *exe[T__COUNT] = { 0 }, *where[T__COUNT] = { 0 };
	char *argv[T__COUNT][8];
	struct tool_job jobs[T__COUNT];
	size_t job_of[T__COUNT], nj = 0;
	char *out[T__COUNT] = { 0 };
	int failed[T__COUNT] = { 0 };
	ingot_error e = { 0 };
	int r = 0;

	for (size_t t = 0; t < T__COUNT; t++) {
		job_of[t] = SIZE_MAX;
		exe[t] = tool_find(p->root, tools[t].name);
		if (!exe[t])
			continue;
		where[t] = xstrdup(probe_node_rel(p, exe[t]));
		if (probe_get(p, tools[t].key))
			continue;   /* a file answered */
		if (p->no_tools) {
			if ((r = probe_set_unreadable(p, tools[t].key, "%s: not run: the files check did not pass",
						      where[t])) < 0)
				goto out;
			continue;
		}
		size_t k = 0;
		argv[t][k++] = exe[t];
		for (size_t a = 0; tools[t].args[a] && k < ARRAY_SIZE(argv[t]) - 1; a++)
			argv[t][k++] = tools[t].args[a];
		argv[t][k] = NULL;
		jobs[nj] = (struct tool_job){ .argv = argv[t] };
		job_of[t] = nj++;
	}
	if (nj && tool_run_all(jobs, nj, TOOL_TIMEOUT_MS, TOOL_MAX_OUTPUT, &e) == -ENOMEM) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t t = 0; t < T__COUNT; t++) {
		if (job_of[t] == SIZE_MAX)
			continue;
		struct tool_job *j = &jobs[job_of[t]];
		if (j->err == 0 && j->status == 0)
			out[t] = TAKE_PTR(j->out);
		else
			failed[t] = 1;
		free(j->out);
	}

	for (size_t t = T_FM; t <= T_CTK && !r; t++) {
		_cleanup_free_ char *v = out[t] ? probe_first_version(out[t]) : NULL;
		if (v)
			r = probe_setf(p, tools[t].key, v, "%s --version", where[t]);
		else if (out[t])
			r = probe_setf(p, tools[t].key, NULL, "not found: /var/lib/dpkg/status; "
				       "%s --version printed no version", where[t]);
		if (!r && failed[t])
			r = probe_set_unreadable(p, tools[t].key, "not found: /var/lib/dpkg/status; "
						 "%s failed or timed out", where[t]);
		if (!r)
			r = probe_setf(p, tools[t].key, NULL, "not found: /var/lib/dpkg/status, %s",
				       tools[t].name);
	}
	if (!r && out[T_NVSMI])
		r = probe_nvidia_smi_parse(p, out[T_NVSMI], where[T_NVSMI]);
	if (!r && out[T_AMDSMI])
		r = probe_amd_smi_parse(p, out[T_AMDSMI], where[T_AMDSMI]);
	for (size_t t = T_NVSMI; t <= T_AMDSMI && !r; t++)
		if (failed[t]) {
			r = probe_set_unreadable(p, "gpu.model", "%s failed or timed out", where[t]);
			/* The tool is there but did not answer (no GPU, or no driver
			 * loaded): no tool answered, and the source says why. */
			if (!r)
				r = probe_setf(p, "smi", NULL, "%s: present, failed or timed out", where[t]);
		} else if (out[t])
			r = probe_setf(p, "gpu.model", NULL, "%s answered no GPU", where[t]);
	if (!r)
		r = probe_set(p, "gpu.model", NULL, "not found: /proc/driver/nvidia/gpus/*/information, "
			      "nvidia-smi, amd-smi");
	if (!r && out[T_IPMI])
		r = probe_ipmitool_parse(p, out[T_IPMI], where[T_IPMI]);
	if (!r && failed[T_IPMI])
		r = probe_set_unreadable(p, "firmware.bmc", "unreadable: %s mc info failed or timed out",
					 where[T_IPMI]);
	if (!r)
		r = probe_set(p, "firmware.bmc", NULL, "not found: ipmitool");
	/* nvidia-smi left unrun because procfs answered: the node has the tool
	 * (its bytes are the image's when the files check passes); what running
	 * it would also have shown, NVML against the loaded module, is the
	 * driver.userspace_version fact the tuple check compares. */
	if (!r && exe[T_NVSMI] && job_of[T_NVSMI] == SIZE_MAX && !p->no_tools) {
		r = probe_setf(p, "smi", "nvidia-smi", "%s: present, not run (%s answered)",
			       where[T_NVSMI], probe_find(p, "gpu.model")->source);
		if (!r)
			r = probe_setf(p, "gpu.driver_version", NULL, "not read: %s not run",
				       where[T_NVSMI]);
	}
	if (!r)
		r = probe_set(p, "smi", NULL, "not found: nvidia-smi, amd-smi");
out:
	for (size_t t = 0; t < T__COUNT; t++) {
		free(exe[t]);
		free(where[t]);
		free(out[t]);
	}
	return r;
}

static int probe_run(const char *root, bool no_tools, struct node_probe **out, ingot_error *e)
{
	struct node_probe *p = xcalloc(1, sizeof(*p));
	_cleanup_free_ char *status = NULL;
	int r;

	p->root = xstrdup(root && *root ? root : "/");
	p->no_tools = no_tools;
	status = probe_dpkg_status(p);

	static const char *const fm_pkgs[] = { "nvidia-fabricmanager-*", "nvidia-fabricmanager",
					       "cuda-drivers-fabricmanager-*", NULL };
	static const char *const ctk_pkgs[] = { "nvidia-container-toolkit",
						"nvidia-container-toolkit-base", NULL };
	static const char *const none[] = { NULL };
	static const char *const nvidia_alt_dirs[] = { "/usr/lib/x86_64-linux-gnu/nvidia/current",
						       "/usr/lib/aarch64-linux-gnu/nvidia/current" };
	/* Debian: libnvidia-ml1, nvidia-smi; Ubuntu: libnvidia-compute-BRANCH,
	 * nvidia-utils-BRANCH. */
	static const char *const nvml_pkgs[] = { "libnvidia-ml1", "libnvidia-compute-*", NULL };
	static const char *const smi_pkgs[] = { "nvidia-smi", "nvidia-utils-*", NULL };

	/* Files first (kernel sysfs/procfs, dpkg, library names); the vendor
	 * tools last, and only for what no file answered. */
	r = probe_modules(p);
	if (!r) r = probe_nvidia_driver(p);
	if (!r) r = probe_dpkg(p, "fabric_manager.version", fm_pkgs, status);
	if (!r) r = probe_dpkg(p, "container_toolkit.version", ctk_pkgs, status);
	if (!r) r = probe_library(p, "nccl.version", "libnccl", NULL, none, 0);
	/* NVML, which nvidia-smi loads: its version must be the module's.
	 * Debian keeps it (and nvidia-smi) apart for its alternatives:
	 * /usr/lib/<triplet>/nvidia/current, linked from the library path. */
	if (!r) r = probe_library(p, "driver.userspace_version", "libnvidia-ml", NULL, nvidia_alt_dirs,
				  ARRAY_SIZE(nvidia_alt_dirs));
	/* The packages' own versions: what the image installed, read without
	 * a GPU (nvidia-smi answers nothing without one). */
	if (!r) r = probe_dpkg(p, "nvml.version", nvml_pkgs, status);
	if (!r) r = probe_set(p, "nvml.version", NULL, "not found: /var/lib/dpkg/status (libnvidia-ml1)");
	if (!r) r = probe_dpkg(p, "smi.version", smi_pkgs, status);
	if (!r) r = probe_set(p, "smi.version", NULL, "not found: /var/lib/dpkg/status (nvidia-smi)");
	if (!r) r = probe_cuda(p);
	if (!r) r = probe_rocm(p);
	if (!r) r = probe_rocm_runtime(p, status);
	if (!r) r = probe_amdgpu(p);
	if (!r) r = probe_nvidia_procfs(p);
	if (!r) r = probe_gsp_firmware(p);
	if (!r) r = probe_nvswitch(p);
	if (!r) r = probe_firmware(p);
	if (!r) r = probe_tools(p);
	if (!r) {
		_cleanup_free_ char *nvdir = probe_path(p, "/proc/driver/nvidia");
		struct stat st;
		if (probe_get(p, "driver.version") || probe_module_loaded(p, "nvidia"))
			r = probe_set(p, "vendor", "nvidia", probe_get(p, "driver.version")
				      ? probe_find(p, "driver.version")->source : "/proc/modules");
		else if (probe_get(p, "amdgpu.version") || probe_module_loaded(p, "amdgpu"))
			r = probe_set(p, "vendor", "amd", probe_get(p, "amdgpu.version")
				      ? probe_find(p, "amdgpu.version")->source : "/proc/modules");
		else if (nvdir && stat(nvdir, &st) == 0)
			r = probe_set(p, "vendor", "nvidia", "/proc/driver/nvidia");
		else
			r = probe_set(p, "vendor", NULL, "no nvidia or amdgpu module loaded");
	}
	if (!r) r = probe_amdgpu_driver(p);
	if (r < 0) {
		node_probe_free(p);
		return ingot_fail(e, r, "probe: out of memory");
	}
	*out = p;
	return 0;
}

int node_probe_run(const char *root, struct node_probe **out, ingot_error *e)
{
	return probe_run(root, false, out, e);
}

int node_probe_run_no_tools(const char *root, struct node_probe **out, ingot_error *e)
{
	return probe_run(root, true, out, e);
}
