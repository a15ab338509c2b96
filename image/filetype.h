/* The file types an image holds, shared by the staging tree that
 * builder/ writes from and the image reader (image/inspect.h). */
#ifndef INGOT_IMAGE_FILETYPE_H
#define INGOT_IMAGE_FILETYPE_H

enum tree_type {
	TREE_DIR,
	TREE_FILE,
	TREE_SYMLINK,
	TREE_CHR,
	TREE_BLK,
	TREE_FIFO,
	TREE_SOCK,
};

/* The manifest's name of a type: "dir", "file", "symlink", "char",
 * "block", "fifo", "socket". */
const char *tree_type_name(enum tree_type t);

#endif
