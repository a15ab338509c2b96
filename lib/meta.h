/* ingot's own version: recorded in manifests and node reports. */
#ifndef INGOT_META_H
#define INGOT_META_H

#define INGOT_VERSION "0.1.0"

#endif
