/* Dotted numeric versions ("580.95.05", "13.0", "2.27.7").
 * Components compare as numbers of any length (no overflow: compared as
 * digit strings without leading zeros), a missing component counts as 0,
 * so 13.0 == 13.0.0 < 13.0.2 < 13.10 and 580.95.05 < 580.105.08. */
#ifndef INGOT_VERSION_H
#define INGOT_VERSION_H

#include <stdbool.h>
#include <stddef.h>

/* True when s is digits separated by single dots: "1", "580.95.05". */
bool version_valid(const char *s);

/* <0, 0, >0 like strcmp.  Both must be version_valid(). */
int version_cmp(const char *a, const char *b);

/* True when every component of want equals the same component of have:
 * "13.0" matches "13.0.2", "2.27.7" matches "2.27.7", "13.0" does not
 * match "13.1". Both must be version_valid(). */
bool version_prefix_match(const char *want, const char *have);

/* The leading dotted numeric part of a package or library version, as
 * used by dpkg ("1:580.95.05-1" -> "580.95.05"), NCCL ("2.27.7+cuda13.0"
 * -> "2.27.7") and ROCm's .info/version ("10.1.0-42" -> "10.1.0").  An
 * epoch "N:" is skipped.  Writes into buf (size n); returns buf, or NULL
 * when no version is there or it does not fit. */
char *version_upstream(const char *s, char *buf, size_t n);

/* Number of components ("580.95.05" -> 3). */
size_t version_components(const char *s);

/* Copy the first k components into buf ("580.95.05", 1 -> "580");
 * returns buf, NULL when it does not fit or has fewer components. */
char *version_head(const char *s, size_t k, char *buf, size_t n);

#endif
