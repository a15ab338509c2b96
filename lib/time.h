/* Times as ingot reads and writes them: RFC 3339 in, RFC 3339 UTC out. */
#ifndef INGOT_TIME_H
#define INGOT_TIME_H

#include <stddef.h>
#include <time.h>

/* RFC 3339 ("2027-01-31T00:00:00Z", "...+02:00", fractional seconds
 * allowed and ignored) or decimal epoch seconds ("1767225600") to time_t.
 * -EINVAL for anything else (a date without a time, no zone, an
 * impossible date), -ERANGE for an epoch that does not fit. */
int time_parse(const char *s, time_t *out);

#define TIME_RFC3339_LEN 32   /* buffer size for time_format: "YYYY-MM-DDTHH:MM:SSZ" and more */

/* t as "YYYY-MM-DDTHH:MM:SSZ" (UTC) in buf; decimal seconds if t cannot
 * be broken down.  Returns buf. */
char *time_format(time_t t, char buf[TIME_RFC3339_LEN]);

#endif
