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
 * "source","match"}}}.  tuple may be NULL/null (manifest without tuple);
 * it is read as a typed tuple (recipes/tuple.h, tuple_from_json_declared) and
 * compared row by row of the one tuple-field table
 * (recipes/tuple-fields.h); one that does not parse is not made. */
void tuplecheck_run(const json_t *tuple, const struct node_probe *p, struct verify_report *r);

#endif
