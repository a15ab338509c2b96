/* The probed node against the manifest's tuple, field by field, plus the
 * node-internal consistency facts that no single field shows (fabric
 * manager == driver on NVSwitch systems, the loaded module == the image's
 * nvidia.ko, GSP firmware directory == driver version). */
#ifndef INGOT_VERIFY_TUPLECHECK_H
#define INGOT_VERIFY_TUPLECHECK_H

#include <jansson.h>
#include "verify/nodeprobe.h"
#include "verify/node-report.h"

/* Fills r->checks[CHECK_TUPLE]: status, summary (the first mismatch, e.g.
 * "fabric manager 580.82.07 != driver 580.95.05"), one evidence line per
 * compared field and details {"fields": {name: {"manifest","node",
 * "source","match"}}}.  tuple may be NULL/null (manifest without tuple). */
void tuplecheck_run(const json_t *tuple, const struct node_probe *p, struct verify_report *r);

/* A tuple member by dotted path; "fabric_manager" also finds
 * "fabric-manager" and "fabricmanager".  Strings, numbers and booleans are
 * rendered into buf; returns NULL when absent. */
const char *tuple_lookup(const json_t *tuple, const char *path, char *buf, size_t n);

#endif
