#include "image/filetype.h"

const char *tree_type_name(enum tree_type t)
{
	switch (t) {
	case TREE_DIR: return "dir";
	case TREE_FILE: return "file";
	case TREE_SYMLINK: return "symlink";
	case TREE_CHR: return "char";
	case TREE_BLK: return "block";
	case TREE_FIFO: return "fifo";
	case TREE_SOCK: return "socket";
	}
	return "unknown";
}
